"""Sampling at small temperatures: the draw tends to the argmax as the temperature goes to 0, so a
temperature whose reciprocal still fits float32, but whose product with a logit would not, must draw the
argmax too (the gap below the row's maximum is scaled, never the logit itself)."""
import numpy as np
import pytest

import poot as pt
from poot.graph.sampling import ONE, sample_oracle, scaled, weights
from poot.models import sampling as S

ROWS = np.array([[20.0, 15.0, 10.0, 30.0, 29.0],
                 [-31.0, -30.0, -40.0, -35.0, -32.0],
                 [1e30, -1e30, 3e38, 2.9e38, 0.0],
                 [-3e38, 3e38, -1.0, 1.0, 0.0]], np.float32)


def _keys(n):
    return pt.random.split(pt.random.key(3), n).numpy()


@pytest.mark.parametrize("temperature", [1e-30, 1e-38, 3e-39])
def test_tiny_temperature_draws_the_argmax(device, temperature):
    want = np.argmax(ROWS, axis=1)
    assert not S.SamplingConfig(temperature=temperature).greedy
    for k in _keys(8):
        got = pt.nn.sample(pt.asarray(ROWS), pt.asarray(k), temperature=temperature).numpy()
        np.testing.assert_array_equal(got, want)
    many = np.tile(ROWS[:2], (500, 1))
    got = pt.nn.sample(pt.asarray(many), pt.random.key(5), temperature=temperature).numpy()
    np.testing.assert_array_equal(got, np.tile(want[:2], 500))


def test_tiny_temperature_matches_greedy_through_the_config(device):
    row = pt.asarray(ROWS[1])
    cfg = S.SamplingConfig(temperature=1e-38)
    for seed in range(6):
        assert int(S.sample(row, pt.random.key(seed), cfg).numpy()) == int(S.sample(row, None, S.GREEDY).numpy()) == 1


def test_oracle_weights_scale_the_gap():
    """Weights of l / T are those of (l - m) / T: float32(1 / T) times the gap, exp of that in 24 bits."""
    l = np.array([[2.0, 1.0, 0.0, -1.0]], np.float32)
    t = 0.5
    want = np.floor(np.exp((l.astype(np.float64) - 2.0) / t) * ONE)
    q = weights(l, np.float32(1 / t))
    assert np.abs(q - want).max() <= 1 and q[0, 0] == ONE
    q = weights(np.array([[30.0, 29.0, 1e30, -1e30]], np.float32), np.float32(1e38))
    np.testing.assert_array_equal(q, [[0, 0, ONE, 0]])


@pytest.mark.parametrize("temperature", [0.05, 0.5, 3.0])
def test_moderate_temperatures_match_the_oracle_and_softmax(device, temperature):
    l = np.array([1.0, 0.9, 0.5, -0.2], np.float32)
    rows = np.tile(l, (20000, 1))
    key = pt.random.key(9)
    got = pt.nn.sample(pt.asarray(rows), key, temperature=temperature).numpy()
    bits = pt.random.bits(key, (rows.shape[0],)).numpy()
    np.testing.assert_array_equal(got, sample_oracle((rows, bits), False, temperature, 0, *scaled(1.0, 0.0)))
    p = np.exp((l.astype(np.float64) - l.max()) / temperature)
    p /= p.sum()
    freq = np.bincount(got, minlength=4) / len(got)
    np.testing.assert_allclose(freq, p, atol=0.015)
