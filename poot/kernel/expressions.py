"""Expression lowering for the kernel importer (a mixin of `importer.KernelImporter`).

Every method returns a `values` object (Val, Lit, Buf, Static) and may emit statements first (bounds
checks, the body of an inlined device function, an atomic add, the branches of a short-circuit that
must not be evaluated speculatively). It also records, per AST node, what the emulator must do
(`self.annotate`), so the emulated Python body computes with exactly the dtypes the KIR has.
"""
from __future__ import annotations

import ast
import math
import operator
import types

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType
from poot.jit.kir.model import (AsyncWait, AtomicAdd, Binary, Bitcast, Cast, Const, CopyAsync, If, Len, Load, Read,
                                Select, Store, StoreX4, Unary)
from poot.kernel import intrinsics as ix
from poot.kernel import scalar_ops
from poot.kernel.values import (Buf, Lit, Restart, Static, Val, accepts_literal, const, default_dtype, fits,
                     literal_kind, widen)

_REFUSED = {
    ast.List: "list", ast.Dict: "dict", ast.Set: "set", ast.ListComp: "comprehension",
    ast.SetComp: "comprehension", ast.DictComp: "comprehension", ast.GeneratorExp: "comprehension",
    ast.JoinedStr: "fstring", ast.Lambda: "lambda", ast.Yield: "yield", ast.YieldFrom: "yield",
    ast.Await: "yield", ast.Tuple: "tuple", ast.Slice: "buffer-slice",
}

# Python operator -> (KIR op, folding function)
_BINOPS = {
    ast.Add: ("add", operator.add), ast.Sub: ("sub", operator.sub), ast.Mult: ("mul", operator.mul),
    ast.Div: ("div", operator.truediv), ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod), ast.Pow: ("pow", operator.pow), ast.LShift: ("shl", operator.lshift),
    ast.RShift: ("shr", operator.rshift), ast.BitAnd: ("and", operator.and_),
    ast.BitOr: ("or", operator.or_), ast.BitXor: ("xor", operator.xor),
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_CMPFOLD = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}
_EMU_BINOP = {"floordiv": scalar_ops.floordiv, "mod": scalar_ops.mod, "shl": scalar_ops.shl,
              "shr": scalar_ops.shr}


def has_load(e) -> bool:
    if isinstance(e, Load):
        return True
    return any(has_load(getattr(e, f)) for f in ("x", "a", "b", "c", "cond", "index") if hasattr(e, f))


def has_effects(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (Store, AtomicAdd, StoreX4, CopyAsync, AsyncWait)):
            return True
        for block in ("then", "orelse", "body"):
            if has_effects(getattr(s, block, ())):
                return True
    return False


class ExprLowering:
    # -- entry points ---------------------------------------------------------------------------
    def expr(self, node: ast.AST):
        kind = type(node)
        if kind in _REFUSED:
            what = _REFUSED[kind]
            msg = {"tuple": "tuples only appear in `a, b = x, y`", "buffer-slice": "buffers cannot be sliced; "
                   "index one element at a time"}.get(what, f"{kind.__name__.lower()} is not part of the kernel "
                                                      "subset (kernels hold scalars and buffers only)")
            raise self.err(what, msg, node)
        meth = getattr(self, "e_" + kind.__name__, None)
        if meth is None:
            raise self.err("unsupported-syntax", f"{kind.__name__} expressions are not part of the kernel subset",
                           node)
        out = meth(node)
        if isinstance(out, Lit):
            self.annotate(node, ("const", out.value))
            if out.node is None:            # a global or closure constant: the name is where it is written
                out = Lit(out.value, node)
        return out

    def value(self, node: ast.AST):
        """A scalar: Val or Lit."""
        v = self.expr(node)
        if v is None:                   # a call of a device function that returns nothing
            raise self.err("return-value", "this call has no value (a device function without `return value`, "
                           "or an intrinsic such as pt.store_x4); call it as a statement", node)
        if isinstance(v, Buf):
            raise self.err("buffer-as-value", f"buffer '{v.py_name}' used as a scalar value; index it", node)
        if isinstance(v, Static):
            raise self.err("unsupported-value", f"{_describe(v.obj)} is not a value a kernel can compute with",
                           node)
        return v

    def typed(self, v, node, dtype: DType | None = None) -> Val:
        """A Val; a literal takes `dtype` (or its default dtype)."""
        if isinstance(v, Val):
            return v
        d = dtype or default_dtype(v.value)
        return Val(self.lit_as(v, d, node), d)

    def cond(self, node: ast.AST):
        """A condition (if/while/assert/not/and/or): Val of bool or Lit(bool); numbers by truthiness."""
        if isinstance(node, ast.BoolOp):
            return self.bool_chain(node, node.values, self.cond)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            c = self.cond(node.operand)
            return Lit(not c.value) if isinstance(c, Lit) else Val(Unary("not", c.expr, dt.bool_), dt.bool_)
        return self.truthy(self.value(node))

    def truthy(self, v):
        if isinstance(v, Lit):
            return Lit(bool(v.value))
        if v.dtype is dt.bool_:
            return v
        return Val(Binary("ne", v.expr, const(0, v.dtype), dt.bool_), dt.bool_)

    # -- literals and names ---------------------------------------------------------------------
    def e_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):
            return Lit(v, node)
        if isinstance(v, (str, bytes)):
            raise self.err("string", "strings are not part of the kernel subset (only a docstring and an "
                           "assert message)", node)
        raise self.err("unsupported-value", f"{v!r} is not a value a kernel can compute with", node)

    def e_Name(self, node):
        return self.lookup(node.id, node)

    def e_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Static) and isinstance(base.obj, types.ModuleType):
            try:
                obj = getattr(base.obj, node.attr)
            except AttributeError:
                raise self.err("undefined-name", f"module '{base.obj.__name__}' has no attribute '{node.attr}'",
                               node) from None
            return self.classify(obj, node)
        what = (f"buffer '{base.py_name}'" if isinstance(base, Buf) else "a scalar" if isinstance(base, (Val, Lit))
                else _describe(base.obj))
        raise self.err("unsupported-attribute", f"attribute '.{node.attr}' of {what}: kernels only take attributes "
                       "of modules (pt.thread_index, pt.f32...)", node)

    def classify(self, obj, node):
        """A compile-time object found through globals, closure or a module attribute."""
        if isinstance(obj, (bool, int, float)) and not isinstance(obj, np.generic):
            return Lit(obj)
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            d = dt.as_dtype(obj.dtype)
            self.annotate(node, ("value", obj))
            return Val(const(obj.item(), d), d)
        return Static(obj)

    # -- operators ------------------------------------------------------------------------------
    def e_BinOp(self, node):
        a = self.value(node.left)
        mark = self.mark()
        b = self.value(node.right)
        a = self.spill_before(a, mark)
        return self.binop(node.op, a, b, node)

    def binop(self, op: ast.operator, a, b, node):
        if type(op) not in _BINOPS:
            raise self.err("unsupported-operator", f"operator {type(op).__name__} is not part of the kernel subset",
                           node)
        name, fold = _BINOPS[type(op)]
        if isinstance(a, Lit) and isinstance(b, Lit):
            return self.fold_arithmetic(fold, (a.value, b.value), node)
        ea, eb, t = self.unify(a, b, node)
        if dt.is_bool(t) and name not in ("and", "or", "xor"):
            raise self.err("invalid-operand", "arithmetic on bool values; cast with pt.i32(x) first", node)
        if name == "div" and not dt.is_float(t):
            raise self.err("int-true-division", f"'/' on {t.name} values: use '//' for floor division, or cast "
                           "to a float type first (pt.f32(x) / y)", node)
        if name == "pow" and not dt.is_float(t):
            raise self.err("unsupported-operator", f"'**' on {t.name} values; multiply, or use floats", node)
        if name in ("shl", "shr", "floordiv", "mod") and not dt.is_int(t):
            raise self.err("invalid-operand", f"'{_SYMBOL[name]}' needs integers, got {t.name}"
                           + ("; write pt.floor(a / b)" if name == "floordiv" else
                              "; write a - pt.floor(a / b) * b" if name == "mod" else ""), node)
        if name in ("and", "or", "xor") and dt.is_float(t):
            raise self.err("invalid-operand", f"'{_SYMBOL[name]}' needs integers or bools, got {t.name}", node)
        if name in _EMU_BINOP:
            self.annotate(node, ("binop", _EMU_BINOP[name], t))
        if name == "floordiv":
            return Val(self.floor_div(ea, eb, t), t)
        if name == "mod":
            return Val(self.floor_mod(ea, eb, t), t)
        return Val(Binary(name, ea, eb, t), t)

    def floor_div(self, a, b, t):
        if dt.is_unsigned(t):
            return Binary("div", a, b, t)
        a, b = self.simple(a), self.simple(b)
        q, r = Binary("div", a, b, t), Binary("rem", a, b, t)
        off = Binary("and", Binary("ne", r, const(0, t), dt.bool_),
                     Binary("lt", Binary("xor", r, b, t), const(0, t), dt.bool_), dt.bool_)
        return Binary("sub", q, Cast(off, t), t)

    def floor_mod(self, a, b, t):
        if dt.is_unsigned(t):
            return Binary("rem", a, b, t)
        b = self.simple(b)
        r = self.simple(Binary("rem", a, b, t))
        fix = Binary("and", Binary("ne", r, const(0, t), dt.bool_),
                     Binary("lt", Binary("xor", r, b, t), const(0, t), dt.bool_), dt.bool_)
        return Select(fix, Binary("add", r, b, t), r, t)

    def fold_arithmetic(self, fn, args, node):
        """A folded operator on literals. Python's float arithmetic overflows to inf without a word (`**`
        raises instead): a constant that overflows is an error, not an infinity stored later."""
        out = self.fold(fn, args, node)
        if isinstance(out.value, float) and math.isinf(out.value) and all(
                not isinstance(v, float) or math.isfinite(v) for v in args):
            raise self.err("constant-error", "constant expression overflows to infinity in Python's float64; "
                           "write math.inf if that is meant", node)
        return out

    def fold(self, fn, args, node):
        try:
            with np.errstate(all="ignore"):     # pt.sqrt(-1.0) folds to NaN, as the devices compute it
                out = fn(*args)
        except (ArithmeticError, ValueError, TypeError) as e:
            raise self.err("constant-error", f"constant expression fails in Python: {e}", node) from None
        if isinstance(out, (np.bool_, np.floating, np.integer)):
            out = out.item()
        if not isinstance(out, (bool, int, float)):
            raise self.err("unsupported-value", f"constant expression gives {out!r}", node)
        return Lit(out, node)

    def e_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return self.cond(node)
        v = self.value(node.operand)
        if isinstance(v, Lit):
            fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
            return self.fold(fn, (v.value,), node)
        if isinstance(node.op, ast.UAdd):
            return v
        if dt.is_bool(v.dtype):
            raise self.err("invalid-operand", "unary -/~ on a bool; use `not`", node)
        if isinstance(node.op, ast.Invert):
            if dt.is_float(v.dtype):
                raise self.err("invalid-operand", f"'~' needs an integer, got {v.dtype.name}", node)
            return Val(Unary("bitnot", v.expr, v.dtype), v.dtype)
        return Val(Unary("neg", v.expr, v.dtype), v.dtype)

    def e_Compare(self, node):
        for op in node.ops:
            if type(op) not in _CMPOPS:
                raise self.err("unsupported-operator", f"'{type(op).__name__}' comparisons are not part of the "
                               "kernel subset (use ==, !=, <, <=, >, >=)", node)
        left = self.value(node.left)
        state = {"left": left}

        def compare(i):
            def run():
                a = state["left"]
                mark = self.mark()
                b = self.value(node.comparators[i])
                a = self.spill_before(a, mark)
                if i + 1 < len(node.comparators) and isinstance(b, Val) and has_load(b.expr):
                    b = self.to_temp(b)
                state["left"] = b
                op = _CMPOPS[type(node.ops[i])]
                if isinstance(a, Lit) and isinstance(b, Lit):
                    return Lit(_CMPFOLD[op](a.value, b.value))
                ea, eb, _ = self.unify(a, b, node)
                return Val(Binary(op, ea, eb, dt.bool_), dt.bool_)
            return run

        first = compare(0)()
        if len(node.ops) == 1:
            return first
        return self.bool_chain(node, [first] + [compare(i) for i in range(1, len(node.ops))], None, op="and")

    def e_BoolOp(self, node):
        def as_bool(n):
            v = self.value(n)
            if isinstance(v, Lit) and isinstance(v.value, bool) or isinstance(v, Val) and v.dtype is dt.bool_:
                return v
            raise self.err("invalid-operand", "and/or on non-bool values outside a condition: compare explicitly "
                           "(x != 0)", n)
        return self.bool_chain(node, node.values, as_bool)

    def bool_chain(self, node, items, lower, op=None):
        """Python's short-circuit and/or over `items` (AST nodes lowered with `lower`, or callables, or a
        first value already lowered). An operand whose evaluation emits statements or loads memory is
        only evaluated when needed; the others combine into pure KIR `and`/`or`."""
        op = op or ("and" if isinstance(node.op, ast.And) else "or")
        acc = None
        for item in items:
            def run(item=item):
                if isinstance(item, (Val, Lit)):
                    return item
                return item() if callable(item) else lower(item)
            if acc is None:
                acc = run()
                continue
            if isinstance(acc, Lit):
                if (op == "and") != bool(acc.value):   # decided: False and ..., True or ...
                    return acc
                acc = run()
                continue
            stmts, v = self.capture(run)
            if isinstance(v, Lit):
                v = Val(const(bool(v.value), dt.bool_), dt.bool_)
            if not stmts and not has_load(v.expr):
                acc = Val(Binary(op, acc.expr, v.expr, dt.bool_), dt.bool_)
                continue
            t = self.new_temp(dt.bool_)
            self.emit_assign(t, acc.expr)
            test = Read(t, dt.bool_) if op == "and" else Unary("not", Read(t, dt.bool_), dt.bool_)
            self.emit(If(test, tuple(stmts) + (self.assign_stmt(t, v.expr),)))
            acc = Val(Read(t, dt.bool_), dt.bool_)
        return acc

    def e_IfExp(self, node):
        c = self.cond(node.test)
        if isinstance(c, Lit):
            return self.value(node.body if c.value else node.orelse)
        s1, a = self.capture(lambda: self.value(node.body))
        s2, b = self.capture(lambda: self.value(node.orelse))
        if isinstance(a, Lit) and isinstance(b, Lit):
            kind = "f" if "f" in (literal_kind(a.value), literal_kind(b.value)) else literal_kind(a.value)
            t = self.new_temp(None, literal=kind, node=node)
            d = self.local_dtype(t)
            ea, eb = self.lit_as(a, d, node), self.lit_as(b, d, node)
            # a branch's statements stay (a device function returning a literal may store or trap)
            self.emit(If(c.expr, tuple(s1) + (self.assign_stmt(t, ea),), tuple(s2) + (self.assign_stmt(t, eb),)))
            return Val(Read(t, d), d, local=t)
        ea, eb, d = self.unify(a, b, node)
        if not s1 and not s2 and not has_load(ea) and not has_load(eb):
            return Val(Select(c.expr, ea, eb, d), d)
        t = self.new_temp(d)
        self.emit(If(c.expr, tuple(s1) + (self.assign_stmt(t, ea),), tuple(s2) + (self.assign_stmt(t, eb),)))
        return Val(Read(t, d), d)

    # -- typing -----------------------------------------------------------------------------------
    def lit_as(self, lit: Lit, dtype: DType, node) -> Const:
        v = lit.value
        node = lit.node if lit.node is not None else node
        if not accepts_literal(literal_kind(v), dtype):
            raise self.err("ambiguous-types", f"the {type(v).__name__} literal {v!r} meets a {dtype.name} value; "
                           f"write a {dtype.name} literal or cast explicitly", node)
        if not fits(v, dtype):
            raise self.err("literal-out-of-range", f"{v!r} does not fit in {dtype.name}", node)
        c = const(v, dtype)
        self.note_literal(lit, c)
        return c

    def note_literal(self, lit: Lit, c: Const) -> None:
        """Tell the emulator the dtype a literal took. NumPy's weak scalars already round a Python number
        to the other operand's dtype, but ml_dtypes computes `bfloat16 * 0.9` in float32 with float32(0.9)
        (and returns float32): a literal meeting bf16 becomes the bf16 scalar of its KIR constant."""
        if lit.node is not None:
            value = c.dtype.np.type(c.value) if c.dtype is dt.bfloat16 else None
            self.annotate(lit.node, ("literal", value))

    def unify(self, a, b, node):
        """Operands of one binary operation: (expr a, expr b, dtype). A literal takes the other side's
        dtype; the same kind of different widths widens (like NumPy); different kinds need a cast."""
        if isinstance(a, Lit) and isinstance(b, Lit):
            a = self.typed(a, node)
        if isinstance(a, Lit):
            return self.lit_as(a, b.dtype, node), b.expr, b.dtype
        if isinstance(b, Lit):
            return a.expr, self.lit_as(b, a.dtype, node), a.dtype
        if a.dtype is b.dtype:
            return a.expr, b.expr, a.dtype
        for x, y in ((a, b), (b, a)):
            if x.local and not y.local and self.learn(x.local, y.dtype):
                raise Restart()
        if a.dtype.kind == b.dtype.kind and a.dtype.kind in "iuf":
            t = dt.result_type(a.dtype, b.dtype)
            return widen(a.expr, t), widen(b.expr, t), t
        raise self.err("ambiguous-types", f"{a.dtype.name} and {b.dtype.name} mixed without a cast; write "
                       f"pt.{b.dtype.short}(x) or pt.{a.dtype.short}(y) to say which", node)

    # -- subscripts -------------------------------------------------------------------------------
    def e_Subscript(self, node):
        buf = self.expr(node.value)
        if not isinstance(buf, Buf):
            raise self.err("unsupported-value", "only buffer parameters and shared arrays can be indexed", node)
        idx = self.index(buf, node)
        code = self.bounds_check(buf, idx, node)
        self.annotate(node, ("load", code))
        return Val(Load(buf.name, idx, buf.dtype), buf.dtype)

    def index(self, buf: Buf, node):
        sl = node.slice
        if isinstance(sl, ast.Slice):
            raise self.err("buffer-slice", f"buffer '{buf.py_name}' sliced; index one element at a time", sl)
        if isinstance(sl, ast.Tuple):
            raise self.err("multi-index", f"buffers are 1-D: compute the flat index of '{buf.py_name}'", sl)
        v = self.value(sl)
        if isinstance(v, Lit):
            if not isinstance(v.value, int) or isinstance(v.value, bool):
                raise self.err("invalid-operand", f"index {v.value!r} is not an integer", sl)
            if v.value < 0:
                raise self.err("negative-index", f"negative index {v.value} into '{buf.py_name}': buffers do not "
                               "wrap around", sl)
            return const(v.value, dt.uint32 if v.value < 2**32 else dt.uint64)
        if not dt.is_int(v.dtype):
            raise self.err("invalid-operand", f"index into '{buf.py_name}' is {v.dtype.name}; it must be an "
                           "integer", sl)
        return self.to_temp(v).expr if has_load(v.expr) else v.expr

    def bounds_check(self, buf: Buf, idx, node):
        if not self.checks:
            return None
        if buf.access is None and isinstance(idx, Const) and 0 <= idx.value < buf.size:
            return None                                   # statically in range
        code = self.trap_site(f"index out of range: {self.sc.info.segment(node)} (buffer '{buf.py_name}')", node)
        length = const(buf.size, dt.uint32) if buf.access is None else Len(buf.name)
        t = idx.dtype
        if t.bits < 32:
            idx, t = Cast(idx, dt.int32 if dt.is_signed(t) else dt.uint32), (dt.int32 if dt.is_signed(t)
                                                                           else dt.uint32)
        if dt.is_signed(t):
            t = dt.uint32 if t.bits == 32 else dt.uint64
            idx = Bitcast(idx, t)
        if t is dt.uint64:
            length = Cast(length, dt.uint64)
        self.emit(If(Binary("ge", idx, length, dt.bool_), (self.trap_stmt(code),)))
        return code


_SYMBOL = {"shl": "<<", "shr": ">>", "floordiv": "//", "mod": "%", "and": "&", "or": "|", "xor": "^"}


def _describe(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return f"module '{obj.__name__}'"
    if isinstance(obj, DType):
        return f"dtype {obj.name}"
    if isinstance(obj, ix.Intrinsic):
        return f"pt.{obj.name} (an intrinsic: call it)"
    if obj is None:
        return "None"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"{type(obj).__name__} '{name}'" if name else f"{type(obj).__name__} value"
