"""Named diagnostics of the kernel importer: every refusal is a `poot.KernelImportError` with a stable
code `kernel-import::<what>`, the location `file:line:col` (col 0-based, as Python's `ast` counts) and
the source line with a caret. The codes are part of the API (docs/kernels.md lists them; tests assert
them): add new ones, never rename one."""
from __future__ import annotations

import ast

from poot.errors import KernelImportError

PREFIX = "kernel-import::"

CODES = {
    # source and signature
    "no-source": "the kernel's Python source cannot be read (defined in a REPL or exec string?)",
    "bad-signature": "*args, **kwargs, keyword-only or defaulted parameters",
    "missing-annotation": "a parameter without an annotation",
    "bad-annotation": "an annotation that is neither pt.In/Out/InOut[dtype] nor a dtype",
    "bad-kernel-config": "a bad workgroup size or option of @pt.kernel, or an option it does not take",
    # syntax the subset leaves out
    "list": "a list display", "dict": "a dict display", "set": "a set display",
    "tuple": "a tuple outside `a, b = x, y`", "comprehension": "a comprehension or generator expression",
    "string": "a string (other than a docstring or an assert message)", "fstring": "an f-string",
    "try": "try/except/finally", "with": "a with statement", "yield": "yield, yield from or await",
    "lambda": "a lambda", "nested-definition": "a def or class inside a kernel",
    "import": "an import statement", "raise": "raise (use assert)", "del": "del",
    "loop-else": "an else clause on a loop", "unsupported-syntax": "any other statement or expression",
    # names, calls and attributes
    "undefined-name": "a name that resolves to nothing", "unsupported-value": "a name or value of a kind "
    "kernels cannot hold (a module, a function, None...)",
    "unsupported-call": "a call to anything but an intrinsic, a math function, a cast or a @pt.device_fn",
    "unsupported-attribute": "an attribute of a value that is not a module or namespace of intrinsics",
    "recursion": "a kernel or device function that calls itself",
    "global-mutation": "global/nonlocal, or writing into an object outside the kernel",
    "bad-intrinsic-call": "an intrinsic called with the wrong arguments",
    # buffers
    "buffer-slice": "a slice of a buffer", "multi-index": "more than one index into a 1-D buffer",
    "buffer-as-value": "a buffer used where a scalar is needed", "write-to-input": "a write into an In buffer",
    "negative-index": "a negative constant index (buffers do not wrap around)",
    "shared-declaration": "pt.shared(...) not of the form `name = pt.shared(dtype, size)` with constant size",
    "shared-too-large": "shared arrays whose bytes exceed what the device (or any device: 2 GiB) allows a workgroup",
    # types
    "ambiguous-types": "two values of different kinds (signed/unsigned/float/bool) mixed without a cast",
    "type-change": "a local assigned a value of another dtype than it holds",
    "literal-out-of-range": "a literal that does not fit the dtype the context gives it",
    "int-true-division": "`/` on integers (use `//`, or cast to a float type)",
    "invalid-operand": "an operator or function applied to a dtype it does not take",
    "unsupported-operator": "is, in, @, ** on integers",
    "constant-error": "a constant expression that fails in Python (e.g. division by zero)",
    # variables and control flow
    "unbound-local": "a local read where it may not have been assigned",
    "assign-to-parameter": "assigning to a parameter name", "range": "a for loop over something other than "
    "range(...), or a range with a step that is not a non-zero constant",
    "loop-variable": "assigning a for-loop variable in its loop, or reading it after the loop",
    "return-value": "a kernel that returns a value, a device function returning one on some paths only, "
    "or the value of a call that returns none", "divergent-barrier": "a barrier under control flow "
    "that depends on the thread (or after a thread-dependent return/break)",
}


def code(what: str) -> str:
    if what not in CODES:
        raise KeyError(f"unknown kernel-import diagnostic {what!r}")
    return PREFIX + what


class SourceInfo:
    """Where a function's source lives, for located diagnostics."""

    def __init__(self, file: str, lines: list[str], display: str | None = None):
        self.file, self.lines = file, lines
        self.display = display or file

    def line(self, lineno: int) -> str | None:
        return self.lines[lineno - 1].rstrip("\n") if 0 < lineno <= len(self.lines) else None

    def where(self, node: ast.AST | None) -> str:
        return f"{self.display}:{getattr(node, 'lineno', 0)}"

    def segment(self, node: ast.AST) -> str:
        """The source text of `node` (its first line if it spans several)."""
        text = self.line(getattr(node, "lineno", 0)) or ""
        start = getattr(node, "col_offset", 0)
        end = node.end_col_offset if getattr(node, "end_lineno", None) == node.lineno else len(text)
        return text[start:end].strip()

    def error(self, what: str, message: str, node: ast.AST | None) -> KernelImportError:
        line = getattr(node, "lineno", 0) or 0
        col = getattr(node, "col_offset", 0) or 0
        return KernelImportError(code(what), message, self.display, line, col, self.line(line))
