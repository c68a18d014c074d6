"""The oracle device is poot's reference semantics, so the compiled devices and it must agree: bfloat16
arithmetic on the oracle, out-of-range float -> int casts (saturating, NaN -> 0, the kernel language's
rule, docs/array-api.md) and pow far beyond the exponent range."""
import ml_dtypes
import numpy as np
import pytest

import poot as pt

CAST_INPUT = [np.nan, np.inf, -np.inf, 3e9, -1.5, 300.0]
CAST_RULE = {  # truncate toward zero, saturate at the type's bounds, NaN gives 0
    pt.int32: [0, 2**31 - 1, -2**31, 2**31 - 1, -1, 300],
    pt.uint8: [0, 255, 0, 255, 0, 255],
    pt.int8: [0, 127, -128, 127, -1, 127],
    pt.uint32: [0, 2**32 - 1, 0, 3_000_000_000, 0, 300],
    pt.int64: [0, 2**63 - 1, -2**63, 3_000_000_000, -1, 300],
    pt.uint64: [0, 2**64 - 1, 0, 3_000_000_000, 0, 300],
}


def test_bfloat16_arithmetic_on_the_oracle_matches_ml_dtypes():
    a = np.array([1.5, 2.25, -3.0, 0.1, 1e30], dtype=ml_dtypes.bfloat16)
    b = np.array([0.5, 3.0, 7.0, -2.0, 1e-3], dtype=ml_dtypes.bfloat16)
    with pt.device("oracle"):
        x, y = pt.asarray(a), pt.asarray(b)
        assert x.device == "oracle" and x.dtype == pt.bfloat16
        assert (pt.ones(3, dtype=pt.bfloat16) + 1).numpy().tolist() == [2.0, 2.0, 2.0]
        for got, want in (((x + 1).numpy(), a + ml_dtypes.bfloat16(1)), ((x * y).numpy(), a * b),
                          ((x / y).numpy(), a / b), (pt.sqrt(pt.abs(x)).numpy(), np.sqrt(np.abs(a)))):
            assert got.dtype == ml_dtypes.bfloat16
            np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal((pt.asarray(a) * pt.asarray(b)).numpy().view(np.uint16),
                                  (a * b).view(np.uint16))   # the CPU device gives the same bits


def saturated(value: float, dtype) -> int:
    """The documented rule for one value."""
    if np.isnan(value):
        return 0
    info = np.iinfo(dtype.np)
    return int(min(max(np.trunc(value), info.min), info.max))


@pytest.mark.parametrize("src", [pt.float32, pt.float64, pt.float16, pt.bfloat16], ids=lambda d: d.name)
@pytest.mark.parametrize("dst", list(CAST_RULE), ids=lambda d: d.name)
def test_out_of_range_float_to_int_casts_saturate_on_cpu_and_oracle(src, dst):
    values = np.array(CAST_INPUT, dtype=np.float64)
    with np.errstate(over="ignore"):    # 3e9 is inf in float16, 2998927360 in bfloat16
        rounded = values.astype(src.np).astype(np.float64)
    results = {}
    for device in ("cpu", "oracle"):
        with pt.device(device):
            results[device] = pt.asarray(values).astype(src).astype(dst).numpy().tolist()
    assert results["cpu"] == results["oracle"] == [saturated(v, dst) for v in rounded]
    if src in (pt.float32, pt.float64):
        assert results["oracle"] == CAST_RULE[dst]


def test_pow_far_beyond_the_exponent_range_is_zero_or_inf():
    """`2.0 ** -1e38` was -inf on the compiled devices; NumPy, the oracle and every device give 0."""
    for device in ("cpu", "oracle"):
        with pt.device(device):
            for dtype in (pt.float32, pt.float64):
                base = pt.asarray([2.0, 2.0, 0.5, 0.5], dtype=dtype)
                expo = pt.asarray([-1e38, 1e38, 1e38, -1e38], dtype=dtype)
                got = (base ** expo).numpy()
                assert got.tolist() == [0.0, np.inf, 0.0, np.inf], (device, dtype)
            assert (pt.asarray([2.0]) ** -1e38).numpy().tolist() == [0.0]
