"""The attention op end to end: pt.nn.scaled_dot_product_attention against a NumPy reference on every
test device (masks, GQA, windows, softcap, causal with Lq != Lk, three dtypes), no [Lq, Lk] buffer
allocated, and hand-written attention claimed by the planner as the attention kernel."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.fuse.plan import plan_fusion
from poot.trace.lazy import build_graph

DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def reference(q, k, v, mask=None, causal=False, scale=None, softcap=None, window=None):
    """PyTorch's SDPA semantics in float64 (top-left causal, 0 for a query that sees no key)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    ratio = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, ratio, axis=-3), np.repeat(v, ratio, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    lq, lk = q.shape[-2], k.shape[-2]
    rel = np.arange(lk)[None, :] - np.arange(lq)[:, None]
    keep = np.ones((lq, lk), bool)
    if causal:
        keep &= rel <= 0
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        if left is not None:
            keep &= rel >= -left
        if right is not None:
            keep &= rel <= right
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(-1, keepdims=True)
    return np.where(total > 0, (e @ v) / np.where(total > 0, total, 1), 0.0)


CASES = [  # (B, Hq, Hk, Lq, Lk, D, kwargs)
    ((2,), 4, 4, 5, 7, 8, {}),
    ((), 8, 2, 33, 70, 16, {"causal": True, "mask": "bool"}),
    ((1,), 4, 1, 2, 300, 32, {"window": (100, None), "softcap": 30.0, "mask": "float"}),
    ((2, 1), 2, 2, 41, 19, 12, {"causal": True}),                # Lq > Lk: late queries see every key
    ((1,), 2, 2, 19, 41, 12, {"causal": True, "scale": 0.3}),    # Lq < Lk, top-left aligned
    ((1,), 2, 2, 23, 23, 24, {"window": 3}),
    ((1,), 3, 3, 6, 9, 8, {"window": (2, 0), "mask": "bool_rows"}),   # rows that see no key: 0
    # head dims of the tensor-core prefill (16-bit dtypes on CUDA sm_80+): GQA, several query tiles,
    # key tiles past Lk, windows, softcap and a mask
    ((1,), 4, 2, 70, 45, 64, {"causal": True}),
    ((1,), 2, 2, 130, 200, 128, {"window": (50, 10), "softcap": 20.0, "mask": "float"}),
    ((2,), 2, 1, 33, 97, 128, {"mask": "bool_rows"}),
    ((1,), 2, 2, 130, 45, 64, {"window": (2, 0)}),    # late query blocks' windows lie past the last key
]


def _inputs(rng, batch, hq, hk, lq, lk, d, dtype, kw):
    q = rng.standard_normal(batch + (hq, lq, d)).astype(dtype)
    k = rng.standard_normal(batch + (hk, lk, d)).astype(dtype)
    v = rng.standard_normal(batch + (hk, lk, d)).astype(dtype)
    mask = kw.get("mask")
    if mask == "bool":
        mask = rng.random((lq, lk)) > 0.3
    elif mask == "float":
        mask = rng.standard_normal((hq, 1, lk)).astype(np.float32)
    elif mask == "bool_rows":
        mask = np.ones((lq, lk), bool)
        mask[2] = False
    return q, k, v, mask


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("case", range(len(CASES)))
def test_sdpa_matches_reference(device, case, dtype):
    batch, hq, hk, lq, lk, d, kw = CASES[case]
    rng = np.random.default_rng(case)
    q, k, v, mask = _inputs(rng, batch, hq, hk, lq, lk, d, DTYPES[dtype], kw)
    opts = {key: kw[key] for key in ("softcap", "window", "scale") if key in kw}
    got = pt.nn.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=kw.get("causal", False),
                                             enable_gqa=hq != hk, **opts).numpy()
    want = reference(q, k, v, mask, kw.get("causal", False), **opts)
    assert got.shape == want.shape and got.dtype == q.dtype
    tol = 8 * float(ml_dtypes.finfo(DTYPES[dtype]).eps) if dtype != "float32" else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


def test_decode_shapes_split_the_keys(device):
    """One query over a long cache (the decode kernel on GPU targets that build it)."""
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 8, 1, 64)).astype(np.float32)
    k, v = (rng.standard_normal((1, 2, 1500, 64)).astype(np.float32) for _ in range(2))
    got = pt.nn.scaled_dot_product_attention(q, k, v, enable_gqa=True).numpy()
    np.testing.assert_allclose(got, reference(q, k, v), rtol=1e-5, atol=1e-5)


def test_gqa_needs_enable_gqa():
    q = np.zeros((1, 4, 3, 8), np.float32)
    k = np.zeros((1, 2, 3, 8), np.float32)
    with pytest.raises(pt.ShapeError, match="enable_gqa"):
        pt.nn.scaled_dot_product_attention(q, k, k)


def test_no_scores_buffer_is_allocated(monkeypatch):
    """Every device allocation of a realize with L = 1536 is far below one L x L float32 matrix."""
    dev = pt.devices.get("cpu")
    L, D = 1536, 32
    rng = np.random.default_rng(2)
    q, k, v = (pt.asarray(rng.standard_normal((1, 2, L, D)).astype(np.float32)) for _ in range(3))
    pt.realize(q, k, v)
    sizes = []
    real = dev.allocate

    def spy(nbytes, *a, **kw):
        sizes.append(nbytes)
        return real(nbytes, *a, **kw)

    monkeypatch.setattr(dev, "allocate", spy)
    out = pt.nn.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    assert sizes and max(sizes) < L * L * 4 // 8, sizes
    monkeypatch.undo()
    ref = reference(*(x.numpy() for x in (q, k, v)), causal=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def _hand_written(q, k, v, mask, scale):
    s = q @ pt.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + mask
    e = pt.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("with_mask", [False, True])
def test_hand_written_attention_is_claimed(device, with_mask):
    rng = np.random.default_rng(3)
    q, k, v = (pt.asarray(rng.standard_normal((2, 3, 37, 16)).astype(np.float32)) for _ in range(3))
    mask = pt.asarray(np.where(rng.random((37, 37)) > 0.2, 0, -np.inf).astype(np.float32)) if with_mask else None
    out = _hand_written(q, k, v, mask, 0.25)
    plan = plan_fusion(build_graph([out._node])[0])
    kinds = [s.kind for s in plan.kernel_steps]
    assert kinds.count("attention") == 1 and "matmul" not in kinds and "row" not in kinds, str(plan)
    assert len(plan.kernel_steps) <= 2, str(plan)          # the attention kernel (and q * scale)
    qn, kn, vn = (x.numpy() for x in (q, k, v))
    s = qn @ np.swapaxes(kn, -1, -2) * np.float32(0.25)
    if with_mask:
        s = s + mask.numpy()
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), (e / e.sum(-1, keepdims=True)) @ vn, rtol=1e-5, atol=1e-5)


def test_hand_written_attention_inside_jit():
    @pt.jit
    def attend(q, k, v):
        return _hand_written(q, k, v, None, 1 / 4)

    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((4, 9, 16)).astype(np.float32) for _ in range(3))
    got = attend(q, k, v).numpy()
    np.testing.assert_allclose(got, reference(q, k, v, scale=0.25), rtol=1e-5, atol=1e-5)


def test_intermediates_used_elsewhere_are_not_claimed():
    q = pt.asarray(np.ones((2, 5, 8), np.float32))
    s = q @ pt.swapaxes(q, -1, -2)
    e = pt.exp(s - s.max(-1, keepdims=True))
    out = (e / e.sum(-1, keepdims=True)) @ q
    plan = plan_fusion(build_graph([out._node, s._node])[0])     # the scores are a result too
    assert "attention" not in [st.kind for st in plan.kernel_steps]


def test_unbatched_shapes_and_float64():
    """[L, D] inputs give [L, Dv]; float64 (no flash kernel) is composed from primitives, same semantics."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    got = pt.nn.scaled_dot_product_attention(x, x, x)
    assert got.shape == (5, 8)
    np.testing.assert_allclose(got.numpy(), reference(x[None], x[None], x[None])[0], rtol=1e-5, atol=1e-5)
    q = rng.standard_normal((2, 4, 6, 8))
    got = pt.nn.scaled_dot_product_attention(q, q, q, is_causal=True, window=2).numpy()
    np.testing.assert_allclose(got, reference(q, q, q, causal=True, window=2), rtol=1e-12, atol=1e-12)
