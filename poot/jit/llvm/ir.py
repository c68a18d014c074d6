"""A small textual LLVM IR writer: functions as lists of blocks, fresh SSA names, a separate entry
preamble (allocas and loop-invariant loads that must dominate everything), and constants spelled the
way LLVM's parser wants them. The lowering writes text rather than using llvmlite.ir so that target
extension types, calling conventions and attributes of any target can be spelled directly."""
from __future__ import annotations

import struct

from poot import dtypes as dt


def reg_type(dtype) -> str:
    """The LLVM type a KIR value of `dtype` lives in while computed (f16/bf16 compute in float)."""
    if dtype is dt.bool_:
        return "i1"
    if dt.is_int(dtype):
        return f"i{dtype.bits}"
    return "double" if dtype is dt.float64 else "float"


def mem_type(dtype) -> str:
    """The LLVM type a KIR value of `dtype` is stored as in memory."""
    if dtype is dt.bool_:
        return "i8"
    if dtype is dt.float16:
        return "half"
    if dtype is dt.bfloat16:
        return "i16"
    return reg_type(dtype)


def float_const(value: float) -> str:
    """An LLVM float/double literal: the hex of the value as a double (exact for float values)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def int_const(value: int, bits: int) -> str:
    v = int(value) & ((1 << bits) - 1)
    return str(v - (1 << bits) if bits > 1 and v >= 1 << (bits - 1) else v)


def const(value, dtype) -> str:
    if dtype is dt.bool_:
        return "true" if value else "false"
    if dt.is_int(dtype):
        return int_const(value, dtype.bits)
    return float_const(value)


class Func:
    """One function body under construction."""

    def __init__(self, prefix: str = "v"):
        self.prefix = prefix
        self.preamble: list[str] = []
        self.blocks: list[tuple[str, list[str]]] = []
        self.lines: list[str] = []
        self.count = 0
        self.terminated = False
        self.start("entry")

    def tmp(self, hint: str = "") -> str:
        self.count += 1
        return f"%{hint or self.prefix}{self.count}"

    def label(self, hint: str) -> str:
        self.count += 1
        return f"{hint}.{self.count}"

    def start(self, label: str) -> None:
        self.lines = []
        self.blocks.append((label, self.lines))
        self.terminated = False

    def emit(self, line: str) -> None:
        if self.terminated:                 # code after a branch/return: give it an unreachable block
            self.start(self.label("dead"))
        self.lines.append("  " + line)

    def op(self, text: str, hint: str = "") -> str:
        v = self.tmp(hint)
        self.emit(f"{v} = {text}")
        return v

    def entry_op(self, text: str, hint: str = "") -> str:
        """An instruction placed at the top of the entry block (dominates every use)."""
        v = self.tmp(hint)
        self.preamble.append(f"  {v} = {text}")
        return v

    def term(self, line: str) -> None:
        self.emit(line)
        self.terminated = True

    def br(self, label: str) -> None:
        self.term(f"br label %{label}")

    def cbr(self, cond: str, a: str, b: str) -> None:
        self.term(f"br i1 {cond}, label %{a}, label %{b}")

    def render(self, header: str) -> str:
        if not self.terminated:
            raise AssertionError("function body does not end with a terminator")
        out = [header + " {"]
        for i, (label, lines) in enumerate(self.blocks):
            out.append(f"{label}:")
            if i == 0:
                out.extend(self.preamble)
            out.extend(lines)
            if not lines or not (lines[-1].lstrip().startswith(("br ", "ret", "unreachable", "switch"))):
                out.append("  unreachable")
        out.append("}")
        return "\n".join(out) + "\n"


class Module:
    """Declarations and definitions gathered while lowering one kernel."""

    def __init__(self, triple: str, datalayout: str):
        self.triple, self.datalayout = triple, datalayout
        self.decls: dict[str, str] = {}
        self.globals: list[str] = []
        self.functions: list[str] = []
        self.attributes: list[str] = []
        self.fn_attrs = ""            # target attributes every function carries ("target-cpu"=...)
        self.math_lanes: tuple[int, ...] = ()   # vector widths of mathlib's CPU variants (mathvec.py)

    def declare(self, name: str, text: str) -> str:
        self.decls.setdefault(name, text)
        return name

    def intrinsic(self, name: str, ret: str, args: str) -> str:
        """Declare `@name` (an LLVM intrinsic) once and return '@name'."""
        self.declare(name, f"declare {ret} @{name}({args})")
        return "@" + name

    def render(self) -> str:
        head = [f'target datalayout = "{self.datalayout}"', f'target triple = "{self.triple}"', ""]
        attrs = [f"attributes #0 = {{ nounwind {self.fn_attrs} }}",
                 f"attributes #1 = {{ alwaysinline nounwind willreturn memory(none) {self.fn_attrs} }}"]
        return "\n".join(head + self.globals + [""] + sorted(self.decls.values()) + [""]
                          + self.functions + attrs + self.attributes) + "\n"


__all__ = ["Func", "Module", "reg_type", "mem_type", "float_const", "int_const", "const"]
