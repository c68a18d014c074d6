"""NumPy's queries and conversions (ndim, shape, size, isscalar, issubdtype, promote_types,
min_scalar_type, asanyarray, ascontiguousarray, asfortranarray, asarray_chkfinite, real_if_close,
array_equiv, iterable, mask_indices, shares_memory, may_share_memory, isfortran, require, common_type),
arrays made from host data (fromiter, frombuffer, fromstring),
the text forms (array2string, array_str, array_repr, format_float_positional and
format_float_scientific) and the helpers that call a user function
(apply_along_axis, apply_over_axes, piecewise).

The queries answer from shapes and dtypes; asarray_chkfinite, real_if_close and array_equiv read the
values (inside @pt.jit: TracerError). The callable helpers are lazy when the functions are.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DomainError, DTypeError, ShapeError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.array_api_functions import imag, real
from poot.trace.creation import asarray, zeros
from poot.trace.indexing import refuse_data_dependent
from poot.trace.movement import arr, axis_of
from poot.trace.selection import where

__all__: list[str] = []
_export = exporter(globals(), __all__)

# --- queries and conversions ---------------------------------------------------------------------
def _ndim(a):
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def _shape(a):
    return a.shape if isinstance(a, Array) else np.shape(a)


def _size(a, axis=None):
    if not isinstance(a, Array):
        return np.size(a, axis)
    if axis is None:
        return a.size
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return math.prod(a.shape[axis_of(k, a.ndim, "size", a)] for k in axes)


def _isscalar(element):
    return not isinstance(element, Array) and bool(np.isscalar(element))


def _np_dtype_arg(x):
    """A dtype argument in NumPy's terms (poot dtypes and arrays by their NumPy dtype)."""
    if isinstance(x, dt.DType):
        return x.np
    if isinstance(x, Array):
        return x.dtype.np
    return x


def _issubdtype(arg1, arg2):
    try:
        return bool(np.issubdtype(_np_dtype_arg(arg1), _np_dtype_arg(arg2)))
    except TypeError as e:
        raise DTypeError(f"issubdtype: {e}") from None


def _promote_types(type1, type2):
    return dt.result_type(dt.as_dtype(_np_dtype_arg(type1)), dt.as_dtype(_np_dtype_arg(type2)))


def _min_scalar_type(a):
    if isinstance(a, Array):
        if a.ndim:
            return a.dtype
        refuse_data_dependent("min_scalar_type()", "the dtype depends on the value", "pass a Python scalar")
        a = a.numpy()
    return dt.as_dtype(np.min_scalar_type(a))


def _asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype=dtype, device=device, copy=copy)


def _ascontiguousarray(a, dtype=None, *, like=None):
    x = asarray(a, dtype=dtype)
    return mv.reshape(x, (1,)) if x.ndim == 0 else x


def _asfortranarray(a, dtype=None, *, like=None):
    """As ascontiguousarray: the memory order is not modelled (a poot array is read out in C order,
    and its values are the same in either)."""
    return _ascontiguousarray(a, dtype)


def _host_dtype(dtype, op: str) -> np.dtype:
    """The NumPy dtype to read host data as: a poot-supported `dtype`, or one in the other byte order
    (a big-endian file's '>f4'), read as such and made native by asarray. A DTypeError names the
    unsupported ones."""
    try:
        return dt.as_dtype(dtype).np
    except DTypeError:
        try:
            swapped = np.dtype(dtype)
        except TypeError:
            raise DTypeError(f"{op}: unsupported dtype {dtype!r}") from None
        if swapped.byteorder in "=|":
            raise
        dt.as_dtype(swapped.newbyteorder("="))          # its native form must be one poot has
        return swapped


def _from_host(op: str, make, device):
    """`make()` (a NumPy constructor) as a poot array; NumPy's ValueError and TypeError about the
    data become a ShapeError naming `op`."""
    try:
        host = make()
    except (ValueError, TypeError) as e:
        raise ShapeError(f"{op}: {e}") from None
    return asarray(host, device=device)


def _fromiter(iter_, dtype, count=-1, *, like=None, device=None):
    d = _host_dtype(dtype, "fromiter")
    return _from_host("fromiter", lambda: np.fromiter(iter_, dtype=d, count=count), device)


def _frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None, device=None):
    d = _host_dtype(dtype, "frombuffer")
    return _from_host("frombuffer", lambda: np.frombuffer(buffer, dtype=d, count=count, offset=offset),
                      device)


def _fromstring(string, dtype=float, count=-1, *, sep, like=None, device=None):
    if not sep:
        raise ArgumentError("fromstring: the binary mode (sep='') is removed from NumPy; use "
                            "frombuffer for bytes, or pass sep=' ' to parse text")
    d = _host_dtype(dtype, "fromstring")
    return _from_host("fromstring", lambda: np.fromstring(string, dtype=d, count=count, sep=sep), device)


def _text_args(a):
    """The values on the host (a traced array refuses with TracerError: text needs them)."""
    return a.numpy() if isinstance(a, Array) else np.asarray(a)


def _array2string(a, *args, **kwargs):
    return np.array2string(_text_args(a), *args, **kwargs)


def _array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(_text_args(a), max_line_width, precision, suppress_small)


def _array_repr(arr_, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(_text_args(arr_), max_line_width, precision, suppress_small)


def _float_scalar(x, op: str):
    """A 0-d poot array as the NumPy scalar of its own dtype (so a float32 0.1 prints as '0.1', not
    as the float64 0.10000000149011612 that float() would give); other values pass to NumPy."""
    if not isinstance(x, Array):
        return x
    if x.ndim != 0:
        raise ShapeError(f"{op}: needs a scalar (a 0-d array), got {x.aval}")
    return x.numpy()[()]


def _format_float_positional(x, precision=None, unique=True, fractional=True, trim="k", sign=False,
                             pad_left=None, pad_right=None, min_digits=None):
    return np.format_float_positional(_float_scalar(x, "format_float_positional"), precision, unique,
                                      fractional, trim, sign, pad_left, pad_right, min_digits)


def _format_float_scientific(x, precision=None, unique=True, trim="k", sign=False, pad_left=None,
                             exp_digits=None, min_digits=None):
    return np.format_float_scientific(_float_scalar(x, "format_float_scientific"), precision, unique,
                                      trim, sign, pad_left, exp_digits, min_digits)


def _iterable(y):
    """Whether iter(y) works (a 0-d array: False), as np.iterable."""
    if isinstance(y, Array):
        return y.ndim > 0
    return bool(np.iterable(y))


def _mask_indices(n, mask_func, k=0):
    """The (row, column) indices where mask_func(ones((n, n)), k) is nonzero. The mask is made from
    a NumPy array, so it is a constant: these indices work inside @pt.jit too."""
    m = mask_func(np.ones((n, n), dtype=int), k)
    return tuple(asarray(i) for i in np.nonzero(_text_args(m)))


def _shares_memory(a, b, max_work=None):
    """Whether a write through one could change the other. Two poot arrays are values (a write
    rebinds only the array written), so only the same Array object does; NumPy arrays ask NumPy."""
    if isinstance(a, Array) or isinstance(b, Array):
        return a is b
    return bool(np.shares_memory(a, b, max_work))


def _may_share_memory(a, b, max_work=None):
    if isinstance(a, Array) or isinstance(b, Array):
        return a is b
    return bool(np.may_share_memory(a, b, max_work))


def _isfortran(a):
    """True only for a Fortran-ordered array that is not also C-ordered (np.isfortran): never for a
    poot array, which is C-ordered, read out as `x.flags` says; a NumPy array answers for itself."""
    if isinstance(a, np.ndarray):
        return bool(np.isfortran(a))
    return bool(arr(a).flags.fnc)


_REQUIREMENTS = {"C", "C_CONTIGUOUS", "CONTIGUOUS", "F", "F_CONTIGUOUS", "FORTRAN", "A", "ALIGNED",
                 "W", "WRITEABLE", "O", "OWNDATA", "E", "ENSUREARRAY"}


def _require(a, dtype=None, requirements=None, *, like=None):
    """asarray(a, dtype) after checking the requirement names: a poot array meets every one (its
    values read out in C or Fortran order are the same values)."""
    reqs = [requirements] if isinstance(requirements, str) else list(requirements or ())
    for r in reqs:
        if not isinstance(r, str) or r.upper() not in _REQUIREMENTS:
            raise ArgumentError(f"require: unknown requirement {r!r}; NumPy's are "
                                f"{', '.join(sorted(_REQUIREMENTS))}")
    return asarray(a, dtype=dtype)


def _common_type(*arrays):
    """The float (or complex) dtype NumPy's common_type gives: integers count as float64, floats and
    complex keep their precision, complex wins. Bools are refused, as NumPy does."""
    ds = []
    for a in arrays:
        d = arr(a).dtype
        if d.kind == "b":
            raise DTypeError("common_type: can't get common type for non-numeric array (bool)")
        ds.append(dt.float64 if d.kind in "iu" else d)
    if not ds:
        return dt.float16      # NumPy's answer for no arrays
    return dt.result_type(*ds)


def _asarray_chkfinite(a, dtype=None, order=None):
    x = asarray(a, dtype=dtype)
    if x.dtype.kind in "fc":
        refuse_data_dependent("asarray_chkfinite()", "it checks the values", "use pt.isfinite")
        if not bool(red.all(ew.isfinite(x))):
            raise DomainError("asarray_chkfinite: array must not contain infs or NaNs")
    return x


def _real_if_close(a, tol=100):
    x = arr(a)
    if x.dtype.kind != "c":
        return x
    refuse_data_dependent("real_if_close()", "its dtype depends on the values", "use pt.real")
    f = dt.real_dtype(x.dtype)
    t = float(tol)
    if t > 1:
        t *= float(np.finfo(f.np).eps)
    if bool(red.all(ew.less(ew.abs(imag(x)), t))):
        return real(x)
    return x


def _array_equiv(a1, a2):
    x, y = arr(a1), arr(a2)
    try:
        mv.broadcast_shapes(x.shape, y.shape)
    except ShapeError:
        return False
    refuse_data_dependent("array_equiv()", "its result is a Python bool", "use pt.all(x == y)")
    return bool(red.all(ew.equal(x, y)))


_export("ndim", _ndim, "The number of dimensions of an array (or of what np.asarray would make).")
_export("shape", _shape, "The shape of an array (or of what np.asarray would make).")
_export("size", _size, "The number of elements, in all or along `axis`.")
_export("isscalar", _isscalar, "True for Python and NumPy scalars (never for a poot Array), as np.isscalar.")
_export("issubdtype", _issubdtype, "Whether arg1 is a dtype below arg2 in NumPy's hierarchy (poot dtypes "
                                   "or NumPy ones and abstract types such as np.floating).")
_export("promote_types", _promote_types, "The smallest dtype both types cast to safely, as a poot dtype.")
_export("min_scalar_type", _min_scalar_type, "The smallest dtype that holds the scalar's value (an "
                                             "array of 1+ dims: its own dtype).")
_export("asanyarray", _asanyarray, "As asarray (poot has no array subclasses to keep).")
_export("ascontiguousarray", _ascontiguousarray, "As asarray, with 0-d input made 1-d (poot arrays are "
                                                 "always contiguous).")
_export("asfortranarray", _asfortranarray, "As ascontiguousarray (the memory order is not modelled).")
_export("fromiter", _fromiter, "A 1-D array from an iterable's items (read on the host), as np.fromiter.")
_export("frombuffer", _frombuffer, "A 1-D array from the bytes of a buffer, as np.frombuffer (a copy).")
_export("fromstring", _fromstring, "A 1-D array parsed from text separated by `sep`, as np.fromstring.")
_export("array2string", _array2string, "The text of the values, as np.array2string (reads them).")
_export("array_str", _array_str, "The text of the values, as np.array_str (reads them).")
_export("array_repr", _array_repr, "The repr NumPy gives the values, as np.array_repr (reads them).")
_export("format_float_positional", _format_float_positional, "A float scalar in positional notation, "
        "as np.format_float_positional: the shortest digits of its own dtype (reads it).")
_export("format_float_scientific", _format_float_scientific, "A float scalar in scientific notation, "
        "as np.format_float_scientific: the shortest digits of its own dtype (reads it).")
_export("iterable", _iterable, "Whether the object can be iterated (a 0-d array cannot), as np.iterable.")
_export("mask_indices", _mask_indices, "The indices where mask_func(ones((n, n)), k) is nonzero, as "
                                       "np.mask_indices (a constant).")
_export("shares_memory", _shares_memory, "Whether a write through one array could change the other "
                                       "(two poot arrays: only if they are the same object).")
_export("may_share_memory", _may_share_memory, "As shares_memory (poot arrays are values; NumPy arrays "
                                               "ask NumPy's bounds check).")
_export("isfortran", _isfortran, "Whether the array is Fortran- and not C-ordered (never for poot arrays).")
_export("require", _require, "asarray(a, dtype) after checking NumPy's requirement names (poot arrays "
                             "meet them all).")
_export("common_type", _common_type, "The float or complex dtype the arrays share, as np.common_type "
                                     "(integers count as float64).")
_export("asarray_chkfinite", _asarray_chkfinite, "asarray, raising DomainError if floats hold inf or NaN. "
                                                 "Reads the values.")
_export("real_if_close", _real_if_close, "The real part if every imaginary part is within tol machine "
                                         "epsilons of zero, else the input. Reads the values.")
_export("array_equiv", _array_equiv, "Whether the arrays broadcast together and are equal everywhere "
                                     "(a Python bool: reads the values).")


# --- callables -----------------------------------------------------------------------------------
def _apply_along_axis(func1d, axis, arr_, *args, **kwargs):
    x = arr(arr_)
    ax = axis_of(axis, x.ndim, "apply_along_axis", x)
    moved = mv.moveaxis(x, ax, -1)
    outer = moved.shape[:-1]
    if math.prod(outer) == 0:
        raise ShapeError(f"apply_along_axis: cannot apply when an iteration dimension is 0 ({x.aval})")
    results = [arr(func1d(moved[i], *args, **kwargs)) for i in itertools.product(*map(range, outer))]
    first = results[0]
    out = mv.stack([r.astype(first.dtype) for r in results])
    out = mv.reshape(out, outer + first.shape)
    # the function's axes take the place of `axis`
    k = len(outer)
    order = list(range(ax)) + list(range(k, k + first.ndim)) + list(range(ax, k))
    return mv.permute_dims(out, tuple(order))


def _apply_over_axes(func, a, axes):
    x = arr(a)
    for axis in ((axes,) if np.ndim(axes) == 0 else tuple(axes)):
        ax = axis_of(axis, x.ndim, "apply_over_axes", x)
        res = arr(func(x, ax))
        if res.ndim == x.ndim - 1:
            res = mv.expand_dims(res, ax)
        elif res.ndim != x.ndim:
            raise ShapeError("apply_over_axes: function is not returning an array of the correct shape")
        x = res
    return x


def _piecewise(x, condlist, funclist, *args, **kw):
    x = arr(x)
    if not np.isscalar(condlist) and len(condlist) == 0:
        raise ShapeError("piecewise: condlist is empty")
    first = None if np.isscalar(condlist) else condlist[0]
    listed = isinstance(first, (list, np.ndarray)) or isinstance(first, Array) and first.ndim > 0
    if np.isscalar(condlist) or (not listed and x.ndim != 0):    # one condition, as NumPy reads it
        condlist = [condlist]
    if isinstance(condlist, Array):
        condlist = [condlist[k] for k in range(condlist.shape[0])]
    conds = [mv.broadcast_to(arr(c).astype(dt.bool_), x.shape) for c in condlist]
    n = len(conds)
    if len(funclist) == n + 1:
        others = conds[0] if n == 1 else red.any(mv.stack(conds), axis=0)
        conds.append(ew.logical_not(others) if n else mv.broadcast_to(arr(True), x.shape))
    elif len(funclist) != n:
        raise ShapeError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are needed")
    y = zeros(x.shape, dtype=x.dtype, device=x.device)
    for c, f in zip(conds, funclist):
        value = arr(f(x, *args, **kw)) if callable(f) else arr(f)
        y = where(c, mv.broadcast_to(value.astype(x.dtype), x.shape), y)
    return y


_export("apply_along_axis", _apply_along_axis, "func1d applied to each 1-D slice along `axis`, the results "
                                               "stacked where the axis was. Lazy when func1d is.")
_export("apply_over_axes", _apply_over_axes, "func(a, axis) applied over each axis in turn, keeping the "
                                             "dimensions. Lazy when func is.")
_export("piecewise", _piecewise, "funclist[i] where condlist[i] holds (a last extra function where none "
                                 "does), as np.piecewise. Each function is called on the whole of x, so "
                                 "elementwise functions give NumPy's result. Lazy.")
