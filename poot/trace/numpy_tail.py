"""More of NumPy's namespace: float and integer elementwise functions (cbrt, gcd, lcm, ldexp, frexp,
logaddexp2, fix, spacing, i0, kaiser), array editing (insert, delete, block, resize, rollaxis,
trim_zeros, choose) and products (matvec, vecmat, cumulative_prod). The in-place writes are in
numpy_inplace.py, the queries and callable helpers in numpy_queries.py, polynomials in numpy_poly.py.

All lazy unless the docstring says otherwise: insert and delete read indices held in a poot array on
the host, and trim_zeros reads the values (its length depends on them): inside @pt.jit those raise
TracerError.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, PootIndexError, ShapeError, exporter, out_error
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.array_api_functions import conj, cumulative
from poot.trace.control import while_loop
from poot.trace.creation import arange, asarray, zeros
from poot.trace.indexing import refuse_data_dependent, take, take_along_axis
from poot.trace.lazy import check_scalars_fit
from poot.trace.linalg import matmul
from poot.trace.movement import arr, axis_of
from poot.trace.promote import finish, float_of, promote
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)


def _operands(op, *xs):
    """The operands as Arrays of their NumPy 2 result dtype (Python scalars weak), and that dtype."""
    items, d, dev = promote(op, xs)
    return [Array(n) for n in finish(op, items, d, dev)], d


def _real_float(op, x):
    """x as an Array in the float dtype NumPy computes `op` in (complex refused), and that dtype."""
    x = arr(x)
    if x.dtype.kind == "c":
        raise DTypeError(f"{op}: complex input is not supported (got {x.aval})")
    f = float_of(x.dtype)
    return x.astype(f), f


def _work(f):
    """The dtype half-precision values compute in (float32), others in their own."""
    return dt.float32 if f.bits == 16 else f


def _pow2(e, f):
    """2**e (an integer Array) in float dtype f, as two factors so that neither overflows."""
    h = ew.floor_divide(e, 2)
    return ew.exp2(h.astype(f)), ew.exp2(ew.subtract(e, h).astype(f))


# --- elementwise ---------------------------------------------------------------------------------
def _cbrt(x):
    x, f = _real_float("cbrt", x)
    w = x.astype(_work(f))
    return ew.copysign(ew.power(ew.abs(w), 1.0 / 3.0), w).astype(f)


def _int_pair(op, x1, x2):
    """(|x1|, |x2|) broadcast, in the unsigned dtype of the operands' width, and that common dtype.

    NumPy works on unsigned magnitudes: |INT_MIN| wraps to INT_MIN in its own dtype (a negative
    "magnitude" that sends Euclid's steps astray: gcd(6, -128) gave -2), but casting the wrapped value
    to the unsigned dtype is exactly 2**(bits-1). The result is cast back, wrapping as NumPy does."""
    (a, b), d = _operands(op, x1, x2)
    if d.kind not in "iu":
        raise DTypeError(f"{op}: needs integer operands, got {a.dtype.name} and {b.dtype.name}")
    u = dt.as_dtype(f"uint{d.bits}")
    shape = mv.broadcast_shapes(a.shape, b.shape)
    mag = (lambda v: ew.abs(v.astype(d)).astype(u)) if d.kind == "i" else (lambda v: v.astype(u))
    return mv.broadcast_to(mag(a), shape), mv.broadcast_to(mag(b), shape), d


def _gcd_of(a, b):
    def body(s):
        x, y = s
        nz = ew.not_equal(y, 0)
        return where(nz, y, x), where(nz, ew.remainder(x, where(nz, y, 1)), 0)

    return while_loop(lambda s: red.any(ew.not_equal(s[1], 0)), body, (a, b))[0]


def _gcd(x1, x2):
    a, b, d = _int_pair("gcd", x1, x2)
    return _gcd_of(a, b).astype(d)


def _lcm(x1, x2):
    a, b, d = _int_pair("lcm", x1, x2)
    g = _gcd_of(a, b)
    zero = ew.equal(g, 0)
    return where(zero, 0, ew.multiply(ew.floor_divide(a, where(zero, 1, g)), b)).astype(d)


def _ldexp(x1, x2):
    x, f = _real_float("ldexp", x1)
    e = arr(x2)
    if e.dtype.kind not in "iub":
        raise DTypeError(f"ldexp: the exponent x2 must be integers, got {e.dtype.name}")
    w = x.astype(_work(f))
    lo, hi = _pow2(e.astype(dt.int64), w.dtype)
    return ew.multiply(ew.multiply(w, lo), hi).astype(f)


def _frexp(x):
    x, f = _real_float("frexp", x)
    w = x.astype(dt.float64)
    finite = ew.logical_and(ew.isfinite(w), ew.not_equal(w, 0))
    mag = where(finite, ew.abs(w), 1.0)
    e = ew.add(ew.floor(ew.log2(mag)), 1).astype(dt.int64)
    lo, hi = _pow2(ew.negative(e), dt.float64)
    m = ew.multiply(ew.multiply(mag, lo), hi)
    up, down = ew.greater_equal(m, 1.0), ew.less(m, 0.5)        # log2 rounded at a power of two
    e = ew.add(e, ew.subtract(up.astype(dt.int64), down.astype(dt.int64)))
    m = where(up, ew.multiply(m, 0.5), where(down, ew.multiply(m, 2.0), m))
    m = where(finite, ew.copysign(m, w), w)
    return m.astype(f), where(finite, e, 0).astype(dt.int32)


def _logaddexp2(x1, x2):
    from poot.trace.elementwise import float_pair

    items, d, dev = promote("logaddexp2", (x1, x2))
    f = float_pair(items, d, "logaddexp2")
    a, b = (Array(n) for n in finish("logaddexp2", items, f, dev))
    w = _work(f)
    a, b = a.astype(w), b.astype(w)
    m = ew.maximum(a, b)
    same = ew.equal(a, b)
    gap = where(same, 0.0, ew.abs(ew.subtract(a, b)))
    tail = ew.divide(ew.log1p(ew.exp2(ew.negative(gap))), math.log(2.0))
    return where(same, ew.add(a, 1.0), ew.add(m, tail)).astype(f)


def _fix(x):
    x = arr(x)
    if x.dtype.kind == "c":
        raise DTypeError(f"fix: complex input is not supported (got {x.aval})")
    return ew.trunc(x)


def _spacing(x):
    x, f = _real_float("spacing", x)
    toward = ew.copysign(math.inf, x + 0.0).astype(f)      # -0.0 + 0.0 is +0.0: NumPy steps up from -0
    return ew.subtract(ew.nextafter(x, toward), x)


# Cephes' Chebyshev coefficients for I0 (|x| <= 8 and above), the ones NumPy's i0 uses
_I0_A = [-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
         -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
         -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
         -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
         -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05,
         0.00018850288509584165, -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576,
         0.010546460394594998, -0.02373741480589947, 0.04930528423967071, -0.09490109704804764,
         0.17162090152220877, -0.3046826723431984, 0.6767952744094761]
_I0_B = [-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
         -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15,
         3.8116806693526224e-15, -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14,
         3.8527783827421426e-13, 7.180124451383666e-13, -1.7941785315068062e-12,
         -1.3215811840447713e-11, -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
         3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07, 2.8913705208347567e-06,
         6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088]


def _chbevl(x, vals):
    b0, b1, b2 = vals[0], 0.0, 0.0
    for v in vals[1:]:
        b2, b1 = b1, b0
        b0 = ew.add(ew.subtract(ew.multiply(x, b1), b2), v)
    return ew.multiply(ew.subtract(b0, b2), 0.5)


def _i0(x):
    x = arr(x)
    if x.dtype.kind == "c":
        raise DTypeError(f"i0: complex input is not supported (got {x.aval})")
    f = x.dtype if x.dtype.kind == "f" else dt.float64
    w = ew.abs(x.astype(_work(f)))
    small = ew.less_equal(w, 8.0)
    ws = where(small, w, 8.0)
    wb = where(small, 9.0, w)
    near = ew.multiply(ew.exp(ws), _chbevl(ew.subtract(ew.divide(ws, 2.0), 2.0), _I0_A))
    far = ew.divide(ew.multiply(ew.exp(wb), _chbevl(ew.subtract(ew.divide(32.0, wb), 2.0), _I0_B)),
                    ew.sqrt(wb))
    return where(small, near, far).astype(f)


def _kaiser(M, beta):
    M = operator.index(M)
    if M < 1:
        return zeros(0)
    if M == 1:
        return asarray(np.ones(1))
    alpha = (M - 1) / 2.0
    n = arange(0, M).astype(dt.float64)
    r = ew.divide(ew.subtract(n, alpha), alpha)
    return ew.divide(_i0(ew.multiply(float(beta), ew.sqrt(ew.subtract(1.0, ew.square(r))))),
                     _i0(asarray(float(beta))))


_export("cbrt", _cbrt, "Elementwise cube root, real for negative inputs (integers in NumPy's float "
                       "type). Lazy.")
_export("gcd", _gcd, "Elementwise greatest common divisor of |x1| and |x2| (integers), as np.gcd. "
                     "Lazy (a device loop of Euclid's steps).")
_export("lcm", _lcm, "Elementwise least common multiple of |x1| and |x2| (integers), as np.lcm. Lazy.")
_export("ldexp", _ldexp, "x1 * 2**x2 elementwise (x2 integers). Lazy.")
_export("frexp", _frexp, "(mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in [0.5, 1) "
                         "and int32 exponents, as np.frexp. Lazy.")
_export("logaddexp2", _logaddexp2, "log2(2**x1 + 2**x2) without overflow. Lazy.")
_export("fix", _fix, "Round toward zero, keeping the dtype (np.fix). Lazy.")
_export("spacing", _spacing, "The distance from x to the next float away from zero (np.spacing). Lazy.")
_export("i0", _i0, "The modified Bessel function of the first kind, order 0 (np.i0, the same Chebyshev "
                   "expansion). Lazy.")
_export("kaiser", _kaiser, "The Kaiser window of M points with shape parameter beta. Lazy.")


# --- editing arrays ------------------------------------------------------------------------------
def _host_index(obj, op):
    if isinstance(obj, Array):
        refuse_data_dependent(f"{op}()", "the indices decide where the elements go",
                              "pass the indices as a list or NumPy array")
        return obj.numpy()
    if isinstance(obj, slice):
        return obj
    idx = np.asarray(obj)
    return idx.astype(np.intp) if idx.size == 0 else idx     # [] deletes (inserts) nothing


def _along(x, axis, op):
    if axis is None:
        return mv.reshape(x, (-1,)), 0
    return x, axis_of(axis, x.ndim, op, x)


def _np_positions(fn, *args, op):
    try:
        return fn(*args)
    except IndexError as e:
        raise PootIndexError(f"{op}: {e}") from None
    except (ValueError, TypeError) as e:
        raise ShapeError(f"{op}: {e}") from None


def _insert(arr_, obj, values, axis=None):
    x, ax = _along(arr(arr_, "insert", (values,)), axis, "insert")
    n = x.shape[ax]
    idx = _host_index(obj, "insert")
    if isinstance(idx, slice):
        idx = np.arange(*idx.indices(n))
    if idx.dtype == np.bool_:
        raise PootIndexError("insert: boolean obj is not supported; pass integer indices")
    check_scalars_fit(values, x.dtype, "insert")      # NumPy 2 refuses insert(u8, 0, 300)
    v = arr(values, "insert", (x,)).astype(x.dtype)
    if v.ndim < x.ndim:
        v = mv.reshape(v, (1,) * (x.ndim - v.ndim) + v.shape)
    if idx.ndim == 0:
        v = mv.moveaxis(v, 0, ax)
    count = v.shape[ax] if idx.size == 1 or idx.ndim == 0 else idx.size
    if idx.ndim != 0 and idx.size == 1:
        idx = idx.reshape(-1)[0]
    shape = x.shape[:ax] + (count,) + x.shape[ax + 1:]
    try:
        v = mv.broadcast_to(v, shape)
    except ShapeError:
        raise ShapeError(f"insert: values of shape {arr(values).shape} do not fit the inserted shape "
                         f"{shape}") from None
    pos = _np_positions(np.insert, np.arange(n), idx, n + np.arange(count), op="insert")
    return take(mv.concatenate([x, v], axis=ax), pos, axis=ax)


def _delete(arr_, obj, axis=None):
    x, ax = _along(arr(arr_), axis, "delete")
    idx = _host_index(obj, "delete")
    keep = _np_positions(np.delete, np.arange(x.shape[ax]), idx, op="delete")
    return take(x, keep, axis=ax)


def _block_depth(item, path):
    if isinstance(item, tuple):
        raise ShapeError(f"block: arrays{path} is a tuple; only lists can be used to arrange blocks")
    if isinstance(item, list):
        if not item:
            raise ShapeError(f"block: arrays{path} is an empty list")
        depths = [_block_depth(it, f"{path}[{k}]") for k, it in enumerate(item)]
        if len(set(d for d, _ in depths)) != 1:
            raise ShapeError(f"block: list depths are mismatched inside arrays{path}")
        return depths[0][0] + 1, max(m for _, m in depths)
    return 0, arr(item).ndim


def _block(arrays):
    depth, most = _block_depth(arrays, "")
    ndim = max(depth, most)

    def build(item, level):
        if level == depth:
            a = arr(item)
            return mv.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
        return mv.concatenate([build(it, level + 1) for it in item], axis=level - depth)

    return build(arrays, 0)


def _resize(a, new_shape):
    x = mv.reshape(arr(a), (-1,))
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(map(operator.index, new_shape))
    if any(s < 0 for s in shape):
        raise ShapeError(f"resize: all elements of new_shape must be non-negative, got {shape}")
    n = math.prod(shape)
    if x.size == 0 or n == 0:
        return zeros(shape, dtype=x.dtype, device=x.device)
    return mv.reshape(take(x, np.arange(n) % x.size), shape)


def _rollaxis(a, axis, start=0):
    x = arr(a)
    n = x.ndim
    ax = axis_of(axis, n, "rollaxis", x)
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise ShapeError(f"rollaxis: start {start - n if start < 0 else start} is out of bounds for "
                         f"an array of dimension {n}")
    if ax < start:
        start -= 1
    if ax == start:
        return x
    order = [k for k in range(n) if k != ax]
    order.insert(start, ax)
    return mv.permute_dims(x, tuple(order))


def _trim_zeros(filt, trim="fb", axis=None):
    x = arr(filt)
    trim = str(trim).lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ShapeError(f"trim_zeros: trim must be a combination of 'f' and 'b', got {trim!r}")
    refuse_data_dependent("trim_zeros()", "its length depends on the values", "slice with known bounds")
    nz = x.numpy() != 0
    axes = range(x.ndim) if axis is None else [axis_of(a, x.ndim, "trim_zeros", x) for a in np.atleast_1d(axis)]
    index = [slice(None)] * x.ndim
    for ax in axes:
        others = tuple(k for k in range(x.ndim) if k != ax)
        hit = np.flatnonzero(nz.any(axis=others) if others else nz)
        if not hit.size:        # all zero: empty along every trimmed axis
            index[ax] = slice(0, 0)
            continue
        index[ax] = slice(int(hit[0]) if "f" in trim else 0, int(hit[-1]) + 1 if "b" in trim else x.shape[ax])
    return x[tuple(index)]


def _choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise out_error("choose", out, _choose(a, choices, None, mode))
    if mode not in ("raise", "wrap", "clip"):
        raise ShapeError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    idx = arr(a)
    if idx.dtype.kind not in "iub":
        raise DTypeError(f"choose: a must be integers, got {idx.dtype.name}")
    cs = [arr(c) for c in choices]
    if not cs:
        raise ShapeError("choose: choices must not be empty")
    k = len(cs)
    if mode == "raise" and not isinstance(a, Array):
        host = np.asarray(a)
        if host.size and (host.min() < 0 or host.max() >= k):
            raise PootIndexError(f"choose: invalid entry in choice array (indices must be in [0, {k - 1}])")
    d = dt.result_type(*[c.dtype for c in cs])
    shape = mv.broadcast_shapes(idx.shape, *[c.shape for c in cs])
    stacked = mv.stack([mv.broadcast_to(c.astype(d), shape) for c in cs])
    idx = idx.astype(dt.int64)
    if mode == "wrap":
        idx = ew.remainder(idx, k)
    elif mode == "clip":
        idx = ew.minimum(ew.maximum(idx, 0), k - 1)
    else:
        idx = where(ew.less(idx, 0), k, idx)       # negative: out of range, as NumPy's raise mode
    idx = mv.reshape(mv.broadcast_to(idx, shape), (1,) + shape)
    return mv.reshape(take_along_axis(stacked, idx, axis=0), shape)


_export("insert", _insert, "`values` inserted before the indices `obj` along `axis` (flattened when "
                           "None), as np.insert. Lazy (indices held in a poot array are read).")
_export("delete", _delete, "The array without the sub-arrays at `obj` along `axis`, as np.delete. Lazy "
                           "(indices held in a poot array are read).")
_export("block", _block, "An array assembled from nested lists of blocks, as np.block. Lazy.")
_export("resize", _resize, "The array repeated (or cut) to `new_shape` in C order, as np.resize. Lazy.")
_export("rollaxis", _rollaxis, "`axis` moved to before position `start`, as np.rollaxis. Lazy.")
_export("trim_zeros", _trim_zeros, "The array without its leading ('f') and trailing ('b') zeros "
                                   "(along every axis, or `axis`). Reads the values: the length "
                                   "depends on them.")
_export("choose", _choose, "choices[a] elementwise after broadcasting (mode 'raise', 'wrap' or "
                           "'clip'). Lazy; with indices held in a poot array, an out-of-range index "
                           "raises at the next host read.")


# --- products ------------------------------------------------------------------------------------
def _vector_check(op, x1, x2, matrix_first):
    a, b = arr(x1), arr(x2)
    m, v = (a, b) if matrix_first else (b, a)
    if m.ndim < 2 or v.ndim < 1:
        raise ShapeError(f"{op}: needs a matrix (2+ dims) and a vector (1+ dims), got {a.aval} and {b.aval}")
    k = m.shape[-1] if matrix_first else m.shape[-2]
    if v.shape[-1] != k:
        raise ShapeError(f"{op}: the vector's length {v.shape[-1]} does not match the matrix's "
                         f"{'columns' if matrix_first else 'rows'} ({k}) in {a.aval} and {b.aval}")
    return a, b


def _matvec(x1, x2, /):
    a, b = _vector_check("matvec", x1, x2, True)
    return mv.squeeze(matmul(a, mv.expand_dims(b, -1)), -1)


def _vecmat(x1, x2, /):
    a, b = _vector_check("vecmat", x1, x2, False)
    if a.dtype.kind == "c":
        a = conj(a)
    return mv.squeeze(matmul(mv.expand_dims(a, -2), b), -2)


def _cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return cumulative(x, axis, dtype, include_initial, red.cumprod, 1, "cumulative_prod")


_export("matvec", _matvec, "Matrix-vector products over the last axes, broadcasting the rest. Lazy.")
_export("vecmat", _vecmat, "Vector-matrix products (the vector conjugated) over the last axes. Lazy.")
_export("cumulative_prod", _cumulative_prod, "Cumulative product along `axis` (optional for 1-D), with "
                                             "include_initial to start with a one. Lazy.")


def _as_ufuncs(namespace: dict, table: dict) -> None:
    """NumPy's binary functions here are ufuncs there (np.lcm.reduce(periods), np.gcd.accumulate):
    each becomes a poot Ufunc with NumPy's identity and whether its reduction may reorder."""
    from poot.trace.ufunc import Ufunc

    for name, (identity, reorderable) in table.items():
        namespace[name] = Ufunc(namespace[name], name, identity, reorderable)


_as_ufuncs(globals(), {"gcd": (0, True), "lcm": (None, True), "logaddexp2": (-math.inf, True)})
