"""The graph IR: SSA equations over typed, shaped values, in topological order.

A `Graph` has input variables (realized buffers bound at run time), a flat list of equations (one op,
its inputs, its parameters inline, one output variable) and output variables. `graph.key()` is a
structural key: two graphs with the same ops, shapes, dtypes and parameters get the same key whatever
their variable numbering, so compiled plans are cached by it.
"""
from __future__ import annotations

import struct

import itertools

from poot.errors import PootError
from poot.graph.aval import Aval

_ids = itertools.count()


class Var:
    """An SSA value: produced once (by an equation or as a graph input), used any number of times."""

    __slots__ = ("id", "aval")

    def __init__(self, aval: Aval):
        self.id = next(_ids)
        self.aval = aval

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"%{self.id}"


class Eqn:
    """`out = op[params](*inputs)`. `where` is the user's file:line that recorded it (for messages)."""

    __slots__ = ("op", "inputs", "params", "out", "where")

    def __init__(self, op: str, inputs: tuple[Var, ...], params: dict, out: Var, where: str = ""):
        self.op, self.inputs, self.params, self.out, self.where = op, tuple(inputs), params, out, where

    def __repr__(self) -> str:
        return format_eqn(self, {})


class GraphError(PootError):
    """A graph failed validation (a bug in poot or in code that builds graphs by hand)."""


def _fmt_param(v) -> str:
    if isinstance(v, float):
        return repr(v)
    if hasattr(v, "short"):
        return v.name
    return str(v)


def format_eqn(e: Eqn, names: dict[int, str]) -> str:
    n = lambda v: names.get(v.id, repr(v))  # noqa: E731
    params = ", ".join(f"{k}={_fmt_param(v)}" for k, v in sorted(e.params.items()))
    head = f"{n(e.out)}:{e.out.aval} = {e.op}"
    return head + (f"[{params}]" if params else "") + "(" + ", ".join(n(v) for v in e.inputs) + ")"


class Graph:
    def __init__(self, inputs: list[Var], eqns: list[Eqn], outputs: list[Var]):
        self.inputs, self.eqns, self.outputs = list(inputs), list(eqns), list(outputs)

    def key(self) -> tuple:
        """A hashable structural key (independent of variable ids): see `structural_key`."""
        num: dict[int, int] = {v.id: ~i for i, v in enumerate(self.inputs)}
        parts: list = []
        for j, e in enumerate(self.eqns):
            num[e.out.id] = j
            parts += eqn_key(e.op, tuple([num[v.id] for v in e.inputs]), e.params, e.out.aval)
        return structural_key([v.aval for v in self.inputs], parts, [num[v.id] for v in self.outputs])

    def users(self) -> dict[int, list[Eqn]]:
        """Map from a variable id to the equations that read it."""
        out: dict[int, list[Eqn]] = {}
        for e in self.eqns:
            for v in e.inputs:
                out.setdefault(v.id, []).append(e)
        return out

    def validate(self) -> None:
        """Check SSA form, topological order, known ops and that every out aval matches its rule."""
        from poot.graph.ops import OPS

        defined = {v.id for v in self.inputs}
        if len(defined) != len(self.inputs):
            raise GraphError("a graph input is listed twice")
        for i, e in enumerate(self.eqns):
            if e.op not in OPS:
                raise GraphError(f"equation {i}: unknown op '{e.op}'")
            for v in e.inputs:
                if v.id not in defined:
                    raise GraphError(f"equation {i} ({e.op}) reads {v!r} before it is defined")
            if e.out.id in defined:
                raise GraphError(f"equation {i} ({e.op}) redefines {e.out!r}")
            expect = OPS[e.op].shape_rule([v.aval for v in e.inputs], **e.params)
            if expect != e.out.aval:
                raise GraphError(f"equation {i} ({e.op}): output is {e.out.aval}, its rule says {expect}")
            defined.add(e.out.id)
        for v in self.outputs:
            if v.id not in defined:
                raise GraphError(f"graph output {v!r} is never defined")

    def __str__(self) -> str:
        names = {v.id: f"in{i}" for i, v in enumerate(self.inputs)}
        for i, e in enumerate(self.eqns):
            names[e.out.id] = f"v{i}"
        lines = ["graph(" + ", ".join(f"{names[v.id]}:{v.aval}" for v in self.inputs) + ") {"]
        lines += ["  " + format_eqn(e, names) for e in self.eqns]
        lines.append("  return " + ", ".join(names[v.id] for v in self.outputs))
        lines.append("}")
        return "\n".join(lines)

    __repr__ = __str__


def eqn_signature(op: str, params: dict, aval: Aval) -> tuple:
    """What an equation's part of a structural key says of the equation itself, apart from where its
    operands come from: op, params (frozen), output shape and dtype name. It depends on nothing but
    the equation, so a lazy node keeps it once made (trace/lazy.Node.sig) and the equations a recipe
    replays share one (trace/recipes.py): each walk then reuses it, and comparing two keys finds
    most signatures identical at once."""
    return (op, _freeze(params) if params else (), aval.shape, aval.dtype.name)


def eqn_key(op: str, input_numbers: tuple, params: dict, aval: Aval) -> tuple:
    """One equation's part of a structural key: (its signature, its operands' numbers). Values are
    numbered ~k for the k-th graph input and j for the j-th equation's output, so a walk over lazy
    nodes (trace/walk.Walk) numbers them in the order it meets them and gets the key of the graph it
    would build, without building it."""
    return (eqn_signature(op, params, aval), input_numbers)


def structural_key(input_avals, eqn_parts: list, output_numbers) -> tuple:
    """What `Graph.key()` returns: input shapes and dtypes, the equations' parts, the outputs. Hot (every
    eager realize's walk builds one): a loop, not a comprehension, for the few inputs it usually has.
    `eqn_parts` lists each equation's part (eqn_key) flattened, signature then operand numbers, and
    the key is flat too: one tuple fewer made per equation by every walk, and hashing the key (every
    realize looks its program up by it) does not descend into one tuple per equation."""
    ins = []
    for a in input_avals:
        ins.append((a.shape, a.dtype.name))
    return (tuple(ins), *eqn_parts, tuple(output_numbers))


_ATOMS = frozenset({int, str, bool, type(None)})


def _freeze(x):
    """A hashable, exact stand-in for a params value (part of a structural key). Hot: a walk freezes
    every pending equation's params, so the common values (ints, strings, tuples of them) return
    at once."""
    t = type(x)
    if t in _ATOMS:
        return x
    if t is tuple:
        for v in x:
            if type(v) not in _ATOMS:
                return tuple([_freeze(v) for v in x])
        return x
    if t is dict:
        return tuple(sorted([(k, _freeze(v)) for k, v in x.items()]))
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, float):      # by bits: -0.0 apart from 0.0 (hex), and each NaN's sign and payload
        return ("f", x.hex()) if x == x else ("nan", struct.pack("<d", x).hex())
    if isinstance(x, complex):    # each part by its bits, as a float
        return ("c", _freeze(x.real), _freeze(x.imag))
    if hasattr(x, "short"):  # DType
        return x.name
    if hasattr(x, "key") and hasattr(x, "graphs"):  # a control Region: its structure
        return ("region", x.key())
    return x
