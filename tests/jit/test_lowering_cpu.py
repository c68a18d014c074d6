"""KIR semantics through the shared LLVM lowering, run on the CPU and compared with NumPy / Python."""
import ml_dtypes
import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, Binary, Bitcast, Cast, Fma, Len, Select, Unary
from poot.jit.runtime.launch import launch

INTS = [dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32, dt.uint64]
FLOATS = [dt.float16, dt.bfloat16, dt.float32, dt.float64]


def run_elementwise(fn, arrays, out_dtype, name="ew"):
    """out[i] = fn(loads...) over len(out) elements, one per thread, 64-thread workgroups."""
    dev = devices.get("cpu")
    kb = B.KernelBuilder(name, workgroup=(64, 1, 1))
    ins = [kb.buffer(f"x{j}", dt.as_dtype(a.dtype), Access.READ) for j, a in enumerate(arrays)]
    out = kb.buffer("out", out_dtype, Access.WRITE)
    i = kb.let("i", B.index("thread", 0))
    with kb.if_(B.lt(i, Len(out))):
        kb.store(out, i, fn(*[kb.load(b, i, dt.as_dtype(a.dtype)) for b, a in zip(ins, arrays)]))
    res = np.zeros(len(arrays[0]), out_dtype.np)
    launch(dev, kb.build(), [dev.wrap(np.ascontiguousarray(a)) for a in arrays] + [dev.wrap(res)], (),
           (len(res) + 63) // 64)
    return res


def _ints(dtype, n=600, seed=0):
    info = np.iinfo(dtype.np)
    rng = np.random.default_rng(seed)
    edge = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.min + 1 if info.min < 0 else 3]
    vals = rng.integers(info.min, info.max, n, dtype=dtype.np, endpoint=True)
    return np.concatenate([np.array(edge, dtype=dtype.np), vals, rng.integers(-5 if info.min else 0, 6, n).astype(dtype.np)])


def _wrap(v, dtype):
    bits = dtype.bits
    v &= (1 << bits) - 1
    return v - (1 << bits) if dt.is_signed(dtype) and v >= 1 << (bits - 1) else v


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.short)
def test_integer_div_rem_truncate_and_never_fault(dtype):
    a, b = _ints(dtype, seed=1), _ints(dtype, seed=2)
    b[:40] = 0
    if dt.is_signed(dtype):
        a[40], b[40] = np.iinfo(dtype.np).min, -1
    q = run_elementwise(lambda x, y: B.binary("div", x, y), [a, b], dtype)
    r = run_elementwise(lambda x, y: B.binary("rem", x, y), [a, b], dtype)
    for x, y, gq, gr in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist()):
        if y == 0 or (dt.is_signed(dtype) and x == np.iinfo(dtype.np).min and y == -1):
            assert (gq, gr) == (0, 0), (x, y)
        else:
            tq = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
            assert (gq, gr) == (_wrap(tq, dtype), _wrap(x - tq * y, dtype)), (x, y)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.short)
def test_shifts_past_the_width(dtype):
    a = _ints(dtype, seed=3)
    s = (np.arange(len(a)) % (dtype.bits + 5)).astype(dtype.np)
    left = run_elementwise(lambda x, y: B.binary("shl", x, y), [a, s], dtype)
    right = run_elementwise(lambda x, y: B.binary("shr", x, y), [a, s], dtype)
    for x, k, gl, gr in zip(a.tolist(), s.tolist(), left.tolist(), right.tolist()):
        assert gl == (_wrap(x << k, dtype) if k < dtype.bits else 0)
        assert gr == ((x >> k) if k < dtype.bits else (-1 if x < 0 else 0))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.short)
def test_integer_arithmetic_wraps(dtype):
    a, b = _ints(dtype, seed=4), _ints(dtype, seed=5)
    for op, f in (("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y)):
        got = run_elementwise(lambda x, y: B.binary(op, x, y), [a, b], dtype)
        assert got.tolist() == [_wrap(f(x, y), dtype) for x, y in zip(a.tolist(), b.tolist())], op
    for op, f in (("min", min), ("max", max)):
        got = run_elementwise(lambda x, y: Binary(op, x, y, dtype), [a, b], dtype)
        assert got.tolist() == [f(x, y) for x, y in zip(a.tolist(), b.tolist())]


SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, 0.5, 2.5, -0.5, np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, -1e20,
                    127.5, 128.0, -129.0, 255.9, 256.0, 65535.7, 2.0**31, -2.0**31 - 1, 2.0**63, 2.0**64, -1.0])


@pytest.mark.parametrize("src", [dt.float32, dt.float64], ids=lambda d: d.short)
@pytest.mark.parametrize("dst", INTS, ids=lambda d: d.short)
def test_float_to_int_saturates_and_nan_is_zero(src, dst):
    x = SPECIAL.astype(src.np)
    got = run_elementwise(lambda v: B.cast(v, dst), [x], dst)
    info = np.iinfo(dst.np)
    for v, g in zip(x.tolist(), got.tolist()):
        want = 0 if np.isnan(v) else int(min(max(v, info.min), info.max)) if np.isfinite(v) else (
            info.max if v > 0 else info.min)
        assert g == want, (v, g, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.short)
def test_narrow_floats_round_once_per_op(dtype):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(2000).astype(dtype.np) * 3
    b = rng.standard_normal(2000).astype(dtype.np)
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
        got = run_elementwise(lambda x, y: Binary(op, x, y, dtype), [a, b], dtype)
        want = f(a.astype(np.float32), b.astype(np.float32)).astype(dtype.np) if dtype.bits == 16 else f(a, b)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), op


@pytest.mark.parametrize("src", [dt.float32, dt.float64], ids=lambda d: d.short)
def test_bf16_conversion_is_round_to_nearest_even_and_keeps_nan(src):
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(5000) * 10.0 ** rng.integers(-40, 38, 5000),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4e38, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1e-40]])
    x = x.astype(src.np)
    got = run_elementwise(lambda v: B.cast(v, dt.bfloat16), [x], dt.bfloat16)
    want = x.astype(np.float32).astype(ml_dtypes.bfloat16)
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32)))
    assert same.all(), x[~same][:5]


def test_f16_conversion_matches_numpy():
    x = np.concatenate([np.random.default_rng(9).standard_normal(4000) * 1e3, [7e4, -7e4, 1e-8, 6e-5, np.nan]])
    got = run_elementwise(lambda v: B.cast(v, dt.float16), [x], dt.float16)
    with np.errstate(over="ignore"):
        assert np.array_equal(got, x.astype(np.float16), equal_nan=True)


@pytest.mark.parametrize("dtype", [dt.float16, dt.float32, dt.float64], ids=lambda d: d.short)
def test_min_max_propagate_nan(dtype):
    a = np.array([1.0, np.nan, 2.0, -0.0, np.inf], dtype.np)
    b = np.array([np.nan, 1.0, 3.0, 0.0, 1.0], dtype.np)
    assert np.array_equal(run_elementwise(lambda x, y: Binary("max", x, y, dtype), [a, b], dtype),
                          np.maximum(a, b), equal_nan=True)
    assert np.array_equal(run_elementwise(lambda x, y: Binary("min", x, y, dtype), [a, b], dtype),
                          np.minimum(a, b), equal_nan=True)


@pytest.mark.parametrize("dtype", [dt.float16, dt.float32, dt.float64], ids=lambda d: d.short)
def test_float_unary_and_binary_intrinsics(dtype):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 0.0, 3.7, -3.7, np.nan, np.inf, -np.inf], dtype.np)
    y = np.roll(x, 3)
    for op, f in (("round", np.rint), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("abs", np.abs),
                  ("sqrt", np.sqrt), ("neg", np.negative), ("sign", np.sign)):
        with np.errstate(invalid="ignore"):
            want = f(x)
        got = run_elementwise(lambda v: B.unary(op, v), [x], dtype)
        assert np.array_equal(got, want, equal_nan=True), op
    for op, f in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        assert np.array_equal(run_elementwise(lambda v: B.unary(op, v), [x], dt.bool_), f(x)), op
    for op, f in (("copysign", np.copysign), ("nextafter", np.nextafter)):
        got = run_elementwise(lambda a, b: Binary(op, a, b, dtype), [x, y], dtype)
        assert np.array_equal(got, f(x, y), equal_nan=True), op
    for op, f in (("lt", np.less), ("ne", np.not_equal), ("ge", np.greater_equal), ("eq", np.equal)):
        got = run_elementwise(lambda a, b: B.binary(op, a, b), [x, y], dt.bool_)
        assert np.array_equal(got, f(x, y)), op


def test_nextafter_at_zero_and_subnormals():
    x = np.array([0.0, -0.0, 0.0, np.finfo(np.float32).smallest_subnormal, 1.0], np.float32)
    y = np.array([1.0, -1.0, -1.0, 0.0, 2.0], np.float32)
    got = run_elementwise(lambda a, b: Binary("nextafter", a, b, dt.float32), [x, y], dt.float32)
    assert np.array_equal(got.view(np.uint32), np.nextafter(x, y).view(np.uint32))


def test_bitcast_select_fma_and_bool_storage():
    x = np.array([1.0, -2.0, 0.1, np.inf], np.float32)
    assert np.array_equal(run_elementwise(lambda v: Bitcast(v, dt.int32), [x], dt.int32), x.view(np.int32))
    h = np.array([1.0, -2.0, 0.1, 65504], np.float16)
    assert np.array_equal(run_elementwise(lambda v: Bitcast(v, dt.uint16), [h], dt.uint16), h.view(np.uint16))
    bf = np.array([1.0, -2.0, 0.1], ml_dtypes.bfloat16)
    assert np.array_equal(run_elementwise(lambda v: Bitcast(v, dt.int16), [bf], dt.int16), bf.view(np.int16))
    m = np.array([True, False, True, False])
    got = run_elementwise(lambda c, v: Select(c, v, Unary("neg", v, dt.float32), dt.float32), [m, x], dt.float32)
    assert np.array_equal(got, np.where(m, x, -x))
    a, b, c = (np.random.default_rng(s).standard_normal(100) for s in (1, 2, 3))
    got = run_elementwise(lambda p, q, r: Fma(p, q, r, dt.float64), [a, b, c], dt.float64)
    from fractions import Fraction as Fr
    assert np.array_equal(got, [float(Fr(p) * Fr(q) + Fr(r)) for p, q, r in zip(a, b, c)])  # one rounding
    assert run_elementwise(lambda v: B.unary("not", v), [m], dt.bool_).tolist() == [False, True, False, True]


@pytest.mark.parametrize("src", [dt.bool_, dt.int8, dt.uint32, dt.int64, dt.float16, dt.float64], ids=lambda d: d.short)
@pytest.mark.parametrize("dst", [dt.bool_, dt.int16, dt.uint8, dt.float32, dt.float64, dt.float16], ids=lambda d: d.short)
def test_casts_match_numpy_where_numpy_is_defined(src, dst):
    if dt.is_bool(src):
        x = np.array([True, False, True])
    elif dt.is_int(src):
        x = _ints(src, 50, seed=11)
    else:
        x = np.array([0.0, -0.0, 1.5, -1.5, 100.25, np.nan, 0.3, 250.0], src.np)
    got = run_elementwise(lambda v: B.cast(v, dst) if src is not dst else v, [x], dst)
    if dt.is_float(src) and dt.is_int(dst):
        return   # saturation: covered above
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(dst.np)
    assert np.array_equal(got, want, equal_nan=dt.is_float(dst)), (x, got, want)
