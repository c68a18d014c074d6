"""poot.models.sampling: the decoder's SamplingConfig drawing through `pt.nn.sample` (whose semantics
tests/trace/test_sample.py checks in detail)."""
import numpy as np
import pytest

import poot as pt
from poot.graph.sampling import sample_oracle, scaled
from poot.models import sampling as S


def test_config_draws_what_the_op_defines(device):
    l = (np.random.default_rng(5).standard_normal(500) * 2).astype(np.float32)
    for cfg in (S.GREEDY, S.SamplingConfig(), S.SamplingConfig(0.7, top_k=40, top_p=0.9, min_p=0.01)):
        for seed in range(3):
            key = pt.random.key(seed)
            u = pt.random.bits(key, (1,)).numpy()
            want = sample_oracle((l[None], u), cfg.greedy, 1.0 if cfg.greedy else cfg.temperature, cfg.top_k,
                                 *scaled(cfg.top_p, cfg.min_p))[0]
            assert int(S.sample(pt.asarray(l), key, cfg).numpy()) == want


def test_greedy_needs_no_key(device):
    l = np.array([0.5, 3.0, 3.0, -1.0], np.float32)
    assert int(S.sample(pt.asarray(l), None, S.GREEDY).numpy()) == 1
    assert int(S.sample(pt.asarray(l), None, S.SamplingConfig(top_k=1)).numpy()) == 1


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


def test_bad_parameters():
    for kw in ({"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"min_p": 2}, {"top_k": -1}):
        with pytest.raises(pt.SamplingError):
            S.SamplingConfig(**kw)


@pytest.mark.parametrize("temperature", [1e-39, 1e-45, 2.9e-39])
def test_temperature_below_the_float32_reciprocal_is_greedy(device, temperature):
    """1 / temperature overflows float32 here: the logits would be inf or NaN, so the draw is the argmax,
    the limit of sampling as the temperature goes to 0, with any key."""
    rows = np.array([[0.0, 1.0, 0.5], [-1.0, -2.0, 0.0], [-3.0, -0.5, -0.25]], np.float32)
    for seed in range(4):
        got = pt.nn.sample(pt.asarray(rows), pt.random.key(seed), temperature=temperature).numpy()
        np.testing.assert_array_equal(got, [1, 2, 2])
    bits = pt.random.bits(pt.random.key(0), (3,)).numpy()
    np.testing.assert_array_equal(sample_oracle((rows, bits), False, temperature, 0, *scaled(1.0, 0.0)), [1, 2, 2])
    cfg = S.SamplingConfig(temperature=temperature)
    assert cfg.greedy and int(S.sample(pt.asarray(rows[0]), pt.random.key(1), cfg).numpy()) == 1
    # the smallest temperatures whose reciprocal fits still sample
    assert not S.SamplingConfig(temperature=3e-39).greedy
