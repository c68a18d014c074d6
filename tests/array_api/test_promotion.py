"""The standard's type promotion inside the namespace: the lattice of its table (bool; signed and
unsigned integers; floats), weak Python scalars, in-place operators, can_cast; and NumPy callers
(np.* on poot arrays) keep NumPy's behaviour where it and the standard differ."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import poot as pt

I = ["int8", "int16", "int32", "int64"]
U = ["uint8", "uint16", "uint32", "uint64"]
F = ["float32", "float64"]


def standard_table() -> dict:
    """The standard's promotion table, written out from its text: within a kind the wider dtype;
    a signed and an unsigned integer promote to the smallest signed integer holding both (int64 with
    uint64 is left open); bool with bool is bool; mixed kinds are left open."""
    table = {("bool", "bool"): "bool"}
    bits = {n: int(n.lstrip("uintfloa")) for n in I + U + F}
    for group in (I, U, F):
        for a, b in itertools.product(group, group):
            table[a, b] = a if bits[a] >= bits[b] else b
    for i, u in itertools.product(I, U):
        need = bits[u] * 2 if bits[i] <= bits[u] else bits[i]
        if need <= 64:
            table[i, u] = table[u, i] = f"int{need}"
    return table


TABLE = standard_table()


def test_the_transcribed_table_matches_the_standard_text_samples():
    # rows quoted from the standard's "mixed unsigned and signed integer" table
    assert TABLE["int8", "uint8"] == "int16" and TABLE["int16", "uint32"] == "int64"
    assert TABLE["int64", "uint32"] == "int64" and ("int64", "uint64") not in TABLE
    assert ("int8", "uint64") not in TABLE  # any signed integer with uint64 is left open
    assert len(TABLE) == 1 + 16 + 16 + 4 + 2 * 12


@pytest.mark.parametrize("pair", sorted(TABLE), ids=lambda p: f"{p[0]}+{p[1]}")
def test_array_array_promotion_follows_the_table(pair, device):
    a, b = (getattr(pt, n) for n in pair)
    want = getattr(pt, TABLE[pair])
    assert pt.result_type(a, b) is want
    x, y = pt.ones((2, 1), dtype=a), pt.zeros((3,), dtype=b)
    if a is not pt.bool or b is not pt.bool:
        assert pt.add(x, y).dtype is want and (x * y).dtype is want
        assert pt.maximum(x, y).dtype is want and pt.where(x > 0, x, y).dtype is want
    assert pt.concat([pt.reshape(x, (2,)), y]).dtype is want
    assert pt.equal(x, y).dtype is pt.bool and pt.equal(x, y).shape == (2, 3)
    assert pt.can_cast(a, want) and pt.can_cast(b, want)


def test_zero_d_arrays_promote_like_any_array():
    x = pt.ones((3,), dtype=pt.int8)
    assert (x + pt.asarray(1, dtype=pt.int64)).dtype is pt.int64
    assert (pt.ones((3,), dtype=pt.float32) + pt.asarray(1.0)).dtype is pt.float64


@pytest.mark.parametrize("name", I + U + F)
def test_python_scalars_are_weak(name):
    d = getattr(pt, name)
    x = pt.ones((2,), dtype=d)
    assert (x + 1).dtype is d and (1 + x).dtype is d and (x * True).dtype is d
    assert (x == 1).dtype is pt.bool
    if d.kind == "f":
        assert (x + 1.5).dtype is d and (x ** 2.0).dtype is d
        assert (x / 2).dtype is d
    b = pt.asarray([True, False])
    assert (b & True).dtype is pt.bool and (b == False).dtype is pt.bool  # noqa: E712


def test_python_int_out_of_range_for_the_array_is_an_error():
    with pytest.raises(pt.DTypeError, match="out of bounds for int8"):
        pt.ones((2,), dtype=pt.int8) + 300


def test_in_place_operators_keep_dtype_and_shape():
    x = pt.ones((3,), dtype=pt.float32)
    x += pt.ones((3,), dtype=pt.float64)
    assert x.dtype is pt.float32
    y = pt.ones((2, 3), dtype=pt.int16)
    y *= pt.asarray([1, 2, 3], dtype=pt.int16)  # the right operand broadcasts into the left
    np.testing.assert_array_equal(y.numpy(), [[1, 2, 3], [1, 2, 3]])


def test_in_place_operator_cannot_broadcast_the_left_operand():
    """Regression: x += y used to rebind x to the broadcast shape; NumPy and the standard refuse."""
    x = pt.ones((3,))
    with pytest.raises(pt.ShapeError, match=r"x \+= y: the result has shape \(2, 3\), x has \(3,\)"):
        x += pt.ones((2, 3))
    assert x.shape == (3,)


def test_can_cast():
    assert pt.can_cast(pt.int8, pt.int16) and not pt.can_cast(pt.int16, pt.int8)
    assert pt.can_cast(pt.uint8, pt.int16) and not pt.can_cast(pt.uint8, pt.int8)
    assert pt.can_cast(pt.bool, pt.int8) and not pt.can_cast(pt.float32, pt.int64)
    assert pt.can_cast(pt.ones(2, dtype=pt.float32), pt.float64)
    assert not pt.can_cast(pt.float64, pt.float32)
    with pytest.raises(pt.DTypeError, match="expected a poot dtype or array"):
        pt.can_cast("complex256", pt.float64)


def test_isdtype():
    assert pt.isdtype(pt.int8, "signed integer") and not pt.isdtype(pt.uint8, "signed integer")
    assert pt.isdtype(pt.uint64, "integral") and pt.isdtype(pt.float32, "real floating")
    assert pt.isdtype(pt.float64, "numeric") and not pt.isdtype(pt.bool, "numeric")
    assert pt.isdtype(pt.bool, ("bool", "real floating")) and pt.isdtype(pt.int8, (pt.int16, pt.int8))
    assert not pt.isdtype(pt.float32, "complex floating") and pt.isdtype(pt.bfloat16, "real floating")
    with pytest.raises(pt.DTypeError, match="unknown data type kind 'integer'"):
        pt.isdtype(pt.int8, "integer")


def test_finfo_and_iinfo_objects():
    f = pt.finfo(pt.float32)
    assert (f.bits, f.dtype, f.eps, f.smallest_normal) == (32, pt.float32, 2.0 ** -23, 2.0 ** -126)
    assert f.max == -f.min == float(np.finfo(np.float32).max) and isinstance(f.max, float)
    assert pt.finfo(pt.ones(2)).dtype is pt.float64 and pt.finfo(pt.bfloat16).bits == 16
    i = pt.iinfo(pt.uint8)
    assert (i.bits, i.min, i.max, i.dtype) == (8, 0, 255, pt.uint8)
    assert pt.iinfo(pt.ones(2, dtype=pt.int16)).max == 32767
    with pytest.raises(pt.DTypeError, match="finfo\\(\\) needs a floating dtype"):
        pt.finfo(pt.int8)


# --- where NumPy and the standard differ: the namespace follows the standard, np.* stays NumPy ---
def test_unique_nan_distinct_in_namespace_collapsed_by_numpy():
    x = pt.asarray([1.0, np.nan, np.nan, 1.0])
    assert pt.unique_values(x).shape == (3,)  # the standard: NaN != NaN, each is unique
    assert np.unique(x).shape == (2,)  # NumPy 2 collapses NaNs, and np.unique keeps doing so


def test_linalg_diagonal_and_trace_use_the_last_axes_numpy_the_first():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = pt.asarray(a)
    np.testing.assert_array_equal(pt.linalg.diagonal(x).numpy(), np.diagonal(a, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(np.asarray(np.diagonal(x)), np.diagonal(a))  # NumPy's default axes
    np.testing.assert_array_equal(pt.linalg.trace(x).numpy(), np.trace(a, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(np.asarray(np.trace(x)), np.trace(a))


def test_outer_takes_vectors_in_linalg_numpy_flattens():
    m = pt.ones((2, 2))
    with pytest.raises(pt.ShapeError, match="both operands must be one-dimensional"):
        pt.linalg.outer(m, m)
    assert np.outer(m, m).shape == (4, 4)


def test_copy_false_refuses_a_copy_in_namespace_numpy_asarray_still_converts():
    with pytest.raises(pt.CopyError, match="copy=False"):
        pt.asarray(np.ones(3), copy=False)
    with pytest.raises(ValueError):
        pt.asarray([1, 2], copy=False)
    x = pt.ones(3)
    assert pt.asarray(x, copy=False) is x
    assert np.asarray(x).shape == (3,)


def test_clip_keeps_x_dtype_in_namespace_numpy_promotes_with_the_bounds():
    x = pt.asarray(np.array([0.25, 2.0], np.float32))
    lo = pt.zeros(2)  # float64
    r = pt.clip(x, lo, 1.0)
    assert r.dtype is pt.float32  # the standard: "the same data type as x"
    np.testing.assert_array_equal(r.numpy(), [0.25, 1.0])
    n = np.clip(x, lo, 1.0)
    assert isinstance(n, pt.Array) and n.dtype is pt.float64  # NumPy's rule, kept for np.* callers
    assert np.clip(np.ones(2, np.float32), np.zeros(2), 1.0).dtype == np.float64
    assert np.clip(x, a_min=0.5, a_max=None).dtype is pt.float32
