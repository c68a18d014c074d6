"""`poot.Array`: a lazy handle on a value. Operations record equations; nothing runs until a value is
needed (`.numpy()`, `float(x)`, printing...). Arrays are immutable values: in-place operators and
`x[i] = v` rebind the handle to a new value, so no other array ever changes behind your back.

The operators and array methods are installed by `poot.trace.methods`; this module holds the handle,
its attributes, realization and conversion from host data.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import (APIVersionError, ArgumentError, ArgumentOverflowError, ArgumentValueError, CopyError,
                         DeviceError, DomainError, DTypeError, PootIndexError, ShapeError, TracerError, api_boundary,
                         located_error)
from poot.graph import Aval
from poot.jit.runtime.execute import buffer_to_numpy, start_host_read
from poot.trace import context as _dev
from poot.trace import counters as _counters
from poot.trace.lazy import Node, constant, from_buffer, from_numpy, is_tracing, realize_nodes, shared_constant



class ScalarConversionError(ShapeError, TypeError):
    """float(x), int(x), complex(x) or x as an index of an array of several elements: a ShapeError, and
    the TypeError NumPy raises there, so `except TypeError` copied from NumPy code still catches it."""


_TYPE_ERROR_CONVERSIONS = frozenset({"float()", "int()", "complex()", "an index", "math.trunc()",
                                     "math.floor()", "math.ceil()"})


def _python_scalar(kind, value):
    """`kind(value)` (int(), float(), complex() of a 0-d array), whose failure (NaN to int, a complex
    to float) names the conversion the user wrote rather than the dunder method poot runs."""
    try:
        return kind(value)
    except (TypeError, ValueError, OverflowError) as e:
        twin = {TypeError: ArgumentError, ValueError: ArgumentValueError}.get(type(e), ArgumentOverflowError)
        raise twin(f"{kind.__name__}(): {e}") from None


class Array:
    """A lazy n-dimensional array on a device (see the module docstring)."""

    __slots__ = ("_node", "_host_read", "__weakref__")
    __array_priority__ = 1000  # NumPy defers binary operators to us

    def __init__(self, node: Node):
        self._node = node

    # --- attributes -------------------------------------------------------------------------------
    @property
    def aval(self) -> Aval:
        return self._node.aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.aval.shape

    @shape.setter
    @api_boundary
    def shape(self, value) -> None:
        """`x.shape = s` reshapes x itself, as NumPy does (a size that does not fit is a ShapeError): x
        takes the reshaped value, as `x += 1` does, so every reference to this Array object sees it."""
        from poot.trace.movement import reshape

        self._node = reshape(self, value)._node

    @property
    def dtype(self) -> dt.DType:
        return self._node.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.aval.shape)

    @property
    def size(self) -> int:
        return self._node.aval.size

    @property
    def nbytes(self) -> int:
        return self._node.aval.nbytes

    @property
    def itemsize(self) -> int:
        return self._node.aval.dtype.itemsize

    @property
    def device(self) -> str:
        """The name of the device holding this array ("cpu", "cuda:0", "oracle"...)."""
        return self._node.device

    @property
    def is_realized(self) -> bool:
        return self._node.buf is not None

    # --- realization ------------------------------------------------------------------------------
    def _realize(self, what: str = "realizing") -> Node:
        n = self._node
        if n.buf is None:
            realize_nodes([n], what)
        return n

    def __poot_buffer__(self):
        """The realized device Buffer (realizing first): what the @kernel launcher binds."""
        return self._realize("passing it to a kernel").buf

    def __poot_write_buffer__(self, private: bool = False):
        """The realized device Buffer a @kernel launch writes: this array's own where nothing else can see
        its memory, else (or when `private`) a copy this array then holds alone. Like `x += 1`, the
        launch gives this array object a new value; no other array, value computed from this one before
        the launch, or NumPy view of it changes (docs/kernels.md, Launching)."""
        self._realize("passing it to a kernel")
        from poot.trace.fastpath_writes import sole_owner      # the CPU's `x[i] = v` asks the same question

        if private or not sole_owner(self):
            n = self._node
            self._node = from_buffer(n.buf.device.duplicate(n.buf), n.aval, n.device)
        return self._node.buf

    def block_until_ready(self) -> "Array":
        """Realize this array, wait until its device has computed it and return it (JAX's name);
        raises the error of a kernel that trapped since the last host read of its device."""
        from poot.jit.runtime.launch import synchronize as sync

        n = self._realize(".block_until_ready()")
        sync(_dev.backend(n.device))
        return self

    def copy_to_host_async(self) -> "Array":
        """Start copying this array to the host and return it at once (JAX's name): the next
        `.numpy()` then waits for the work queued before this call and the copy, not for what was
        launched since (a decode loop launches step n + 1 before it reads step n's token). A kernel
        trap raised before the copy surfaces at that `.numpy()`."""
        n = self._realize(".copy_to_host_async()")
        self._host_read = start_host_read(n.buf, n.aval)
        return self

    def numpy(self) -> np.ndarray:
        """The value as a read-only NumPy array (zero copy on the CPU)."""
        pending = getattr(self, "_host_read", None)
        if pending is not None:
            self._host_read = None
            _counters.counts.host_reads += 1
            return pending.result()
        n = self._realize(".numpy()")
        _counters.counts.host_reads += 1
        return buffer_to_numpy(n.buf, n.aval)

    def __array__(self, dtype=None, copy=None):
        """NumPy 2's protocol, with np.asarray's own rules over the host view `.numpy()` (as JAX's
        arrays answer it): copy=False refuses a dtype change, which cannot be done without a copy,
        with a CopyError (NumPy's ValueError) instead of handing back a converted copy."""
        self._realize("np.asarray()")        # a traced array's error names the conversion
        a = self.numpy()
        try:
            return np.asarray(a, dtype=dtype, copy=copy)
        except ValueError as e:
            if copy is False:
                raise located_error(CopyError(
                    f"np.array(x, dtype={np.dtype(dtype)}, copy=False): x is {self.aval}, so the "
                    f"conversion needs a copy ({e.args[0].splitlines()[0]}); pass copy=None")) from None
            raise

    def _scalar(self, what: str):
        if self.size != 1:
            # NumPy raises TypeError for float(), int(), complex() and an index, ValueError elsewhere
            cls = ScalarConversionError if what in _TYPE_ERROR_CONVERSIONS else ShapeError
            raise cls(f"{what}: only an array of size 1 converts to a Python scalar; this one "
                      f"is {self.aval} ({self.size} elements); index it or reduce it first")
        n = self._realize(what)
        _counters.counts.host_reads += 1
        return buffer_to_numpy(n.buf, n.aval).reshape(()).item()

    @api_boundary
    def item(self, *args):
        """The value of a size-1 array (or of element `args`) as a Python scalar."""
        if args:
            try:
                return self.numpy().item(*args)
            except IndexError as e:    # NumPy's own words, under poot's name for the call
                raise PootIndexError(f"item: {e}") from None
        return self._scalar("item()")

    @api_boundary
    def tolist(self):
        self._realize(".tolist()")
        return self.numpy().tolist()

    @api_boundary
    def __bytes__(self):
        """bytes(x): the raw bytes of the values in C order, as bytes() of an ndarray reads them through
        its buffer (without this, Python's bytes() iterates a poot array as a sequence of small ints).
        A 0-d integer array is a length to bytes(), as it is for NumPy (bytes(np.array(3)) is three
        zero bytes): Python asks __index__ before the buffer."""
        if self.ndim == 0 and self.dtype.kind in "iu":
            return bytes(self.__index__())
        self._realize("bytes()")
        return self.numpy().tobytes()

    def __buffer__(self, flags):
        """The buffer protocol from Python (3.12+, PEP 688): memoryview(x) views the read-only host
        values; a writable request is refused (BufferError), as for a read-only ndarray."""
        return memoryview(self.numpy())

    def _number(self, kind, what: str):
        """`kind(x)` for int(), float(), complex() and math.trunc/floor/ceil: of a 0-d array only, as
        NumPy 2 and JAX answer them (a size-1 array of dimensions is refused too, where NumPy 1 read its
        element): the shape a reduction or an index gives is the one a Python number stands for."""
        if self.ndim and self.size == 1:      # (the size check of _scalar names any other size)
            raise ScalarConversionError(f"{what}: only a 0-d array converts to a Python scalar; this one "
                                        f"is {self.aval}; read its element with x.item() (or x[0]), or "
                                        f"reduce it without keepdims")
        return _python_scalar(kind, self._scalar(what))

    @api_boundary
    def __float__(self):
        return self._number(float, "float()")

    @api_boundary
    def __int__(self):
        return self._number(int, "int()")

    @api_boundary
    def __complex__(self):
        return self._number(complex, "complex()")

    # math.trunc/floor/ceil of a 0-d array, as of the NumPy scalar a reduction gives there: exact for
    # integers (no trip through float), a complex one refused as Python refuses it
    @api_boundary
    def __trunc__(self):
        return self._number(math.trunc, "math.trunc()")

    @api_boundary
    def __floor__(self):
        return self._number(math.floor, "math.floor()")

    @api_boundary
    def __ceil__(self):
        return self._number(math.ceil, "math.ceil()")

    @api_boundary
    def __bool__(self):
        if self.size != 1:
            raise ShapeError(f"the truth value of an array with {self.size} elements ({self.aval}) is "
                             f"ambiguous; use .any() or .all()")
        return bool(self._scalar("bool()"))

    @api_boundary
    def __index__(self):
        if self.ndim != 0 or self.dtype.kind not in "iu":
            raise DTypeError(f"only 0-d integer arrays can be used as an index; this is {self.aval}")
        return int(self._scalar("an index"))

    @api_boundary
    def __len__(self):
        if not self.shape:
            raise ArgumentError("len() of a 0-d array (it has no length)")
        return self.shape[0]

    @api_boundary
    def __iter__(self):
        if not self.shape:
            raise ArgumentError("iteration over a 0-d array")
        if not is_tracing():
            self._realize("iterating")  # realize once, not once per row
        return (self[i] for i in range(self.shape[0]))

    def _shown(self):
        """The value for printing, or None for a traced array (printing never raises)."""
        try:
            return self.numpy()
        except TracerError:
            return None

    def __repr__(self) -> str:
        head = f"shape={self.shape}, dtype={self.dtype.name}, device={self._node.device}"
        value = self._shown()
        if value is None:
            return f"Array(<traced>, {head})"
        return f"Array({np.array2string(value, separator=', ', prefix='Array(')}, {head})"

    def __str__(self) -> str:
        value = self._shown()
        return repr(self) if value is None else str(value)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0 and spec:
            value = self._scalar("format()")
            try:
                return format(value, spec)
            except ValueError as e:     # f"{x:d}" of a float: Python's own complaint, on poot's class
                raise located_error(ArgumentValueError(
                    f"format(): {e} (x is {self.aval}, whose value is the Python {type(value).__name__} "
                    f"{value!r})")) from None
        if spec:     # NumPy refuses a format spec for an array of dimensions too (TypeError)
            raise ArgumentError(f"format spec {spec!r} applies to a 0-d array, not to {self.aval}; "
                                f"format its elements (e.g. ', '.join(f'{{v:{spec}}}' for v in x.tolist())), "
                                f"or use np.printoptions")
        return str(self)

    # --- copying, pickling, devices ---------------------------------------------------------------
    def copy(self) -> "Array":
        """A new handle on the same (immutable) value: updating one never changes the other."""
        return Array(self._node)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return Array(self._node)

    @api_boundary
    def __reduce__(self):
        self._realize("pickling")
        return (_rebuild, (np.array(self.numpy()), self.device))

    @api_boundary
    def to(self, device) -> "Array":
        """This array on `device` (the same array if it is there already)."""
        name = _dev.canonical(device)
        n = self._node
        if name == n.device:
            return self
        target = _dev.backend(name)
        self._realize(f".to('{name}')")
        if target is _dev.backend(n.device):  # same memory (cpu and the oracle): share the buffer
            return Array(from_buffer(n.buf, n.aval, name))
        return Array(from_numpy(buffer_to_numpy(n.buf, n.aval), name, n.aval.dtype))

    @api_boundary
    def to_device(self, device, /, *, stream=None) -> "Array":
        """The array API's spelling of `to` (`stream` is accepted and unused: poot orders work
        per device itself)."""
        return self.to(device)

    @api_boundary
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from poot.trace.dlpack import DLPackDeviceError, export

        if not _dev.backend(self.device).shares_host_memory:   # (a BufferError too, as the standard asks)
            raise DLPackDeviceError(f"__dlpack__ is supported on the CPU only; this array is on "
                                    f"'{self.device}': use x.to('cpu') first")
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                    ("copy", copy)) if v is not None}

        return export(self, kwargs, copy)

    @api_boundary
    def __dlpack_device__(self):
        if not _dev.backend(self.device).shares_host_memory:
            raise DeviceError(f"__dlpack_device__: this array is on '{self.device}', not the CPU")
        return (1, 0)  # kDLCPU, device 0

    def __array_namespace__(self, /, *, api_version=None):
        """The `poot` module: an array API standard namespace (2024.12; 2021.12, 2022.12 and
        2023.12 are subsets of it and accepted too)."""
        import poot

        from poot.trace.array_api_info import SUPPORTED_VERSIONS

        if api_version is not None and api_version not in SUPPORTED_VERSIONS:
            raise APIVersionError(f"__array_namespace__: poot implements the array API standard "
                             f"{SUPPORTED_VERSIONS[-1]} (and {', '.join(SUPPORTED_VERSIONS[:-1])}); "
                             f"api_version={api_version!r} is not one of them")
        return poot

    @api_boundary
    def __hash__(self):
        # like NumPy's arrays: == is elementwise, so arrays are not hashable. NumPy's elements are
        # (hashable) scalars where poot's are 0-d arrays: say how to get the number
        raise ArgumentError(f"a poot array ({self.aval}) is not hashable, 0-d ones included: == is "
                            f"elementwise; use x.item() (or x.tolist()) for a set or a dict key")


def _rebuild(array, device):
    return Array(from_numpy(array, device if device in ("cpu", _dev.ORACLE) else "cpu"))


# --- host data -----------------------------------------------------------------------------------
def _refuse_subclass(obj, op: str) -> None:
    """Refuse the ndarray subclasses whose values a plain conversion would change: np.ma arrays (the
    mask) and np.matrix (its operators' meaning)."""
    if isinstance(obj, np.ma.MaskedArray):
        raise DTypeError(f"{op}: got a NumPy masked array (np.ma.MaskedArray {obj.shape}); poot has no "
                         f"masked arrays and would drop the mask. Pass the values with the masked ones "
                         f"filled (m.filled(fill)) or compressed (m.compressed()), or the data and the "
                         f"mask separately (pt.where(mask, fill, data), the where= of a reduction)")
    if isinstance(obj, np.matrix):
        raise DTypeError(f"{op}: got an np.matrix {obj.shape}; poot arrays follow ndarray semantics (`*` "
                         f"is elementwise, reductions are not 2-D), so a matrix is not converted "
                         f"silently: pass np.asarray(m)")


def _converts(obj) -> bool:
    """Whether NumPy makes an array of `obj` when no dtype is asked for."""
    try:
        np.asarray(obj)
    except (ValueError, TypeError):
        return False
    return True


def host_array(obj, op: str = "array", dtype: dt.DType | None = None) -> np.ndarray:
    """`obj` (NumPy array, nested list, scalar...) as a NumPy array of a dtype poot supports. NumPy's
    masked arrays and np.matrix are refused: converting them would drop the mask (sum(m) counting
    the masked values) or change the semantics (matrix `*` is a matrix product) without a word."""
    if isinstance(obj, np.ndarray) and type(obj) is not np.ndarray:
        _refuse_subclass(obj, op)
    elif isinstance(obj, (str, bytes)):
        raise DTypeError(f"{op}: got the {type(obj).__name__} operand {obj!r}; poot has no string "
                         f"arrays (use a number)")
    try:
        a = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=dtype.np)
    except (ValueError, TypeError) as e:
        if dtype is not None and _converts(obj):
            # the data is fine, its values do not fit `dtype` ([nan] as int32, [1j] as float64):
            # NumPy's own class (ValueError, TypeError), not a shape complaint
            cls = DomainError if isinstance(e, ValueError) else DTypeError
            raise cls(f"{op}: cannot convert the values to {dtype.name}: {e}") from None
        raise ShapeError(f"{op}: cannot make an array from {type(obj).__name__}: {e}") from None
    if not a.dtype.isnative:            # big-endian data (read from a file, say): the same values
        a = a.astype(a.dtype.newbyteorder("="))
    try:
        dt.as_dtype(a.dtype)
    except DTypeError:
        raise DTypeError(f"{op}: {a.dtype} data is not supported (poot has no extended-precision, "
                         f"object, string or datetime arrays); convert it to one of "
                         + ", ".join(d.name for d in dt.ARRAY_DTYPES)) from None
    return a


def asnode(x, device: str | None = None, op: str = "array") -> Node:
    """A Node for `x`: an Array's own node, or a new leaf/constant for host data (strongly typed)."""
    if isinstance(x, Array):
        return x._node
    dev = device or _dev.current()
    if isinstance(x, (bool, int, float)):
        d = dt.scalar_dtype(x)
        return constant(x, d, dev)
    if isinstance(x, np.generic) and not isinstance(x, (np.complexfloating, np.object_, np.str_)):
        return shared_constant(x.item(), dt.as_dtype(x.dtype), dev)
    if isinstance(x, (list, tuple)) and x:      # `x * [a, b]` of poot arrays: stacked lazily, as pt.asarray
        from poot.trace.creation import _array, _contains_array    # does (NumPy would read traced ones)

        if _contains_array(x):
            return _array(x, device=dev)._node
    return from_numpy(host_array(x, op), dev)


def realize(*arrays):
    """Realize several arrays in one graph (one plan per device). Returns the arrays (one array if
    one was given)."""
    if len(arrays) == 1 and type(arrays[0]) is Array:      # `pt.realize(x)`: one array, no list to build
        realize_nodes([arrays[0]._node], "pt.realize()")
        return arrays[0]
    nodes = [a._node for a in arrays if isinstance(a, Array)]
    realize_nodes(nodes, "pt.realize()")
    return arrays[0] if len(arrays) == 1 else arrays


realize = api_boundary(realize)


def synchronize(device=None) -> None:
    """Wait for the work queued on `device` (a name or `pt.device`; default: every device in use)
    and raise the error of a kernel that trapped since the last host read: a realize on a GPU
    returns once its kernels are queued, and its errors (`KernelIndexError` naming the line of an
    out-of-bounds index) surface at the next `.numpy()`, `float(x)`... or here."""
    from poot.devices import opened
    from poot.jit.runtime.launch import synchronize as sync

    targets = opened() if device is None else [_dev.backend(_dev.canonical(device))]
    for d in targets:
        sync(d)


synchronize = api_boundary(synchronize)
