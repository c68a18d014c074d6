"""The layers of docs/architecture.md as a test: which part of poot may import which.

Every import in the package (module level or inside a function: a lazy import is still an arrow) is
mapped to the part it names, and each part may only import the parts listed for it below. The table
is a DAG, so a test pass also means no circle between parts.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "poot"
BASE = {"base"}   # poot/dtypes.py, poot/errors.py, poot/env.py, poot/_version.py: used everywhere, import nothing above

# part -> the parts it may import (besides itself and the base modules)
ALLOWED = {
    "base": set(),
    "graph": set(),
    "devices": set(),
    "fuse": {"graph"},
    "jit.kir": set(),
    "jit.llvm": {"jit.kir", "devices"},
    "jit.codegen": {"jit.kir", "jit.llvm", "fuse", "graph"},   # jit.llvm: the target registry's facts
    "jit.runtime": {"jit.codegen", "jit.llvm", "jit.kir", "fuse", "graph", "devices"},
    "kernel": {"jit.runtime", "jit.llvm", "jit.kir", "devices"},
    "trace": {"kernel", "jit.runtime", "jit.llvm", "jit.codegen", "jit.kir", "fuse", "graph", "devices"},
    "transforms": {"trace", "graph", "public"},
    "dask": {"trace", "devices", "public"},
    "models": {"public"},
    "lib": {"trace"},     # numpy.lib's names (stride_tricks), over the tracer's functions
    "polynomial": {"trace"},     # numpy.polynomial's names, over the tracer's functions
    "scipy": {"trace", "transforms"},     # jax.scipy's special and stats, over the tracer's functions
    # the package's front door and commands: they assemble the parts, so they may import any of them
    "public": {"*"},
}
BASE_MODULES = {"dtypes", "errors", "env", "_version"}
# files that look up the public namespace object itself at call time (not its logic): an array's
# `__array_namespace__` returns the `poot` module, and a dtype called as a cast uses the hook the
# front door installs, so that the base module stays free of layers
NAMESPACE_LOOKUPS = {"poot/dtypes.py", "poot/trace/array.py", "poot/trace/interop.py"}


def part_of(module: str) -> str | None:
    """The part a dotted poot module belongs to (None outside poot)."""
    parts = module.split(".")
    if parts[0] != "poot":
        return None
    if len(parts) == 1:
        return "public"
    head = parts[1]
    if head in BASE_MODULES:
        return "base"
    if head == "jit":
        return f"jit.{parts[2]}" if len(parts) > 2 and (PACKAGE / "jit" / parts[2]).is_dir() else "jit.runtime"
    if head in ("dask", "dask_chunks"):
        return "dask"
    if (PACKAGE / head).is_dir() and head not in ("kernels", "assets"):
        return head
    return "public"   # cli, demo, linalg, coverage, __main__: modules of the front door


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(tree: ast.AST, package: str = ""):
    """(line, dotted module) for every poot import in a parsed file; relative imports are resolved
    against `package` (the dotted package the file is in)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            if not base:
                continue
            subs = [f"{base}.{a.name}" for a in node.names if _is_module(f"{base}.{a.name}")]
            if subs:
                yield from ((node.lineno, s) for s in subs)
            else:
                yield node.lineno, base


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        if rel.parts[1] in ("kernels", "assets"):   # symlinks to the kernel sources and assets
            continue
        yield path, ".".join(rel.with_suffix("").parts).removesuffix(".__init__")


def arrows() -> dict:
    """{(from part, to part): [file:line, ...]} over the whole package."""
    out = defaultdict(list)
    for path, module in _sources():
        src = part_of(module)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for line, target in imported_modules(ast.parse(path.read_text(), str(path)), package):
            dst = part_of(target)
            if dst == "public" and str(path.relative_to(PACKAGE.parent)) in NAMESPACE_LOOKUPS:
                continue
            if dst is not None and dst != src:
                out[(src, dst)].append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    return out


def test_every_part_is_in_the_table():
    parts = {part_of(m) for _, m in _sources()}
    assert parts <= set(ALLOWED), f"parts without import rules: {sorted(parts - set(ALLOWED))}"


def test_no_import_against_the_layers():
    bad = []
    for (src, dst), where in sorted(arrows().items()):
        allowed = ALLOWED[src] | BASE
        if "*" not in allowed and dst not in allowed:
            bad.append(f"{src} -> {dst}: {', '.join(where[:3])}")
    assert not bad, "imports against the layers of docs/architecture.md:\n" + "\n".join(bad)


def test_the_rules_have_no_circle():
    graph = {p: {d for d in ds if d in ALLOWED} for p, ds in ALLOWED.items() if "*" not in ds}

    def visit(p, stack):
        if p in stack:
            pytest.fail(f"the import rules have a circle: {' -> '.join(stack + [p])}")
        for q in graph.get(p, ()):
            visit(q, stack + [p])

    for p in graph:
        visit(p, [])


def test_the_checker_sees_a_violation(tmp_path):
    """The mapping itself: a lazy import inside a function counts, and graph may not reach jit."""
    tree = ast.parse("def f():\n    from poot.jit.runtime import execute\n")
    (line, target), = list(imported_modules(tree))
    assert (line, part_of(target)) == (2, "jit.runtime")
    assert "jit.runtime" not in ALLOWED["graph"]
    relative = ast.parse("from ..jit.runtime import execute\nfrom . import ops\n")
    found = [part_of(m) for _, m in imported_modules(relative, "poot.graph")]
    assert found == ["jit.runtime", "graph"]
