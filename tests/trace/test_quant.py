"""`pt.quant`: int8 per-channel, q8_0 and q4_0 weights (the "qmatmul" op and the quantized GEMV kernels)
against a NumPy transcription of llama.cpp's block formats, on every device, eager and jitted."""
import re

import numpy as np
import pytest

import poot as pt
from poot.trace import lazy
from poot.trace.quant import QMATMUL_MAX_ROWS

FORMATS = ("int8", "q8_0", "q4_0")


def _reference(w, fmt):
    """The dequantized weights, block by block as llama.cpp's reference quantizers write them."""
    w = np.asarray(w, np.float32)
    out = np.empty_like(w)
    if fmt == "int8":
        for n, row in enumerate(w):
            s = np.float32(np.abs(row).max() / 127)
            q = [np.trunc(v / s + np.copysign(0.5, v / s)) if s else 0.0 for v in row]
            out[n] = np.float32(s) * np.asarray(q, np.float32)
        return out
    for n, row in enumerate(w):
        for b in range(0, row.size, 32):
            x = row[b:b + 32]
            if fmt == "q8_0":
                d = np.float32(np.abs(x).max() / np.float32(127))
                inv = np.float32(1 / d) if d else np.float32(0)
                q = np.trunc(x * inv + np.copysign(np.float32(0.5), x * inv))
            else:
                m = x[np.argmax(np.abs(x))]
                d = np.float32(m / np.float32(-8))
                inv = np.float32(1 / d) if d else np.float32(0)
                q = np.minimum(15, np.trunc(x * inv + np.float32(8.5))) - 8
            out[n, b:b + 32] = np.float32(np.float16(d)) * q.astype(np.float32)
    return out


def _weights(n, k, seed):
    w = np.random.default_rng(seed).standard_normal((n, k)).astype(np.float32)
    w[0, :32] = 0.0                           # an all-zero block (scale 0)
    return w


@pytest.mark.parametrize("fmt", FORMATS)
def test_quantize_matches_the_formats_definition(fmt):
    w = _weights(6, 96, 1)
    wq = pt.quant.quantize(w, fmt)
    np.testing.assert_array_equal(wq.dequantize().numpy(), _reference(w, fmt))
    assert wq.nbytes == {"int8": 6 * 96 + 4 * 6, "q8_0": 6 * 96 + 4 * 18, "q4_0": 6 * 48 + 4 * 18}[fmt]


def _tol(k, ref):
    eps = float(np.finfo(np.float32).eps)
    return dict(rtol=8 * eps * np.sqrt(k), atol=8 * eps * k * (float(np.abs(ref).max()) + 1))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("rows", [None, 1, 3, QMATMUL_MAX_ROWS + 5])
def test_products_match_numpy(device, fmt, rows):
    n, k = 37, 160
    w = _weights(n, k, 2)
    wd = _reference(w, fmt).astype(np.float64)
    rng = np.random.default_rng(3)
    wq = pt.quant.quantize(w, fmt)
    if rows is None:                         # w @ x with a 1-D x
        x = rng.standard_normal(k).astype(np.float32)
        got, want = (wq @ pt.asarray(x)).numpy(), wd @ x
    else:
        x = rng.standard_normal((2, rows, k)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        got = pt.quant.linear(pt.asarray(x), wq, pt.asarray(bias)).numpy()
        want = x @ wd.T + bias
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, **_tol(k, want))


@pytest.mark.parametrize("fmt", FORMATS)
def test_jitted_decode_step_uses_the_quantized_kernel(device, fmt):
    n, k = 64, 128
    w = _weights(n, k, 4)
    wq = pt.quant.quantize(w, fmt)
    x = np.random.default_rng(5).standard_normal(k).astype(np.float32)

    @pt.jit
    def step(wq, x):
        return pt.nn.silu(pt.quant.linear(x, wq))

    got = step(wq, pt.asarray(x)).numpy()
    h = _reference(w, fmt).astype(np.float64) @ x
    np.testing.assert_allclose(got, h / (1 + np.exp(-h)), **_tol(k, h))
    with lazy.scope() as inside:
        out = pt.quant.linear(lazy_x := pt.Array(lazy.placeholder(lazy.Aval((1, k), pt.float32), device)), wq)
    graph, _ = lazy.build_graph([out._node], inside)
    ops = [e.op for e in graph.eqns]
    assert "qmatmul" in ops and "matmul" not in ops and lazy_x.shape == (1, k)


def test_wide_columns_and_vmap_over_x():
    w = _weights(20, 64, 6)
    wq = pt.quant.quantize(w, "q8_0")
    wd = _reference(w, "q8_0").astype(np.float64)
    xs = np.random.default_rng(7).standard_normal((4, 64, 3)).astype(np.float32)
    np.testing.assert_allclose((wq @ pt.asarray(xs[0])).numpy(), wd @ xs[0], **_tol(64, wd @ xs[0]))
    got = pt.vmap(lambda x: wq @ x)(pt.asarray(xs)).numpy()
    np.testing.assert_allclose(got, np.einsum("nk,bkc->bnc", wd, xs), **_tol(64, wd))


def test_bad_input_names_what_is_wrong():
    w = _weights(4, 64, 8)
    with pytest.raises(pt.ShapeError, match="multiple of 32"):
        pt.quant.quantize(w[:, :40], "q8_0")
    with pytest.raises(pt.ShapeError, match="unknown format"):
        pt.quant.quantize(w, "q5_1")
    with pytest.raises(pt.DTypeError, match="floating point"):
        pt.quant.quantize(w.astype(np.int32), "int8")
    wq = pt.quant.quantize(w, "q4_0")
    with pytest.raises(pt.ShapeError, match="K = 64"):
        pt.quant.linear(pt.asarray(np.ones(32, np.float32)), wq)
    with pytest.raises(pt.NotBuiltError, match="dequantize"):
        pt.grad(lambda x: pt.quant.linear(x, wq).sum())(pt.asarray(np.ones(64, np.float32)))


@pytest.mark.parametrize("fmt, limit", [("q4_0", 65504 * 8), ("q8_0", 65504 * 127)])
def test_a_block_past_the_float16_scale_range_is_refused(fmt, limit):
    """llama.cpp stores block scales as float16: a block whose scale would overflow it is refused,
    naming the block, not turned into NaN products."""
    w = _weights(3, 96, 2)
    w[2, 70] = 1.1 * limit
    message = r"row 2, block 2 \(columns 64..95\).*limit of about " + re.escape(f"{limit:g}")
    with pytest.raises(pt.DomainError, match=message):
        pt.quant.quantize(w, fmt)
    w[2, 70] = 0.99 * limit                                 # the largest blocks that fit still work
    wq = pt.quant.quantize(w, fmt)
    got = wq.dequantize().numpy()
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, _reference(w, fmt))
    x = np.ones(96, np.float32)
    np.testing.assert_allclose((wq @ x).numpy(), got.astype(np.float64) @ x, rtol=1e-5)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e39])
def test_weights_that_are_not_finite_float32_are_refused(fmt, value):
    w = _weights(2, 64, 3).astype(np.float64)
    w[1, 5] = value
    with pytest.raises(pt.DomainError, match=r"weight \[1, 5\] is .*finite float32 weights only"):
        pt.quant.quantize(w, fmt)
