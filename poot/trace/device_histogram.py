"""np.histogram made of lazy operations, for devices where a host op would copy the data to the host.

On the CPU device histogram is a host op (NumPy on the program's own buffers). On a GPU device that
host op copies the data to the host and the counts back and makes the program wait, so there the bin of
each element is computed by lazy elementwise operations and the counts by one scatter-add (as bincount
does): a few kernels on the device, inside @pt.jit too. The bin is computed as NumPy computes it, so
the counts are NumPy's (numpy/lib/_histograms_impl.py):

- `bins` a count: the fraction (x - first_edge) / (last_edge - first_edge) * bins, truncated, then
  corrected by comparing x with the edges it falls between (the division may be an ulp off), the
  last bin closed on the right. The arithmetic runs in NumPy's dtypes: the edges' dtype (the data's
  float dtype, float64 for integers) and, with `range=` given, a float64 division.
- `bins` the edges: the number of edges (but the last) at or below x, minus one; x equal to the last
  edge goes to the last bin. Compared in the common dtype of the data and the edges, NaN greatest.

Values outside the range (and NaNs) are dropped. Without `range=`, the range is the data's min and max,
reduced on the device. NumPy refuses float data holding NaN or infinity there ("autodetected range of
[nan, nan] is not finite"): run eagerly, the two bounds are read back (two scalars; the reductions run
once, the rest of the histogram reads their buffers) and the same error is raised as the CPU device's
host op raises (HostValueError, a ValueError). Under @pt.jit nothing can be read while tracing, so the
result stays lazy: its edges are then NaN (or infinite) and its counts zero.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import ShapeError
from poot.graph.host_numpy import HostValueError
from poot.trace import elementwise as ew
from poot.trace import reductions as red
from poot.trace.array import Array, realize
from poot.trace.creation import _iota, full, zeros
from poot.trace.device_search import binary_search
from poot.trace.indexing import setitem_node, take
from poot.trace.lazy import from_numpy, is_tracing
from poot.trace.selection import clip, where


def _const(value, dtype: dt.DType, device: str) -> Array:
    return full((), value, dtype=dtype, device=device)


def _rounded(v: Array) -> Array:
    """The 1-D `v` written to memory (scattered into a buffer of its own) before anything uses it.
    Generated kernels may fuse a multiply and the add after it into one FMA, which rounds once where
    NumPy rounds twice; an add that reads the product from memory cannot be fused with it."""
    out = zeros(v.shape, dtype=v.dtype, device=v.device)
    out._node = setitem_node(out, Array(_iota(v.shape, 0, dt.int32, v.device)), v)
    return out


def _linspace(first: Array, last: Array, num: int, dtype: dt.DType) -> Array:
    """np.linspace(first, last, num) over 0-d lazy `first` and `last` of `dtype`, computed in it (as
    NumPy computes it for scalars of that dtype: step = delta / div, or for a step that underflows to
    zero (i / div) * delta, plus first; the last element is `last` itself)."""
    div = num - 1
    delta = last - first
    y = Array(_iota((num,), 0, dtype, first.device))
    step = delta / div
    y = _rounded(where(ew.equal(step, 0), (y / div) * delta, y * step)) + first
    return where(ew.equal(Array(_iota((num,), 0, dt.int32, first.device)), div), last, y)


def _data_range(a: Array) -> tuple[Array, Array]:
    """The 0-d min and max of the 1-D non-empty `a`. Run eagerly on float data, they are computed now and
    read back, to refuse a range that is not finite as NumPy does (the CPU device's host op raises the
    same error); while tracing they stay lazy."""
    lo, hi = red.min(a), red.max(a)
    if a.dtype.kind == "f" and not is_tracing():
        realize(lo, hi)
        lo_np, hi_np = lo.numpy()[()], hi.numpy()[()]
        if not (np.isfinite(lo_np) and np.isfinite(hi_np)):
            raise HostValueError(f"histogram: autodetected range of [{lo_np}, {hi_np}] is not finite")
    return lo, hi


def _uniform_bins(a: Array, nb: int, range_) -> tuple[Array, Array, Array]:
    """(bin of each element, whether it is counted, the edges) for `nb` equal bins."""
    dev = a.device
    edge_dtype = a.dtype if a.dtype.kind == "f" else dt.float64
    x = a.astype(edge_dtype)
    if range_ is not None or a.size == 0:        # Python numbers: edges known now, exactly NumPy's
        lo, hi = range_ if range_ is not None else (0.0, 1.0)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        with np.errstate(all="ignore"):
            edges_np = np.linspace(lo, hi, nb + 1, dtype=edge_dtype.np)
        if (edges_np[:-1] >= edges_np[1:]).any():
            raise ShapeError(f"histogram: too many bins for data range. Cannot create {nb} finite-sized "
                             f"bins in [{lo}, {hi}] as {edge_dtype.name}")
        edges = Array(from_numpy(edges_np, dev, edge_dtype))
        first, last = _const(lo, edge_dtype, dev), _const(hi, edge_dtype, dev)
        # NumPy divides by the range as a float64 scalar, which makes the fraction float64
        frac = (x - first).astype(dt.float64) / (hi - lo) * nb
    else:                                        # the data's min and max, reduced on the device
        lo_v, hi_v = _data_range(a)
        same = ew.equal(lo_v, hi_v)              # an empty range is widened by 0.5 each way
        first, last = lo_v.astype(edge_dtype), hi_v.astype(edge_dtype)
        first, last = where(same, first - 0.5, first), where(same, last + 0.5, last)
        edges = _linspace(first, last, nb + 1, edge_dtype)
        frac = (x - first) / (last - first) * nb
    keep = ew.logical_and(ew.greater_equal(x, first), ew.less_equal(x, last))
    idx = frac.astype(dt.int32 if nb < 2**31 - 1 else dt.int64)
    idx = clip(where(ew.equal(idx, nb), nb - 1, idx), 0, nb - 1)      # x == last: the last bin
    idx = where(ew.less(x, take(edges, idx, mode="clip")), idx - 1, idx)  # an ulp above: one bin down
    up = ew.logical_and(ew.greater_equal(x, take(edges, idx + 1, mode="clip")), ew.not_equal(idx, nb - 1))
    idx = where(up, idx + 1, idx)
    return idx, keep, edges


def _edge_bins(a: Array, edges: Array) -> tuple[Array, Array]:
    """(bin of each element, whether it is counted) for explicit `edges`: element x is in bin i when
    edges[i] <= x < edges[i + 1], or edges[-2] <= x <= edges[-1] for the last bin (NumPy's counts
    through searchsorted of the edges, left for all but the last, right for the last)."""
    from poot.trace.array_api_sets import _less_equal

    d = dt.result_type(a.dtype, edges.dtype)
    x, e = a.astype(d), edges.astype(d)
    at_or_below = binary_search(e[:-1], x, lambda probe, q: _less_equal(probe, q, d.kind == "f"))
    idx = at_or_below - 1
    keep = ew.logical_and(ew.greater_equal(idx, 0), ew.less_equal(x, e[-1]))
    return idx, keep


def _accumulator(weights: Array | None, n: int) -> dt.DType:
    """The dtype the counts are added in: 32-bit where it holds them (GPU atomics add 32-bit values;
    wider ones are added by one thread)."""
    if weights is None:
        return dt.int32 if n < 2**31 else dt.int64
    d = weights.dtype
    if d.kind == "f":
        return dt.float64 if d is dt.float64 else dt.float32
    if d.kind == "b" or (d.kind in "iu" and d.itemsize < 4) or d is dt.int32:
        return dt.int32
    return d                                     # uint32, int64, uint64: added in their own dtype


def histogram(x: Array, bins: int | None, edges: Array | None, range_, density: bool,
              weights: Array | None) -> tuple[Array, Array]:
    """(counts, edges) of the real array `x` as np.histogram: `bins` equal bins over `range_` (a
    (low, high) pair of Python floats, or None: the data's min and max), or the given 1-D `edges`;
    `weights` of x's shape (real) or None. Lazy."""
    dev = x.device
    a = x.reshape(-1)
    w = None if weights is None else weights.reshape(-1)
    if edges is None:
        nb = bins
        # 16-bit floats computed in float32 and the edges rounded back, as the host op computes them
        # (NumPy's own 16-bit arithmetic is no more exact, and every device then agrees)
        half = a.dtype if a.dtype in (dt.float16, dt.bfloat16) else None
        idx, keep, work_edges = _uniform_bins(a if half is None else a.astype(dt.float32), nb, range_)
        out_edges = work_edges if half is None else work_edges.astype(half)
    else:
        nb, out_edges = max(edges.shape[0] - 1, 0), edges
        work_edges = edges
        idx, keep = (None, None) if nb == 0 else _edge_bins(a, edges)
    count_dtype = dt.int64 if w is None else w.dtype
    acc = _accumulator(w, a.size)
    total = zeros((nb + 1,), dtype=acc, device=dev)          # slot nb takes what is not counted
    if nb and a.size:
        slot = where(keep, idx, nb)
        values = full(a.shape, 1, dtype=acc, device=dev) if w is None else w.astype(acc)
        total._node = setitem_node(total, slot, values, mode="add")
    counts = total[:nb]
    if density and a.size == 0:      # NumPy's 0 / 0 in every bin
        return full((nb,), np.nan, dtype=dt.float64, device=dev), out_edges
    if density:          # NumPy: counts / widths (float64) / the counts' sum, in the counts' dtype
        widths = work_edges[1:].astype(dt.float64) - work_edges[:-1].astype(dt.float64)
        return counts.astype(dt.float64) / widths / red.sum(counts).astype(dt.float64), out_edges
    return counts.astype(count_dtype), out_edges


__all__ = ["histogram"]
