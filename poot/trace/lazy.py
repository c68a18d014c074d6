"""Lazy nodes: what a `poot.Array` points at, how operations are recorded and how values are realized.

A `Node` is either
- pending: `op(*inputs, **params)`, an equation not yet run (its inputs are Nodes);
- a realized leaf: `op is None` and `buf` holds the device Buffer;
- an abstract placeholder: `op is None` and `buf is None`, a graph input with only an aval. `@poot.jit`
  traces with these; realizing anything that depends on one raises `TracerError`.
Realizing turns a pending node into a realized leaf in place and drops its inputs, so a long loop keeps
no history. Recording auto-realizes once a pending chain is deeper than `MAX_PENDING_DEPTH` equations,
so graphs never grow without bound (except while tracing, where realizing is refused).
"""
from __future__ import annotations

import contextlib
import math
import sys
import threading
import types

import numpy as np

from poot import dtypes as dt
from poot.devices.base import Buffer
from poot.errors import (DeviceError, DomainError, DTypeError, LeakedTracerError, PootError, ScalarOverflowError,
                         TracerError, line_at)
from poot.graph import OPS, Aval, Graph
from poot.graph.aval import check_size
from poot.jit.runtime.execute import execute_keyed, numpy_to_buffer
from poot.trace import context as _dev
from poot.trace import counters as _counters
from poot.trace.walk import Walk
# where the user is (re-exported: recording, the fast paths and errors read them from here)
from poot.trace.user_lines import (_internal_code, caller_where, format_where, is_internal,  # noqa: F401
                                   lazy_where_from, where_from)

MAX_PENDING_DEPTH = 1000
_EMPTY: dict = {}
_CodeType = types.CodeType


class HostScalar(Buffer):
    """The buffer of a 0-d value known on the host: an element of a realized CPU array read with
    integer indices, or eager arithmetic on such values (poot/trace/fastpath.py). It keeps the number
    (`value`, packed with the `struct.Struct` `fmt`) and allocates device memory only when something
    asks for `handle` (a kernel taking it as an input, `.numpy()`); from then on that memory holds the
    value, and `host_value` reads it there. Made by `host_leaf`."""

    __slots__ = ("value", "fmt", "_buf")

    @property
    def nbytes(self) -> int:
        return self.fmt.size

    @property
    def handle(self):
        b = self._buf
        if b is None:
            b = self._buf = self.device.allocate(self.nbytes)
            self.fmt.pack_into(b.handle, 0, self.value)
        return b.handle

    def host_value(self):
        b = self._buf
        return self.value if b is None else self.fmt.unpack_from(b.handle, 0)[0]


class Node:
    # weak: 1 for a weakly typed value (a jitted function's Python scalar argument, and what is
    # computed from such values and Python literals alone), 2 for a Python literal's constant
    # leaf, else 0. Weak values promote like Python scalars (`f32_array * s` stays float32).
    # sig: a pending equation's signature (graph.ir.eqn_signature), made by the first walk that meets
    # it, or given by the recipe that replayed it; None until then. An equation never changes (it
    # only becomes a leaf), so its signature stays true.
    # _where: what `where` reads: (filename, line), None, or, as the recording paths keep it, the
    # user's (code object, byte offset) (see lazy_where_from), turned into (filename, line) on first read.
    __slots__ = ("op", "inputs", "params", "aval", "device", "_where", "depth", "buf", "weak", "sig")

    def __init__(self, op, inputs, params, aval, device, where, depth, buf=None, weak=0):
        self.op, self.inputs, self.params, self.aval = op, inputs, params, aval
        self.device, self._where, self.depth, self.buf, self.weak = device, where, depth, buf, weak
        self.sig = None

    @property
    def where(self):
        """(filename, line) of the user's call that made this node, or None. Recording keeps the
        caller's code object and instruction offset instead, and the line is found here, when
        something first asks (an error message, a graph built for compiling): a frame's f_lineno
        scans the function's line table, up to half a microsecond a call in a long function, and
        most recorded nodes are never asked."""
        w = self._where
        if w is not None and type(w[0]) is _CodeType:
            w = self._where = (w[0].co_filename, line_at(w[0], w[1]))
        return w

    @where.setter
    def where(self, value) -> None:
        self._where = value

    def __repr__(self) -> str:
        state = self.op or ("realized" if self.buf is not None else "placeholder")
        return f"<Node {state} {self.aval} on {self.device}>"


_new = object.__new__


def leaf_node(aval: Aval, device: str, buf) -> Node:
    """A realized leaf holding `buf`, filled by direct slot stores: Node() runs a Python __init__ frame,
    which costs as much again, and every element read of an element loop (host_leaf) and every result
    of a jitted call (jit_program.py) makes one."""
    n = _new(Node)
    n.op = None
    n.inputs = ()
    n.params = None
    n.aval = aval
    n.device = device
    n._where = None
    n.depth = 0
    n.buf = buf
    n.weak = 0
    n.sig = None
    return n


def pending_node(op: str, inputs: tuple, params, aval: Aval, device: str, where, depth: int,
                 sig=None) -> Node:
    """A pending equation node, filled by direct slot stores as leaf_node is: every recorded
    operation makes one (a recipe's replay makes its nodes the same way, inline), and Node()'s
    __init__ frame costs about as much as the rest of a replayed step. `where`: as Node._where keeps
    it. `sig`: its signature where the caller knows it (a recipe, a fast path), else the walk makes it."""
    n = _new(Node)
    n.op = op
    n.inputs = inputs
    n.params = params
    n.aval = aval
    n.device = device
    n._where = where
    n.depth = depth
    n.buf = None
    n.weak = 0
    n.sig = sig
    return n


def host_leaf(value, fmt, aval: Aval, device: str, backend) -> Node:
    """A realized 0-d leaf on `device` (whose Device is `backend`) holding `value` in a HostScalar
    packed with `fmt` (made without a constructor's frame, as leaf_node; fastpath.py makes the
    commonest ones inline, the same way)."""
    b = _new(HostScalar)
    b.device = backend
    b.value = value
    b.fmt = fmt
    b._buf = None
    return leaf_node(aval, device, b)


# --- tracing state (for @poot.jit) --------------------------------------------------------------
class _State(threading.local):
    tracing = 0       # > 0 while a function is traced on this thread
    scope = None      # the list collecting the nodes recorded in the innermost traced body
    weak_casts = None  # while tracing a jitted function: the dtypes weak values were cast to
    capture = None    # the list collecting recorded nodes while a recipe is captured (recipes.py)


_state = _State()
_state_live = threading.local()    # .ids: the placeholders of the traces open now (see `placeholder`)


def _live_ids() -> set:
    if not hasattr(_state_live, "ids"):
        _state_live.ids = set()
    return _state_live.ids


def _trace_closed() -> None:
    """The outermost trace ended: every placeholder made so far belongs to a finished trace."""
    if _state.tracing == 0:
        _live_ids().clear()


def is_tracing() -> bool:
    return _state.tracing > 0


@contextlib.contextmanager
def tracing():
    """While active on this thread, realizing is refused with TracerError and no auto-realize
    happens: everything recorded stays in the graph being traced."""
    _state.tracing += 1
    try:
        yield
    finally:
        _state.tracing -= 1
        _trace_closed()


@contextlib.contextmanager
def scope():
    """Trace a function body: like `tracing()`, and yields the set of the ids of the nodes recorded
    meanwhile (filled on exit). `build_graph(..., inside=that set)` stops at every other node: values
    from outside the body become inputs of its graph instead of being recomputed in it."""
    outer = _state.scope
    created: list[Node] = []
    ids: set[int] = set()
    _state.scope = created
    _state.tracing += 1
    try:
        yield ids
    finally:
        _state.tracing -= 1
        _trace_closed()
        _state.scope = outer
        ids.update(id(n) for n in created)
        if outer is not None:   # a nested body's nodes also belong to the enclosing one
            outer.extend(created)


def placeholder(aval: Aval, device: str, where=None) -> Node:
    """An abstract graph input: a shape and dtype, no value (what @poot.jit traces with). It is
    noted as live until the outermost trace ends, so that one used after that is told apart
    (a leaked tracer) from one used for Python control flow inside its trace."""
    n = Node(None, (), None, aval, device, where or caller_where(), 0)
    _live_ids().add(id(n))
    return n


# --- recording ----------------------------------------------------------------------------------
def describe(nodes) -> str:
    return ", ".join(str(n.aval) for n in nodes)


_rule_cache: dict = {}


def record(op: str, inputs: tuple, params: dict = _EMPTY, device: str | None = None) -> Node:
    """Record `op(*inputs, **params)` as a pending node; its aval comes from the op's shape rule."""
    if params:
        try:
            aval = check_size(OPS[op].shape_rule([n.aval for n in inputs], **params), op)
        except PootError as e:
            raise type(e)(f"{e} (operands: {describe(inputs) or 'none'})") from None
    else:
        if len(inputs) == 2:
            a, b = inputs[0].aval, inputs[1].aval
            key = (op, a.shape, a.dtype.name, b.shape, b.dtype.name)
        else:
            key = (op,) + tuple((n.aval.shape, n.aval.dtype.name) for n in inputs)
        aval = _rule_cache.get(key)
        if aval is None:
            try:
                aval = check_size(OPS[op].shape_rule([n.aval for n in inputs]), op)
            except PootError as e:
                raise type(e)(f"{e} (operands: {describe(inputs)})") from None
            if len(_rule_cache) > 4096:
                _rule_cache.clear()
            _rule_cache[key] = aval
    dev = device or inputs[0].device
    depth = 0
    for n in inputs:
        if n.depth > depth:
            depth = n.depth
        if n.device != dev:
            _mixed_devices(op, dev, n.device)
    node = pending_node(op, inputs, params, aval, dev, lazy_where_from(sys._getframe(1)), depth + 1)
    st = _state
    if st.scope is not None:
        st.scope.append(node)
    if st.capture is not None:
        st.capture.append(node)
    if st.tracing and inputs and inputs[0].weak:
        node.weak = _weak_result(inputs)
    if depth >= MAX_PENDING_DEPTH and not st.tracing:
        realize_nodes([node])
    return node


def _mixed_devices(op: str, dev: str, other: str):
    """Refuse an op whose operands live on two devices when it is recorded: a kernel reads buffers of
    its own device only, so the mix would otherwise fail later, at realize, far from the line."""
    raise DeviceError(f"{op}: operands are on different devices ('{dev}' and '{other}'); "
                      f"move one first, e.g. x.to('{dev}')")


def _weak_result(inputs) -> int:
    """An op on weak values and literals only is weak (`s * 2` for a traced scalar `s`)."""
    kinds = [n.weak for n in inputs]
    return 1 if all(kinds) and 1 in kinds else 0


def note_weak_cast(dtype: dt.DType, node: Node | None = None) -> None:
    """A weak value was converted to `dtype` while tracing: a jitted call checks that its scalar
    arguments fit the integer dtypes noted (as `int8_array + 300` is refused outside jit). With
    `node` (the weak value), the dtype is noted only for the scalar arguments it is computed from,
    as (placeholder id, dtype): a loop index or another argument meeting a uint8 array does not
    make every Python int argument of the call have to fit uint8."""
    casts = _state.weak_casts
    if casts is None or dtype.kind not in "iu":
        return
    if node is None:
        casts.add(dtype)
        return
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen or not n.weak:
            continue
        seen.add(id(n))
        if n.op is None and n.buf is None:
            casts.add((id(n), dtype))
        stack.extend(n.inputs)


# --- constants and host data --------------------------------------------------------------------
def check_scalar_fits(value, dtype: dt.DType, op: str = "array"):
    """A Python int must fit an integer dtype (NumPy 2 refuses `int8_array + 300`)."""
    if dtype.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dtype.np)
        if not info.min <= value <= info.max:
            raise ScalarOverflowError(f"{op}: Python integer {value} is out of bounds for {dtype.name}; "
                                      f"use a wider dtype (e.g. x.astype(poot.int64)) or a smaller value")


def check_scalars_fit(values, dtype: dt.DType, op: str) -> None:
    """check_scalar_fits for each Python int of `values` (a scalar, or nested lists and tuples of
    them): NumPy 2 refuses `x_u8[[0, 1]] = [1, 300]` as it refuses `x_u8[0] = 300`."""
    if dtype.kind not in "iu":
        return
    for v in (values if isinstance(values, (list, tuple)) else [values]):
        if isinstance(v, (list, tuple)):
            check_scalars_fit(v, dtype, op)
        else:
            check_scalar_fits(v, dtype, op)


def scalar_value(value, dtype: dt.DType):
    """`value` as the Python scalar a `full` equation of `dtype` stores."""
    if dtype.kind != "c" and isinstance(value, complex):
        raise DTypeError(f"cannot convert the complex value {value} to {dtype.name} (take .real or "
                         f"use a complex array)")
    if dtype.kind == "f":
        return float(value)
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind == "c":
        return complex(value)
    if isinstance(value, float):    # NumPy's classes: NaN is a ValueError, an infinity an OverflowError
        if value != value:
            raise DomainError(f"cannot convert float NaN to {dtype.name} (an integer dtype has no NaN)")
        if value in (float("inf"), float("-inf")):
            raise ScalarOverflowError(f"cannot convert float {value} to {dtype.name} (an integer dtype "
                                      f"has no infinity)")
        info = np.iinfo(dtype.np)
        if not info.min <= int(value) <= info.max:   # NumPy's OverflowError (a folded astype saturates)
            raise ScalarOverflowError(f"cannot convert float {value} to {dtype.name}: out of its range "
                                      f"[{info.min}, {info.max}]")
        value = int(value)
    return int(np.asarray(value).astype(dtype.np))


def constant(value, dtype: dt.DType, device: str, shape=()) -> Node:
    """A `full` node: a scalar broadcast to `shape` (nothing is allocated until it is used)."""
    return record("full", (), {"shape": tuple(shape), "value": scalar_value(value, dtype),
                               "dtype": dtype}, device)


_shared: dict = {}


def shared_constant(value, dtype: dt.DType, device: str) -> Node:
    """A user's Python scalar in an operation (`x * 0.5`) as a 0-d realized leaf, not a `full`
    equation: the value then lives in a buffer, not in the graph's structure, so `x * 0.5` and
    `x * 0.25` share one compiled program. Leaves are immutable, so equal scalars share one (a small
    bounded cache). Keyed by the value's bits where equality is too coarse: +0.0 == -0.0, so a float
    zero is keyed by its sign (and never under the plain key fastpath.py looks up); NaNs never compare
    equal, so a NaN is found again only as the same object, whose bits are the same."""
    if isinstance(value, float) and value == 0.0:
        key = ("zero", math.copysign(1.0, value), dtype.name, device)
    else:
        key = (value, type(value), dtype.name, device)     # a name hashes in C, a DType in Python
    n = _shared.get(key)
    if n is None:
        if len(_shared) >= 512:
            _shared.clear()
        n = _shared[key] = from_numpy(np.asarray(scalar_value(value, dtype), dtype=dtype.np), device,
                                      dtype)
        n.weak = 2
    return n


def from_numpy(array: np.ndarray, device: str, dtype: dt.DType | None = None) -> Node:
    """A realized leaf holding a copy of `array` on `device`."""
    if dtype is None:
        dtype = dt.as_dtype(array.dtype)
    if array.dtype != dtype.np:
        array = array.astype(dtype.np)
    backend = _dev.backend(device)
    # raw bytes (a uint8 view works for every dtype, bf16 included); an empty array is all aval
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    buf = numpy_to_buffer(raw, backend) if array.size else backend.allocate(0)
    return Node(None, (), None, Aval(tuple(array.shape), dtype), device, None, 0, buf)


def from_buffer(buf, aval: Aval, device: str) -> Node:
    return Node(None, (), None, aval, device, None, 0, buf)


# --- graphs and realization ---------------------------------------------------------------------
def build_graph(roots, inside: set | None = None) -> tuple[Graph, list[Node]]:
    """The Graph computing `roots` from their leaves, with the leaf Nodes in the order of
    `graph.inputs` (see `Walk`; `inside`: node ids, see `scope`)."""
    w = Walk(roots, inside)
    return w.graph(), w.leaves


DONATED = "donated"   # the params of a node whose buffer was donated to a jitted call


def refuse_if_tracing(what: str, node: Node) -> None:
    if node.params == DONATED:
        raise PootError(f"{what}: this array ({node.aval}) was donated to a jitted function at "
                        f"{format_where(node.where)} and its buffer may now hold that call's result; "
                        f"use the result, or do not list the argument in donate_argnums")
    if node.op is None and node.buf is None and id(node) not in _live_ids():
        raise LeakedTracerError(
            f"at {format_where(caller_where())}: {what} uses a leaked tracer: this array ({node.aval}) "
            f"depends on a value traced at {format_where(node.where)} (an argument of a pt.jit or "
            f"pt.vmap function, or of a loop or branch body), and escaped that trace (stored in an outer "
            f"variable or list); it has no value outside it. Return it from the function instead")
    if is_tracing() or (node.op is None and node.buf is None):
        raise TracerError(
            f"at {format_where(caller_where())}: {what} needs a concrete value, but this array "
            f"({node.aval}) is traced (recorded at {format_where(node.where)}); Python control "
            f"flow cannot depend on it: use pt.where, pt.cond, pt.fori_loop or pt.while_loop "
            f"instead, or mark the argument static (pt.jit(f, static_argnums=...))")


def realize_nodes(nodes, what: str = "realizing") -> None:
    """Run everything pending below `nodes`, one graph per device, and turn them into leaves."""
    if len(nodes) == 1:             # `.numpy()`, `float(x)`, `pt.realize(x)`: one array
        n = nodes[0]
        if n.buf is not None:
            return
        if n.op is not None and 0 not in n.aval.shape and not _state.tracing and \
                (n.aval.dtype is not dt.bfloat16 or _bf16_ok.get(n.device)):
            _realize_group(n.device, [n], [n], what)
            return
    pending: dict[int, Node] = {}
    for n in nodes:
        if n.buf is None:
            refuse_if_tracing(what, n)
            if 0 in n.aval.shape:  # an empty array is all aval: nothing to compute
                _become_leaf(n, _dev.backend(n.device).allocate(0))
                continue
            pending.setdefault(id(n), n)
    if not pending:
        return
    groups: dict[str, list[Node]] = {}
    for n in pending.values():
        groups.setdefault(n.device, []).append(n)
    for dev, group in groups.items():
        roots = [_as_bits(n) if n.aval.dtype is dt.bfloat16 and _bf16_needs_bits(dev) else n
                 for n in group]
        _realize_group(dev, group, roots, what)


def _realize_group(dev: str, group: list, roots: list, what: str) -> None:
    """Realize the pending nodes `group` of device `dev` as one program computing `roots` (the
    group, bf16 ones as their bits where the device needs it)."""
    w = Walk(roots)
    bufs = []
    for leaf in w.leaves:
        b = leaf.buf
        if b is None:
            refuse_if_tracing(what, leaf)
        bufs.append(b)
    live = _live_intermediates(w, roots)
    if live:
        group = group + live
        w.add_outputs(live)
    _counters.counts.programs += 1
    outs = execute_keyed(w.key, w.graph, bufs, _dev.executor(dev))
    for n, b in zip(group, outs):
        n.buf, n.op, n.inputs, n.params, n.depth = b, None, (), None, 0     # _become_leaf, inline


_FREE_TO_RECOMPUTE = ("movement", "source")


def _live_intermediates(w: Walk, roots: list) -> list:
    """The pending nodes below `roots` that something outside this realize still refers to: an
    Array the user holds, or a pending equation not being realized now. Each will be read again by a
    later realize, which would compute it (and everything below it) a second time; realized now, as
    one more output of the same program, it is computed once and later realizes read its buffer. This
    is NumPy's cost model (every named value is stored once) without NumPy's cost (values nobody
    holds stay fused). Views and constants are not stored: recomputing them is free, so a view held
    outside stores the value it views instead.

    Who refers to a node is read from its reference count: the references a node has from inside the
    walk (the walk's list, and each operand slot of a walked equation) are known, so any others come
    from outside."""
    nodes = w.nodes
    if len(nodes) == 1 and nodes[0] is roots[0]:   # one equation, the one being realized
        return []
    counts = _outside_references(nodes, w.uses)
    if len(roots) == 1 and nodes[-1] is roots[0]:  # one root, walked last: is anything else held?
        counts[-1] = 0
        if not any(counts):
            return []
    own = {id(r) for r in roots}
    live: dict[int, Node] = {}
    seen: set = set()       # views met (a view reading one node twice, as concatenate([y[1:], y[:1]]) does,
    for n, outside in zip(nodes, counts):       # would otherwise be walked 2**depth times)
        if not outside or id(n) in own:
            continue
        stack = [n]
        while stack:
            m = stack.pop()
            if m.op is None or id(m) in own or id(m) in live or id(m) in seen:
                continue
            if OPS[m.op].kind in _FREE_TO_RECOMPUTE:
                seen.add(id(m))
                stack.extend(m.inputs)
            else:
                live[id(m)] = m
    return list(live.values())


def _outside_references(nodes: list, uses: list) -> list:
    """For each node of `nodes` (a walk's list, in post-order), how many references to it come from
    outside the walk: its reference count less the walk's list and `uses` (per node, the operand
    slots of the walk's equations reading it, counted by the walk), less what counting itself adds
    (measured once, below, on a node nothing else holds)."""
    refs = list(map(sys.getrefcount, nodes))
    return [r - u - _COUNTING_REFS for r, u in zip(refs, uses)]


_COUNTING_REFS = 0
_COUNTING_REFS = _outside_references([Node("neg", (), None, None, "cpu", None, 1)], [0])[0]

def _become_leaf(n: Node, buf) -> None:
    """A realized node keeps its buffer and drops its equation and inputs (no history is kept)."""
    n.buf, n.op, n.inputs, n.params, n.depth = buf, None, (), None, 0


# --- a device that cannot write bf16 arrays -------------------------------------------------------
_bf16_ok: dict[str, bool] = {}


def _bf16_needs_bits(dev: str) -> bool:
    """True when `dev`'s buffers cannot take a bf16 NumPy array (the CPU device's write() goes
    through memoryview, which has no bf16 format); outputs are then bitcast to uint16 (same bytes)."""
    ok = _bf16_ok.get(dev)
    if ok is None:
        backend = _dev.backend(dev)
        try:
            backend.write(backend.allocate(2), np.zeros(1, dt.bfloat16.np))
            ok = True
        except (ValueError, TypeError):
            ok = False
        _bf16_ok[dev] = ok
    return not ok


def _as_bits(n: Node) -> Node:
    return Node("bitcast", (n,), {"dtype": dt.uint16}, Aval(n.aval.shape, dt.uint16), n.device,
                n.where, n.depth + 1)
