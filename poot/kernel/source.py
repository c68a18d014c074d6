"""Finding a Python function's source as an AST (the whole file is parsed, so line and column numbers are
the file's own)."""
from __future__ import annotations

import ast
import linecache

from poot.errors import KernelImportError
from poot.kernel.diagnostics import SourceInfo, code

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
