"""The op registry: one `OpDef` per graph primitive, declared once; every layer attaches its own rule
for the op to that one object (the way JAX's `Primitive` carries its rules).

Why one object per op: the facts about a primitive used to live in tables keyed by its name in every
layer (shape rule here, index map in fuse, KIR rule in codegen, derivative and batching rules in
transforms), so a new op could be half-added without anything noticing. Now:

- the graph layer *declares* each op exactly once (`declare`, in poot/graph/ops.py, host.py and
  control.py): its name, arity and parameters, its shape/dtype rule, its NumPy rule (the oracle), its
  family (`kind`), its fusion class (`Fusion`: how the planner treats it) and its per-element cost;
- the upper layers *register* into the op's named slots when they are imported
  (`get("exp").register(kir=rule)` or the `rule(slot, *names)` decorator), or declare, with a reason,
  that the op has no such rule (`get("eq").without(vjp="its result is boolean")`):
    access  poot/fuse/access.py          where each operand is read for an output index
    kir     poot/jit/codegen/elementwise the KIR expression of an elementwise op
    vjp     poot/transforms/vjp_rules    reverse-mode derivative
    jvp     poot/transforms/jvp_rules    forward-mode derivative
    batch   poot/transforms/batching*    the vmap rule

The graph layer imports no other layer, so it never names an upper layer's rule: it only holds the
slots. tests/graph/test_registry.py checks that every op has every rule its fusion class needs.
"""
from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Callable

from poot.errors import PootError

SLOTS = ("access", "kir", "vjp", "jvp", "batch")


class RegistryError(PootError):
    """An op was declared twice, looked up under a name no op has, or given a rule for a slot that
    does not exist (the message names the op and the slot)."""


class Fusion(enum.Enum):
    """How the fusion planner treats an op: the graph-level fact it plans by. The value of an opaque
    class is the kind of the plan step that runs the op on its own."""

    ELEMENTWISE = "elementwise"   # computed inline, operands read with NumPy broadcasting; needs `kir`
    REDUCTION = "reduction"       # a loop over some axes, once per row of a row kernel
    MOVEMENT = "movement"         # inline index arithmetic over one or more operands; needs `access`
    SOURCE = "source"             # inline, from its parameters and the output index (full, iota)
    GATHER = "gather"             # inline reads at positions held in data (take, update_slice); `access`
    MATMUL = "matmul"             # opaque: a step of its own
    SCAN = "scan"                 # opaque
    SCATTER = "scatter"           # opaque
    CONTROL = "control"           # opaque: the equations of one cond/while/fori construct
    HOST = "host"                 # opaque: NumPy on the host as a program step
    ATTENTION = "attention"       # opaque: fused softmax(q k^T) v (flash kernels, no L x L buffer)
    SAMPLE = "sample"             # opaque: a token drawn from each row of logits (sampling kernels)
    QMATMUL = "qmatmul"           # opaque: x @ w.T with w stored quantized (quantized GEMV kernels)

    @property
    def opaque(self) -> bool:
        """Whether the op is planned as a step of its own, its operands and results stored."""
        return self in _OPAQUE

    @property
    def inline(self) -> bool:
        """Whether the op is recomputed inside the kernels that read it."""
        return self not in _OPAQUE


_OPAQUE = frozenset({Fusion.MATMUL, Fusion.SCAN, Fusion.SCATTER, Fusion.CONTROL, Fusion.HOST,
                      Fusion.ATTENTION, Fusion.SAMPLE, Fusion.QMATMUL})

# the slots each fusion class cannot do without, beyond the shape rule and the oracle every op has
REQUIRED_SLOTS: dict[Fusion, tuple[str, ...]] = {
    Fusion.ELEMENTWISE: ("kir",),
    Fusion.MOVEMENT: ("access",),
    Fusion.GATHER: ("access",),
}


class OpDef:
    """One primitive: its declared facts and the rules the layers registered for it.

    `arity` is the number of operands (None: any number, as concatenate and the control ops take);
    `params` the names of its static parameters; `cost` roughly what computing one element costs
    the planner (0: free index arithmetic, 1: an arithmetic op, a select or a gather, 4: a
    transcendental or a division); `host` a host op's HostOp (poot/graph/host.py: every result's
    aval and NumPy computation), None for the others. A slot holds a rule or None; `missing` maps a
    slot to the reason an op has deliberately no rule for it."""

    __slots__ = ("name", "kind", "fusion", "arity", "params", "cost", "shape_rule", "oracle",
                 "host", "missing") + SLOTS

    def __init__(self, name: str, kind: str, fusion: Fusion, arity: int | None, params: tuple[str, ...],
                 shape_rule: Callable, oracle: Callable, cost: int):
        self.name, self.kind, self.fusion = name, kind, fusion
        self.arity, self.params, self.cost = arity, tuple(params), cost
        self.shape_rule, self.oracle = shape_rule, oracle
        self.host = None
        self.missing: dict[str, str] = {}
        for slot in SLOTS:
            setattr(self, slot, None)

    def register(self, **rules: Callable) -> OpDef:
        """Attach rules by slot name (`op.register(kir=f, access=g)`). A later registration of the
        same slot replaces the earlier one (a module imported again registers again)."""
        for slot, fn in rules.items():
            self._check_slot(slot)
            if not callable(fn):
                raise RegistryError(f"op '{self.name}': the {slot} rule must be callable, got {fn!r}")
            if slot in self.missing:
                raise RegistryError(f"op '{self.name}': a {slot} rule is registered, but the op is "
                                    f"declared without one ({self.missing[slot]})")
            setattr(self, slot, fn)
        return self

    def without(self, **reasons: str) -> OpDef:
        """Declare that the op has no rule for a slot, and why (`op.without(batch="...")`)."""
        for slot, why in reasons.items():
            self._check_slot(slot)
            if not isinstance(why, str) or not why.strip():
                raise RegistryError(f"op '{self.name}': declaring it without a {slot} rule needs a reason")
            if getattr(self, slot) is not None:
                raise RegistryError(f"op '{self.name}' has a {slot} rule; it cannot also be declared "
                                    f"without one ({why})")
            self.missing[slot] = why
        return self

    def rule(self, slot: str) -> Callable | None:
        self._check_slot(slot)
        return getattr(self, slot)

    def _check_slot(self, slot: str) -> None:
        if slot not in SLOTS:
            raise RegistryError(f"op '{self.name}': no rule slot named '{slot}' (slots: {', '.join(SLOTS)})")

    def __repr__(self) -> str:
        have = [s for s in SLOTS if getattr(self, s) is not None]
        return f"<op {self.name}: {self.kind}, {self.fusion.value}, rules {'/'.join(have) or 'none'}>"


# name -> OpDef, in declaration order; poot.graph.OPS is this same dict
OPS: dict[str, OpDef] = {}


def declare(name: str, *, kind: str, fusion: Fusion, arity: int | None, params: tuple[str, ...] = (),
            shape_rule: Callable, oracle: Callable, cost: int | None = None) -> OpDef:
    """Declare a primitive (once). `cost` defaults to 1 for ops that compute on values inline
    (elementwise, reductions, gathers, scatter) and 0 for the rest."""
    if name in OPS:
        raise RegistryError(f"op '{name}' is declared twice")
    if not isinstance(fusion, Fusion):
        raise RegistryError(f"op '{name}': fusion must be a registry.Fusion, got {fusion!r}")
    if cost is None:
        cost = 1 if fusion in (Fusion.ELEMENTWISE, Fusion.REDUCTION, Fusion.GATHER, Fusion.SCATTER) else 0
    op = OPS[name] = OpDef(name, kind, fusion, arity, params, shape_rule, oracle, cost)
    return op


def get(name: str) -> OpDef:
    """The op called `name`; a RegistryError names it when no op is."""
    op = OPS.get(name)
    if op is None:
        raise RegistryError(f"no primitive named '{name}' in the op registry")
    return op


def ops(*classes: Fusion) -> list[OpDef]:
    """Every op, or those of the given fusion classes, in declaration order."""
    return [op for op in OPS.values() if not classes or op.fusion in classes]


def rule(slot: str, *names: str) -> Callable[[Callable], Callable]:
    """Decorator: register the function as the `slot` rule of each named op."""
    def deco(fn: Callable) -> Callable:
        for name in names:
            get(name).register(**{slot: fn})
        return fn
    return deco


class SlotView(Mapping):
    """A live, read-only name -> rule mapping over one slot (the ops that have a rule there), or,
    with `reasons=True`, over the reasons ops are declared without one, or over the `host` fact.
    For code that wants a table; it never holds a copy, so it cannot drift from the registry."""

    def __init__(self, slot: str, reasons: bool = False):
        if slot not in SLOTS and slot != "host":
            raise RegistryError(f"no rule slot named '{slot}' (slots: {', '.join(SLOTS)}, host)")
        self.slot, self.reasons = slot, reasons

    def _value(self, op: OpDef):
        return op.missing.get(self.slot) if self.reasons else getattr(op, self.slot)

    def __getitem__(self, name: str):
        op = OPS.get(name)
        value = None if op is None else self._value(op)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name, op in OPS.items() if self._value(op) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        what = "reasons without" if self.reasons else "rules"
        return f"<{self.slot} {what}: {', '.join(self)}>"
