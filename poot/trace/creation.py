"""Creating arrays: from host data, constants and index ranges. NumPy's defaults (float64, int64).

Arrays made by `zeros`, `full`, `arange`, `eye`... are lazy (`full`/`iota` equations: nothing is
allocated or copied until they are used). Host data is copied once to the device: poot arrays are
immutable values, so `asarray` copies NumPy data too (later changes to the NumPy array do not leak in).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import (ArgumentError, ArgumentOverflowError, AxisError, CopyError, DomainError, DTypeError,
                         ShapeError, ShapeTypeError, api_boundary)
from poot.trace import context as _dev
from poot.trace.array import Array, host_array
from poot.trace.lazy import check_scalar_fits, constant, from_numpy, record
from poot.trace.numpy_keywords import any_memory_order
from poot.trace.promote import cast, is_weak, strong_cast, wrap

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity", "from_dlpack",
           "astype", "copy", "meshgrid", "tril", "triu"]


def _device(device) -> str:
    return _dev.current() if device is None else _dev.canonical(device)


def _dtype(dtype):
    return None if dtype is None else dt.as_dtype(dtype)


def normalize_shape(shape, op: str, what: str = "shape") -> tuple[int, ...]:
    """`shape` (an int or a sequence of ints, as NumPy takes one) as a tuple of sizes, none negative."""
    try:
        shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
            tuple(operator.index(s) for s in shape)
    except TypeError:
        raise ShapeTypeError(f"{op}: a {what} is an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ShapeError(f"{op}: negative sizes are not allowed in {what} {shape}")
    return shape


def _contains_array(obj) -> bool:
    if isinstance(obj, Array):
        return True
    return isinstance(obj, (list, tuple)) and any(_contains_array(o) for o in obj)


def _array(obj, dtype=None, *, copy=True, order="K", device=None, ndmin=0):
    """A poot array from `obj`: an Array, a NumPy array, a (nested) list or a scalar. Lists of poot
    Arrays stack lazily. `copy`: values are immutable, so poot never needs to copy an Array and always
    copies host data; copy=False, NumPy 2's "never copy", is asarray's: host data, a dtype or a device
    change raise CopyError (NumPy's ValueError) rather than copying silently. `order` is NumPy's memory
    layout, which poot does not model (every array is C-ordered; the values are NumPy's for any order)."""
    if copy is False:
        out = _asarray(obj, dtype, device=device, copy=False)
        return out if out.ndim >= ndmin else out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    if order != "K":
        any_memory_order("array", order)
    if type(obj) is np.ndarray and dtype is None and device is None and not ndmin:
        d = dt.BY_NUMPY.get(obj.dtype)        # the commonest call, `pt.asarray(numpy_array)`: no checks
        if d is not None:                        # left to make (host_array's are for other objects)
            return Array(from_numpy(obj, _dev.current(), d))
    d = _dtype(dtype)
    if isinstance(obj, Array):
        out = obj if device is None else obj.to(device)
        if d is not None or out._node.weak == 1:    # np.asarray(0.5) is a float64 array, not weak
            out = Array(strong_cast(out._node, d or out.dtype))
    elif isinstance(obj, (list, tuple)) and obj and _contains_array(obj):
        from poot.trace.movement import stack

        out = stack([_array(o, device=device) for o in obj])
        out = out if d is None else Array(cast(out._node, d))
    elif is_weak(obj):
        dev = _device(device)
        d = d or dt.scalar_dtype(obj)
        check_scalar_fits(obj, d, "array")
        out = Array(constant(obj, d, dev))
    else:
        a = host_array(obj, "array", d)
        out = Array(from_numpy(a, _device(device)))
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def _asarray(obj, /, dtype=None, order=None, *, device=None, copy=None):
    """Like `array`; an Array of the right dtype and device is returned as it is. The array API's
    `copy`: True always gives a new array; False refuses (CopyError) whenever a copy is needed,
    which is always for host data (it moves into device memory) and for a dtype or device change.
    `order` ('C', 'F', 'A', 'K') is accepted and not modelled: every poot array is C-ordered, and the
    values do not depend on the layout."""
    any_memory_order("asarray", order)
    if copy is False:
        if not isinstance(obj, Array):
            raise CopyError(f"asarray(copy=False): a {type(obj).__name__} is always copied into "
                            f"device memory; pass copy=None (copy when needed) or copy=True")
        d = _dtype(dtype)
        if (d is not None and d is not obj.dtype) or \
                (device is not None and _dev.canonical(device) != obj.device):
            raise CopyError(f"asarray(copy=False): changing {obj.aval} on '{obj.device}' to "
                            f"dtype {dtype} / device {device} needs a copy")
        return obj
    out = _array(obj, dtype, device=device)
    return out.copy() if copy and out is obj else out


array = api_boundary(_array)
asarray = api_boundary(_asarray)
array.__name__, asarray.__name__ = "array", "asarray"


def _fill_dtype(fill_value):
    """The dtype NumPy gives an array of `fill_value`: a Python int past int64 (but within uint64)
    is uint64, as np.asarray(2**63) is."""
    if isinstance(fill_value, np.generic):
        return dt.as_dtype(fill_value.dtype)
    if type(fill_value) is int and 2**63 <= fill_value < 2**64:
        return dt.uint64
    return dt.scalar_dtype(fill_value)


@api_boundary
def full(shape, fill_value, dtype=None, order="C", *, device=None):
    """An array of `shape` filled with `fill_value` (dtype from the value when not given). `order` is
    accepted and not modelled (every poot array is C-ordered), as for zeros, ones and empty."""
    any_memory_order("full", order)
    shape = normalize_shape(shape, "full")
    d = _dtype(dtype)
    if isinstance(fill_value, Array) or (not is_weak(fill_value) and np.ndim(fill_value) > 0):
        from poot.trace.movement import broadcast_to

        v = _array(fill_value, d, device=device)
        return broadcast_to(v, shape)
    if isinstance(fill_value, np.ndarray):
        fill_value = fill_value.item()
    d = d or _fill_dtype(fill_value)
    if isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    if isinstance(fill_value, complex) and d.kind != "c":
        # NumPy drops the imaginary part with a ComplexWarning: a real part of 0 would silently stand in
        # for 1j, so only a value that is real anyway is taken
        if fill_value.imag != 0:
            raise DTypeError(f"full: fill_value {fill_value!r} is complex and dtype {d.name} is not; pass "
                             f"fill_value.real or a complex dtype")
        fill_value = fill_value.real
    check_scalar_fits(fill_value, d, "full")
    return Array(constant(fill_value, d, _device(device), shape))


@api_boundary
def zeros(shape, dtype=None, order="C", *, device=None):
    any_memory_order("zeros", order)
    return Array(constant(0, _dtype(dtype) or dt.float64, _device(device), normalize_shape(shape, "zeros")))


@api_boundary
def ones(shape, dtype=None, order="C", *, device=None):
    any_memory_order("ones", order)
    return Array(constant(1, _dtype(dtype) or dt.float64, _device(device), normalize_shape(shape, "ones")))


@api_boundary
def empty(shape, dtype=None, order="C", *, device=None):
    """Like zeros: poot never hands out uninitialized memory."""
    any_memory_order("empty", order)
    return Array(constant(0, _dtype(dtype) or dt.float64, _device(device), normalize_shape(shape, "empty")))


def _like(name, fn):
    def like(x, dtype=None, order="K", subok=True, shape=None, *, device=None):   # NumPy's order
        x = _array(x)
        any_memory_order(name, order)
        return fn(x.shape if shape is None else shape,
                  dtype=x.dtype if dtype is None else dtype,
                  device=x.device if device is None else device)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = (f"{fn.__name__} with the shape, dtype and device of `x` unless given; `order` is accepted "
                    f"and not modelled (every poot array is C-ordered).")
    return api_boundary(like)


zeros_like = _like("zeros_like", zeros)
ones_like = _like("ones_like", ones)
empty_like = _like("empty_like", empty)


@api_boundary
def full_like(x, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """full with the shape, dtype and device of `x` unless given; `order` is accepted and not modelled."""
    any_memory_order("full_like", order)
    x = _array(x)
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype,
                device=x.device if device is None else device)


def _iota(shape, axis, dtype, device):
    return record("iota", (), {"shape": tuple(shape), "axis": axis, "dtype": dtype}, device)


@api_boundary
def arange(start, stop=None, step=1, dtype=None, *, device=None):
    """Evenly spaced values in [start, stop), NumPy's numbers: start + i * step for integers, and
    for floats NumPy's fill (`_arange_filled`)."""
    # a 0-d real array bound (`arange(labels.max() + 1)`) is read as its value, as NumPy does: the length
    # of the result depends on it (inside @pt.jit that read is a TracerError)
    start, stop, step = (v._scalar("arange") if isinstance(v, Array) and v.ndim == 0 and v.dtype.kind in "biuf"
                         else v for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if isinstance(v, complex) or isinstance(v, Array):
            raise DTypeError("arange: start, stop and step must be real Python or NumPy scalars (or 0-d real "
                             "arrays)")
    if step == 0:
        raise ShapeError("arange: step must not be zero")
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):   # the length would be NaN or inf
            raise DomainError(f"arange: cannot compute length: {name}={v} is not finite (as NumPy's "
                              f"ValueError)")
    is_float = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
    d = _dtype(dtype) or (dt.float64 if is_float or _past_int64(start, stop, step) else dt.int64)
    if d.kind in "iu" and not is_float:
        _check_integer_bounds(start, stop, step, d)
    n = max(0, math.ceil((stop - start) / step))
    dev = _device(device)
    if d.kind == "f" or (is_float and d.kind in "iu"):
        return Array(cast(_arange_filled(start, step, n, d, dev), d))
    work = dt.float64 if is_float else dt.int64
    r = _iota((n,), 0, work, dev)
    if step != 1:
        r = record("mul", (r, constant(step, work, dev)))
    if start != 0:
        r = record("add", (r, constant(start, work, dev)))
    return Array(cast(r, d))


def _past_int64(*values) -> bool:
    """Whether an integer bound lies outside int64, where NumPy's arange computes in float64 (a bound
    that needs uint64 and one that is int64 share only float64). Past uint64 NumPy makes an object
    array, which poot has not: refused."""
    ints = [int(v) for v in values if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
    if any(v >= 2**64 or v < -2**63 for v in ints):
        raise ArgumentOverflowError(f"arange: the integer bounds {tuple(values)} need more than 64 bits "
                                    f"(NumPy makes an object array); use float bounds")
    return any(v >= 2**63 for v in ints)


def _check_integer_bounds(start, stop, step, d) -> None:
    """Integer bounds must fit the 64 bits the values are computed in (int64, modulo 2**64: exact for
    every bound a uint64 or int64 holds; narrower dtypes then wrap as NumPy's casts do)."""
    lo, hi = (0, 2**64 - 1) if d is dt.uint64 else (-2**63, 2**63 - 1)
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not lo <= int(v) <= hi and not (name == "stop" and d is dt.uint64 and int(v) == 2**64):
            raise ArgumentOverflowError(f"arange: {name}={v} does not fit {d.name} (NumPy's OverflowError)")


def _arange_filled(start, step, n: int, d, dev):
    """NumPy's arange values for a float result, or float bounds into an integer one: the first two
    elements are start and start + step stored in `d`, and element i is first + i * (second - first),
    computed in float64 for float64, in float32 for narrower floats (NumPy's fill functions), in int64
    for integers (arange(0.5, 5, 1.5, dtype=int) is [0, 2, 4]). So arange(1.0, 2.0, 0.1)[-1] is NumPy's
    1.9000000000000008, not 1.9."""
    work = dt.int64 if d.kind in "iu" else dt.float64 if d is dt.float64 else dt.float32
    first, second = (_stored(v, d, work) for v in (start, start + step))
    delta = second - first
    i = _iota((n,), 0, work, dev)
    r = record("add", (constant(first, work, dev), record("mul", (i, constant(delta, work, dev)))))
    if n > 1:     # element 1 is second itself (first + delta need not round back to it)
        one = record("eq", (i, constant(1, work, dev)))
        r = record("select", (one, constant(second, work, dev), r))
    return r


def _stored(v, d, work):
    """Python/NumPy scalar `v` as NumPy stores it in an array of `d`, then read in `work` precision."""
    with np.errstate(all="ignore"):
        x = np.asarray(v, dtype=np.float64).astype(d.np)
        return work.np.type(x).item() if work.kind == "f" else int(x)


def _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis, device):
    """linspace with array ends, NumPy's algorithm: the samples run along a new axis (`axis` of the
    result), computed in the ends' floating dtype: start + i * step, the last sample exactly stop."""
    from poot.trace import elementwise as ew
    from poot.trace.movement import broadcast_shapes, moveaxis, reshape
    from poot.trace.selection import where

    dev = _device(device)
    work = _linspace_array_dtype(start, stop)
    a, b = (v if isinstance(v, Array) else asarray(v, device=dev) for v in (start, stop))
    a, b = a.astype(work), b.astype(work)
    shape = broadcast_shapes(a.shape, b.shape)
    div = num - 1 if endpoint else num
    delta = ew.subtract(b, a)
    i = reshape(arange(num, dtype=work, device=dev), (num,) + (1,) * len(shape))
    step = ew.divide(delta, div) if div > 0 else None
    if step is None:
        y = ew.multiply(i, delta)
    else:   # NumPy: (i / div) * delta where a step underflows to zero
        y = where(ew.equal(step, 0), ew.multiply(ew.divide(i, div), delta), ew.multiply(i, step))
    y = ew.add(y, a)
    if endpoint and num > 1:
        y = where(ew.equal(i, num - 1), b, y)
    y = moveaxis(y, 0, axis) if axis != 0 else y
    d = _dtype(dtype) or work
    if d.kind in "iu":
        y = ew.floor(y)
    out = y.astype(d)
    if retstep:
        return out, (step if step is not None else ew.multiply(delta, math.nan))
    return out


def _linspace_array_dtype(start, stop) -> dt.DType:
    """NumPy's result_type(start, stop, float(num)) when an end is an array: the arrays' dtypes (and
    NumPy scalars') decide, a Python number is weak (linspace(float32 array, 2) is float32) except
    that a Python complex makes the result complex; integers give float64."""
    weak = (bool, int, float, complex)
    strong = [v.dtype if isinstance(v, Array) else dt.as_dtype(np.asarray(v).dtype)
              for v in (start, stop) if isinstance(v, Array) or not type(v) in weak]
    w = dt.result_type(*strong) if strong else dt.float64
    w = w if w.kind in "fc" else dt.float64
    if w.kind != "c" and any(type(v) is complex for v in (start, stop)):
        w = dt.result_type(w, dt.complex64)
    return w


def _linspace_dtype(start, stop) -> dt.DType:
    """NumPy's result_type(start, stop, float(num)) for scalar ends: a NumPy scalar's dtype is strong and
    a Python number weak (linspace(np.float32(0), 1) is float32), integers give float64, and a Python
    complex makes the result complex."""
    strong = [dt.as_dtype(v.dtype) for v in (start, stop) if isinstance(v, np.generic)]
    w = dt.result_type(*strong) if strong else dt.float64
    w = w if w.kind in "fc" else dt.float64
    if w.kind != "c" and any(isinstance(v, complex) for v in (start, stop)):
        w = dt.result_type(w, dt.complex64)
    return w


@api_boundary
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """`num` evenly spaced values from start to stop (NumPy's algorithm; integer dtypes floor)."""
    num = operator.index(num)
    if num < 0:
        raise ShapeError(f"linspace: num must be non-negative, got {num}")
    if isinstance(start, Array) or isinstance(stop, Array) or np.ndim(start) or np.ndim(stop):
        return _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis, device)
    if axis not in (0, -1):
        raise AxisError(f"linspace: axis {axis} is out of bounds for the 1-D result of scalar start/stop")
    w = _linspace_dtype(start, stop)
    dev = _device(device)
    if w is not dt.float64:     # computed in that dtype, as NumPy does (the float64 path below would not)
        a, b = (asarray(v, dtype=w, device=dev) for v in (start, stop))
        return _linspace_arrays(a, b, num, endpoint, retstep, dtype, axis, device)
    d = _dtype(dtype) or dt.float64
    f = dt.float64
    div = num - 1 if endpoint else num
    delta = float(stop) - float(start)
    y = _iota((num,), 0, f, dev)
    if div > 0:
        step = delta / div
        if step != 0:
            y = record("mul", (y, constant(step, f, dev)))
        else:  # NumPy: (i / div) * delta when the step underflows to zero
            y = record("mul", (record("div", (y, constant(div, f, dev))), constant(delta, f, dev)))
    else:
        step = math.nan
        y = record("mul", (y, constant(delta, f, dev)))
    y = record("add", (y, constant(float(start), f, dev)))
    if endpoint and num > 1:
        last = record("eq", (_iota((num,), 0, dt.int64, dev), constant(num - 1, dt.int64, dev)))
        y = record("select", (last, constant(float(stop), f, dev), y))
    if d.kind in "iu":
        y = record("floor", (y,))
    out = Array(cast(y, d))
    return (out, step) if retstep else out


@api_boundary
def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-D array with ones on the k-th diagonal."""
    M = N if M is None else M
    shape = normalize_shape((N, M), "eye")
    k = _diagonal_offset(k, "eye")
    dev = _device(device)
    rows = _iota(shape, 0, dt.int64, dev)
    if k:
        rows = record("add", (rows, constant(k, dt.int64, dev)))
    on = record("eq", (rows, _iota(shape, 1, dt.int64, dev)))
    return Array(cast(on, _dtype(dtype) or dt.float64))


@api_boundary
def identity(n, dtype=None, *, device=None):
    return eye(n, dtype=dtype, device=device)


def _diagonal_offset(k, op: str) -> int:
    """A diagonal's offset `k` as an int (NumPy refuses a float or None there); an offset past any
    matrix is clipped, its diagonal being empty (or everything) either way."""
    try:
        k = operator.index(k)
    except TypeError:
        raise ArgumentError(f"{op}: the diagonal offset k must be an integer, got {k!r}") from None
    return max(min(k, 2**62), -2**62)


def _tri_mask(x, k, lower):
    k = _diagonal_offset(k, "tril" if lower else "triu")
    n = x._node
    if x.ndim < 2:
        raise ShapeError(f"{'tril' if lower else 'triu'}: needs an array of 2 or more dimensions, "
                         f"got {x.aval}")
    shape = x.shape[-2:]
    rows = _iota(shape, 0, dt.int64, n.device)
    cols = _iota(shape, 1, dt.int64, n.device)
    cols = record("sub", (cols, constant(k, dt.int64, n.device))) if k else cols
    keep = record("le" if lower else "ge", (cols, rows))
    return Array(record("select", (record("broadcast", (keep,), {"shape": x.shape}), n,
                                   constant(0, x.dtype, n.device))))


@api_boundary
def tril(x, k=0):
    """The lower triangle of the last two axes (elements above the k-th diagonal set to zero)."""
    return _tri_mask(_array(x), k, True)


@api_boundary
def triu(x, k=0):
    """The upper triangle of the last two axes (elements below the k-th diagonal set to zero)."""
    return _tri_mask(_array(x), k, False)


@api_boundary
def meshgrid(*xs, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (NumPy's meshgrid, lazily broadcast). With
    sparse=True each array keeps size 1 along the other axes, as NumPy's. `copy` is accepted: poot
    arrays are values, so a broadcast result is never a view to write through."""
    from poot.trace.movement import broadcast_to

    if indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_array(x).reshape(-1) for x in xs]
    pos = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) >= 2:     # 'xy' swaps the first two axes of the grid
        pos[0], pos[1] = 1, 0
    shape = [1] * len(arrays)
    for p, a in zip(pos, arrays):
        shape[p] = a.shape[0]
    out = []
    for p, a in zip(pos, arrays):
        view = [1] * len(arrays)
        view[p] = a.shape[0]
        a = a.reshape(tuple(view))
        out.append(a if sparse else broadcast_to(a, tuple(shape)))
    return tuple(out)


@api_boundary
def from_dlpack(x, /, *, device=None, copy=None):
    """A poot array from a DLPack-exporting CPU object (a poot array too). The data is always copied in
    (copy=None or True): poot arrays never alias memory a producer could still write, so copy=False
    raises CopyError (a BufferError) for every producer but a poot array. See poot/trace/dlpack.py."""
    from poot.trace.dlpack import from_dlpack_array

    return from_dlpack_array(x, _device(device), copy)


@api_boundary
def astype(x, dtype, /, *, copy=True, device=None):
    """`x` converted to `dtype` (NumPy's unsafe casting: floats truncate toward zero into ints)."""
    x = _array(x, device=device)
    d = dt.as_dtype(dtype)
    if not copy and d is x.dtype:  # the standard: copy=False with the same dtype returns x itself
        return x
    return wrap(strong_cast(x._node, d))


@api_boundary
def copy(x, order="K", subok=False):
    """A new handle on the same (immutable) value; any `order` gives NumPy's values (poot arrays are all
    C-ordered: memory order is not modelled)."""
    any_memory_order("copy", order)
    return _array(x).copy()
