"""Dask reductions over poot chunks (sum, mean, var, std, max, argmax...) with uneven chunks, over
every axis and over all of them, against NumPy; each result stays a poot array."""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'poot[dask]')")
import dask  # noqa: E402

import poot as pt  # noqa: E402
import poot.dask  # noqa: E402,F401  (registers poot arrays as Dask chunks)
from tolerance import assert_close  # noqa: E402

MAIN = ("sum", "mean", "var", "std", "max", "argmax")
MORE = MAIN + ("min", "argmin", "nanmean", "nanvar")
# (shape, chunks, dtype, functions, axes): every axis ends in a short chunk; the wider cases check
# fewer functions and axes so that the suite compiles few programs
CASES = [((23, 17), (7, 5), np.float32, MAIN, (None, 0, 1)),
         ((29,), (8,), np.float32, MORE, (None, 0)),
         ((29,), (8,), np.float64, MORE, (None, 0)),
         ((23, 17), (7, 5), np.int32, ("sum", "var", "argmax"), (None, 0, 1)),
         ((9, 10, 11), (4, 3, 5), np.float32, ("var", "argmax"), (None, 1))]


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def _data(shape, dtype):
    """Distinct values: Dask's chunked argmax picks the first maximum in chunk order, not NumPy's
    flat order, so a tie would make the two disagree."""
    rng = np.random.default_rng(len(shape))
    values = rng.permutation(int(np.prod(shape))).reshape(shape) - int(np.prod(shape)) // 3
    if np.dtype(dtype).kind == "f":
        return (values * 0.37 + 1).astype(dtype)
    return values.astype(dtype)


@pytest.mark.parametrize("shape,chunks,dtype,functions,axes", CASES,
                         ids=[f"{'x'.join(map(str, c[0]))}-{np.dtype(c[2]).name}" for c in CASES])
def test_reductions_match_numpy(shape, chunks, dtype, functions, axes):
    a = _data(shape, dtype)
    x = da.from_array(pt.asarray(a), chunks=chunks)
    for name in functions:
        for axis in axes:
            expected = np.asarray(getattr(np, name)(a, axis=axis))
            got = getattr(da, name)(x, axis=axis).compute()
            assert isinstance(got, pt.Array), (name, axis, type(got))
            got = got.numpy()
            assert got.dtype == expected.dtype, (name, axis, got.dtype, expected.dtype)
            ops = 4 * a.size if name in ("var", "std", "nanvar") else a.size
            assert_close(got, expected, expected.dtype, ops=ops, err_msg=f"{name} axis={axis}")


def test_var_with_ddof_and_a_one_element_chunk():
    a = _data((13, 6), np.float32)
    x = da.from_array(pt.asarray(a), chunks=((6, 6, 1), (4, 2)))      # the last row is a chunk alone
    for axis in (None, 0, 1):
        for ddof in (0, 1):
            assert_close(x.var(axis=axis, ddof=ddof).compute().numpy(), a.var(axis=axis, ddof=ddof),
                         np.float32, ops=4 * a.size)
            assert_close(x.std(axis=axis, ddof=ddof).compute().numpy(), a.std(axis=axis, ddof=ddof),
                         np.float32, ops=4 * a.size)
