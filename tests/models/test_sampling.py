"""poot.models.sampling against NumPy definitions of greedy, top-k, top-p and min-p."""
import numpy as np
import pytest

import poot as pt
from poot.models import sampling as S


def _np_probs(l):
    l = np.asarray(l, np.float64)
    e = np.exp(l - l.max())
    return e / e.sum()


def test_greedy_first_index_and_nan(device):
    assert int(S.greedy(pt.asarray(np.array([1, 5, 5, 2], np.float32))).numpy()) == 1
    assert int(S.greedy(pt.asarray(np.array([np.nan, 1, 3, np.nan, 3], np.float32))).numpy()) == 2
    assert int(S.greedy(pt.asarray(np.full(4, np.nan, np.float32))).numpy()) == 0
    assert int(S.greedy(pt.asarray(np.array([-np.inf, -np.inf, -1], np.float32))).numpy()) == 2


@pytest.mark.parametrize("k", [1, 3, 10, 64, 100])
def test_top_k_mask(device, k):
    rng = np.random.default_rng(k)
    l = rng.standard_normal(64).astype(np.float32)
    l[5] = l[9] = l[11] = np.sort(l)[-3]          # a tie at the 3rd-largest value
    want = l >= np.sort(l)[-k] if k < 64 else np.ones(64, bool)
    np.testing.assert_array_equal(S.top_k_mask(pt.asarray(l), k).numpy(), want)


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9, 0.99])
def test_top_p_mask(device, p):
    rng = np.random.default_rng(int(p * 100))
    l = (rng.standard_normal(200) * 2).astype(np.float32)
    probs = _np_probs(l)
    above = np.array([probs[probs > q].sum() for q in probs])   # mass strictly more likely
    want = above < p
    margin = np.abs(above - p).min()
    assert margin > 1e-5, "test data too close to the boundary"
    got = S.top_p_mask(pt.asarray(l), p).numpy()
    np.testing.assert_array_equal(got, want)
    assert got[np.argmax(l)]


def test_top_p_ties_kept_together(device):
    l = np.log(np.array([0.4, 0.2, 0.2, 0.1, 0.1], np.float32))
    np.testing.assert_array_equal(S.top_p_mask(pt.asarray(l), 0.5).numpy(), [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(S.top_p_mask(pt.asarray(l), 0.3).numpy(), [1, 0, 0, 0, 0])


@pytest.mark.parametrize("mp", [0.0, 0.05, 0.3])
def test_min_p_mask(device, mp):
    rng = np.random.default_rng(3)
    l = (rng.standard_normal(100) * 2).astype(np.float32)
    probs = _np_probs(l)
    want = probs >= mp * probs.max()
    np.testing.assert_array_equal(S.min_p_mask(pt.asarray(l), mp).numpy(), want)


def test_processed_logits_order(device):
    rng = np.random.default_rng(4)
    l = (rng.standard_normal(50) * 2).astype(np.float32)
    cfg = S.SamplingConfig(temperature=0.7, top_k=20, top_p=0.8, min_p=0.05)
    x = l / 0.7
    keep = x >= np.sort(x)[-20]
    x = np.where(keep, x, -np.inf)
    pr = _np_probs(x)
    keep &= np.array([pr[pr > q].sum() for q in pr]) < 0.8
    x = np.where(keep, x, -np.inf)
    pr = _np_probs(x)
    keep &= pr >= 0.05 * pr.max()
    got = S.processed_logits(pt.asarray(l), cfg).numpy()
    np.testing.assert_array_equal(np.isfinite(got), keep)


def _draw(logits, seed, cfg):
    return int(S.sample(pt.asarray(logits), pt.random.key(seed), cfg).numpy())


def test_categorical_matches_numpy_definition(device):
    """Inverse CDF over fixed-point probabilities with r = floor(u * total / 2**32)."""
    rng = np.random.default_rng(5)
    l = (rng.standard_normal(40) * 1.5).astype(np.float32)
    cfg = S.SamplingConfig(temperature=1.0)
    q = np.floor(np.exp(l - l.max()).astype(np.float32) * np.float32(2 ** 24)).astype(np.int64)
    cum = np.cumsum(q)
    for seed in range(8):
        u = int(pt.random.bits(pt.random.key(seed), ()).numpy())
        r = (u * int(q.sum())) >> 32
        assert _draw(l, seed, cfg) == int(np.searchsorted(cum, r, side="right"))


def test_sampling_deterministic_and_distributed(device):
    l = np.log(np.array([0.5, 0.25, 0.125, 0.125], np.float32))
    cfg = S.SamplingConfig(temperature=1.0)

    @pt.jit(static_argnums=2)
    def draw(logits, key, cfg):
        return S.sample(logits, key, cfg)

    keys = pt.random.split(pt.random.key(0), 400).numpy()
    la = pt.asarray(l)
    got = np.array([int(draw(la, k, cfg).numpy()) for k in keys])
    again = np.array([int(draw(la, k, cfg).numpy()) for k in keys[:20]])
    np.testing.assert_array_equal(got[:20], again)
    freq = np.bincount(got, minlength=4) / len(got)
    np.testing.assert_allclose(freq, [0.5, 0.25, 0.125, 0.125], atol=0.07)
    if device != "cpu":
        with pt.device("cpu"):
            cpu = [int(draw(pt.asarray(l), k, cfg).numpy()) for k in keys[:50]]
        np.testing.assert_array_equal(got[:50], cpu)


def test_top_k_one_is_greedy_and_masked_never_drawn(device):
    rng = np.random.default_rng(6)
    l = rng.standard_normal(30).astype(np.float32)
    assert _draw(l, 1, S.SamplingConfig(top_k=1)) == int(np.argmax(l))
    top3 = set(np.argsort(-l)[:3].tolist())
    for seed in range(10):
        assert _draw(l, seed, S.SamplingConfig(temperature=2.0, top_k=3)) in top3


def test_bad_parameters():
    for kw in ({"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"min_p": 2}, {"top_k": -1}):
        with pytest.raises(pt.PootError):
            S.SamplingConfig(**kw)
