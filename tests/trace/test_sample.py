"""`pt.nn.sample` (the "sample" op and kernels/sampling/) against the op's oracle and NumPy's float
definitions of greedy, top-k, top-p and min-p, on every device, eager and jitted."""
import math

import numpy as np
import pytest

import poot as pt
from poot.graph.sampling import ONE, sample_oracle, scaled, weights


def _logits(rows, vocab, seed):
    """Normal logits with a tie at the maximum, NaN, -inf and -0 in them."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, vocab)) * 2.5).astype(np.float32)
    if vocab >= 16:
        x[:, 3] = x[:, 7] = x.max(axis=1) + 0.5
        x[0, 11] = np.nan
        x[-1, 12] = -np.inf
        x[:, 13] = -0.0
    return x


def _oracle(l, key, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0):
    rows = l.reshape(-1, l.shape[-1])
    greedy = temperature == 0 or top_k == 1
    words = pt.random.bits(key, (rows.shape[0],)).numpy() if not greedy else np.zeros(rows.shape[0], np.uint32)
    out = sample_oracle((rows, words), greedy, 1.0 if greedy else temperature, top_k, *scaled(top_p, min_p))
    return out.reshape(l.shape[:-1])


def _np_probs(l):
    l = np.asarray(l, np.float64)
    e = np.exp(l - l.max())
    return e / e.sum()


CONFIGS = [dict(temperature=0.0), dict(top_k=1), dict(), dict(temperature=0.6), dict(temperature=1.7, top_k=20),
           dict(top_p=0.9), dict(temperature=0.8, top_k=50, top_p=0.95, min_p=0.02), dict(min_p=0.1),
           dict(top_p=1e-9), dict(top_k=100000)]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "plain")
@pytest.mark.parametrize("shape", [(5, 1000), (3, 17), (1, 1), (2, 2, 301)], ids=str)
def test_matches_oracle(device, shape, cfg):
    l = _logits(math.prod(shape[:-1]), shape[-1], shape[-1]).reshape(shape)
    key = pt.random.key(11)
    got = pt.nn.sample(pt.asarray(l), key, **cfg).numpy()
    assert got.dtype == np.int64 and got.shape == shape[:-1]
    np.testing.assert_array_equal(got, _oracle(l, key, **cfg))


def test_greedy_first_index_and_nan(device):
    def g(row):
        return int(pt.nn.sample(pt.asarray(np.array(row, np.float32)), temperature=0).numpy())

    assert g([1, 5, 5, 2]) == 1
    assert g([np.nan, 1, 3, np.nan, 3]) == 2
    assert g([np.nan] * 4) == 0
    assert g([-np.inf, -np.inf, -1]) == 2
    assert g([-np.inf] * 3) == 0
    assert g([1, np.inf, 2, np.inf]) == 1


def test_rows_of_minus_inf_and_infinite_maxima(device):
    l = np.array([[-np.inf] * 5, [0, np.inf, 3, np.inf, 1], [np.nan, 2, np.nan, 2, -np.inf]], np.float32)
    got = pt.nn.sample(pt.asarray(l), pt.random.key(2), temperature=1.0).numpy()
    assert got[0] == 0 and got[1] in (1, 3) and got[2] in (1, 3)


def _draws(l, n, seed, **cfg):
    """n draws from one row of logits in one call: n rows, each with its own random bits."""
    rows = pt.broadcast_to(pt.asarray(l), (n, len(l)))
    return pt.nn.sample(rows, pt.random.key(seed), **cfg).numpy()


def test_distribution_follows_softmax(device):
    p = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625])
    got = _draws(np.log(p).astype(np.float32), 4000, 0)
    np.testing.assert_allclose(np.bincount(got, minlength=5) / 4000, p, atol=0.03)
    hot = _draws((np.log(p) * 2).astype(np.float32), 4000, 1, temperature=2.0)    # the temperature undoes the 2
    np.testing.assert_allclose(np.bincount(hot, minlength=5) / 4000, p, atol=0.03)


@pytest.mark.parametrize("k", [3, 10])
def test_top_k_draws_only_the_top(device, k):
    l = np.random.default_rng(k).standard_normal(200).astype(np.float32)
    got = set(_draws(l, 500, k, temperature=3.0, top_k=k).tolist())
    assert got <= set(np.argsort(-l)[:k].tolist()) and len(got) > 1


@pytest.mark.parametrize("p", [0.3, 0.5, 0.9])
def test_top_p_draws_only_the_nucleus(device, p):
    l = (np.random.default_rng(int(p * 10)).standard_normal(300) * 2).astype(np.float32)
    probs = _np_probs(l)
    above = np.array([probs[probs > q].sum() for q in probs])        # mass of the tokens more likely
    assert np.abs(above - p).min() > 1e-4, "test data too close to the boundary"
    nucleus = set(np.flatnonzero(above < p).tolist())
    got = set(_draws(l, 1000, 3, top_p=p).tolist())
    assert got <= nucleus and int(np.argmax(l)) in got and (len(got) > 1) == (len(nucleus) > 1)


def test_top_p_ties_stay_together(device):
    l = np.log(np.array([0.4, 0.2, 0.2, 0.1, 0.1], np.float32))
    assert set(_draws(l, 400, 4, top_p=0.5).tolist()) == {0, 1, 2}
    assert set(_draws(l, 100, 5, top_p=0.3).tolist()) == {0}


@pytest.mark.parametrize("mp", [0.05, 0.3])
def test_min_p_draws_only_likely_tokens(device, mp):
    l = (np.random.default_rng(3).standard_normal(100) * 2).astype(np.float32)
    probs = _np_probs(l)
    allowed = set(np.flatnonzero(probs >= mp * probs.max() * (1 - 1e-6)).tolist())
    got = set(_draws(l, 1000, 6, min_p=mp).tolist())
    assert got <= allowed and int(np.argmax(l)) in got and (len(got) > 1) == (len(allowed) > 1)


def test_jitted_equals_eager_and_other_devices(device):
    l = _logits(4, 999, 9)

    @pt.jit(static_argnames=("top_p",))
    def draw(logits, key, top_p):
        return pt.nn.sample(logits * 1.0, key, temperature=0.9, top_p=top_p)

    keys = pt.random.split(pt.random.key(1), 6).numpy()
    la = pt.asarray(l)
    got = [draw(la, k, top_p=0.9).numpy() for k in keys]
    for k, g in zip(keys, got):
        np.testing.assert_array_equal(g, pt.nn.sample(la, pt.asarray(k), temperature=0.9, top_p=0.9).numpy())
    if device != "cpu":
        with pt.device("cpu"):
            cpu = [pt.nn.sample(pt.asarray(l), pt.asarray(k), temperature=0.9, top_p=0.9).numpy() for k in keys]
        np.testing.assert_array_equal(np.stack(got), np.stack(cpu))


def test_weights_are_within_one_of_exp():
    d = -np.concatenate([np.linspace(0, 31.9, 20001), np.geomspace(1e-9, 1e-2, 500)]).astype(np.float32)
    l = np.concatenate([[0.0], d]).astype(np.float32)
    q = weights(l[None])[0]
    want = np.floor(np.exp(l.astype(np.float64)) * ONE)
    assert q[0] == ONE and np.abs(q - want).max() <= 1
    assert (np.diff(q[1:20002]) <= 0).all()                        # monotone in the logit


def test_bad_input_names_what_is_wrong():
    l = pt.asarray(np.zeros((2, 4), np.float32))
    with pytest.raises(pt.DTypeError, match="floating"):
        pt.nn.sample(pt.asarray(np.zeros(4, np.int32)), temperature=0)
    with pytest.raises(pt.ShapeError, match="last axis"):
        pt.nn.sample(pt.asarray(np.zeros((3, 0), np.float32)), temperature=0)
    with pytest.raises(pt.ShapeError, match="last axis"):
        pt.nn.sample(pt.asarray(np.float32(1)), temperature=0)
    with pytest.raises(pt.SamplingError, match="needs a key"):
        pt.nn.sample(l)
    for kw, what in (({"temperature": -1}, "temperature"), ({"temperature": float("nan")}, "temperature"),
                     ({"top_p": 0}, "top_p"), ({"top_p": 1.5}, "top_p"), ({"min_p": 2}, "min_p"),
                     ({"top_k": -1}, "top_k"), ({"top_k": 2.5}, "top_k")):
        with pytest.raises(pt.SamplingError, match=what):
            pt.nn.sample(l, pt.random.key(0), **kw)
