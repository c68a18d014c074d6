"""The emulator is the definition of what every device computes: its numbers must be the devices' bit for
bit. Each test runs a kernel under `emulate` and on every device of POOT_KERNEL_DEVICES (default cpu;
an unavailable one is skipped) and compares exactly: integers by value, floats by bit pattern (NaN by
position, its payload aside)."""
import math
import os

import ml_dtypes
import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.kernel import scalar_ops

BF16 = ml_dtypes.bfloat16
DEVICES = [d for d in os.environ.get("POOT_KERNEL_DEVICES", "cpu").split(",") if d]


@pytest.fixture(params=DEVICES)
def ctx(request):
    try:
        return pt.Context(request.param)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device '{request.param}' is unavailable here: {e}")


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def assert_same(emulated: np.ndarray, device: np.ndarray) -> None:
    """Integers equal; floats with the same bits, NaN in the same places."""
    if emulated.dtype.kind in "iub":
        assert emulated.tolist() == device.tolist()
        return
    nan_e, nan_d = np.isnan(emulated.astype(np.float64)), np.isnan(device.astype(np.float64))
    assert nan_e.tolist() == nan_d.tolist()
    assert bits(emulated)[~nan_e].tolist() == bits(device)[~nan_d].tolist(), (emulated, device)


def run_both(kernel, ctx, inputs, outputs, threads=None):
    """(outputs after emulate, outputs after the launch on ctx), from zero-filled copies of `outputs`."""
    emulated = [np.zeros_like(o) for o in outputs]
    device = [np.zeros_like(o) for o in outputs]
    kernel.emulate(*inputs, *emulated, threads=threads)
    kernel.launch(ctx, *inputs, *device, threads=threads)
    return emulated, device


# --- bf16 meets a Python float: the literal takes bf16, each operation rounds to bf16 --------------------
@pt.kernel
def bf16_literals(y: pt.In[pt.bf16], o: pt.Out[pt.bf16], q: pt.Out[pt.bf16], c: pt.Out[pt.i32]):
    i = pt.thread_index()
    if i < len(o):
        o[i] = y[i] * 0.9 + y[i]
        q[i] = -y[i] * 1.1 + y[i] / 3.0
        c[i] = 1 if y[i] >= 0.9 else 0


SCALE = 0.9


@pt.kernel
def bf16_global_literal(y: pt.In[pt.bf16], o: pt.Out[pt.bf16], c: pt.Out[pt.i32]):
    i = pt.thread_index()
    if i < len(o):
        o[i] = y[i] * SCALE + y[i]
        c[i] = 1 if y[i] == SCALE else 0


def test_a_float_literal_meeting_bf16_is_rounded_to_bf16(ctx):
    y = np.array([3.0, 7.0, 0.9, -1.5, 1e30, 0.0], BF16)
    n = len(y)
    emulated, device = run_both(bf16_literals, ctx, [y], [np.zeros(n, BF16), np.zeros(n, BF16),
                                                           np.zeros(n, np.int32)])
    for e, d in zip(emulated, device):
        assert_same(e, d)
    assert emulated[0][1] == BF16(13.25)           # bf16(bf16(7 * bf16(0.9)) + 7)
    assert emulated[2].tolist()[2] == 1             # bf16(0.9) >= bf16(0.9)


def test_a_global_float_constant_meeting_bf16_is_rounded_to_bf16(ctx):
    y = np.array([3.0, 7.0, 0.9], BF16)
    emulated, device = run_both(bf16_global_literal, ctx, [y], [np.zeros(3, BF16), np.zeros(3, np.int32)])
    for e, d in zip(emulated, device):
        assert_same(e, d)
    assert emulated[1].tolist() == [0, 0, 1]


# --- float -> int casts saturate, bf16 included ----------------------------------------------------------
@pt.kernel
def bf16_to_ints(x: pt.In[pt.bf16], a: pt.Out[pt.u8], b: pt.Out[pt.i32], c: pt.Out[pt.i64], d: pt.Out[pt.u16]):
    i = pt.thread_index()
    if i < len(x):
        a[i] = pt.u8(x[i])
        b[i] = pt.i32(x[i])
        c[i] = pt.i64(x[i])
        d[i] = pt.u16(x[i])


def test_bf16_to_int_casts_saturate_and_nan_gives_zero(ctx):
    x = np.array([-1.0, 300.0, np.inf, -np.inf, np.nan, 3e10, -3e10, 2.5, -2.5, 65536.0], BF16)
    n = len(x)
    emulated, device = run_both(bf16_to_ints, ctx, [x], [np.zeros(n, np.uint8), np.zeros(n, np.int32),
                                                         np.zeros(n, np.int64), np.zeros(n, np.uint16)])
    for e, d in zip(emulated, device):
        assert_same(e, d)
    assert emulated[0].tolist()[:6] == [0, 255, 255, 0, 0, 255]
    assert emulated[1].tolist()[:6] == [-1, 300, 2**31 - 1, -2**31, 0, 2**31 - 1]


# --- float64 fma: non-finite operands give IEEE's NaN / infinity ------------------------------------------
@pt.kernel
def fma64(a: pt.In[pt.f64], b: pt.In[pt.f64], c: pt.In[pt.f64], o: pt.Out[pt.f64]):
    i = pt.thread_index()
    if i < len(o):
        o[i] = pt.fma(a[i], b[i], c[i])


def fma_rows(rows, ctx):
    a, b, c = (np.array(col) for col in zip(*rows))
    emulated, device = run_both(fma64, ctx, [a, b, c], [np.zeros(len(rows))])
    assert_same(emulated[0], device[0])
    return emulated[0]


def test_f64_fma_with_infinities_and_nan(ctx):
    inf, nan = np.inf, np.nan
    rows = [(inf, 0.0, inf), (-inf, -inf, -inf), (inf, 2.0, -inf), (inf, 2.0, 1.0), (nan, 1.0, 2.0),
            (1.0, 2.0, nan), (1e300, 1e300, 1.0), (0.0, inf, 1.0), (1.0 + 2**-52, 1.0 - 2**-53, -1.0),
            (3.0, 1 / 3, -1.0), (5e-324, 0.5, 0.0)]
    out = fma_rows(rows, ctx)
    assert np.isnan(out[:3]).all() and out[3] == inf


def test_f64_fma_edge_cases_match_the_cpu():
    """An infinite addend with a product that overflows only when rounded, and -0 + -0: IEEE's fused
    results, as the CPU's hardware fma gives them (the SPIR-V devices' float64 fma, built from pieces,
    differs here: NaN and +0)."""
    out = fma_rows([(1e300, 1e300, -np.inf), (1e300, -1e300, np.inf), (-0.0, 1.0, -0.0)], pt.Context("cpu"))
    assert out[0] == -np.inf and out[1] == np.inf and np.signbit(out[2])


def test_f64_fma_rounds_once():
    """The fused result of finite doubles, exact then rounded once, with IEEE's signed zeros."""
    f = lambda a, b, c: float(scalar_ops.fma(np.float64(a), np.float64(b), np.float64(c), dt.float64))  # noqa: E731
    assert f(1.0 + 2**-52, 1.0 - 2**-52, -1.0) == -2**-104
    assert f(1e300, 1e300, -math.inf) == -math.inf            # the product must not overflow first
    assert math.isnan(f(math.inf, 0.0, 1.0)) and math.isnan(f(math.inf, 1.0, -math.inf))
    assert f(1e300, 1e10, 0.0) == math.inf
    assert math.copysign(1.0, f(-0.0, 1.0, -0.0)) == -1.0 and math.copysign(1.0, f(2.0, 3.0, -6.0)) == 1.0


# --- signed zeros: sign, min/max, nextafter ---------------------------------------------------------------
def signed_zero_kernel(t):
    @pt.kernel
    def zeros(x: pt.In[t], y: pt.In[t], s: pt.Out[t], mn: pt.Out[t], mx: pt.Out[t], pmn: pt.Out[t],
              pmx: pt.Out[t], nx: pt.Out[t]):
        i = pt.thread_index()
        if i < len(x):
            s[i] = pt.sign(x[i])
            mn[i] = min(x[i], y[i])
            mx[i] = max(x[i], y[i])
            pmn[i] = pt.minimum(x[i], y[i])
            pmx[i] = pt.maximum(x[i], y[i])
            nx[i] = pt.nextafter(x[i], y[i])
    return zeros


@pytest.mark.parametrize("dtype", [pt.f16, pt.bf16, pt.f32, pt.f64], ids=lambda d: d.name)
def test_signed_zeros_follow_ieee(ctx, dtype):
    x = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, -2.0, np.nan], dtype.np)
    y = np.array([0.0, -0.0, 0.0, -0.0, -0.0, 0.0, 1.0], dtype.np)
    emulated, device = run_both(signed_zero_kernel(dtype), ctx, [x, y], [np.zeros(len(x), dtype.np)] * 6)
    for e, d in zip(emulated, device):
        assert_same(e, d)
    s, mn, mx = emulated[0], emulated[1], emulated[2]
    assert not np.signbit(s[0]) and np.signbit(mn[0]) and np.signbit(mn[1])
    assert not np.signbit(mx[0]) and not np.signbit(mx[1])
