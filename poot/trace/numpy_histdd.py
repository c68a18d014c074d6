"""NumPy's multi-dimensional histograms (histogramdd, histogram2d), lazy: bin edges from the data's
min and max are computed as np.linspace would, each sample is placed by searchsorted, and the counts
are a fixed-length bincount, so they trace under @pt.jit (a range held in arrays included).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import arange, asarray, linspace, zeros
from poot.trace.movement import arr
from poot.trace.numpy_more import bincount, diff
from poot.trace.array_api_sets import searchsorted
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


def _auto_edges(col, n, rng, i):
    """np.linspace(smin, smax, n + 1) for the column `col` (the range from the data unless given)."""
    ed = col.dtype if col.dtype.kind == "f" else dt.float64
    if rng is not None and any(isinstance(v, Array) for v in rng):
        # a range held in arrays (traced in @pt.jit): NumPy's linspace of its values, lazily, in their
        # strong dtypes' float (Python numbers weak); lo > hi cannot be refused without reading them
        strong = [v.dtype if isinstance(v, Array) else dt.as_dtype(np.asarray(v).dtype) for v in rng
                  if isinstance(v, (Array, np.generic, np.ndarray))]
        d = dt.result_type(*strong)
        d = d if d.kind == "f" else dt.float64
        lo, hi = (arr(v, "histogramdd", (col,)).astype(d) for v in rng)
        same = ew.equal(lo, hi)
        lo, hi = where(same, ew.subtract(lo, 0.5), lo), where(same, ew.add(hi, 0.5), hi)
        return linspace(lo, hi, n + 1, dtype=d)
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
        if lo > hi:
            raise ShapeError(f"histogramdd: max must be larger than min in range[{i}] = {tuple(rng)}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ShapeError(f"histogramdd: range[{i}] = {tuple(rng)} is not finite")
        lo, hi = rng[0], rng[1]      # NumPy's linspace of the range's own values: Python floats give
        if lo == hi:                 # float64 edges, whatever the sample's dtype
            lo, hi = lo - 0.5, hi + 0.5
        return asarray(np.linspace(np.asarray(lo), np.asarray(hi), n + 1))
    if col.size == 0:
        return asarray(np.linspace(np.asarray(0, ed.np), np.asarray(1, ed.np), n + 1))
    lo, hi = red.min(col).astype(ed), red.max(col).astype(ed)
    same = ew.equal(lo, hi)
    lo, hi = where(same, ew.subtract(lo, 0.5), lo).astype(ed), where(same, ew.add(hi, 0.5), hi).astype(ed)
    step = ew.divide(ew.subtract(hi, lo), n).astype(ed)
    y = ew.add(ew.multiply(arange(n + 1).astype(ed), step), lo).astype(ed)
    return mv.concatenate([y[:-1], mv.reshape(hi, (1,))])


def _histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    if isinstance(sample, (list, tuple)):
        cols = [mv.reshape(arr(c), (-1,)) for c in sample]
        s = mv.stack(cols, axis=1)
    else:
        s = arr(sample)
        s = mv.reshape(s, (-1, 1)) if s.ndim <= 1 else s
    if s.ndim != 2:
        raise ShapeError(f"histogramdd: sample must be (N, D) or a sequence of D 1-D arrays, got {s.aval}")
    N, D = s.shape
    try:
        if len(bins) != D:
            raise ShapeError(f"histogramdd: the dimension of bins ({len(bins)}) must equal the "
                             f"dimension of the sample ({D})")
    except TypeError:
        bins = [bins] * D
    if range is not None and len(range) != D:
        raise ShapeError("histogramdd: range argument must have one entry per dimension")
    ranges = [None] * D if range is None else list(range)
    edges, flat, stride, nbin = [None] * D, None, 1, []
    for i in builtins.range(D):
        col = s[:, i]
        if np.ndim(bins[i]) == 0:
            n = operator.index(bins[i])
            if n < 1:
                raise ShapeError(f"histogramdd: bins[{i}] must be positive, when an integer")
            edges[i] = _auto_edges(col, n, ranges[i], i)
        elif np.ndim(bins[i]) == 1:
            edges[i] = arr(bins[i])
            if not isinstance(bins[i], Array) and np.any(np.diff(np.asarray(bins[i])) < 0):
                raise ShapeError(f"histogramdd: bins[{i}] must be monotonically increasing, when an array")
        else:
            raise ShapeError(f"histogramdd: bins[{i}] must be a scalar or 1d array")
        nbin.append(edges[i].shape[0] + 1)
    for i in reversed(builtins.range(D)):
        col = s[:, i]
        count = searchsorted(edges[i], col, side="right")
        count = ew.subtract(count, ew.equal(col, edges[i][-1]).astype(dt.int64))
        term = ew.multiply(count, stride)
        flat = term if flat is None else ew.add(flat, term)
        stride *= nbin[i]
    total = math.prod(nbin)
    if N == 0:
        hist = zeros(tuple(nbin), dtype=dt.float64)
    else:
        hist = mv.reshape(bincount(flat, weights, length=total).astype(dt.float64), tuple(nbin))
    hist = hist[(slice(1, -1),) * D]
    if density:
        total_count = red.sum(hist)
        for i in builtins.range(D):
            shape = [1] * D
            shape[i] = nbin[i] - 2
            hist = ew.divide(hist, mv.reshape(diff(edges[i]), tuple(shape)))
        hist = ew.divide(hist, total_count)
    return hist, edges


def _histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    xs, ys = arr(x), arr(y)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ShapeError(f"histogram2d: x and y must be 1-D of the same length, got {xs.aval} and {ys.aval}")
    hist, edges = _histogramdd([xs, ys], bins, range, density, weights)
    return hist, edges[0], edges[1]


_export("histogramdd", _histogramdd, "The D-dimensional histogram of an (N, D) sample (or D 1-D arrays): "
                                     "(float64 counts or densities, list of edge arrays), as "
                                     "np.histogramdd. Lazy: edges from the data's range are computed "
                                     "as np.linspace would.")
_export("histogram2d", _histogram2d, "The 2-D histogram of x and y: (H, xedges, yedges), as np.histogram2d. "
                                     "Lazy.")
