"""A jitted function that updates its arguments in place, called with one array at several argument
leaves (`f(a, a)`, `f({'a': a, 'b': a})`), computes what an eager call (and NumPy) does: each update
sees the others. Calls with distinct arrays keep their own program."""
from __future__ import annotations

import numpy as np

import poot as pt


def _inc2(x, y):
    x += 1
    y += 1
    return x


def test_one_array_passed_twice_takes_both_updates():
    f = pt.jit(_inc2)
    a = pt.zeros(2)
    out = f(a, a)
    np.testing.assert_array_equal(out.numpy(), [2, 2])
    np.testing.assert_array_equal(a.numpy(), [2, 2])
    eager = pt.zeros(2)
    _inc2(eager, eager)
    np.testing.assert_array_equal(eager.numpy(), a.numpy())


def test_distinct_and_aliased_calls_each_get_their_own_program():
    f = pt.jit(_inc2)
    b, c = pt.zeros(2), pt.zeros(2)
    f(b, c)
    np.testing.assert_array_equal(b.numpy(), [1, 1])
    np.testing.assert_array_equal(c.numpy(), [1, 1])
    a = pt.zeros(2)
    f(a, a)
    f(a, a)
    np.testing.assert_array_equal(a.numpy(), [4, 4])
    b2, c2 = pt.zeros(2), pt.zeros(2)
    f(b2, c2)
    np.testing.assert_array_equal(b2.numpy(), [1, 1])
    np.testing.assert_array_equal(c2.numpy(), [1, 1])
    assert f.trace_count == 2


def test_an_array_at_two_leaves_of_a_dict_sees_the_update():
    @pt.jit
    def f(p):
        p["a"] += 1
        return p["b"].sum()

    a = pt.zeros(2)
    assert float(f({"a": a, "b": a})) == 2.0
    np.testing.assert_array_equal(a.numpy(), [1, 1])
    b, c = pt.zeros(2), pt.zeros(2)
    assert float(f({"a": b, "b": c})) == 0.0


def test_a_function_without_updates_reads_an_array_passed_twice():
    f = pt.jit(lambda x, y: x + y)
    a = pt.ones(2)
    np.testing.assert_array_equal(f(a, a).numpy(), [2, 2])
    np.testing.assert_array_equal(f(a, pt.zeros(2)).numpy(), [1, 1])
