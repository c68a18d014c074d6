"""Names NumPy scripts use all the time beside the array functions: the dtype aliases (`pt.double`,
`pt.intp`; the abstract `pt.floating` for issubdtype), `pt.dtype`, `errstate`/`seterr`/`geterr`,
`fromfunction`, `vectorize`, `packbits`/`unpackbits`, and text files (`loadtxt`, `genfromtxt`, `savetxt`).

poot raises no floating-point warnings (a kernel computes IEEE results, as NumPy does with
errstate(all='ignore')), so `errstate` and `seterr` accept 'ignore', 'warn' and 'print' (nothing to
report) and refuse 'raise', 'call' and 'log', which would need a check of every result. `vectorize`
calls a Python function on each element, as NumPy's does, so it runs on the host over realized inputs.
"""
from __future__ import annotations

import contextlib
import itertools

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, NotBuiltError, exporter
from poot.trace import elementwise as ew
from poot.trace import movement as mv
from poot.trace import reductions as red
from poot.trace.array import Array
from poot.trace.creation import asarray
from poot.trace.movement import arr, axis_of
from poot.trace.numpy_index_sets import indices
from poot.trace.numpy_stats import _leaf

__all__: list[str] = []
_export = exporter(globals(), __all__)

# --- dtype aliases (NumPy 2's, on a 64-bit platform) -------------------------------------------------
_ALIASES = {"intp": dt.int64, "uintp": dt.uint64, "int_": dt.int64, "uint": dt.uint64, "long": dt.int64,
            "ulong": dt.uint64, "longlong": dt.int64, "ulonglong": dt.uint64, "intc": dt.int32,
            "uintc": dt.uint32, "short": dt.int16, "ushort": dt.uint16, "byte": dt.int8, "ubyte": dt.uint8,
            "half": dt.float16, "single": dt.float32, "double": dt.float64, "csingle": dt.complex64,
            "cdouble": dt.complex128}
# the abstract kinds are NumPy's own classes: issubdtype, isdtype and isinstance of NumPy scalars read them
_ABSTRACT = {"generic": np.generic, "number": np.number, "integer": np.integer,
             "signedinteger": np.signedinteger, "unsignedinteger": np.unsignedinteger, "inexact": np.inexact,
             "floating": np.floating, "complexfloating": np.complexfloating}
globals().update(_ALIASES)
globals().update(_ABSTRACT)
__all__ += list(_ALIASES) + list(_ABSTRACT)


def _dtype(obj, align=False, copy=False):
    return dt.as_dtype(obj.dtype if isinstance(obj, Array) else obj)


_export("dtype", _dtype, "The poot dtype `obj` names (a name or type code as NumPy reads it, a NumPy dtype "
                         "or scalar type, a Python type, or an array's dtype).")


# --- floating-point error handling -----------------------------------------------------------------
_ERROR_KINDS = ("divide", "over", "under", "invalid")
_QUIET = ("ignore", "warn", "print")
_state = {k: "ignore" for k in _ERROR_KINDS}


def _settings(all=None, divide=None, over=None, under=None, invalid=None) -> dict:
    asked = {k: v for k, v in zip(_ERROR_KINDS, (divide, over, under, invalid)) if v is not None}
    if all is not None:
        asked = {k: asked.get(k, all) for k in _ERROR_KINDS}
    for kind, mode in asked.items():
        if mode not in _QUIET + ("raise", "call", "log"):
            raise ArgumentError(f"errstate: {kind}={mode!r} is not one of ignore, warn, raise, call, print, log")
        if mode not in _QUIET:
            raise NotBuiltError(f"errstate/seterr: {kind}={mode!r} is not built: poot computes IEEE results "
                                f"(inf, nan) without checking each one; test them with pt.isfinite")
    return asked


def _seterr(all=None, divide=None, over=None, under=None, invalid=None):
    old = dict(_state)
    _state.update(_settings(all, divide, over, under, invalid))
    return old


def _geterr():
    return dict(_state)


class errstate(contextlib.ContextDecorator):
    """`with pt.errstate(divide='ignore'):` (or as a decorator), as NumPy's: poot warns of nothing, so
    'ignore', 'warn' and 'print' are accepted and change nothing; 'raise', 'call' and 'log' are refused."""

    def __init__(self, *, call=None, all=None, divide=None, over=None, under=None, invalid=None):
        if call is not None:
            raise NotBuiltError("errstate(call=...): poot calls no floating-point error handler")
        self._asked = _settings(all, divide, over, under, invalid)

    def __enter__(self):
        self._old = dict(_state)
        _state.update(self._asked)
        return self

    def __exit__(self, *exc):
        _state.clear()
        _state.update(self._old)
        return False


__all__.append("errstate")
_export("seterr", _seterr, "Set how floating-point errors are treated (only 'ignore', 'warn' and 'print': poot "
                           "reports none); returns the previous settings.")
_export("geterr", _geterr, "The floating-point error settings (see seterr).")


# --- building arrays from functions ----------------------------------------------------------------
def _fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    grids = indices(shape, dtype=dtype)
    return function(*(grids[k] for k in range(len(shape))), **kwargs)


_export("fromfunction", _fromfunction, "function(*index grids of `shape`) as NumPy calls it: once, on whole "
                                       "arrays (lazy when the function is).")


class vectorize:
    """np.vectorize for poot arrays: `pyfunc` called on each element's Python value, on the host (the
    inputs realized), the results as a poot array on the first array input's device. Like NumPy's, a
    loop in Python: for speed, write the function with array operations or as a @pt.kernel."""

    def __new__(cls, pyfunc=None, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        """`pt.vectorize(otypes=[float])` without pyfunc is a decorator, as NumPy 2's."""
        if pyfunc is None:
            return lambda f: cls(f, otypes, doc, excluded, cache, signature)
        return super().__new__(cls)

    def __init__(self, pyfunc=None, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        if not callable(pyfunc):
            raise ArgumentError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
        self.pyfunc = pyfunc
        self._otypes = otypes
        self._excluded = set(excluded or ())
        self._signature = signature     # NumPy's gufunc form: pyfunc takes the core NumPy arrays
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)

    def __call__(self, *args, **kwargs):
        arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, Array)]
        host = [a.numpy() if isinstance(a, Array) else a for a in args]
        named = {k: v.numpy() if isinstance(v, Array) else v for k, v in kwargs.items()}
        try:
            fn = np.vectorize(self.pyfunc, otypes=self._otypes, excluded=self._excluded,
                              signature=self._signature)
        except ValueError as e:     # a malformed signature
            raise ArgumentError(f"vectorize: {e}") from None
        out = fn(*host, **named)
        device = arrays[0].device if arrays else None
        if isinstance(out, tuple):
            return tuple(asarray(o, device=device) for o in out)
        return asarray(out, device=device)


__all__.append("vectorize")


# --- bits ---------------------------------------------------------------------------------------
def _bit_order(bitorder: str):
    if bitorder not in ("big", "little"):
        raise ArgumentError(f"packbits/unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


def _packbits(a, axis=None, bitorder="big"):
    x = arr(a)
    if x.dtype.kind not in "biu":
        raise DTypeError(f"packbits: needs an integer or boolean array, got {x.dtype}")
    if axis is None:
        x, axis = mv.reshape(x, (-1,)), 0
    ax = axis_of(axis, x.ndim, "packbits", x)
    x = mv.moveaxis(ew.not_equal(x, 0).astype(dt.uint8), ax, -1)
    n = x.shape[-1]
    pad = -n % 8
    if pad:
        x = mv.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])
    groups = mv.reshape(x, x.shape[:-1] + ((n + pad) // 8, 8))
    weights = asarray(_bit_order(bitorder), device=x.device)
    packed = red.sum(ew.left_shift(groups, weights), axis=-1, dtype=dt.uint8)
    return mv.moveaxis(packed, -1, ax)


def _unpackbits(a, axis=None, count=None, bitorder="big"):
    x = arr(a)
    if x.dtype is not dt.uint8:
        raise DTypeError(f"unpackbits: needs a uint8 array, got {x.dtype}")
    if axis is None:
        x, axis = mv.reshape(x, (-1,)), 0
    ax = axis_of(axis, x.ndim, "unpackbits", x)
    x = mv.moveaxis(x, ax, -1)
    shifts = asarray(_bit_order(bitorder), device=x.device)
    bits = ew.bitwise_and(ew.right_shift(mv.expand_dims(x, -1), shifts), 1).astype(dt.uint8)
    bits = mv.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = mv.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)])
    return mv.moveaxis(bits, -1, ax)


_export("packbits", _packbits, "Pack the truth of each element into the bits of uint8 (8 a byte, `bitorder` "
                               "'big' first), along `axis` (the flattened array when None). Lazy.")
_export("unpackbits", _unpackbits, "The bits of a uint8 array as uint8 0/1 values along `axis` (flattened when "
                                   "None), `count` of them. Lazy.")


_UNSIGNED_OF = {1: dt.uint8, 2: dt.uint16, 4: dt.uint32, 8: dt.uint64}


def _bitwise_count(x, /):
    """NumPy 2's popcount ufunc: the 1-bits of |x|, as uint8. Computed with shifts and masks on 64
    bits (the classic SWAR count), so every device runs it with integer arithmetic alone."""
    a = arr(x)
    if a.dtype.kind not in "biu":
        raise DTypeError(f"bitwise_count: needs an integer or boolean array, got {a.dtype}")
    if a.dtype.kind == "b":
        return a.astype(dt.uint8)
    if a.dtype.kind == "i":
        a = ew.abs(a)        # |INT_MIN| wraps to itself, whose bit pattern has the one bit NumPy counts
    v = a.astype(_UNSIGNED_OF[a.dtype.itemsize]).astype(dt.uint64)
    v = v - ew.bitwise_and(ew.right_shift(v, 1), 0x5555555555555555)
    v = ew.bitwise_and(v, 0x3333333333333333) + ew.bitwise_and(ew.right_shift(v, 2), 0x3333333333333333)
    v = ew.bitwise_and(v + ew.right_shift(v, 4), 0x0F0F0F0F0F0F0F0F)
    return ew.right_shift(v * 0x0101010101010101, 56).astype(dt.uint8)


_export("bitwise_count", _bitwise_count, "The number of 1-bits in the absolute value of each integer "
                                         "(uint8), as np.bitwise_count. Lazy.")


# --- text files ---------------------------------------------------------------------------------------
def _text_reader(reader, op: str):
    def read(fname, *args, device=None, **kwargs):
        from poot.trace.creation import _device

        return _leaf(np.asarray(reader(fname, *args, **kwargs)), _device(device))

    read.__name__ = op
    return read


def _savetxt(fname, X, *args, **kwargs):
    np.savetxt(fname, X.numpy() if isinstance(X, Array) else np.asarray(X), *args, **kwargs)


_export("loadtxt", _text_reader(np.loadtxt, "loadtxt"), "Read a text file of numbers (NumPy's loadtxt, its "
                                                        "arguments) into a poot array on `device`.")
_export("genfromtxt", _text_reader(np.genfromtxt, "genfromtxt"), "NumPy's genfromtxt (missing values as nan), "
                                                                 "the result as a poot array on `device`.")
_export("savetxt", _savetxt, "Write an array to a text file (NumPy's savetxt, its arguments; realizes it).")


# --- printing -----------------------------------------------------------------------------------------
# poot arrays print through NumPy's formatter (Array.__repr__), so NumPy's print options are poot's
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
printoptions = np.printoptions
__all__ += ["set_printoptions", "get_printoptions", "printoptions"]


# --- index tricks ---------------------------------------------------------------------------------
s_ = np.s_                  # plain Python slices and tuples: nothing poot-specific
index_exp = np.index_exp


def _axis_points(s: slice):
    """The points of one mgrid/ogrid/r_ slice: arange(start, stop, step), or with an imaginary step
    (5j) that many points from start to stop inclusive, as NumPy reads it."""
    from poot.trace.creation import arange, linspace

    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    if any(isinstance(v, float) for v in (start, s.stop, step)):
        return arange(float(start), float(s.stop), float(step))
    return arange(start, s.stop, step)


class _Grid:
    """mgrid (dense) and ogrid (open) index grids: np.mgrid[0:3, 0:5:2] as NumPy's."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        one = not isinstance(key, tuple)
        slices = (key,) if one else key
        if not all(isinstance(s, slice) for s in slices):
            raise ArgumentError(f"{'ogrid' if self.sparse else 'mgrid'}: index with slices (mgrid[0:3, 0:5]), "
                                f"got {key!r}")
        axes = [_axis_points(s) for s in slices]
        if one:
            return axes[0]
        d = dt.result_type(*(a.dtype for a in axes))
        axes = [a.astype(d) for a in axes]
        n = len(axes)
        open_axes = [mv.reshape(a, tuple(-1 if k == i else 1 for k in range(n))) for i, a in enumerate(axes)]
        if self.sparse:
            return tuple(open_axes)
        shape = tuple(a.shape[0] for a in axes)
        return mv.stack([mv.broadcast_to(a, shape) for a in open_axes])


class _Concatenator:
    """r_ (along the first axis) and c_ (columns: 1-D pieces become columns, along the last axis), from
    slices (as mgrid reads them), scalars and arrays. NumPy's string directives ('r', '0,2,1') are not
    built."""

    def __init__(self, columns: bool):
        self.columns = columns

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        name = "c_" if self.columns else "r_"
        pieces = []
        for it in items:
            if isinstance(it, str):
                raise NotBuiltError(f"{name}: string directives ({it!r}) are not built; use pt.concatenate, "
                                    f"pt.stack or pt.column_stack")
            a = _axis_points(it) if isinstance(it, slice) else asarray(it)
            if a.ndim == 0:
                a = mv.reshape(a, (1,))
            if self.columns and a.ndim == 1:
                a = mv.reshape(a, (-1, 1))
            pieces.append(a)
        if not pieces:
            return asarray([])
        return mv.concatenate(pieces, axis=-1 if self.columns else 0)


mgrid, ogrid = _Grid(False), _Grid(True)
r_, c_ = _Concatenator(False), _Concatenator(True)
__all__ += ["s_", "index_exp", "mgrid", "ogrid", "r_", "c_"]


class ndindex:
    """The index tuples of an array of `shape`, in C order (np.ndindex(2, 3) or np.ndindex((2, 3))):
    Python loops over positions, so plain host iteration with nothing to record."""

    def __init__(self, *shape):
        from poot.trace.creation import normalize_shape

        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        self.shape = normalize_shape(shape, "ndindex")
        self._it = itertools.product(*(range(s) for s in self.shape))

    def __iter__(self):
        return self

    def __next__(self) -> tuple:
        return next(self._it)


class ndenumerate:
    """(index tuple, value) for each element of `arr` in C order, as np.ndenumerate. The array is read
    to the host once (inside @pt.jit: TracerError, as for any read of values); the values are NumPy
    scalars, as NumPy's ndenumerate gives them."""

    def __init__(self, arr):
        host = arr.numpy() if isinstance(arr, Array) else np.asarray(arr)
        self._it = np.ndenumerate(host)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)


euler_gamma = 0.5772156649015329       # NumPy's np.euler_gamma, the Euler-Mascheroni constant
__all__ += ["ndindex", "ndenumerate", "euler_gamma"]
