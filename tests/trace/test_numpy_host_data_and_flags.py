"""NumPy habits around host data and memory flags, checked against NumPy: constant masks for
compress/extract inside @pt.jit, NumPy's in-place writers with an ndarray destination and poot
sources, bitwise_count, `x.flags` (np.isfortran), `x.resize`, `x.tofile`, arrays from iterables,
buffers and text, and the small query helpers (asfortranarray, iterable, mask_indices, array2string)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


# --- constant conditions are known while tracing --------------------------------------------------
def test_compress_and_extract_with_a_constant_condition_trace_under_jit(device):
    m = np.arange(20.0).reshape(4, 5)

    @pt.jit
    def f(x):
        return (pt.compress([True, False, True], x, axis=1), x.compress(np.array([1, 0, 1], bool), axis=0),
                pt.extract(np.arange(20).reshape(4, 5) % 3 == 0, x))

    got = f(pt.asarray(m))
    want = (np.compress([True, False, True], m, axis=1), m.compress(np.array([1, 0, 1], bool), axis=0),
            np.extract(np.arange(20).reshape(4, 5) % 3 == 0, m))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_compress_with_a_traced_condition_still_refuses_inside_jit(device):
    with pytest.raises(pt.TracerError, match="compress"):
        pt.jit(lambda x: pt.compress(x > 0, x))(pt.asarray([1.0, -1.0]))


# --- NumPy's in-place writers into an ndarray -----------------------------------------------------
def test_numpy_writers_fill_an_ndarray_destination_from_poot_arrays(device):
    src = np.arange(6.0)
    x = pt.asarray(src)
    got, want = np.zeros(6), np.zeros(6)
    np.copyto(got, x, where=x > 2)
    np.copyto(want, src, where=src > 2)
    np.testing.assert_array_equal(got, want)
    got, want = np.zeros(6), np.zeros(6)
    np.put(got, [0, 2], pt.asarray([5.0, 6.0]))
    np.put(want, [0, 2], [5.0, 6.0])
    np.testing.assert_array_equal(got, want)
    got, want = np.zeros(6), np.zeros(6)
    np.putmask(got, src > 3, x)
    np.putmask(want, src > 3, src)
    np.testing.assert_array_equal(got, want)
    got, want = np.zeros((3, 3)), np.zeros((3, 3))
    np.fill_diagonal(got, pt.asarray(2.0))
    np.fill_diagonal(want, 2.0)
    np.testing.assert_array_equal(got, want)


def test_copyto_into_a_poot_array_still_rebinds_it(device):
    x = pt.zeros(3)
    np.copyto(x, pt.asarray([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])


# --- bitwise_count ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64])
def test_bitwise_count_matches_numpy_at_the_integer_bounds(device, dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, 5, info.max // 3, info.min + 1], dtype)
    want = np.bitwise_count(x)
    got = pt.bitwise_count(pt.asarray(x))
    assert got.dtype == pt.uint8
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(pt.jit(pt.bitwise_count)(pt.asarray(x)).numpy(), want)


def test_bitwise_count_of_bools_and_through_numpy(device):
    np.testing.assert_array_equal(pt.bitwise_count(pt.asarray([True, False])).numpy(), [1, 0])
    lazy = np.bitwise_count(pt.asarray(np.arange(9)))
    assert isinstance(lazy, pt.Array)
    np.testing.assert_array_equal(lazy.numpy(), np.bitwise_count(np.arange(9)))
    with pytest.raises(pt.DTypeError, match="bitwise_count"):
        pt.bitwise_count(pt.ones(2))


# --- flags, resize, tofile -------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3), (1, 3), (3,), (), (0, 4), (3, 1, 1)])
def test_flags_read_as_numpys_for_a_c_ordered_array(device, shape):
    x, n = pt.zeros(shape), np.zeros(shape)
    for key in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY",
                "FNC", "FORC", "BEHAVED", "CARRAY", "FARRAY", "C", "F", "W"):
        assert x.flags[key] == n.flags[key], key
    assert x.flags.c_contiguous and x.flags.f_contiguous == n.flags.f_contiguous
    assert np.isfortran(x) == np.isfortran(n)


def test_flags_cannot_be_set_or_misnamed(device):
    x = pt.ones(3)
    with pytest.raises(pt.ArgumentError, match="cannot be set"):
        x.flags.writeable = False
    with pytest.raises(pt.ArgumentError, match="unknown flag"):
        x.flags["NOPE"]


def test_resize_method_changes_the_array_in_place_with_zeros(device):
    x, n = pt.asarray(np.arange(6.0)), np.arange(6.0)
    alias = x
    for shape in ((2, 5), (3,), (2, 2)):
        x.resize(shape)
        n.resize(shape, refcheck=False)
        np.testing.assert_array_equal(x.numpy(), n)
    assert alias is x
    x.resize(4, 1)
    n.resize(4, 1, refcheck=False)
    np.testing.assert_array_equal(x.numpy(), n)
    with pytest.raises(pt.ShapeError, match="negative"):
        x.resize((-1, 2))


def test_resize_inside_jit_updates_the_callers_array(device):
    def f(a):
        a.resize((2, 2))
        return a * 2

    a = pt.arange(3.0)
    out = pt.jit(f)(a)
    np.testing.assert_array_equal(a.numpy(), [[0.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(out.numpy(), [[0.0, 2.0], [4.0, 0.0]])


def test_tofile_writes_what_fromfile_reads(device, tmp_path):
    path = tmp_path / "x.bin"
    pt.asarray(np.arange(5, dtype=np.int16)).tofile(path)
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.int16), np.arange(5))
    text = tmp_path / "x.txt"
    pt.asarray([1.5, 2.5]).tofile(text, sep=",")
    assert text.read_text() == "1.5,2.5"


# --- arrays from host data -------------------------------------------------------------------------
def test_fromiter_frombuffer_fromstring_match_numpy(device):
    got = pt.fromiter((i * i for i in range(5)), dtype=float)
    np.testing.assert_array_equal(got.numpy(), np.fromiter((i * i for i in range(5)), dtype=float))
    assert pt.fromiter(range(5), pt.int8, count=3).numpy().tolist() == [0, 1, 2]
    buf = np.arange(4, dtype=np.int16).tobytes()
    got = pt.frombuffer(buf, dtype=pt.int16, offset=2, count=2)
    assert got.dtype == pt.int16
    np.testing.assert_array_equal(got.numpy(), np.frombuffer(buf, np.int16, offset=2, count=2))
    np.testing.assert_array_equal(pt.fromstring("1, 2, 3", dtype=int, sep=",").numpy(), [1, 2, 3])


def test_frombuffer_reads_the_other_byte_order_as_numpy(device):
    raw = np.arange(5, dtype=">f4").tobytes()
    got = pt.frombuffer(raw, dtype=">f4")
    assert got.dtype == pt.float32
    np.testing.assert_array_equal(got.numpy(), np.frombuffer(raw, dtype=">f4"))
    raw = np.array([-2, 300], dtype=">i2").tobytes()
    np.testing.assert_array_equal(pt.frombuffer(raw, dtype=">i2").numpy(), [-2, 300])
    with pytest.raises(pt.DTypeError, match="unsupported dtype"):
        pt.frombuffer(raw, dtype=">U1")


def test_host_data_errors_are_poot_errors(device):
    with pytest.raises(pt.ShapeError, match="frombuffer: buffer size"):
        pt.frombuffer(b"abc", dtype=pt.int16)
    with pytest.raises(pt.ShapeError, match="fromiter"):
        pt.fromiter([1, 2], float, count=5)
    with pytest.raises(pt.DTypeError, match="unsupported dtype"):
        pt.fromiter([1], "U3")
    with pytest.raises(pt.ArgumentError, match="binary mode"):
        pt.fromstring("1 2", sep="")


# --- small query helpers ---------------------------------------------------------------------------
def test_asfortranarray_iterable_mask_indices_array2string(device):
    assert pt.asfortranarray(3.0).shape == np.asfortranarray(3.0).shape
    assert [pt.iterable(v) for v in (pt.ones(2), pt.asarray(1.0), [1], 3)] == [True, False, True, False]
    for fn in (np.triu, pt.triu):
        got = pt.mask_indices(3, fn, 1)
        for g, w in zip(got, np.mask_indices(3, np.triu, 1)):
            np.testing.assert_array_equal(g.numpy(), w)
    m = np.arange(9.0).reshape(3, 3)
    got = pt.jit(lambda x: x[pt.mask_indices(3, np.tril)])(pt.asarray(m))
    np.testing.assert_array_equal(got.numpy(), m[np.mask_indices(3, np.tril)])
    assert pt.array2string(pt.arange(3.0), precision=2) == np.array2string(np.arange(3.0), precision=2)
    assert pt.array_repr(pt.ones(2)) == np.array_repr(np.ones(2))
    with pytest.raises(pt.TracerError):
        pt.jit(lambda x: pt.array_str(x))(pt.ones(2))


# --- as_strided over the C-order values -----------------------------------------------------------
@pytest.mark.parametrize("shape, strides", [((8, 3), (8, 8)), ((3, 4), (0, 8)), ((5,), (16,)),
                                            ((4, 3), (16, 8)), ((2, 2, 2), (40, 8, 16))])
def test_as_strided_matches_numpy_eager_and_jitted(device, shape, strides):
    from numpy.lib.stride_tricks import as_strided

    x = np.arange(10.0)
    want = as_strided(x, shape, strides)
    read = lambda a: pt.lib.stride_tricks.as_strided(a, shape, strides)   # noqa: E731
    np.testing.assert_array_equal(read(pt.asarray(x)).numpy(), want)
    np.testing.assert_array_equal(pt.jit(read)(pt.asarray(x)).numpy(), want)


def test_as_strided_builds_a_hankel_matrix_of_ints_and_refuses_what_numpy_would_misread(device):
    from numpy.lib.stride_tricks import as_strided

    m = np.arange(12, dtype=np.int32)
    want = as_strided(m, (4, 9), (4, 4))
    got = pt.lib.stride_tricks.as_strided(pt.asarray(m), (4, 9), (4, 4))
    assert got.dtype == pt.int32
    np.testing.assert_array_equal(got.numpy(), want)
    assert pt.lib.stride_tricks.as_strided(pt.asarray(m), (0, 3), (4, 4)).shape == (0, 3)
    with pytest.raises(pt.ShapeError, match="multiples of the item size 4"):
        pt.lib.stride_tricks.as_strided(pt.asarray(m), (2,), (2,))
    with pytest.raises(pt.ShapeError, match="outside the 12 elements"):
        pt.lib.stride_tricks.as_strided(pt.asarray(m), (3,), (-4,))
    with pytest.raises(pt.ShapeError, match="same length"):
        pt.lib.stride_tricks.as_strided(pt.asarray(m), (2, 2), (4,))


# --- memory queries, require, common_type ---------------------------------------------------------
def test_shares_memory_of_values_is_identity(device):
    a = pt.ones(3)
    b = a + 0
    assert pt.shares_memory(a, a) and pt.may_share_memory(a, a)
    assert not pt.shares_memory(a, b) and not pt.may_share_memory(a, b)
    n = np.ones(4)
    assert pt.shares_memory(n, n[1:]) == np.shares_memory(n, n[1:])
    assert pt.may_share_memory(n, np.ones(4)) == np.may_share_memory(n, np.ones(4))


def test_isfortran_and_require_as_numpy(device):
    f = np.asfortranarray(np.ones((2, 3)))
    assert pt.isfortran(f) == np.isfortran(f) and pt.isfortran(pt.asarray(f)) is False
    got = pt.require(np.arange(3), pt.float32, ["C", "A", "W"])
    assert got.dtype == pt.float32 and got.numpy().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(pt.ArgumentError, match="unknown requirement 'Z'"):
        pt.require(pt.ones(2), None, ["Z"])


@pytest.mark.parametrize("dtypes", [("float16", "int8"), ("float32",), ("complex64", "float64"),
                                    ("float16",), ("complex64", "float32"), ("uint8", "int32")])
def test_common_type_matches_numpy(device, dtypes):
    want = np.common_type(*[np.ones(2, d) for d in dtypes])
    got = pt.common_type(*[pt.ones(2, dtype=d) for d in dtypes])
    assert got == pt.dtype(want)
    with pytest.raises(pt.DTypeError, match="non-numeric"):
        pt.common_type(pt.ones(2, dtype=bool))


# --- Python ints the destination cannot hold ------------------------------------------------------
@pytest.mark.parametrize("shape, write", [
    ((3,), lambda xp, a: xp.put(a, [0], [300])), ((3,), lambda xp, a: xp.putmask(a, a == 0, [1, 300])),
    ((3,), lambda xp, a: xp.place(a, a == 0, [300])), ((3,), lambda xp, a: xp.copyto(a, 300)),
    ((2, 2), lambda xp, a: xp.fill_diagonal(a, 300)), ((3,), lambda xp, a: xp.put(a, [1], -129))])
def test_inplace_writers_refuse_python_ints_that_would_wrap(device, shape, write):
    with pytest.raises(OverflowError):
        write(np, np.zeros(shape, np.int8))
    with pytest.raises(pt.DTypeError, match="out of bounds for int8"):
        write(pt, pt.zeros(shape, dtype=pt.int8))


def test_inplace_writers_still_cast_arrays_and_take_fitting_ints(device):
    for xp in (np, pt):
        a = xp.zeros(3, dtype=xp.uint8)
        xp.put(a, [0, 1], np.array([300, 5]))         # an array of values is cast, as in NumPy
        xp.putmask(a, a == 0, [1, 255])
        xp.place(a, a == 5, 9)
        if xp is np:
            want = a
        else:
            got = a
    np.testing.assert_array_equal(got.numpy(), want)


# --- vectorize: the decorator form and gufunc signatures -------------------------------------------
def test_vectorize_without_pyfunc_is_a_decorator(device):
    x = np.array([0.5, 1.5, -2.0])
    want = np.vectorize(otypes=[float])(lambda t: t + 1)(x)
    got = pt.vectorize(otypes=[float])(lambda t: t + 1)(pt.asarray(x))
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(pt.ArgumentError, match="must be callable"):
        pt.vectorize(5)


def test_vectorize_with_a_signature_matches_numpy(device):
    a = np.arange(12.0).reshape(2, 2, 3)
    v = np.arange(3.0)
    mv = lambda m, w: m @ w          # noqa: E731
    want = np.vectorize(mv, signature="(m,n),(n)->(m)")(a, v)
    got = pt.vectorize(mv, signature="(m,n),(n)->(m)")(pt.asarray(a), v)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(pt.vectorize(np.sum, signature="(n)->()")(pt.ones((2, 3))).numpy(), [3.0, 3.0])
    with pytest.raises(pt.ArgumentError, match="gufunc signature"):
        pt.vectorize(np.sum, signature="(n->()")(pt.ones(2))
