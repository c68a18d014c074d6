"""pt.jvp takes a float primal's tangent in the primal's dtype (as JAX does): another dtype is
refused rather than silently converted; a Python scalar tangent takes the primal's dtype."""
from __future__ import annotations

import pytest

import poot as pt


def test_a_tangent_of_another_dtype_is_refused_naming_it():
    x = pt.ones(2, dtype=pt.float32)
    with pytest.raises(pt.DTypeError, match=r"tangent of primals\[0\] is float64; the primal is float32"):
        pt.jvp(lambda v: v * 2, (x,), (pt.ones(2, dtype=pt.float64),))


def test_a_tangent_of_the_primal_s_dtype_or_a_python_scalar_is_taken():
    x = pt.ones(2, dtype=pt.float32)
    _, t = pt.jvp(lambda v: v * 2, (x,), (pt.ones(2, dtype=pt.float32),))
    assert t.dtype == pt.float32 and t.numpy().tolist() == [2.0, 2.0]
    _, t = pt.jvp(lambda v: v * 3, (pt.ones((), dtype=pt.float32),), (1.0,))
    assert t.dtype == pt.float32 and float(t) == 3.0
