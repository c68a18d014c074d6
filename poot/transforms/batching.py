"""`pt.vmap`: vectorize a function over a batch axis of its arguments (JAX's semantics).

`vmap(f, in_axes, out_axes)(*args)` traces `f` once on one batch element (abstract placeholders with
the mapped axis removed, as `@pt.jit` traces), then runs the traced graph through the batching rule of
each primitive (its `batch` rule in the op registry, poot/graph/registry.py). Nothing is unrolled over the
batch (except host ops that have no batch axis, see batching_host.py), and the result is an ordinary
lazy graph: vmap composes with `@pt.jit` (either way round) and with itself.

`in_axes` / `out_axes`: an int (negative counts from the end), None (not mapped), or a tree prefix of
the positional arguments / of the result with one of those per leaf or subtree; keyword arguments
are mapped along axis 0. `axis_size` gives the batch size when no argument is mapped.

`axis_name` names the batch axis for the collectives inside `f` (`pt.lax.psum(x, 'i')`, `pmean`,
`pmax`, `pmin`, `axis_index`, `all_gather`: poot/transforms/collectives.py), as in JAX.

A `@pt.kernel` launch inside `f` cannot be batched: a launch writes its Out buffers in place on the
device, outside the lazy graph that vmap rewrites, so vmap refuses it with an error naming the kernel.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np

from poot.errors import ArgumentError, NotBuiltError, PootError, TracerError, api_boundary
from poot.graph import Aval
from poot.trace import context as _dev
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.closed_over import reachable_arrays, refuse_writes
from poot.graph.registry import SlotView
from poot.transforms import batching_control, batching_host, batching_rules, collectives  # noqa: F401  (rules)
from poot.transforms.batching_core import BatchContext, BatchingError, place
from poot.transforms.tracing import ArgumentWriteError, RuleInBodyError, can_mark

__all__ = ["vmap", "BATCHING_RULES", "UNBATCHABLE", "BatchingError"]

# primitive name -> rule(ctx, nodes, batch_axes, **params) -> (node, batch_axis): a read-only view
# of the registry's `batch` slot
BATCHING_RULES = SlotView("batch")
# primitive name -> why it has no rule (it is then only ever recorded unbatched)
UNBATCHABLE = SlotView("batch", reasons=True)


@api_boundary
def vmap(fn, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """`fn` vectorized over axis `in_axes` of its arguments; the results carry the batch axis at
    `out_axes`. See the module docstring for the forms of `in_axes` and `out_axes`; `axis_name`
    names the batch axis for the collectives (`pt.lax.psum(x, axis_name)`) inside `fn`. The
    parameters are JAX's, in its order; `spmd_axis_name` (sharding) is refused when given."""
    if not callable(fn):
        raise ArgumentError(f"pt.vmap needs a function; got {type(fn).__name__}")
    if isinstance(in_axes, list):     # JAX's reading: a list of per-argument axes is a tuple
        in_axes = tuple(in_axes)
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise PootError(f"pt.vmap: axis_size must be a non-negative int, got {axis_size!r}")
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise ArgumentError(f"pt.vmap: axis_name must be hashable (a string, say), got "
                                f"{type(axis_name).__name__}") from None
    if spmd_axis_name is not None:
        raise NotBuiltError("pt.vmap: spmd_axis_name (sharding the batch over devices) is not built; "
                            "poot runs a vmap on one device")
    return _Vmapped(fn, in_axes, out_axes, axis_size, axis_name)


class _Vmapped:
    def __init__(self, fn, in_axes, out_axes, axis_size, axis_name=None):
        functools.update_wrapper(self, fn)
        self.fn, self.in_axes, self.out_axes, self.axis_size = fn, in_axes, out_axes, axis_size
        self.axis_name = axis_name
        self._names = _parameter_names(fn)

    def __repr__(self) -> str:
        return f"<poot.vmap {getattr(self.fn, '__qualname__', self.fn)} in_axes={self.in_axes!r}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    @api_boundary
    def __call__(self, *args, **kwargs):
        if not can_mark():
            return self._batched(args, kwargs)
        try:        # directly in a differentiation trace: a custom rule inside needs rules of our own
            return self._batched(args, kwargs)
        except RuleInBodyError:
            from poot.transforms.batching_custom import vmap_with_rules

            return vmap_with_rules(self, args, kwargs)

    def _batched(self, args, kwargs):
        name = getattr(self.fn, "__name__", "the function")
        mapped = self._mapped_leaves(args, kwargs)   # [(where, value, axis)] per leaf, in order
        size = self._batch_size(mapped, name)
        device = next((v.device for _, v, ax in mapped if ax is not None and isinstance(v, Array)),
                      _dev.current())
        stand_ins: dict[int, tuple] = {}             # placeholder id -> (real node, batch axis)
        leaves = []
        for where, value, axis in mapped:
            if axis is None:
                leaves.append(value)
                continue
            node = _as_node(value, device)
            shape = node.aval.shape
            p = lazy.placeholder(Aval(shape[:axis] + shape[axis + 1:], node.aval.dtype), node.device)
            p.weak = node.weak
            stand_ins[id(p)] = (p, node, axis)
            leaves.append(Array(p))
        t_args, t_kwargs = self._rebuild(args, kwargs, leaves)
        before = [x._node if isinstance(x, Array) else None for x in leaves]
        with collectives.binding(self.axis_name, size):
            result, inside = self._trace(t_args, t_kwargs, name, {id(v) for _, v, _ in mapped})
        # arguments the function updated in place (x[i] = v, x += y): their new per-example values are
        # batched too and written back to the caller's arrays, as a loop over the examples leaves them
        writes = [(k, x._node) for k, x in enumerate(leaves) if before[k] is not None and x._node is not before[k]]
        try:
            return self._batched_result(result, inside, stand_ins, size, device, name,
                                        [mapped[k] for k, _ in writes], [n for _, n in writes])
        except BaseException:   # an unmapped argument is the caller's own array: it keeps its value
            for k, _ in writes:
                if mapped[k][2] is None:
                    leaves[k]._node = before[k]
            raise

    def _trace(self, t_args, t_kwargs, name: str, passed: set):
        """`fn` called on one batch element's stand-ins in a lazy scope: (its result, the nodes it
        recorded). An array it closes over (not one of the `passed` arguments) that it writes into
        would hold a value of the stand-ins forever: that is refused, and the array put back, as
        @pt.jit and the loop bodies do (ClosedOverWriteError)."""
        reached = [r for r in reachable_arrays(self.fn) if id(r[0]) not in passed]
        try:
            with lazy.scope() as inside:
                result = self.fn(*t_args, **t_kwargs)
        except TracerError as e:
            refuse_writes(reached, f"pt.vmap({name})", failed=True)
            kernel = _kernel_in(e)
            if kernel is None:
                err = TracerError(f"{e.args[0] if e.args else e}\n  (inside pt.vmap({name}), whose "
                                  f"mapped arguments are abstract: one batch element stands for all)")
                err._poot_located = getattr(e, "_poot_located", False)   # keeps the user's line once
                raise err from None
            raise BatchingError(
                f"vmap({name}): kernel '{kernel}' is launched inside the mapped function; a @pt.kernel "
                f"launch writes its Out buffers in place on the device, outside the lazy graph vmap "
                f"batches, so it cannot get a batch axis. Launch it once on the whole batch outside "
                f"vmap (its grid can cover the batch), or write this step with poot array operations"
            ) from None
        except BaseException:
            refuse_writes(reached, f"pt.vmap({name})", failed=True)
            raise
        refuse_writes(reached, f"pt.vmap({name})")
        return result, inside

    # -- arguments -------------------------------------------------------------------------------
    def _mapped_leaves(self, args, kwargs) -> list[tuple]:
        axes = self.in_axes
        if isinstance(axes, tuple):
            if len(axes) != len(args):
                raise BatchingError(
                    f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                    f"positional arguments passed to the function, but got len(in_axes)={len(axes)}, "
                    f"len(args)={len(args)}")
        elif isinstance(axes, dict) or dataclasses.is_dataclass(axes):
            raise BatchingError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding "
                                f"to the positional arguments; got a {type(axes).__name__}")
        out = []
        for i, a in enumerate(args):
            spec = axes[i] if isinstance(axes, tuple) else axes
            out += _leaves_with_axes(spec, a, self._arg_name(i), "in_axes")
        for k in sorted(kwargs):
            out += _leaves_with_axes(0, kwargs[k], k, "in_axes")
        return [(where, value, _normalize_in_axis(axis, value, where)) for where, value, axis in out]

    def _arg_name(self, i: int) -> str:
        return self._names[i] if i < len(self._names) else f"args[{i}]"

    def _batch_size(self, mapped, name: str) -> int:
        sizes = [(where, value, axis, _shape(value)[axis]) for where, value, axis in mapped if axis is not None]
        if not sizes:
            if self.axis_size is None:
                raise BatchingError(f"vmap({name}) must have at least one non-None value in in_axes, or "
                                    f"be given axis_size")
            return self.axis_size
        wanted = {s for *_, s in sizes}
        if self.axis_size is not None:
            wanted.add(self.axis_size)
        if len(wanted) > 1:
            lines = [f"  * one axis had size {s}: axis {axis} of argument {where} of type {_type_text(value)}"
                     for where, value, axis, s in sizes]
            if self.axis_size is not None:
                lines.append(f"  * axis_size is {self.axis_size}")
            raise BatchingError(f"vmap({name}) got inconsistent sizes for array axes to be mapped:\n"
                                + ";\n".join(lines))
        return wanted.pop()

    def _rebuild(self, args, kwargs, leaves):
        it = iter(leaves)

        def swap(tree):
            flat, treedef = pytree.flatten(tree)
            return pytree.unflatten(treedef, [next(it) for _ in flat])

        new_args = [swap(a) for a in args]
        new_kwargs = {k: swap(kwargs[k]) for k in sorted(kwargs)}
        return new_args, new_kwargs

    # -- results ---------------------------------------------------------------------------------
    def _batched_result(self, result, inside, stand_ins, size, device, name, written=(), new_values=()):
        """The batched result; `written` (the mapped leaves the function updated in place) are rebound
        to their batched `new_values`, at their own in_axes."""
        flat, treedef = pytree.flatten(result)
        roots = [x._node for x in flat if isinstance(x, Array)] + list(new_values)
        graph, graph_leaves = lazy.build_graph(roots, inside)
        values = []
        for leaf in graph_leaves:
            hit = stand_ins.get(id(leaf))
            values.append((hit[1], hit[2]) if hit is not None and hit[0] is leaf else (leaf, None))
        ctx = BatchContext(size, device, BATCHING_RULES, UNBATCHABLE, self.axis_name)
        outs = iter(ctx.eval_graph(graph, values))
        paths = pytree.paths(treedef, "result")
        axes = _leaves_with_axes(self.out_axes, result, "", "out_axes")
        placed = []
        for x, path, (_, _, axis) in zip(flat, paths, axes):
            if isinstance(x, Array):
                node, dim = next(outs)
            elif axis is None:
                placed.append(x)
                continue
            elif isinstance(x, (bool, int, float, np.ndarray, np.generic)):
                node, dim = _as_node(x, device), None
            else:
                raise BatchingError(f"vmap({name}): {path or 'the result'} is a {type(x).__name__}; a "
                                    f"mapped function returns arrays (or pytrees of them)")
            placed.append(Array(place(ctx, node, dim, axis, path or "the result")))
        out = pytree.unflatten(treedef, placed)
        back = []
        for (where, value, axis), (node, dim) in zip(written, outs):
            if not isinstance(value, Array):     # NumPy data was copied in: nothing to write back to
                continue
            if axis is None and dim is not None:
                raise ArgumentWriteError(
                    f"vmap({name}): the function writes a per-example value into {where} in place, which "
                    f"is not mapped (in_axes None): one array shared by every example cannot hold them "
                    f"all. Map it, or return the new values instead of writing them into the argument")
            back.append((value, place(ctx, node, dim, axis, where)))
        for value, node in back:
            value._node = node
        return out


# --- axis specifications -----------------------------------------------------------------------------
def _is_axis(spec) -> bool:
    return spec is None or (isinstance(spec, int) and not isinstance(spec, bool))


def _check_spec(spec, what: str) -> None:
    flat, _ = pytree.flatten(spec)
    for x in flat:
        if not _is_axis(x):
            raise ArgumentError(f"pt.vmap: {what} holds {x!r}; each entry must be an int or None")   # JAX's TypeError


def _leaves_with_axes(spec, tree, where: str, what: str) -> list[tuple]:
    """(path, leaf, axis) for every leaf of `tree`, in pytree order, with `spec` a tree prefix of
    `tree` (an int or None stands for its whole subtree)."""
    out: list = []
    _spread(spec, tree, where, what, out)
    return out


def _spread(spec, tree, where: str, what: str, out: list) -> None:
    if _is_axis(spec):
        flat, treedef = pytree.flatten(tree)
        out += [(where + p, x, spec) for p, x in zip(pytree.paths(treedef), flat)]
        return
    t = type(tree)
    mismatch = BatchingError(f"vmap {what}: the specification at '{where or 'the top'}' is a "
                             f"{type(spec).__name__} but the value there is a {t.__name__}; {what} must "
                             f"be a tree prefix of it (an int or None per leaf or subtree)")
    if isinstance(spec, (tuple, list)) and t in (tuple, list) and not hasattr(spec, "_fields"):
        if len(spec) != len(tree):
            raise BatchingError(f"vmap {what}: the specification at '{where or 'the top'}' is a "
                                f"{type(spec).__name__} of {len(spec)} entries but the value there is a "
                                f"{t.__name__} of {len(tree)}; {what} must be a tree prefix of it: one entry "
                                f"(an int, None or a subtree) per element, or one int or None for all")
        for i, (s, x) in enumerate(zip(spec, tree)):
            _spread(s, x, f"{where}[{i}]", what, out)
    elif isinstance(spec, dict) and t is dict:
        if sorted(spec) != sorted(tree):
            raise BatchingError(f"vmap {what}: the specification at '{where or 'the top'}' is a dict with "
                                f"keys {sorted(spec)!r} but the value there has keys {sorted(tree)!r}; {what} "
                                f"must be a tree prefix of it: one entry per key, or one int or None for all")
        for k in sorted(tree):
            _spread(spec[k], tree[k], f"{where}[{k!r}]", what, out)
    elif type(spec) is t and hasattr(t, "_fields"):
        for name in t._fields:
            _spread(getattr(spec, name), getattr(tree, name), f"{where}.{name}", what, out)
    elif type(spec) is t and t in pytree._CUSTOM:           # a registered node: child by child
        kids = pytree.custom_children(tree, t)[0]
        spec_kids = pytree.custom_children(spec, t)[0]
        if len(spec_kids) != len(kids):
            raise mismatch
        for i, (s, x) in enumerate(zip(spec_kids, kids)):
            _spread(s, x, f"{where}[<flat index {i}>]", what, out)
    elif type(spec) is t and dataclasses.is_dataclass(tree):
        for f in dataclasses.fields(tree):
            if f.init:
                _spread(getattr(spec, f.name), getattr(tree, f.name), f"{where}.{f.name}", what, out)
    elif tree is None:
        return
    else:
        raise mismatch


def _normalize_in_axis(axis, value, where: str):
    if axis is None:
        return None
    if not isinstance(value, (Array, np.ndarray, np.generic)):
        raise BatchingError(f"vmap was requested to map argument {where} along axis {axis}, but it is a "
                            f"{type(value).__name__}, not an array; pass in_axes=None for it")
    ndim = len(_shape(value))
    if not -ndim <= axis < ndim:
        raise BatchingError(f"vmap was requested to map argument {where} along axis {axis}, which implies "
                            f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is "
                            f"only {ndim} (its shape is {_shape(value)})")
    return axis % ndim


def _shape(value) -> tuple:
    return tuple(value.shape) if isinstance(value, Array) else np.shape(value)


def _type_text(value) -> str:
    if isinstance(value, Array):
        return str(value.aval)
    return f"numpy {np.asarray(value).dtype}{list(np.shape(value))}"


def _as_node(value, device: str) -> lazy.Node:
    if isinstance(value, Array):
        return value._node
    return lazy.from_numpy(np.asarray(value), device)


def _parameter_names(fn) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _kernel_in(error: BaseException) -> str | None:
    """The name of the @pt.kernel whose launch raised `error` (a kernel launch reads its arrays'
    buffers on the host and has no hook into tracing): the name the launch gave the error (its
    traceback is cut at the launch's API boundary), else found by the launch's frame; or None."""
    if getattr(error, "kernel", None):
        return error.kernel
    tb = error.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if type(owner).__name__ == "KernelFunction":
            return getattr(owner, "name", None) or "?"
        tb = tb.tb_next
    return None
