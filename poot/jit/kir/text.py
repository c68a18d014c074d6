"""A readable, Python-like text form of KIR (what POOT_DEBUG=3 prints). For people, not for parsing:
the exchange format is the JSON of serialize.py.

    kernel add(a: in f32[], b: in f32[], c: out f32[], n: u32)  workgroup=(64, 1, 1) checks
      local i: u32
      i = thread.x
      if i < len(c):
        c[i] = a[i] + b[i]
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.jit.kir.model import (Assign, AsyncCommit, AsyncWait, AtomicAdd, Barrier, Binary, Bitcast, Break,
                    BufferParam, Cast, Const, Continue, CopyAsync, FenceProxyAsync, Fma, For, If, Index, Kernel,
                    LdMatrix, Len, Load, LoadX4, MMA_SHAPES, Mma, Read, Return, Select, Shuffle, ShuffleXor, Store,
                    StoreX4, Trap, Unary, Wgmma, While)

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "and": "&", "or": "|", "xor": "^",
          "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
          "add_nocontract": "+!"}
_AXES = "xyz"


def format_expr(e) -> str:
    if isinstance(e, Const):
        if dt.is_float(e.dtype):
            v = repr(float(e.value))
            return v if e.dtype is dt.float32 else f"{e.dtype.short}({v})"
        if dt.is_bool(e.dtype):
            return "True" if e.value else "False"
        return str(e.value) if e.dtype in (dt.int32, dt.uint32) else f"{e.dtype.short}({e.value})"
    if isinstance(e, Read):
        return e.name
    if isinstance(e, Load):
        return f"{e.buffer}[{format_expr(e.index)}]"
    if isinstance(e, Len):
        return f"len({e.buffer})"
    if isinstance(e, Index):
        return f"{e.kind}.{_AXES[e.axis] if e.axis in (0, 1, 2) else e.axis}"
    if isinstance(e, Unary):
        if e.op == "neg":
            return f"-{_atom(e.x)}"
        if e.op == "not":
            return f"not {_atom(e.x)}"
        if e.op == "bitnot":
            return f"~{_atom(e.x)}"
        return f"{e.op}({format_expr(e.x)})"
    if isinstance(e, Binary):
        if e.op in _INFIX:
            return f"{_atom(e.a)} {_INFIX[e.op]} {_atom(e.b)}"
        return f"{e.op}({format_expr(e.a)}, {format_expr(e.b)})"
    if isinstance(e, Select):
        return f"({format_expr(e.a)} if {format_expr(e.cond)} else {format_expr(e.b)})"
    if isinstance(e, Fma):
        return f"fma({format_expr(e.a)}, {format_expr(e.b)}, {format_expr(e.c)})"
    if isinstance(e, Cast):
        return f"{e.dtype.short}({format_expr(e.x)})"
    if isinstance(e, Bitcast):
        return f"bitcast[{e.dtype.short}]({format_expr(e.x)})"
    if isinstance(e, ShuffleXor):
        return f"shuffle_xor({format_expr(e.x)}, {e.mask})"
    if isinstance(e, Shuffle):
        return f"shuffle({format_expr(e.x)}, {format_expr(e.index)})"
    if isinstance(e, Mma):
        parts = ", ".join("[" + ", ".join(format_expr(x) for x in xs) + "]" for xs in (e.a, e.b, e.c))
        op = MMA_SHAPES[e.shape].op if e.shape in MMA_SHAPES else f"mma_{e.shape}"
        return f"{op}({parts})[{e.elem}]"
    if isinstance(e, LdMatrix):
        return f"ldmatrix_x4{'_trans' if e.trans else ''}({e.shared}, {format_expr(e.index)})[{e.elem}]"
    if isinstance(e, LoadX4):
        return f"load_x4({e.buffer}, {format_expr(e.index)})[{e.elem}]"
    if isinstance(e, Wgmma):
        c = ", ".join(format_expr(x) for x in e.c)
        return (f"wgmma_m64n{e.n}k64{'_bt' if e.bt else ''}[{e.inputs}]({e.a_shared}, {format_expr(e.a_index)}, {e.b_shared}, "
                f"{format_expr(e.b_index)}, [{c}])[{e.elem}]")
    return f"<{type(e).__name__}?>"


def _atom(e) -> str:
    s = format_expr(e)
    return f"({s})" if isinstance(e, Binary) and e.op in _INFIX else s


def _stmts(body, depth: int, out: list) -> None:
    pad = "  " * depth
    for s in body:
        if isinstance(s, Assign):
            out.append(f"{pad}{s.name} = {format_expr(s.value)}")
        elif isinstance(s, Store):
            out.append(f"{pad}{s.buffer}[{format_expr(s.index)}] = {format_expr(s.value)}")
        elif isinstance(s, AtomicAdd):
            lhs = f"{s.result} = " if s.result else ""
            out.append(f"{pad}{lhs}atomic_add({s.buffer}[{format_expr(s.index)}], {format_expr(s.value)})")
        elif isinstance(s, If):
            out.append(f"{pad}if {format_expr(s.cond)}:")
            _stmts(s.then, depth + 1, out)
            if s.orelse:
                out.append(f"{pad}else:")
                _stmts(s.orelse, depth + 1, out)
        elif isinstance(s, For):
            step = f", {s.step}" if s.step != 1 else ""
            out.append(f"{pad}for {s.var} in range({format_expr(s.start)}, {format_expr(s.stop)}{step}):")
            _stmts(s.body, depth + 1, out)
        elif isinstance(s, While):
            out.append(f"{pad}while {format_expr(s.cond)}:")
            _stmts(s.body, depth + 1, out)
        elif isinstance(s, Trap):
            out.append(f"{pad}trap({s.code})")
        elif isinstance(s, StoreX4):
            vals = ", ".join(format_expr(v) for v in s.values)
            out.append(f"{pad}store_x4({s.buffer}, {format_expr(s.index)}, {vals})")
        elif isinstance(s, CopyAsync):
            out.append(f"{pad}copy_async({s.dst}, {format_expr(s.dst_index)}, {s.src}, {format_expr(s.src_index)}, "
                       f"{format_expr(s.ok)})")
        elif isinstance(s, AsyncCommit):
            out.append(f"{pad}copy_async_commit()")
        elif isinstance(s, AsyncWait):
            out.append(f"{pad}copy_async_wait({s.pending})")
        elif isinstance(s, FenceProxyAsync):
            out.append(f"{pad}fence_proxy_async()")
        elif isinstance(s, (Break, Continue, Return, Barrier)):
            out.append(pad + {Break: "break", Continue: "continue", Return: "return",
                              Barrier: "barrier()"}[type(s)])
        else:
            out.append(f"{pad}<{type(s).__name__}?>")


def format_kernel(kernel: Kernel) -> str:
    """The kernel as indented, Python-like text."""
    params = []
    for p in kernel.params:
        if isinstance(p, BufferParam):
            params.append(f"{p.name}: {p.access.value} {p.dtype.short}[]")
        else:
            params.append(f"{p.name}: {p.dtype.short}")
    head = (f"kernel {kernel.name}({', '.join(params)})  workgroup={tuple(kernel.workgroup)}"
            + (" checks" if kernel.checks else ""))
    out = [head]
    out += [f"  shared {s.name}: {s.dtype.short}[{s.size}]" for s in kernel.shared]
    out += [f"  local {v.name}: {v.dtype.short}" for v in kernel.locals]
    out += [f"  trap {t.code}: {t.what}" + (f" at {t.where}" if t.where else "") for t in kernel.traps]
    _stmts(kernel.body, 1, out)
    return "\n".join(out) + "\n"


__all__ = ["format_kernel", "format_expr"]
