"""NumPy drop-in gaps, each checked against NumPy (values, dtype, shape), eagerly and inside @pt.jit:
order='F' reshapes, order= of the creation functions (memory order is not modelled), meshgrid's
sparse grids, take_along_axis(axis=None), a bool array squared (`b ** 2` is NumPy's square: int8), the
per-step rounding of float16/bfloat16 cumsum and cumprod, and einsum's sublist form."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import poot as pt


def _same(got, want):
    """Equal values (bit for bit for floats), dtype and shape."""
    got = got.numpy() if isinstance(got, pt.Array) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind == "f":
        assert np.array_equal(got.view(f"u{want.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}"))
    else:
        assert np.array_equal(got, want)


def _both(fn, *args):
    """fn(*args) eagerly and through @pt.jit."""
    return fn(*args), pt.jit(fn)(*args)


# --- 1. order= of reshape, ravel and flatten ---------------------------------------------------------
SHAPES = [((), (1,)), ((6,), (2, 3)), ((2, 3), (3, 2)), ((2, 3, 4), (4, -1)), ((2, 3, 4), (2, 2, 3, 2)),
          ((1, 2, 3, 2), (3, 4)), ((4, 6), (2, 3, 2, 2)), ((0, 3), (3, 0))]


@pytest.mark.parametrize("order", ["F", "f", "C", "A", "a"])
@pytest.mark.parametrize("shape,new", SHAPES)
def test_reshape_in_every_order_matches_numpy(order, shape, new):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    want = np.reshape(a, new, order=order)
    x = pt.asarray(a)
    for got in _both(lambda v: pt.reshape(v, new, order=order), x):
        _same(got, want)
    for got in _both(lambda v: v.reshape(new, order=order), x):
        _same(got, want)
    _same(x.reshape(*new, order=order) if new else x.reshape(new, order=order), a.reshape(new, order=order))


@pytest.mark.parametrize("order", ["F", "C", "A", "K", "k", None])
@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (2, 3, 4), (2, 1, 3, 2)])
def test_ravel_and_flatten_in_every_order_match_numpy(order, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = pt.asarray(a)
    for got in _both(lambda v: pt.ravel(v, order=order), x):
        _same(got, np.ravel(a, order=order))
    for got in _both(lambda v: v.ravel(order), x):
        _same(got, a.ravel(order))
    for got in _both(lambda v: v.flatten(order=order), x):
        _same(got, a.flatten(order=order))


def test_fortran_reshape_of_a_computed_array_and_on_vulkan():
    a = np.arange(24.0).reshape(2, 3, 4)
    want = (np.transpose(a, (2, 0, 1)) * 2).reshape((6, 4), order="F")
    f = pt.jit(lambda v: (pt.permute_dims(v, (2, 0, 1)) * 2).reshape((6, 4), order="F"))
    _same(f(pt.asarray(a)), want)
    try:
        ctx = pt.device("vulkan")
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"no vulkan device: {e}")
    with ctx:
        x = pt.asarray(a.astype(np.float32))
        _same(x.reshape((4, 6), order="F"), a.astype(np.float32).reshape((4, 6), order="F"))
        _same(pt.ravel(x, order="F"), np.ravel(a.astype(np.float32), order="F"))


def test_bad_orders_raise_poot_errors_naming_the_value():
    x = pt.arange(6)
    with pytest.raises(pt.ShapeError, match="'X'"):
        pt.reshape(x, (2, 3), order="X")
    with pytest.raises(pt.ShapeError, match="'FF'"):
        x.reshape((2, 3), order="FF")
    with pytest.raises(pt.ShapeError, match="'K'"):     # NumPy: "order 'K' is not permitted for reshaping"
        pt.reshape(x, (2, 3), order="K")
    with pytest.raises(pt.ShapeError, match="'Q'"):
        x.flatten("Q")
    with pytest.raises(pt.ArgumentError, match="int"):
        pt.ravel(x, order=1)
    for bad in ("X", ""):
        with pytest.raises(ValueError):
            np.reshape(np.arange(6), (2, 3), order=bad)


# --- 2. order= of the creation functions ---------------------------------------------------------------
CREATION = [
    ("asarray", lambda m, o: m.asarray([[1, 2], [3, 4]], order=o)),
    ("array", lambda m, o: m.array([[1.5, 2], [3, 4]], order=o)),
    ("copy", lambda m, o: m.copy(m.asarray([[1, 2, 3], [4, 5, 6]]), order=o)),
    ("zeros", lambda m, o: m.zeros((2, 3), order=o)),
    ("ones", lambda m, o: m.ones((2, 3), np.int16, order=o)),
    ("empty", lambda m, o: m.zeros_like(m.empty((2, 3), order=o))),     # empty's values are unspecified
    ("full", lambda m, o: m.full((3, 2), 7.5, order=o)),
    ("zeros_like", lambda m, o: m.zeros_like(m.asarray([[1, 2, 3]]), order=o)),
    ("ones_like", lambda m, o: m.ones_like(m.asarray([[1.0], [2.0]]), order=o)),
    ("empty_like", lambda m, o: m.zeros_like(m.empty_like(m.asarray([[1, 2]]), order=o))),
    ("full_like", lambda m, o: m.full_like(m.asarray([[1, 2], [3, 4]]), 9, order=o)),
]


@pytest.mark.parametrize("order", ["F", "f", "C", None])
@pytest.mark.parametrize("name,make", CREATION, ids=[c[0] for c in CREATION])
def test_creation_accepts_fortran_order_with_numpy_values(name, make, order):
    want = make(np, order)
    _same(make(pt, order), want)
    _same(pt.jit(lambda: make(pt, order))(), want)


@pytest.mark.parametrize("name,make", CREATION, ids=[c[0] for c in CREATION])
def test_creation_still_refuses_invalid_orders(name, make):
    with pytest.raises(pt.ShapeError, match="'X'"):
        make(pt, "X")
    with pytest.raises(pt.ArgumentError):
        make(pt, 3)


# --- 3. meshgrid(sparse=, copy=) --------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_meshgrid_sparse_and_dense_match_numpy(indexing, sparse, n):
    xs = [np.arange(k + 2, dtype=np.float64) * (k + 1) for k in range(n)]
    want = np.meshgrid(*xs, sparse=sparse, indexing=indexing, copy=False)
    f = pt.jit(lambda *v: tuple(pt.meshgrid(*v, sparse=sparse, indexing=indexing)))
    for got in (pt.meshgrid(*[pt.asarray(x) for x in xs], sparse=sparse, indexing=indexing, copy=True),
                f(*[pt.asarray(x) for x in xs])):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)


# --- 4. take_along_axis(axis=None) ------------------------------------------------------------------------
def test_take_along_axis_none_gathers_from_the_flat_array():
    a = np.arange(12.0).reshape(3, 4) * 1.5
    idx = np.array([11, 0, 5, 5])
    want = np.take_along_axis(a, idx, axis=None)
    for got in _both(lambda v, i: pt.take_along_axis(v, i, axis=None), pt.asarray(a), pt.asarray(idx)):
        _same(got, want)
    _same(pt.take_along_axis(pt.asarray(a), idx, None), want)
    j = np.array([[3, 0, 1, 2]])
    _same(pt.take_along_axis(pt.asarray(a), j), np.take_along_axis(a, j))      # NumPy 2's default axis=-1
    with pytest.raises(pt.ShapeError, match="single dimension"):
        pt.take_along_axis(pt.asarray(a), j, axis=None)


# --- 5. bool arrays with Python ints ----------------------------------------------------------------------
BOOL_EXPRS = ["b ** 2", "b ** 3", "b ** 1", "b ** 0", "b ** 2.0", "b ** 0.5", "b ** True", "2 ** b",
              "b + 1", "b * 3", "b - 1", "1 - b", "b // 2", "b % 2", "b << 1", "b & 1", "b + b", "b * b",
              "b // b", "b % b", "b ** b", "b / 2", "b + 1.5"]


@pytest.mark.parametrize("expr", BOOL_EXPRS)
@pytest.mark.parametrize("shape", [(4,), ()])
def test_bool_array_arithmetic_dtypes_match_numpy(expr, shape):
    """NumPy 2 gives int8 only where a bool loop is missing for bool operands (`b // b`) and for `b ** 2`
    (ndarray.__pow__ computes it as square(b)); a Python int otherwise makes it int64."""
    bn = np.array([True, False, True, False]) if shape else np.array(True)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.asarray(eval(expr, {"b": bn}))
    got = eval(expr, {"b": pt.asarray(bn)})
    traced = pt.jit(lambda b: eval(expr, {"b": b}))(pt.asarray(bn))
    for g in (got, traced):
        assert g.dtype == want.dtype and g.shape == want.shape, (expr, g.dtype, want.dtype)
        if "// b" not in expr and "% b" not in expr:     # x // 0 and x % 0: values NumPy leaves to warnings
            np.testing.assert_array_equal(g.numpy(), want)


def test_bool_square_on_the_host_and_bool_minus_bool_raises():
    b = pt.asarray([True, False])[0]            # a realized 0-d host value: the fast paths' input
    assert (b ** 2).dtype is pt.int8 and int(b ** 2) == 1
    assert pt.power(pt.asarray([True]), 2).dtype is pt.int64 == np.power(np.array([True]), 2).dtype
    with pytest.raises(pt.PootError):
        pt.asarray([True]) - pt.asarray([False])
    with pytest.raises(pt.PootError):
        pt.jit(lambda v: v - v)(pt.asarray([True]))


# --- 6. float16/bfloat16 scans round every step -------------------------------------------------------------
HALVES = [np.float16, ml_dtypes.bfloat16]


@pytest.mark.parametrize("dtype", HALVES, ids=["float16", "bfloat16"])
def test_half_cumsum_of_ones_stalls_as_numpy(dtype):
    x = np.ones(4000, dtype)
    want = np.cumsum(x)
    assert float(want[-1]) == (2048.0 if dtype is np.float16 else 256.0)
    for got in _both(pt.cumsum, pt.asarray(x)):
        _same(got, want)
    _same(pt.cumsum(pt.ones(4000, dtype=pt.float32), dtype=dtype),
          np.cumsum(np.ones(4000, np.float32), dtype=dtype))
    _same(pt.cumsum(pt.asarray(x), dtype=pt.float32), np.cumsum(x, dtype=np.float32))    # a wide accumulator


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", HALVES, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_half_scans_match_numpy_bit_for_bit(op, dtype, axis):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 500)) * (3 if op == "cumsum" else 0.05) + (0 if op == "cumsum" else 1)
    x = x.astype(dtype)
    want = getattr(np, op)(x, axis=axis)
    for got in _both(lambda v: getattr(pt, op)(v * 1, axis=axis), pt.asarray(x)):
        _same(got, want)
    _same(getattr(pt.asarray(x), op)(axis=axis), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_])
def test_wide_and_integer_scans_keep_numpys_results(dtype):
    x = (np.arange(1, 301) % 7).astype(dtype)
    for op in ("cumsum", "cumprod"):
        want = getattr(np, op)(x[:40] if op == "cumprod" else x)
        got = getattr(pt, op)(pt.asarray(x[:40] if op == "cumprod" else x))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


# --- 7. einsum's sublist form --------------------------------------------------------------------------------
def test_einsum_sublists_match_numpy():
    rng = np.random.default_rng(6)
    a, b, c, d = (rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 3, 5), (5, 3)))
    cases = [(a, [0, 1], b, [1, 2], [0, 2]), (a, [Ellipsis, 0], [Ellipsis]), (a, [1, 0]), (a, [27, 0]),
             (a, [0, 1], b, [1, 2]), (c, [Ellipsis, 1], [1, Ellipsis]), (a, [0, 1], a, [0, 1], []),
             (c, [0, 51, 1], d, [1, 51], [0])]
    for args in cases:
        want = np.einsum(*args)
        arrays = [pt.asarray(v) if isinstance(v, np.ndarray) else v for v in args]
        np.testing.assert_allclose(pt.einsum(*arrays).numpy(), want, rtol=1e-12, atol=1e-12)
        where = [i for i, v in enumerate(args) if isinstance(v, np.ndarray)]

        def f(*ops, args=args, where=where):
            full = list(args)
            for i, o in zip(where, ops):
                full[i] = o
            return pt.einsum(*full)

        got = pt.jit(f)(*[arrays[i] for i in where])
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_einsum_sublist_errors():
    a = pt.ones((2, 3))
    with pytest.raises(pt.ShapeError, match=r"52 is not within the valid range \[0, 52\)"):
        pt.einsum(a, [0, 52])
    with pytest.raises(pt.ShapeError, match="-1"):
        pt.einsum(a, [0, -1])
    with pytest.raises(pt.ArgumentError, match="integer or an ellipsis"):
        pt.einsum(a, [0, "a"])
    with pytest.raises(pt.ArgumentError):
        pt.einsum(a)
