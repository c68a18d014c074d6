"""vjp and jvp of functions over flat lists of Arrays: what the public API (poot.transforms.api)
and the rules that differentiate subfunctions (control-flow bodies, custom rules) are built on."""
from __future__ import annotations

from poot.trace import pytree
from poot.trace.array import Array

from .prims import zeros_like
from .tracing import Traced


def trace_flat(fn, arrays: list, what: str, has_aux: bool = False, closed=()) -> Traced:
    nodes = [a._node for a in arrays]
    _, tree = pytree.flatten(tuple(arrays))
    return Traced(fn, nodes, tree, what, has_aux, closed)


def vjp_flat(fn, arrays: list, what: str = "vjp", differentiate=None, closed=()):
    """(results as Arrays, pullback): pullback(list of result cotangents, None for zero) gives the
    list of argument cotangents (None for zero), then those of the `closed` nodes (values `fn`
    reads from outside, differentiated as they are)."""
    from .autodiff import vjp_pass

    traced = trace_flat(fn, arrays, what, closed=closed)
    diff = differentiate if differentiate is not None else [True] * len(arrays)
    pull = vjp_pass(traced, list(diff) + [True] * len(closed))
    return [Array(o) for o in traced.outs], lambda cts: pull(list(cts))


def jvp_flat(fn, arrays: list, tangents: list, what: str = "jvp", closed=(), closed_tangents=()):
    """(results, result tangents) of `fn` at `arrays` along `tangents` (None: zero), and along
    `closed_tangents` for the `closed` nodes; a result's tangent is None where it is zero."""
    from .autodiff import jvp_pass

    traced = trace_flat(fn, arrays, what, closed=closed)
    touts = jvp_pass(traced, list(tangents) + list(closed_tangents))
    return [Array(o) for o in traced.outs], touts


def filled(values: list, like: list) -> list:
    """`values` with each None replaced by zeros shaped like the matching entry of `like`."""
    return [v if v is not None else zeros_like(x) for v, x in zip(values, like)]
