"""NumPy functions beyond the array API standard (the nan* reductions and order statistics are in
numpy_stats.py, with cov and corrcoef; convolve, correlate and interp in numpy_signals.py): histogram,
differences (diff), sets and counts (unique, isin, bincount, argwhere), stacking (column_stack, dstack,
atleast_3d), index helpers (triu_indices, tril_indices) and the
methods `x.sort()`, `x.argsort()`, `x.flat`.

Each docstring says how the function runs:
- lazy: recorded as equations from poot's primitives and fused like any operation (works inside
  @pt.jit).
- host op: a lazy equation that the program runs with NumPy on the host (histogram), also inside
  @pt.jit.
- realizes: the result's shape depends on the values (unique, argwhere, bincount without `length=`),
  so the input is realized and NumPy computes on the host; inside @pt.jit these raise TracerError.
"""
from __future__ import annotations

import builtins as _bi
import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import (ArgumentError, ArgumentValueError, DTypeError, NotBuiltError, ShapeError, api_boundary,
                         exporter)
from poot.devices import cpu_sort
from poot.graph import host_sort
from poot.trace.host_results import HostResults
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.array_api_sets import (_unique as _fixed_unique, argsort as _argsort, searchsorted as _searchsorted,
                                      sort as _sort)
from poot.trace.creation import asarray, full, linspace, zeros
from poot.trace.device_search import runs_device_kernels, unique as device_unique
from poot.trace.indexing import nonzero, refuse_data_dependent, setitem_node, take
from poot.trace.lazy import is_tracing, record
from poot.trace.movement import arr, axis_of
from poot.trace.numpy_stats import _HALF, _keep, _leaf
from poot.trace.selection import where as _sel

__all__: list[str] = []
_export = exporter(globals(), __all__)

_NO_VALUE = object()


def _strong(v, device):
    """`v` as an Array, host data converted as NumPy's np.asarray would type it (Python ints int64)."""
    return v if isinstance(v, Array) else _leaf(np.asarray(v), device)


# --- differences ---------------------------------------------------------------------------------
def _diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    x = arr(a)
    n = operator.index(n)
    if n == 0:
        return x
    if n < 0:
        raise ShapeError(f"diff: order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ShapeError("diff: diff requires input that is at least one dimensional")
    ax = axis_of(axis, x.ndim, "diff", x)
    parts = []
    for v in (prepend, append):
        if v is _NO_VALUE or v is None:   # None: the array API standard's default (no values joined)
            parts.append(None)
            continue
        v = _strong(v, x.device)
        if v.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            v = mv.broadcast_to(v, tuple(shape))
        parts.append(v)
    if parts[0] is not None or parts[1] is not None:
        x = mv.concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
    lead = (slice(None),) * ax
    op = ew.not_equal if x.dtype is dt.bool_ else ew.subtract
    n = min(n, x.shape[ax])       # each difference is one shorter: past the length, the result is empty
    for _ in range(n):
        x = op(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    return x


_export("diff", _diff, "The n-th discrete difference along `axis` (after joining prepend/append), "
                       "as np.diff (bool input: not_equal). Lazy.")


# --- sets and counts -----------------------------------------------------------------------------
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True, size=None, fill_value=None):  # noqa: A002 (NumPy's name)
    x = arr(ar)
    if axis is not None:    # checked here: NumPy's own check, on the host, would raise outside poot's errors
        axis = axis_of(axis, x.ndim, "unique", x)
    want = (0,) + tuple(k for k, on in ((1, return_index), (2, return_inverse), (3, return_counts)) if on)
    if size is not None:    # JAX's fixed length: lazy, and it traces
        if axis is not None:
            raise NotBuiltError("unique: size= with axis= is not built; unique rows of a fixed count "
                                "need unique over a flattened view of each row")
        res = _fixed_unique(x, "unique", size, fill_value, want)
        return res[0] if len(res) == 1 else tuple(res)
    refuse_data_dependent("unique(x)", "its length is the number of distinct values",
                          "use unique_values(x, size=n) (or unique_all/unique_counts/unique_inverse) "
                          "for a fixed length")
    if axis is None and x.dtype.kind in "biuf" and runs_device_kernels(x.device):
        # the sort as device kernels, the rest lazy: only the number of distinct values is read
        res = device_unique(x, want, size=None, fill_value=None, equal_nan=bool(equal_nan))
        return res[0] if len(res) == 1 else tuple(res)
    a = x.numpy()
    half = x.dtype in _HALF
    work = a.astype(np.float32) if half else a
    host = HostResults(x.device)
    if axis is None:     # host_sort.unique: NumPy's results at its fast (unstable) sort's speed
        got = host_sort.unique(work.reshape(-1), index=return_index, inverse=return_inverse,
                               counts=return_counts, equal_nan=equal_nan, alloc=host.alloc,
                               sort_1d=cpu_sort.sort_into)
        if return_inverse:   # NumPy 2 gives the inverse the input's shape when axis is None
            got[2] = got[2].reshape(a.shape)
        res = tuple(r for r, want in zip(got, (True, return_index, return_inverse, return_counts)) if want)
    else:
        res = np.unique(work, return_index=return_index, return_inverse=return_inverse,
                        return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(res, tuple):
        res = (res,)
    out = [host.array(res[0].astype(x.dtype.np) if half else res[0], x.dtype)]
    out += [host.array(r.astype(np.int64, copy=False), dt.int64) for r in res[1:]]
    return out[0] if len(out) == 1 else tuple(out)


_export("unique", _unique, "The sorted unique elements (NumPy's signature and results: first indices, "
                           "inverse, counts, axis=, equal_nan=). Realizes: the length depends on the "
                           "values (inside @pt.jit: TracerError), unless size=n is given (JAX's: n "
                           "values, padded with fill_value (default the smallest) or truncated; lazy, "
                           "works inside @pt.jit; each NaN counts as its own value there, the array API "
                           "rule); on GPU devices only the number of distinct values is read, the rest "
                           "stays on the device.")


def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):     # NumPy's algorithm choice: the answer is the same
        raise ArgumentValueError(f"isin: invalid kind {kind!r}; use None, 'sort' or 'table'")
    e = arr(element, "isin", (test_elements,))
    t = arr(test_elements, "isin", (e,))
    t = mv.reshape(t, (-1,))
    if t.size == 0:
        return full(e.shape, bool(invert), dtype=dt.bool_, device=e.device)
    if e.size * t.size <= (1 << 20):
        r = red.any(ew.equal(mv.reshape(e, e.shape + (1,)), t), axis=-1)
    else:   # sort the test values once and binary-search each element (host ops)
        d = dt.result_type(e.dtype, t.dtype)
        st = _sort(t.astype(d))
        pos = _searchsorted(st, e.astype(d))
        pos = ew.minimum(pos, t.size - 1)
        r = ew.equal(take(st, pos), e.astype(d))
    return ew.logical_not(r) if invert else r


_export("isin", _isin, "Whether each element of `element` is in `test_elements` (element's shape). "
                       "Lazy: one compare-and-any reduction, or for large operands a sort and a binary "
                       "search (host ops).")


def _bincount(x, weights=None, minlength=0, *, length=None):
    x = arr(x)
    if x.ndim != 1:
        raise ShapeError(f"bincount: x must be one-dimensional, got {x.aval}")
    if x.dtype.kind not in "biu":
        raise DTypeError(f"bincount: x must hold non-negative integers, got {x.dtype.name}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ShapeError("bincount: minlength must be non-negative")
    if length is None and x.dtype.kind in "bu":
        # no value of an unsigned (or bool) x reaches minlength, as in the histogram of a uint8 image
        # with minlength=256: the length is minlength, known without reading x (so jit can trace it)
        top = 1 if x.dtype.kind == "b" else int(dt.iinfo(x.dtype).max)
        if minlength > top:
            length = minlength
    if length is None:
        refuse_data_dependent("bincount(x)", "its length is max(x) + 1",
                              "pass length=n (bins at or beyond n are dropped)")
        if x.size:
            lo, hi = (int(v) for v in (red.min(x), red.max(x)))
            if lo < 0:
                raise ShapeError("bincount: x must be non-negative (found a negative value)")
        else:
            hi = -1
        length = _bi.max(hi + 1, minlength)
    w = None
    if weights is not None:
        w = arr(weights)
        if w.dtype.kind == "c":
            raise DTypeError(f"bincount: weights must be real (they are summed as float64), got "
                             f"{w.dtype.name}")
        w = w.astype(dt.float64)
        if w.shape != x.shape:
            raise ShapeError(f"bincount: weights {w.aval} must have x's shape {x.shape}")
    d = dt.float64 if w is not None else dt.int64
    out = zeros((int(length),), dtype=d, device=x.device)
    if x.size == 0 or length == 0:
        return out
    idx = x.astype(dt.int64)
    vals = w if w is not None else full(x.shape, 1, dtype=dt.int64, device=x.device)
    keep = ew.logical_and(ew.greater_equal(idx, 0), ew.less(idx, length))
    idx = _sel(keep, idx, 0)
    vals = _sel(keep, vals, 0)
    out._node = setitem_node(out, idx, vals, mode="add")
    return out


_export("bincount", _bincount, "How often each value 0, 1, ... occurs in the 1-D non-negative integer x "
                               "(or the sum of `weights` per value, float64); at least `minlength` "
                               "bins. Lazy scatter-add once the length is known: without `length=` "
                               "max(x) is read first (inside @pt.jit: pass length=, or a minlength "
                               "beyond an unsigned x's dtype, as 256 for uint8).")


def _argwhere(a, *, size=None, fill_value=None):
    x = arr(a)
    if size is not None and x.ndim > 0:     # JAX's fixed length: lazy, and it traces
        return mv.stack(list(nonzero(x, size=size, fill_value=fill_value)), axis=-1)
    refuse_data_dependent("argwhere(x)", "its length is the number of nonzero elements",
                          "use argwhere(x, size=n) (or nonzero(x, size=n)) for a fixed length")
    if x.ndim == 0:
        k = 1 if bool(x) else 0
        return zeros((k, 0), dtype=dt.int64, device=x.device)
    return mv.stack(list(nonzero(x)), axis=-1) if x.ndim > 1 else mv.reshape(nonzero(x)[0], (-1, 1))


_export("argwhere", _argwhere, "Indices of the nonzero elements, one row per element (k, ndim). "
                               "Realizes (the length depends on the values), unless size=n is given "
                               "(JAX's: n rows, padded with fill_value (default 0) or truncated; lazy).")


# --- histogram -----------------------------------------------------------------------------------
def _estimated_edges(x: Array, estimator: str, range_, weights) -> np.ndarray:  # noqa: A002
    """The bin edges NumPy's estimator ('auto', 'fd', 'sturges'...) picks for x: the number of bins
    depends on the values, so x is realized and NumPy chooses (a TracerError inside @pt.jit)."""
    if weights is not None:
        raise DTypeError(f"histogram: bins={estimator!r} (an estimator) does not take weights, as in "
                         f"NumPy; give a count or edges")
    refuse_data_dependent(f"histogram(bins={estimator!r})", "the number of bins depends on the "
                          "values", "give a bin count or the edges")
    try:
        return np.histogram_bin_edges(x.numpy(), estimator, range_)
    except ValueError as e:
        raise ShapeError(f"histogram: {e}") from None


def _array_range_edges(x: Array, n: int, range_) -> Array:
    """NumPy's `n` equal bins over a range held in arrays (`range=(x.min(), x.max())` inside @pt.jit,
    where the values cannot be read): np.linspace(lo, hi, n + 1) in NumPy's edge dtype (the range's
    and x's common one, float64 for integers), widened by 0.5 each way where lo == hi; lazy. NumPy
    counts against the edges it returns, so binning against these gives its counts. lo > hi cannot
    be refused without reading the values (JAX does not check it either)."""
    if len(range_) != 2:
        raise ShapeError(f"histogram: range must be a (min, max) pair, got {len(range_)} values")
    strong = [v.dtype if isinstance(v, Array) else dt.as_dtype(np.asarray(v).dtype) for v in range_
              if isinstance(v, (Array, np.generic, np.ndarray))]    # Python numbers are weak, as in NumPy
    lo, hi = (arr(v, "histogram", (x,)) for v in range_)
    if lo.ndim or hi.ndim:
        raise ShapeError(f"histogram: range's values must be scalars, got {lo.aval} and {hi.aval}")
    d = dt.result_type(*strong, x.dtype)
    d = d if d.kind == "f" else dt.float64
    lo, hi = lo.astype(d), hi.astype(d)
    same = ew.equal(lo, hi)
    lo, hi = _sel(same, ew.subtract(lo, 0.5), lo), _sel(same, ew.add(hi, 0.5), hi)
    return linspace(lo, hi, n + 1, dtype=d)


def _histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    x = arr(a)
    if x.dtype.kind not in "biuf":
        raise DTypeError(f"histogram: needs a numeric array, got {x.dtype.name}")
    if x.dtype is dt.bool_:
        x = x.astype(dt.uint8)
    inputs = [x._node]
    if isinstance(bins, str):
        bins = _estimated_edges(x, bins, range, weights)
    elif isinstance(bins, (Array, np.ndarray)) and bins.ndim == 0:
        try:     # a 0-d count (`bins=labels.max() + 1`) is read, as in NumPy
            bins = operator.index(bins)
        except TypeError:
            raise DTypeError(f"histogram: a 0-d `bins` must be an integer count, got {bins.dtype}") from None
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        nb = int(bins)
        if nb < 1:
            raise ShapeError("histogram: `bins` must be positive, when an integer")
        p_bins = nb
    else:
        e = bins if isinstance(bins, Array) else np.asarray(bins)
        if e.ndim != 1:
            raise ShapeError("histogram: `bins` must be 1d, when an array")
        if not isinstance(e, Array) and (np.diff(e) < 0).any():
            raise ShapeError("histogram: `bins` must increase monotonically, when an array")
        e = e if isinstance(e, Array) else _leaf(e, x.device)
        inputs.append(e._node)
        p_bins = None
    if range is not None and p_bins is not None and any(isinstance(v, Array) for v in range):
        return _histogram(x, _array_range_edges(x, p_bins, range), None, density, weights)
    if range is not None:
        lo, hi = (float(v) for v in range)
        if lo > hi:
            raise ShapeError("histogram: max must be larger than min in range parameter.")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ShapeError(f"histogram: supplied range of [{lo}, {hi}] is not finite")
        range = (lo, hi)  # noqa: A001
    weighted = weights is not None
    if weighted:
        w = arr(weights)
        if w.shape != x.shape:
            raise ShapeError(f"histogram: weights {w.aval} should have the same shape as a {x.aval}")
        inputs.append(w._node)
    if runs_device_kernels(x.device) and (not weighted or w.dtype.kind in "biuf"):
        from poot.trace.device_histogram import histogram as device_histogram

        return device_histogram(x, p_bins, None if p_bins is not None else e, range, bool(density),
                                w if weighted else None)
    params = {"bins": p_bins, "range": range, "density": bool(density), "weighted": weighted}
    counts = Array(record("histogram", tuple(inputs), {**params, "index": 0}))
    edges = Array(record("histogram", tuple(inputs), {**params, "index": 1}))
    return counts, edges


def _histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    x = arr(a)
    if isinstance(bins, str):
        return _leaf(_estimated_edges(x, bins, range, weights), x.device)
    return _histogram(x, bins, range, None, weights)[1]


_export("histogram_bin_edges", _histogram_bin_edges, "The bin edges histogram would use: lazy for a "
        "count or edges; an estimator ('auto', 'fd', 'sturges'...) realizes `a` (NumPy picks the "
        "number of bins).")
_export("histogram", _histogram, "(counts, bin edges) of `a` as np.histogram: `bins` a count or the "
                                 "edges, `range` (numbers, or arrays such as (x.min(), x.max()), which "
                                 "become lazy edges), `density`, `weights`. Lazy, works inside @pt.jit: a host "
                                 "op on the CPU (NumPy runs it as a program step); on GPU devices lazy "
                                 "operations and a scatter-add (poot/trace/device_histogram.py; there, float "
                                 "data without range= has its bounds read back to raise NumPy's error for "
                                 "NaN or infinity, except under @pt.jit, where such data gives NaN edges "
                                 "and no counts).")


# --- stacking ------------------------------------------------------------------------------------
def _atleast_3d(*arys):
    out = []
    for a in arys:
        x = arr(a)
        if x.ndim == 0:
            x = mv.reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = mv.reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = mv.reshape(x, x.shape + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def _column_stack(tup):
    cols = []
    for x in mv._arrays(tup, "column_stack"):
        cols.append(mv.reshape(x, (-1, 1)) if x.ndim < 2 else x)
    return mv.concatenate(cols, axis=1)


def _dstack(tup):
    xs = [_atleast_3d(a) for a in mv._arrays(tup, "dstack")]
    return mv.concatenate(xs, axis=2)


_export("atleast_3d", _atleast_3d, "Arrays viewed with at least three dimensions (1-D (n,) -> (1, n, 1), "
                                   "2-D (m, n) -> (m, n, 1)). Lazy.")
_export("column_stack", _column_stack, "Stack 1-D arrays as columns (2-D ones as they are). Lazy.")
_export("dstack", _dstack, "Stack arrays along the third axis (after atleast_3d). Lazy.")


def _sort_complex(a):
    from poot.trace.array_api_sets import sort

    x = sort(arr(a))
    if x.dtype.kind == "c":
        return x
    # NumPy's rule: 8- and 16-bit integers become complex64, everything else complex128
    small = x.dtype.kind in "iu" and x.dtype.itemsize <= 2
    return x.astype(dt.complex64 if small else dt.complex128)


_export("sort_complex", _sort_complex, "Sorted along the last axis by real part, then imaginary part, as "
                                       "complex values (np.sort_complex's dtypes). Lazy where sort is.")


# --- index helpers -------------------------------------------------------------------------------
def _tri_indices(name):
    fn = getattr(np, name)

    def f(n, k=0, m=None, *, device=None):
        from poot.trace.creation import _device

        dev = _device(device)
        return tuple(_leaf(i.astype(np.int64), dev) for i in fn(n, k, m))
    return f


def _tri_indices_from(name):
    def f(arr_, k=0):
        x = arr(arr_)
        if x.ndim != 2:
            raise ShapeError(f"{name}_from: input array must be 2-d, got {x.aval}")
        return globals()[name](x.shape[-2], k=k, m=x.shape[-1], device=x.device)
    return f


_export("triu_indices", _tri_indices("triu_indices"),
        "Row and column indices (int64) of the upper triangle of an (n, m) array. Computed now "
        "(the shape depends only on n, k, m).")
_export("tril_indices", _tri_indices("tril_indices"),
        "Row and column indices (int64) of the lower triangle of an (n, m) array.")
_export("triu_indices_from", _tri_indices_from("triu_indices"), "triu_indices for a 2-D array's shape.")
_export("tril_indices_from", _tri_indices_from("tril_indices"), "tril_indices for a 2-D array's shape.")


# --- linalg.norm ---------------------------------------------------------------------------------
def _norm_axes(axis) -> tuple:
    """norm's `axis` as a tuple: a tuple (or list) as given, anything else through int() as NumPy
    takes it (so axis=1.0 is axis 1), and what int() refuses named as norm's argument rather than
    failing inside tuple()."""
    if isinstance(axis, (tuple, list)):
        return tuple(axis)
    try:
        return (int(axis),)
    except (TypeError, ValueError):
        raise ArgumentError(f"linalg.norm: 'axis' must be None, an integer or a tuple of integers, "
                            f"got {axis!r}") from None


@api_boundary          # poot.linalg's name: its errors show the user's line like every public function's
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (NumPy's name)
    """Matrix or vector norm with NumPy's `ord`/`axis`/`keepdims` (np.linalg.norm): vector norms over
    one axis (ord None = 2, inf, -inf, 0, 1, any p), matrix norms over two ('fro', 'nuc', 1, -1, 2,
    -2, inf, -inf). Lazy, except ord 2, -2 and 'nuc' of matrices (singular values: a host step)."""
    from poot.trace.array_api_linalg import matrix_norm, vector_norm

    x = arr(x)
    if x.dtype.kind not in "fc":     # complex stays complex: its norms use |z| (a real result)
        x = x.astype(dt.float64)
    if axis is None:
        if ord is None:
            sq = ew.abs(x) ** 2 if x.dtype.kind == "c" else ew.multiply(x, x)
            r = ew.sqrt(red.sum(sq))
            return mv.reshape(r, (1,) * x.ndim) if keepdims else r
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ShapeError("linalg.norm: improper number of dimensions to norm (give axis=)")
    axes = tuple(axis_of(a, x.ndim, "linalg.norm", x) for a in _norm_axes(axis))   # in the given order
    if len(axes) != len(set(axes)):
        raise ShapeError("linalg.norm: duplicate axes given")
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ShapeError(f"linalg.norm: invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2:
        raise ShapeError("linalg.norm: improper number of dimensions to norm")
    a0, a1 = axes
    if ord is None:
        ord = "fro"  # noqa: A001
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise ShapeError(f"linalg.norm: invalid norm order {ord!r} for matrices")
    y = mv.moveaxis(x, (a0, a1), (-2, -1))
    r = matrix_norm(y, ord=ord)
    return _keep(r, x.ndim, (a0, a1)) if keepdims else r


# --- methods -------------------------------------------------------------------------------------
def _cycled(flat, idx, value):
    """The values `x.flat[idx] = value` stores: NumPy's flat assignment reads value's elements in C order
    and repeats (or cuts) them to fill the selected elements, where ordinary indexing would broadcast;
    a scalar or a value of the selection's own shape is stored as given (a scalar without a look at
    the selection, so an element loop's `x.flat[i] = v` records nothing more)."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    v = value if isinstance(value, Array) else asarray(value)
    if v.ndim == 0 or v.size == 0:
        return value
    shape = flat[idx].shape
    if v.shape == tuple(shape) or len(shape) == 0:
        return value
    n = math.prod(shape)
    return mv.reshape(take(mv.reshape(v, (-1,)), np.arange(n) % v.size), shape)


class FlatIter:
    """`x.flat`: the elements of x in C order: iterate, index, len, np.asarray, and assign (`x.flat[i] = v`,
    `x.flat = v`: x itself takes the values, repeated cyclically to fill the selection, as in NumPy)."""

    __slots__ = ("base",)

    def __init__(self, base: Array):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        flat = mv.reshape(self.base, (-1,))
        if not is_tracing():
            flat._realize("iterating x.flat")
        return (flat[i] for i in range(flat.shape[0]))

    def __getitem__(self, idx):
        return mv.reshape(self.base, (-1,))[idx]

    def __setitem__(self, idx, value):
        flat = mv.reshape(self.base, (-1,))
        flat[idx] = _cycled(flat, idx, value)
        self.base._node = mv.reshape(flat, self.base.shape)._node

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.base.numpy()).reshape(-1)
        return a.astype(dtype) if dtype is not None else a

    def copy(self):
        return mv.reshape(self.base, (-1,))

    def __repr__(self):
        return f"<flat iterator over {self.base.aval}>"


def _assign_flat(self, value):
    """`x.flat = v`: every element of x, from v's values in C order (cycled, as NumPy does)."""
    FlatIter(self)[...] = value


def _check_sort_kind(op: str, kind) -> None:
    """NumPy's `kind=` names an algorithm by its first letter (any case); poot's sort is always stable,
    so every NumPy kind gives NumPy's result, but a kind NumPy refuses is refused here too."""
    if kind is None:
        return
    if not isinstance(kind, str):
        raise ArgumentError(f"{op}: sort kind must be str, not {type(kind).__name__}")
    if kind[:1].lower() not in ("q", "h", "m", "s"):
        raise ArgumentValueError(f"{op}: sort kind must be one of 'quicksort', 'mergesort', 'heapsort' or "
                                 f"'stable' (got {kind!r})")


def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """x.sort(): sorts x in place along `axis` (rebinds x to its sorted value; other handles on the
    old value keep it). A host op: lazy."""
    if order is not None:
        raise DTypeError("sort: order= needs structured arrays, which poot does not have")
    _check_sort_kind("sort", kind)
    if axis is None:
        raise ShapeError("x.sort(axis=None) would flatten x, which an in-place sort cannot; use "
                         "pt.sort(x, axis=None)")
    self._node = _sort(self, axis=axis, descending=descending)._node


def _argsort_method(self, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Indices that sort x along `axis` (flattened when None), as np.argsort. A host op: lazy."""
    if order is not None:
        raise DTypeError("argsort: order= needs structured arrays, which poot does not have")
    _check_sort_kind("argsort", kind)
    x = mv.reshape(self, (-1,)) if axis is None else self
    return _argsort(x, axis=-1 if axis is None else axis, descending=descending)


def install_methods() -> None:
    from poot.errors import api_boundary

    Array.sort = api_boundary(_sort_method)
    Array.argsort = api_boundary(_argsort_method)
    Array.flat = property(FlatIter, api_boundary(_assign_flat),
                          doc="The elements in C order: iterate, index, len, and assign (cycling values).")


install_methods()
