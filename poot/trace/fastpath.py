"""Fast paths for the commonest eager operations. Each one gives the same result as the general code
and hands anything else to it:

- `x + y`, `x - y`, `x * y`, `x / y`, `x ** y` (and the reflected forms) on an Array and a Python
  float or int (or a NumPy scalar of its dtype), or two Arrays of one dtype and one shape (or one of
  them 0-d), record their node directly: the dtype and shape need no promotion or broadcasting
  rules, and the user's line is the operator's caller.
- `x[i, j]` with one integer per axis of a realized CPU array reads the element on the host: a 0-d
  realized array whose buffer (lazy.HostScalar) holds the number and allocates device memory only if a
  kernel needs it.
- arithmetic on two such 0-d host values (or one and a Python scalar) is done on the host at once,
  each operation rounded to the dtype as NumPy rounds it, instead of recording an equation; so is
  `x += y` (and -=, *=, /=, **=) where `x + y` takes a fast path: the array object takes the result;
  comparisons (`x > y`, `x == 0.5`), whose bool is then read at once by `if`; and `-x`, `abs(x)`.
- `concatenate` and `stack` of realized CPU arrays of at most HOST_JOIN_BYTES in all copy the bytes on
  the host at once (a list of per-step losses stacked after a loop), instead of recording one
  equation per piece and a kernel that reads them all.
- `float(x)`, `int(x)`, `bool(x)`, `x.item()` of a 0-d CPU array read the number straight from its
  buffer (`_make_scalar`), with no NumPy view made for one element.
- `x[i, j] = v` with one integer per axis into a realized CPU array writes the element on the host
  (fastpath_writes.py).
"""
from __future__ import annotations

import math
import operator
import struct
import sys

import numpy as np

from poot import dtypes as dt
from poot.devices.cpu import CpuBuffer
from poot.errors import fast_boundary
from poot.graph import Aval
from poot.graph.ir import eqn_signature
from poot.jit.runtime import launch as _launches
from poot.jit.runtime import traps as _traps
from poot.trace import counters as _counters
from poot.trace.array import Array
from poot.trace.lazy import (_EMPTY, MAX_PENDING_DEPTH, HostScalar, Node, _internal_code, _shared, _state,
                   host_leaf, is_internal, lazy_where_from, pending_node, realize_nodes, shared_constant)

_getframe = sys._getframe
_prod = math.prod
_getrefcount = sys.getrefcount
_new = object.__new__

_FORMATS = {dt.float64: "d", dt.float32: "f", dt.float16: "e", dt.int64: "q", dt.int32: "i",
            dt.int16: "h", dt.int8: "b", dt.uint64: "Q", dt.uint32: "I", dt.uint16: "H",
            dt.uint8: "B", dt.bool_: "?"}
# tables by dtype name: a name hashes in C, a DType in Python
_STRUCT = {d.name: struct.Struct("=" + f) for d, f in _FORMATS.items()}
_AVAL0 = {d.name: Aval((), d) for d in _FORMATS}
_BOUNDS = {d.name: (int(dt.iinfo(d).min), int(dt.iinfo(d).max)) for d in _FORMATS if d.kind in "iu"}
_NO = object()
_F64 = dt.float64
# NumPy's scalar types of the numeric dtypes (not bool) -> the dtype
_NUMPY_SCALARS = {d.np.type: d for d in _FORMATS if d.kind in "fiu"}


def host_value(n: Node):
    """The number a realized 0-d CPU node holds, or _NO."""
    b = n.buf
    tb = type(b)
    if tb is HostScalar:
        return b.host_value()
    if tb is CpuBuffer and n.aval.shape == () and n.params is None:
        st = _STRUCT.get(n.aval.dtype.name)
        if st is not None:
            return st.unpack_from(b.handle, 0)[0]
    return _NO


HOST_JOIN_BYTES = 1 << 16


def host_join(nodes, axis: int, new_axis: bool):
    """np.concatenate (np.stack where `new_axis`) of `nodes` along `axis` as a realized CPU leaf, or
    None where a node is not a realized CPU leaf, the dtypes differ, the bytes exceed HOST_JOIN_BYTES
    or a function is being traced. Shapes are checked by the caller."""
    if _state.tracing:
        return None
    d = nodes[0].aval.dtype
    itemsize = d.itemsize
    parts = []         # the pieces' bytes (C order: along axis 0 the result is their concatenation)
    total = 0
    for n in nodes:
        b = n.buf
        a = n.aval
        if n.op is not None or b is None or n.params is not None or a.dtype is not d:
            return None
        nbytes = _prod(a.shape) * itemsize      # a.nbytes, without two property calls a piece
        total += nbytes
        if total > HOST_JOIN_BYTES:
            return None
        tb = type(b)
        if tb is CpuBuffer:
            parts.append(b.handle if b.nbytes == nbytes else b.handle[:nbytes])
        elif tb is HostScalar:
            parts.append(b.fmt.pack(b.host_value()))
        else:
            return None
    shape = nodes[0].aval.shape
    count = len(nodes) if new_axis else sum(n.aval.shape[axis] for n in nodes)
    shape = shape[:axis] + (count,) + shape[axis + (0 if new_axis else 1):]
    out = nodes[0].buf.device.allocate(total)
    if axis == 0:
        out.handle[:] = np.frombuffer(b"".join(parts), dtype=np.uint8)
    elif total:
        arrays = [np.frombuffer(p, dtype=d.np).reshape(n.aval.shape) for p, n in zip(parts, nodes)]
        (np.stack if new_axis else np.concatenate)(arrays, axis, out=out.handle.view(d.np).reshape(shape))
    return Node(None, (), None, Aval(shape, d), nodes[0].device, None, 0, out)


def _round(v, d: dt.DType):
    """`v` (a Python result of an operation on values of `d`) as NumPy's result of dtype `d`, or _NO
    where the host cannot say it cheaply (float overflow, which the kernel turns into inf)."""
    kind = d.kind
    if kind == "f":
        if d is dt.float64:
            return v
        st = _STRUCT.get(d.name)
        if st is None:                        # bfloat16: no struct format, the general path rounds it
            return _NO
        try:
            return st.unpack(st.pack(v))[0]   # double rounding is exact for + - * / of f32, f16
        except OverflowError:
            return _NO
    bits = d.bits
    v &= (1 << bits) - 1
    if kind == "i" and v >> (bits - 1):
        v -= 1 << bits
    return v


def _pow(x, y):
    # x ** 0.5 is sqrt(x), as NumPy computes it (-0.0 ** 0.5 is -0.0; a negative x raises ValueError here,
    # which sends it to the general path's nan)
    return math.sqrt(x) if y == 0.5 else math.pow(x, y)


def _host_array(value, fmt, aval: Aval, device: str, backend) -> Array:
    """An Array on a new host_leaf, made without Array.__init__'s frame."""
    x = _new(Array)
    x._node = host_leaf(value, fmt, aval, device, backend)
    return x


def _fast_binary(prim: str, pyop, reflected: bool, kinds: str):
    """The fast path of the dunder for `prim`, on dtypes of `kinds` ('f' or 'fiu'): the result, or None
    where the general code must decide. It runs under the operator's dunder, itself under
    fast_boundary's wrapper: the user's line is three frames up."""
    sqrt_exponent = prim == "pow" and not reflected
    # the signature (graph.ir.eqn_signature) of the last result aval met, as (aval, sig), given to the
    # node so that the walk of its realize need not build it (lazy.Node.sig). A loop's chain
    # (`z = z * a + b`) passes one Aval object along, so the identity test mostly hits; one tuple,
    # replaced whole, so threads never see an aval with another's signature.
    last = [(None, None)]

    def op(self, other):
        na = self._node
        a = na.aval
        d = a.dtype
        kind = d.kind
        t = type(other)
        if t is Array:
            nb = other._node
            b = nb.aval
            if nb.device != na.device or (b is not a and b.dtype is not d):
                return None
            if b is not a and b.shape != a.shape:
                if a.shape == ():               # s * x, s 0-d (a sum, a norm): the result is x's shape
                    a = b
                elif b.shape != ():             # x * s likewise; any other broadcast: the general path
                    return None
        elif t is float:
            if kind != "f" or (other == 0.5 and sqrt_exponent):    # x ** 0.5 is sqrt(x), as NumPy has it
                return None
            nb = None
        elif t is int:
            if kind != "f":
                bounds = _BOUNDS.get(d.name)
                if bounds is None or not bounds[0] <= other <= bounds[1]:
                    return None
            nb = None
        elif _NUMPY_SCALARS.get(t) is d:    # x / np.sqrt(n): a NumPy scalar of x's own dtype is exactly
            other = other.item()            # its Python number here (NumPy 2 promotes it as x's dtype)
            t = type(other)
            nb = None
        else:
            return None
        if kind not in kinds or _state.tracing:
            return None
        if na.op is None and a.shape == ():         # eager arithmetic on host values
            x = na.buf
            x = x.value if type(x) is HostScalar and x._buf is None else host_value(na)
            if x is not _NO:
                if nb is None:      # a Python scalar is weak: it takes x's dtype first, as in NumPy 2
                    y = _round(float(other), d) if kind == "f" else other
                else:
                    y = nb.buf
                    y = y.value if type(y) is HostScalar and y._buf is None else host_value(nb)
                if y is not _NO:
                    try:
                        v = pyop(y, x) if reflected else pyop(x, y)
                    except (ZeroDivisionError, OverflowError, ValueError):
                        v = _NO
                    if v is not _NO and d is not _F64:
                        v = _round(v, d)
                    if v is not _NO:
                        return _host_array(v, _STRUCT[d.name], a, na.device, na.buf.device)
        if nb is None:
            nb = _shared.get((other, t, d.name, na.device))
            if nb is None:
                nb = shared_constant(other, d, na.device)
        depth = na.depth if na.depth >= nb.depth else nb.depth
        if depth >= MAX_PENDING_DEPTH:
            return None
        f = _getframe(3)        # the caller of fast_boundary's wrapper: the user, as caller_where finds it
        code = f.f_code
        inside = _internal_code.get(id(code))
        if inside is None:
            inside = is_internal(code)
        where = lazy_where_from(f) if inside else (code, f.f_lasti)     # lazy.Node.where: the line later
        r = _new(Array)
        inputs = (nb, na) if reflected else (na, nb)
        seen = last[0]
        if seen[0] is a:
            sig = seen[1]
        else:
            sig = eqn_signature(prim, _EMPTY, a)
            last[0] = (a, sig)
        r._node = pending_node(prim, inputs, _EMPTY, a, na.device, where, depth + 1, sig)
        return r

    return op


def _make_compare(pyop, generic):
    """The comparison dunder with a fast path for 0-d host values (or one and a Python scalar of the
    array's kind): the bool is found on the host at once, so `if abs(A[i, k]) > best:` in an element loop
    neither records an equation nor realizes one. Anything else goes to `generic`."""

    def cmp(self, other):
        na = self._node
        a = na.aval
        if na.op is not None or a.shape != () or _state.tracing:
            return None
        d = a.dtype
        if d.kind not in "fiu":
            return None
        t = type(other)
        if t is Array:
            nb = other._node
            if nb.aval.dtype is not d or nb.aval.shape != () or nb.op is not None or nb.device != na.device:
                return None
            y = nb.buf
            y = y.value if type(y) is HostScalar and y._buf is None else host_value(nb)
        elif t is float or t is int:
            if d.kind == "f":
                try:
                    y = _round(float(other), d)      # weak: it takes x's dtype first
                except OverflowError:
                    return None
            elif t is int and _BOUNDS[d.name][0] <= other <= _BOUNDS[d.name][1]:
                y = other
            else:
                return None
        else:
            return None
        x = na.buf
        x = x.value if type(x) is HostScalar and x._buf is None else host_value(na)
        if x is _NO or y is _NO:
            return None
        return _host_array(bool(pyop(x, y)), _STRUCT["bool"], _AVAL0["bool"], na.device, na.buf.device)

    return fast_boundary(cmp, generic)


def _make_unary(pyop, generic):
    """-x and abs(x) of a 0-d host value, on the host (integers wrap as NumPy's do); else `generic`."""

    def un(self):
        n = self._node
        a = n.aval
        if n.op is not None or a.shape != () or _state.tracing or a.dtype.kind not in "fiu":
            return None
        x = n.buf
        x = x.value if type(x) is HostScalar and x._buf is None else host_value(n)
        if x is _NO:
            return None
        v = _round(pyop(x), a.dtype)
        if v is _NO:
            return None
        return _host_array(v, _STRUCT[a.dtype.name], a, n.device, n.buf.device)

    return fast_boundary(un, generic)


def _make_binary(prim: str, pyop, generic, reflected: bool, kinds: str):
    """The dunder for `prim` with its fast paths in front; anything else goes to `generic`. The commonest
    case of an element loop, two 0-d host values of one dtype (or one and a Python float), is done here
    with no further call: the host arithmetic and the result's objects inline (as host_leaf makes
    them), since a step of such a loop runs this a few times. Other cases go through `_fast_binary`."""
    fast = _fast_binary(prim, pyop, reflected, kinds)

    def dunder(self, other):
        na = self._node
        xb = na.buf
        if type(xb) is HostScalar and xb._buf is None and na.op is None and not _state.tracing:
            a = na.aval
            d = a.dtype
            t = type(other)
            y = _NO
            if t is Array:
                nb = other._node
                yb = nb.buf
                if type(yb) is HostScalar and yb._buf is None and nb.op is None and nb.aval is a \
                        and nb.device == na.device:
                    y = yb.value
            elif t is float and d is _F64:
                y = other
            if y is not _NO and d.kind in kinds:
                try:
                    v = pyop(y, xb.value) if reflected else pyop(xb.value, y)
                except (ZeroDivisionError, OverflowError, ValueError):
                    v = _NO
                if v is not _NO and d is not _F64:
                    v = _round(v, d)
                if v is not _NO:
                    b = _new(HostScalar)      # one store a statement: faster than a tuple's
                    b.device = xb.device
                    b.value = v
                    b.fmt = xb.fmt
                    b._buf = None
                    n = _new(Node)
                    n.op = None
                    n.inputs = ()
                    n.params = None
                    n.aval = a
                    n.device = na.device
                    n._where = None
                    n.depth = 0
                    n.buf = b
                    n.weak = 0
                    n.sig = None
                    r = _new(Array)
                    r._node = n
                    return r
        return fast(self, other)

    return fast_boundary(dunder, generic)


def _make_inplace(prim: str, pyop, generic, kinds: str):
    """`x op= y` where the fast path of `x op y` applies: its result has x's shape and dtype, so the
    array object takes it at once (as the general in-place operator does). An element loop's
    accumulator (`s += L[i, j] * U[j, k]`) thus stays a host value."""
    fast = _fast_binary(prim, pyop, False, kinds)

    def iop(self, other):
        r = fast(self, other)
        if r is None:
            return None
        self._node = r._node
        return self

    return fast_boundary(iop, generic)


def _flat_index(idx, shape):
    """The flat position of an index of one int per axis (negative ones from the end), or -1."""
    if type(idx) is tuple:
        if len(idx) == 2 == len(shape):      # the commonest: A[i, j]
            i, j = idx
            if type(i) is not int or type(j) is not int:
                return -1
            s0, s1 = shape
            if i < 0:
                i += s0
            if j < 0:
                j += s1
            return i * s1 + j if 0 <= i < s0 and 0 <= j < s1 else -1
        if len(idx) != len(shape):
            return -1
        flat = 0
        for i, s in zip(idx, shape):
            if type(i) is not int:
                return -1
            if i < 0:
                i += s
            if not 0 <= i < s:
                return -1
            flat = flat * s + i
        return flat
    if type(idx) is int and len(shape) == 1:
        s = shape[0]
        i = idx + s if idx < 0 else idx
        return i if 0 <= i < s else -1
    return -1


def _make_getitem(generic):
    """`x[i, j]` (one int per axis) of a realized CPU array read on the host, in one frame: the result's
    objects are made inline (as host_leaf makes them), since an element loop reads a few a step."""

    def __getitem__(self, idx):
        n = self._node
        b = n.buf
        if type(b) is CpuBuffer and n.params is None and not _state.tracing:
            a = n.aval
            shape = a.shape
            if type(idx) is tuple and len(idx) == 2 == len(shape):      # A[i, j]: _flat_index, inline
                i, j = idx
                s0, s1 = shape
                if type(i) is int and type(j) is int and -s0 <= i < s0 and -s1 <= j < s1:
                    flat = (i + s0 if i < 0 else i) * s1 + (j + s1 if j < 0 else j)
                else:
                    flat = -1
            else:
                flat = _flat_index(idx, shape)
            if flat >= 0:
                name = a.dtype.name
                st = _STRUCT.get(name)
                if st is not None:
                    h = _new(HostScalar)
                    h.device = b.device
                    h.value = st.unpack_from(b.handle, flat * st.size)[0]
                    h.fmt = st
                    h._buf = None
                    m = _new(Node)
                    m.op = None
                    m.inputs = ()
                    m.params = None
                    m.aval = _AVAL0[name]
                    m.device = n.device
                    m._where = None
                    m.depth = 0
                    m.buf = h
                    m.weak = 0
                    m.sig = None
                    r = _new(Array)
                    r._node = m
                    return r
        return None

    return fast_boundary(__getitem__, generic)


def _make_scalar(generic):
    """Array._scalar (what float(x), int(x), bool(x), x.item() and an index read) with a fast path for
    a 0-d array whose buffer is host memory (a realized CPU array, or a HostScalar): the number is
    unpacked from the buffer (host_value) instead of going through a NumPy view, `.reshape(())` and
    `.item()`, which cost more than the realize of a small cached program, and a HostScalar (an element
    read `x[i, j]`) allocates no device memory for it. It applies only where the general read would do
    nothing else first: no @kernel launch or GPU program has traps still unchecked (the general read
    raises those before it returns)."""

    def _scalar(self, what: str):
        n = self._node
        if n.aval.shape == () and not _launches.unchecked and not _traps._pending:
            if n.buf is None:
                realize_nodes([n], what)      # as generic's self._realize(what)
            v = host_value(n)
            if v is not _NO:
                _counters.counts.host_reads += 1
                return v
        return generic(self, what)

    return _scalar


_ARITH = (("add", "add", operator.add, "fiu"), ("sub", "sub", operator.sub, "fiu"),
          ("mul", "mul", operator.mul, "fiu"), ("truediv", "div", operator.truediv, "f"),
          ("pow", "pow", _pow, "f"))


def install(cls) -> None:
    """Put the fast paths in front of the operators `cls` (poot.Array) has now."""
    for stem, prim, pyop, kinds in _ARITH:
        setattr(cls, f"__{stem}__", _make_binary(prim, pyop, getattr(cls, f"__{stem}__"), False, kinds))
        setattr(cls, f"__r{stem}__", _make_binary(prim, pyop, getattr(cls, f"__r{stem}__"), True, kinds))
        setattr(cls, f"__i{stem}__", _make_inplace(prim, pyop, getattr(cls, f"__i{stem}__"), kinds))
    for stem in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(cls, f"__{stem}__", _make_compare(getattr(operator, stem), getattr(cls, f"__{stem}__")))
    cls.__neg__ = _make_unary(operator.neg, cls.__neg__)
    cls.__abs__ = _make_unary(abs, cls.__abs__)
    cls.__getitem__ = _make_getitem(cls.__getitem__)
    from poot.trace.fastpath_writes import make_setitem

    cls.__setitem__ = make_setitem(cls.__setitem__)
    cls._scalar = _make_scalar(cls._scalar)
