import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt


def test_short_names_are_the_same_objects():
    assert pt.f32 is pt.float32 and pt.bf16 is pt.bfloat16 and pt.u64 is pt.uint64


NUMPY_DTYPES = [d for d in dt.ALL_DTYPES if d is not dt.bfloat16]  # NumPy has no bf16 rules


@pytest.mark.parametrize("a", NUMPY_DTYPES, ids=str)
@pytest.mark.parametrize("b", NUMPY_DTYPES, ids=str)
def test_promotion_matches_numpy(a, b):
    assert dt.result_type(a, b).np == np.result_type(a.np, b.np)


def test_bfloat16_promotion():
    assert dt.result_type(dt.bfloat16, dt.float16) is dt.float32
    assert dt.result_type(dt.bfloat16, dt.float32) is dt.float32
    assert dt.result_type(dt.int8, dt.bfloat16) is dt.bfloat16
    assert dt.result_type(dt.int16, dt.bfloat16) is dt.float32


def test_python_scalars_are_weak():
    assert dt.promote_with_scalar(dt.float32, 2.0) is dt.float32
    assert dt.promote_with_scalar(dt.int8, 1) is dt.int8
    assert dt.promote_with_scalar(dt.int8, 1.5) is dt.float64
    assert dt.promote_with_scalar(dt.bool_, 1) is dt.int64


def test_unsupported_dtype_is_a_poot_error():
    with pytest.raises(pt.DTypeError, match="unsupported dtype"):
        dt.as_dtype(np.clongdouble)
