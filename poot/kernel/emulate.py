"""`kernel.emulate(...)`: the same Python body run over the grid on NumPy arrays, as the executable
spec of what every compiled target must compute.

How: the importer records, per AST node, what it made of the node (the dtype of each local, the trap
code of each buffer access, which call is which intrinsic...). The emulator rewrites a copy of the same
function with that knowledge: every resolved intrinsic becomes its NumPy implementation
(emulate_ops.py), each assignment to a local converts to the local's KIR dtype, loads and stores are
bounds-checked with the importer's trap codes, `//`, `%`, `<<`, `>>` follow KIR, and
`pt.workgroup_barrier()` becomes a `yield`. The threads of one workgroup then run as generators that
advance together from barrier to barrier; without barriers each thread simply runs to its end.
Arithmetic is on NumPy scalars of the exact dtypes, so integers wrap as in KIR.

Traps: a trapping thread stops; the others run on; when the grid is done poot.KernelTrap is raised
for the first trap (in thread order), like the next synchronize does on a device.
"""
from __future__ import annotations

import ast
import inspect
import itertools
import sys

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentError, ArgumentValueError, DTypeError, KernelTrap, PootError
from poot.jit.kir.model import TRAP_BOUNDS, BufferParam
from poot.kernel import emulate_ops as emu
from poot.kernel import async_copy, subgroup
from poot.kernel.importer import ImportedKernel, Scope
from poot.kernel.values import fits


class _Rewriter(ast.NodeTransformer):
    def __init__(self, program: "EmulatedKernel", scope: Scope):
        self.p, self.scope = program, scope
        self.tmp = 0

    def ann(self, node) -> dict:
        return self.scope.ann.get(id(node), {})

    def slot(self, obj) -> ast.Name:
        return ast.Name(id=self.p.slot(obj), ctx=ast.Load())

    def call(self, impl, args) -> ast.Call:
        return ast.Call(func=self.slot(impl), args=list(args), keywords=[])

    def calls_device_fn(self, node) -> bool:
        """Whether `node` calls a device function: folded to a constant, it still runs for its effects."""
        return any("devfn" in self.ann(n) for n in ast.walk(node))

    def temp(self) -> str:
        self.tmp += 1
        return f"__poot_tmp{self.tmp}"

    # -- expressions ----------------------------------------------------------------------------
    def visit(self, node):
        """The rewrite of `node`, its new nodes placed at its line: a trap or race the emulator reports
        names the source line (fix_missing_locations would give them the enclosing def's)."""
        out = self._rewrite(node)
        for n in out if isinstance(out, list) else [out]:
            if isinstance(n, (ast.expr, ast.stmt)) and getattr(n, "lineno", None) is None and hasattr(node, "lineno"):
                ast.copy_location(n, node)
        return out

    def _rewrite(self, node):
        a = self.ann(node)
        if "const" in a and isinstance(node, ast.expr):
            value = self.constant(a)
            if not self.calls_device_fn(node):
                return value
            return self.call(emu.effect_then, [super().visit(node), value])
        if "value" in a:
            return self.slot(a["value"][0])
        return super().visit(node)

    def constant(self, a: dict) -> ast.expr:
        """A folded constant: a Python number, or the NumPy scalar of the dtype it took where Python's
        number would compute differently (bf16: expressions.note_literal)."""
        typed = a.get("literal", (None,))[0]
        return self.slot(typed) if typed is not None else ast.Constant(value=a["const"][0])

    def visit_BinOp(self, node):
        a = self.ann(node)
        left, right = self.visit(node.left), self.visit(node.right)
        if "binop" in a:
            fn, t = a["binop"]
            return self.call(emu.binop, [left, right, self.slot(fn), self.slot(t)])
        return ast.BinOp(left=left, op=node.op, right=right)

    def visit_Subscript(self, node):
        a = self.ann(node)
        if "load" in a and isinstance(node.ctx, ast.Load):
            return self.call(emu.load, [self.visit(node.value), self.visit(node.slice),
                                        ast.Constant(value=a["load"][0])])
        return self.generic_visit(node)

    def visit_Call(self, node):
        a = self.ann(node)
        if "call" in a:
            impl, keep, extras = a["call"]
            return self.call(impl, [self.visit(node.args[i]) for i in keep] + [self.slot(x) for x in extras])
        if "shared" in a:
            return self.call(emu.shared, [ast.Constant(value=a["shared"][0])])
        if "subgroup" in a:                     # a request the scheduler answers for the whole subgroup
            kind, keep, extras = a["subgroup"]
            args = [self.visit(node.args[i]) for i in keep]
            if "span" in a:                     # a 16-byte access: the lane checks its index before the request
                b, i, code = a["span"]
                args[i] = self.call(async_copy.span, [args[b], args[i], ast.Constant(value=code)])
            items = [ast.Constant(value=kind)] + args + [self.slot(x) for x in extras]
            return ast.Yield(value=ast.Tuple(elts=items, ctx=ast.Load()))
        if "devfn" in a:
            callee = a["devfn"][0]
            out = ast.Call(func=ast.Name(id=self.p.function_name(callee), ctx=ast.Load()),
                           args=[self.visit(x) for x in node.args], keywords=[])
            return ast.YieldFrom(value=out) if callee.has_barrier else out
        return self.generic_visit(node)

    # -- statements -----------------------------------------------------------------------------
    def local(self, target, value):
        a = self.ann(target)
        if "local" in a:
            value = self.call(emu.as_local, [value, self.slot(a["local"][0])])
        return ast.Assign(targets=[ast.Name(id=target.id, ctx=ast.Store())], value=value)

    def assign_one(self, target, value):
        if isinstance(target, ast.Name):
            return [self.local(target, value)]
        a = self.ann(target)
        code = a["store"][0] if "store" in a else None
        return [ast.Expr(value=self.call(emu.store, [self.visit(target.value), self.visit(target.slice), value,
                                                     ast.Constant(value=code)]))]

    def visit_Assign(self, node):
        if len(node.targets) == 1 and not isinstance(node.targets[0], ast.Tuple):
            return self.assign_one(node.targets[0], self.visit(node.value))
        # d0, ..., d3 = pt.mma_m16n8k16(...) / pt.ldmatrix_x4(...) (requests) or pt.load_x4(...) (a call)
        if len(node.targets) == 1 and {"subgroup", "call"} & self.ann(node.value).keys():
            name = self.temp()
            out = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=self.visit(node.value))]
            for i, t in enumerate(node.targets[0].elts):
                out += self.assign_one(t, ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()),
                                                        slice=ast.Constant(value=i), ctx=ast.Load()))
            return out
        out, pairs = [], []
        if len(node.targets) == 1:
            for t, v in zip(node.targets[0].elts, node.value.elts):
                name = self.temp()
                out.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=self.visit(v)))
                pairs.append((t, name))
        else:
            name = self.temp()
            out.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=self.visit(node.value)))
            pairs = [(t, name) for t in node.targets]
        for t, name in pairs:
            out += self.assign_one(t, ast.Name(id=name, ctx=ast.Load()))
        return out

    def op(self, node, left, right):
        a = self.ann(node)
        if "binop" in a:
            fn, t = a["binop"]
            return self.call(emu.binop, [left, right, self.slot(fn), self.slot(t)])
        return ast.BinOp(left=left, op=node.op, right=right)

    def visit_AugAssign(self, node):
        t = node.target
        if isinstance(t, ast.Name):
            new = self.op(node, ast.Name(id=t.id, ctx=ast.Load()), self.visit(node.value))
            return self.local(t, new)
        code = self.ann(t).get("augstore", (None,))[0]
        idx = self.temp()
        buf = self.visit(t.value)
        old = self.call(emu.load, [buf, ast.Name(id=idx, ctx=ast.Load()), ast.Constant(value=code)])
        new = self.op(node, old, self.visit(node.value))
        return [ast.Assign(targets=[ast.Name(id=idx, ctx=ast.Store())], value=self.visit(t.slice)),
                ast.Expr(value=self.call(emu.store, [self.visit(t.value), ast.Name(id=idx, ctx=ast.Load()), new,
                                                     ast.Constant(value=code)]))]

    def visit_AnnAssign(self, node):
        a = self.ann(node)
        if node.value is None:
            return ast.Pass()
        value = self.call(emu.as_local, [self.visit(node.value), self.slot(a["declare"][0])])
        return ast.Assign(targets=[ast.Name(id=node.target.id, ctx=ast.Store())], value=value)

    def visit_Expr(self, node):
        if "barrier" in self.ann(node):
            return ast.Expr(value=ast.Yield(value=None))
        return self.generic_visit(node)

    def visit_Assert(self, node):
        if "assert" not in self.ann(node):      # dead code the importer never reached
            return node
        code = self.ann(node)["assert"][0]
        return ast.Expr(value=self.call(emu.trap_unless, [self.visit(node.test), ast.Constant(value=code)]))

    def visit_For(self, node):
        a = self.ann(node)
        if "for" not in a:                      # dead code the importer never reached
            return node
        args = [self.visit(x) for x in node.iter.args]
        node.iter = self.call(emu.for_range, [self.slot(a["for"][0])] + args)
        node.body = self._stmts(node.body)
        return node

    def _stmts(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out or [ast.Pass()]

    def visit_Return(self, node):
        a = self.ann(node)
        if node.value is None:
            return node
        value = self.visit(node.value)
        if "ret" in a:
            value = self.call(emu.as_local, [value, self.slot(a["ret"][0])])
        return ast.Return(value=value)

    def function(self, name: str) -> ast.FunctionDef:
        tree = self.scope.tree
        body = self._stmts(tree.body)
        entry = []
        for p, d in self.scope.param_dtypes.items():
            if d is not None:
                entry.append(ast.Assign(targets=[ast.Name(id=p, ctx=ast.Store())],
                                        value=self.call(emu.as_local, [ast.Name(id=p, ctx=ast.Load()),
                                                                       self.slot(d)])))
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=a.arg) for a in tree.args.args], kwonlyargs=[],
                             kw_defaults=[], defaults=[])
        fn = ast.FunctionDef(name=name, args=args, body=entry + body, decorator_list=[], returns=None)
        if sys.version_info >= (3, 12):
            fn.type_params = []
        ast.copy_location(fn, tree)
        return fn


class EmulatedKernel:
    """The emulation program of one imported kernel."""

    def __init__(self, imported: ImportedKernel):
        self.imported, self.kernel = imported, imported.kernel
        self.namespace: dict = {"__builtins__": {}}
        self._slots: dict[int, str] = {}
        self._names: dict[int, str] = {}
        defs = []
        for scope in [imported.scope] + list(imported.instances):
            defs.append(_Rewriter(self, scope).function(self.function_name(scope)))
        module = ast.fix_missing_locations(ast.Module(body=defs, type_ignores=[]))
        exec(compile(module, imported.scope.info.file, "exec"), self.namespace)
        self.entry = self.namespace[self.function_name(imported.scope)]
        self.is_generator = inspect.isgeneratorfunction(self.entry)

    def slot(self, obj) -> str:
        key = id(obj)
        name = self._slots.get(key)
        if name is None:
            name = self._slots[key] = f"__poot_obj{len(self._slots)}"
            self.namespace[name] = obj
        return name

    def function_name(self, scope: Scope) -> str:
        return f"__poot_kernel_{scope.inst}" if scope.device else f"__poot_kernel_{self.kernel.name}"

    # -- running --------------------------------------------------------------------------------
    def prepare(self, args) -> tuple[list, list]:
        """(the values the body runs on, the (argument, copy) pairs to copy back after the run). An array
        sharing memory with an earlier argument is copied, as the devices copy it (arguments.py): no
        parameter sees another one's writes during the run, and the later written parameter wins."""
        params = self.kernel.params
        if len(args) != len(params):
            raise ArgumentError(f"kernel '{self.kernel.name}' takes {len(params)} arguments "
                                f"({', '.join(p.name for p in params)}), got {len(args)}")
        out, views, copy_back = [], [], []
        for p, a in zip(params, args):
            if not isinstance(p, BufferParam):
                out.append(scalar_value(p, a, self.kernel.name))
                continue
            view = buffer_view(p, a, self.kernel.name)
            aliased = any(np.shares_memory(view, v) for v in views)
            views.append(view)
            if aliased:
                own = view.copy()
                if p.access.writable:
                    copy_back.append((view, own))
                else:
                    own.flags.writeable = False
                view = own
            out.append(view)
        return out, copy_back

    def run(self, args, threads, workgroup) -> None:
        values, copy_back = self.prepare(args)
        groups = tuple(-(-t // w) for t, w in zip(threads, workgroup))
        st = emu.STATE
        st.group_size, st.num_groups = tuple(workgroup), groups
        st.shared_decls = dict(self.imported.shared)
        files = {self.function_name(sc): sc.info.display for sc in [self.imported.scope, *self.imported.instances]}
        st.races = emu.Races(self.kernel.name, files) if np.prod(threads) > 1 else None
        if st.races is not None:
            for p, v in zip(self.kernel.params, values):
                if isinstance(p, BufferParam) and p.access.writable:
                    st.races.buffers[id(v)] = emu.Accesses(p.name, "buffer", st.races)
        trap = None
        locals_ = list(itertools.product(range(workgroup[2]), range(workgroup[1]), range(workgroup[0])))
        with np.errstate(all="ignore"):
            for gz, gy, gx in itertools.product(range(groups[2]), range(groups[1]), range(groups[0])):
                st.shared, st.async_copies, st.tracked = {}, {}, {}
                if st.races is not None:
                    st.races.start_group()
                group = (gx, gy, gz)
                coords = [((gx * workgroup[0] + lx, gy * workgroup[1] + ly, gz * workgroup[2] + lz), (lx, ly, lz))
                          for lz, ly, lx in locals_]
                code = self._run_group(values, group, coords) if self.is_generator else \
                    self._run_plain(values, group, coords)
                if code is not None and trap is None:
                    trap = code
            st.races, st.tracked = None, {}
        if trap is not None:
            raise self.trap(trap)
        for view, own in copy_back:
            view[...] = own

    def _run_plain(self, values, group, coords):
        st, first = emu.STATE, None
        st.group = group
        for thread, local in coords:
            st.thread, st.local = thread, local
            try:
                self.entry(*values)
            except emu.TrapSignal as t:
                first = t.code if first is None else first
        return first

    def _run_group(self, values, group, coords):
        """The workgroup's threads as generators, advanced together to each barrier (a bare `yield`) or
        subgroup operation (a yielded request, answered per run of 32 local x indices, 64 for mfma)."""
        st, first = emu.STATE, None
        st.group = group
        live = []
        for thread, local in coords:
            live.append([self.entry(*values), thread, local, None])
        trapped = False
        while live:
            waiting, finished = [], 0
            for g in live:
                st.thread, st.local = g[1], g[2]
                try:
                    g[3] = g[0].send(g[3])
                    waiting.append(g)
                except StopIteration:
                    finished += 1
                except emu.TrapSignal as t:
                    trapped = True
                    first = t.code if first is None else first
            if waiting and finished and not trapped:
                raise PootError(f"kernel '{self.kernel.name}': some threads of workgroup {group} finished while "
                                "others wait at a barrier or subgroup operation (one every thread must reach)")
            if trapped and any(g[3] is not None for g in waiting):
                return first        # a lane trapped: its warp cannot complete a subgroup operation; the grid traps
            if st.races is not None and all(g[3] is None for g in waiting):
                st.races.end_phase()    # every thread at a barrier, or finished
            self._answer(waiting, group)
            live = waiting
        return first

    def _answer(self, waiting, group) -> None:
        kinds = {g[3][0] if g[3] is not None else "barrier" for g in waiting}
        if kinds == {"barrier"} or not waiting:
            return
        if len(kinds) > 1:
            raise PootError(f"kernel '{self.kernel.name}': the threads of workgroup {group} reached different "
                            f"synchronizing operations together ({', '.join(sorted(kinds))})")
        runs: dict = {}
        kind = waiting[0][3][0]
        lanes = subgroup.run_lanes(kind)
        for g in waiting:
            runs.setdefault(g[2][0] // lanes, []).append(g)
        for run in runs.values():
            if len(run) != lanes:
                raise PootError(f"kernel '{self.kernel.name}': a subgroup operation needs all "
                                f"{lanes} lanes of its run, {len(run)} reached it")
            run.sort(key=lambda g: g[2][0])
            for g, r in zip(run, subgroup.answer(kind, [g[3][1:] for g in run])):
                g[3] = r

    def trap(self, code: int) -> KernelTrap:
        for site in self.kernel.traps:
            if site.code == code:
                return KernelTrap(self.kernel.name, code, site.where, site.what)
        what = "buffer index out of range" if code == TRAP_BOUNDS else None
        return KernelTrap(self.kernel.name, code, None, what)


def buffer_view(p: BufferParam, a, kernel: str) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise DTypeError(f"kernel '{kernel}': argument '{p.name}' is a buffer ({p.dtype.name}); pass a NumPy "
                         f"array, got {type(a).__name__}")
    if a.dtype != p.dtype.np:
        raise DTypeError(f"kernel '{kernel}': buffer '{p.name}' is {p.dtype.name}, the array is {a.dtype}; "
                         f"convert it with .astype(...)")
    if p.access.writable:
        if not a.flags.writeable or not a.flags.c_contiguous:
            raise ArgumentValueError(f"kernel '{kernel}': buffer '{p.name}' is written, so its array must be "
                                     "writable and C-contiguous (it is written in place)")   # NumPy's ValueError
        return a.reshape(-1)
    view = np.ascontiguousarray(a).reshape(-1).view()
    view.flags.writeable = False
    return view


def scalar_value(p, a, kernel: str):
    d = p.dtype
    if isinstance(a, np.ndarray) and a.ndim == 0:
        a = a[()]
    if isinstance(a, np.generic):
        a = a.item()
    if not isinstance(a, (bool, int, float)):
        if hasattr(a, "aval"):
            raise array_for_scalar(p, a, kernel)
        raise DTypeError(f"kernel '{kernel}': scalar parameter '{p.name}' ({d.name}) got {type(a).__name__}")
    if dt.is_int(d):
        if isinstance(a, float):
            raise DTypeError(f"kernel '{kernel}': {a!r} is not a {d.name} value for '{p.name}': the parameter is "
                             "an integer; pass an int")
        info = dt.iinfo(d)
        if not info.min <= a <= info.max:
            raise DTypeError(f"kernel '{kernel}': {a!r} is not a {d.name} value for '{p.name}' ({d.name} holds "
                             f"{info.min}..{info.max})")
    if dt.is_bool(d) and not isinstance(a, bool):
        raise DTypeError(f"kernel '{kernel}': '{p.name}' is bool, got {a!r}")
    if dt.is_float(d) and not fits(a, d):
        raise ArgumentError(f"kernel '{kernel}': {a!r} is outside the finite range of {d.name} for '{p.name}' (it "
                            "would round to infinity; pass float('inf') or -float('inf') if that is meant)")
    from poot.kernel.scalar_ops import as_scalar

    return as_scalar(a, d)


def array_for_scalar(p, a, kernel: str) -> PootError:
    """A poot Array given for a scalar parameter (poot/trace/kernel_call.py says more inside @pt.jit,
    where it is most often a Python number the caller passed, traced as every non-static argument)."""
    return DTypeError(f"kernel '{kernel}': scalar parameter '{p.name}' ({p.dtype.name}) got a poot Array; pass a "
                      "Python number (x.item() for a 0-d array), or pass the array to a buffer parameter")
