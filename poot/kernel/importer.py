"""The kernel importer: a Python function (its source, read with `ast`) -> a verified KIR `Kernel`.

Names are resolved the way Python would at call time (locals, then the closure, then the function's
globals, then builtins) to the real objects, and intrinsics are recognised by identity. Types are
inferred: parameters are annotated, literals are typed by the value they meet, and a local takes the
dtype of its first assignment (a bare literal's local learns its dtype from the first typed value it
meets; the import then restarts with that knowledge). Every buffer access gets its own bounds check,
with its own trap code and source line (`Kernel.checks` is False on imported kernels: the checks are
explicit in the body, and `checks=False` leaves them out). See docs/kernels.md for the subset.
"""
from __future__ import annotations

import ast
import builtins
import logging
from dataclasses import dataclass, field

from poot import dtypes as dt
from poot.dtypes import DType
from poot.errors import KernelImportError
from poot.jit.kir.model import (TRAP_ASSERT, Assign, Barrier, BufferParam, Const, Kernel, Local, Read, Return,
                         ScalarParam, SharedArray, Trap, TrapSite)
from poot.jit.kir.uniformity import divergent_barrier
from poot.jit.kir.verify import verify
from poot.kernel import intrinsics as ix
from poot.kernel.calls import CallLowering
from poot.kernel.diagnostics import SourceInfo
from poot.kernel.expressions import ExprLowering, has_effects, has_load
from poot.kernel.source import fresh_copy, function_source
from poot.kernel.statements import StatementLowering
from poot.kernel.values import Buf, Lit, Restart, Static, Val, accepts_literal, literal_kind

log = logging.getLogger("poot.kernel")

_MAX_RESTARTS = 256


@dataclass
class Scope:
    """One function body being lowered: the kernel itself, or one inlined call of a device function."""
    fn: object
    info: SourceInfo
    tree: ast.FunctionDef
    prefix: str = ""
    device: bool = False
    py_locals: set = field(default_factory=set)
    bind: dict = field(default_factory=dict)          # py name -> ("local", kir) | ("param", kir) | Buf | Lit
    assigned: set = field(default_factory=set)        # definitely assigned here
    loop_vars: list = field(default_factory=list)
    dead_loop_vars: set = field(default_factory=set)
    ann: dict = field(default_factory=dict)           # id(ast node) -> {tag: payload} for the emulator
    loop_depth: int = 0
    has_barrier: bool = False
    # device functions
    mode: str = "none"                                # none | simple | wrapper
    ret: str | None = None
    ret_lit: Lit | None = None
    ret_void: bool | None = None
    done: str | None = None
    param_dtypes: dict = field(default_factory=dict)
    inst: int = 0
    callees: list = field(default_factory=list)

    def kir(self, name: str) -> str:
        return self.prefix + name

    @property
    def closure(self) -> dict:
        code = self.fn.__code__
        cells = self.fn.__closure__ or ()
        out = {}
        for n, c in zip(code.co_freevars, cells):
            try:
                out[n] = c.cell_contents
            except ValueError:
                pass
        return out


@dataclass
class ImportedKernel:
    """An import's result: the verified KIR and what the emulator needs (the annotated scopes)."""
    kernel: Kernel
    scope: Scope
    instances: list
    shared: dict                                      # kir name -> (dtype, size)
    shared_nodes: dict = field(default_factory=dict)  # kir name -> its pt.shared(...) call (diagnostics)
    # (shared array, file:line) of each float atomic add into a shared array: wgpu cannot build those
    shared_float_atomics: tuple = ()
    # (buffer, dtype name, file:line) of each 64-bit integer atomic add: SPIR-V targets cannot build those
    wide_atomics: tuple = ()
    # (pt.<op>, file:line) of each exchange between lanes (shuffles, subgroup reductions, mma): the CPU has none
    subgroup_exchanges: tuple = ()


def python_locals(tree: ast.FunctionDef) -> set:
    names = {a.arg for a in tree.args.args + tree.args.posonlyargs + tree.args.kwonlyargs}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


class KernelImporter(StatementLowering, CallLowering, ExprLowering):
    def __init__(self, fn, *, name: str | None = None, workgroup=(64, 1, 1), checks: bool = True,
                 display: str | None = None, kernel_object=None, cpu_vector_bits: int = 0):
        self.fn, self.name, self.workgroup, self.checks = fn, name or fn.__name__, tuple(workgroup), checks
        self.cpu_vector_bits = cpu_vector_bits
        self.display, self.kernel_object = display, kernel_object
        self.hints: dict[str, DType] = {}
        self.info, self.def_node = function_source(fn, display)

    # -- driver ---------------------------------------------------------------------------------
    def run(self) -> ImportedKernel:
        for _ in range(_MAX_RESTARTS):
            try:
                return self.import_once()
            except Restart:
                continue
        raise RuntimeError(f"kernel import of '{self.name}' did not settle the dtypes of its locals")

    def import_once(self) -> ImportedKernel:
        self.local_types: dict[str, DType] = {}
        self.defaulted: dict[str, str] = {}
        self.shared: dict[str, tuple[DType, int]] = {}
        self.shared_nodes: dict[str, ast.AST] = {}
        self.shared_float_atomics: list[tuple[str, str]] = []
        self.wide_atomics: list[tuple[str, str, str]] = []
        self.subgroup_exchanges: list[tuple[str, str]] = []
        self.traps: list[TrapSite] = []
        self.next_code = TRAP_ASSERT
        self.temp_count = 0
        self.instances: list[Scope] = []
        self.barriers: dict[int, tuple[Scope, ast.AST]] = {}
        self.inline_stack: list = []
        self.out: list = []
        self.terminated = False
        self.loops: list = []
        tree = fresh_copy(self.def_node)
        self.sc = Scope(self.fn, self.info, tree)
        self.sc.py_locals = python_locals(tree)
        self.reserved = set(self.sc.py_locals)
        params = self.parameters(tree)
        body = tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        self.block(body)
        stmts = tuple(self.out) or (Return(),)
        kernel = Kernel(
            name=self.name, params=params, body=stmts,
            locals=tuple(Local(n, t) for n, t in self.local_types.items()),
            shared=tuple(SharedArray(n, t, s) for n, (t, s) in self.shared.items()),
            workgroup=self.workgroup, checks=False, cpu_vector_bits=self.cpu_vector_bits, traps=tuple(self.traps))
        bad = divergent_barrier(kernel.body)
        if bad is not None:
            scope, node = self.barriers[id(bad)]
            raise scope.info.error("divergent-barrier", "pt.workgroup_barrier() under control flow that depends "
                                   "on the thread (an if/loop on thread_index/local_index, or after a return or "
                                   "break taken by some threads only): every thread of a workgroup must reach "
                                   "the same barriers", node)
        verify(kernel)
        log.debug("imported kernel %s: %d params, %d locals, %d trap sites", self.name, len(params),
                  len(kernel.locals), len(self.traps))
        return ImportedKernel(kernel, self.sc, self.instances, dict(self.shared), dict(self.shared_nodes),
                              tuple(self.shared_float_atomics), tuple(self.wide_atomics),
                              tuple(self.subgroup_exchanges))

    def parameters(self, tree: ast.FunctionDef):
        a = tree.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise self.err("bad-signature", "kernel parameters are plain positional names (no *args, **kwargs, "
                           "keyword-only or default values)", tree)
        try:
            import inspect

            hints = inspect.get_annotations(self.fn, eval_str=True)
        except Exception as e:  # noqa: BLE001 - any failure to evaluate a string annotation
            raise self.err("bad-annotation", f"cannot evaluate the annotations: {e}", tree) from None
        params = []
        for arg in a.args:
            ann = hints.get(arg.arg)
            if ann is None:
                raise self.err("missing-annotation", f"parameter '{arg.arg}' needs an annotation: "
                               "pt.In[dtype], pt.Out[dtype], pt.InOut[dtype] or a dtype (a scalar)", arg)
            self.check_annotation(arg, ann)
            if isinstance(ann, ix.BufferSpec):
                params.append(BufferParam(arg.arg, ann.dtype, ann.access))
                self.sc.bind[arg.arg] = Buf(arg.arg, ann.dtype, ann.access, None, arg.arg)
            elif isinstance(ann, DType):
                params.append(ScalarParam(arg.arg, ann))
                self.sc.bind[arg.arg] = ("param", arg.arg)
                self.local_types_params = True
            else:
                raise self.err("bad-annotation", f"parameter '{arg.arg}' is annotated {ann!r}; use pt.In[dtype], "
                               "pt.Out[dtype], pt.InOut[dtype] or a dtype", arg)
            self.sc.assigned.add(arg.arg)
        self.param_types = {p.name: p.dtype for p in params if isinstance(p, ScalarParam)}
        return tuple(params)

    def check_annotation(self, arg: ast.arg, ann) -> None:
        """`bad-annotation` at the parameter for a buffer spec that is not one dtype, and for dtypes no
        kernel computes with (complex: KIR's scalars are bool, integers and real floats)."""
        if isinstance(ann, ix.BadBufferSpec):
            raise self.err("bad-annotation", f"parameter '{arg.arg}' is annotated {ann!r} ({ann.reason}); use "
                           "pt.In[dtype], pt.Out[dtype] or pt.InOut[dtype] with one dtype", arg)
        d = ann.dtype if isinstance(ann, ix.BufferSpec) else ann
        if isinstance(d, DType) and dt.is_complex(d):
            raise self.err("bad-annotation", f"parameter '{arg.arg}' is {d.name}: kernels take bool, integer and "
                           "real float dtypes; pass the real and imaginary parts as two float buffers", arg)

    # -- services the lowering mixins use --------------------------------------------------------
    def err(self, what: str, message: str, node) -> KernelImportError:
        return self.sc.info.error(what, message, node)

    def annotate(self, node, ann: tuple) -> None:
        self.sc.ann.setdefault(id(node), {})[ann[0]] = ann[1:]

    def emit(self, stmt) -> None:
        self.out.append(stmt)

    def capture(self, fn):
        saved, saved_term = self.out, self.terminated
        self.out, self.terminated = [], False
        try:
            v = fn()
            return self.out, v
        finally:
            self.out, self.terminated = saved, saved_term

    def mark(self) -> int:
        return len(self.out)

    def spill_before(self, v, mark: int):
        if isinstance(v, Val) and has_load(v.expr) and has_effects(self.out[mark:]):
            t = self.new_temp(v.dtype)
            self.out.insert(mark, Assign(t, v.expr))
            return Val(Read(t, v.dtype), v.dtype)
        return v

    def to_temp(self, v: Val) -> Val:
        t = self.new_temp(v.dtype)
        self.emit(Assign(t, v.expr))
        return Val(Read(t, v.dtype), v.dtype)

    def simple(self, e):
        if isinstance(e, (Read, Const)):
            return e
        return self.to_temp(Val(e, e.dtype)).expr

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.reserved or name in self.local_types or name in self.shared:
            k += 1
            name = f"{base}_{k}"
        self.reserved.add(name)
        return name

    def new_temp(self, dtype: DType | None, literal: str | None = None, node=None) -> str:
        name = self.fresh(f"_t{self.temp_count}")
        self.temp_count += 1
        if literal is not None:
            self.declare(name, None, literal)
        else:
            self.declare(name, dtype)
        return name

    def declare(self, kir: str, dtype: DType | None, literal: str | None = None) -> DType:
        if kir in self.local_types:
            return self.local_types[kir]
        if literal is not None:
            self.defaulted[kir] = literal
            dtype = self.hints.get(kir) or {"b": dt.bool_, "i": dt.int32, "f": dt.float32}[literal]
        self.local_types[kir] = dtype
        return dtype

    def local_dtype(self, kir: str) -> DType:
        return self.local_types[kir]

    def learn(self, kir: str, dtype: DType) -> bool:
        """Record that literal-typed local `kir` should have `dtype`; True if that is new knowledge."""
        kind = self.defaulted.get(kir)
        if kind is None or kir in self.hints or self.local_types.get(kir) is dtype \
                or not accepts_literal(kind, dtype):
            return False
        self.hints[kir] = dtype
        return True

    def assign_stmt(self, kir: str, expr) -> Assign:
        return Assign(kir, expr)

    def emit_assign(self, kir: str, expr) -> None:
        self.emit(Assign(kir, expr))

    def trap_site(self, what: str, node) -> int:
        code = self.next_code
        self.next_code += 1
        self.traps.append(TrapSite(code, what, self.sc.info.where(node)))
        return code

    def trap_stmt(self, code: int) -> Trap:
        return Trap(code)

    def barrier(self, node) -> None:
        b = Barrier()
        self.barriers[id(b)] = (self.sc, node)
        self.sc.has_barrier = True
        for s in self.inline_stack_scopes:
            s.has_barrier = True
        self.emit(b)

    @property
    def inline_stack_scopes(self):
        return [s for _, s in self.inline_stack]

    # -- names ----------------------------------------------------------------------------------
    def lookup(self, name: str, node):
        sc = self.sc
        if name in sc.py_locals:
            if name in sc.dead_loop_vars:
                raise self.err("loop-variable", f"'{name}' is read after its for loop; Python leaves it at the "
                               "last value, KIR does not: copy it into another local inside the loop", node)
            b = sc.bind.get(name)
            if b is None or name not in sc.assigned:
                raise self.err("unbound-local", f"'{name}' may be used before it is assigned", node)
            if isinstance(b, (Buf, Lit)):
                return b
            kind, kir = b
            if kind == "param":
                d = self.param_types[kir]
                return Val(Read(kir, d), d)
            d = self.local_types[kir]
            return Val(Read(kir, d), d, local=kir if kir in self.defaulted else None)
        for table in (sc.closure, sc.fn.__globals__, vars(builtins)):
            if name in table:
                out = self.classify(table[name], node)
                return out
        raise self.err("undefined-name", f"name '{name}' is not defined", node)

    # -- device functions -----------------------------------------------------------------------
    def inline(self, dfn: ix.DeviceFunction, node):
        if any(d is dfn for d, _ in self.inline_stack):
            raise self.err("recursion", f"device function '{dfn.__name__}' calls itself (recursion cannot be "
                           "inlined)", node)
        args = []
        for a in node.args:
            v = self.expr(a)
            if isinstance(v, Static):
                raise self.err("unsupported-value", "only scalars and buffers can be passed to a device function", a)
            args.append(v)
        info, def_node = function_source(dfn.fn, None)
        tree = fresh_copy(def_node)
        spec = tree.args
        if spec.vararg or spec.kwarg or spec.kwonlyargs or spec.posonlyargs or spec.defaults:
            raise info.error("bad-signature", "device function parameters are plain positional names", tree)
        if len(spec.args) != len(args):
            raise self.err("bad-intrinsic-call", f"'{dfn.__name__}' takes {len(spec.args)} argument(s), got "
                           f"{len(args)}", node)
        inst = len(self.instances) + 1
        scope = Scope(dfn.fn, info, tree, prefix=f"{tree.name}_{inst}_", device=True, inst=inst)
        scope.py_locals = python_locals(tree)
        self.instances.append(scope)
        self.sc.callees.append(scope)
        self.annotate(node, ("devfn", scope))
        assigned_params = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        outer = self.sc
        self.inline_stack.append((dfn, scope))
        self.sc = scope
        try:
            for p, v in zip(spec.args, args):
                if isinstance(v, Buf) or (isinstance(v, Lit) and p.arg not in assigned_params):
                    scope.bind[p.arg] = v
                    scope.param_dtypes[p.arg] = None
                else:
                    kir = self.fresh(scope.kir(p.arg))
                    if isinstance(v, Lit):
                        d = self.declare(kir, None, literal_kind(v.value))
                        e = self.lit_as(v, d, node)
                    else:
                        d = self.declare(kir, v.dtype)
                        e = v.expr
                    self.emit(Assign(kir, e))
                    scope.bind[p.arg] = ("local", kir)
                    scope.param_dtypes[p.arg] = d
                scope.assigned.add(p.arg)
            return self.inline_body(scope, tree, node)
        finally:
            self.sc = outer
            self.inline_stack.pop()

    def inline_body(self, scope: Scope, tree, call_node):
        body = tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
        saved_term, saved_loops = self.terminated, self.loops
        self.loops = []
        if not returns:
            scope.mode = "none"
        elif len(returns) == 1 and body and body[-1] is returns[0]:
            scope.mode = "simple"
        else:
            scope.mode = "wrapper"
            if _return_in_loop(body):
                scope.done = self.new_temp(dt.bool_)
                self.emit(Assign(scope.done, Const(False, dt.bool_)))
        try:
            if scope.mode == "wrapper":
                from poot.jit.kir.model import Break, While

                stmts, ends = self.block_capture(body)
                if scope.ret_void is False and not ends:
                    raise scope.info.error("return-value", f"device function '{tree.name}' returns a value on some "
                                           "paths but can reach its end without a return (Python would return "
                                           "None there): return a value on every path", tree)
                if not stmts or not isinstance(stmts[-1], Break):
                    stmts.append(Break())
                self.emit(While(Const(True, dt.bool_), tuple(stmts)))
            else:
                self.block(body)
        finally:
            self.terminated, self.loops = saved_term, saved_loops
        if scope.ret_lit is not None:
            return scope.ret_lit
        if scope.ret is not None:
            d = self.local_types[scope.ret]
            return Val(Read(scope.ret, d), d, local=scope.ret if scope.ret in self.defaulted else None)
        return None


def _return_in_loop(body) -> bool:
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.For, ast.While)):
                if any(isinstance(r, ast.Return) for r in ast.walk(sub)):
                    return True
    return False


def import_kernel(fn, *, name: str | None = None, workgroup=(64, 1, 1), checks: bool = True,
                  display: str | None = None, kernel_object=None, cpu_vector_bits: int = 0) -> ImportedKernel:
    """Import `fn` (a plain Python function) as a KIR kernel; raises poot.KernelImportError."""
    return KernelImporter(fn, name=name, workgroup=workgroup, checks=checks, display=display,
                          kernel_object=kernel_object, cpu_vector_bits=cpu_vector_bits).run()


__all__ = ["import_kernel", "ImportedKernel", "KernelImporter", "Scope"]
