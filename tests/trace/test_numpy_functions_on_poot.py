"""NumPy's functions called on poot arrays (__array_function__) run poot's own, lazily, and return poot
arrays equal to NumPy's results; before, these fell back to NumPy on a host copy and returned
ndarrays (a Dask graph of poot chunks then mixed the two). Also NumPy integers as offsets."""
import numpy as np
import pytest

import poot as pt

A = np.random.default_rng(0).random((6, 6)).astype(np.float32)
V = A[0]
CASES = {
    "angle": (A,), "append": (A, A), "argpartition": (V, 2), "argsort": (A,), "average": (A,),
    "block": ([[A, A]],), "compress": ([True, False, True], A, 0), "cross": (A[:, :3], A[:, 3:]),
    "cumulative_sum": (V,), "diag": (A,), "diag_indices_from": (A,), "diagflat": (V,),
    "digitize": (V, np.array([0.2, 0.5])), "dsplit": (A.reshape(2, 3, 6), 2), "ediff1d": (V,),
    "extract": (A > 0.5, A), "fix": (A * 5,), "flatnonzero": (A > 0.5,), "fliplr": (A,), "flipud": (A,),
    "histogram_bin_edges": (V, 4), "hsplit": (A, 2), "imag": (A,), "intersect1d": (V, V), "iscomplex": (A,),
    "isneginf": (A,), "isposinf": (A,), "isreal": (A,), "kron": (A[:2, :2], A[:2, :2]), "lexsort": ((V, V),),
    "nan_to_num": (A,), "packbits": (A > 0.5,), "partition": (V, 2), "polymul": (V[:3], V[:2]), "ptp": (A,),
    "real": (A,), "rot90": (A,), "searchsorted": (np.sort(V), V), "select": ([A > 0.5], [A]),
    "setdiff1d": (V, V[:2]), "setxor1d": (V, V[:2]), "sinc": (A,), "sort": (A,), "trapezoid": (A,),
    "tril_indices_from": (A,), "triu_indices_from": (A,), "union1d": (V, V), "unique_counts": (V,),
    "unique_inverse": (V,), "unique_values": (V,), "unpackbits": (np.packbits(A > 0.5),), "unstack": (A,),
    "vander": (V[:3],), "vsplit": (A, 2),
}


def _poot(q, first: bool):
    """The arguments as a user passes them with poot arrays: the first array argument (and arrays
    inside a list or tuple) as poot arrays, the rest as given."""
    if isinstance(q, np.ndarray):
        return pt.asarray(q) if first else q
    if isinstance(q, list) and q and isinstance(q[0], list):
        return [[pt.asarray(e) for e in row] for row in q]
    if isinstance(q, (list, tuple)) and q and isinstance(q[0], np.ndarray):
        return type(q)(pt.asarray(e) for e in q)
    return q


def _leaves(r):
    if isinstance(r, (tuple, list)):
        return [y for e in r for y in _leaves(e)]
    return [r]


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_function_runs_poots_own(name):
    args = CASES[name]
    want = getattr(np, name)(*args)
    first = next(i for i, q in enumerate(args) if isinstance(q, (np.ndarray, list, tuple)) and len(q)
                 and not (isinstance(q, list) and isinstance(q[0], bool)))
    got = getattr(np, name)(*[_poot(q, i == first) for i, q in enumerate(args)])
    gl, wl = _leaves(got), _leaves(want)
    assert len(gl) == len(wl)
    assert any(isinstance(g, pt.Array) for g in gl)
    for g, w in zip(gl, wl):
        g = g.numpy() if isinstance(g, pt.Array) else np.asarray(g)
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_numpy_integer_offsets_and_stack_dtype():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    x = pt.asarray(a)
    for off in (np.int64(1), np.int32(-2), np.uint8(0)):
        np.testing.assert_array_equal(x.diagonal(offset=off).numpy(), a.diagonal(offset=off))
        np.testing.assert_array_equal(np.trace(x, offset=off).numpy(), np.trace(a, offset=off))
        np.testing.assert_array_equal(np.diag(x, off).numpy(), np.diag(a, off))
    with pytest.raises(pt.ArgumentError, match="offset"):
        x.diagonal(1.5)
    got = np.vstack([x, x], dtype=np.int32, casting="unsafe")
    assert isinstance(got, pt.Array) and got.dtype == pt.int32
    np.testing.assert_array_equal(got.numpy(), np.vstack([a, a], dtype=np.int32, casting="unsafe"))
    for join in (pt.vstack, pt.concatenate, pt.stack):
        with pytest.raises(pt.DTypeError, match="casting"):     # NumPy: a TypeError under same_kind
            join([x, x], dtype=np.int32)
    np.testing.assert_array_equal(pt.hstack([x, x], dtype="float64").numpy(), np.hstack([a, a]).astype(np.float64))
