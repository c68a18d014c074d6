"""Call lowering for the kernel importer (a mixin of `importer.KernelImporter`): intrinsics, casts,
math functions, the allowed builtins, and device functions. Anything else is `unsupported-call`."""
from __future__ import annotations

import ast
import builtins
import types

import numpy as np

from poot import dtypes as dt
from poot.dtypes import DType
from poot.jit.kir.model import (FLOAT_BINARY, FLOAT_UNARY, PREDICATE_UNARY, AtomicAdd, Binary, Bitcast, Cast,
                         Fma, Index, Len, Read, Select, Unary)
from poot.jit.kir.verify import ATOMIC_DTYPES
from poot.kernel import emulate_ops as emu
from poot.kernel import intrinsics as ix
from poot.kernel import async_copy, scalar_ops, subgroup, warpgroup
from poot.kernel.values import Buf, Lit, Restart, Static, Val, const


def _builtin_name(obj) -> str | None:
    for fn, name in ix.BUILTINS.items():
        if obj is fn:
            return name
    return None


class CallLowering:
    def e_Call(self, node, want_result: bool = True):
        if node.keywords:
            raise self.err("bad-intrinsic-call", "keyword arguments are not part of the kernel subset", node)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.err("unsupported-syntax", "*args in a call is not part of the kernel subset", node)
        f = self.expr(node.func)
        if not isinstance(f, Static):
            raise self.err("unsupported-call", "only intrinsics, casts, math functions and @pt.device_fn "
                           "functions can be called in a kernel", node)
        obj = f.obj
        if isinstance(obj, ix.Intrinsic):
            return self.call_intrinsic(obj, node, want_result)
        if isinstance(obj, DType):
            return self.call_cast(obj, node)
        name = _builtin_name(obj)
        if name is not None:
            return self.call_builtin(name, node)
        op = ix.math_op_of(obj)
        if op is not None:
            return self.call_math(op, node)
        if isinstance(obj, ix.DeviceFunction):
            return self.inline(obj, node)
        if obj is float:
            return self.float_literal(node)
        if getattr(obj, "__poot_kernel__", False):
            if obj is self.kernel_object:
                raise self.err("recursion", "a kernel cannot call itself", node)
            raise self.err("unsupported-call", "a kernel cannot call another kernel; put the shared code in a "
                           "@pt.device_fn", node)
        raise self.err("unsupported-call", _call_hint(obj), node)

    def float_literal(self, node):
        """`float("inf")`, `float("nan")`, `float(2)`: a float literal, as Python folds it (the spelling
        of infinity and NaN in Python code). A computed value is cast with a dtype instead."""
        (arg,) = self.args(node, 1, "float()")
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, float)) \
                and not isinstance(arg.value, bool):
            try:
                return Lit(float(arg.value), node)
            except ValueError:
                raise self.err("bad-intrinsic-call", f"float({arg.value!r}) is not a number", node) from None
        raise self.err("unsupported-call", "float() in a kernel takes a literal (float('inf'), float('nan')); "
                       "cast a computed value with its dtype: pt.f32(x)", node)

    def args(self, node, n: int | tuple[int, int], what: str):
        lo, hi = (n, n) if isinstance(n, int) else n
        if not lo <= len(node.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise self.err("bad-intrinsic-call", f"{what} takes {want} argument(s), got {len(node.args)}", node)
        return node.args

    def call_note(self, node, impl, keep, *extras):
        self.annotate(node, ("call", impl, tuple(keep), extras))

    # -- intrinsics ----------------------------------------------------------------------------
    def call_intrinsic(self, obj: ix.Intrinsic, node, want_result: bool):
        k = obj.kind
        if k in ("thread", "local", "group", "group_size", "num_groups"):
            axis = obj.axis
            if axis is None:
                args = self.args(node, (0, 1), f"pt.{obj.name}")
                axis = 0
                if args:
                    a = self.value(args[0])
                    if not isinstance(a, Lit) or a.value not in (0, 1, 2) or isinstance(a.value, bool):
                        raise self.err("bad-intrinsic-call", f"pt.{obj.name}(axis): axis must be the constant "
                                       "0, 1 or 2", args[0])
                    axis = a.value
            else:
                self.args(node, 0, f"pt.{obj.name}")
            self.call_note(node, emu.index, (), k, axis)
            return Val(Index(k, axis), dt.uint32)
        if k == "barrier":
            raise self.err("bad-intrinsic-call", "pt.workgroup_barrier() is a statement of its own", node)
        if k == "shared":
            raise self.err("shared-declaration", "pt.shared(dtype, size) only appears as `name = pt.shared(...)`",
                           node)
        if k == "atomic_add":
            return self.call_atomic(node, want_result)
        if k in ix.SUBGROUP:
            return subgroup.call_subgroup(self, obj, node)
        if k in ix.WIDE_MEMORY:
            return async_copy.call_wide_memory(self, obj, node, want_result)
        if k in ix.WARPGROUP:
            return warpgroup.call_warpgroup(self, obj, node, want_result)
        if k == "no_contract_add":
            a, b = (self.value(x) for x in self.args(node, 2, "pt.no_contract_add"))
            ea, eb, t = self.unify(self.typed(a, node) if isinstance(b, Lit) else a, b, node)
            if not dt.is_float(t):
                raise self.err("invalid-operand", f"pt.no_contract_add needs floats, got {t.name}", node)
            self.call_note(node, emu.binary, (0, 1), "add_nocontract", t)
            return Val(Binary("add_nocontract", ea, eb, t), t)
        if k == "bitcast":
            x_node, d_node = self.args(node, 2, "pt.bitcast")
            d = self.expr(d_node)
            if not isinstance(d, Static) or not isinstance(d.obj, DType):
                raise self.err("bad-intrinsic-call", "pt.bitcast(x, dtype): the second argument must be a dtype",
                               d_node)
            d = d.obj
            x = self.value(x_node)
            if isinstance(x, Lit):
                x = self.typed(x, x_node, {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}[d.bits]
                               if isinstance(x.value, int) else dt.as_dtype(f"float{d.bits}"))
            if dt.is_bool(d) or dt.is_bool(x.dtype) or d.bits != x.dtype.bits:
                raise self.err("invalid-operand", f"pt.bitcast from {x.dtype.name} to {d.name}: both must be "
                               "non-bool types of the same width", node)
            self.call_note(node, emu.bitcast, (0,), x.dtype, d)
            return Val(Bitcast(x.expr, d) if x.dtype is not d else x.expr, d)
        if k == "fma":
            a, b, c = (self.value(x) for x in self.args(node, 3, "pt.fma"))
            typed = [v for v in (a, b, c) if isinstance(v, Val)]
            t = typed[0].dtype if typed else dt.float32
            for v in typed[1:]:
                _, _, t2 = self.unify(typed[0], v, node)
                t = t2 if t2.bits > t.bits else t
            if not dt.is_float(t):
                raise self.err("invalid-operand", f"pt.fma needs floats, got {t.name}", node)
            ea, eb, ec = (self.lit_as(v, t, node) if isinstance(v, Lit) else
                          (v.expr if v.dtype is t else Cast(v.expr, t)) for v in (a, b, c))
            self.call_note(node, emu.fma, (0, 1, 2), t)
            return Val(Fma(ea, eb, ec, t), t)
        raise self.err("unsupported-call", f"pt.{obj.name} is not callable here", node)

    def call_atomic(self, node, want_result: bool):
        b_node, i_node, v_node = self.args(node, 3, "pt.atomic_add")
        buf = self.expr(b_node)
        if not isinstance(buf, Buf):
            raise self.err("bad-intrinsic-call", "pt.atomic_add(buffer, index, value): the first argument must "
                           "be a buffer or shared array", b_node)
        if not buf.writable:
            raise self.err("write-to-input", f"atomic add into '{buf.py_name}', an In buffer; declare it "
                           "pt.InOut[...] or pt.Out[...]", node)
        if buf.dtype not in ATOMIC_DTYPES:
            raise self.err("invalid-operand", f"atomic add on {buf.dtype.name}; supported: "
                           + ", ".join(d.name for d in ATOMIC_DTYPES), node)
        idx = self.index_of(buf, i_node)
        v = self.value(v_node)
        if isinstance(v, Lit):
            ev = self.lit_as(v, buf.dtype, v_node)
        elif v.dtype is buf.dtype:
            ev = v.expr
        else:
            if v.local and self.learn(v.local, buf.dtype):
                raise Restart()
            raise self.err("ambiguous-types", f"atomic add of a {v.dtype.name} into {buf.dtype.name} buffer "
                           f"'{buf.py_name}'; cast with pt.{buf.dtype.short}(...)", v_node)
        code = self.bounds_check(buf, idx, node)
        if buf.access is None and dt.is_float(buf.dtype):
            self.shared_float_atomics.append((buf.py_name, self.sc.info.where(node)))
        if buf.dtype.bits == 64 and dt.is_int(buf.dtype):
            self.wide_atomics.append((buf.py_name, buf.dtype.name, self.sc.info.where(node)))
        self.call_note(node, emu.atomic_add, (0, 1, 2), code)
        result = self.new_temp(buf.dtype) if want_result else None
        self.emit(AtomicAdd(buf.name, idx, ev, result))
        return Val(Read(result, buf.dtype), buf.dtype) if result else None

    def index_of(self, buf: Buf, node):
        return self.index(buf, types.SimpleNamespace(slice=node))

    # -- casts, builtins, math -------------------------------------------------------------------
    def call_cast(self, d: DType, node):
        (x_node,) = self.args(node, 1, f"pt.{d.short}")
        x = self.value(x_node)
        self.call_note(node, emu.cast, (0,), d)
        if isinstance(x, Lit):
            out = scalar_ops.cast(x.value, d)
            return Val(const(out.item() if hasattr(out, "item") else out, d), d)
        return Val(x.expr if x.dtype is d else Cast(x.expr, d), d)

    def call_builtin(self, name: str, node):
        if name == "range":
            raise self.err("range", "range() only appears as `for i in range(...)`", node)
        if name == "len":
            (b_node,) = self.args(node, 1, "len")
            buf = self.expr(b_node)
            if not isinstance(buf, Buf):
                raise self.err("invalid-operand", "len() takes a buffer or a shared array", node)
            self.call_note(node, emu.length, (0,))
            return Val(Len(buf.name) if buf.access is not None else const(buf.size, dt.uint32), dt.uint32)
        if name == "abs":
            (x_node,) = self.args(node, 1, "abs")
            return self.math_unary("abs", node, self.value(x_node))
        args = [self.value(a) for a in self.args(node, (2, 64), name)]
        acc = args[0]
        for v in args[1:]:
            acc = self.math_binary("min" if name == "min" else "max", node, acc, v, note=False)
        self.call_note(node, emu.min_max, range(len(args)), name)
        return acc

    def call_math(self, op: str, node):
        if op == "select":
            c_node, a_node, b_node = self.args(node, 3, "where")
            c = self.cond(c_node)
            a, b = self.value(a_node), self.value(b_node)
            if isinstance(c, Lit):
                self.call_note(node, emu.select, (0, 1, 2))
                return a if c.value else b
            ea, eb, t = self.unify(self.typed(a, node) if isinstance(b, Lit) and isinstance(a, Lit) else a, b, node)
            self.call_note(node, emu.select, (0, 1, 2))
            return Val(Select(c.expr, ea, eb, t), t)
        if op in ix.UNARY_OPS:
            (x_node,) = self.args(node, 1, op)
            return self.math_unary(op, node, self.value(x_node))
        a_node, b_node = self.args(node, 2, op)
        return self.math_binary(op, node, self.value(a_node), self.value(b_node))

    def math_unary(self, op: str, node, x):
        self.call_note(node, emu.unary, (0,), op)
        if isinstance(x, Lit):
            if op in ("abs", "neg") and isinstance(x.value, int) and not isinstance(x.value, bool):
                return Lit(abs(x.value) if op == "abs" else -x.value)
            return self.fold(lambda v: scalar_ops.unary(op, np.float64(v)), (x.value,), node)
        if op in FLOAT_UNARY and not dt.is_float(x.dtype):
            raise self.err("invalid-operand", f"{op} needs a float, got {x.dtype.name}; cast with pt.f32(x)", node)
        if dt.is_bool(x.dtype):
            raise self.err("invalid-operand", f"{op} does not take bool", node)
        return Val(Unary(op, x.expr, dt.bool_ if op in PREDICATE_UNARY else x.dtype),
                   dt.bool_ if op in PREDICATE_UNARY else x.dtype)

    def math_binary(self, op: str, node, a, b, note: bool = True):
        if note:
            self.call_note(node, emu.binary, (0, 1), op, None)
        if isinstance(a, Lit) and isinstance(b, Lit):
            if op in ("min", "max"):
                return self.fold(lambda p, q: min(p, q) if op == "min" else max(p, q), (a.value, b.value), node)
            return self.fold(lambda p, q: scalar_ops.binary(op, np.float64(p), np.float64(q)),
                             (a.value, b.value), node)
        ea, eb, t = self.unify(a, b, node)
        if op in FLOAT_BINARY and not dt.is_float(t):
            raise self.err("invalid-operand", f"{op} needs floats, got {t.name}", node)
        if dt.is_bool(t):
            raise self.err("invalid-operand", f"{op} does not take bool", node)
        return Val(Binary(op, ea, eb, t), t)


def _call_hint(obj) -> str:
    if obj is builtins.print:
        return "print() in a kernel: kernels cannot do I/O (use kernel.emulate(...) and print there)"
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, np.ufunc) or mod in ("math", "cmath") or mod.startswith("numpy"):
        return f"{mod or 'numpy'}.{name} cannot be called in a kernel; use the poot function (pt.{name}) instead"
    if _is_poot_array_function(obj, name):
        return (f"pt.{name} is an array-level poot function (it runs on whole arrays, outside kernels), not a "
                "kernel intrinsic; compute it element by element in the kernel (a loop, or a reduction over "
                "pt.shared memory), or call it on the arrays before or after the launch")
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return f"'{name}' is an ordinary Python function; mark it @pt.device_fn to call it from a kernel"
    if isinstance(obj, type):
        return f"'{name}' is a class; kernels cannot create objects"
    return f"{type(obj).__name__} object is not callable in a kernel"


def _is_poot_array_function(obj, name: str) -> bool:
    """Whether `obj` is one of poot's own array functions (pt.sum...): `@pt.device_fn` cannot apply.
    Told by the module it says it is from: the kernel layer does not import the namespace above it."""
    module = getattr(obj, "__module__", None) or ""
    return callable(obj) and (module == "poot" or module.startswith("poot.trace")) \
        and not isinstance(obj, ix.Intrinsic)
