"""NumPy's ndarray methods over functions that live in the NumPy-compat modules (compress, choose,
put, partition, argpartition, tobytes, tofile, dump, dumps, resize), the `strides` and `flags` NumPy code reads,
and the `real`/`imag` setters.

Installed on `poot.Array` when poot.trace is imported, after those modules (methods.py installs the
operators and the methods of the core modules before them). Writing methods (`put`, `partition`,
`x.real = v`) rebind the array to its new value, as `x[i] = v` does: other handles on the old value
keep it.
"""
from __future__ import annotations

import math
import operator
import os
import pickle

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, ShapeError, api_boundary, out_error
from poot.trace import complex_values as cv
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.creation import asarray, zeros
from poot.trace.lost_writes import refuses_temporaries
from poot.trace.numpy_index_sets import argpartition, compress, partition
from poot.trace.numpy_inplace import put
from poot.trace.numpy_tail import choose


def _compress(self, condition, axis=None, out=None):
    _no_out(out, "compress", lambda: compress(condition, self, axis))
    return compress(condition, self, axis)


def _choose(self, choices, out=None, mode="raise"):
    return choose(self, choices, out=out, mode=mode)


def _put(self, indices, values, mode="raise"):
    put(self, indices, values, mode)


def _partition(self, kth, axis=-1, kind="introselect", order=None):
    """x.partition(kth): partitions x in place (rebinds it), as NumPy's method does."""
    self._node = partition(self, kth, axis, kind, order)._node


def _argpartition(self, kth, axis=-1, kind="introselect", order=None):
    return argpartition(self, kth, axis, kind, order)


def _tobytes(self, order="C"):
    """The bytes of the values (read to the host), in C or Fortran order, as NumPy's tobytes."""
    return self.numpy().tobytes(order)


def _strides(self) -> tuple[int, ...]:
    """The byte steps of a C-contiguous array of this shape and dtype: poot arrays are values, and
    when read (`.numpy()`, the buffer protocol) they are laid out in C order."""
    step, out = self.dtype.itemsize, []
    for s in reversed(self.shape):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


def _tofile(self, fid, sep="", format="%s"):   # noqa: A002 (NumPy's keyword)
    """Writes the values (read to the host) to a file, as NumPy's tofile."""
    self.numpy().tofile(fid, sep=sep, format=format)


def _dumps(self):
    """The pickle of the array as bytes, as NumPy's dumps: `pickle.loads` gives back a poot array."""
    return pickle.dumps(self)


def _dump(self, file):
    """Pickles the array into `file` (a path, opened for writing, or a binary file object), as NumPy's
    dump: `pickle.load` gives back a poot array."""
    if isinstance(file, (str, os.PathLike)):
        with open(file, "wb") as f:
            pickle.dump(self, f)
    else:
        pickle.dump(self, file)


def _resize(self, *new_shape, refcheck=True):
    """x.resize(shape) changes x itself, as NumPy's method does: the C-order elements, cut short or
    followed by zeros (np.resize, the function, repeats them instead). x rebinds, as `x.shape = s`."""
    if len(new_shape) == 1 and not isinstance(new_shape[0], int):
        new_shape = tuple(new_shape[0]) if new_shape[0] is not None else ()
    try:
        shape = tuple(operator.index(n) for n in new_shape)
    except TypeError:
        raise ShapeError(f"x.resize: the new shape must be integers, got {new_shape!r}") from None
    if any(n < 0 for n in shape):
        raise ShapeError(f"x.resize: negative dimensions are not allowed, got {shape}")
    n, flat = math.prod(shape), mv.reshape(self, (-1,))
    if n <= self.size:
        flat = flat[:n]
    else:
        flat = mv.concatenate([flat, zeros((n - self.size,), dtype=self.dtype, device=self.device)])
    self._node = mv.reshape(flat, shape)._node


class ArrayFlags:
    """`x.flags` as NumPy code reads it (x.flags.c_contiguous, x.flags['C_CONTIGUOUS'],
    np.isfortran, np.require): a poot array is a value read out in C order, owned and writable
    through indexing, so only F_CONTIGUOUS depends on the shape. The flags cannot be changed."""

    _KEYS = {"C": "c_contiguous", "C_CONTIGUOUS": "c_contiguous", "CONTIGUOUS": "c_contiguous",
             "F": "f_contiguous", "F_CONTIGUOUS": "f_contiguous", "FORTRAN": "f_contiguous",
             "O": "owndata", "OWNDATA": "owndata", "W": "writeable", "WRITEABLE": "writeable",
             "A": "aligned", "ALIGNED": "aligned", "X": "writebackifcopy",
             "WRITEBACKIFCOPY": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "B": "behaved",
             "BEHAVED": "behaved", "CA": "carray", "CARRAY": "carray", "FA": "farray", "FARRAY": "farray"}
    __slots__ = ("f_contiguous",)
    c_contiguous = owndata = writeable = aligned = behaved = carray = forc = True
    writebackifcopy = False

    def __init__(self, shape: tuple[int, ...]):
        object.__setattr__(self, "f_contiguous",
                           math.prod(shape) == 0 or sum(1 for s in shape if s > 1) <= 1)

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def farray(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    def __getitem__(self, key):
        name = self._KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise ArgumentError(f"x.flags[{key!r}]: unknown flag; NumPy's flags are "
                                f"{', '.join(sorted(self._KEYS))}")
        return getattr(self, name)

    def __setattr__(self, name, value):
        raise ArgumentError(f"x.flags.{name} cannot be set: a poot array is a value, always C-ordered "
                            f"and owned; to keep one unchanged, do not assign into it (x.copy() first)")

    __setitem__ = __setattr__

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {k} : {self[k]}" for k in names)


def _flags(self) -> ArrayFlags:
    """The NumPy-style memory flags of this array's values (see ArrayFlags)."""
    return ArrayFlags(self.shape)


def _part_value(self, value, what: str) -> Array:
    d = dt.real_dtype(self.dtype) if self.dtype.kind == "c" else self.dtype
    v = value if isinstance(value, Array) else asarray(value, device=self.device)
    try:
        return mv.broadcast_to(v.astype(d), self.shape)
    except ShapeError:
        raise ShapeError(f"x.{what} = v: could not broadcast v {v.aval} into {self.aval}") from None


def _set_real(self, value):
    """x.real = v: the real part replaced (for a real x, all of x), cast to x's part dtype."""
    re = _part_value(self, value, "real")
    self._node = (cv.from_parts(re, cv.imag_of(self)) if self.dtype.kind == "c" else re)._node


def _set_imag(self, value):
    """x.imag = v for a complex x; a real array has no imaginary part to set (NumPy's TypeError)."""
    if self.dtype.kind != "c":
        raise DTypeError(f"x.imag = v: {self.aval} is real and has no imaginary part to set; make it "
                         f"complex first (x = x.astype(pt.complex128))")
    self._node = cv.from_parts(cv.real_of(self), _part_value(self, value, "imag"))._node


def _no_out(out, op: str, result=None):
    if out is not None:
        raise out_error(op, out, result() if result is not None else None)


def install_methods() -> None:
    for name, fn in {"compress": _compress, "choose": _choose, "put": _put, "partition": _partition,
                     "argpartition": _argpartition, "tobytes": _tobytes, "tofile": _tofile,
                     "dump": _dump, "dumps": _dumps, "resize": _resize}.items():
        fn.__name__ = fn.__qualname__ = name
        method = api_boundary(fn)
        if name in ("put", "partition"):      # they rebind x: x a temporary is refused (lost_writes.py)
            method = refuses_temporaries(f"x.{name}")(method)
        setattr(Array, name, method)
    Array.strides = property(_strides, doc=_strides.__doc__)
    Array.flags = property(_flags, doc=_flags.__doc__)
    Array.real = property(Array.real.fget, api_boundary(_set_real), doc=Array.real.__doc__)
    Array.imag = property(Array.imag.fget, api_boundary(_set_imag), doc=Array.imag.__doc__)


install_methods()
