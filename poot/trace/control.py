"""`pt.cond`, `pt.fori_loop` and `pt.while_loop`: control flow that depends on array values.

Each traces its functions once into subgraphs (poot.graph.control) and records one construct; the
program runs it on the device as a loop (or a branch) in the program, never unrolled. They work the
same inside @poot.jit and outside it (eagerly, the bodies are still traced once and compiled, which
makes an eager loop of many small steps fast). Operands and carries are pytrees of arrays; a Python
scalar in them is weakly typed, as in the rest of poot.
"""
from __future__ import annotations

import inspect
import operator

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, DTypeError, PootError, ShapeError, api_boundary
from poot.graph import Aval, Graph, Region, Var
from poot.jit.runtime.execute import buffer_to_numpy, execute_keyed
from poot.trace import context as _dev
from poot.trace import counters as _counters
from poot.trace import lazy, pytree
from poot.trace.array import Array
from poot.trace.closed_over import reachable_arrays, refuse_writes
from poot.trace.promote import _WEAK_SAMPLE, cast, is_weak
from poot.trace.walk import Walk

__all__ = ["cond", "fori_loop", "while_loop"]


def _leaf_node(x, device: str, what: str) -> lazy.Node:
    """A pytree leaf as a Node: an Array's own, host data transferred, a Python scalar weak."""
    if isinstance(x, Array):
        return x._node
    if is_weak(x):
        n = lazy.from_numpy(np.asarray(x, dtype=dt.scalar_dtype(x).np), device)
        n.weak = 1
        return n
    if isinstance(x, (np.ndarray, np.generic)):
        return lazy.from_numpy(np.asarray(x), device)
    raise PootError(f"{what}: a {type(x).__name__} is not an array; operands and carries must be "
                    f"pytrees (tuples, lists, dicts, NamedTuples, dataclasses) of arrays or scalars")


def _refuse_callable(fn, what: str, role: str, where) -> None:
    """An ArgumentError naming `role` for a branch or body that is not a function: said here, rather
    than as a bare TypeError from deep inside the trace."""
    if not callable(fn):
        raise ArgumentError(f"{what} at {lazy.format_where(where)}: {role} must be a function; got "
                            f"{type(fn).__name__} {fn!r:.60}")


def _refuse_arity(fn, n: int, what: str, role: str) -> None:
    """After a TypeError from calling `fn` with `n` arguments: an ArgumentError naming `role` if
    `fn` cannot take `n` positional arguments at all (else the TypeError came from inside it)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):     # a builtin without a signature: its TypeError says enough
        return
    try:
        sig.bind(*range(n))
    except TypeError:
        takes = {"body_fun": "(i, val)" if what == "fori_loop" else "(val)", "cond_fun": "(val)"}
        form = takes.get(role, f"{n} operand(s)")
        raise ArgumentError(f"{what}: {role} {getattr(fn, '__name__', 'function')}{sig} cannot be called "
                            f"with {n} argument(s); it must take {form}") from None


def _placeholders(nodes, where) -> list[lazy.Node]:
    out = []
    for n in nodes:
        p = lazy.placeholder(n.aval, n.device, where)
        p.weak = 1 if n.weak else 0
        out.append(p)
    return out


class _Traced:
    """One traced function: its graph (inputs: the parameters, then the captured outer values),
    the outer nodes it captured, and its output structure and nodes."""

    def __init__(self, fn, params: list[lazy.Node], rebuild, what: str, device: str, role: str | None = None):
        reached = reachable_arrays(fn)
        args = rebuild([Array(p) for p in params])
        try:
            with lazy.scope() as inside:
                result = fn(*args)
        except BaseException as e:
            refuse_writes(reached, what, failed=True)
            if isinstance(e, TypeError) and not isinstance(e, PootError) and role:
                _refuse_arity(fn, len(args), what, role)
            raise
        refuse_writes(reached, what)
        leaves, self.treedef = pytree.flatten(result)
        self.outs = [_leaf_node(x, device, what) for x in leaves]
        self.params, self.inside, self.what = params, inside, what

    def fit(self, avals: list[Aval], names: list[str], where_text: str) -> None:
        """Make each output have `avals[i]` (weak outputs are cast to it), or explain why not."""
        for i, (n, want) in enumerate(zip(self.outs, avals)):
            if n.aval == want:
                continue
            if n.weak and n.aval.shape == want.shape:
                check_fits(n, want.dtype, f"{self.what} at {where_text}: {names[i] or 'the result'}")
                self.cast_out(i, want.dtype)
                continue
            # same shape, other dtype: usually NumPy promotion (f32 carry + np.float64 or pt.sqrt(i))
            hint = (f"; convert it back where it is computed (.astype(pt.{want.dtype.name}))"
                    if n.aval.shape == want.shape else "")
            raise ShapeError(f"{self.what} at {where_text}: {names[i] or 'the result'} is {n.aval} but "
                             f"must be {want} (the same shape and dtype every time){hint}")

    def cast_out(self, i: int, dtype: dt.DType) -> None:
        """Convert output `i` to `dtype` inside the traced body: a conversion recorded outside it
        would become a captured outer value computed from the body's placeholders."""
        with lazy.scope() as extra:
            self.outs[i] = cast(self.outs[i], dtype)
        self.inside |= extra

    def graph(self) -> tuple[Graph, list[lazy.Node]]:
        graph, leaves = lazy.build_graph(self.outs, self.inside)
        var_of = {id(leaf): v for leaf, v in zip(leaves, graph.inputs)}
        params = [var_of.get(id(p)) or Var(p.aval) for p in self.params]
        mine = {id(p) for p in self.params}
        captured = [(leaf, v) for leaf, v in zip(leaves, graph.inputs) if id(leaf) not in mine]
        return (Graph(params + [v for _, v in captured], graph.eqns, graph.outputs),
                [leaf for leaf, _ in captured])


def _with_inputs(graph: Graph, captured: list[lazy.Node], all_captured: list[lazy.Node],
                 n_params: int) -> Graph:
    """`graph` taking the union of captured values (`all_captured`) after its parameters."""
    own = {id(c): v for c, v in zip(captured, graph.inputs[n_params:])}
    extra = [own.get(id(c)) or Var(c.aval) for c in all_captured]
    return Graph(graph.inputs[:n_params] + extra, graph.eqns, graph.outputs)


def _union(*lists) -> list[lazy.Node]:
    seen, out = set(), []
    for lst in lists:
        for n in lst:
            if id(n) not in seen:
                seen.add(id(n))
                out.append(n)
    return out


def _construct(region: Region, operands: list[lazy.Node], treedef, device: str):
    outs = [lazy.record(region.kind, tuple(operands), {"region": region, "index": i}, device)
            for i in range(len(region.out_avals))]
    return pytree.unflatten(treedef, [Array(n) for n in outs])


def _carry(init, what: str, device: str | None = None):
    """The carry's leaves as Nodes on `device` (default: its first Array's, else the current one)."""
    leaves, treedef = pytree.flatten(init)
    dev = device or _device_of(leaves)
    nodes = [_leaf_node(x, dev, what) for x in leaves]
    return nodes, treedef, dev, pytree.paths(treedef, "carry")


def _device_of(leaves) -> str:
    for x in leaves:
        if isinstance(x, Array):
            return x.device
    return _dev.current()


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _weak_wider(a: Aval, b: Aval) -> bool:
    """Whether weak value `b` is of a wider kind than weak value `a` (int -> float -> complex): a
    Python scalar carry of 0 meeting `c + 0.5` becomes a float, as two Python scalars would."""
    return _KIND_RANK[b.dtype.kind] > _KIND_RANK[a.dtype.kind]


def _joined(a: lazy.Node, b: lazy.Node) -> Aval:
    """The result aval of a cond whose branches give `a` and `b`. A weak (Python scalar) result and
    a strong one of its shape promote as `pt.where(pred, a, b)` does, by NumPy's rule: `1.5` against
    an int32 array is float64, `2 + 1j` against a float32 one complex64, never truncated into the
    strong dtype. Two weak results take the wider kind (`1` or `0.5` is a float). Otherwise the true
    branch's aval, which `fit` then holds the other branch to."""
    if a.aval == b.aval or a.aval.shape != b.aval.shape or not (a.weak or b.weak):
        return a.aval
    if a.weak and b.weak:
        return b.aval if _weak_wider(a.aval, b.aval) else a.aval
    weak, strong = (a, b) if a.weak else (b, a)
    return Aval(strong.aval.shape, dt.promote_with_scalar(strong.aval.dtype, _WEAK_SAMPLE[weak.aval.dtype.kind]))


def _retype(n: lazy.Node, o: lazy.Node) -> bool:
    """Whether weak carry `n` takes the dtype of the body's result `o`: a strong result of its shape
    gives it its dtype; a weak result, only a wider kind (a weak float result never truncates)."""
    if not n.weak or n.aval.shape != o.aval.shape or n.aval == o.aval:
        return False
    return not o.weak or _weak_wider(n.aval, o.aval)


def check_fits(n: lazy.Node, dtype: dt.DType, what: str) -> None:
    """A weak Python int literal (a carry's init, a branch's or body's result) converted to integer
    `dtype` must fit it, as NumPy 2 refuses `uint8_array + 300`: ScalarOverflowError, not a value
    wrapped to 44. A traced weak value is noted for the jitted call to check its scalar arguments."""
    if dtype.kind not in "iu" or n.aval.dtype.kind not in "iu" or not n.weak:
        return
    if n.op is None and n.buf is not None and n.aval.shape == ():
        lazy.check_scalar_fits(int(buffer_to_numpy(n.buf, n.aval).reshape(()).item()), dtype, what)
    elif n.weak == 1:       # computed from a jitted function's Python int arguments: checked per call
        lazy.note_weak_cast(dtype, n)


def check_retype(n: lazy.Node, o: lazy.Node, what: str, where_text: str, name: str) -> None:
    """Refuse retyping weak carry `n` to the dtype of the body's result `o` where that loses what
    the carry holds: a Python float carry whose body returns an integer array would come back
    truncated after zero trips (0.5 -> 0), and JAX refuses the mismatch (TypeError) too; a Python
    int that does not fit the result's integer dtype (300 for uint8) is refused as NumPy 2 does."""
    have, want = n.aval.dtype, o.aval.dtype
    if _KIND_RANK[want.kind] < _KIND_RANK[have.kind]:
        raise DTypeError(f"{what} at {where_text}: {name or 'the carry'} starts as a Python "
                         f"{_KIND_NAME[have.kind]} but the body returns it as {o.aval}; the carry must keep "
                         f"its kind: start it as {_KIND_EXAMPLE[want.kind]}, or convert the body's "
                         f"result (.astype(pt.{have.name}))")
    check_fits(n, want, f"{what} at {where_text}: {name or 'the carry'}")


_KIND_NAME = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
_KIND_EXAMPLE = {"b": "a bool", "i": "an int (0, not 0.0)", "u": "an int (0, not 0.0)",
                 "f": "a float (0.0, not 0j)"}


def _trace_loop_body(body, first: list[lazy.Node], nodes, treedef, what, dev, where, names):
    """Trace `body` over the carry; a weak (Python scalar) carry whose body result has another
    dtype is re-typed to the result's dtype and traced again (`acc = 0.0; acc + x_f32.sum()`,
    `acc = 0; acc + 0.5`). A carry keeps its weakness when the result is weak too, so it still
    takes the dtype of the arrays it meets. Each retrace widens a carry's kind or gives it a strong
    result's dtype, so a few suffice; after them, the body's results are fitted to the carry."""
    for attempt in range(len(nodes) + 2):
        params = first + _placeholders(nodes, where)
        t = _Traced(body, params, lambda xs: _unpack(xs, len(first), treedef), what, dev, "body_fun")
        if t.treedef != treedef:
            raise ShapeError(f"{what} at {lazy.format_where(where)}: the body returns a different "
                             f"structure than the carry it was given: {structure(t.treedef)} for the "
                             f"carry {structure(treedef)}")
        retype = [i for i, (n, o) in enumerate(zip(nodes, t.outs)) if _retype(n, o)]
        if not retype or attempt > len(nodes):
            t.fit([n.aval for n in nodes], names, lazy.format_where(where))
            return t, nodes
        nodes = list(nodes)
        for i in retype:
            check_retype(nodes[i], t.outs[i], what, lazy.format_where(where), names[i])
            still_weak = t.outs[i].weak
            nodes[i] = cast(nodes[i], t.outs[i].aval.dtype)
            if still_weak:
                nodes[i].weak = 1


class _Leaf:
    def __repr__(self) -> str:
        return "*"


def structure(treedef) -> str:
    """A pytree structure as Python prints it, each array leaf a `*`: `(*, {'a': *, 'b': [*, *]})`;
    what a structure mismatch shows the user of each side."""
    n = len(pytree.paths(treedef))
    try:
        tree = pytree.unflatten(treedef, [_Leaf()] * n)
    except Exception:       # a registered node whose constructor checks its children
        return str(treedef)
    text = repr(tree)
    # a registered class without a __repr__ of its own: its name and leaf count say more
    return f"{type(tree).__name__} of {n} leaves" if type(tree).__repr__ is object.__repr__ else text


def _unpack(arrays, n_first: int, treedef):
    return list(arrays[:n_first]) + [pytree.unflatten(treedef, arrays[n_first:])]


@api_boundary
def fori_loop(lower, upper, body_fun, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`; returns the final `val`.

    The body is traced once. With Python int bounds the program runs it `upper - lower` times on the
    device; with array bounds this is a `while_loop` over `(i, val)`. `i` is an int64 scalar that
    promotes like a Python int."""
    where = lazy.caller_where()
    _refuse_callable(body_fun, "fori_loop", "body_fun", where)
    if isinstance(lower, Array) or isinstance(upper, Array):
        for name, b in (("lower", lower), ("upper", upper)):
            if isinstance(b, Array):
                _array_bound(b, name, where)
            else:
                _bound(b, name, where)
        known = [_concrete_bound(b) if isinstance(b, Array) else b for b in (lower, upper)]
        if None not in known:
            lower, upper = known
    if isinstance(lower, Array) or isinstance(upper, Array):

        def cond_fun(c):
            return c[0] < c[1]

        def step(c):
            try:
                return (c[0] + 1, c[1], body_fun(c[0], c[2]))
            except TypeError as e:
                if not isinstance(e, PootError):
                    _refuse_arity(body_fun, 2, "fori_loop", "body_fun")
                raise

        return while_loop(cond_fun, step, (lower, upper, init_val))[2]
    lower, upper = _bound(lower, "lower", where), _bound(upper, "upper", where)
    nodes, treedef, dev, names = _carry(init_val, "fori_loop")
    index = lazy.placeholder(Aval((), dt.int64), dev, where)
    index.weak = 1
    t, nodes = _trace_loop_body(body_fun, [index], nodes, treedef, "fori_loop", dev, where, names)
    graph, captured = t.graph()
    region = Region("fori", (graph,), tuple(n.aval for n in nodes), lower, max(lower, upper))
    return _construct(region, nodes + captured, treedef, dev)


def _bound(value, name: str, where) -> int:
    """A Python (or NumPy) integer loop bound; a float is refused, as `range` refuses it, rather
    than truncated."""
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentError(f"fori_loop at {lazy.format_where(where)}: {name} must be an integer (a Python "
                            f"int or an integer array); got {type(value).__name__} {value!r}") from None


def _concrete_bound(b: Array) -> int | None:
    """The value of array bound `b` where it is known without a trace, as JAX reads a concrete bound
    (`int(upper)`): a realized array, or one computed from realized arrays alone (run here as a
    separate program, so that it works inside a pt.grad trace too, which computes nothing). The loop
    then has a trip count, and reverse mode differentiates it. None where `b` depends on a traced
    value (an argument of a jitted or vmapped function, a loop variable), and while a jitted function
    is traced: the arrays it closes over are inputs of its program, read again on each call."""
    if lazy._state.weak_casts is not None:
        return None
    n = b._node
    buf = n.buf
    if buf is None:
        w = Walk([n])
        if any(leaf.buf is None for leaf in w.leaves):
            return None
        _counters.counts.programs += 1
        buf = execute_keyed(w.key, w.graph, [leaf.buf for leaf in w.leaves], _dev.executor(n.device))[0]
    _counters.counts.host_reads += 1
    return int(buffer_to_numpy(buf, n.aval).reshape(()).item())


def _array_bound(value: Array, name: str, where) -> None:
    """An array loop bound is an integer scalar, as a Python one must be: a float one would run
    ceil(upper - lower) turns without a word."""
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise ArgumentError(f"fori_loop at {lazy.format_where(where)}: {name} must be an integer (a Python "
                            f"int or an integer scalar array); got an array {value.aval}")


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """`while cond_fun(val): val = body_fun(val)`; returns the final `val`. Both functions are
    traced once; the program evaluates the condition on the device and reads it back each turn.
    `cond_fun` returns a bool (or integer, nonzero going on) scalar; a float one is refused."""
    where = lazy.caller_where()
    _refuse_callable(cond_fun, "while_loop", "cond_fun", where)
    _refuse_callable(body_fun, "while_loop", "body_fun", where)
    nodes, treedef, dev, names = _carry(init_val, "while_loop")
    t, nodes = _trace_loop_body(body_fun, [], nodes, treedef, "while_loop", dev, where, names)
    c = _Traced(cond_fun, _placeholders(nodes, where), lambda xs: [pytree.unflatten(treedef, xs)],
                "while_loop", dev, "cond_fun")
    if len(c.outs) != 1 or c.outs[0].aval.shape != ():
        raise ShapeError(f"while_loop at {lazy.format_where(where)}: cond_fun must return one scalar; "
                         f"it returned {', '.join(str(n.aval) for n in c.outs) or 'nothing'}")
    if c.outs[0].aval.dtype.kind in "fc":   # an integer counts down as Python's `while n:` does; a
        # float one (`lambda c: c[0] - 3.0`) would loop until rounding made it exactly 0 (JAX refuses both)
        raise DTypeError(f"while_loop at {lazy.format_where(where)}: cond_fun must return a boolean "
                         f"(or integer) scalar; it returned {c.outs[0].aval}: compare the value "
                         f"(err > tol, x < stop) to say when the loop goes on")
    c.cast_out(0, dt.bool_)
    body_g, body_cap = t.graph()
    cond_g, cond_cap = c.graph()
    captured = _union(cond_cap, body_cap)
    n = len(nodes)
    region = Region("while", (_with_inputs(cond_g, cond_cap, captured, n),
                              _with_inputs(body_g, body_cap, captured, n)), tuple(x.aval for x in nodes))
    return _construct(region, nodes + captured, treedef, dev)


@api_boundary
def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands) if pred else false_fun(*operands)`, with `pred` a scalar array (a Python
    bool simply calls one branch). Both branches are traced and must return the same structure of
    the same shapes and dtypes; the program runs only the chosen one."""
    return branch(pred, true_fun, false_fun, operands, "cond")


def branch(pred, true_fun, false_fun, operands, what: str):
    """`cond` for a caller that gives its own name (`what`) to the errors it raises: `lax.switch`
    is a tree of these, and its user wrote no `cond`."""
    where = lazy.caller_where()
    _refuse_callable(true_fun, what, "true_fun", where)
    _refuse_callable(false_fun, what, "false_fun", where)
    if not isinstance(pred, Array):
        if isinstance(pred, np.ndarray) and pred.ndim:
            raise ShapeError(f"{what} at {lazy.format_where(where)}: pred must be a scalar; it is an "
                             f"array of shape {pred.shape}")
        return (true_fun if bool(pred) else false_fun)(*operands)
    if pred.shape != ():
        raise ShapeError(f"{what} at {lazy.format_where(where)}: pred must be a scalar; it is {pred.aval}")
    dev = pred.device
    leaves, treedef = pytree.flatten(list(operands))
    nodes = [_leaf_node(x, dev, what) for x in leaves]
    rebuild = lambda xs: pytree.unflatten(treedef, xs)  # noqa: E731
    branches = [_Traced(fn, _placeholders(nodes, where), rebuild, what, dev, role)
                for fn, role in ((false_fun, "false_fun"), (true_fun, "true_fun"))]
    f, t = branches
    if f.treedef != t.treedef:
        one, other = ("true_fun", "false_fun") if what == "cond" else ("one", "another")
        raise ShapeError(f"{what} at {lazy.format_where(where)}: the branches return different "
                         f"structures: {one} returns {structure(t.treedef)}, {other} {structure(f.treedef)}")
    names = pytree.paths(t.treedef, "result")
    avals = [_joined(a, b) for a, b in zip(t.outs, f.outs)]
    for br in branches:
        for i, (n, want) in enumerate(zip(br.outs, avals)):    # a strong result a weak one promoted
            if not n.weak and n.aval.shape == want.shape and n.aval.dtype != want.dtype and \
                    (t.outs[i].weak or f.outs[i].weak):
                br.cast_out(i, want.dtype)
        br.fit(avals, names, lazy.format_where(where))
    graphs = [br.graph() for br in branches]
    captured = _union(*(cap for _, cap in graphs))
    region = Region("cond", tuple(_with_inputs(g, cap, captured, len(nodes)) for g, cap in graphs),
                    tuple(avals))
    p = cast(pred._node, dt.bool_)
    return _construct(region, [p] + nodes + captured, t.treedef, dev)
