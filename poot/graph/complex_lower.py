"""Lowering complex values to real ones: the graph pass that lets every device compute complex64 and
complex128 without a complex type in the kernel IR.

A complex array of shape S is stored as NumPy stores it, the real and imaginary parts interleaved,
which is also the layout of a real array of shape S + (2,) of the parts' dtype. `lower_complex`
rewrites a graph holding complex values into one holding only real values: each complex variable
becomes a real variable of shape S + (2,) (the same bytes, so graph inputs and outputs keep their
buffers), each complex equation the real equations computing its parts. Structural ops carry the
extra axis along (reshape, transpose, slice, concatenate, take...); add, sub, neg, sum and cumsum act
on both parts at once; products, quotients and transcendental functions split the parts and join
them again (poot/graph/complex_math.py). The fusion planner then fuses the result like any real graph.

The pass runs in poot.fuse.plan.plan_fusion, before any other pass, on graphs that hold a complex
value; the NumPy oracle evaluates the complex graph itself (the reference the lowering is tested on).
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.errors import NotBuiltError
from poot.graph import complex_math as cm
from poot.graph.aval import Aval
from poot.graph.control import KINDS as CONTROL_KINDS
from poot.graph.control import Region
from poot.graph.ir import Eqn, Graph, Var


def has_complex(graph: Graph) -> bool:
    """Does any value of `graph` have a complex dtype?"""
    return (any(v.aval.dtype.kind == "c" for v in graph.inputs)
            or any(e.out.aval.dtype.kind == "c" or any(v.aval.dtype.kind == "c" for v in e.inputs)
                   for e in graph.eqns))


def lowered_aval(a: Aval) -> Aval:
    return Aval(a.shape + (2,), dt.real_dtype(a.dtype)) if a.dtype.kind == "c" else a


def lower_complex(graph: Graph) -> Graph:
    """`graph` with complex values stored as real parts on a last axis of 2 (itself if it has none).
    Inputs and outputs correspond one to one, each with the same bytes."""
    if not has_complex(graph):
        return graph
    env: dict[int, Var] = {}
    inputs = []
    for v in graph.inputs:
        nv = Var(lowered_aval(v.aval)) if v.aval.dtype.kind == "c" else v
        env[v.id] = nv
        inputs.append(nv)
    eqns: list[Eqn] = []
    regions: dict[int, Region] = {}     # id(construct's Region) -> its lowered Region
    for e in graph.eqns:
        ins = tuple(env[v.id] for v in e.inputs)
        complex_in = any(v.aval.dtype.kind == "c" for v in e.inputs)
        if not complex_in and e.out.aval.dtype.kind != "c":
            eqns.append(e if ins == e.inputs else Eqn(e.op, ins, e.params, e.out, e.where))
            env[e.out.id] = e.out
            continue
        if e.op in CONTROL_KINDS:
            env[e.out.id] = _control(e, ins, regions, eqns)
            continue
        rule = _RULES.get(e.op)
        if rule is None:
            where = f" (recorded at {e.where})" if e.where else ""
            raise NotBuiltError(f"{e.op} of complex values is not built{where}; compute it on the "
                                f"real and imaginary parts (pt.real, pt.imag) or on the host")
        dtype = dt.real_dtype(next((v.aval.dtype for v in (*e.inputs, e.out) if v.aval.dtype.kind == "c")))
        E = cm.Emitter(eqns, e.where, dtype)
        env[e.out.id] = rule(E, e, ins)
    outputs = [env[v.id] for v in graph.outputs]
    inputs_ids = {v.id for v in inputs}
    seen: set[int] = set()
    for k, v in enumerate(outputs):    # a program's outputs are fresh buffers: copy an input or repeat
        if v.id in inputs_ids or v.id in seen:
            E = cm.Emitter(eqns, "", v.aval.dtype)
            outputs[k] = v = E.op("reshape", E.op("reshape", v, shape=(v.aval.size,)), shape=v.aval.shape)
        seen.add(v.id)
    return Graph(inputs, eqns, outputs)


def _control(e: Eqn, ins: tuple, regions: dict[int, Region], eqns: list[Eqn]) -> Var:
    """A control construct (cond / while / fori, poot.graph.control) with complex operands or
    results: its subgraphs lowered as whole graphs (a lowered value has the bytes of the complex one,
    so the loop's buffers carry over unchanged) and its results of the lowered avals. The k equations
    of one construct share one lowered Region, as they shared the original: the planner runs the
    equations of one Region object as one step."""
    region = e.params["region"]
    low = regions.get(id(region))
    if low is None:
        low = regions[id(region)] = Region(region.kind, tuple(lower_complex(g) for g in region.graphs),
                                           tuple(lowered_aval(a) for a in region.out_avals),
                                           region.lower, region.upper)
    out = Var(low.out_avals[e.params["index"]])
    eqns.append(Eqn(e.op, ins, {**e.params, "region": low}, out, e.where))
    return out


# --- rules: (Emitter, the complex equation, its lowered inputs) -> the lowered output ---------------
def _same(E, e, ins):
    """An op acting on both parts alike, with no parameter to adjust (add, sub, neg, concatenate...)."""
    return E.op(e.op, *ins, **e.params)


def _extend(name: str, extra):
    """A structural op whose parameters list every axis: the parts' axis appended."""
    def rule(E, e, ins):
        return E.op(e.op, *ins, **{**e.params, name: tuple(e.params[name]) + (extra(e),)})
    return rule


def _shape_param(E, e, ins):
    return E.op(e.op, ins[0], shape=tuple(e.params["shape"]) + (2,))


def _slice_like(E, e, ins):
    p = e.params
    return E.op(e.op, *ins, starts=tuple(p["starts"]) + (0,), steps=tuple(p["steps"]) + (1,),
                sizes=tuple(p["sizes"]) + (2,))


def _same_bits(value: complex) -> bool:
    """Are both parts the same number, zeros' signs included (one constant then fills both)?"""
    return value.real == value.imag and math.copysign(1.0, value.real) == math.copysign(1.0, value.imag)


def _pad(E, e, ins):
    value = complex(e.params["value"])
    widths = tuple(map(tuple, e.params["widths"]))
    if _same_bits(value):
        return E.op("pad", ins[0], widths=widths + ((0, 0),), value=value.real)
    re, im = E.pair(ins[0])
    return E.join((E.op("pad", re, widths=widths, value=value.real),
                   E.op("pad", im, widths=widths, value=value.imag)), e.out.aval.shape)


def _select(E, e, ins):
    c, a, b = ins
    return E.op("select", E.op("reshape", c, shape=c.aval.shape + (1,)), a, b)


def _full(E, e, ins):
    p = e.params
    value = complex(p["value"])
    shape = tuple(p["shape"])
    if _same_bits(value):
        return E.const(value.real, shape=shape + (2,))
    return E.join((E.const(value.real, shape=shape), E.const(value.imag, shape=shape)), shape)


def _iota(E, e, ins):
    p = e.params
    shape = tuple(p["shape"])
    return E.join((E.op("iota", shape=shape, axis=p["axis"], dtype=E.dtype), E.const(0.0)), shape)


def _convert(E, e, ins):
    (x,) = ins
    src, dst = e.inputs[0].aval.dtype, e.params["dtype"]
    shape = e.out.aval.shape
    if src.kind == "c" and dst.kind == "c":
        return E.op("convert", x, dtype=dt.real_dtype(dst))
    if dst.kind == "c":         # real -> complex: a zero imaginary part
        return E.join((E.op("convert", x, dtype=dt.real_dtype(dst)), E.const(0.0)), shape)
    re, im = E.pair(x)          # complex -> real: the real part (NumPy's astype; bool: either part)
    if dst is dt.bool_:
        zero = E.const(0.0)
        return E.op("or", E.op("ne", re, zero), E.op("ne", im, zero))
    return re if dst is E.dtype else E.op("convert", re, dtype=dst)


def _bitcast(E, e, ins):
    """Between a complex dtype and its parts: the lowered value already is the parts."""
    return ins[0]


def _unary(E, e, ins):
    z = E.pair(ins[0])
    return E.join(cm.UNARY[e.op](E, z), e.out.aval.shape)


def _binary(E, e, ins):
    z, w = E.pair(ins[0]), E.pair(ins[1])
    return E.join(cm.BINARY[e.op](E, z, w), e.out.aval.shape)


def _abs(E, e, ins):
    return E.op("hypot", *E.pair(ins[0]))


def _predicate(E, e, ins):
    re, im = E.pair(ins[0])
    both = "and" if e.op == "isfinite" else "or"
    return E.op(both, E.op(e.op, re), E.op(e.op, im))


def _compare(E, e, ins):
    (a, b), (c, d) = E.pair(ins[0]), E.pair(ins[1])
    both = "and" if e.op == "eq" else "or"
    return E.op(both, E.op(e.op, a, c), E.op(e.op, b, d))


def _prod(E, e, ins):
    """A product over axes as halving rounds of complex products: log2(n) rounds per axis."""
    x = ins[0]
    for axis in e.params["axes"]:
        n = x.aval.shape[axis]
        if n == 0:
            shape = x.aval.shape[:-1]
            shape = shape[:axis] + (1,) + shape[axis + 1:]
            x = E.join((E.const(1.0, shape=shape), E.const(0.0, shape=shape)), shape)
            continue
        while n > 1:
            h = n // 2
            lo, hi = _cut(E, x, axis, 0, h), _cut(E, x, axis, h, h)
            p = E.join(cm.mul(E, E.pair(lo), E.pair(hi)), lo.aval.shape[:-1])
            x = p if n % 2 == 0 else E.op("concatenate", p, _cut(E, x, axis, 2 * h, 1), axis=axis)
            n = (n + 1) // 2
    return x


def _cut(E, x: Var, axis: int, start: int, size: int) -> Var:
    shape = x.aval.shape
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    sizes = tuple(size if i == axis else d for i, d in enumerate(shape))
    return E.op("slice", x, starts=starts, steps=(1,) * len(shape), sizes=sizes)


def _matmul(E, e, ins):
    """Four real products: (A + iB)(C + iD) = (AC - BD) + i(AD + BC)."""
    (a, b), (c, d) = E.pair(ins[0]), E.pair(ins[1])
    mm = lambda x, y: E.op("matmul", x, y)  # noqa: E731
    return E.join((E.sub(mm(a, c), mm(b, d)), E.add(mm(a, d), mm(b, c))), e.out.aval.shape)


def _take(E, e, ins):
    return E.op("take", *ins, axis=e.params["axis"])


_RULES = {
    "add": _same, "sub": _same, "neg": _same, "concatenate": _same, "reduce_sum": _same,
    "cumsum": _same, "scatter": _same, "take": _take,
    "reshape": _shape_param, "broadcast": _shape_param,
    "transpose": _extend("perm", lambda e: len(e.out.aval.shape)),
    "slice": _slice_like, "update_slice": _slice_like, "pad": _pad, "select": _select,
    "full": _full, "iota": _iota, "convert": _convert, "bitcast": _bitcast,
    **{op: _unary for op in cm.UNARY}, **{op: _binary for op in cm.BINARY},
    "abs": _abs, "isnan": _predicate, "isinf": _predicate, "isfinite": _predicate,
    "eq": _compare, "ne": _compare, "reduce_prod": _prod, "matmul": _matmul,
}
