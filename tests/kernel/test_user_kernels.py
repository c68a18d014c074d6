"""Kernels as a user writes them from docs/kernels.md: broadcasting by hand, a row softmax and a tiled
matmul on shared memory, a histogram with atomics, a workgroup scan, a padded transpose, a stencil with
a halo, gather/scatter, scalar parameters of every kind, device functions calling each other, loops with
break/continue and early returns, Python's integer semantics, float special values, casts and math, and
kernels feeding lazy arrays inside @pt.jit. Each runs on the emulator, the CPU and, where the device is
present, vulkan and wgpu, and is checked against NumPy: the emulator is the specification, so all four
must agree with the reference."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot.errors import DeviceUnavailableError, NotBuiltError

RUNS = ["emulate", "cpu", "vulkan", "wgpu"]


class Runner:
    """Launches a kernel on one device, or emulates it."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, kernel, *args, threads=None, workgroup=None):
        grid = {k: v for k, v in (("threads", threads), ("workgroup", workgroup)) if v is not None}
        if self.name == "emulate":
            kernel.emulate(*args, **grid)
        else:
            kernel.launch(pt.Context(self.name), *args, **grid)


@pytest.fixture(params=RUNS)
def run(request):
    if request.param != "emulate":
        try:
            pt.device(request.param)
        except DeviceUnavailableError as e:
            pytest.skip(f"device '{request.param}' is unavailable here: {e}")
    return Runner(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# --- elementwise with broadcasting by hand, on a 2-D grid ----------------------------------------------------
@pt.kernel(workgroup=(16, 16))
def scale_rows_add_cols(x: pt.In[pt.f32], rs: pt.In[pt.f32], cb: pt.In[pt.f32], out: pt.Out[pt.f32], rows: pt.u32,
                        cols: pt.u32):
    c = pt.thread_index_x()
    r = pt.thread_index_y()
    if r < rows and c < cols:
        out[r * cols + c] = x[r * cols + c] * rs[r] + cb[c]


def test_broadcasting_by_hand(run, rng):
    x = rng.standard_normal((37, 53)).astype(np.float32)
    rs, cb = rng.standard_normal(37).astype(np.float32), rng.standard_normal(53).astype(np.float32)
    out = np.zeros_like(x)
    run(scale_rows_add_cols, x, rs, cb, out, 37, 53, threads=(53, 37))
    # a device may contract x * r + c into one fused multiply-add (NVIDIA's Vulkan driver does): one
    # rounding instead of two, so the bound is a few ulps of the terms, not of the (cancelling) sum
    terms = np.abs(x * rs[:, None]) + np.abs(cb[None, :])
    assert (np.abs(out - (x * rs[:, None] + cb[None, :])) <= 2 * np.finfo(np.float32).eps * terms).all()


# --- a row softmax: one workgroup a row, reductions through shared memory --------------------------------------
SOFTMAX_WG = 64


@pt.device_fn
def tree_reduce(red, tid, take_max):
    """red[0] becomes the max (or the sum) of red[0:SOFTMAX_WG]; every thread must call it."""
    s = SOFTMAX_WG // 2
    while s > 0:
        if tid < s:
            if take_max:
                red[tid] = max(red[tid], red[tid + s])
            else:
                red[tid] += red[tid + s]
        pt.workgroup_barrier()
        s //= 2


@pt.kernel(workgroup=(SOFTMAX_WG,))
def softmax_rows(x: pt.In[pt.f32], y: pt.Out[pt.f32], ncols: pt.u32):
    row = pt.group_index_x()
    tid = pt.local_index_x()
    red = pt.shared(pt.f32, SOFTMAX_WG)
    m = float("-inf")
    for j in range(tid, ncols, SOFTMAX_WG):
        m = max(m, x[row * ncols + j])
    red[tid] = m
    pt.workgroup_barrier()
    tree_reduce(red, tid, True)
    mx = red[0]
    pt.workgroup_barrier()                      # everyone has read red[0] before it is overwritten
    acc = 0.0
    for j in range(tid, ncols, SOFTMAX_WG):
        acc += pt.exp(x[row * ncols + j] - mx)
    red[tid] = acc
    pt.workgroup_barrier()
    tree_reduce(red, tid, False)
    total = red[0]
    for j in range(tid, ncols, SOFTMAX_WG):
        y[row * ncols + j] = pt.exp(x[row * ncols + j] - mx) / total


def test_row_softmax_with_shared_memory(run, rng):
    x = (rng.standard_normal((5, 300)) * 4).astype(np.float32)
    x[2, :7] = -np.inf                           # masked entries
    y = np.zeros_like(x)
    run(softmax_rows, x, y, 300, threads=(5 * SOFTMAX_WG,))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)


# --- a tiled matmul through shared tiles ------------------------------------------------------------------------
TILE = 8


@pt.kernel(workgroup=(TILE, TILE))
def matmul_tiled(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32], M: pt.u32, N: pt.u32, K: pt.u32):
    ta = pt.shared(pt.f32, TILE * TILE)
    tb = pt.shared(pt.f32, TILE * TILE)
    lx = pt.local_index_x()
    ly = pt.local_index_y()
    col = pt.thread_index_x()
    row = pt.thread_index_y()
    acc = 0.0
    for k0 in range(0, K, TILE):
        ka = k0 + lx
        kb = k0 + ly
        ta[ly * TILE + lx] = a[row * K + ka] if row < M and ka < K else 0.0
        tb[ly * TILE + lx] = b[kb * N + col] if kb < K and col < N else 0.0
        pt.workgroup_barrier()
        for kk in range(TILE):
            acc += ta[ly * TILE + kk] * tb[kk * TILE + lx]
        pt.workgroup_barrier()
    if row < M and col < N:
        c[row * N + col] = acc


def test_tiled_matmul(run, rng):
    M, N, K = 19, 23, 29
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    run(matmul_tiled, a, b, c, M, N, K, threads=(N, M))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-5)


# --- a histogram: shared counts per workgroup, then global atomics -----------------------------------------------
BINS = 16


@pt.kernel(workgroup=(64,))
def histogram(x: pt.In[pt.i32], h: pt.InOut[pt.u32]):
    local = pt.shared(pt.u32, BINS)
    t = pt.local_index_x()
    if t < BINS:
        local[t] = pt.u32(0)
    pt.workgroup_barrier()
    i = pt.thread_index()
    if i < len(x):
        pt.atomic_add(local, x[i] % BINS, pt.u32(1))      # Python's modulo: negative values land in 0..15
    pt.workgroup_barrier()
    if t < BINS:
        pt.atomic_add(h, t, local[t])


def test_histogram_with_atomics(run, rng):
    x = rng.integers(-100, 100, 1000).astype(np.int32)
    h = np.zeros(BINS, np.uint32)
    run(histogram, x, h, threads=(len(x),))        # the default grid would follow h, the first written buffer
    np.testing.assert_array_equal(h, np.bincount(x % BINS, minlength=BINS))


# --- a workgroup scan with the block totals ---------------------------------------------------------------------
SCAN_WG = 64


@pt.kernel(workgroup=(SCAN_WG,))
def block_scan(x: pt.In[pt.i32], y: pt.Out[pt.i32], sums: pt.Out[pt.i32]):
    buf = pt.shared(pt.i32, SCAN_WG)
    t = pt.local_index_x()
    i = pt.thread_index_x()
    buf[t] = x[i] if i < len(x) else 0
    pt.workgroup_barrier()
    off = 1
    while off < SCAN_WG:                          # Hillis-Steele: read, barrier, add, barrier
        v = 0
        if t >= off:
            v = buf[t - off]
        pt.workgroup_barrier()
        buf[t] += v
        pt.workgroup_barrier()
        off *= 2
    if i < len(y):
        y[i] = buf[t]
    if t == SCAN_WG - 1:
        sums[pt.group_index_x()] = buf[t]        # a constant index (63) on SPIR-V: wgpu once refused it


def test_workgroup_scan(run, rng):
    x = rng.integers(-50, 50, 200).astype(np.int32)
    y, sums = np.zeros(200, np.int32), np.zeros(4, np.int32)
    run(block_scan, x, y, sums, threads=(256,))
    blocks = [x[k:k + SCAN_WG] for k in range(0, 200, SCAN_WG)]
    np.testing.assert_array_equal(y, np.concatenate([np.cumsum(b) for b in blocks]))
    np.testing.assert_array_equal(sums, [b.sum() for b in blocks])


# --- a transpose through a padded shared tile --------------------------------------------------------------------
TT = 8


@pt.kernel(workgroup=(TT, TT))
def transpose(a: pt.In[pt.f32], b: pt.Out[pt.f32], rows: pt.i32, cols: pt.i32):
    tile = pt.shared(pt.f32, TT * (TT + 1))      # +1: no bank conflicts on the column reads
    lx = pt.i32(pt.local_index_x())
    ly = pt.i32(pt.local_index_y())
    gx = pt.i32(pt.group_index_x()) * TT
    gy = pt.i32(pt.group_index_y()) * TT
    if gy + ly < rows and gx + lx < cols:
        tile[ly * (TT + 1) + lx] = a[(gy + ly) * cols + gx + lx]
    pt.workgroup_barrier()
    r, c = gx + ly, gy + lx
    if r < cols and c < rows:
        b[r * rows + c] = tile[lx * (TT + 1) + ly]


def test_transpose_through_padded_shared_memory(run, rng):
    a = rng.standard_normal((13, 21)).astype(np.float32)
    b = np.zeros((21, 13), np.float32)
    run(transpose, a, b, 13, 21, threads=(21, 13))
    np.testing.assert_array_equal(b, a.T)


# --- a 5-point stencil with a halo in shared memory ---------------------------------------------------------------
SX = SY = 8


@pt.kernel(workgroup=(SX, SY))
def laplacian(u: pt.In[pt.f32], v: pt.Out[pt.f32], H: pt.i32, W: pt.i32):
    tile = pt.shared(pt.f32, (SX + 2) * (SY + 2))
    lx = pt.i32(pt.local_index_x())
    ly = pt.i32(pt.local_index_y())
    x = pt.i32(pt.thread_index_x())
    y = pt.i32(pt.thread_index_y())
    k = ly * SX + lx
    while k < (SX + 2) * (SY + 2):               # the tile and its halo, zero outside the grid
        gy = pt.i32(pt.group_index_y()) * SY + k // (SX + 2) - 1
        gx = pt.i32(pt.group_index_x()) * SX + k % (SX + 2) - 1
        tile[k] = u[gy * W + gx] if 0 <= gy < H and 0 <= gx < W else 0.0
        k += SX * SY
    pt.workgroup_barrier()
    if x < W and y < H:
        c = (ly + 1) * (SX + 2) + lx + 1
        v[y * W + x] = 4.0 * tile[c] - tile[c - 1] - tile[c + 1] - tile[c - (SX + 2)] - tile[c + (SX + 2)]


def test_stencil_with_halo(run, rng):
    u = rng.standard_normal((19, 27)).astype(np.float32)
    v = np.zeros_like(u)
    run(laplacian, u, v, 19, 27, threads=(27, 19))
    p = np.pad(u, 1)
    ref = 4 * p[1:-1, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:] - p[:-2, 1:-1] - p[2:, 1:-1]
    np.testing.assert_allclose(v, ref, rtol=1e-5, atol=1e-5)


# --- a reduction with subgroup operations --------------------------------------------------------------------------
@pt.kernel(workgroup=(64,))
def subgroup_total(x: pt.In[pt.f32], out: pt.InOut[pt.f32]):
    i = pt.thread_index()
    s = pt.subgroup_sum(x[i] if i < len(x) else 0.0)
    if pt.lane_index() == 0:
        pt.atomic_add(out, 0, s)


def test_subgroup_reduction(run, rng):
    x = rng.standard_normal(500).astype(np.float32)
    out = np.zeros(1, np.float32)
    try:
        run(subgroup_total, x, out, threads=(512,))
    except NotBuiltError as e:                  # the CPU, wgpu and lavapipe (8-lane subgroups) have none
        assert "subgroup" in str(e) and "subgroup_total" in str(e)
        pytest.skip(f"no 32-lane subgroups on {run.name}: {e}")
    np.testing.assert_allclose(out, [x.astype(np.float64).sum()], rtol=1e-4)


# --- gather and scatter by index arrays ------------------------------------------------------------------------------
@pt.kernel
def gather(src: pt.In[pt.f32], idx: pt.In[pt.i64], out: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(out):
        out[i] = src[idx[i]]


@pt.kernel
def scatter_double(src: pt.In[pt.f32], idx: pt.In[pt.u32], out: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(src):
        out[idx[i]] = src[i] * 2.0


def test_gather_and_scatter(run, rng):
    src = rng.standard_normal(100).astype(np.float32)
    idx = rng.integers(0, 100, 300)
    out = np.zeros(300, np.float32)
    run(gather, src, idx, out)
    np.testing.assert_array_equal(out, src[idx])
    perm = rng.permutation(100).astype(np.uint32)
    out = np.zeros(100, np.float32)
    run(scatter_double, src, perm, out, threads=(100,))
    ref = np.zeros(100, np.float32)
    ref[perm] = src * 2
    np.testing.assert_array_equal(out, ref)


# --- stream compaction: the old value of an atomic add as a slot ------------------------------------------------------
@pt.kernel
def keep_above(x: pt.In[pt.f32], out: pt.Out[pt.f32], count: pt.InOut[pt.u32], thr: pt.f32):
    i = pt.thread_index()
    if i < len(x) and x[i] > thr:
        out[pt.atomic_add(count, 0, pt.u32(1))] = x[i]


def test_stream_compaction(run, rng):
    x = rng.standard_normal(300).astype(np.float32)
    out, count = np.zeros(300, np.float32), np.zeros(1, np.uint32)
    run(keep_above, x, out, count, 0.5)
    n = int(count[0])
    np.testing.assert_array_equal(np.sort(out[:n]), np.sort(x[x > 0.5]))


# --- scalar parameters of several dtypes -----------------------------------------------------------------------------
@pt.kernel
def scalar_kinds(x: pt.In[pt.f32], o: pt.Out[pt.f32], oi: pt.Out[pt.i32], ou: pt.Out[pt.u32], oh: pt.Out[pt.f16],
                 ob: pt.Out[pt.bf16], a: pt.i32, b: pt.u32, c: pt.f32, d: pt.f16, e: pt.bf16, flag: pt.bool_):
    i = pt.thread_index()
    if i < len(x):
        o[i] = x[i] * c + (1.0 if flag else -1.0)
        oi[i] = pt.i32(i) * a
        ou[i] = pt.u32(i) + b                    # wraps past 2**32
        oh[i] = pt.f16(x[i]) * d
        ob[i] = pt.bf16(x[i]) + e


@pytest.mark.parametrize("flag", [True, False])
def test_scalar_parameters_of_each_dtype(run, rng, flag):
    n = 50
    x = rng.standard_normal(n).astype(np.float32)
    bf = ml_dtypes.bfloat16
    outs = [np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.uint32), np.zeros(n, np.float16),
            np.zeros(n, bf)]
    run(scalar_kinds, x, *outs, -3, 4_000_000_000, 2.5, 0.5, 1.25, flag)
    k = np.arange(n)
    np.testing.assert_allclose(outs[0], x * np.float32(2.5) + (1 if flag else -1), rtol=1e-6)
    np.testing.assert_array_equal(outs[1], -3 * k)
    np.testing.assert_array_equal(outs[2], ((k + 4_000_000_000) % 2**32).astype(np.uint32))
    np.testing.assert_array_equal(outs[3], x.astype(np.float16) * np.float16(0.5))
    np.testing.assert_array_equal(outs[4], (x.astype(bf).astype(np.float32) + np.float32(1.25)).astype(bf))


# --- device functions calling each other -----------------------------------------------------------------------------
@pt.device_fn
def square(v):
    return v * v


@pt.device_fn
def row_norm(a, i, n):
    s = 0.0
    for k in range(n):
        s += square(a[i * n + k])
    return pt.sqrt(s)


@pt.device_fn
def write_row_norm(a, o, i, n):
    o[i] = row_norm(a, i, n)


@pt.device_fn
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@pt.kernel
def row_norms(a: pt.In[pt.f32], o: pt.Out[pt.f32], n: pt.i32):
    i = pt.thread_index()
    if i < len(o):
        write_row_norm(a, o, pt.i32(i), n)


@pt.kernel(workgroup=(8, 8))
def box_blur_clamped(a: pt.In[pt.f32], o: pt.Out[pt.f32], H: pt.i32, W: pt.i32):
    x = pt.i32(pt.thread_index_x())
    y = pt.i32(pt.thread_index_y())
    if x >= W or y >= H:
        return
    s = 0.0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            s += a[clamp(y + dy, 0, H - 1) * W + clamp(x + dx, 0, W - 1)]
    o[y * W + x] = s / 9.0


def test_device_functions_calling_each_other(run, rng):
    a = rng.standard_normal((30, 7)).astype(np.float32)
    o = np.zeros(30, np.float32)
    run(row_norms, a, o, 7)
    np.testing.assert_allclose(o, np.linalg.norm(a, axis=1), rtol=1e-5)
    img = rng.standard_normal((11, 13)).astype(np.float32)
    out = np.zeros_like(img)
    run(box_blur_clamped, img, out, 11, 13, threads=(13, 11))
    p = np.pad(img, 1, mode="edge")
    ref = sum(p[1 + dy:12 + dy, 1 + dx:14 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


# --- loops: break, continue, negative steps, while True, short-circuit guards ----------------------------------------
@pt.kernel
def scan_rows(a: pt.In[pt.i32], o: pt.Out[pt.i32], n: pt.i32):
    i = pt.i32(pt.thread_index())
    if i >= n:
        return
    s = 0
    for k in range(i, -1, -1):                   # a[i], a[i-1], ..., a[0], skipping multiples of 3
        if a[k] % 3 == 0:
            continue
        s += a[k]
    o[i * 3] = s
    j = i
    while True:                                  # the first j >= i with a[j] > 50, or n
        if j >= n or a[j] > 50:                  # `or` short-circuits: a[n] is never read
            break
        j += 1
    o[i * 3 + 1] = j
    o[i * 3 + 2] = a[i + 1] if 0 <= i + 1 < n else -1


def test_loops_with_break_and_continue(run, rng):
    a = rng.integers(-20, 100, 40).astype(np.int32)
    o = np.zeros(120, np.int32)
    run(scan_rows, a, o, 40)
    o = o.reshape(40, 3)
    assert o[:, 0].tolist() == [sum(int(v) for v in a[:i + 1] if v % 3) for i in range(40)]
    assert o[:, 1].tolist() == [next((j for j in range(i, 40) if a[j] > 50), 40) for i in range(40)]
    assert o[:, 2].tolist() == a[1:].tolist() + [-1]


# --- Python's integer semantics --------------------------------------------------------------------------------------
@pt.kernel
def int_ops(a: pt.In[pt.i32], b: pt.In[pt.i32], q: pt.Out[pt.i32], r: pt.Out[pt.i32], q8: pt.Out[pt.i8],
            r64: pt.Out[pt.i64], sh: pt.Out[pt.i32]):
    i = pt.thread_index()
    if i < len(a):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        q8[i] = pt.i8(a[i]) // pt.i8(b[i])
        r64[i] = pt.i64(a[i]) % pt.i64(b[i])
        sh[i] = a[i] >> (b[i] & 63)


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _floor_div(a: int, b: int, bits: int) -> int:
    """Python's // at a width: 0 for a zero divisor and for MIN // -1 (docs/kernels.md)."""
    return 0 if b == 0 or (a == -(1 << (bits - 1)) and b == -1) else _wrap(a // b, bits)


def test_integer_division_and_modulo_follow_python(run):
    a = np.array([-7, 7, -7, 7, 0, -1, -128, 5, 2**31 - 1, -2**31, -2**31, 13, -13, -1], np.int32)
    b = np.array([2, -2, -2, 2, 3, 5, -1, 0, -7, -1, 7, -4, 4, 40], np.int32)
    n = len(a)
    q, r, q8, r64, sh = (np.zeros(n, t) for t in (np.int32, np.int32, np.int8, np.int64, np.int32))
    run(int_ops, a, b, q, r, q8, r64, sh)
    pairs = list(zip(a.tolist(), b.tolist()))
    assert q.tolist() == [_floor_div(x, y, 32) for x, y in pairs]
    assert r.tolist() == [0 if y == 0 else _wrap(x % y, 32) for x, y in pairs]
    assert q8.tolist() == [_floor_div(_wrap(x, 8), _wrap(y, 8), 8) for x, y in pairs]
    assert r64.tolist() == [0 if y == 0 else x % y for x, y in pairs]
    assert sh.tolist() == [x >> (y & 63) if (y & 63) < 32 else (-1 if x < 0 else 0) for x, y in pairs]


# --- float special values and casts ----------------------------------------------------------------------------------
@pt.kernel
def specials(x: pt.In[pt.f32], flags: pt.Out[pt.bool_], toi: pt.Out[pt.i32], tou: pt.Out[pt.u8], f: pt.Out[pt.f32],
             h: pt.Out[pt.f16]):
    i = pt.thread_index()
    if i < len(x):
        v = x[i]
        flags[i * 4] = pt.isnan(v)
        flags[i * 4 + 1] = pt.isinf(v)
        flags[i * 4 + 2] = pt.isfinite(v)
        flags[i * 4 + 3] = v != v or v > 1.0
        toi[i] = pt.i32(v)                       # truncates and saturates, NaN -> 0
        tou[i] = pt.u8(v)
        f[i * 4] = min(v, 0.5)                   # NaN propagates
        f[i * 4 + 1] = pt.sign(v)
        f[i * 4 + 2] = v / 0.0
        f[i * 4 + 3] = pt.f32(pt.bitcast(v, pt.u32) >> 16)
        h[i] = pt.f16(v)


def _saturate(v: float, lo: int, hi: int) -> int:
    if math.isnan(v):
        return 0
    return hi if v >= hi else lo if v <= lo else math.trunc(v)


def test_float_special_values_and_casts(run):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 3e9, -3e9, 255.9, 256.0, -1.0, 70000.0, 1e-8, 65504.0,
                  1e-45], np.float32)
    n = len(x)
    flags, toi, tou, f, h = (np.zeros(n * k, t) for t, k in ((bool, 4), (np.int32, 1), (np.uint8, 1),
                                                             (np.float32, 4), (np.float16, 1)))
    run(specials, x, flags, toi, tou, f, h)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(flags.reshape(n, 4), np.stack([np.isnan(x), np.isinf(x), np.isfinite(x),
                                                                     (x != x) | (x > 1)], 1))
        assert toi.tolist() == [_saturate(float(v), -2**31, 2**31 - 1) for v in x]
        assert tou.tolist() == [_saturate(float(v), 0, 255) for v in x]
        def reference(v):
            return np.stack([np.minimum(v, np.float32(0.5)), np.sign(v), v / np.float32(0),
                             (x.view(np.uint32) >> 16).astype(np.float32)], 1)

        # GPU drivers may flush float32 subnormals to zero in arithmetic (Vulkan leaves it to the
        # driver; NVIDIA's does): the subnormal input's row is either result
        sub = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
        got, ref, flushed = f.reshape(n, 4), reference(x), reference(np.where(sub, np.copysign(0, x), x))
        np.testing.assert_array_equal(got[~sub], ref[~sub])
        for row in np.flatnonzero(sub):
            assert any(np.array_equal(got[row], r[row], equal_nan=True) for r in (ref, flushed)), got[row]
        np.testing.assert_array_equal(h, x.astype(np.float16))


# --- math functions --------------------------------------------------------------------------------------------------
@pt.kernel
def math_fns(x: pt.In[pt.f32], o: pt.Out[pt.f32], n: pt.u32):
    i = pt.thread_index()
    if i < n:
        v = x[i]
        o[i] = pt.exp(v)
        o[n + i] = pt.log(pt.abs(v) + 1e-3)
        o[2 * n + i] = pt.sqrt(pt.abs(v))
        o[3 * n + i] = 1.0 / pt.sqrt(pt.abs(v) + 1.0)
        o[4 * n + i] = pt.tanh(v)
        o[5 * n + i] = pt.erf(v)
        o[6 * n + i] = pt.fma(v, 2.0, 1.0)
        o[7 * n + i] = pt.power(pt.abs(v), 1.5) + v ** 2.0
        o[8 * n + i] = pt.atan2(v, 0.5) + pt.hypot(v, 2.0)
        o[9 * n + i] = pt.floor(v) + pt.ceil(v) * 10.0 + pt.round(v) * 100.0 + pt.trunc(v) * 1000.0
        o[10 * n + i] = pt.expm1(v) + pt.log1p(pt.abs(v)) + pt.exp2(v) + pt.log2(pt.abs(v) + 1.0)
        o[11 * n + i] = pt.sin(v) * pt.cos(v) + pt.copysign(1.0, v)


def test_math_functions(run, rng):
    x = (rng.standard_normal(64) * 3).astype(np.float32)
    x[:6] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.0]     # rounding ties go to even, as np.round
    o = np.zeros(12 * 64, np.float32)
    run(math_fns, x, o, 64)
    v = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    ref = [np.exp(v), np.log(np.abs(v) + np.float32(1e-3)), np.sqrt(np.abs(v)), 1 / np.sqrt(np.abs(v) + 1), np.tanh(v),
           erf(v), v * 2 + 1, np.abs(v) ** 1.5 + v ** 2, np.arctan2(v, 0.5) + np.hypot(v, 2),
           np.floor(v) + np.ceil(v) * 10 + np.round(v) * 100 + np.trunc(v) * 1000,
           np.expm1(v) + np.log1p(np.abs(v)) + np.exp2(v) + np.log2(np.abs(v) + 1),
           np.sin(v) * np.cos(v) + np.copysign(1, v)]
    np.testing.assert_allclose(o, np.concatenate(ref), rtol=2e-5, atol=2e-6)


# --- a 3-D grid ------------------------------------------------------------------------------------------------------
@pt.kernel(workgroup=(4, 4, 4))
def grid_coords(o: pt.Out[pt.u32], X: pt.u32, Y: pt.u32, Z: pt.u32):
    x = pt.thread_index(0)
    y = pt.thread_index(1)
    z = pt.thread_index(2)
    if x < X and y < Y and z < Z:
        o[(z * Y + y) * X + x] = x + 100 * y + 10000 * z + 1000000 * pt.num_groups_x()


def test_three_dimensional_grid(run):
    o = np.zeros(5 * 6 * 7, np.uint32)
    run(grid_coords, o, 7, 6, 5, threads=(7, 6, 5))
    z, y, x = np.meshgrid(np.arange(5), np.arange(6), np.arange(7), indexing="ij")
    np.testing.assert_array_equal(o.reshape(5, 6, 7), x + 100 * y + 10000 * z + 2 * 1000000)


# --- kernels among lazy arrays, inside @pt.jit -----------------------------------------------------------------------
@pt.kernel
def gelu(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        v = x[i]
        y[i] = 0.5 * v * (1.0 + pt.erf(v * 0.7071067811865476))


@pt.kernel
def row_sums(x: pt.In[pt.f32], y: pt.Out[pt.f32], n: pt.u32):
    r = pt.thread_index()
    if r < len(y):
        s = 0.0
        for k in range(n):
            s += x[r * n + k]
        y[r] = s


@pt.kernel
def add_one(y: pt.InOut[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] += 1.0


@pytest.mark.parametrize("name", RUNS[1:])
def test_kernels_among_lazy_arrays_and_in_jit(name, rng):
    try:
        device = pt.device(name)
    except DeviceUnavailableError as e:
        pytest.skip(f"device '{name}' is unavailable here: {e}")
    x = rng.standard_normal((16, 32)).astype(np.float32)
    g = 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
    with device:
        xa = pt.asarray(x)
        y = pt.kernel_call(gelu, xa, (16, 32))
        np.testing.assert_allclose((y * 2.0).sum(axis=1).numpy(), 2 * g.sum(1), rtol=1e-5)

        @pt.jit
        def f(a):
            s = pt.kernel_call(row_sums, pt.kernel_call(gelu, a, a.shape), (a.shape[0],), a.shape[1])
            return pt.exp(s) + a.mean()
        for _ in range(2):                         # traced, then replayed
            np.testing.assert_allclose(f(xa).numpy(), np.exp(g.sum(1)) + x.mean(), rtol=1e-4)
        w = xa * 3.0                              # a lazy value, updated by an InOut launch
        add_one(pt.Context(name), w)
        np.testing.assert_allclose(w.numpy(), x * 3 + 1, rtol=1e-6)
