"""Host ops: primitives computed with NumPy on the host as one step of a program (sort, argsort,
searchsorted, unique and nonzero with a fixed `size`, and the linear-algebra factorizations).

Each is an op-table entry of kind "host" with a shape/dtype rule and a NumPy rule (the oracle), like
any primitive, so it is recorded lazily, works inside `@poot.jit` and is planned as an opaque step:
the program's host step reads the input buffers (in place on the CPU device, a device-to-host copy
elsewhere), runs the NumPy rule and writes the result buffers.

An op with several results (eigh's values and vectors, svd's U, S, Vh...) is one equation per result
that differ only in the `index` parameter (the convention of poot.graph.control); the planner runs the
equations of one op on the same operands as one step, which computes them all once. `HOST[name]`
holds each op's `results(avals, **params)` (every result's Aval) and `compute(xs, **params)` (every
result as a NumPy array); `index` is absent from both. `HOST` is a read-only view of the op registry:
each host op's `OpDef.host` is its HostOp.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, PootError, ShapeError
from poot.graph import host_sort
from poot.graph.aval import Aval
from poot.graph.ops import _check_kinds, _register
from poot.graph.registry import SlotView


class LinAlgError(PootError, np.linalg.LinAlgError):
    """A matrix has no answer for this function (singular for inv/solve, not positive definite for
    cholesky...). Also a NumPy LinAlgError, so code that catches NumPy's keeps working."""


class LinAlgShapeError(ShapeError, LinAlgError):
    """A linalg function given an array of the wrong shape (not a matrix, not square): a ShapeError,
    and a LinAlgError as NumPy raises there."""


@dataclass(frozen=True)
class HostOp:
    name: str
    results: Callable[..., list]      # (avals, **params) -> [Aval] per result
    compute: Callable[..., list]      # (arrays, **params) -> [np.ndarray] per result
    # optional (arrays, outs, **params) -> None: the results written into `outs` (C-contiguous
    # arrays of the results' avals, None for a result not needed, never overlapping an input), for
    # a program whose buffers are host memory: no result array to allocate, fill and copy over
    into: Callable[..., None] | None = None
    # the op sorts: `compute` and `into` also take `sort_1d=` (a host_sort.SortInto), through which
    # a program's host step gives them the host's parallel sort
    sorts: bool = False


# name -> HostOp of every host op (a live view of the registry)
HOST = SlotView("host")


def host_group(params: dict) -> tuple:
    """The parameters that say which equations are results of one op (all but `index`)."""
    return tuple(sorted((k, repr(v)) for k, v in params.items() if k != "index"))


def _host(name: str, results, compute, into=None, *, arity: int | None = 1, params: tuple[str, ...] = (),
          sorts: bool = False) -> None:
    """Declare a host op; every one also takes `index`, which of its results an equation is."""

    def rule(avals, index=0, **params):
        outs = results(avals, **params)
        if not 0 <= index < len(outs):
            raise ShapeError(f"{name}: result {index} of {len(outs)}")
        return outs[index]

    def oracle(xs, index=0, **params):
        return compute(list(xs), **params)[index]

    op = _register(name, "host", rule, oracle, arity=arity, params=tuple(params) + ("index",))
    op.host = HostOp(name, results, compute, into, sorts)


def _exact16(a: np.ndarray) -> np.ndarray:
    """16-bit floats widened to float32 (exact; NumPy's sorts and searches take it everywhere)."""
    return a.astype(np.float32) if a.dtype in (np.float16, dt.bfloat16.np) else a


# --- sorting and searching -----------------------------------------------------------------------
def _sort_results(avals, axis, descending, out=None):
    (a,) = avals
    _check_kinds("sort", a.dtype, "biuf")
    if not 0 <= axis < a.ndim:
        raise ShapeError(f"sort: axis {axis} out of range for {a.ndim}-d input")
    return [Aval(a.shape, out or a.dtype)]


def _sort(xs, axis, descending, sort_1d=host_sort.numpy_sort_into):
    """Stable (host_sort.py: a fast unstable sort with the distinguishable ties put back); descending
    is the ascending order reversed."""
    x = xs[0]
    return [host_sort.sort(_exact16(x), axis, descending, sort_1d).astype(x.dtype, copy=False)]


def _argsort(xs, axis, descending, sort_1d=host_sort.numpy_sort_into):
    """Stable, also descending (ties keep their order there too; NaNs first)."""
    return [host_sort.argsort(_exact16(xs[0]), axis, descending, sort_1d)]


def _sort_into(xs, outs, axis, descending, sort_1d=host_sort.numpy_sort_into):
    if outs[0] is not None:
        host_sort.sort_into(_exact16(xs[0]), outs[0], axis, descending, sort_1d)


def _argsort_into(xs, outs, axis, descending, sort_1d=host_sort.numpy_sort_into):
    if outs[0] is not None:
        host_sort.argsort_into(_exact16(xs[0]), outs[0], axis, descending, sort_1d)


# On GPU devices a program runs sort and argsort as kernels instead of these rules (a bitonic network,
# poot/jit/codegen/gpu_sort.py); they give the same results bit for bit, which tests/devices/test_gpu_sort.py checks.
_host("sort", _sort_results, _sort, _sort_into, params=("axis", "descending"), sorts=True)
_host("argsort", lambda avals, axis, descending: _sort_results(avals, axis, descending, dt.int64),
      _argsort, _argsort_into, params=("axis", "descending"), sorts=True)


def _searchsorted_results(avals, side):
    a, v = avals
    if a.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be one-dimensional, got {a}")
    if a.dtype is not v.dtype:
        raise DTypeError(f"searchsorted: operands must share a dtype, got {a.dtype.name} and {v.dtype.name}")
    return [Aval(v.shape, dt.int64)]


_host("searchsorted", _searchsorted_results,
      lambda xs, side: [np.searchsorted(_exact16(xs[0]), _exact16(xs[1]), side=side).astype(np.int64)],
      arity=2, params=("side",))


# --- fixed-size forms of the data-dependent ops ------------------------------------------------------
def _unique_results(avals, size, fill_value):
    (a,) = avals
    _check_kinds("unique", a.dtype, "biuf")
    return [Aval((size,), a.dtype), Aval((size,), dt.int64), Aval(a.shape, dt.int64),
            Aval((size,), dt.int64)]


def _pad(a: np.ndarray, size: int, fill) -> np.ndarray:
    """`a` truncated or padded with `fill` to `size` elements (JAX's `size=` semantics)."""
    out = np.full(size, fill, dtype=a.dtype)
    n = min(size, a.size)
    out[:n] = a[:n]
    return out


def _unique(xs, size, fill_value, sort_1d=host_sort.numpy_sort_into):
    """The sorted unique values (each NaN its own value), first indices, inverse and counts, padded
    to `size`: values with fill_value (None: the smallest value), indices and counts with 0."""
    x = xs[0]
    values, index, inverse, counts = host_sort.unique(_exact16(x).reshape(-1), index=True, inverse=True,
                                                      counts=True, equal_nan=False, sort_1d=sort_1d)
    values = values.astype(x.dtype, copy=False)
    fill = values[0] if fill_value is None and values.size else (0 if fill_value is None else fill_value)
    with np.errstate(all="ignore"):
        v = _pad(values, size, np.asarray(fill).astype(x.dtype))
    return [v, _pad(index.astype(np.int64), size, 0), inverse.reshape(x.shape).astype(np.int64),
            _pad(counts.astype(np.int64), size, 0)]


_host("unique", _unique_results, _unique, params=("size", "fill_value"), sorts=True)


def _nonzero_results(avals, size, fill_value):
    (a,) = avals
    if a.ndim == 0:
        raise ShapeError(f"nonzero: a 0-d array has no axes to index ({a})")
    return [Aval((size,), dt.int64)] * a.ndim


def _nonzero(xs, size, fill_value):
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * xs[0].ndim
    return [_pad(p.astype(np.int64), size, f) for p, f in zip(np.nonzero(xs[0]), fills)]


_host("nonzero", _nonzero_results, _nonzero, params=("size", "fill_value"))


# --- linear algebra ------------------------------------------------------------------------------
# Operands are floating (the tracer converts integers and bools); 16-bit floats compute in float32.
def _matrix(name: str, a: Aval, square: bool = False) -> tuple:
    _check_kinds(f"linalg.{name}", a.dtype, "f")
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        raise ShapeError(f"linalg.{name}: needs {'square ' if square else ''}matrices, got {a}")
    return a.shape[:-2], a.shape[-2], a.shape[-1]


def _linalg(name: str, results, fn, *, arity: int = 1, params: tuple[str, ...] = ()) -> None:
    def compute(xs, **params):
        out_dtype = xs[0].dtype
        work = [x.astype(np.float32) if x.dtype.itemsize < 4 else x for x in xs]
        try:
            with np.errstate(all="ignore"):
                r = fn(*work, **params)
        except np.linalg.LinAlgError as e:
            raise LinAlgError(f"linalg.{name}: {e}") from None
        r = r if isinstance(r, tuple) else (r,)
        return [np.asarray(v).astype(out_dtype, copy=False) for v in r]

    _host(name, results, compute, arity=arity, params=params)


def _square_same(name):
    def results(avals, **params):
        _matrix(name, avals[0], square=True)
        return [avals[0]]
    return results


def _eigen_results(name: str, vectors: bool):
    """The results rule of eigenvalue op `name`: the values (b..., n), and the vectors (b..., n, n)."""
    def results(avals):
        b, n, _ = _matrix(name, avals[0], square=True)
        values = Aval(b + (n,), avals[0].dtype)
        return [values, avals[0]] if vectors else [values]
    return results


def _svd_results(avals, full_matrices):
    b, m, n = _matrix("svd", avals[0])
    k, d = min(m, n), avals[0].dtype
    return [Aval(b + (m, m if full_matrices else k), d), Aval(b + (k,), d),
            Aval(b + (n if full_matrices else k, n), d)]


def _svdvals_results(avals):
    b, m, n = _matrix("svdvals", avals[0])
    return [Aval(b + (min(m, n),), avals[0].dtype)]


def _qr_results(avals, mode):
    b, m, n = _matrix("qr", avals[0])
    k, d = (m if mode == "complete" else min(m, n)), avals[0].dtype
    return [Aval(b + (m, k), d), Aval(b + (k, n), d)]


def _batch_results(name, count):
    def results(avals):
        b, _, _ = _matrix(name, avals[0], square=True)
        return [Aval(b, avals[0].dtype)] * count
    return results


def _solve_results(avals):
    a, rhs = avals
    b, n, _ = _matrix("solve", a, square=True)
    if rhs.dtype is not a.dtype or rhs.ndim != a.ndim or rhs.shape[:-2] != b or rhs.shape[-2] != n:
        raise ShapeError(f"linalg.solve: right-hand sides {rhs} do not fit {a}")
    return [rhs]


def _pinv_results(avals):
    a, rc = avals
    b, m, n = _matrix("pinv", a)
    if rc.shape != b:
        raise ShapeError(f"linalg.pinv: the cutoffs {rc} must have the batch shape {b}")
    return [Aval(b + (n, m), a.dtype)]


def _cholesky(a, upper):
    low = np.linalg.cholesky(a)
    return np.swapaxes(low, -1, -2) if upper else low


_linalg("eigh", _eigen_results("eigh", True), np.linalg.eigh)
_linalg("eigvalsh", _eigen_results("eigvalsh", False), np.linalg.eigvalsh)
# general (non-symmetric) matrices: run on complex operands (host_complex), as their eigenvalues are
_linalg("eig", _eigen_results("eig", True), lambda a: tuple(np.linalg.eig(a)))
_linalg("eigvals", _eigen_results("eigvals", False), np.linalg.eigvals)
_linalg("svd", _svd_results, lambda a, full_matrices: tuple(np.linalg.svd(a, full_matrices=full_matrices)),
        params=("full_matrices",))
_linalg("svdvals", _svdvals_results, lambda a: np.linalg.svd(a, compute_uv=False))
_linalg("qr", _qr_results, lambda a, mode: tuple(np.linalg.qr(a, mode=mode)), params=("mode",))
_linalg("cholesky", _square_same("cholesky"), _cholesky, params=("upper",))
_linalg("inv", _square_same("inv"), np.linalg.inv)
_linalg("det", _batch_results("det", 1), np.linalg.det)
_linalg("slogdet", _batch_results("slogdet", 2), lambda a: tuple(np.linalg.slogdet(a)))
_linalg("solve", _solve_results, np.linalg.solve, arity=2)
_linalg("pinv", _pinv_results, lambda a, rc: np.linalg.pinv(a, rc), arity=2)
