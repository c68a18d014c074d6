"""The attention op end to end: pt.nn.scaled_dot_product_attention against a NumPy reference on every
test device (masks, GQA, windows, softcap, causal with Lq != Lk, three dtypes), no [Lq, Lk] buffer
allocated, and hand-written attention claimed by the planner as the attention kernel."""
from __future__ import annotations

import dataclasses
import functools
import math
import subprocess
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.devices.base import Capabilities
from poot.fuse.plan import plan_fusion
from poot.graph import Aval, Eqn, Var
from poot.graph.ops import OPS
from poot.jit.codegen.attention import generate_attention
from poot.jit.kir.model import BufferParam
from poot.kernel import assets as kernel_assets
from poot.trace.lazy import build_graph

from ptxas_tool import PTXAS, SKIP_REASON as PTXAS_SKIP
from target_caps import CUDA_CAPS

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


def test_no_scores_buffer_is_allocated(monkeypatch, allocation_spy):
    """Every device allocation of a realize with L = 1536 is far below one L x L float32 matrix."""
    dev = pt.devices.get("cpu")
    L, D = 1536, 32
    rng = np.random.default_rng(2)
    q, k, v = (pt.asarray(rng.standard_normal((1, 2, L, D)).astype(np.float32)) for _ in range(3))
    pt.realize(q, k, v)
    sizes = allocation_spy(dev)
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
    assert len(plan.kernel_steps) <= 2 + with_mask, str(plan)     # the attention kernel, q * scale, the mask's clamp
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


def _unscaled(q, k, v, mask=None):
    """softmax(q @ k^T (+ mask)) @ v as written by hand, with no scale."""
    s = q @ pt.swapaxes(k, -1, -2)
    if mask is not None:
        s = s + mask
    e = pt.exp(s - pt.max(s, axis=-1, keepdims=True))
    return (e / pt.sum(e, axis=-1, keepdims=True)) @ v


def _assert_claimed(out, most=2):
    """`out`'s plan runs one attention kernel, besides at most pointwise kernels that prepare its
    operands (q * scale, the mask's clamp and cast): `most` kernels in all."""
    kinds = [st.kind for st in plan_fusion(build_graph([out._node])[0]).kernel_steps]
    assert kinds.count("attention") == 1 and set(kinds) <= {"attention", "pointwise"}, kinds
    assert len(kinds) <= most, kinds


@pytest.mark.parametrize("jit", [False, True])
def test_claimed_attention_averages_a_row_masked_at_the_float32_lowest(device, jit):
    """Hugging Face masks a row with finfo(float32).min: in float32 its logits all round to one value,
    so softmax averages v (NumPy's float32 answer), not NaN."""
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((1, 1, 2, 4)).astype(np.float32) for _ in range(3))
    mask = np.zeros((2, 2), np.float32)
    mask[1] = np.finfo(np.float32).min
    args = [pt.asarray(x) for x in (q, k, v, mask)]
    if jit:
        out = pt.jit(_unscaled)(*args)
    else:
        out = _unscaled(*args)
        _assert_claimed(out)
    got = out.numpy()
    np.testing.assert_allclose(got[0, 0, 1], v[0, 0].astype(np.float64).mean(0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[0, 0, 0], reference(q, k, v, scale=1.0)[0, 0, 0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["sdpa", "hand_written"])
def test_a_huge_positive_mask_picks_its_key(device, form):
    """A finite +3e38 added to one key's logit: softmax gives that key all the weight, not NaN."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 2, 3, 8)).astype(np.float32) for _ in range(3))
    mask = np.zeros((3, 3), np.float32)
    mask[0, 2] = 3e38
    mask[1, 1] = np.finfo(np.float32).max
    if form == "sdpa":
        got = pt.nn.scaled_dot_product_attention(q, k, v, mask=mask).numpy()
    else:
        out = _unscaled(*(pt.asarray(x) for x in (q, k, v, mask)))
        _assert_claimed(out)
        got = out.numpy()
    np.testing.assert_allclose(got[:, :, 0], v[:, :, 2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[:, :, 1], v[:, :, 1], rtol=1e-6, atol=1e-6)
    scale = None if form == "sdpa" else 1.0
    np.testing.assert_allclose(got[:, :, 2], reference(q, k, v, scale=scale)[:, :, 2], rtol=1e-5, atol=1e-6)


def test_a_float64_mask_row_at_its_lowest_is_averaged(device):
    """finfo(float64).min is finite: the row sees every key equally (mean of v), as in float64 NumPy."""
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((1, 1, 3, 4)).astype(np.float32) for _ in range(3))
    mask = np.zeros((3, 3))
    mask[1] = np.finfo(np.float64).min
    got = pt.nn.scaled_dot_product_attention(q, k, v, mask=mask).numpy()
    np.testing.assert_allclose(got[0, 0, 1], v[0, 0].astype(np.float64).mean(0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[0, 0, [0, 2]], reference(q, k, v)[0, 0, [0, 2]], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale", [None, 0.25, 0.3])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_hand_written_attention_of_every_kernel_dtype_is_claimed(device, dtype, scale):
    """float16/bfloat16 sum their softmax in float32 (a convert around the sum), an unscaled
    softmax(q @ k^T) reads the scores twice, a Python float scale multiplies q: each is the kernel."""
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((2, 3, 21, 16)).astype(DTYPES[dtype]) for _ in range(3))
    mask = (rng.standard_normal((21, 21)) * 0.5).astype(DTYPES[dtype])
    args = [pt.asarray(x) for x in (q, k, v)]
    if scale is None:
        out = _unscaled(*args, mask=pt.asarray(mask) if dtype != "float32" else None)
    else:
        out = _hand_written(*args, pt.asarray(mask), scale)
    _assert_claimed(out, most=1 + (scale is not None) + (scale is not None or dtype != "float32"))
    with_mask = scale is not None or dtype != "float32"
    want = reference(q, k, v, mask.astype(np.float64) if with_mask else None, scale=scale or 1.0)
    tol = 8 * float(ml_dtypes.finfo(DTYPES[dtype]).eps) if dtype != "float32" else 1e-5
    np.testing.assert_allclose(out.numpy().astype(np.float64), want, rtol=tol, atol=tol)


def test_heads_that_are_not_a_multiple_say_so():
    q = np.zeros((1, 3, 2, 4), np.float32)
    k = np.zeros((1, 2, 2, 4), np.float32)
    with pytest.raises(pt.ShapeError, match="3 query heads are not a multiple of 2 key/value heads"):
        pt.nn.scaled_dot_product_attention(q, k, k, enable_gqa=True)


def test_no_heads_give_an_empty_result():
    q = np.zeros((2, 0, 5, 8), np.float32)
    out = pt.nn.scaled_dot_product_attention(q, q, np.zeros((2, 0, 5, 6), np.float32))
    assert out.shape == (2, 0, 5, 6) and out.dtype == pt.float32 and out.numpy().size == 0


def test_is_causal_must_be_a_bool():
    q = np.zeros((1, 2, 3, 4), np.float32)
    with pytest.raises(pt.PootError, match="is_causal must be True or False"):
        pt.nn.scaled_dot_product_attention(q, q, q, is_causal="yes")


def test_a_mask_on_another_device_is_named():
    other = None
    for name in ("vulkan", "wgpu"):
        try:
            other = pt.device(name).name
            break
        except pt.DeviceUnavailableError:
            continue
    if other is None:
        pytest.skip("needs a second device")
    q = pt.asarray(np.zeros((1, 2, 3, 4), np.float32), device="cpu")
    mask = pt.asarray(np.zeros((3, 3), np.float32), device=other)
    with pytest.raises(pt.DeviceError, match=f"the mask is on device '{other}' but q, k and v are on 'cpu'"):
        pt.nn.scaled_dot_product_attention(q, q, q, mask=mask)


# --- the GPU decode path: planned for a CUDA device, its launches run under the kernel emulator ---------
TYPES = {np.float32: dt.float32, np.float16: dt.float16, ml_dtypes.bfloat16: dt.bfloat16}


def _plan(shapes, np_dtype, mask_shape=None, caps=CUDA_CAPS, **params):
    """The attention step's launches for q, k, v of `shapes` on a device with `caps`, and its graph values."""
    full = {"scale": 1 / math.sqrt(shapes[0][-1]), "softcap": 0.0, "left": None, "right": None,
            "zero_empty": True} | params
    ins = [Var(Aval(tuple(s), TYPES[np_dtype])) for s in shapes]
    if mask_shape is not None:
        ins.append(Var(Aval(tuple(mask_shape), dt.float32)))
    out = Var(OPS["attention"].shape_rule([v.aval for v in ins], **full))
    step = SimpleNamespace(eqn=Eqn("attention", ins, full, out))
    return generate_attention(step, None, caps), ins, out, full


@functools.lru_cache(maxsize=None)
def _kernel_function(name):
    entry = next(e for e in kernel_assets.load_manifest() if e.name == name)
    return kernel_assets.entry_function(entry, kernel_assets.load_source(entry))


def _emulate(code, ins, arrays, out):
    """Run the step's launches in order under the emulator, as a program would on the device."""
    values = {v.id: a.reshape(-1) for v, a in zip(ins, arrays)}
    values[out.id] = np.zeros(out.aval.size, arrays[0].dtype)
    temps = [np.zeros(n // 4, np.float32) for n in code.temps]
    for launch in code.launches:
        fn = _kernel_function(launch.kernel.name)
        bindings, scalars, args = iter(launch.bindings), iter(launch.scalars), []
        for p in fn.kir.params:
            if isinstance(p, BufferParam):
                kind, key = next(bindings)
                a = values[key.id] if kind == "var" else temps[key]
                args.append(a.view(np.uint32) if p.dtype is dt.uint32 and a.itemsize == 2 else a)   # word views
            else:
                args.append(next(scalars))
        wg = launch.kernel.workgroup
        fn.emulate(*args, threads=tuple(g * w for g, w in zip(launch.groups, wg)))
    return values[out.id].reshape(out.aval.shape)


DECODE_CASES = [  # (B, Hq, Hk, Lq, Lk, D, Dv), dtype, mask shape, params
    ((1, 4, 1, 1, 300, 64, 64), np.float32, None, {}),                                  # GQA 4, 5 splits
    ((2, 7, 1, 2, 261, 80, 80), ml_dtypes.bfloat16, (2, 7, 2, 261), {"right": 0}),      # GQA 7 x 2 queries, causal
    ((1, 2, 2, 3, 257, 128, 96), np.float16, (1, 1, 3, 1), {"left": 100, "softcap": 20.0}),
    ((1, 2, 1, 4, 270, 256, 200), np.float32, (1, 2, 1, 270), {"left": 2, "right": 150}),   # the d256 variant
    ((1, 4, 2, 4, 300, 64, 64), np.float32, None, {"left": 1, "right": 200}),            # steps cut by the band
    ((1, 14, 2, 1, 300, 64, 64), np.float32, (1, 1, 1, 300), {}),                        # Qwen2.5-0.5B's shape
    ((1, 4, 4, 2, 256, 32, 32), np.float32, None, {"right": -1}),                        # query 0 sees no key
    ((1, 4, 4, 2, 256, 32, 32), np.float32, None, {"right": -1, "zero_empty": False}),   # ... NaN there
    ((1, 14, 2, 1, 192, 64, 64), np.float32, (1, 1, 1, 192), {}),                        # a short cache
    ((1, 4, 2, 3, 5, 64, 64), np.float16, None, {"right": 2}),                            # 5 keys: one split
]


SIMT_CASES = [  # (B, Hq, Hk, Lq, Lk, D, Dv), dtype, mask shape, params
    ((1, 4, 1, 1, 600, 64, 64), np.float32, None, {}),                                  # GQA 4, 3 splits
    ((1, 2, 2, 3, 257, 136, 130), np.float16, (1, 1, 3, 1), {"left": 100, "softcap": 20.0}),   # dims past 128
    ((1, 2, 1, 2, 300, 32, 32), ml_dtypes.bfloat16, None, {"right": -1}),               # query 0 sees no key
]


@pytest.mark.parametrize("case", range(len(SIMT_CASES)))
def test_simt_decode_path_matches_the_oracle_under_emulation(case):
    """The split kernels without subgroup exchanges (SPIR-V devices whose subgroups hold fewer than 32
    lanes, as lavapipe's 8), emulated."""
    (b, hq, hk, lq, lk, d, dv), np_dtype, mask_shape, params = SIMT_CASES[case]
    shapes = [(b, hq, lq, d), (b, hk, lk, d), (b, hk, lk, dv)]
    spirv = Capabilities(name="vulkan", target="spirv", subgroup_size=8, cores=8)
    code, ins, out, full = _plan(shapes, np_dtype, mask_shape, caps=spirv, **params)
    assert [launch.kernel.name for launch in code.launches][0].startswith("attention_decode_simt_")
    rng = np.random.default_rng(case)
    arrays = [rng.standard_normal(s).astype(np_dtype) for s in shapes]
    if mask_shape is not None:
        arrays.append(rng.standard_normal(mask_shape).astype(np.float32))
    got = _emulate(code, ins, arrays, out)
    want = OPS["attention"].oracle(arrays, **full)
    tol = 1e-5 if np_dtype is np.float32 else 8 * float(ml_dtypes.finfo(np_dtype).eps)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_long_key_rows_on_every_device(device):
    """Rows of 4100 keys of head dim 128: on SPIR-V devices they take the split kernels (a prefill thread
    looping over them all came out wrong on lavapipe)."""
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 2, 9, 128)).astype(np.float32)
    k, v = (rng.standard_normal((1, 1, 4100, 128)).astype(np.float32) for _ in range(2))
    got = pt.nn.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=False).numpy()
    np.testing.assert_allclose(got, reference(q, k, v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", range(len(DECODE_CASES)))
def test_gpu_decode_path_matches_the_oracle_under_emulation(case):
    (b, hq, hk, lq, lk, d, dv), np_dtype, mask_shape, params = DECODE_CASES[case]
    shapes = [(b, hq, lq, d), (b, hk, lk, d), (b, hk, lk, dv)]
    code, ins, out, full = _plan(shapes, np_dtype, mask_shape, **params)
    names = [launch.kernel.name for launch in code.launches]
    suffix = {np.float32: "f32", np.float16: "f16", ml_dtypes.bfloat16: "bf16"}[np_dtype]
    assert names == [f"attention_decode_{suffix}_d{128 if max(d, dv) <= 128 else 256}", f"attention_combine_{suffix}"]
    assert code.launches[0].groups[0] > 1 or lk < 64                       # the keys are split
    rng = np.random.default_rng(case)
    arrays = [rng.standard_normal(s).astype(np_dtype) for s in shapes]
    if mask_shape is not None:
        mask = rng.standard_normal(mask_shape).astype(np.float32)
        mask[..., :3] = -np.inf                                            # masked keys (a split's first ones)
        arrays.append(mask)
    got = _emulate(code, ins, arrays, out)
    with np.errstate(invalid="ignore"):
        want = OPS["attention"].oracle(arrays, **full)
    tol = 1e-5 if np_dtype is np.float32 else 8 * float(ml_dtypes.finfo(np_dtype).eps)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    if params.get("right", 0) < 0:                                         # the query that sees no key
        assert (got[:, :, 0] == 0).all() if full["zero_empty"] else np.isnan(got[:, :, 0]).all()


def test_tensor_core_prefill_routing():
    """16-bit prefill of head dim 64 or 128 takes the tensor-core flash kernel on PTX sm_80 and newer:
    flash_tc (mma.sync) on sm_80/sm_89, flash_wg (scores by warpgroup products) on sm_90; other head
    dims, f32 and older GPUs the SIMT prefill."""
    shapes = [(2, 8, 300, 128), (2, 4, 300, 128), (2, 4, 300, 128)]
    names = lambda caps, np_dtype=ml_dtypes.bfloat16, s=shapes: [l.kernel.name for l in _plan(s, np_dtype, caps=caps)[0].launches]
    sm = lambda arch: dataclasses.replace(CUDA_CAPS, compile_arch=arch)
    assert names(sm("sm_80")) == names(sm("sm_89")) == ["attention_tc_bf16_d128"]
    assert names(sm("sm_90")) == ["attention_wg_bf16_d128"]
    assert names(sm("sm_90"), np.float16, [(1, 2, 70, 64)] * 3) == ["attention_wg_f16_d64"]
    assert names(sm("sm_90"), np.float32) == ["attention_prefill_f32"]
    assert names(sm("sm_90"), ml_dtypes.bfloat16, [(1, 2, 70, 96)] * 3) == ["attention_prefill_bf16"]
    assert names(sm("sm_75")) == ["attention_prefill_bf16"]


def test_decode_routing_and_splits():
    """Decode shapes go to the warp-per-key kernel where subgroups exchange 32 lanes (CUDA, ROCm, Vulkan on
    an NVIDIA GPU; not lavapipe's 8-lane subgroups); the split count fills the GPU, keeps each split a whole
    number of workgroup steps, and stays within Lk."""
    shapes = [(1, 32, 1, 128), (1, 8, 32768, 128), (1, 8, 32768, 128)]
    code, *_ = _plan(shapes, ml_dtypes.bfloat16)
    decode = code.launches[0]
    splits, blocks, _ = decode.groups
    chunk = decode.scalars[-2]
    assert decode.kernel.name == "attention_decode_bf16_d128" and blocks == 8            # 4 GQA heads a workgroup
    assert chunk % 16 == 0 and (splits - 1) * chunk < 32768 <= splits * chunk and decode.scalars[-1] == splits
    assert 132 * 12 <= splits * blocks * 4 <= 132 * 48                                   # warps in flight
    cpu = Capabilities(name="cpu", target="cpu", cores=2)
    assert [l.kernel.name for l in _plan(shapes, ml_dtypes.bfloat16, caps=cpu)[0].launches] == ["attention_cpu_bf16"]
    vulkan_32 = Capabilities(name="vulkan", target="spirv", subgroup_size=32)      # cores unknown: 128 assumed
    warp = _plan(shapes, np.float32, caps=vulkan_32)[0].launches
    assert [l.kernel.name for l in warp] == ["attention_decode_f32_d128", "attention_combine_f32"]
    assert 128 * 12 <= warp[0].groups[0] * warp[0].groups[1] * 4 <= 128 * 48
    spirv = Capabilities(name="vulkan", target="spirv", subgroup_size=8, cores=8)
    simt = _plan(shapes, np.float32, caps=spirv)[0].launches
    assert [l.kernel.name for l in simt] == ["attention_decode_simt_f32", "attention_combine_simt_f32"]
    assert simt[0].groups == (32, 128, 1) and simt[0].scalars[-2:] == (256, 128)        # rows, splits of 256 keys
    short = [(1, 32, 9, 128), (1, 8, 2000, 128), (1, 8, 2000, 128)]                     # prefill loops stay short
    assert [l.kernel.name for l in _plan(short, np.float32, caps=spirv)[0].launches] == ["attention_prefill_f32"]
    long = [(1, 32, 9, 128), (1, 8, 2100, 128), (1, 8, 2100, 128)]
    assert _plan(long, np.float32, caps=spirv)[0].launches[0].kernel.name == "attention_decode_simt_f32"
    few_keys = [(1, 32, 1, 128), (1, 8, 5, 128), (1, 8, 5, 128)]        # any key count: a single split
    assert [l.kernel.name for l in _plan(few_keys, np.float32)[0].launches] == ["attention_decode_f32_d128",
                                                                                 "attention_combine_f32"]
    many_queries = [(1, 32, 5, 128), (1, 8, 600, 128), (1, 8, 600, 128)]
    assert [l.kernel.name for l in _plan(many_queries, np.float32)[0].launches] == ["attention_prefill_f32"]
    odd = [(1, 4, 1, 81), (1, 2, 600, 81), (1, 2, 600, 81)]            # 16-bit decode reads words: even dims
    assert [l.kernel.name for l in _plan(odd, ml_dtypes.bfloat16)[0].launches] == ["attention_prefill_bf16"]
    assert _plan(odd, np.float32)[0].launches[0].kernel.name == "attention_decode_f32_d128"
    wide = [(1, 4, 2, 136), (1, 4, 600, 136), (1, 4, 600, 64)]
    qwen = [(1, 14, 1, 64), (1, 2, 576, 64), (1, 2, 576, 64)]
    assert _plan(wide, np.float32)[0].launches[0].kernel.name == "attention_decode_f32_d256"
    qwen_decode = _plan(qwen, np.float32)[0].launches[0]
    assert qwen_decode.kernel.name == "attention_decode_f32_d128" and qwen_decode.groups[1] == 4   # 7 rows: 2 blocks


def test_combine_merges_the_planned_splits_of_a_long_cache():
    """The combine of a 32768-key decode on a GPU of twice the SMs (128 splits: more than one round of each
    warp's pairs) runs one 1024-thread workgroup a query row and matches the merge in float64, a row with
    every split empty NaN."""
    shapes = [(1, 32, 1, 128), (1, 8, 32768, 128), (1, 8, 32768, 128)]
    big = dataclasses.replace(CUDA_CAPS, cores=2 * CUDA_CAPS.cores)
    code, *_ = _plan(shapes, np.float32, caps=big, zero_empty=False)
    decode, combine = code.launches
    rows, dv, splits, zero_empty = combine.scalars
    assert (rows, dv, splits, zero_empty) == (32, 128, decode.groups[0], 0) and splits > 64
    assert combine.groups == (rows, 1, 1) and combine.kernel.workgroup == (1024, 1, 1)
    rng = np.random.default_rng(6)
    rows = 2                                           # two of the rows: the merge is per row
    pm = rng.standard_normal((rows, splits)).astype(np.float32) * 3
    pl = rng.random((rows, splits)).astype(np.float32) + 0.5
    pacc = rng.standard_normal((rows, splits, dv)).astype(np.float32)
    pm[0, ::7], pl[0, ::7], pacc[0, ::7] = -np.inf, 0.0, 0.0       # empty splits
    pm[1], pl[1], pacc[1] = -np.inf, 0.0, 0.0                       # a row that saw no key
    out = np.zeros(rows * dv, np.float32)
    _kernel_function("attention_combine_f32").emulate(pm.reshape(-1), pl.reshape(-1), pacc.reshape(-1), out,
                                                      rows, dv, splits, 0, threads=(rows * 1024, 1, 1))
    w = np.exp(pm[0].astype(np.float64) - pm[0].max())
    want = (pacc[0] * w[:, None]).sum(0) / (pl[0] * w).sum()
    np.testing.assert_allclose(out[:dv], want, rtol=1e-5, atol=1e-6)
    assert np.isnan(out[dv:]).all()


@pytest.mark.skipif(PTXAS is None, reason=PTXAS_SKIP)
@pytest.mark.parametrize("name", [f"attention_decode_{t}_d{n}" for t in ("f32", "f16", "bf16") for n in (128, 256)]
                         + [f"attention_combine_{t}" for t in ("f32", "f16", "bf16")])
def test_decode_kernels_do_not_spill_on_sm90(name, tmp_path):
    """The decode kernels keep q, the accumulators and 4 keys of K and V in registers, the combine (1024
    threads: 64 registers a thread at most) its 8 accumulators and a pair of splits' 16 loads in flight: a
    spill would put local-memory traffic into the loops of bandwidth-bound kernels."""
    from poot.jit.kir.assets import load_asset
    from poot.jit.llvm.compile import compile_kernel

    art = compile_kernel(load_asset(name), "ptx", arch="sm_90")
    path = tmp_path / f"{name}.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, "-arch=sm_90", "-v", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in r.stderr, r.stderr
