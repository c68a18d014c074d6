"""Array programs that once gave wrong numbers or unhelpful errors on some device, each checked against
NumPy on every device under test (POOT_TEST_DEVICES=cpu,wgpu,vulkan), plus the codegen shapes that keep
them right on GPUs checked without one.

- INT_MIN // -1 wraps to INT_MIN (NumPy); KIR's division gives 0 for that overflow.
- x % inf is x, and x % y is exact (fmod); Vulkan's OpFRem is x - y * trunc(x / y), NaN there and
  half an ulp of x off elsewhere. float16 floor division rounded each step and lost a unit.
- lavapipe stops an invocation's loops after 65535 iterations in all: an ordered scatter-add (int64,
  float64, narrow ints) or a naive matmul with a longer walk lost everything past it.
- a CPU kernel handed another device's buffer raised a bare AttributeError.
"""
import math
import types

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from poot.devices.base import Buffer, Capabilities
from poot.fuse.plan import plan_fusion
from poot.jit.codegen import generate
from poot.jit.codegen.opaque import SERIAL_UPDATES_PER_LAUNCH
from poot.jit.kir.verify import verify

from tests.tolerance import assert_close
from .graphs import G

GPU = Capabilities(name="gpu", target="ptx")
LONG = SERIAL_UPDATES_PER_LAUNCH * 2 + 5          # past two launches' worth, and past 65535


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_int_min_floor_divided_by_minus_one_wraps(device, dtype):
    lo = np.iinfo(dtype).min
    a = np.array([lo, lo, 7, -7, 5, 0, lo], dtype)
    b = np.array([-1, 1, -2, 2, -1, -1, 3], dtype)
    x, y = pt.asarray(a), pt.asarray(b)
    with np.errstate(over="ignore"):
        assert_close((x // y).numpy(), a // b, dtype)
        assert_close((x % y).numpy(), a % b, dtype)
        assert_close(pt.jit(lambda p, q: p // q + 1)(x, y).numpy(), a // b + 1, dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_remainder_by_infinity_keeps_the_dividend(device, dtype):
    a = np.array([1.5, -2.5, 0.0, -0.0, 5.0, -3.0, np.inf, np.nan, 7.0], dtype)
    b = np.array([np.inf, np.inf, -np.inf, np.inf, -np.inf, -np.inf, np.inf, np.inf, 2.0], dtype)
    x, y = pt.asarray(a), pt.asarray(b)
    with np.errstate(invalid="ignore"):
        assert_close((x % y).numpy(), np.remainder(a, b), dtype)
        assert_close((x // y).numpy(), np.floor_divide(a, b), dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_remainder_and_floor_division_are_exact(device, dtype):
    """Quotients within the mantissa: fmod is exact in NumPy, and so is float16 floor division
    computed in float32 with one rounding."""
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(2000) * 1000).astype(dtype)
    b = (rng.standard_normal(2000) + 0.1).astype(dtype)
    keep = np.abs(a.astype(np.float64) / b) < 2.0 ** (np.finfo(dtype).nmant + 1)
    a, b = a[keep], b[keep]
    x, y = pt.asarray(a), pt.asarray(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_close((x % y).numpy(), np.remainder(a, b), dtype, ops=0)
        assert_close((x // y).numpy(), np.floor_divide(a, b), dtype, ops=0)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8])
def test_scatter_add_with_many_repeated_indices(device, dtype):
    idx = np.arange(LONG) % 3
    values = np.ones(LONG, dtype)
    expected = np.zeros(3, np.int64)
    np.add.at(expected, idx, 1)
    y = pt.zeros(3, dtype=dtype) * 1
    pt.add.at(y, idx, pt.asarray(values))
    assert_close(y.numpy(), expected.astype(dtype), dtype)
    counts = pt.bincount(pt.asarray(idx.astype(np.int64)))
    assert_close(counts.numpy(), np.bincount(idx), np.int64)


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_matmul_with_a_long_contraction(device, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (2, LONG)).astype(dtype)
    b = rng.integers(-2, 3, (LONG, 3)).astype(dtype)
    assert_close((pt.asarray(a) @ pt.asarray(b)).numpy(), a @ b, dtype, ops=LONG)
    assert_close((pt.asarray(a[0]) @ pt.asarray(b)).numpy(), a[0] @ b, dtype, ops=LONG)


def _gpu_launches(graph):
    plan = plan_fusion(graph)
    out = []
    for step in plan.kernel_steps:
        for launch in generate(step, plan, GPU).launches:
            verify(launch.kernel)
            out.append(launch)
    return out


def test_gpu_ordered_scatter_add_walks_its_updates_over_several_launches():
    g = G()
    x, idx, upd = g.input((3, 2), dt.int64), g.input((LONG,), dt.int64), g.input((LONG, 2), dt.int64)
    writes = [ln for ln in _gpu_launches(g.graph(g.op("scatter", x, idx, upd, mode="add")))
              if ln.kernel.name.endswith("_write")]
    assert [ln.scalars for ln in writes] == [(k,) for k in range(0, LONG, SERIAL_UPDATES_PER_LAUNCH)]
    assert len({id(ln.kernel) for ln in writes}) == 1      # one kernel, compiled once


def test_gpu_matmul_walks_a_long_contraction_over_several_launches():
    g = G()
    a, b = g.input((2, LONG), dt.int32), g.input((LONG, 3), dt.int32)
    launches = _gpu_launches(g.graph(g.op("matmul", a, b)))
    runs = math.ceil(LONG / SERIAL_UPDATES_PER_LAUNCH)
    assert [ln.scalars for ln in launches] == [(k * SERIAL_UPDATES_PER_LAUNCH,) for k in range(runs)]


def test_cpu_kernel_refuses_another_devices_buffer_by_name():
    from poot.devices.cpu import buffer_address

    stranger = Buffer(types.SimpleNamespace(name="vulkan"), 16, object())
    with pytest.raises(pt.DeviceError, match="vulkan"):
        buffer_address(stranger)


@pytest.mark.parametrize("other", ["wgpu", "vulkan"])
def test_gather_with_an_index_array_on_another_device_is_a_device_error(other):
    try:
        idx = pt.asarray(np.array([1, 2]), device=other)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device '{other}' is unavailable here: {e}")
    x = pt.asarray(np.arange(6.0), device="cpu")
    with pytest.raises(pt.DeviceError):
        x[idx].numpy()


@pytest.mark.parametrize("name", ["cpu:1", "vulkan:2", "wgpu:-1", "cuda:-1"])
def test_device_index_naming_no_device_is_refused(name):
    with pytest.raises(pt.DeviceUnavailableError, match="index"):
        pt.device(name)


def test_device_index_zero_names_the_single_device():
    with pt.device("cpu:0"):
        assert pt.asarray(np.ones(2)).device == "cpu"
