"""Compile limits: every compile is bounded and fails with poot.errors.CompileLimitError *before* the
excess is built -- the KIR node count is checked before lowering, the LLVM IR size before LLVM parses
it, the artifact size before it is cached or loaded.

Defaults are generous; change them with `set_limits(...)` / the `limits(...)` context manager, or the
environment variables POOT_MAX_KERNEL_NODES, POOT_MAX_IR_BYTES, POOT_MAX_ARTIFACT_BYTES (read when
poot.jit.llvm.limits is imported).
"""
from __future__ import annotations

import contextlib
import dataclasses
from poot.errors import CompileLimitError
from poot.jit.kir.model import Kernel
from poot import env as runtime_env


@dataclasses.dataclass(frozen=True)
class Limits:
    max_kernel_nodes: int = 1_000_000          # KIR statements + expression nodes of one kernel
    max_ir_bytes: int = 64 * 2**20             # LLVM IR text of one kernel
    max_artifact_bytes: int = 64 * 2**20       # object code / PTX of one kernel


def _from_env() -> Limits:
    kw = {}
    for field, env in (("max_kernel_nodes", "POOT_MAX_KERNEL_NODES"), ("max_ir_bytes", "POOT_MAX_IR_BYTES"),
                       ("max_artifact_bytes", "POOT_MAX_ARTIFACT_BYTES")):
        kw[field] = runtime_env.integer(env, getattr(Limits, field), runtime_env.INTEGERS[env])
    return Limits(**kw)


_current = _from_env()


def get_limits() -> Limits:
    return _current


def set_limits(**changes) -> Limits:
    """Replace some limits (keyword names of `Limits`); returns the previous limits."""
    global _current
    old = _current
    _current = dataclasses.replace(_current, **changes)
    return old


@contextlib.contextmanager
def limits(**changes):
    old = set_limits(**changes)
    try:
        yield _current
    finally:
        globals()["_current"] = old


def count_nodes(kernel: Kernel, stop_after: int | None = None) -> int:
    """Statements plus expression nodes of `kernel` (stops counting past `stop_after`)."""
    n = 0
    stack = list(kernel.body)
    while stack:
        node = stack.pop()
        n += 1
        if stop_after is not None and n > stop_after:
            return n
        for name in getattr(node, "__dataclass_fields__", ()):
            v = getattr(node, name)
            if isinstance(v, tuple):
                stack.extend(x for x in v if hasattr(x, "__dataclass_fields__"))
            elif hasattr(v, "__dataclass_fields__") and not hasattr(v, "bits"):
                stack.append(v)
    return n


def check_kernel(kernel: Kernel) -> None:
    lim = _current.max_kernel_nodes
    n = count_nodes(kernel, stop_after=lim)
    if n > lim:
        raise CompileLimitError(f"kernel '{kernel.name}' has more than {lim} KIR nodes (limit "
                                "max_kernel_nodes); split the computation or raise the limit with "
                                "poot.jit.llvm.limits.set_limits(max_kernel_nodes=...)")


def check_ir(kernel_name: str, ir: str) -> None:
    if len(ir) > _current.max_ir_bytes:
        raise CompileLimitError(f"kernel '{kernel_name}' lowers to {len(ir)} bytes of LLVM IR, above the "
                                f"limit of {_current.max_ir_bytes} (max_ir_bytes)")


def check_artifact(kernel_name: str, data) -> None:
    if len(data) > _current.max_artifact_bytes:
        raise CompileLimitError(f"kernel '{kernel_name}' compiles to {len(data)} bytes, above the limit of "
                                f"{_current.max_artifact_bytes} (max_artifact_bytes)")


__all__ = ["Limits", "get_limits", "set_limits", "limits", "count_nodes", "check_kernel", "check_ir",
           "check_artifact"]
