"""Edges of pt.nn a PyTorch user meets: attention rows that see no key (finite gradients), Hugging Face's
finfo.min masks, float64 masks kept in float64, relu's derivative at 0, and arguments refused by name."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def _sdpa_ref(q, k, v, mask):
    s = (q @ k.swapaxes(-1, -2)).astype(np.float64) / np.sqrt(q.shape[-1]) + mask
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("lq,lk", [(1, 6), (3, 6), (1, 300), (5, 129)])
def test_rows_masked_with_finfo_min_average_the_values_as_pytorch_does(device, lq, lk):
    rng = np.random.default_rng(lq * lk)
    q, k, v = (rng.standard_normal((1, 2, n, 64)).astype(np.float32) for n in (lq, lk, lk))
    mask = np.full((lq, lk), np.finfo(np.float32).min, np.float32)
    mask[1:, :2] = 0                                    # the first row sees nothing, the others two keys
    got = pt.nn.scaled_dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), mask=pt.asarray(mask))
    np.testing.assert_allclose(got.numpy(), _sdpa_ref(q, k, v, mask), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("dtype,d", [(np.float64, 4), (np.float32, 300)])
def test_a_row_that_sees_no_key_has_finite_gradients(dtype, d):
    rng = np.random.default_rng(1)
    q, k, v = (pt.asarray(rng.standard_normal((1, 1, n, d)).astype(dtype)) for n in (2, 3, 3))
    mask = pt.asarray(np.array([[True] * 3, [False] * 3]))

    def f(q, k, v):
        return pt.nn.scaled_dot_product_attention(q, k, v, mask=mask).sum()

    grads = pt.grad(f, argnums=(0, 1, 2))(q, k, v)
    for g in grads:
        assert np.isfinite(g.numpy()).all()
    np.testing.assert_array_equal(grads[0].numpy()[0, 0, 1], 0.0)     # the empty row's query: no effect


def test_float64_masks_stay_float64():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 1, 2, 3)) for _ in range(3))
    mask = np.array([[0.1, 0.2], [0.3, 1e-9]])
    got = pt.nn.scaled_dot_product_attention(pt.asarray(q), pt.asarray(k), pt.asarray(v), mask=pt.asarray(mask))
    np.testing.assert_allclose(got.numpy(), _sdpa_ref(q, k, v, mask), rtol=1e-13, atol=1e-14)


def test_attention_arguments_are_checked_by_name():
    ones = pt.ones((1, 1, 2, 4), dtype=pt.float32)
    with pytest.raises(pt.DTypeError, match="complex"):
        pt.nn.scaled_dot_product_attention(pt.asarray(np.ones((1, 1, 2, 4), np.complex64)), ones, ones)
    with pytest.raises(pt.PootError, match="scale must be a number"):
        pt.nn.scaled_dot_product_attention(ones, ones, ones, scale="x")
    with pytest.raises(pt.PootError, match="softcap must be a number"):
        pt.nn.scaled_dot_product_attention(ones, ones, ones, softcap="x")
    for cap in (-1.0, float("nan"), float("inf")):
        with pytest.raises(pt.ArgumentValueError, match="softcap must be a finite number > 0"):
            pt.nn.scaled_dot_product_attention(ones, ones, ones, softcap=cap)
    for scale in (float("nan"), float("inf")):
        with pytest.raises(pt.ArgumentValueError, match="scale must be a finite number"):
            pt.nn.scaled_dot_product_attention(ones, ones, ones, scale=scale)
    for window in (np.int64(1), (np.int64(1), None)):
        np.testing.assert_allclose(pt.nn.scaled_dot_product_attention(ones, ones, ones, window=window).numpy(), 1.0)
    empty = pt.nn.scaled_dot_product_attention(pt.ones((1, 1, 2, 0)), pt.ones((1, 1, 2, 0)), pt.ones((1, 1, 2, 3)))
    np.testing.assert_allclose(empty.numpy(), 1.0)       # equal (zero) scores: the mean of v


def test_relu_keeps_nan_and_has_derivative_zero_at_zero():
    x = np.array([-1.0, 0.0, np.nan, 2.0])
    np.testing.assert_array_equal(pt.nn.relu(pt.asarray(x)).numpy(), [0.0, 0.0, np.nan, 2.0])
    assert float(pt.grad(pt.nn.relu)(pt.asarray(0.0))) == 0.0
    assert float(pt.grad(pt.nn.relu)(pt.asarray(3.0))) == 1.0
    assert pt.nn.relu(pt.asarray(np.array([-3, 4], np.int8))).dtype == pt.int8


def test_bad_arguments_raise_poot_errors():
    with pytest.raises(pt.DTypeError, match="integers"):
        pt.nn.one_hot(pt.asarray([1.5]), 3)
    for bad in (-1, 3.0, True):
        with pytest.raises(pt.PootError, match="num_classes"):
            pt.nn.one_hot(pt.asarray([1]), bad)
    np.testing.assert_array_equal(pt.nn.one_hot(pt.asarray([2, 0]), np.int64(3)).numpy(), np.eye(3)[[2, 0]])
    with pytest.raises(pt.PootError, match="eps must be a number"):
        pt.nn.rms_norm(pt.ones(3), eps="a")
    with pytest.raises(pt.PootError, match="seed must be an integer"):
        pt.random.key(1.5)
    for num in (-1, 2.0):
        with pytest.raises(pt.PootError, match="num must be an integer >= 0"):
            pt.random.split(pt.random.key(1), num)


def test_a_vector_times_a_quantized_matrix():
    w = np.random.default_rng(3).standard_normal((4, 32)).astype(np.float32)
    wq = pt.quant.quantize(pt.asarray(w), "q8_0")
    x = np.arange(4, dtype=np.float32)
    want = x @ wq.dequantize().numpy()
    np.testing.assert_allclose((pt.asarray(x) @ wq).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose((x @ wq).numpy(), want, rtol=1e-6)
