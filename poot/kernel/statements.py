"""Statement lowering for the kernel importer (a mixin of `importer.KernelImporter`): assignments,
stores, control flow, assert, barriers, returns (also inside inlined device functions), and the named
refusals for the statements the subset leaves out."""
from __future__ import annotations

import ast
import builtins

from poot import dtypes as dt
from poot.dtypes import DType
from poot.jit.kir.model import (Assign, Break, Cast, Const, Continue, For, If, Load, Read, Return, SharedArray,
                         Store, Trap, Unary, While)
from poot.kernel import intrinsics as ix
from poot.kernel import async_copy, subgroup, warpgroup
from poot.kernel.shared_memory import MAX_SHARED_BYTES, refuse
from poot.kernel.values import Buf, Lit, Restart, Static, Val, literal_kind

_REFUSED = {
    ast.Try: ("try", "try/except is not part of the kernel subset"),
    ast.With: ("with", "a with statement is not part of the kernel subset"),
    ast.AsyncWith: ("with", "a with statement is not part of the kernel subset"),
    ast.Import: ("import", "import at module level, outside the kernel"),
    ast.ImportFrom: ("import", "import at module level, outside the kernel"),
    ast.Raise: ("raise", "raise is not part of the kernel subset; use assert (a trap)"),
    ast.Delete: ("del", "del is not part of the kernel subset"),
    ast.FunctionDef: ("nested-definition", "define helpers at module level and mark them @pt.device_fn"),
    ast.AsyncFunctionDef: ("nested-definition", "define helpers at module level and mark them @pt.device_fn"),
    ast.ClassDef: ("nested-definition", "classes cannot be defined in a kernel"),
    ast.Global: ("global-mutation", "kernels cannot rebind globals; write results into an Out buffer"),
    ast.Nonlocal: ("global-mutation", "kernels cannot rebind enclosing variables; write results into an Out "
                   "buffer"),
}
if hasattr(ast, "TryStar"):
    _REFUSED[ast.TryStar] = _REFUSED[ast.Try]


class StatementLowering:
    def block(self, stmts) -> None:
        for node in stmts:
            if self.terminated:
                return
            self.stmt(node)

    def stmt(self, node) -> None:
        if type(node) in _REFUSED:
            what, msg = _REFUSED[type(node)]
            raise self.err(what, msg, node)
        meth = getattr(self, "s_" + type(node).__name__, None)
        if meth is None:
            raise self.err("unsupported-syntax", f"{type(node).__name__} statements are not part of the kernel "
                           "subset", node)
        meth(node)

    # -- simple statements -----------------------------------------------------------------------
    def s_Pass(self, node):
        pass

    def s_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            raise self.err("string", "a string statement is only allowed as the docstring", node)
        if isinstance(v, ast.Call):
            f = self.expr(v.func)
            if isinstance(f, Static) and f.obj is ix.workgroup_barrier:
                self.args(v, 0, "pt.workgroup_barrier")
                self.annotate(node, ("barrier",))
                self.barrier(node)
                return
            self.e_Call(v, want_result=False)
            return
        self.expr(v)

    def s_Assert(self, node):
        msg = node.msg
        if msg is not None and not (isinstance(msg, ast.Constant) and isinstance(msg.value, str)):
            what = "fstring" if isinstance(msg, ast.JoinedStr) else "unsupported-syntax"
            raise self.err(what, "an assert message must be a plain string literal", msg)
        c = self.cond(node.test)
        text = f"assertion failed: {self.sc.info.segment(node.test)}" + (f" ({msg.value})" if msg else "")
        code = self.trap_site(text, node)
        self.annotate(node, ("assert", code))
        if isinstance(c, Lit):
            if not c.value:
                self.emit(Trap(code))
            return
        self.emit(If(Unary("not", c.expr, dt.bool_), (Trap(code),)))

    # -- assignment ------------------------------------------------------------------------------
    def s_Assign(self, node):
        targets, value = node.targets, node.value
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(value, ast.Call):
            f = self.expr(value.func)
            if isinstance(f, Static) and f.obj is ix.shared:
                return self.declare_shared(targets[0], value)
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple):
            if isinstance(value, ast.Call):
                f = self.expr(value.func)
                if isinstance(f, Static) and isinstance(f.obj, ix.Intrinsic) and f.obj.kind == "mma":
                    return subgroup.mma_assign(self, targets[0], value, node, f.obj.name)
                if isinstance(f, Static) and isinstance(f.obj, ix.Intrinsic) and f.obj.kind == "wgmma":
                    return warpgroup.wgmma_assign(self, targets[0], value, node, f.obj.name)
                if isinstance(f, Static) and async_copy.is_tuple_call(f.obj):
                    return async_copy.x4_assign(self, targets[0], value, node)
            return self.tuple_assign(targets[0], value, node)
        v = self.value(value)
        if len(targets) > 1 and isinstance(v, Val) and not isinstance(v.expr, (Read, Const)):
            v = self.to_temp(v)
        for t in targets:
            self.assign_to(t, v, node)

    def tuple_assign(self, target: ast.Tuple, value, node):
        if not isinstance(value, ast.Tuple) or len(value.elts) != len(target.elts):
            raise self.err("tuple", "tuple assignment needs a tuple of the same length on the right "
                           "(`a, b = x, y`)", node)
        vals = []
        for e in value.elts:
            v = self.value(e)
            vals.append(self.to_temp(v) if isinstance(v, Val) and not isinstance(v.expr, Const) else v)
        for t, v in zip(target.elts, vals):
            self.assign_to(t, v, node)

    def assign_to(self, target, v, node):
        if isinstance(target, ast.Name):
            self.assign_name(target.id, v, target)
        elif isinstance(target, ast.Subscript):
            self.store(target, v)
        elif isinstance(target, ast.Attribute):
            raise self.err("global-mutation", "assigning an attribute writes into an object outside the kernel",
                           target)
        else:
            raise self.err("unsupported-syntax", "this assignment target is not part of the kernel subset", target)

    def assign_name(self, name: str, v, node, declared: DType | None = None):
        sc = self.sc
        b = sc.bind.get(name)
        if isinstance(b, tuple) and b[0] == "param" or (isinstance(b, Buf) and b.access is not None):
            raise self.err("assign-to-parameter", f"'{name}' is a parameter; assign to a new local instead", node)
        if isinstance(b, Buf):
            raise self.err("shared-declaration", f"'{name}' is a shared array; it cannot be rebound", node)
        if name in sc.loop_vars:
            raise self.err("loop-variable", f"'{name}' is the variable of an enclosing for loop; it cannot be "
                           "assigned in the loop", node)
        kir = b[1] if isinstance(b, tuple) else self.fresh(sc.kir(name)) if sc.device else sc.kir(name)
        if kir not in self.local_types:
            if declared is not None:
                self.declare(kir, declared)
            elif isinstance(v, Lit):
                self.declare(kir, None, literal_kind(v.value))
            else:
                self.declare(kir, v.dtype)
        self.emit(Assign(kir, self.convert(v, self.local_types[kir], node, kir, what=f"local '{name}'")))
        sc.bind[name] = ("local", kir)
        sc.assigned.add(name)
        sc.dead_loop_vars.discard(name)
        self.annotate(node, ("local", self.local_types[kir]))

    def convert(self, v, d: DType, node, kir: str | None = None, what: str = "", store: bool = False):
        """`v` as an expression of dtype `d` for an assignment or store: a literal adapts, the same kind
        widens; anything else is a type change that needs an explicit cast."""
        if isinstance(v, Lit):
            return self.lit_as(v, d, node)
        if v.dtype is d:
            return v.expr
        if kir is not None and self.learn(kir, v.dtype):
            raise Restart()
        if v.local and self.learn(v.local, d):
            raise Restart()
        if v.dtype.kind == d.kind and v.dtype.bits < d.bits:
            return Cast(v.expr, d)
        raise self.err("ambiguous-types" if store and v.dtype.kind != d.kind else "type-change", f"{what} holds {d.name}; this value is {v.dtype.name}: cast it with "
                       f"pt.{d.short}(...)", node)

    def store(self, target: ast.Subscript, v):
        buf = self.expr(target.value)
        if isinstance(buf, Static):
            raise self.err("global-mutation", "writing into an object outside the kernel; write results into an "
                           "Out buffer", target)
        if not isinstance(buf, Buf):
            raise self.err("unsupported-value", "only buffers and shared arrays can be indexed", target)
        if not buf.writable:
            raise self.err("write-to-input", f"'{buf.py_name}' is an In buffer (read-only); declare it "
                           "pt.Out[...] or pt.InOut[...] to write it", target)
        idx = self.index(buf, target)
        e = self.convert(v, buf.dtype, target, what=f"buffer '{buf.py_name}'", store=True)
        code = self.bounds_check(buf, idx, target)
        self.annotate(target, ("store", code))
        self.emit(Store(buf.name, idx, e))

    def s_AugAssign(self, node):
        t = node.target
        if isinstance(t, ast.Name):
            old = self.lookup(t.id, t)
            if isinstance(old, (Buf, Static)):
                raise self.err("buffer-as-value", f"'{t.id}' is not a scalar", t)
            mark = self.mark()
            v = self.value(node.value)
            old = self.spill_before(old, mark)
            self.assign_name(t.id, self.binop(node.op, old, v, node), t)
            return
        if isinstance(t, ast.Attribute):
            raise self.err("global-mutation", "assigning an attribute writes into an object outside the kernel", t)
        if not isinstance(t, ast.Subscript):
            raise self.err("unsupported-syntax", "this assignment target is not part of the kernel subset", t)
        buf = self.expr(t.value)
        if isinstance(buf, Static):
            raise self.err("global-mutation", "writing into an object outside the kernel", t)
        if not isinstance(buf, Buf):
            raise self.err("unsupported-value", "only buffers and shared arrays can be indexed", t)
        if not buf.writable:
            raise self.err("write-to-input", f"'{buf.py_name}' is an In buffer (read-only); declare it "
                           "pt.InOut[...] to update it", t)
        idx = self.index(buf, t)
        if not isinstance(idx, (Read, Const)):
            idx = self.to_temp(Val(idx, idx.dtype)).expr
        code = self.bounds_check(buf, idx, t)
        mark = self.mark()
        old = Val(Load(buf.name, idx, buf.dtype), buf.dtype)
        v = self.value(node.value)
        old = self.spill_before(old, mark)
        new = self.binop(node.op, old, v, node)
        self.annotate(t, ("augstore", code))
        self.emit(Store(buf.name, idx, self.convert(new, buf.dtype, node, what=f"buffer '{buf.py_name}'",
                                                    store=True)))

    def s_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.err("unsupported-syntax", "only `name: dtype = value` annotations", node)
        d = self.expr(node.annotation)
        if not isinstance(d, Static) or not isinstance(d.obj, DType):
            raise self.err("bad-annotation", "a local's annotation must be a dtype (pt.f32...)", node.annotation)
        name, d = node.target.id, d.obj
        b = self.sc.bind.get(name)
        if b is not None and not (isinstance(b, tuple) and b[0] == "local"):
            raise self.err("assign-to-parameter", f"'{name}' is a parameter or shared array", node)
        kir = b[1] if b is not None else self.fresh(self.sc.kir(name)) if self.sc.device else self.sc.kir(name)
        if kir in self.local_types and self.local_types[kir] is not d:
            raise self.err("type-change", f"'{name}' already holds {self.local_types[kir].name}", node)
        self.declare(kir, d)
        self.sc.bind[name] = ("local", kir)
        self.annotate(node, ("declare", d))
        if node.value is not None:
            self.assign_name(name, self.value(node.value), node.target, declared=d)

    def declare_shared(self, target: ast.Name, call):
        if self.sc.device:
            raise self.err("shared-declaration", "shared arrays are declared in the kernel body; pass them to "
                           "device functions as arguments", call)
        if len(call.args) != 2 or call.keywords:
            raise self.err("shared-declaration", "pt.shared(dtype, size) takes a dtype and a constant size", call)
        d, n = self.expr(call.args[0]), self.value(call.args[1])
        if not isinstance(d, Static) or not isinstance(d.obj, DType):
            raise self.err("shared-declaration", "the first argument of pt.shared must be a dtype", call.args[0])
        if not isinstance(n, Lit) or not isinstance(n.value, int) or isinstance(n.value, bool) or n.value < 1:
            raise self.err("shared-declaration", "the size of a shared array must be a positive integer constant",
                           call.args[1])
        name = target.id
        if name in self.sc.bind or name in self.shared:
            raise self.err("shared-declaration", f"'{name}' is already bound; a shared array needs its own name",
                           target)
        self.shared[name] = (d.obj, n.value)
        self.shared_nodes[name] = call
        self.check_shared_total()
        self.sc.bind[name] = Buf(name, d.obj, None, n.value, name)
        self.sc.assigned.add(name)
        self.annotate(call, ("shared", name))
        self.annotate(target, ("sharedname",))

    def check_shared_total(self):
        """Refuse shared arrays past what any device has (2 GiB) as soon as they are declared: such a size
        crashed the targets' compilers (naga aborted on 4 GiB) before a device could say no."""
        arrays = [SharedArray(n, t, s) for n, (t, s) in self.shared.items()]
        total = sum(a.size * a.dtype.itemsize for a in arrays)
        if total > MAX_SHARED_BYTES:
            raise refuse(self.name, arrays, self.sc.info, self.shared_nodes, total,
                         f"no device allows more than {MAX_SHARED_BYTES:,} bytes")

    # -- control flow ------------------------------------------------------------------------------
    def block_capture(self, stmts):
        saved_out, saved_term = self.out, self.terminated
        self.out, self.terminated = [], False
        try:
            self.block(stmts)
            return self.out, self.terminated
        finally:
            self.out, self.terminated = saved_out, saved_term

    def nested(self, stmts):
        saved = set(self.sc.assigned)
        out, term = self.block_capture(stmts)
        after = None if term else set(self.sc.assigned)
        self.sc.assigned = saved
        return tuple(out), after

    def s_If(self, node):
        c = self.cond(node.test)
        if isinstance(c, Lit):
            return self.block(node.body if c.value else node.orelse)
        then, a1 = self.nested(node.body)
        orelse, a2 = self.nested(node.orelse)
        self.emit(If(c.expr, then, orelse))
        self.merge(a1, a2)

    def merge(self, *sets):
        live = [s for s in sets if s is not None]
        if not live:
            self.terminated = True
            return
        out = live[0]
        for s in live[1:]:
            out = out & s
        self.sc.assigned = out

    def s_For(self, node):
        if node.orelse:
            raise self.err("loop-else", "an else clause on a loop is not part of the kernel subset", node.orelse[0])
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(self.expr(it.func), Static)
                and self.expr(it.func).obj is builtins.range):
            raise self.err("range", "kernels loop with `for i in range(...)` only", it)
        if not isinstance(node.target, ast.Name):
            raise self.err("range", "the loop variable must be a single name", node.target)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.err("range", "range() takes 1 to 3 positional arguments", it)
        name = node.target.id
        if name in self.sc.loop_vars:
            raise self.err("loop-variable", f"'{name}' is already the variable of an enclosing loop", node.target)
        for sub in node.body:
            for n in ast.walk(sub):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                    raise self.err("loop-variable", f"'{name}' is assigned inside its own for loop", n)
        args = [self.value(a) for a in it.args]
        start, stop = (Lit(0), args[0]) if len(args) == 1 else (args[0], args[1])
        step = Lit(1) if len(args) < 3 else args[2]
        if not isinstance(step, Lit) or not isinstance(step.value, int) or isinstance(step.value, bool) \
                or step.value == 0:
            raise self.err("range", "the step of range() must be a non-zero integer constant", it.args[2])
        b = self.sc.bind.get(name)
        kir = b[1] if isinstance(b, tuple) and b[0] == "local" else (
            self.fresh(self.sc.kir(name)) if self.sc.device else self.sc.kir(name))
        if kir not in self.local_types:
            if isinstance(start, Lit) and isinstance(stop, Lit):
                self.declare(kir, None, "i")
            else:
                typed = stop if isinstance(stop, Val) else start
                self.declare(kir, typed.dtype)
        d = self.local_types[kir]
        if not dt.is_int(d):
            raise self.err("range", f"the loop variable '{name}' would be {d.name}; range() needs integers", it)
        e_start = self.convert(start, d, it, kir, what=f"loop variable '{name}'")
        e_stop = self.convert(stop, d, it, kir, what=f"loop variable '{name}'")
        self.sc.bind[name] = ("local", kir)
        self.annotate(node, ("for", d))
        before = set(self.sc.assigned)
        self.sc.assigned.add(name)
        self.sc.dead_loop_vars.discard(name)
        self.sc.loop_vars.append(name)
        self.sc.loop_depth += 1
        self.loops.append([])
        body, _ = self.nested(node.body)
        self.loops.pop()
        self.sc.loop_depth -= 1
        self.sc.loop_vars.pop()
        self.emit(For(kir, e_start, e_stop, step.value, body or ()))
        self.sc.assigned = before
        self.sc.dead_loop_vars.add(name)
        self.after_loop()

    def s_While(self, node):
        if node.orelse:
            raise self.err("loop-else", "an else clause on a loop is not part of the kernel subset", node.orelse[0])
        pre, c = self.capture(lambda: self.cond(node.test))
        if isinstance(c, Lit) and not c.value and not pre:
            return
        forever = isinstance(c, Lit) and c.value and not pre
        before = set(self.sc.assigned)
        self.loops.append([])
        self.sc.loop_depth += 1
        body, after = self.nested(node.body)
        self.sc.loop_depth -= 1
        breaks = self.loops.pop()
        if forever:
            self.emit(While(Const(True, dt.bool_), body))
            self.merge(*breaks) if breaks else setattr(self, "terminated", True)
            if breaks:
                self.sc.assigned = self.sc.assigned | before
        elif pre:
            test = Const(not c.value, dt.bool_) if isinstance(c, Lit) else Unary("not", c.expr, dt.bool_)
            self.emit(While(Const(True, dt.bool_), tuple(pre) + (If(test, (Break(),)),) + body))
            self.sc.assigned = before
        else:
            self.emit(While(c.expr, body))
            self.sc.assigned = before
        self.after_loop()

    def after_loop(self):
        if self.sc.device and self.sc.done is not None:
            self.emit(If(Read(self.sc.done, dt.bool_), (Break(),)))

    def s_Break(self, node):
        if self.loops and self.sc.loop_depth:
            self.loops[-1].append(set(self.sc.assigned))
        self.emit(Break())
        self.terminated = True

    def s_Continue(self, node):
        self.emit(Continue())
        self.terminated = True

    def s_Return(self, node):
        sc = self.sc
        if not sc.device:
            if node.value is not None:
                raise self.err("return-value", "a kernel returns nothing: write results into an Out buffer", node)
            self.emit(Return())
            self.terminated = True
            return
        void = node.value is None
        if sc.ret_void is not None and sc.ret_void != void:
            raise self.err("return-value", "a device function returns a value on every path or on none", node)
        sc.ret_void = void
        if not void:
            v = self.value(node.value)
            if sc.mode == "simple" and isinstance(v, Lit):
                sc.ret_lit = v
            else:
                if sc.ret is None:
                    sc.ret = self.new_temp(None, literal=literal_kind(v.value), node=node) if isinstance(v, Lit) \
                        else self.new_temp(v.dtype)
                d = self.local_types[sc.ret]
                self.emit(Assign(sc.ret, self.convert(v, d, node, sc.ret, what="the return value")))
                self.annotate(node, ("ret", d))
        if sc.mode == "wrapper":
            if sc.loop_depth and sc.done is not None:
                self.emit(Assign(sc.done, Const(True, dt.bool_)))
            self.emit(Break())
        self.terminated = True
