"""The compiled program of one signature of a jitted function, and a call of it.

Built from a finished trace: the function's result (a pytree), the placeholders it was traced with
and the set of nodes recorded while tracing. The graph's inputs are bound, per call, to the argument
buffers (placeholders) and, once for all calls, to the values the function closed over (constants
and outer arrays, realized at trace time). Results that are not arrays are kept as traced.
"""
from __future__ import annotations

import struct
import sys

import numpy as np

from poot import dtypes as dt
from poot.devices.cpu import CpuBuffer, buffer_address
from poot.errors import DomainError, DTypeError, KernelIndexError, PootError
from poot.jit.runtime.execute import _wheres, compiled_program, execute, located, numpy_to_buffer
from poot.jit.runtime.replay import CpuReplay, Replay
from poot.trace import context as _dev
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.jit_held import refuse_opaque_results
from poot.trace.lazy import Node, leaf_node

_SCALAR_BUFFERS: dict = {}   # (backend, dtype, type, value) -> the buffer of a scalar argument

SCALARS = (bool, int, float)   # Python scalar arguments: weakly typed inputs


class _ScalarArgument:
    """A graph input bound to a Python scalar argument (JitProgram.bound): the argument's position, the
    input's dtype, and the value of the last call with its buffer. A loop passes the same scalar
    object (a learning rate) every step: the very object (so the very bits) needs no lookup."""

    __slots__ = ("position", "dtype", "last", "exponent")

    def __init__(self, position: int, dtype: dt.DType, exponent: bool = False):
        self.position, self.dtype, self.last = position, dtype, (None, None)
        self.exponent = exponent    # an integer power's exponent: a negative value is refused


def _plain_builder(out_tree, out_slots: list):
    """What makes a call's result from its result arrays, in order, when the function returns one
    array, a flat tuple or list of arrays, or a tuple or list of arrays and flat tuples or lists of
    them (a training step's (params, loss)): no pytree to rebuild; None otherwise."""
    if out_slots != list(range(len(out_slots))):
        return None
    if out_tree is pytree.LEAF:
        return _first
    if not _sequence_of(out_tree):
        return None
    if all(d is pytree.LEAF for d in out_tree[1]):
        return out_tree[0]
    parts = []                      # per item: (its type, where its arrays start, how many), or None
    at = 0
    for d in out_tree[1]:
        if d is pytree.LEAF:
            parts.append((None, at, 1))
            at += 1
        elif _sequence_of(d) and all(e is pytree.LEAF for e in d[1]):
            parts.append((d[0], at, len(d[1])))
            at += len(d[1])
        else:
            return None
    outer = out_tree[0]

    def build(values: list):
        return outer([values[at] if t is None else t(values[at:at + n]) for t, at, n in parts])

    return build


def _sequence_of(tree) -> bool:
    """Whether pytree node `tree` is a tuple or list."""
    return type(tree) is tuple and len(tree) == 2 and tree[0] in (tuple, list)


def _integer_exponents(roots: list, inside: set, position: dict, scalar_dtypes: dict) -> frozenset:
    """The leaf positions of the Python int arguments that are the exponent of an integer power
    (`a ** n` of an int array): a negative value is refused at the call (DomainError), as outside
    jit, where the value is known when the power is recorded."""
    if not any(d.kind in "iu" for d in scalar_dtypes.values()):
        return frozenset()
    out = set()
    seen: set = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) in seen or id(n) not in inside:
            continue
        seen.add(id(n))
        if n.op == "pow" and n.aval.dtype.kind in "iu" and len(n.inputs) == 2:
            e = n.inputs[1]
            while e.op == "convert" and id(e) in inside:
                e = e.inputs[0]
            k = position.get(id(e))
            if k is not None and k in scalar_dtypes and e.weak == 1:
                out.add(k)
        stack.extend(n.inputs)
    return frozenset(out)


def _first(values: list):
    return values[0]


_new = object.__new__


class JitProgram:
    def __init__(self, name: str, result, params: list[lazy.Node], inside: set, leaves: list,
                 weak_casts: set, donated: list[int], device: str, writes: tuple = ()):
        self.name = name
        # the leaf positions of arguments updated in place: `result` is then (the function's result,
        # their new values), and each call rebinds the caller's arrays to the new values
        self.writes = writes
        out_leaves, self.out_tree = pytree.flatten(result)
        refuse_opaque_results(name, out_leaves, self.out_tree, inside | {id(p) for p in params}, bool(writes))
        self.out_slots: list = []          # per result leaf: index into the graph's outputs, or (value,)
        roots: list[lazy.Node] = []
        for x in out_leaves:
            if isinstance(x, Array):
                self.out_slots.append(len(roots))
                roots.append(x._node)
            else:
                self.out_slots.append((x,))
        devices = {n.device for n in roots}
        if len(devices) > 1:
            raise PootError(f"pt.jit({name}): the results are on several devices ({sorted(devices)}); "
                            f"a jitted function computes on one")
        self.device = devices.pop() if devices else device
        self.out_avals = [n.aval for n in roots]
        bits = lazy._bf16_needs_bits(self.device)
        graph_roots = [lazy._as_bits(n) if bits and n.aval.dtype is dt.bfloat16 else n for n in roots]
        # the bit views are part of the function's graph, though recorded after its trace
        inside = inside | {id(g) for g, n in zip(graph_roots, roots) if g is not n}
        self.graph, graph_leaves = lazy.build_graph(graph_roots, inside)
        self.params = params
        position = {id(p): k for k, p in enumerate(params)}
        self.binds: list = []               # per graph input: a leaf position (int) or a captured Node
        outer_pending = []
        for leaf in graph_leaves:
            k = position.get(id(leaf))
            if k is not None:
                self.binds.append(k)
                continue
            if leaf.buf is None and leaf.op is None:   # another trace's value, or a donated array
                lazy.refuse_if_tracing(f"pt.jit({name}) closing over an array", leaf)
            if leaf.buf is None:
                outer_pending.append(leaf)
            self.binds.append(leaf)
        if outer_pending:   # lazy arrays the function closed over: computed once, at trace time
            lazy.realize_nodes(outer_pending, f"pt.jit({name}) closing over an array")
        self.scalar_dtypes = {k: params[k].aval.dtype for k, x in enumerate(leaves) if type(x) in SCALARS}
        self.exponents = _integer_exponents(graph_roots, inside, position, self.scalar_dtypes)
        # the integer dtypes Python int arguments must fit: every argument (a dtype noted alone), or
        # the argument the weak value cast was computed from ((placeholder id, dtype), see note_weak_cast)
        self.int_casts = sorted((d for d in weak_casts if not isinstance(d, tuple)), key=lambda d: d.name)
        at: dict = {}
        for c in weak_casts:
            if isinstance(c, tuple) and c[0] in position:
                at.setdefault(position[c[0]], set()).add(c[1])
        # per argument position: every dtype its Python int must fit (the call checks these alone)
        self.int_casts_at = {k: tuple(self.int_casts) + tuple(sorted(ds - set(self.int_casts), key=lambda d: d.name))
                             for k, ds in at.items()}
        self.donated = donated
        # the fast paths of a call, decided once for this signature (its leaves' kinds are fixed):
        # every graph input an array argument, and the results a flat tuple or list (or one array)
        self.array_binds = self.binds if all(type(b) is int and isinstance(leaves[b], Array)
                                             for b in self.binds) else None
        self.plain_outs = _plain_builder(self.out_tree, self.out_slots)
        self.guard = None              # what jit.py checks a call against to skip its signature
        self.backend = _dev.backend(self.device)
        executor = _dev.executor(self.device)
        self.replay = None
        self.cpu_replay = None         # the replay where call_args binds and launches it itself
        self._donating: dict = {}      # frozenset of donated positions -> its Replay
        self._donated_positions = None  # [(graph-input position, argument leaf)] of donated arguments
        if isinstance(executor, str) or not self.graph.eqns:
            self.program = None
            self._executor = executor
        else:
            self.program = compiled_program(self.graph, executor)
            self.replay = Replay.build(self.program)
            r = self.replay
            if type(r) is CpuReplay and r.recording is not None and r.only_fresh:
                self.cpu_replay = r
            # this function's lines of its index equations, for a trap raised at a later read
            self.wheres = _wheres(self.graph, self.program, self.program.index_wheres)

    # -- a call ------------------------------------------------------------------------------------
    def call(self, leaves: list):
        bufs = self._array_buffers(leaves) if self.array_binds is not None else None
        if bufs is None:
            bufs = self._buffers(leaves)
        if self.program is None:
            donate, outs = None, execute(self.graph, bufs, self._executor)
        else:
            donate = self._take_donations(leaves, bufs) if self.donated else None
            outs = self._run(bufs, donate)
        if self.donated:
            self._invalidate_donated(leaves, donate or ())
        if self.writes:
            result, new = self._results(outs)
            for k, x in zip(self.writes, new):
                leaves[k]._node = x._node
            return result
        return self._results(outs)

    def bound(self, picks: tuple):
        """Where each graph input's buffer is for a call whose dynamic leaf k is argument `picks[k]`
        (jit.py's guard knows which): an array argument's position, a captured Node or a
        _ScalarArgument. None where a call needs the general path (NumPy arguments, donation, no
        compiled program)."""
        if self.program is None or self.donated:
            return None
        out = []
        for b in self.binds:
            if type(b) is not int:
                out.append(b)
            elif b in self.scalar_dtypes:
                out.append(_ScalarArgument(picks[b], self.scalar_dtypes[b], b in self.exponents))
            else:
                out.append(picks[b])
        return tuple(out)

    def call_args(self, args: tuple, binds: tuple, picks: tuple):
        """A call whose arguments matched the guard of this program's signature (jit.py), its graph
        inputs' buffers found through `binds` (`bound`); an array argument not realized yet (or a
        captured one donated since) takes the general path, which realizes it (or says why not).
        On the CPU, a program of one recording binds each input's address as it finds its buffer
        and runs the recording (CpuReplay.launch): no list of the buffers, no second loop over them,
        no frame of `CpuReplay.run`. A small program's call is a few microseconds of Python around a
        native call of a fraction of one, so each of these counts."""
        cpu = self.cpu_replay
        if cpu is not None:
            turn = cpu.turn
            try:
                turn.pop()
            except IndexError:          # another thread replays it: the general path runs the program
                cpu = None
        if cpu is None:
            return self._call_bound(args, binds, picks)
        try:
            known = cpu.input_addresses
            j = 0
            for b in binds:
                if type(b) is int:
                    buf = args[b]._node.buf
                elif type(b) is Node:
                    buf = b.buf
                else:
                    x = args[b.position]
                    last = b.last
                    buf = last[1] if last[0] is x else self._scalar_argument(b, x)
                if buf is None:
                    break
                addr = buf.address if type(buf) is CpuBuffer else buffer_address(buf)
                if addr != known[j]:
                    cpu.rebind(j, addr)
                j += 1
            else:
                return self._results(cpu.launch())
        except KernelIndexError as e:
            raise located(e, self.program, self.graph) from None
        finally:
            turn.append(True)
        return self.call([args[i] for i in picks])

    def _call_bound(self, args: tuple, binds: tuple, picks: tuple):
        """call_args on any device: the buffers found through `binds`, then the program's replay."""
        bufs = []
        for b in binds:
            if type(b) is int:
                buf = args[b]._node.buf
            elif type(b) is Node:
                buf = b.buf
            else:
                x = args[b.position]
                last = b.last
                buf = last[1] if last[0] is x else self._scalar_argument(b, x)
            if buf is None:
                return self.call([args[i] for i in picks])
            bufs.append(buf)
        return self._results(self._run(bufs, None))

    def _scalar_argument(self, arg: _ScalarArgument, value):
        """The buffer of scalar argument `value`, kept as `arg`'s last."""
        buf = self._scalar_buffer(value, arg.dtype, arg.exponent, arg.position)
        arg.last = (value, buf)
        return buf

    def _run(self, bufs: list, donate):
        try:
            wheres = self.wheres
            replay = self._replay_for(donate) if donate else self.replay
            outs = replay.run(bufs, wheres) if replay is not None else None
            if outs is None:
                outs = self.program.run(bufs, donate, wheres)
        except KernelIndexError as e:      # name this function's line (a cached program's may differ)
            raise located(e, self.program, self.graph) from None
        return outs

    def _results(self, outs: list):
        """The call's result from its result buffers. Every call makes an Array and a Node per result,
        so they are filled by direct slot stores (lazy.leaf_node): calling Array() and Node() runs a
        Python __init__ frame each, which costs as much again."""
        dev = self.device
        arrays = []
        for buf, aval in zip(outs, self.out_avals):
            x = _new(Array)
            x._node = leaf_node(aval, dev, buf)
            arrays.append(x)
        if self.plain_outs is not None:
            return self.plain_outs(arrays)
        values = [arrays[s] if type(s) is int else s[0] for s in self.out_slots]
        return pytree.unflatten(self.out_tree, values)

    def _replay_for(self, donate: set):
        """The replay of a call that donates the graph inputs at `donate` (built once per set)."""
        if self.replay is None:
            return None
        key = frozenset(donate)
        replay = self._donating.get(key)
        if replay is None:
            replay = self._donating[key] = Replay.build(self.program, key)
        return replay

    def _array_buffers(self, leaves: list):
        """The graph inputs' buffers where every input is a realized array argument (the common
        call); None where one is not realized yet (`_buffers` realizes it)."""
        bufs = []
        for k in self.array_binds:
            b = leaves[k]._node.buf
            if b is None:
                return None
            bufs.append(b)
        return bufs

    def _buffers(self, leaves: list) -> list:
        """The graph inputs' buffers: array arguments (realized now if pending), Python scalars
        (kept per value), NumPy arguments (copied in) and the arrays the function closed over.
        Pending array arguments are realized together: one program, where each alone is a realize
        of its own (a loop's first call, its state made by `zeros` calls, paid for each)."""
        pending = [leaves[b]._node for b in self.binds
                   if type(b) is int and type(leaves[b]) is Array and leaves[b]._node.buf is None]
        if len(pending) > 1:
            lazy.realize_nodes(pending, f"calling {self.name}")
        bufs = []
        for b in self.binds:
            if type(b) is not int:
                if b.buf is None:   # a captured array donated to another call since
                    lazy.refuse_if_tracing(f"calling {self.name}", b)
                bufs.append(b.buf)
                continue
            x = leaves[b]
            t = type(x)
            if t is Array:
                n = x._node
                bufs.append(n.buf if n.buf is not None else x._realize(f"calling {self.name}").buf)
            else:               # NumPy arguments arrive as poot arrays (jit.py _from_host)
                bufs.append(self._scalar_buffer(x, self.scalar_dtypes[b], b in self.exponents, b))
        return bufs

    def _scalar_buffer(self, value, dtype: dt.DType, exponent: bool = False, position: int | None = None):
        """The buffer of a Python scalar argument. A loop passes the same few scalars (a learning
        rate) on every call, so their buffers are kept: programs only read their inputs, except
        donated ones (a function with donated arguments makes a fresh buffer each call). `exponent`:
        the argument is an integer power's exponent, refused negative as outside jit."""
        if exponent and type(value) is int and value < 0:
            raise DomainError(f"power: integers to negative integer powers are not allowed (exponent {value}, "
                              f"a scalar argument of pt.jit({self.name})); use a float base or pt.float_power")
        for d in self.int_casts_at.get(position, self.int_casts):
            if not isinstance(value, float):
                lazy.check_scalar_fits(value, d, f"{self.name}: a scalar argument")
        if dtype.kind in "iu" and type(value) is int and not -2**63 <= value < 2**63:
            raise DTypeError(f"pt.jit({self.name}): the Python int argument {value} does not fit int64, which a "
                             f"jitted function takes Python ints as; pass it as a float, or make it static")
        key = (id(self.backend), dtype.name, type(value),
               struct.pack("<d", value) if type(value) is float else value)
        buf = _SCALAR_BUFFERS.get(key) if not self.donated else None
        if buf is not None:
            return buf
        buf = numpy_to_buffer(np.asarray(lazy.scalar_value(value, dtype), dtype=dtype.np), self.backend)
        if not self.donated:
            if len(_SCALAR_BUFFERS) >= 256:
                _SCALAR_BUFFERS.clear()
            _SCALAR_BUFFERS[key] = buf
        return buf

    # -- donation --------------------------------------------------------------------------------
    def _take_donations(self, leaves, bufs) -> set[int]:
        """The graph-input positions whose buffers this call may reuse: a donated argument's buffer
        that nothing else holds (no other array, no second argument, no captured constant)."""
        positions = self._donated_positions
        if positions is None:
            positions = self._donated_positions = [(pos, b) for pos, b in enumerate(self.binds)
                                                   if type(b) is int and b in self.donated]
        out = set()
        for pos, b in positions:
            node = leaves[b]._node
            # refs: node.buf, bufs[pos], this frame's `buf`, getrefcount's argument; a buffer passed
            # twice (a second place in `bufs`) or held by another array has more
            buf = bufs[pos]
            # refs of the node: the argument's handle, this frame's `node`, getrefcount's argument;
            # a pending computation reading it (`z = x[1:]` not realized yet) holds one more
            if sys.getrefcount(buf) <= 4 and node.buf is buf and sys.getrefcount(node) <= 3:
                out.add(pos)
        return out

    def _invalidate_donated(self, leaves, taken) -> None:
        """Mark each donated argument used up. A buffer this call reused is gone with its node; an
        argument whose buffer was kept (shared, or read by pending work) gets a fresh used-up node,
        so that what still reads the old one computes from the values it was given."""
        where = lazy.caller_where()
        reused = {self.binds[pos] for pos in taken}
        for k in self.donated:
            x = leaves[k]
            n = x._node
            if k in reused:
                n.buf, n.op, n.inputs, n.params, n.where = None, None, (), lazy.DONATED, where
            else:
                x._node = Node(None, (), lazy.DONATED, n.aval, n.device, where, 0)
