"""Array programs users run on a GPU device, each mixing what such programs combine: contractions
(einsum, tensordot, batched matmul with broadcasting, int8 matmul), ranking with ties (sort, stable
argsort, searchsorted, argmax, unique, take/put_along_axis), scans (cumsum, cumprod, diff), NaN-aware
statistics (nanmean, nanmax, nanargmin, nanmedian, percentile, median), selection and movement (where,
clip, boolean masks read and written, pad in every mode, roll, concatenate/stack/split, meshgrid),
the small dtypes (int8, uint8, int16, float16, bfloat16, float64, bool) with integer division and
remainder by zero (0, as NumPy gives), large and odd sizes, and two `@pt.kernel`s users write (a
histogram with atomics, a row-wise softmax in shared memory), launched directly and through
`pt.kernel_call` under `@pt.jit`. Each runs eagerly and with its step jitted, compared with NumPy.

The `device` fixture runs every test once per device of POOT_TEST_DEVICES; the plain test run also
runs this file on Vulkan and wgpu (tests/devices/test_gpu_suites.py, on Mesa's lavapipe where there is
no GPU), so these programs run for real on both. A device without a dtype's shader feature refuses the program with a DTypeError naming
the feature, never a wrong number (checked by taking the feature away)."""
from __future__ import annotations

import numpy as np
import pytest
from tolerance import assert_close

import poot as pt
from poot.trace.context import backend, current

from .harness import check_program, compare


def _np(x):
    return x.numpy() if isinstance(x, pt.Array) else np.asarray(x)


# --- contractions ----------------------------------------------------------------------------------
def contract_step(xp, q, k, w):
    s = xp.einsum("bhqd,bhkd->bhqk", q, k) * 0.25
    p = xp.exp(s - s.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    o = xp.matmul(p, k)                                    # (2, 3, 7, 8)
    y = xp.matmul(o[:, None], w)                           # (2, 1, 3, 7, 8) @ (4, 1, 8, 5): broadcast batch
    t = xp.tensordot(o, w[0, 0], axes=([3], [0]))          # (2, 3, 7, 5)
    return q + 0.1 * o, y.sum(axis=(1, 2)), t


def contract_run(xp, step, q, k, w, a8, b8):
    outs = []
    for _ in range(3):
        q, y, t = step(xp, q, k, w)
        outs.append(y)
    return q, xp.stack(outs), t, a8 @ b8, xp.einsum("...ij,...jk->...ik", a8.astype(xp.int32), b8.astype(xp.int32))


def test_attention_and_broadcast_matmul(device):
    r = np.random.default_rng(0)
    q, k = (r.standard_normal((2, 3, 7, 8)).astype(np.float32) for _ in range(2))
    w = r.standard_normal((4, 1, 8, 5)).astype(np.float32)
    a8 = r.integers(-100, 100, (2, 3, 17, 9)).astype(np.int8)     # int8 products wrap, as NumPy's do
    b8 = r.integers(-100, 100, (3, 9, 5)).astype(np.int8)
    check_program(device, contract_run, contract_step, (q, k, w, a8, b8), ops=(64, 256, 64, 1, 1))


# --- ranking with ties -----------------------------------------------------------------------------
def rank_step(xp, x, v):
    o = xp.argsort(x, axis=-1, kind="stable")
    ranks = xp.zeros(o.shape, o.dtype)
    xp.put_along_axis(ranks, o, xp.broadcast_to(xp.arange(x.shape[-1]), o.shape), axis=-1)
    top = xp.take_along_axis(x, o[:, -2:], axis=-1)
    s = xp.sort(x[0])
    return (x + 1.0, ranks, top, xp.argmax(x, axis=1), xp.argmin(x, axis=0),
            xp.searchsorted(s, v), xp.searchsorted(s, v, side="right"))


def rank_run(xp, step, x, v):
    ranks = []
    for _ in range(2):
        x, r, top, amax, amin, left, right = step(xp, x, v)
        ranks.append(r)
    return xp.stack(ranks), top, amax, amin, left, right


@pytest.mark.parametrize("n", [7, 1023])
def test_ranks_with_ties(device, n):
    r = np.random.default_rng(n)
    x = r.integers(0, 4, (5, n)).astype(np.float32)           # many ties: stable order matters
    v = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 9.0], np.float32)
    check_program(device, rank_run, rank_step, (x, v), ops=1)
    got = pt.unique(pt.asarray(x), return_counts=True, return_inverse=True)
    for g, e in zip(got, np.unique(x, return_counts=True, return_inverse=True)):
        assert_close(_np(g), e, e.dtype)


def signed_sort_step(xp, x):
    return (xp.argsort(x, kind="stable"), xp.argsort(-x, kind="stable"), xp.sort(x), xp.argmax(x),
            xp.nanargmin(x), xp.searchsorted(xp.sort(x), x))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_sort_orders_signed_zeros_and_nans_as_numpy(device, dtype):
    """-0.0 and 0.0 are equal keys (a stable sort keeps their input order) and NaNs of either sign
    sort last, where an order by the bits would put -0.0 and -NaN first."""
    base = np.array([0.0, -0.0, 1.0, -0.0, 0.0, np.nan, np.nan, -1.0, np.inf, -np.inf, 0.0, -0.0], dtype)
    base[6] = -base[6]                                        # a NaN with its sign bit set
    x = np.resize(base, 1023)
    check_program(device, lambda xp, step, x: step(xp, x), signed_sort_step, (x,), ops=1)


# --- scans and NaN statistics ----------------------------------------------------------------------
def scan_stats_step(xp, x):
    y = xp.where(x > 1.2, xp.nan, x)
    return (xp.cumsum(x, axis=1), xp.cumprod(1.0 + 0.01 * x, axis=0), xp.diff(x, axis=1), xp.diff(x, n=2, axis=0),
            xp.nanmean(y, axis=1), xp.nanmax(y, axis=0), xp.nanargmin(y, axis=1), xp.nanmedian(y, axis=0),
            xp.nanpercentile(y, [10.0, 90.0], axis=1), xp.percentile(x, 30.0, axis=0), xp.median(x))


def scan_stats_run(xp, step, x, i8):
    outs = step(xp, x)
    outs = step(xp, x * 0.5)
    return outs + (xp.cumsum(i8, axis=0), xp.cumsum(i8.astype(xp.int16)), i8.sum(), i8.astype(xp.uint8).sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scans_and_nan_statistics(device, dtype):
    if dtype == np.float64 and not backend(current()).caps.float64:
        pytest.skip("no float64 on this device")
    r = np.random.default_rng(2)
    x = r.standard_normal((9, 31)).astype(dtype)
    x[3] = 0.5                                                # a row of ties for the arg- and median reductions
    i8 = r.integers(-100, 100, (7, 5)).astype(np.int8)        # int8 sums widen as NumPy's do
    check_program(device, scan_stats_run, scan_stats_step, (x, i8), ops=64)


# --- selection and movement ------------------------------------------------------------------------
def grid_step(xp, u, mask):
    p = xp.pad(u, ((1, 1), (2, 1)), mode="reflect")
    lap = p[:-2, 2:-1] + p[2:, 2:-1] + p[1:-1, 1:-2] + p[1:-1, 3:] - 4 * u
    u = xp.clip(u + 0.1 * lap, -1.0, 1.0)
    u = xp.where(mask, 0.0, u)
    u[u < -0.9] = -0.9                                        # a boolean-mask write, jit-able
    return xp.roll(u, (1, -2), axis=(0, 1)) * 0.5 + u * 0.5


def grid_run(xp, step, u, mask):
    for _ in range(3):
        u = step(xp, u, mask)
    # float32 grids: u carries float32 rounding (a GPU contracts the stencil's a*b + c into FMAs), which
    # a float64 product with integer grids would have to meet at float64's tolerance
    gx, gy = xp.meshgrid(xp.arange(u.shape[1], dtype=xp.float32), xp.arange(u.shape[0], dtype=xp.float32))
    parts = xp.split(u, [2, 5], axis=1)
    pads = [xp.pad(u[:3, :4], ((1, 2), (0, 3)), mode=m)
            for m in ("constant", "edge", "reflect", "symmetric", "wrap")]
    return (u, (u * gx - gy).sum(axis=0), xp.concatenate(parts[::-1], axis=1),
            xp.stack([q.sum(axis=1) for q in parts], axis=-1), xp.stack(pads))


def test_stencil_with_masks_and_pads(device):
    r = np.random.default_rng(3)
    u = r.uniform(-1, 1, (6, 9)).astype(np.float32)
    mask = r.random((6, 9)) < 0.2
    check_program(device, grid_run, grid_step, (u, mask), ops=32)
    x = pt.asarray(u)                                         # data-dependent shapes: eager only
    assert_close(x[x > 0].numpy(), u[u > 0], np.float32)
    assert_close(pt.nonzero(x > 0.5)[1].numpy(), np.nonzero(u > 0.5)[1], np.int64)


# --- dtypes ----------------------------------------------------------------------------------------
INT_DTYPES = ["int8", "uint8", "int16", "int64", "uint32"]


def int_step(xp, x, y):
    z = xp.zeros(x.shape, x.dtype)
    return (x // y, x % y, xp.fmod(x, y), x // 0, x % 0, xp.floor_divide(z, y), xp.divmod(x, y)[1],
            x * y, xp.abs(x), xp.max(x), xp.argmax(x), xp.cumsum(y), x.mean())


def int_run(xp, step, x, y):
    with np.errstate(all="ignore"):
        return step(xp, x, y)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_by_zero_is_zero(device, dtype):
    d = np.dtype(dtype)
    info = np.iinfo(d)
    r = np.random.default_rng(4)
    x = r.integers(info.min // 2, info.max // 2, 23, dtype=d)
    y = r.integers(-3 if d.kind == "i" else 0, 4, 23, dtype=d)
    x[:3] = [info.min, info.max, 0]
    y[:4] = 0
    if d.kind == "i":
        x[5], y[5] = info.min, -1                             # min // -1 wraps to min, as in NumPy
    check_program(device, int_run, int_step, (x, y), ops=8)


def float_step(xp, x):
    return (x * 2 + 1, xp.exp(x), xp.tanh(x), x.sum(axis=1), x.max(axis=0), xp.sort(x, axis=1),
            xp.argsort(x, axis=1, kind="stable"), xp.argmax(x, axis=1), x.astype(xp.float32))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_small_and_wide_floats(device, dtype):
    """Each op's result rounded to `dtype` (NumPy computes bfloat16 by way of float32 too)."""
    d = pt.dtypes.as_dtype(dtype)
    cap = {"float16": "float16", "bfloat16": None, "float64": "float64"}[dtype]
    if cap and not getattr(backend(current()).caps, cap):
        pytest.skip(f"no {dtype} on this device")
    x = np.random.default_rng(5).standard_normal((7, 33)).astype(d.np)
    x[2, :5] = x[2, 0]                                        # ties for the stable argsort
    want = float_step(np, x.astype(np.float32 if d.itemsize == 2 else np.float64))
    for label, fn in (("eager", lambda a: float_step(pt, a)), ("jit", pt.jit(lambda a: float_step(pt, a)))):
        got = fn(pt.asarray(x))
        for i, (g, e) in enumerate(zip(got, want)):
            g = g.numpy()
            if e.dtype.kind == "f" and i < 6:
                e = e.astype(d.np)
                assert g.dtype == d.np, f"{label} result {i}: {g.dtype}, want {dtype}"
            assert_close(g, e, g.dtype, ops=2 if i in (3,) else 1, err_msg=f"{dtype} {label} result {i}")


def bool_step(xp, b):
    return (b & ~b[::-1], xp.any(b, axis=1), xp.all(b, axis=0), b.sum(), xp.cumsum(b, axis=1),
            xp.argmax(b, axis=1), xp.where(b, 1, 2), xp.count_nonzero(b, axis=0), b @ b.T)


def test_bool_programs(device):
    b = np.random.default_rng(6).random((7, 33)) > 0.6
    check_program(device, lambda xp, step, b: step(xp, b), bool_step, (b,), ops=1)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64"])
def test_a_missing_dtype_feature_is_refused_by_name(device, dtype):
    """Without the feature, the program is refused with a DTypeError naming dtype and feature."""
    dev = backend(current())
    feature = {("vulkan", "float64"): "shaderFloat64", ("vulkan", "float16"): "shaderFloat16",
               ("vulkan", "int64"): "shaderInt64", ("wgpu", "float64"): "shader-f64",
               ("wgpu", "float16"): "shader-f16", ("wgpu", "int64"): "shader-int64"}.get((dev.caps.name, dtype))
    if feature is None or feature not in getattr(dev, "features", ()):
        pytest.skip(f"{dev.caps.name} has no {dtype} feature to take away")
    old = dev.features
    dev.features = old - {feature}
    try:
        x = pt.asarray(np.arange(5, dtype=np.float32) + 0.25)
        with pytest.raises(pt.DTypeError, match=f"{dtype}.*{feature}"):     # constants no other test uses,
            ((x.astype(dtype) * 3.0625).astype(pt.float32) + 1.71875).numpy()   # so no program is cached
    finally:
        dev.features = old


# --- large and odd sizes ---------------------------------------------------------------------------
def big_step(xp, x, xi):
    return (xp.exp(-x * x) * 2 + 1, (x > 0).sum(), xp.nanmax(x), xp.nanargmax(x), xp.argmin(xi),
            xp.cumsum(xi), xp.nanmean(x), xp.sort(xi)[:: max(1, xi.size // 64)])


def big_run(xp, step, x, xi):
    return step(xp, x, xi)


@pytest.mark.parametrize("n", [1, 7, 100_003])
def test_large_and_odd_sizes(device, n):
    r = np.random.default_rng(n)
    x = r.standard_normal(n).astype(np.float32)
    if n > 7:
        x[[5, n // 2]] = np.nan
        x[::97] = np.round(x[::97])
    xi = r.integers(-50, 50, n).astype(np.int32)
    check_program(device, big_run, big_step, (x, xi), ops=(1, 1, 1, 1, 1, 1, 64, 1))


# --- user kernels ----------------------------------------------------------------------------------
@pt.kernel(workgroup=(64, 1, 1))
def histogram_kernel(x: pt.In[pt.f32], lo: pt.f32, hi: pt.f32, counts: pt.InOut[pt.i32]):
    i = pt.thread_index()
    if i < len(x):
        v = x[i]
        nb = pt.i32(len(counts))
        if v >= lo and v <= hi:
            b = pt.i32((v - lo) / (hi - lo) * pt.f32(nb))
            if b >= nb:
                b = nb - 1
            pt.atomic_add(counts, b, 1)


@pt.kernel(workgroup=(64, 1, 1))
def softmax_rows_kernel(x: pt.In[pt.f32], ncol: pt.u32, y: pt.Out[pt.f32]):
    """One workgroup per row: a max and a sum reduced through shared memory."""
    r = pt.group_index()
    lane = pt.local_index()
    m = pt.shared(pt.f32, 64)
    s = pt.shared(pt.f32, 64)
    base = r * ncol
    mx = float("-inf")
    for j in range(lane, ncol, 64):
        mx = max(mx, x[base + j])
    m[lane] = mx
    pt.workgroup_barrier()
    k = 32
    while k > 0:
        if lane < k:
            m[lane] = max(m[lane], m[lane + k])
        pt.workgroup_barrier()
        k = k // 2
    acc = pt.f32(0.0)
    for j in range(lane, ncol, 64):
        acc += pt.exp(x[base + j] - m[0])
    s[lane] = acc
    pt.workgroup_barrier()
    k = 32
    while k > 0:
        if lane < k:
            s[lane] = s[lane] + s[lane + k]
        pt.workgroup_barrier()
        k = k // 2
    for j in range(lane, ncol, 64):
        y[base + j] = pt.exp(x[base + j] - m[0]) / s[0]


@pytest.mark.parametrize("n", [1, 1023, 200_000])
def test_histogram_kernel_with_atomics(device, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    want = np.histogram(x, bins=16, range=(-2.0, 2.0))[0]
    ctx = pt.Context(device)
    counts = pt.zeros(16, dtype=pt.int32)
    histogram_kernel.launch(ctx, pt.asarray(x), -2.0, 2.0, counts, threads=(n, 1, 1))
    assert_close(counts.numpy(), want.astype(np.int32), np.int32)
    host = np.zeros(16, np.int32)
    histogram_kernel.launch(ctx, x, -2.0, 2.0, host, threads=(n, 1, 1))
    assert_close(host, want.astype(np.int32), np.int32)

    @pt.jit
    def both(x):
        c = pt.kernel_call(histogram_kernel, x, -2.0, 2.0, pt.zeros(16, dtype=pt.int32), threads=(x.size, 1, 1))
        return c, pt.histogram(x, bins=16, range=(-2.0, 2.0))[0]

    for _ in range(2):                                        # traced, then replayed
        c, h = both(pt.asarray(x))
        assert_close(c.numpy(), want.astype(np.int32), np.int32)
        compare((h,), (want,), device, 1, "pt.histogram")


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (40, 257)])
def test_softmax_rows_kernel(device, shape):
    x = (np.random.default_rng(7).standard_normal(shape) * 3).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    y = pt.zeros(x.size, dtype=pt.float32)
    softmax_rows_kernel.launch(pt.Context(device), pt.asarray(x.ravel()), shape[1], y, threads=(64 * shape[0], 1, 1))
    assert_close(y.numpy().reshape(shape), want, np.float32, ops=2 * shape[1])

    @pt.jit
    def rows(x):
        y = pt.kernel_call(softmax_rows_kernel, x.reshape(-1), x.shape[1], x.shape, threads=(64 * x.shape[0], 1, 1))
        return y.reshape(x.shape) - pt.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True) * 0

    got = rows(pt.asarray(x))
    assert got.device == device
    assert_close(got.numpy(), want, np.float32, ops=2 * shape[1])
