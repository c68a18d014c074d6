"""pt.vmap of a function holding custom derivative rules, inside a differentiation.

`grad(lambda w: vmap(lambda x: loss(w, x))(xs).sum())` where `loss` calls a `custom_vjp` /
`custom_jvp` function: vmap traces `loss` on one example into a subgraph and batches it equation by
equation, which would lose the custom rule (a mark is refused there, tracing.RuleInBodyError). So
such a vmap becomes a custom call itself, as JAX batches a custom_vjp by batching its rules:
- its value is the plain batched function (the custom functions run as written);
- its reverse rule is `vmap(example -> vjp(f, example)(cotangent))`: inside that vjp the custom
  rules are marked and used, and vmap batches what they record. Cotangents of arguments that are not
  mapped (and of values the function closes over, such as the weights) are summed over the batch;
- its forward rule is `vmap(example -> jvp(f, example, tangent))`.
"""
from __future__ import annotations

from poot.errors import NotBuiltError
from poot.trace import pytree
from poot.trace.array import Array

from .flat import jvp_flat, vjp_flat
from .prims import bind, zeros_like
from .tracing import CustomCall, closed_over, mark, recorded, suspended


def vmap_with_rules(vmapped, args: tuple, kwargs: dict):
    """`vmapped(*args, **kwargs)` (a poot.transforms.batching._Vmapped) recorded as a custom call
    whose rules batch the derivative of one example (see the module docstring)."""
    from .batching import _leaves_with_axes, vmap

    name = getattr(vmapped.fn, "__name__", "the function")
    what = f"vmap({name})"
    mapped = vmapped._mapped_leaves(args, kwargs)
    size = vmapped._batch_size(mapped, name)
    leaves = [value for _, value, _ in mapped]
    positions = [i for i, x in enumerate(leaves) if isinstance(x, Array)]
    wrapped = list(leaves)
    for i in positions:          # told apart from the same arrays read through a closure
        wrapped[i] = bind("reshape", leaves[i], shape=leaves[i].shape)
    with suspended(), recorded() as body:
        t_args, t_kwargs = vmapped._rebuild(args, kwargs, wrapped)
        result = vmapped(*t_args, **t_kwargs)
    out_flat, out_tree = pytree.flatten(result)
    out_axes = [axis for _, _, axis in _leaves_with_axes(vmapped.out_axes, result, "", "out_axes")]
    out_pos = [i for i, x in enumerate(out_flat) if isinstance(x, Array)]
    if any(out_axes[i] is None for i in out_pos):
        raise NotBuiltError(f"{what}: differentiating a vmap whose function calls custom derivative "
                            f"rules needs every array result batched (out_axes not None)")
    arg_nodes = [wrapped[i]._node for i in positions]
    closed = closed_over(body, arg_nodes, [out_flat[i]._node for i in out_pos])
    closed_arrays = [Array(c) for c in closed]
    in_axes = tuple(mapped[i][2] for i in positions)
    res_axes = tuple(out_axes[i] for i in out_pos)
    k = len(positions)

    def example(*arrays):
        """The function of one example over the array leaves; its array results, flat."""
        full = list(leaves)
        for i, a in zip(positions, arrays):
            full[i] = a
        e_args, e_kwargs = vmapped._rebuild(args, kwargs, full)
        flat = pytree.flatten(vmapped.fn(*e_args, **e_kwargs))[0]
        return [flat[i] for i in out_pos]

    def vjp_rule(arg_arrays, res_arrays, cts):
        cts = [c if c is not None else zeros_like(out_flat[i]) for c, i in zip(cts, out_pos)]
        diff = [a.dtype.kind == "f" for a in arg_arrays[:k]]

        def one(*values):
            primals = list(values[:k])
            _, pull = vjp_flat(example, primals, what, diff, closed=closed)
            back = pull(list(values[k:]))
            return [b if b is not None else zeros_like(v) for b, v in zip(back, primals + closed_arrays)]

        per_example = vmap(one, in_axes=in_axes + res_axes, axis_size=size, axis_name=vmapped.axis_name)(*arg_arrays[:k], *cts)
        return ([_summed_or_moved(g, ax) for g, ax in zip(per_example[:k], in_axes)] +
                [_summed_or_moved(g, None) for g in per_example[k:]])

    def jvp_rule(arg_arrays, tangents):
        tangents = [t if t is not None or a.dtype.kind != "f" else zeros_like(a)
                    for t, a in zip(tangents, arg_arrays)]

        def one(*values):
            primals, tans, closed_tans = list(values[:k]), list(values[k:2 * k]), list(values[2 * k:])
            outs, touts = jvp_flat(example, primals, tans, what, closed=closed, closed_tangents=closed_tans)
            return [t if t is not None else zeros_like(o) for t, o in zip(touts, outs)]

        axes = in_axes * 2 + (None,) * len(closed)
        return vmap(one, in_axes=axes, out_axes=res_axes, axis_size=size, axis_name=vmapped.axis_name)(
            *arg_arrays[:k], *tangents[:k], *tangents[k:])

    call = CustomCall(arg_nodes + closed, [], vjp_rule, jvp_rule, what)
    marked = list(out_flat)
    for i in out_pos:
        marked[i] = Array(mark(call, out_flat[i]._node))
    return pytree.unflatten(out_tree, marked)


def _summed_or_moved(g: Array, axis):
    """A per-example cotangent (batch first) for an argument mapped at `axis`, or summed over the
    batch for one that is not mapped."""
    if axis is None:
        return bind("reduce_sum", g, axes=(0,)).reshape(g.shape[1:])
    if axis == 0:
        return g
    perm = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, g.ndim))
    return bind("transpose", g, perm=perm)
