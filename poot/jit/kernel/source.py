"""Finding a Python function's source as an AST (the whole file is parsed, so line and column numbers are
the file's own), and the uniformity check that places a divergent barrier at its source line."""
from __future__ import annotations

import ast
import linecache

from ...errors import KernelImportError
from ..kir.model import (AtomicAdd, Assign, Barrier, Break, Const, Continue, For, If, Index, Len, Load,
                         Read, Return, While)
from .diagnostics import SourceInfo, code

_TREES: dict[tuple[str, int], ast.Module] = {}


def function_source(fn, display: str | None = None) -> tuple[SourceInfo, ast.FunctionDef]:
    """The SourceInfo of `fn`'s file and its `def` node. Raises `kernel-import::no-source`."""
    fn = getattr(fn, "__wrapped__", fn)
    code_obj = getattr(fn, "__code__", None)
    if code_obj is None:
        raise KernelImportError(code("no-source"), f"{fn!r} is not a Python function")
    file = code_obj.co_filename
    lines = linecache.getlines(file, getattr(fn, "__globals__", None))
    where = f"{fn.__qualname__} ({file}:{code_obj.co_firstlineno})"
    if not lines or fn.__name__ == "<lambda>":
        raise KernelImportError(code("no-source"), f"cannot read the source of {where}: kernels must be `def` "
                                "functions in a file", file, code_obj.co_firstlineno, 0)
    text = "".join(lines)
    key = (file, hash(text))
    tree = _TREES.get(key)
    if tree is None:
        tree = _TREES[key] = ast.parse(text, filename=file)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code_obj.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code_obj.co_firstlineno or node.lineno == code_obj.co_firstlineno:
                info = SourceInfo(file, lines, display)
                if isinstance(node, ast.AsyncFunctionDef):
                    raise info.error("unsupported-syntax", "a kernel cannot be `async def`", node)
                return info, node
    raise KernelImportError(code("no-source"), f"cannot find the definition of {where} in its file (was the "
                            "file edited since it was imported?)", file, code_obj.co_firstlineno, 0)


def fresh_copy(node: ast.FunctionDef) -> ast.FunctionDef:
    """A deep copy, so each import (and each inlined call) owns its nodes."""
    import copy

    return copy.deepcopy(node)


# --- barriers under thread-dependent control flow ------------------------------------------------
def divergent_barrier(body) -> Barrier | None:
    """The first Barrier reached under control flow that may differ between the threads of a workgroup
    (the rules of the KIR verifier's uniformity analysis), or None."""
    divergent: set[str] = set()
    while True:
        before = len(divergent)
        found = _Walk(divergent).walk(body, False)
        if len(divergent) == before:
            return found


class _Walk:
    def __init__(self, divergent: set[str]):
        self.div_locals = divergent
        self.returned = False
        self.found = None

    def div(self, e) -> bool:
        if isinstance(e, Index):
            return e.kind in ("thread", "local")
        if isinstance(e, Read):
            return e.name in self.div_locals
        if isinstance(e, Load):
            return self.div(e.index)
        if isinstance(e, (Const, Len)):
            return False
        return any(self.div(getattr(e, f)) for f in ("x", "a", "b", "c", "cond") if hasattr(e, f))

    def exits(self, body, div: bool, loop_level: bool) -> bool:
        for s in body:
            if isinstance(s, (Break, Continue)) and loop_level and div:
                return True
            if isinstance(s, Return) and div:
                return True
            if isinstance(s, If):
                d = div or self.div(s.cond)
                if self.exits(s.then, d, loop_level) or self.exits(s.orelse, d, loop_level):
                    return True
            if isinstance(s, For):
                if self.exits(s.body, div or self.div(s.start) or self.div(s.stop), False):
                    return True
            if isinstance(s, While):
                if self.exits(s.body, div or self.div(s.cond), False):
                    return True
        return False

    def walk(self, body, div: bool):
        for s in body:
            div = div or self.returned
            if isinstance(s, Assign):
                if div or self.div(s.value):
                    self.div_locals.add(s.name)
            elif isinstance(s, AtomicAdd):
                if s.result is not None:
                    self.div_locals.add(s.result)
            elif isinstance(s, If):
                d = div or self.div(s.cond)
                self.walk(s.then, d)
                self.walk(s.orelse, d)
            elif isinstance(s, (For, While)):
                if isinstance(s, For):
                    d = div or self.div(s.start) or self.div(s.stop)
                    if d:
                        self.div_locals.add(s.var)
                else:
                    d = div or self.div(s.cond)
                d = d or self.exits(s.body, False, True)
                self.walk(s.body, d)
            elif isinstance(s, Return):
                if div:
                    self.returned = True
            elif isinstance(s, Barrier) and div and self.found is None:
                self.found = s
        return self.found
