"""Pointwise epilogues fused into GPU matrix-vector products (poot/jit/runtime/epilogues.py): a linear
layer's `act(W @ x + b)` runs as one kernel where the GEMV kernel computes the epilogue at its store,
with the values the two kernels give; products whose result is read elsewhere, at other positions or
by a reduction keep their own store. Checked on each GPU device present (wgpu and Vulkan on lavapipe in
CI; CUDA where a GPU is), eager and jitted, against NumPy."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.jit.runtime import execute

BF16 = np.dtype(ml_dtypes.bfloat16)


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _rounded(a, dtype):
    """`a` rounded to `dtype`, back in float32: what a stored intermediate of that dtype holds."""
    return _f32(np.asarray(a, dtype=np.float32).astype(dtype))


def _operands(dtype, n=300, k=1000, seed=0):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(dtype) for s in ((n, k), (k,), (n,), (n,))]


def _launches(fn, *args):
    """The results of jitted `fn(*args)` and the kernel names of the program it ran."""
    execute._PROGRAMS.clear()
    out = pt.jit(fn)(*args)
    out = out if isinstance(out, tuple) else (out,)
    names = [launch.name for prog in execute._PROGRAMS.values() for launch in prog.launches]
    return [o.numpy() for o in out], names


def _tolerance(dtype, k):
    """(rtol, atol) for a sum of k products of unit normals: its rounding error grows with k (the terms'
    magnitudes), so a result near 0 needs the absolute part; bf16 results: a unit of their last place."""
    eps = np.finfo(np.float32).eps
    return (4 * eps, 4 * k * eps) if dtype == np.float32 else (2 ** -7, 2 ** -7)


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
def test_bias_activation_and_residual_run_in_the_gemv_kernel(gpu, dtype):
    W, x, b, h = _operands(dtype)
    prod = _rounded(_f32(W) @ _f32(x), dtype)
    act = _rounded(np.maximum(_rounded(prod + _f32(b), dtype), 0), dtype)
    want = [_rounded(_f32(h) + act, dtype), _rounded(prod * 2, dtype)]
    rtol, atol = _tolerance(dtype, W.shape[1])
    with gpu:
        args = [pt.asarray(a) for a in (W, x, b, h)]
        got, names = _launches(lambda W, x, b, h: (h + pt.maximum(W @ x + b, 0), (W @ x) * 2), *args)
        assert len(names) == 1, names                   # two roots of one epilogue, one product
        eager = [h2.numpy() for h2 in pt.realize(args[3] + pt.maximum(args[0] @ args[1] + args[2], 0),
                                                 (args[0] @ args[1]) * 2)]
    for g, e, w in zip(got, eager, want):
        np.testing.assert_allclose(_f32(g), w, rtol=rtol, atol=atol)
        np.testing.assert_array_equal(_f32(g), _f32(e))


@pytest.mark.parametrize("dtype", [np.float32, BF16], ids=["f32", "bf16"])
def test_a_linear_layer_of_one_row_is_one_kernel(gpu, dtype):
    """`x @ W.T + b` for one row x (read as W @ x: poot/fuse/row_products.py) with a tanh after it."""
    W, x, b, _ = _operands(dtype, n=257, k=515, seed=1)
    prod = _rounded(_f32(x)[None, :] @ _f32(W).T, dtype)
    want = np.tanh(_rounded(prod + _f32(b), dtype))
    with gpu:
        got, names = _launches(lambda x, W, b: pt.tanh(x[None, :] @ W.T + b), *(pt.asarray(a) for a in (x, W, b)))
    assert len(names) == 1, names
    assert got[0].shape == (1, 257)
    rtol, atol = _tolerance(dtype, W.shape[1])
    np.testing.assert_allclose(_f32(got[0]), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", ["product-is-a-result", "reversed", "reduced", "broadcast"])
def test_epilogues_that_need_other_positions_keep_the_product_stored(gpu, case):
    W, x, b, _ = _operands(np.float32, n=64, k=600, seed=2)
    fns = {
        "product-is-a-result": (lambda W, x, b: (W @ x + b, W @ x), lambda p: (p + b, p)),
        "reversed": (lambda W, x, b: (W @ x)[::-1] + b, lambda p: (p[::-1] + b,)),
        "reduced": (lambda W, x, b: (W @ x + b).sum(), lambda p: ((p + b).sum(),)),
        "broadcast": (lambda W, x, b: (W @ x)[:, None] * b[None, :], lambda p: (p[:, None] * b[None, :],)),
    }
    fn, ref = fns[case]
    with gpu:
        got, names = _launches(fn, *(pt.asarray(a) for a in (W, x, b)))
    assert len(names) == 2, names                      # the product's kernel and the epilogue's
    for g, w in zip(got, ref(W.astype(np.float64) @ x.astype(np.float64))):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3)


def test_a_decoder_step_of_linear_layers_matches_numpy(gpu):
    """Two stacked layers and a residual, looped as a decode loop would: each product's epilogue fused,
    the next layer reading the fused result."""
    r = np.random.default_rng(3)
    W1 = r.standard_normal((512, 256)).astype(np.float32) * 0.05
    W2 = r.standard_normal((256, 512)).astype(np.float32) * 0.05
    b1, b2 = r.standard_normal(512).astype(np.float32), r.standard_normal(256).astype(np.float32)

    def layer(xp, h, W1, b1, W2, b2):
        u = W1 @ h + b1
        return h + W2 @ (u / (1 + xp.exp(-u))) + b2      # SiLU MLP with a residual

    h0 = r.standard_normal(256).astype(np.float32)
    want = h0.astype(np.float64)
    for _ in range(4):
        want = layer(np, want, W1, b1, W2, b2)
    with gpu:
        step = pt.jit(lambda h, *w: layer(pt, h, *w))
        ws = [pt.asarray(a) for a in (W1, b1, W2, b2)]
        h = pt.asarray(h0)
        for _ in range(4):
            h = step(h, *ws)
        got = h.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
