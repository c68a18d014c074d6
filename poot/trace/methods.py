"""Operators and methods of `poot.Array`, installed once all functions exist (they live in the
function modules; the class stays small). In-place operators update the array object itself, as
`x[i] = v` does: `x += 1` rebinds x's node to the new value, cast to x's dtype (NumPy's same-kind
casting rule), so every reference to that Array object sees it (a function's argument included);
other Array objects holding the old value (slices, copies) do not change. A 0-d array whose result
cannot be stored back (a float result for an int array, a larger shape) gets the result as a new value,
as NumPy's scalars do (`x[2] += 2.5` then stores the sum, cast, into an int x)."""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, ArgumentValueError, DomainError, DTypeError, ShapeError, api_boundary
from poot.trace import creation, elementwise as ew, fastpath, indexing, linalg, movement, reductions as red, selection
from poot.trace.array import Array
from poot.trace.array_api_sets import searchsorted
from poot.trace.at_updates import AtIndexer
from poot.trace.interop import array_function, array_ufunc
from poot.trace.lazy import check_scalar_fits, is_tracing, record
from poot.trace.promote import cast, is_weak, strong_cast
from poot.trace import complex_values, recipes

# the public functions keep recipes of what they record (recipes.py); installed before the operators
# and methods below bind them
for _module in (ew, red, movement, linalg, selection, indexing):
    recipes.memoize_module(_module)
recipes.memoize_module(creation, ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
                                  "empty_like", "eye", "identity", "arange", "linspace"])

_OPERAND_TYPES = (Array, bool, int, float, complex, np.ndarray, np.generic, list, tuple)
# arithmetic also takes str/bytes operands, to refuse them with the function's DTypeError naming the
# operand (NumPy raises for `x + 'a'`; NotImplemented would give Python's bare TypeError); == and !=
# with a str keep NotImplemented (Python's False for ==, as before)
_ARITH_OPERAND_TYPES = _OPERAND_TYPES + (str, bytes)


def _binary(fn, types=_OPERAND_TYPES):
    def op(self, other):
        if not isinstance(other, types):
            return NotImplemented
        return fn(self, other)

    return op


def _reflected(fn, types=_ARITH_OPERAND_TYPES):
    def op(self, other):
        if not isinstance(other, types):
            return NotImplemented
        return fn(other, self)

    return op


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # NumPy's kind order for same-kind casts


def _same_kind(src: dt.DType, dst: dt.DType) -> bool:
    """NumPy's 'same_kind' casting: safe casts, or casts within a kind (float64 -> float32)."""
    if dt.result_type(src, dst) is dst:
        return True
    return src.kind == dst.kind or _KIND_RANK[src.kind] < _KIND_RANK[dst.kind]


def _inplace(fn, symbol):
    def op(self, other):
        if not isinstance(other, _ARITH_OPERAND_TYPES):
            return NotImplemented
        r = fn(self, other)
        if self.ndim == 0 and (r.shape != () or not _same_kind(r.dtype, self.dtype)):
            # a 0-d array stands in for NumPy's scalars (x[i], x.sum()), whose `+=` is `s = s + y`: so
            # `x[2] += 2.5` on an int x stores the float sum, cast on store, as NumPy does
            return r
        if r.shape != self.shape:
            raise ShapeError(f"x {symbol}= y: the result has shape {r.shape}, x has {self.shape}; an "
                             f"in-place operation cannot change x's shape (y must broadcast to x); "
                             f"write x = x {symbol} y for the broadcast result")
        if r.dtype is not self.dtype:
            if not _same_kind(r.dtype, self.dtype):
                raise DTypeError(f"x {symbol}= y: the result is {r.dtype.name} and cannot be cast back to "
                                 f"x's {self.dtype.name} (NumPy's same-kind rule); write x = x {symbol} y "
                                 f"to get a {r.dtype.name} array, or convert y first")
            r = Array(cast(r._node, self.dtype))
        self._node = r._node   # the array object itself takes the new value (as x[i] = v does)
        return self

    return op


def _array_power(x1, x2):
    """`x ** 2` is NumPy's `square(x)` (ndarray.__pow__ takes that shortcut for the Python int 2): the
    same values as power(x, 2), but a bool x squares in int8, where power(bool, 2) gives int64."""
    if type(x2) is int and x2 == 2 and type(x1) is Array and x1._node.aval.dtype is dt.bool_:
        return _raw(ew.square)(x1)
    return _raw(ew.power)(x1, x2)


_BINARY = {  # dunder stem -> (function, symbol)
    "add": (ew.add, "+"), "sub": (ew.subtract, "-"), "mul": (ew.multiply, "*"),
    "truediv": (ew.divide, "/"), "floordiv": (ew.floor_divide, "//"), "mod": (ew.remainder, "%"),
    "pow": (_array_power, "**"), "matmul": (linalg.matmul, "@"), "and": (ew.bitwise_and, "&"),
    "or": (ew.bitwise_or, "|"), "xor": (ew.bitwise_xor, "^"), "lshift": (ew.left_shift, "<<"),
    "rshift": (ew.right_shift, ">>"),
}

def _raw(fn):
    """The function under its api_boundary wrapper (the operator gets one wrapper of its own)."""
    return getattr(fn, "__wrapped__", fn)


# a memoized function carries its own api_boundary (recipes.memoize): no second wrapper around it
_memo = recipes.memoize
for _stem, (_fn, _sym) in _BINARY.items():
    setattr(Array, f"__{_stem}__", _memo(_binary(_raw(_fn), _ARITH_OPERAND_TYPES)))
    setattr(Array, f"__r{_stem}__", _memo(_reflected(_raw(_fn))))
    setattr(Array, f"__i{_stem}__", api_boundary(_inplace(_raw(_fn), _sym)))

for _stem, _fn in {"eq": ew.equal, "ne": ew.not_equal, "lt": ew.less, "le": ew.less_equal,
                   "gt": ew.greater, "ge": ew.greater_equal}.items():
    # `x < 'a'` is refused with a DTypeError as arithmetic is; `x == 'a'` is answered below
    setattr(Array, f"__{_stem}__", _memo(_binary(_raw(_fn), _OPERAND_TYPES if _stem in ("eq", "ne")
                                                 else _ARITH_OPERAND_TYPES)))



def _none_compare(op, result: bool):
    """x == None, x == 'a' (x != ...): NumPy 2 compares each number with an object of no numeric value
    (None, a string), finding none equal: an array of all False (all True), never Python's bare bool."""
    def compare(self, other):
        if other is None or isinstance(other, (str, bytes)):
            return creation.full(self.shape, result, dtype=dt.bool_, device=self.device)
        return op(self, other)

    compare.__name__ = op.__name__
    return compare


Array.__eq__ = _none_compare(Array.__eq__, False)
Array.__ne__ = _none_compare(Array.__ne__, True)
# the functions under the ufunc objects: a ufunc (as NumPy's) does not bind as a method
Array.__neg__ = ew.negative.func
Array.__pos__ = ew.positive.func
Array.__abs__ = ew.abs.func
Array.__invert__ = ew.bitwise_not.func


def _divmod(self, other):
    return ew.floor_divide(self, other), ew.remainder(self, other)


Array.__divmod__ = api_boundary(_binary(_divmod))
Array.__rdivmod__ = api_boundary(_reflected(_divmod))


@api_boundary
def _round(self, ndigits=None):
    """round(x): for a 0-d array without ndigits, a Python int, as round() of NumPy's scalars gives
    (inside a traced function, where values are unknown, the rounded array); otherwise the array
    rounded to `ndigits` decimals."""
    if ndigits is None and self.ndim == 0 and self.dtype.kind != "c" and not is_tracing():
        value = self._scalar("round()")
        try:
            return round(value)
        except (OverflowError, ValueError) as e:
            raise DomainError(f"round(): {e}") from None
    return ew.round(self, ndigits or 0)


Array.__round__ = _round


@api_boundary
@recipes.memoize
def _getitem(self, idx):
    """x[index] with NumPy's rules (see poot.trace.indexing). A boolean mask is realized here: the
    result's shape depends on how many elements are True."""
    return Array(indexing.getitem_node(self, idx))


@recipes.memoize
def _set_value(x, idx, value):
    return Array(indexing.setitem_node(x, idx, value))


@api_boundary
def _setitem(self, idx, value):
    """x[index] = value: records a functional update and rebinds x to it (other handles on the old
    value do not change). `x[mask] = scalar` stays lazy (a select)."""
    self._node = _set_value(self, idx, value)._node


@api_boundary
def _contains(self, value):
    """`v in x`: whether any element equals v. None or a string equals no number (NumPy: False)."""
    if value is None or isinstance(value, (str, bytes)):
        return False
    return bool(red.any(ew.equal(self, value)))


Array.__getitem__ = _getitem
Array.__setitem__ = _setitem
Array.__contains__ = _contains
Array.__array_ufunc__ = array_ufunc
Array.__array_function__ = array_function

Array.T = property(movement.transpose, doc="The array with its axes reversed.")   # memoized above
Array.mT = property(movement.matrix_transpose, doc="Swap the last two axes.")
Array.real = property(complex_values.real_of, doc="The real part (a real array: itself).")
Array.imag = property(complex_values.imag_of, doc="The imaginary part (a real array: zeros).")


def _reshape(self, *shape, order="C", copy=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return movement.reshape(self, shape, order)


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return movement.transpose(self, axes or None)




def _astype(self, dtype, copy=True, casting="unsafe"):
    """x.astype(dtype) as NumPy's: `casting` other than 'unsafe' refuses, by dtype alone, a cast the rule
    does not allow (np.can_cast's answer), as NumPy raises TypeError for it."""
    d = dt.as_dtype(dtype)
    if casting != "unsafe":
        if casting not in dt.CASTINGS:
            raise ArgumentValueError(f"astype: casting must be one of {', '.join(map(repr, dt.CASTINGS))}, "
                                     f"got {casting!r}")
        if not np.can_cast(self.dtype.np, d.np, casting):
            raise DTypeError(f"astype: cannot cast {self.dtype.name} to {d.name} under casting={casting!r}; "
                             f"use casting='unsafe' (the default) to convert anyway")
    if not copy and d is self.dtype:  # NumPy and the array API: no copy asked, none needed
        return self
    return Array(strong_cast(self._node, d))


def _view(self, dtype=None, type=None):
    """NumPy's `x.view(dtype)` for a dtype of the same width: the same bits read as `dtype` (a
    bitcast; float32 <-> int32/uint32, float16/bfloat16 <-> int16/uint16...), or a complex dtype and
    the (real, imaginary) pairs of its real dtype (_pair_view). poot arrays are values, not memory,
    so the result is a new array; `x.view()` is `x` itself."""
    if type is not None:
        raise DTypeError("view: the type= argument (an ndarray subclass) has no poot meaning")
    if dtype is None:
        return self
    d = dt.as_dtype(dtype)
    if d is self.dtype:
        return self
    c, r = (d, self.dtype) if d.kind == "c" else (self.dtype, d)
    if c.kind == "c" and r is dt.real_dtype(c):         # complex64 <-> float32 pairs, and so on
        return _pair_view(self, d)
    if self.dtype is dt.bool_ and d in (dt.uint8, dt.int8):
        # a NumPy bool's byte is 0 or 1, so `mask.view(np.uint8)` reads the values astype gives
        return Array(strong_cast(self._node, d))
    if "c" in (d.kind, self.dtype.kind):
        raise DTypeError(f"view: {self.dtype.name} cannot be viewed as {d.name}; poot views a complex dtype "
                         f"only as or from the pairs of its own real dtype (float32 <-> complex64, "
                         f"float64 <-> complex128); use astype to convert values")
    if d.bits != self.dtype.bits or dt.bool_ in (d, self.dtype):
        raise DTypeError(f"view: {self.dtype.name} ({self.dtype.bits} bits) cannot be viewed as {d.name} "
                         f"({d.bits} bits); poot reinterprets bits only between dtypes of the same width "
                         f"(bool only as uint8 or int8); use astype to convert values")
    return Array(record("bitcast", (self._node,), {"dtype": d}))


def _pair_view(x, d):
    """`raw.view(np.complex64)` of interleaved float32 pairs (re, im, re, im...: the last axis halves)
    and `z.view(np.float32)` of complex64 (the last axis doubles), as NumPy reads the same memory."""
    s = x.shape
    if not s:
        raise ShapeError(f"view: a 0-d {x.dtype.name} array cannot be viewed as {d.name} (the itemsize "
                         f"changes: NumPy refuses it too); view a 1-d array (x.reshape(1).view(...))")
    if d.kind == "c":
        if s[-1] % 2:
            raise ShapeError(f"view: {x.aval} cannot be viewed as {d.name}: the last axis must hold an even "
                             f"number of {x.dtype.name} values (real, imaginary pairs)")
        pairs = movement.reshape(x, s[:-1] + (s[-1] // 2, 2))
        return Array(record("bitcast", (pairs._node,), {"dtype": d}))
    p = Array(record("bitcast", (x._node,), {"dtype": d}))
    return movement.reshape(p, s[:-1] + (2 * s[-1],))


def _fill_value_like(self, value):
    if not is_weak(value) and not isinstance(value, (Array, np.generic)):
        raise DTypeError(f"fill: a scalar is needed, got {type(value).__name__}")
    check_scalar_fits(value, self.dtype, "fill")   # refused under the method's name, not `full`'s
    self._node = creation.full(self.shape, value, self.dtype, device=self.device)._node


Array.reshape = api_boundary(_reshape)
Array.transpose = api_boundary(_transpose)
Array.astype = api_boundary(_astype)
Array.fill = api_boundary(_fill_value_like)
Array.view = api_boundary(_view)
Array.conj = Array.conjugate = complex_values.conj_of

# method name -> function taking the array first (NumPy's method signatures)
for _name, _fn in {
    "sum": red.sum, "prod": red.prod, "mean": red.mean, "var": red.var, "std": red.std,
    "max": red.max, "min": red.min, "argmax": red.argmax, "argmin": red.argmin, "any": red.any,
    "all": red.all, "cumsum": red.cumsum, "cumprod": red.cumprod, "ravel": movement.ravel,
    "flatten": movement.ravel, "squeeze": movement.squeeze, "swapaxes": movement.swapaxes,
    "repeat": movement.repeat, "take": indexing.take, "clip": selection.clip, "round": ew.round,
    "dot": linalg.dot, "nonzero": indexing.nonzero, "diagonal": linalg.diagonal,
    "trace": linalg.trace,
}.items():
    setattr(Array, _name, _fn)
Array.searchsorted = api_boundary(lambda self, v, side="left", sorter=None: searchsorted(self, v, side=side,
                                                                                         sorter=sorter))
Array.at = property(AtIndexer, doc="JAX's functional indexed updates: x.at[idx].set(v), .add(v), .get()...")

fastpath.install(Array)


def _with_modulo_refused(power):
    """`pow(x, y, mod)` reaches `__pow__` with a third argument; NumPy refuses it with a TypeError, as
    does poot, naming the form (the two-argument call keeps the fast path's dunder itself)."""
    def __pow__(self, other, modulo=None):
        if modulo is not None:
            raise ArgumentError("pow(x, y, mod): the 3-argument form (modular power) is not supported for "
                                "arrays (NumPy refuses it too); write (x ** y) % mod")
        return power(self, other)

    return __pow__


Array.__pow__ = _with_modulo_refused(Array.__pow__)
