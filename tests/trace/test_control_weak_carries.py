"""Python-scalar (weakly typed) carries and branch results of pt.fori_loop, pt.while_loop and pt.cond:
an int carry meeting a float result becomes a float (a Python scalar carry takes the body's dtype), as
two Python scalars would; and functions these constructs cannot call are refused naming the argument."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def test_an_int_scalar_carry_meeting_a_float_becomes_a_float(device):
    out = pt.fori_loop(0, 5, lambda i, c: c + 0.5, 0)
    assert out.dtype == pt.float64 and float(out) == 2.5
    out = pt.fori_loop(0, 5, lambda i, c: c * 1.5, 1)
    assert out.dtype == pt.float64 and float(out) == 1.5 ** 5


def test_a_while_loop_over_an_int_scalar_carry_adding_a_float_ends(device):
    out = pt.while_loop(lambda c: c < 3, lambda c: c + 0.7, 0)
    assert out.dtype == pt.float64
    np.testing.assert_allclose(float(out), 3.5)


def test_a_jitted_scalar_argument_makes_an_int_carry_a_float(device):
    f = pt.jit(lambda lr: pt.fori_loop(0, 3, lambda i, c: c + lr, 0))
    np.testing.assert_allclose(float(f(0.4)), 1.2)


def test_a_weak_float_carry_is_not_truncated_by_an_int_result(device):
    out = pt.fori_loop(0, 4, lambda i, c: i, 0.0)
    assert out.dtype == pt.float64 and float(out) == 3.0


def test_a_promoted_scalar_carry_stays_weak_beside_float32_arrays(device):
    v = pt.ones(2, dtype=pt.float32)
    s, w = pt.fori_loop(0, 3, lambda i, c: (c[0] + 0.5, c[1] * (c[0] + 1)), (0, v))
    assert float(s) == 1.5 and w.dtype == pt.float32
    np.testing.assert_allclose(w.numpy(), [1.0 * 1.5 * 2.0] * 2)


def test_cond_of_an_int_and_a_float_branch_is_a_float(device):
    out = pt.cond(pt.asarray(False), lambda: 1, lambda: 0.5)
    assert out.dtype == pt.float64 and float(out) == 0.5
    out = pt.cond(pt.asarray(True), lambda: 1, lambda: 0.5)
    assert out.dtype == pt.float64 and float(out) == 1.0


def test_a_branch_or_body_that_is_not_a_function_is_refused_naming_it(device):
    with pytest.raises(pt.PootError, match="true_fun must be a function"):
        pt.cond(pt.asarray(True), 1, lambda: 0)
    with pytest.raises(pt.PootError, match="false_fun must be a function"):
        pt.cond(True, lambda: 1, "x")
    with pytest.raises(pt.PootError, match="body_fun must be a function"):
        pt.fori_loop(0, 3, None, 0)
    with pytest.raises(pt.PootError, match="cond_fun must be a function"):
        pt.while_loop(None, lambda c: c, 0)


def test_a_function_taking_the_wrong_number_of_arguments_is_refused_naming_it(device):
    with pytest.raises(pt.PootError, match=r"body_fun <lambda>\(c\) cannot be called with 2 argument"):
        pt.fori_loop(0, 3, lambda c: c + 1, 0)
    with pytest.raises(pt.PootError, match=r"body_fun <lambda>\(c\) cannot be called with 2 argument"):
        pt.fori_loop(0, pt.asarray(3), lambda c: c + 1, 0)
    with pytest.raises(pt.PootError, match=r"cond_fun <lambda>\(a, b\) cannot be called with 1 argument"):
        pt.while_loop(lambda a, b: a < 3, lambda c: c + 1, 0)
    with pytest.raises(pt.PootError, match="true_fun"):
        pt.cond(pt.asarray(True), lambda a, b: a, lambda a: a, 1)


def test_a_type_error_inside_a_body_is_not_blamed_on_its_arguments(device):
    with pytest.raises(TypeError) as info:
        pt.fori_loop(0, 3, lambda i, c: c + "x", 0)
    assert "cannot be called" not in str(info.value)
