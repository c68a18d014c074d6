"""The fusion planner: which equations become one kernel, in which order, with which buffer lifetimes.

Every graph input and output, and the operands and results of opaque ops (matmul, scan, scatter), are
*materialized* (live in a buffer). Every other value is computed inside the kernels that need it, as
index arithmetic and expressions on loads. Each materialized value is a *root*; its kernel computes it
from its *closure* (the equations between it and the materialized values it reads).

Kernel kinds:
- "pointwise": roots of one shape, no reduction inside.
- "row": reductions over axes A of a shape S, computed once per row (the kept coordinates of S), and
  roots either of shape S (written in a pass over the row: softmax, layer_norm) or with one element per
  row (plain and nested reductions with prologue and epilogue: `((x - m)**2).mean(1)`).
- "matmul", "scan", "scatter", "attention": one opaque op each (the step kind is the value of the
  op's fusion class in the op registry, poot/graph/registry.py).
- "host": the equations of one host op (sort, eigh..., see poot.graph.host), run with NumPy by the
  program.
- "control": the equations of one cond/while/fori construct (one per result, see poot.graph.control),
  run by the program with its subgraphs planned as programs of their own.
- "alias": a root that is a view of a materialized value (a reshape of contiguous data): no kernel.

A reduction that cannot run in its consumer's kernel (read at another row, or by kernels of different
kinds) is materialized instead, and planning repeats until stable. An expensive value read by several
kernels, or broadcast to many times its size, is materialized rather than recomputed; so is a value one
kernel would compute at several different indices (a stencil's shifted reads: each lazy step would
multiply the positions at which the steps before it are computed) unless recomputing it is cheap.

Buffer budget: a Vulkan device binds only so many storage buffers per kernel (lavapipe 32, some
adapters 8). With `max_buffers` a step binds at most that many (its inputs, its outputs, and two
partials per reduction of a row step, which a split reduction may add): a step of many roots that
binds more is cut into several, and a root whose closure loads too many values gets part of that
closure materialized (the widest sub-expression that fits, repeatedly). A concatenate of more arrays
than that becomes a tree of concatenates first (passes.split_wide_concatenates).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from poot.errors import CompileLimitError, InternalError
from poot.graph import Eqn, Graph, Var
from poot.graph.host import host_group
from poot.graph.complex_lower import lower_complex
from poot.graph.registry import OPS, Fusion
from poot.fuse.access import ZERO, operand_index
from poot.fuse.indexing import Coord, Form, ravel, unravel
from poot.fuse.overwrites import scatter_readers, waits_for_readers
from poot.fuse.passes import optimize, split_wide_concatenates

MAX_EQUATIONS = 200_000
RECOMPUTE_BUDGET = 8      # recomputation cost above which a value read several times is stored
BROADCAST_FACTOR = 4      # an expensive value broadcast to this many times its size is stored
# Kernels are compiled on first use, and LLVM's time grows faster than linearly in a function's size:
# a kernel binding thousands of buffers (the stack of a loop's thousand losses) or computing hundreds
# of reductions one after another (a loop of `w -= lr * (w - w.mean())`) took minutes to compile.
# Wider plans are cut into several kernels; each bound is far above what fusion gains from.
MAX_KERNEL_BUFFERS = 64   # buffers one kernel binds (loads, stores, partials), whatever the device allows
MAX_ROW_REDUCTIONS = 16   # reductions one row kernel computes


@dataclass
class Step:
    kind: str                              # pointwise | row | matmul | scan | scatter | control | alias
    outputs: list[Var]
    inputs: list[Var] = field(default_factory=list)
    shape: tuple = ()                      # iteration shape (row: the full shape S)
    axes: tuple = ()                       # reduced axes (row kernels)
    reductions: list[Eqn] = field(default_factory=list)   # row kernels, in dependency order
    eqn: Eqn | None = None                 # opaque op, or the alias source's producer
    name: str = ""
    # a matmul step that also computes a pointwise epilogue (poot/jit/runtime/epilogues.py): the ids the
    # product goes by inside it (the product and its views), never stored; `outputs` are the epilogue's
    epilogue_of: tuple = ()

    def describe(self) -> str:
        outs = ", ".join(f"{v!r}:{v.aval}" for v in self.outputs)
        ins = ", ".join(repr(v) for v in self.inputs)
        extra = f" axes={self.axes} reductions={[e.op for e in self.reductions]}" if self.kind == "row" else ""
        return f"{self.name:28s} {self.kind:9s} shape={self.shape}{extra} ({ins}) -> {outs}"


@dataclass
class Plan:
    graph: Graph                        # the optimized graph the steps refer to
    steps: list[Step]
    producer: dict[int, Eqn]
    free_after: list[list[Var]]         # intermediates whose buffers die after each step
    input_last_use: dict = field(default_factory=dict)   # input var id -> last step reading it
    aliased_outputs: set = field(default_factory=set)    # input var ids an output is a view of

    def __str__(self) -> str:
        lines = [f"plan: {len(self.steps)} steps for {len(self.graph.eqns)} equations"]
        for i, s in enumerate(self.steps):
            lines.append(f"  [{i}] {s.describe()}")
            if self.free_after[i]:
                lines.append(f"       free {', '.join(repr(v) for v in self.free_after[i])}")
        return "\n".join(lines)

    @property
    def kernel_steps(self) -> list[Step]:
        return [s for s in self.steps if s.kind != "alias"]


def plan_fusion(graph: Graph, max_buffers: int | None = None) -> Plan:
    """Plan `graph`; `max_buffers` caps the buffers one step binds (poot.jit passes the device's limit
    less the buffers the kernel ABI adds; MAX_KERNEL_BUFFERS bounds it either way)."""
    if len(graph.eqns) > MAX_EQUATIONS:
        raise CompileLimitError(f"graph has {len(graph.eqns)} equations; the limit per plan is "
                                f"{MAX_EQUATIONS} (realize intermediate results to split it)")
    g = optimize(lower_complex(graph))    # complex values become their real parts first
    max_buffers = MAX_KERNEL_BUFFERS if max_buffers is None else min(max_buffers, MAX_KERNEL_BUFFERS)
    # an output, and at least one more buffer to combine them in
    g = split_wide_concatenates(g, max_buffers - 2)
    return _Planner(g, max_buffers).run()


def _bindings(leaves, outputs: int, reductions: int) -> int:
    """Buffers a step binds: what it loads, what it stores, two partials per reduction."""
    return len(leaves) + outputs + 2 * reductions


class _Planner:
    def __init__(self, g: Graph, max_buffers: int | None = None):
        self.g = g
        self.max_buffers = max_buffers
        self.producer = {e.out.id: e for e in g.eqns}
        self.vars = {v.id: v for v in g.inputs} | {e.out.id: e.out for e in g.eqns}
        self.inputs = {v.id for v in g.inputs}
        self.position = {e.out.id: i for i, e in enumerate(g.eqns)}
        self.materialized = set(self.inputs) | {v.id for v in g.outputs}
        for e in g.eqns:
            if _opaque(e):
                self.materialized.add(e.out.id)
                self.materialized.update(v.id for v in e.inputs)
                self.materialized.update(_reshaped_from(e.inputs, self.producer))

    # -- closures --
    def closure(self, root: Var) -> tuple[list[Eqn], list[Var]]:
        """Equations computed inside root's kernel (topological order) and the values it loads."""
        seen, eqns, leaves, stack = set(), [], {}, [(root, False)]
        while stack:
            v, done = stack.pop()
            e = self.producer.get(v.id)
            if done:
                eqns.append(e)
                continue
            if v.id in seen:
                continue
            seen.add(v.id)
            if v is not root and v.id in self.materialized or e is None:
                leaves[v.id] = v
                continue
            stack.append((v, True))
            for u in e.inputs:
                stack.append((u, False))
        return eqns, list(leaves.values())

    # -- the fixpoint --
    def run(self) -> Plan:
        while True:
            self.materialized |= self._read_at_many_indices()
            roots = [self.vars[i] for i in sorted(self.materialized - self.inputs, key=self._position)]
            to_store = set()
            kernels = []
            for r in roots:
                info = self._classify(r, to_store)
                kernels.append(info)
            to_store |= self._shared_expensive(kernels)
            to_store -= self.materialized     # a fixpoint: stop once nothing new is to be stored
            if not to_store and self.max_buffers is not None:
                to_store = self._narrowed(kernels) - self.materialized
            if not to_store:
                break
            self.materialized |= to_store
        steps = self._within_budget(self._group(kernels))
        order = self._order(steps)
        plan = Plan(self.g, order, self.producer, self._lifetimes(order))
        plan.input_last_use, plan.aliased_outputs = self._input_uses(order)
        return plan

    def _input_uses(self, order: list[Step]) -> tuple[dict, set]:
        """For donation: the last step reading each input (through its views too), and the inputs
        that a result is a view of (their buffers live on in the result)."""
        root: dict[int, int] = {}
        for s in order:
            if s.kind == "alias":
                src = s.inputs[0].id
                root[s.outputs[0].id] = root.get(src, src)
        last: dict[int, int] = {}
        for i, s in enumerate(order):
            for v in s.inputs:
                r = root.get(v.id, v.id)
                if r in self.inputs:
                    last[r] = i
        aliased = {root[v.id] for v in self.g.outputs if v.id in root}
        return last, aliased

    def _position(self, vid: int) -> int:
        return self.position.get(vid, -1)

    def _classify(self, root: Var, to_store: set) -> dict:
        e = self.producer[root.id]
        fusion = OPS[e.op].fusion
        if fusion.opaque:   # a step of its own, of the kind its class names
            return {"root": root, "kind": fusion.value, "eqns": [e], "leaves": list(e.inputs), "eqn": e}
        eqns, leaves = self.closure(root)
        reductions = [x for x in eqns if _reduction(x)]
        if not reductions:
            if self._is_view(root, eqns, leaves):
                return {"root": root, "kind": "alias", "eqns": eqns, "leaves": leaves}
            return {"root": root, "kind": "pointwise", "eqns": eqns, "leaves": leaves, "shape": root.aval.shape}
        if len(reductions) > MAX_ROW_REDUCTIONS:    # each its own kernel's root, from the next round
            to_store.update(x.out.id for x in reductions if x.out is not root)
        space = _space(reductions[-1])
        bad = self._row_check(root, eqns, space)
        if bad:
            to_store.update(bad)
        return {"root": root, "kind": "row", "eqns": eqns, "leaves": leaves, "shape": space[0],
                "axes": space[1], "reductions": reductions}

    def _is_view(self, root: Var, eqns: list[Eqn], leaves: list[Var]) -> bool:
        if len(leaves) != 1 or not eqns or any(x.op != "reshape" for x in eqns):
            return False
        return True  # reshapes of a contiguous buffer never move data

    def _row_check(self, root: Var, eqns: list[Eqn], space) -> set[int]:
        """Reductions that cannot be computed once per row of `space` for this root (to store)."""
        shape, axes = space
        kept_shape = tuple(1 if d in axes else n for d, n in enumerate(shape))
        row = [Form.of(Coord(f"r{d}", n)) if n != 1 else Form(0, ()) for d, n in enumerate(kept_shape)]
        inner = [Form.of(Coord(f"j{d}", n)) if (d in axes and n != 1) else Form(0, ())
                 for d, n in enumerate(shape)]
        full = [inner[d] if d in axes else row[d] for d in range(len(shape))]
        if root.aval.shape == shape:
            start = full
        elif root.aval.size == math.prod(kept_shape):
            start = unravel(ravel(row, kept_shape), root.aval.shape)
        else:   # neither a row-wide nor a one-per-row result: every reduction it reads is stored
            return {x.out.id for x in eqns if _reduction(x)}
        bad: set[int] = set()
        members = {x.out.id for x in eqns}
        # walk the closure from the root, carrying the index each value is read at
        stack = [(root, start)]
        visited = set()
        while stack:
            v, idx = stack.pop()
            e = self.producer.get(v.id)
            if e is None or v.id not in members:
                continue
            key = (v.id, tuple(idx))
            if key in visited:
                continue
            visited.add(key)
            if _reduction(e):
                if _space(e) != space or list(idx) != row:
                    bad.add(v.id)
                    continue
                stack.append((e.inputs[0], full))
                continue
            for k, u in enumerate(e.inputs):
                stack.append((u, operand_index(e, k, idx)))
        return bad

    def _shared_expensive(self, kernels: list[dict]) -> set[int]:
        """Values recomputed in several kernels (or broadcast widely) whose recomputation costs too much."""
        count: dict[int, int] = {}
        for k in kernels:
            for x in k["eqns"]:
                count[x.out.id] = count.get(x.out.id, 0) + 1
        cost = self._costs()
        store = set()
        for k in kernels:
            if k["kind"] not in ("pointwise", "row"):   # an opaque op's step or an alias: nothing recomputed
                continue
            size = math.prod(k["shape"])
            broadcast: dict[int, Eqn] = {}
            for x in k["eqns"]:
                vid = x.out.id
                if vid in self.materialized or OPS[x.op].fusion in (Fusion.MOVEMENT, Fusion.SOURCE):
                    continue
                if count[vid] > 1 and cost[vid] > RECOMPUTE_BUDGET:
                    store.add(vid)
                elif (k["kind"] == "pointwise" and cost[vid] >= 4 and OPS[x.op].fusion is Fusion.ELEMENTWISE
                      and 0 < x.out.aval.size * BROADCAST_FACTOR <= size):
                    broadcast[vid] = x
            store |= _broadcast_ends(k["eqns"], broadcast)
        return store

    def _read_at_many_indices(self) -> set[int]:
        """Values a kernel would compute at several different indices, where the extra evaluations
        cost more than RECOMPUTE_BUDGET: to store. One walk from the results toward the inputs carries
        the distinct indices each value is read at within each kernel pass (a kernel's root, or one
        reduction's loop inside it); a value it stores starts a kernel of its own. A value that computes
        anything is thus read at no more than 1 + RECOMPUTE_BUDGET indices per pass, and the walk (and
        the kernels) stay linear in the graph's size. A value several kernels read that costs more than
        RECOMPUTE_BUDGET is stored here too (as `_shared_expensive` would, one round later): otherwise a
        chain of updates read by a result at every step (a loop's losses) puts the whole chain in every
        result's closure, and the first round of the fixpoint is quadratic in the loop's length."""
        cost = self._costs()
        reads: dict[int, dict[tuple, set]] = {}    # var id -> (root id, pass id) -> indices
        store: set[int] = set()
        for e in reversed(self.g.eqns):
            if _opaque(e):
                continue
            v = e.out
            if v.id in self.materialized:
                passes = {(v.id, 0): {_identity(v.aval.shape)}}
            else:
                passes = reads.pop(v.id, None)
                if not passes:
                    continue
                extra = sum(len(idxs) - 1 for idxs in passes.values())
                kernels = len({root for root, _ in passes})
                recomputed = cost[v.id] * extra > RECOMPUTE_BUDGET or (kernels > 1 and cost[v.id] > RECOMPUTE_BUDGET)
                if recomputed and _own_cost(e) and not _reduction(e):   # reductions: _row_check
                    store.add(v.id)
                    passes = {(v.id, 0): {_identity(v.aval.shape)}}
            if _reduction(e):   # its own loop over the input, once per row
                src = e.inputs[0]
                if src.id not in self.materialized:
                    into = reads.setdefault(src.id, {})
                    for root, _ in passes:
                        into.setdefault((root, v.id), set()).add(_identity(src.aval.shape))
                continue
            for k, u in enumerate(e.inputs):
                if u.id in self.materialized:
                    continue
                into = reads.setdefault(u.id, {})
                for key, idxs in passes.items():
                    into.setdefault(key, set()).update(tuple(operand_index(e, k, list(i))) for i in idxs)
        return store

    def _narrowed(self, kernels: list[dict]) -> set[int]:
        """For each kernel binding more than max_buffers: sub-expressions of its closure to store, each
        the one loading the most values while fitting a kernel of its own (materializing it replaces
        those loads by one), picked one after another until the kernel fits. Picking them all in one
        round matters: a kernel reading a stack of 200 rows needs a few hundred picks, and a planner
        round per pick re-walked the whole graph each time (quadratic in the rows)."""
        store = set()
        for k in kernels:
            if k["kind"] not in ("pointwise", "row"):
                continue
            if _bindings(k["leaves"], 1, len(k.get("reductions", ()))) <= self.max_buffers:
                continue
            picked: set[int] = set()
            while True:
                best = self._widest_fitting(k, picked)
                if best is None:
                    break
                picked.add(best)
            store |= picked
        return store

    def _widest_fitting(self, k: dict, picked: set[int]) -> int | None:
        """The value of kernel `k`'s closure (not its root, not in `picked`) loading the most values
        while fitting a kernel of its own, with the values of `picked` read as stored; None once the
        kernel itself fits that way, or nothing fits."""
        loads: dict[int, tuple[set, int]] = {}    # var id -> (leaf ids it loads, reductions inside)
        best, best_n = None, 1
        for e in k["eqns"]:
            if e.out.id in picked:
                loads[e.out.id] = ({e.out.id}, 0)
                continue
            leaves, reds = set(), int(_reduction(e))
            for u in e.inputs:
                sub = loads.get(u.id)
                if sub is None:
                    leaves.add(u.id)
                else:
                    leaves |= sub[0]
                    reds += sub[1]
            loads[e.out.id] = (leaves, reds)
            if (e.out.id != k["root"].id and len(leaves) > best_n
                    and _bindings(leaves, 1, reds) <= self.max_buffers):
                best, best_n = e.out.id, len(leaves)
        if picked:
            root_leaves, root_reds = loads[k["root"].id]
            if _bindings(root_leaves, 1, root_reds) <= self.max_buffers:
                return None
        return best

    def _costs(self) -> dict[int, int]:
        """Rough cost of recomputing each value from materialized ones (a tree sum: shared parts
        count once per use, which is what recomputation costs)."""
        cost: dict[int, int] = {}
        for e in self.g.eqns:
            cost[e.out.id] = _own_cost(e) + sum(cost.get(v.id, 0) for v in e.inputs if v.id not in self.materialized)
        return cost

    # -- grouping, order, lifetimes --
    def _group(self, kernels: list[dict]) -> list[Step]:
        """Roots of one kind and shape share a step. Steps are numbered as they are made, and a root
        joins a step only if every step it reads from has a smaller number: the numbering is then an
        order the steps can run in, so no set of joins can make a cycle. (Testing only that the step's
        own roots are not among the root's ancestors is not enough: a step that joined a root later
        can make an older step depend on it, and two such joins made the steps of a training loop's
        second iteration wait on each other.)"""
        steps: list[Step] = []
        by_key: dict[tuple, list[int]] = {}   # key -> numbers of its steps, ascending
        step_no: dict[int, int] = {}          # root var id -> the number of its step
        for k in kernels:
            root = k["root"]
            after = max((step_no.get(v.id, -1) for v in k["leaves"]), default=-1)
            kind = k["kind"]
            key = None
            if kind == "pointwise":
                key = ("pointwise", root.aval.shape)
            elif kind == "row":
                key = ("row", k["shape"], k["axes"])
            elif kind == "control":   # the results of one construct: one step
                key = ("control", id(k["eqn"].params["region"]), tuple(v.id for v in k["leaves"]))
            elif kind == "host":      # the results of one host op (eigh's values and vectors): one step
                key = ("host", k["eqn"].op, host_group(k["eqn"].params), tuple(v.id for v in k["leaves"]))
            numbers = by_key.get(key, []) if key is not None else []
            j = bisect.bisect_right(numbers, after)
            if j < len(numbers):              # the oldest step of this key that runs after its inputs
                joined = steps[numbers[j]]
                joined.outputs.append(root)
                joined.inputs += [v for v in k["leaves"] if v not in joined.inputs]
                if kind == "row":
                    joined.reductions += [r for r in k["reductions"] if r not in joined.reductions]
                step_no[root.id] = numbers[j]
                continue
            step = Step(kind=kind, outputs=[root], inputs=list(k["leaves"]),
                        shape=k.get("shape", root.aval.shape), axes=k.get("axes", ()),
                        reductions=list(k.get("reductions", [])), eqn=k.get("eqn"))
            if kind == "alias":
                step.eqn = self.producer[root.id]
            step_no[root.id] = len(steps)
            if key is not None:
                by_key.setdefault(key, []).append(len(steps))
            steps.append(step)
        for s in steps:
            if s.kind == "row":
                s.reductions.sort(key=lambda e: self._position(e.out.id))
        return steps

    def _within_budget(self, steps: list[Step]) -> list[Step]:
        """Steps binding more than max_buffers, cut into several: the roots of one step never depend on
        each other, so any partition of them is a valid plan."""
        if self.max_buffers is None:
            return steps
        out = []
        for s in steps:
            if s.kind not in ("pointwise", "row") or len(s.outputs) < 2 or \
                    _bindings(s.inputs, len(s.outputs), len(s.reductions)) <= self.max_buffers:
                out.append(s)
                continue
            part = None
            for r in s.outputs:
                eqns, leaves = self.closure(r)
                inside = {id(e) for e in eqns}
                reds = [e for e in s.reductions if id(e) in inside]
                if part is not None:
                    ins = part.inputs + [v for v in leaves if v not in part.inputs]
                    more = [e for e in reds if all(e is not x for x in part.reductions)]
                    if _bindings(ins, len(part.outputs) + 1, len(part.reductions) + len(more)) <= self.max_buffers:
                        part.outputs.append(r)
                        part.inputs = ins
                        part.reductions = sorted(part.reductions + more, key=lambda e: self._position(e.out.id))
                        continue
                part = Step(kind=s.kind, outputs=[r], inputs=list(leaves), shape=s.shape, axes=s.axes,
                            reductions=reds, eqn=s.eqn)
                out.append(part)
        return out

    def _order(self, steps: list[Step]) -> list[Step]:
        made_by = {v.id: s for s in steps for v in s.outputs}
        deps = {id(s): {id(made_by[v.id]) for v in s.inputs if v.id in made_by and made_by[v.id] is not s}
                for s in steps}
        order, done = [], set()
        pending = list(steps)
        readers = scatter_readers(steps)
        waiting = {id(s) for s in steps}      # ids of `pending`, for the readers' test

        def take(s: Step) -> None:
            order.append(s)
            done.add(id(s))
            pending.remove(s)
            waiting.discard(id(s))

        while pending:
            progressed = False
            for s in list(pending):
                if deps[id(s)] <= done and not waits_for_readers(s, readers, waiting):
                    take(s)
                    progressed = True
            if not progressed:   # only deferred scatters are ready: the first of them runs
                s = next((s for s in pending if deps[id(s)] <= done), None)
                if s is not None:
                    take(s)
                    progressed = True
            if not progressed:   # _group numbers steps in an order they can run in
                raise InternalError("ordering the fusion plan", RuntimeError("dependency cycle"),
                                    "\n".join(s.describe() for s in steps))
        for i, s in enumerate(order):
            ops = sorted({e.op for e in self._step_eqns(s)}, key=str)
            s.name = f"k{i}_" + "_".join(ops[:4]) if s.kind != "alias" else f"alias{i}"
        return order

    def _step_eqns(self, s: Step) -> list[Eqn]:
        out = []
        for r in s.outputs:
            out += self.closure(r)[0]
        return out

    def _lifetimes(self, order: list[Step]) -> list[list[Var]]:
        # an alias shares its source's buffer: lifetimes are per buffer, named by the alias root
        root: dict[int, int] = {}
        for s in order:
            if s.kind == "alias":
                src = s.inputs[0].id
                root[s.outputs[0].id] = root.get(src, src)
        keep = {root.get(v, v) for v in self.inputs | {v.id for v in self.g.outputs}}
        last: dict[int, int] = {}
        for i, s in enumerate(order):
            for v in s.inputs:
                last[root.get(v.id, v.id)] = i
        free: list[list[Var]] = [[] for _ in order]
        for vid, i in last.items():
            if vid not in keep:
                free[i].append(self.vars[vid])
        return free


def _reshaped_from(operands, producer) -> set[int]:
    """The values that opaque-op operands are unit-axis reshapes of (through chains of them), where computed:
    stored in their own shape, the operand is a view of them (an alias step) rather than a kernel of its
    own. An RMSNorm feeding a GEMV's [K, 1] column is then one row kernel, not a reduction, a scalar
    kernel and a normalizing kernel (a root of another shape than its row space splits a row step)."""
    found = set()
    for v in operands:
        e, dims = producer.get(v.id), _proper_dims(v.aval.shape)
        if e is None or e.op != "reshape":
            continue
        while e is not None and e.op == "reshape" and _proper_dims(e.inputs[0].aval.shape) == dims:
            v = e.inputs[0]
            e = producer.get(v.id)
        if e is not None and e.op != "reshape":
            found.add(v.id)
    return found


def _proper_dims(shape) -> tuple:
    """The dimensions of a shape other than 1: reshapes that keep them only add or drop unit axes (a
    reshape that regroups elements keeps its kernel, which may share a step with roots of its shape)."""
    return tuple(n for n in shape if n != 1)


def _own_cost(e: Eqn) -> int:
    """What computing one element of `e` costs, roughly (reshapes, slices and the like are free):
    the cost its registry entry declares."""
    return OPS[e.op].cost


def _opaque(e: Eqn) -> bool:
    """Whether `e` is a step of its own (matmul, scan, scatter, control, host: its fusion class)."""
    return OPS[e.op].fusion.opaque


def _reduction(e: Eqn) -> bool:
    return OPS[e.op].fusion is Fusion.REDUCTION


def _identity(shape) -> tuple:
    """The index of a kernel pass's own element: one coordinate per dimension."""
    return tuple(Form.of(Coord(f"d{d}", n)) if n != 1 else ZERO for d, n in enumerate(shape))


def _space(e: Eqn) -> tuple[tuple, tuple]:
    axes = e.params["axes"] if "axes" in e.params else (e.params["axis"],)
    return e.inputs[0].aval.shape, tuple(axes)


def _broadcast_ends(eqns: list[Eqn], candidates: dict[int, Eqn]) -> set[int]:
    """Of the small expensive values a kernel would broadcast (`candidates`, var id -> equation), the
    ones to store: those read by an equation that is not itself a candidate of the same shape. A chain
    of them (RMSNorm's mean, + eps, sqrt on one row) is then one small kernel that computes its last
    value, with the steps before it inline, instead of one launch per step."""
    store: set[int] = set()
    for e in eqns:
        own = e.out.id in candidates
        for u in e.inputs:
            if u.id in candidates and not (own and u.aval.shape == e.out.aval.shape):
                store.add(u.id)
    return store
