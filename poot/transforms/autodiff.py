"""The differentiation passes over a traced function (poot.transforms.tracing.Traced).

Forward mode (`jvp_pass`) walks the traced equations and records, beside each, its tangent from the
rule in `JVP_RULES`. Reverse mode (`vjp_pass`) notes which equations depend on a differentiated
input (the active ones: a floating result of an active operand), and returns a pullback that walks
them backwards applying `VJP_RULES` and summing the cotangents of values used more than once. Both
record poot operations, so the derivative is an ordinary lazy poot computation (fused, run anywhere,
differentiable again).

Equations with several results (control constructs, eigh...) are differentiated once per construct:
their rules take and return every result. A custom mark (tracing.CustomNode) uses its call's rules
in place of the equations that computed its value.
"""
from __future__ import annotations

from poot.errors import NotBuiltError, PootError
from poot.graph import Region
from poot.trace import lazy
from poot.trace.array import Array

from .jvp_rules import JVP_RULES
from .nondiff import JVP_UNSUPPORTED, NON_DIFFERENTIABLE, VJP_UNSUPPORTED, MULTI_RESULT
from .prims import convert
from .tracing import CustomNode, Step, Traced, sibling
from .vjp_rules import VJP_RULES


def is_float_node(n: lazy.Node) -> bool:
    """Can the value carry a derivative? Complex ones count, so that an equation computing one from a
    differentiated input is reached, and refused (`_rule`), instead of passing no derivative on."""
    return n.aval.dtype.kind in "fc"


def group_key(s: Step):
    """The construct a result equation belongs to (same op, parameters but `index`, operands)."""
    if isinstance(s.node, CustomNode):
        return ("custom", id(s.node.call))
    params = tuple(sorted((k, id(v) if isinstance(v, Region) else repr(v))
                          for k, v in s.params.items() if k != "index"))
    return (s.op, params, tuple(map(id, s.inputs)))


def _rule(table: dict, unsupported: dict, s: Step, mode: str):
    if s.node.aval.dtype.kind == "c" or any(i.aval.dtype.kind == "c" for i in s.inputs):
        raise NotBuiltError(f"{mode}: cannot differentiate through complex values ('{s.op}' recorded at "
                            f"{lazy.format_where(s.node.where)}): complex derivatives are not built; "
                            f"differentiate a formulation on the real and imaginary parts")
    rule = table.get(s.op)
    if rule is None:
        why = _traced_bound(s) or unsupported.get(s.op)
        where = lazy.format_where(s.node.where)
        if why is not None:
            launch = s.params.get("launch")      # a kernel_call: name the kernel
            what = f"kernel '{launch.name}'" if launch is not None else f"'{s.op}'"
            raise NotBuiltError(f"{mode}: cannot differentiate {what} (recorded at {where}): {why}")
        raise NotBuiltError(f"{mode}: '{s.op}' (recorded at {where}) has no {mode} rule")
    return rule


def _traced_bound(s: Step) -> str | None:
    """For a `while` that is a fori_loop with an array bound (its condition is `i < upper`), the
    reason it has no reverse rule, naming the bound and, where the bound is an argument traced by
    an enclosing @pt.jit (the usual way to get there, `jit(lambda w, n: grad(...))(w, 3)`), the fix
    of marking that argument static; None for any other construct."""
    if s.op != "while":
        return None
    cond_g = s.params["region"].graphs[0]
    ins = [v.id for v in cond_g.inputs[:2]]
    if len(cond_g.eqns) != 1 or cond_g.eqns[0].op != "lt" or [v.id for v in cond_g.eqns[0].inputs] != ins:
        return None
    names = [name for name, n in zip(("lower", "upper"), s.inputs) if _placeholder_below(n) is not None]
    head = ("reverse mode through fori_loop needs its trip count when tracing, and a fori_loop whose bound is "
            "an array is a while_loop, whose trip count is known only when it runs")
    if not names:
        return f"{head}; pass the bounds as Python ints (int(n)), or use forward mode (pt.jvp)"
    site = lazy.format_where(_placeholder_below(s.inputs[1 if "upper" in names else 0]).where)
    return (f"{head}; its {' and '.join(names)} bound is traced (from {site}), as an argument of an enclosing "
            f"@pt.jit function is. Mark that argument static (pt.jit(f, static_argnums=...) or "
            f"static_argnames=...) so the bound is a Python int, or use forward mode (pt.jvp)")


def _placeholder_below(node: lazy.Node) -> lazy.Node | None:
    """An abstract input (a traced function's placeholder) that `node` is computed from, or None."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op is None and n.buf is None:
            return n
        stack.extend(n.inputs)
    return None


def _touches_complex(s: Step) -> bool:
    """A primitive without a derivative that reads or makes a complex value: `z.real`, `z.imag` and
    the FFTs view complex numbers as float pairs (and back) through `bitcast`, which is linear, not
    constant. Such a step stays on the derivative's path so that `_rule` refuses it (complex
    derivatives are not built) instead of passing a silent zero on."""
    return s.node.aval.dtype.kind == "c" or any(i.aval.dtype.kind == "c" for i in s.inputs)


def _params_without_index(s: Step) -> dict:
    return {k: v for k, v in s.params.items() if k != "index"}


# --- forward mode -------------------------------------------------------------------------------
def _refuse_closures(call, active_or_tangent, mode: str) -> None:
    if any(id(c) in active_or_tangent for c in call.closed):
        raise PootError(f"{mode}: {call.what} reads a value being differentiated without taking it "
                        f"as an argument (a closure); its rule cannot see that dependence: pass the "
                        f"value as an argument")


def jvp_pass(traced: Traced, in_tangents: list) -> list:
    """The tangents (None: zero) of `traced`'s results given its inputs' tangents (None: zero),
    recorded beside the traced equations."""
    tan: dict[int, Array] = {id(p): t for p, t in zip(traced.params, in_tangents) if t is not None}
    groups: dict = {}
    for s in traced.eqns:
        n = s.node
        if not is_float_node(n):
            continue
        if isinstance(n, CustomNode):
            _refuse_closures(n.call, tan, "jvp")
            t = _custom_jvp(n, tan, groups)
        elif s.op in NON_DIFFERENTIABLE and not _touches_complex(s):
            continue
        else:
            ts = [tan.get(id(i)) for i in s.inputs]
            if all(t is None for t in ts):
                continue
            primals = [Array(i) for i in s.inputs]
            rule = _rule(JVP_RULES, JVP_UNSUPPORTED, s, "jvp")
            if s.op in MULTI_RESULT:
                key = group_key(s)
                outs = groups.get(key)
                if outs is None:
                    siblings = [Array(sibling(s, j)) for j in range(_result_count(s))]
                    outs = groups[key] = rule(primals, ts, siblings, **_params_without_index(s))
                t = outs[s.params["index"]]
            else:
                t = rule(primals, ts, Array(n), **s.params)
        if t is not None:
            tan[id(n)] = _fit(t, s)
    return [tan.get(id(o)) for o in traced.outs]


def _custom_jvp(n: CustomNode, tan: dict, groups: dict):
    call = n.call
    ts = [tan.get(id(a)) for a in call.args]
    if all(t is None for t in ts):
        return None
    key = ("custom", id(call))
    outs = groups.get(key)
    if outs is None:
        if call.jvp is None:
            raise PootError(f"jvp: {call.what} defines only a reverse-mode rule (defvjp); "
                            f"forward-mode differentiation of it needs custom_jvp")
        outs = groups[key] = list(call.jvp([Array(a) for a in call.args], ts))
    return outs[n.index]


def _result_count(s: Step) -> int:
    region = s.params.get("region")
    if region is not None:
        return len(region.out_avals)
    from poot.graph.host import HOST

    return len(HOST[s.op].results([i.aval for i in s.inputs], **_params_without_index(s)))


def _fit(t: Array, s: Step) -> Array:
    """A derivative with the value's own dtype (rules may compute wider)."""
    aval = s.node.aval
    if t.shape != aval.shape:
        raise PootError(f"internal: the derivative of '{s.op}' has shape {t.shape}, its value {aval.shape}")
    return convert(t, aval.dtype)


# --- reverse mode -------------------------------------------------------------------------------
class Pullback:
    """What `vjp_pass` returns: call it with the results' cotangents (None: zero) for the inputs'
    cotangents (None: zero, or an input that was not differentiated)."""

    def __init__(self, traced: Traced, active: set, group_sizes: dict):
        self.traced, self.active, self.group_sizes = traced, active, group_sizes

    def __call__(self, out_cts: list) -> list:
        traced, active = self.traced, self.active
        ct: dict[int, Array] = {}
        for o, c in zip(traced.outs, out_cts):
            if c is not None and id(o) in active:
                _add(ct, o, c)
        seen: dict = {}
        pending: dict = {}
        for s in reversed(traced.eqns):
            n = s.node
            k = id(n)
            if k not in active:
                continue
            if isinstance(n, CustomNode) or s.op in MULTI_RESULT:
                key = group_key(s)
                pending.setdefault(key, {})[n.index if isinstance(n, CustomNode)
                                            else s.params["index"]] = ct.pop(k, None)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] < self.group_sizes[key]:
                    continue
                cts = pending.pop(key)
                if all(c is None for c in cts.values()):
                    continue
                self._group(s, cts, ct)
                continue
            c = ct.pop(k, None)
            if c is None:
                continue
            rule = _rule(VJP_RULES, VJP_UNSUPPORTED, s, "grad")
            results = rule(c, [Array(i) for i in s.inputs], Array(n), **s.params)
            for i, r in zip(s.inputs, results):
                if r is not None and id(i) in active:
                    _add(ct, i, r)
        return [ct.get(id(p)) for p in traced.params]

    def _group(self, s: Step, cts: dict, ct: dict) -> None:
        active = self.active
        if isinstance(s.node, CustomNode):
            call = s.node.call
            if call.vjp is None:
                raise PootError(f"grad: {call.what} has no reverse-mode rule")
            full = [cts.get(j) for j in range(len(call.outs))]
            args = [Array(a) for a in call.args]
            results = list(call.vjp(args, [Array(r) for r in call.residuals], full))
            if len(results) != len(args):
                raise PootError(f"{call.what}: the backward rule returned {len(results)} "
                                f"cotangents for {len(args)} arguments")
            for k, (r, a) in enumerate(zip(results, args)):
                if r is not None and r.shape != a.shape:
                    raise PootError(f"{call.what}: the backward rule's cotangent {k} has shape "
                                    f"{r.shape}; its argument has shape {a.shape}")
            targets = call.args
        else:
            count = _result_count(s)
            full = [cts.get(j) for j in range(count)]
            siblings = [Array(sibling(s, j)) for j in range(count)]
            rule = _rule(VJP_RULES, VJP_UNSUPPORTED, s, "grad")
            results = rule(full, [Array(i) for i in s.inputs], siblings, **_params_without_index(s))
            targets = s.inputs
        for i, r in zip(targets, results):
            if r is not None and id(i) in active:
                _add(ct, i, r)


def _add(ct: dict, n: lazy.Node, value: Array) -> None:
    if value.shape != n.aval.shape:
        raise PootError(f"internal: a cotangent of shape {value.shape} for a value of shape "
                        f"{n.aval.shape} (op '{n.op}', recorded at {lazy.format_where(n.where)})")
    value = convert(value, n.aval.dtype)
    old = ct.get(id(n))
    ct[id(n)] = value if old is None else old + value


def vjp_pass(traced: Traced, differentiate: list[bool]) -> Pullback:
    """The pullback of `traced`; `differentiate[i]` says whether input i gets a cotangent (only
    floating inputs can). Notes which equations depend on a differentiated input (the active ones)."""
    active: set = {id(p) for p, d in zip(traced.params, differentiate) if d and is_float_node(p)}
    group_sizes: dict = {}
    for s in traced.eqns:
        n = s.node
        if not is_float_node(n):
            continue
        if isinstance(n, CustomNode):
            _refuse_closures(n.call, active, "grad")
            deps = n.call.args
        elif s.op in NON_DIFFERENTIABLE and not _touches_complex(s):
            continue
        else:
            deps = s.inputs
        if any(id(d) in active for d in deps):
            active.add(id(n))
            if isinstance(n, CustomNode) or s.op in MULTI_RESULT:
                key = group_key(s)
                group_sizes[key] = group_sizes.get(key, 0) + 1
    return Pullback(traced, active, group_sizes)


__all__ = ["jvp_pass", "vjp_pass", "Pullback"]
