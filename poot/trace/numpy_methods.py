"""NumPy's ndarray methods over functions that live in the NumPy-compat modules (compress, choose,
put, partition, argpartition, tobytes), the `strides` NumPy code reads, and the `real`/`imag` setters.

Installed on `poot.Array` when poot.trace is imported, after those modules (methods.py installs the
operators and the methods of the core modules before them). Writing methods (`put`, `partition`,
`x.real = v`) rebind the array to its new value, as `x[i] = v` does: other handles on the old value
keep it.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, api_boundary
from poot.trace import complex_values as cv
from poot.trace import movement as mv
from poot.trace.array import Array
from poot.trace.creation import asarray
from poot.trace.numpy_index_sets import argpartition, compress, partition
from poot.trace.numpy_inplace import put
from poot.trace.numpy_tail import choose


def _compress(self, condition, axis=None, out=None):
    _no_out(out, "compress")
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


def _no_out(out, op: str):
    if out is not None:
        raise ShapeError(f"{op}: out= is not supported (poot arrays are immutable values); assign the result")


def install_methods() -> None:
    for name, fn in {"compress": _compress, "choose": _choose, "put": _put, "partition": _partition,
                     "argpartition": _argpartition, "tobytes": _tobytes}.items():
        fn.__name__ = fn.__qualname__ = name
        setattr(Array, name, api_boundary(fn))
    Array.strides = property(_strides, doc=_strides.__doc__)
    Array.real = property(Array.real.fget, api_boundary(_set_real), doc=Array.real.__doc__)
    Array.imag = property(Array.imag.fget, api_boundary(_set_imag), doc=Array.imag.__doc__)


install_methods()
