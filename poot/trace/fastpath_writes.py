"""Element writes on the host: `x[i, j] = v` with one integer per axis into a realized CPU array, `v` a
Python scalar or a 0-d array of x's dtype, writes the element in place when nothing else can see x's
memory (no other array, pending equation or exported NumPy view refers to it: reference counts, as in
lazy._live_intermediates), else into a copy that x then holds alone (`make_setitem`, installed on Array
by fastpath.install).

Element-by-element loops (`A[i, j] = A[i, j] - A[i, k] * A[k, j]`) thus run on the host at a few
microseconds a step, instead of growing a graph with one stored update per step. `sole_owner` answers
the same question for a kernel launch that writes an array in place.
"""
from __future__ import annotations

import dis
import sys

from poot import dtypes as dt
from poot.devices.cpu import CpuBuffer
from poot.errors import api_boundary, fast_boundary
from poot.graph import Aval
from poot.trace.array import Array
from poot.trace.fastpath import _BOUNDS, _NO, _STRUCT, _flat_index, _getrefcount, _round, host_value
from poot.trace.lazy import HostScalar, Node, _state, realize_nodes


def _counts(x: Array) -> tuple:
    """Reference counts of x's node, its buffer and the memory's owner, as seen from here."""
    n = x._node
    b = n.buf
    raw = b.handle.base
    return _getrefcount(n), _getrefcount(b), _getrefcount(raw)


def _node_counts(x: Array) -> tuple:
    """_counts less the memory's owner (a device buffer has no NumPy base): the same first two."""
    n = x._node
    b = n.buf
    return _getrefcount(n), _getrefcount(b)


_alone = None      # the counts of an array nothing else refers to, measured on first use


def _alone_counts(cpu) -> tuple:
    """`_alone`, measured on a probe array of CPU device `cpu` the first time."""
    global _alone
    if _alone is None:
        _alone = _counts(Array(Node(None, (), None, Aval((8,), dt.uint8), "cpu", None, 0, cpu.allocate(8))))
    return _alone


def sole_owner(x: Array) -> bool:
    """Whether only realized `x` can see its memory: no other Array or pending node refers to its node,
    no other node to its buffer, and (host memory) no NumPy view or DLPack export of the memory. What
    the CPU's `x[i] = v` asks before writing in place (`_write`), and a @kernel launch on any device
    (Array.__poot_write_buffer__). The caller holds no reference to x's node or its buffer."""
    b = x._node.buf
    if type(b) is HostScalar:
        return False
    device = b.device
    del b
    if device.shares_host_memory:
        counts = _counts(x)
        return counts == _alone or _alone_after_all(x, counts)
    from poot.trace import context

    return _node_counts(x) == _alone_counts(context.backend("cpu"))[:2]


def _alone_after_all(x: Array, counts: tuple) -> bool:
    """True when `x`, whose counts are not `_alone`, is still the only one that can see its memory:
    `_alone` was not measured yet, or the one more reference to the memory is the CPU device's pool
    of reusable large allocations (cpu_pool.py) listing it."""
    b = x._node.buf
    alone = _alone_counts(b.device)
    if counts == alone:
        return True
    if counts[0] != alone[0] or counts[1] != alone[1] or counts[2] != alone[2] + 1:
        return False
    raw = b.handle.base
    pool = getattr(b.device, "_host_pool", None)
    bucket = pool._by_size.get(raw.nbytes, ()) if pool is not None else ()
    return any(r is raw for r in bucket)


_realize_value = api_boundary(realize_nodes)


def _temporary_refcounts() -> tuple:
    """What sys.getrefcount(self) reads in `__setitem__` (a fast_boundary one) when `self` is a
    temporary nothing else holds (`Z[1][0] = v`) rather than an array held by a name, an attribute or
    a list: measured on a probe class at import, so it follows the interpreter's reference counting
    (0, checking nothing, where the two cannot be told apart). Two counts: the statement's (the
    interpreter's STORE_SUBSCR) and an explicit `x.__setitem__(i, v)` call's, which holds `self` once
    less, so that a held array written by the explicit call is not taken for a temporary."""
    seen = []

    def fast(self, idx, value):
        seen.append(sys.getrefcount(self))
        return True

    probe = type("Probe", (), {"__setitem__": fast_boundary(fast, lambda self, idx, value: None)})
    probe()[0] = 1
    held = probe()
    held[0] = 1
    probe().__setitem__(0, 1)
    held.__setitem__(0, 1)
    return (seen[0] if seen[0] < seen[1] else 0), (seen[2] if seen[2] < seen[3] else 0)


_TEMPORARY, _TEMPORARY_CALL = _temporary_refcounts()
_STORE_SUBSCR = dis.opmap.get("STORE_SUBSCR", -1)


def _lost_write(count: int, caller) -> bool:
    """Whether `self`, read at `count` (<= _TEMPORARY) in `__setitem__` called from frame `caller`, is a
    temporary: by the statement's count where the caller runs `x[i] = v`, else (an explicit
    `x.__setitem__` call, operator.setitem) by the lower count of the explicit call, which may miss a
    temporary but never refuses a held array."""
    code = caller.f_code.co_code
    if 0 <= caller.f_lasti < len(code) and code[caller.f_lasti] == _STORE_SUBSCR:
        return True
    return count <= _TEMPORARY_CALL


def _refuse_lost_write():
    from poot.errors import CopyError

    raise CopyError("this assignment writes into a temporary array nothing holds (as in Z[1][0] = v, "
                    "Z.T[0] = v or Z.real[0] = v): in poot, indexing, .T, reshape, .real and .imag give "
                    "new arrays, not views of Z, so the write would be lost; index once (Z[1, 0] = v, "
                    "Z[:, 0] = v), name the result first, or assign a whole part (r = Z.real; r[0] = v; "
                    "Z.real = r)")


def make_setitem(generic):
    """`x[i, j] = v` (one int per axis) into a realized CPU array, `v` as _scalar_for takes it. A
    pending x is stored first; anything else goes to `generic`."""

    def __setitem__(self, idx, value):
        if sys.getrefcount(self) <= _TEMPORARY and _lost_write(sys.getrefcount(self), sys._getframe(2)):
            _refuse_lost_write()
        n = self._node
        b = n.buf
        if b is None and n.op is not None and n.device == "cpu" and not _state.tracing \
                and _flat_index(idx, n.aval.shape) >= 0:
            _realize_value([n], "x[i] = v")   # one element at a time: store x first, as NumPy has it
            b = n.buf
        if type(b) is CpuBuffer and n.params is None and not _state.tracing:
            a = n.aval
            d = a.dtype
            st = _STRUCT.get(d.name)
            if st is not None:
                flat = _flat_index(idx, a.shape)
                if flat >= 0:
                    v = _scalar_for(value, d, n.device)
                    if v is not _NO:
                        del n, b            # _write counts the references to them
                        _write(self, flat * st.size, st, v)
                        return True
        return None

    return fast_boundary(__setitem__, generic)


def _scalar_for(value, d: dt.DType, device: str):
    """`value` as the number `x[i] = value` stores in an array of dtype `d`, or _NO (the general
    path decides: conversions, errors)."""
    t = type(value)
    if t is Array:
        vn = value._node
        if vn.aval.shape != () or vn.aval.dtype is not d or vn.device != device:
            return _NO
        if vn.buf is None:
            if vn.op is None or _state.tracing:
                return _NO
            _realize_value([vn], "x[i] = v")
        b = vn.buf
        return b.value if type(b) is HostScalar and b._buf is None else host_value(vn)
    if t is float:
        if d.kind != "f":
            return _NO
        return _round(value, d)
    if t is int:
        if d.kind == "f":
            try:
                return _round(float(value), d)
            except OverflowError:
                return _NO
        bounds = _BOUNDS.get(d.name)
        return value if bounds is not None and bounds[0] <= value <= bounds[1] else _NO
    return _NO


def _write(x: Array, offset: int, st, v) -> None:
    """Store `v` at byte `offset` of x's memory: in place when only `x` can see it (no other Array or
    pending node refers to x's node, no other node to its buffer, no NumPy view (.numpy(), DLPack) to
    the memory), else into a copy that x then holds alone. The caller holds no reference to x's node
    or its buffer."""
    counts = _counts(x)
    if counts != _alone and not _alone_after_all(x, counts):
        n = x._node
        b = n.buf
        new = b.device.allocate(b.nbytes)
        new.handle[:] = b.handle
        x._node = Node(None, (), None, n.aval, n.device, None, 0, new)
    st.pack_into(x._node.buf.handle, offset, v)
