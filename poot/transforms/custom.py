"""User-defined derivatives and derivative control: `custom_vjp`, `custom_jvp`, `checkpoint`,
`stop_gradient` (JAX's API).

Outside a differentiation each of these just runs the user's function. While one traces, the call's
results are marked (poot.transforms.tracing.mark) with a `CustomCall` holding the arguments and the
rules, and the passes use those rules instead of differentiating the function's equations:
- custom_vjp: `fwd` computes the results and residuals; `bwd(residuals, cotangent)` the argument
  cotangents. Forward mode through it is refused, as in JAX.
- custom_jvp: `jvp(primals, tangents) -> (out, out tangent)`; reverse mode transposes that rule (it
  is linear in the tangents) with the reverse pass itself.
- checkpoint: reverse mode records the function again from its arguments in the backward pass
  (rematerialization: the forward values need not be kept for it); forward mode differentiates the
  function itself.
- stop_gradient: the identity with a zero derivative.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import threading

from poot.errors import ArgumentError, DTypeError, NotBuiltError, PootError, ShapeError, api_boundary
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.promote import is_weak

from .autodiff import vjp_pass
from .flat import jvp_flat, trace_flat, vjp_flat
from .prims import zeros, zeros_like
from .tracing import CustomCall, can_mark, closed_over, mark, recorded, to_node, transforming


def _behind_identities(args: tuple) -> tuple:
    """`args` with each Array behind a fresh identity equation, recorded in the trace: the rules'
    arguments are then told apart from the same arrays read through a closure."""
    leaves, tree = pytree.flatten(list(args))
    wrapped = [Array(lazy.record("reshape", (x._node,), {"shape": x.shape})) if isinstance(x, Array) else x
               for x in leaves]
    return tuple(pytree.unflatten(tree, wrapped))


def _array_positions(leaves) -> list[int]:
    return [i for i, x in enumerate(leaves) if isinstance(x, Array)]


def _rebuild(leaves, positions, arrays):
    """`leaves` with the entries at `positions` replaced by `arrays`."""
    out = list(leaves)
    for i, a in zip(positions, arrays):
        out[i] = a
    return out


def _flatten_like(ct, arg) -> list:
    """The leaves of cotangent `ct` in the order of `arg`'s leaves, a None (sub)tree standing for
    zeros of every leaf below it (JAX's convention for bwd results)."""
    leaves, tree = pytree.flatten(arg)
    if ct is None:
        return [None] * len(leaves)
    if tree is pytree.LEAF:
        return [ct]
    if isinstance(arg, (tuple, list)) and isinstance(ct, (tuple, list)) and len(ct) == len(arg):
        return [x for c, a in zip(ct, arg) for x in _flatten_like(c, a)]
    if isinstance(arg, dict) and isinstance(ct, dict):
        return [x for k in sorted(arg) for x in _flatten_like(ct.get(k), arg[k])]
    if dataclasses.is_dataclass(arg) and type(ct) is type(arg):
        return [x for f in dataclasses.fields(arg) if f.init
                for x in _flatten_like(getattr(ct, f.name), getattr(arg, f.name))]
    return pytree.flatten(ct)[0]


def _marked_results(call: CustomCall, result, device: str):
    leaves, tree = pytree.flatten(result)
    nodes = [to_node(x, device, call.what) for x in leaves]
    return pytree.unflatten(tree, [Array(mark(call, n)) for n in nodes]), [n.aval for n in nodes]


def _device(leaves) -> str:
    from poot.trace import context

    for x in leaves:
        if isinstance(x, Array):
            return x.device
    return context.current()


def _as_positions(nums, what: str) -> tuple:
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    if not all(isinstance(n, int) for n in nums):
        raise PootError(f"{what}: nondiff_argnums must be ints; got {nums!r}")
    return nums


def _positional(fun, args: tuple, kwargs: dict, nondiff: tuple, what: str) -> tuple:
    """The call's arguments by position, as the rules take them: keyword arguments bound through
    `fun`'s signature and defaults filled in, as JAX does, so that every position exists and a bwd
    rule returns one cotangent per parameter whether or not the caller passed a defaulted one."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise PootError(f"{what}: {e}") from None
    except ValueError:        # no signature to bind with (a builtin): positions only
        if kwargs:
            raise PootError(f"{what}: keyword arguments {sorted(kwargs)} cannot be bound to "
                            f"positions; pass them positionally") from None
        return args
    bound.apply_defaults()
    if bound.kwargs and not kwargs:       # defaulted keyword-only parameters: the function's own
        return tuple(bound.args)
    if bound.kwargs:
        raise PootError(f"{what}: keyword arguments {sorted(bound.kwargs)} have no position "
                        f"(keyword-only); the derivative rules take arguments by position")
    return tuple(bound.args)


def _split(args: tuple, nondiff: tuple, what: str):
    """(the nondiff arguments in order, the others, a function merging values for the others back
    into a full argument tuple)."""
    n = len(args)
    for k in nondiff:
        if not -n <= k < n:
            raise PootError(f"{what}: nondiff_argnums {nondiff!r} does not fit a call with {n} arguments")
    fixed_at = sorted({k % n for k in nondiff})
    fixed = [args[k] for k in fixed_at]
    free_at = [k for k in range(n) if k not in fixed_at]

    def merge(values):
        full = list(args)
        for k, v in zip(free_at, values):
            full[k] = v
        return tuple(full)

    return fixed, tuple(args[k] for k in free_at), merge


@api_boundary
def stop_gradient(x):
    """`x` (a pytree of arrays) unchanged, with a zero derivative: differentiation does not flow
    through it (JAX's lax.stop_gradient)."""
    if not transforming():
        return x
    leaves, tree = pytree.flatten(x)
    out = []
    for leaf in leaves:
        if isinstance(leaf, Array) and leaf.dtype.kind == "f":
            if can_mark():
                call = CustomCall([leaf._node], [], lambda a, r, c: [None],
                                  lambda a, t: [None], "stop_gradient")
                leaf = Array(mark(call, leaf._node))
            else:       # in a pt.cond / loop / scan body, which keeps equations but not marks: a
                # same-type bitcast is the value with no derivative (nondiff.py), and a body keeps it
                leaf = Array(lazy.record("bitcast", (leaf._node,), {"dtype": leaf.dtype}))
        out.append(leaf)
    return pytree.unflatten(tree, out)


_fwd_state = threading.local()


def _fwd_running() -> set:
    """The ids of the custom_vjp functions whose `fwd` runs now on this thread."""
    if not hasattr(_fwd_state, "ids"):
        _fwd_state.ids = set()
    return _fwd_state.ids


@contextlib.contextmanager
def _running_fwd(f):
    """While `fwd` of custom_vjp function `f` runs, a call of `f` (JAX's idiom `fwd = lambda x: (f(x),
    res)`) runs the primal function: its derivative is bwd's, so it needs no rule of its own, and
    marking it would call fwd again without end."""
    ids = _fwd_running()
    nested = id(f) in ids
    ids.add(id(f))
    try:
        yield
    finally:
        if not nested:
            ids.discard(id(f))


class custom_vjp:
    """A function with a user-defined reverse-mode derivative: `f = custom_vjp(fun)`, then
    `f.defvjp(fwd, bwd)` with `fwd(*args) -> (out, residuals)` and `bwd(residuals, cotangent) ->`
    a tuple with one cotangent per positional argument (None for zero). Usable as a decorator.
    Keyword arguments are bound to their positions. `nondiff_argnums` (as in JAX) names arguments
    that are not differentiated (Python values such as a count or a function): `bwd` takes them
    first, `bwd(*nondiff_args, residuals, cotangent)`, and returns cotangents for the others only."""

    @api_boundary               # a mistake names the user's line, as every public call's does
    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise ArgumentError(f"custom_vjp needs a function; got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun, self.fwd, self.bwd = fun, None, None
        self.nondiff_argnums = _as_positions(nondiff_argnums, "custom_vjp")

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "function")
        what = f"custom_vjp function '{name}'"
        if self.fwd is None:
            raise PootError(f"custom_vjp function '{name}' has no rule; call .defvjp(fwd, bwd) first")
        args = _positional(self.fun, args, kwargs, self.nondiff_argnums, what)
        if not transforming() or id(self) in _fwd_running():
            return self.fun(*args)
        if not self.nondiff_argnums:
            return self._call(self.fwd, self.bwd, args, what)
        fixed, diff, merge = _split(args, self.nondiff_argnums, what)
        fwd, bwd = self.fwd, self.bwd
        return self._call(lambda *d: fwd(*merge(d)), lambda res, ct: bwd(*fixed, res, ct), diff, what)

    def _call(self, fwd, bwd, args: tuple, what: str):
        """The call traced with its rules: `fwd` computes the results and residuals now, `bwd` is
        kept for the reverse pass."""
        with recorded() as body, _running_fwd(self):
            args = _behind_identities(args)
            got = fwd(*args)
        if not (isinstance(got, tuple) and len(got) == 2):
            raise PootError(f"{what}: fwd must return a pair (output, residuals)")
        out, res = got
        arg_leaves, _ = pytree.flatten(list(args))
        res_leaves, res_tree = pytree.flatten(res)
        arg_pos, res_pos = _array_positions(arg_leaves), _array_positions(res_leaves)
        out_leaves, out_tree = pytree.flatten(out)
        nargs = len(args)
        arg_counts = [len(pytree.flatten(a)[0]) for a in args]
        holder: dict = {}

        def vjp_rule(arg_arrays, res_arrays, cts):
            residuals = pytree.unflatten(res_tree, _rebuild(res_leaves, res_pos, res_arrays))
            ct = pytree.unflatten(out_tree, [c if c is not None else zeros(a.shape, a.dtype, dev)
                                             for c, a in zip(cts, holder["avals"])])
            back = bwd(residuals, ct)
            if not isinstance(back, (tuple, list)) or len(back) != nargs:
                got = (f"a {type(back).__name__} of {len(back)}" if isinstance(back, (tuple, list))
                       else type(back).__name__)
                raise PootError(f"{what}: bwd must return a tuple of {nargs} cotangents (one per "
                                f"argument, defaulted ones included), got {got}")
            flat: list = []
            for k, b in enumerate(back):
                sub = _flatten_like(b, args[k])
                if len(sub) != arg_counts[k]:
                    raise PootError(f"{what}: bwd's cotangent {k} does not match argument {k}'s structure")
                flat += sub
            return [flat[i] if flat[i] is None or isinstance(flat[i], Array)
                    else Array(to_node(flat[i], dev, what)) for i in arg_pos]

        dev = _device(arg_leaves + out_leaves)
        arg_nodes = [arg_leaves[i]._node for i in arg_pos]
        res_nodes = [res_leaves[i]._node for i in res_pos]
        outs = [x._node for x in out_leaves if isinstance(x, Array)]
        call = CustomCall(arg_nodes, res_nodes, vjp_rule, None, what,
                          closed_over(body, arg_nodes, outs + res_nodes))
        result, holder["avals"] = _marked_results(call, out, dev)
        return result


class custom_jvp:
    """A function with a user-defined forward-mode derivative: `f = custom_jvp(fun)`, then
    `f.defjvp(rule)` with `rule(primals, tangents) -> (out, out_tangent)` (primals and tangents are
    tuples of the positional arguments). Reverse mode uses the transpose of the rule. Usable as a
    decorator; `defjvp` also works as one. Keyword arguments are bound to their positions;
    `nondiff_argnums` (as in JAX) names arguments that are not differentiated: the rule takes them
    first, `rule(*nondiff_args, primals, tangents)`, with primals and tangents of the others."""

    @api_boundary               # a mistake names the user's line, as every public call's does
    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise ArgumentError(f"custom_jvp needs a function; got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun, self.rule = fun, None
        self.nondiff_argnums = _as_positions(nondiff_argnums, "custom_jvp")

    def defjvp(self, rule):
        self.rule = rule
        return rule

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "function")
        what = f"custom_jvp function '{name}'"
        if self.rule is None:
            raise PootError(f"custom_jvp function '{name}' has no rule; call .defjvp(rule) first")
        args = _positional(self.fun, args, kwargs, self.nondiff_argnums, what)
        if not transforming():
            return self.fun(*args)
        if not self.nondiff_argnums:
            return self._call(self.fun, self.rule, args, what)
        fixed, diff, merge = _split(args, self.nondiff_argnums, what)
        fun, rule = self.fun, self.rule
        return self._call(lambda *d: fun(*merge(d)), lambda p, t: rule(*fixed, p, t), diff, what)

    def _call(self, fun, rule, args: tuple, what: str):
        """The call traced with its rule (kept for the derivative passes)."""
        with recorded() as body:
            args = _behind_identities(args)
            out = fun(*args)
        arg_leaves, arg_tree = pytree.flatten(tuple(args))
        arg_pos = _array_positions(arg_leaves)
        holder: dict = {}

        def jvp_rule(arg_arrays, tangents):
            primals = _rebuild(arg_leaves, arg_pos, arg_arrays)
            tans = [zeros_like(x) if isinstance(x, Array) else x for x in primals]
            tans = _rebuild(tans, arg_pos, [t if t is not None else zeros_like(a)
                                            for t, a in zip(tangents, arg_arrays)])
            got = rule(pytree.unflatten(arg_tree, primals), pytree.unflatten(arg_tree, tans))
            if not (isinstance(got, tuple) and len(got) == 2):
                raise PootError(f"{what}: the jvp rule must return a pair (output, output tangent)")
            _check_rule_primal(got[0], holder["avals"], dev, what)
            t_leaves = pytree.flatten(got[1])[0]
            if len(t_leaves) != len(holder["avals"]):
                raise PootError(f"{what}: the jvp rule's tangent does not match the output's structure")
            tangent_arrays = [t if isinstance(t, Array) else Array(to_node(t, dev, what)) for t in t_leaves]
            for k, (t, given, aval) in enumerate(zip(tangent_arrays, t_leaves, holder["avals"])):
                _check_rule_tangent(k, t, given, aval, what)
            return tangent_arrays

        def vjp_rule(arg_arrays, res_arrays, cts):
            floats = [i for i, a in enumerate(arg_arrays) if a.dtype.kind == "f"]

            def linear(*ts):
                tangents = [None] * len(arg_arrays)
                for i, t in zip(floats, ts):
                    tangents[i] = t
                return jvp_rule(arg_arrays, tangents)

            traced = trace_flat(linear, [zeros_like(arg_arrays[i]) for i in floats], what)
            _refuse_nonlinear(traced, what)
            pull = vjp_pass(traced, [True] * len(floats))
            back = pull([c if a.dtype.kind == "f" else None for c, a in zip(cts, holder["avals"])])
            return _rebuild([None] * len(arg_arrays), floats, back)

        dev = _device(arg_leaves)
        arg_nodes = [arg_leaves[i]._node for i in arg_pos]
        outs = [x._node for x in pytree.flatten(out)[0] if isinstance(x, Array)]
        call = CustomCall(arg_nodes, [], vjp_rule, jvp_rule, what, closed_over(body, arg_nodes, outs))
        result, holder["avals"] = _marked_results(call, out, dev)
        return result


# Ops linear in every float operand (sums and moves of tangents), and those linear in one operand
# when the others are constants: a rule's tangent may go through these only.
_LINEAR_OPS = frozenset({"add", "sub", "neg", "convert", "select", "reduce_sum", "cumsum"})
_LINEAR_IN_ONE = {"mul": (0, 1), "div": (0,), "matmul": (0, 1)}
_CHECKED_KINDS = frozenset({"elementwise", "reduce", "argreduce", "scan", "contraction"})


def _refuse_nonlinear(traced, what: str) -> None:
    """Reverse mode transposes a custom_jvp rule, which needs the rule's output tangent to be
    linear in the input tangents (JAX refuses a non-linear one when transposing). Without this,
    t**2 or exp(t) would be silently linearized at t = 0. Checked on the elementwise, reduction and
    contraction ops the tangents reach; moves, gathers and bodies are linear or checked where built."""
    from poot.graph.registry import get

    reached = {id(p) for p in traced.params}
    for s in traced.eqns:
        hit = [k for k, n in enumerate(s.inputs) if id(n) in reached]
        if not hit:
            continue
        reached.add(id(s.node))
        if get(s.op).kind not in _CHECKED_KINDS or s.op in _LINEAR_OPS and (s.op != "select" or 0 not in hit):
            continue
        allowed = _LINEAR_IN_ONE.get(s.op, ())
        if len(hit) == 1 and hit[0] in allowed:
            continue
        raise NotBuiltError(f"{what}: reverse mode transposes the jvp rule, so its output tangent must be "
                            f"linear in the input tangents; here they go through '{s.op}' (recorded at "
                            f"{lazy.format_where(s.node.where)}), which is not linear in them. Write the "
                            f"tangent as a linear function of the tangents (cos(x) * t, not t ** 2)")


def _check_rule_primal(primal, avals, dev: str, what: str) -> None:
    """The primal output of a custom_jvp rule must be typed as the function's output (JAX checks
    this): the rule's primal is a second computation of the same value, and one of another shape
    or dtype means the rule is not the derivative of this function."""
    leaves = pytree.flatten(primal)[0]
    if len(leaves) != len(avals):
        raise PootError(f"{what}: the jvp rule's primal output has {len(leaves)} leaves; the function's "
                        f"output has {len(avals)}")
    for k, (given, aval) in enumerate(zip(leaves, avals)):
        p = given if isinstance(given, Array) else Array(to_node(given, dev, what))
        wrong_dtype = p.dtype is not aval.dtype and not is_weak(given)
        if p.shape != aval.shape or wrong_dtype:
            error = ShapeError if p.shape != aval.shape else DTypeError
            raise error(f"{what}: the jvp rule's primal output {k} is {p.dtype.name}{list(p.shape)}; "
                        f"the function's output is {aval.dtype.name}{list(aval.shape)}: a custom "
                        f"JVP rule must return the function's own output as its primal")


def _check_rule_tangent(k: int, t: Array, given, aval, what: str) -> None:
    """A custom_jvp rule's output tangent has the output's shape and, for a float output, its
    dtype (JAX checks both): a float32 tangent of a float64 output is a mistake in the rule."""
    if t.shape != aval.shape:
        raise ShapeError(f"{what}: the jvp rule's output tangent {k} has shape {t.shape}; "
                         f"the output has shape {aval.shape}")
    if aval.dtype.kind == "f" and t.dtype is not aval.dtype and not is_weak(given):
        raise DTypeError(f"{what}: the jvp rule's output tangent {k} is {t.dtype.name}; the output is "
                         f"{aval.dtype.name}: return a tangent of the output's dtype")


@api_boundary
def checkpoint(fun, **options):
    """`fun` whose reverse-mode derivative records `fun` again from its arguments instead of
    reusing the forward pass's values (rematerialization, JAX's jax.checkpoint / remat). Inside a
    pt.cond / loop / pt.scan body being differentiated (where a custom rule cannot be carried, see
    tracing.mark) it runs as `fun` itself: the same values and derivatives, without rematerializing."""
    if not callable(fun):
        raise ArgumentError(f"checkpoint needs a function; got {type(fun).__name__}")
    # JAX's options that change what is saved, not the values: policy (poot saves nothing inside
    # fun, the most any policy recomputes), prevent_cse, static_argnums (Python values are constants
    # of the recording anyway); code written for JAX that passes them runs
    unknown = sorted(set(options) - {"policy", "prevent_cse", "static_argnums"})
    if unknown:
        raise ArgumentError(f"checkpoint: options {unknown} are not supported")

    @functools.wraps(fun)
    @api_boundary
    def wrapped(*args, **kwargs):
        if not transforming() or not can_mark():
            return fun(*args, **kwargs)
        what = f"checkpoint of '{getattr(fun, '__name__', 'function')}'"
        with recorded() as body:
            args = _behind_identities(args)
            out = fun(*args, **kwargs)
        arg_leaves, arg_tree = pytree.flatten(tuple(args))
        arg_pos = _array_positions(arg_leaves)

        def flat_fun(*arrays):
            values = pytree.unflatten(arg_tree, _rebuild(arg_leaves, arg_pos, arrays))
            return pytree.flatten(fun(*values, **kwargs))[0]

        arg_nodes = [arg_leaves[i]._node for i in arg_pos]
        outs = [x._node for x in pytree.flatten(out)[0] if isinstance(x, Array)]
        # values `fun` closes over are differentiated too: the rules take them as extra arguments
        closed = closed_over(body, arg_nodes, outs)
        k = len(arg_nodes)

        def vjp_rule(arg_arrays, res_arrays, cts):
            diff = [a.dtype.kind == "f" for a in arg_arrays[:k]]
            _, pull = vjp_flat(flat_fun, list(arg_arrays[:k]), what, diff, closed=closed)
            return pull(cts)

        def jvp_rule(arg_arrays, tangents):
            return jvp_flat(flat_fun, list(arg_arrays[:k]), list(tangents[:k]), what, closed=closed,
                            closed_tangents=list(tangents[k:]))[1]

        call = CustomCall(arg_nodes + closed, [], vjp_rule, jvp_rule, what)
        return _marked_results(call, out, _device(arg_leaves))[0]

    return wrapped


remat = checkpoint
