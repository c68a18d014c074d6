"""A traced function (@pt.jit, a loop body, a cond branch) that writes into an array it closes over,
rather than one passed as an argument, is refused at trace time naming the array and the line; the
array keeps its value and stays usable."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.trace.closed_over import ClosedOverWriteError

GLOBAL_BUF = pt.zeros(3)


def test_a_jitted_function_writing_into_a_closed_over_array_is_refused():
    buf = pt.zeros(3)

    @pt.jit
    def c(x):
        buf[1] = x.sum()
        return x * 2

    with pytest.raises(ClosedOverWriteError, match=r"writes into the array 'buf' it closes over \(at .*:\d+\)"):
        c(pt.ones(3))
    np.testing.assert_array_equal((buf + 1).numpy(), [1, 1, 1])


def test_the_error_is_a_tracer_error():
    assert issubclass(ClosedOverWriteError, pt.TracerError)


def test_an_in_place_operator_on_a_global_array_is_refused():
    @pt.jit
    def f(x):
        global GLOBAL_BUF
        GLOBAL_BUF += x
        return x

    with pytest.raises(ClosedOverWriteError, match="'GLOBAL_BUF'"):
        f(pt.ones(3))
    np.testing.assert_array_equal(GLOBAL_BUF.numpy(), [0, 0, 0])


def test_an_eager_loop_body_writing_into_a_closed_over_array_is_refused():
    a = pt.zeros(3)

    def body(i, c):
        a[0] = c
        return c + 1

    with pytest.raises(ClosedOverWriteError, match="fori_loop: .*'a'"):
        pt.fori_loop(0, 3, body, pt.zeros(()))
    np.testing.assert_array_equal(a.numpy(), [0, 0, 0])


def test_a_cond_branch_writing_into_a_closed_over_array_is_refused():
    a = pt.zeros(2)

    def branch(v):
        a[1] = v
        return v

    with pytest.raises(ClosedOverWriteError, match="cond: .*'a'"):
        pt.cond(pt.asarray(True), branch, lambda v: v, pt.ones(()))
    np.testing.assert_array_equal(a.numpy(), [0, 0])


def test_an_array_reached_through_an_object_is_named_by_its_path():
    class State:
        def __init__(self):
            self.w = pt.zeros(2)

    state = State()

    @pt.jit
    def f(x):
        state.w[0] = x.sum()
        return x

    with pytest.raises(ClosedOverWriteError, match=r"'state\.w'"):
        f(pt.ones(2))
    np.testing.assert_array_equal(state.w.numpy(), [0, 0])


def test_arguments_and_the_function_s_own_arrays_may_be_written():
    @pt.jit
    def f(x):
        y = pt.zeros(3)
        y[1] = x.sum()
        x[0] = 5.0
        return y

    x = pt.ones(3)
    np.testing.assert_array_equal(f(x).numpy(), [0, 3, 0])
    np.testing.assert_array_equal(x.numpy(), [5, 1, 1])

    def body(i, c):
        c[0] = c[0] + 1      # the carry is the body's own argument
        return c

    np.testing.assert_array_equal(pt.fori_loop(0, 3, body, pt.zeros(2)).numpy(), [3, 0])


def test_closed_over_arrays_that_are_only_read_are_fine():
    w = pt.ones(3)
    f = pt.jit(lambda x: x * w)
    np.testing.assert_array_equal(f(pt.ones(3)).numpy(), [1, 1, 1])
    np.testing.assert_array_equal(pt.fori_loop(0, 2, lambda i, c: c + w, pt.zeros(3)).numpy(), [2, 2, 2])
