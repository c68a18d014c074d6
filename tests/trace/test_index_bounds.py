"""Indices held in a poot array are bounds-checked by the kernel that uses them: out of range, the
next host read raises PootIndexError naming the line that indexed (NumPy raises IndexError there);
negative indices in [-n, n) count from the end. `take(..., mode="clip"|"wrap")` against NumPy."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import poot as pt

HERE = os.path.basename(__file__)


def line_of(frame_offset=0):
    """The caller's current line number."""
    return sys._getframe(1).f_lineno + frame_offset


def raises_at(line):
    """pytest.raises for a PootIndexError whose message names this file at `line`."""
    return pytest.raises(pt.PootIndexError, match=rf"{HERE}:{line}\b")


def f32(n):
    return np.arange(n, dtype=np.float32) * 1.5 + 1.0


# --- gathers --------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [[1, 20], [10], [-11], [0, 2**40], [-(2**40)]], ids=str)
def test_getitem_out_of_range_raises_at_the_indexing_line(device, bad):
    x = pt.asarray(f32(10))
    i = pt.asarray(np.array(bad))
    y = x[i]; line = line_of()          # noqa: E702  (the line the error names)
    with raises_at(line):
        y.numpy()
    assert x[pt.asarray(np.array([3]))].numpy().tolist() == [5.5]    # the device goes on working


def test_error_is_an_index_error_and_a_kernel_trap(device):
    x = pt.asarray(f32(10))
    with pytest.raises(IndexError) as e:
        x[pt.asarray(np.array([1, 20]))].numpy()
    assert isinstance(e.value, pt.PootIndexError) and isinstance(e.value, pt.KernelTrap)
    assert "out of bounds for an axis of size 10" in str(e.value)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8, np.uint32], ids=lambda d: d.__name__)
def test_negative_and_in_range_indices_follow_numpy(device, dtype):
    a = f32(10)
    idx = np.array([0, 9, 3] + ([-1, -10, -4] if np.dtype(dtype).kind == "i" else [7]), dtype=dtype)
    assert pt.asarray(a)[pt.asarray(idx)].numpy().tolist() == a[idx].tolist()
    assert pt.take(pt.asarray(a), pt.asarray(idx)).numpy().tolist() == np.take(a, idx).tolist()


@pytest.mark.parametrize("dtype", [np.int32, np.uint8], ids=lambda d: d.__name__)
def test_narrow_index_dtypes_are_checked(device, dtype):
    x = pt.asarray(f32(10))
    i = pt.asarray(np.array([2, 200], dtype=dtype))
    with pytest.raises(pt.PootIndexError):
        x[i].numpy()


def test_take_out_of_range_raises(device):
    x = pt.asarray(f32(12).reshape(3, 4))
    i = pt.asarray(np.array([0, 99]))
    y = pt.take(x, i); line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()
    y = pt.take(x, pt.asarray(np.array([1, 4])), axis=1); line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()
    y = pt.take(x, pt.asarray(np.array([-4])), axis=0); line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()
    a = f32(12).reshape(3, 4)
    ok = np.array([-3, 2, 0])
    assert pt.take(x, pt.asarray(ok), axis=0).numpy().tolist() == np.take(a, ok, axis=0).tolist()


def test_take_along_axis_out_of_range_raises(device):
    a = f32(12).reshape(3, 4)
    x = pt.asarray(a)
    good = np.array([[3, 0], [-1, 2], [1, -4]])
    assert (pt.take_along_axis(x, pt.asarray(good), 1).numpy().tolist()
            == np.take_along_axis(a, good, 1).tolist())
    bad = pt.asarray(np.array([[3, 0], [4, 2], [1, 1]]))
    y = pt.take_along_axis(x, bad, 1); line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()


def test_each_index_of_several_is_checked_on_its_own_axis(device):
    """x[i, j] with j out of range while i * 4 + j is inside x: still an error, as in NumPy."""
    a = f32(12).reshape(3, 4)
    x = pt.asarray(a)
    i, j = np.array([0, 1]), np.array([5, 0])
    with pytest.raises(IndexError):
        a[i, j]
    y = x[pt.asarray(i), pt.asarray(j)]; line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()
    y = x[[0, 1], pt.asarray(np.array([1, -5]))]; line = line_of()          # noqa: E702
    with raises_at(line):
        y.numpy()
    ok = (np.array([2, -1, 0]), np.array([-1, 3, 0]))
    assert x[pt.asarray(ok[0]), pt.asarray(ok[1])].numpy().tolist() == a[ok].tolist()


def test_gather_fused_into_arithmetic_raises(device):
    x = pt.asarray(f32(10))
    i = pt.asarray(np.array([1, 2, 3]))
    y = (x[i * 4] + 1.0).sum(); line = line_of()          # noqa: E702
    with raises_at(line):
        float(y)
    assert float((x[i * 3] + 1.0).sum()) == float((f32(10)[[3, 6, 9]] + 1.0).sum())


# --- assignment -----------------------------------------------------------------------------------
def pending(values):
    """An index array still to be computed: the kernel that scatters with it checks it."""
    return pt.asarray(np.array(values)) + 0


def test_setitem_out_of_range_raises(device):
    a = f32(10)
    x = pt.asarray(a)
    x[pending([0, 12])] = 7.0; line = line_of()          # noqa: E702
    with raises_at(line):
        x.numpy()
    y = pt.asarray(a)
    y[pt.asarray(np.array([-1, -10]))] = 7.0
    e = a.copy()
    e[[-1, -10]] = 7.0
    assert y.numpy().tolist() == e.tolist()


def test_add_at_out_of_range_raises(device):
    x = pt.zeros(4)
    np.add.at(x, pending([0, 1, 4]), 1.0); line = line_of()          # noqa: E702
    with raises_at(line):
        x.numpy()


def test_setitem_2d_out_of_range_raises(device):
    x = pt.asarray(f32(12).reshape(3, 4))
    x[pending([1]), pending([4])] = 0.0; line = line_of()          # noqa: E702
    with raises_at(line):
        x.numpy()


@pytest.mark.parametrize("assign", [
    lambda x, i: x.__setitem__(i, 7.0),
    lambda x, i: x.__setitem__((i, slice(None)), 7.0),
    lambda x, i: np.add.at(x, i, 1.0),
], ids=["set", "set-rows", "add-at"])
def test_a_realized_cpu_index_is_checked_at_the_assignment(assign):
    """As in NumPy, the assignment raises and x keeps its value (a good assignment before it
    included): a failed scatter does not leave x raising at every later read."""
    x = pt.asarray(f32(12).reshape(4, 3))
    x[pt.asarray(np.array([1, 2]))] = 5.0
    want = f32(12).reshape(4, 3)
    want[[1, 2]] = 5.0
    with pytest.raises(pt.PootIndexError, match=r"index 9 is out of bounds for axis 0 with size 4 "
                                                r"\(indexing f32\[4,3\]\)"):
        assign(x, pt.asarray(np.array([0, 9])))
    np.testing.assert_array_equal(x.numpy(), want)


# --- take modes -----------------------------------------------------------------------------------
IDX = np.array([[-13, -1, 0], [4, 9, 10], [11, 25, -30]])


@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("held", ["poot", "numpy", "poot-int32"])
def test_take_clip_and_wrap_match_numpy(device, mode, held):
    a = f32(10)
    idx = IDX if held == "numpy" else pt.asarray(IDX.astype(np.int32) if held == "poot-int32" else IDX)
    assert pt.take(pt.asarray(a), idx, mode=mode).numpy().tolist() == np.take(a, IDX, mode=mode).tolist()
    b = f32(30).reshape(3, 10)
    got = pt.take(pt.asarray(b), idx, axis=1, mode=mode).numpy()
    assert got.tolist() == np.take(b, IDX, axis=1, mode=mode).tolist()
    got = pt.asarray(b).take(idx, axis=0, mode=mode).numpy()
    assert got.tolist() == np.take(b, IDX, axis=0, mode=mode).tolist()


def test_take_raise_mode_is_the_default(device):
    x = pt.asarray(f32(10))
    with pytest.raises(pt.PootIndexError):
        pt.take(x, [10], mode="raise")
    with pytest.raises(pt.PootIndexError):
        pt.take(x, pt.asarray(np.array([10])), mode="raise").numpy()


def test_take_bad_mode_is_a_clear_error(device):
    x = pt.asarray(f32(10))
    with pytest.raises(pt.PootError, match="mode must be 'raise', 'clip' or 'wrap', got 'wrapped'"):
        pt.take(x, [1], mode="wrapped")
    with pytest.raises(pt.PootError, match="mode"):
        pt.take(x, [1], mode=None)


def test_take_from_an_empty_axis(device):
    x = pt.zeros((0,))
    for mode in ("clip", "wrap"):
        with pytest.raises(pt.PootIndexError, match="empty axis"):
            pt.take(x, [0], mode=mode)
        assert pt.take(x, np.zeros(0, np.int64), mode=mode).shape == (0,)


# --- inside @pt.jit -------------------------------------------------------------------------------
def test_jitted_gather_raises_at_the_traced_line(device):
    def g(x, i):
        return x[i] * 2.0
    line = g.__code__.co_firstlineno + 1
    f = pt.jit(g)
    x = pt.asarray(f32(10))
    assert f(x, pt.asarray(np.array([-1, 2]))).numpy().tolist() == (f32(10)[[-1, 2]] * 2).tolist()
    for _ in range(2):                                   # the replayed program checks too
        with raises_at(line):
            f(x, pt.asarray(np.array([3, 10]))).numpy()
    assert f(x, pt.asarray(np.array([0, 9]))).numpy().tolist() == (f32(10)[[0, 9]] * 2).tolist()


def test_jitted_take_modes_and_scatter(device):
    @pt.jit
    def clip(x, i):
        return pt.take(x, i, mode="clip"), pt.take(x, i, mode="wrap")

    def put(x, i):
        x[i] = 0.0
        return x
    line = put.__code__.co_firstlineno + 1
    a = f32(10)
    c, w = clip(pt.asarray(a), pt.asarray(IDX))
    assert c.numpy().tolist() == np.take(a, IDX, mode="clip").tolist()
    assert w.numpy().tolist() == np.take(a, IDX, mode="wrap").tolist()
    jput = pt.jit(put)
    with raises_at(line):
        jput(pt.asarray(a), pt.asarray(np.array([1, 10]))).numpy()
    e = a.copy()
    e[[1, -1]] = 0.0
    assert jput(pt.asarray(a), pt.asarray(np.array([1, -1]))).numpy().tolist() == e.tolist()


def test_gather_in_a_fori_loop_raises(device):
    x = pt.asarray(f32(10))

    def body(k, acc):
        return acc + x[pt.reshape(k, (1,)) * 3]
    line = body.__code__.co_firstlineno + 1
    out = pt.fori_loop(0, 3, body, pt.zeros((1,)))
    assert out.numpy().tolist() == [float(f32(10)[[0, 3, 6]].sum())]
    with raises_at(line):
        pt.fori_loop(0, 5, body, pt.zeros((1,))).numpy()
