"""Compiling one KIR kernel for one target: verify -> limits -> lower -> LLVM (verify, optimize) ->
object code / PTX, through the memory and disk caches (cache.py).

`compile_kernel(kernel, target, *, arch=None) -> Artifact`. `target` names an entry of the target
registry (poot/jit/llvm/targets/__init__.py), which holds each target's facts and lowering class:
"cpu" (object code for this machine, or for `arch` as an LLVM CPU name), "ptx" (`arch` sm_XY, default
sm_80), "llvm" (the unoptimized LLVM IR text, for inspection; target cpu's lowering), "spirv" (Vulkan
compute SPIR-V binary, poot/jit/llvm/targets/spirv/target.py), "amdgcn" (a linked HSACO for `arch`
gfxNNN, default gfx90a, poot/jit/llvm/targets/amdgcn/target.py).

POOT_DEBUG (read on every call): 3 prints the KIR text of each kernel compiled, 4 its optimized LLVM
IR, 5 its target assembly -- to stderr and the `poot.jit` logger.
"""
from __future__ import annotations

import logging
import re
import sys
import time
from dataclasses import dataclass, field, replace

from poot.errors import LoweringError
from poot import env
from poot.jit.llvm import cache, limits
from poot.jit.llvm.targets import LLVM_LOCK, names as target_names, target_named
from poot.jit.kir.model import Kernel
from poot.jit.kir.serialize import to_json

log = logging.getLogger("poot.jit")
_llvm_lock = LLVM_LOCK             # LLVM's global context is not thread-safe
TARGETS = target_names()


@dataclass(frozen=True)
class Artifact:
    """A compiled kernel: what a device loads. `data` is bytes (cpu object code, SPIR-V, HSACO) or text
    (ptx, llvm)."""
    target: str
    name: str                 # the kernel's name
    entry: str                # the entry symbol in `data`
    data: bytes | str
    kernel: Kernel = field(repr=False, compare=False)   # its ABI: params, scalars, workgroup
    arch: str = ""
    key: str = ""             # the cache key

    @property
    def folds_grid(self) -> bool:
        """Whether the kernel rebuilds its logical grid from a folded physical one (what a GPU device
        needs to know to launch a grid past its limits): a fact of the target (the registry's)."""
        return target_named(self.target).folds_grid

    @property
    def dynamic_shared_bytes(self) -> int:
        """Shared memory the launch must ask for (PTX kernels past the static limit; else 0)."""
        from poot.jit.llvm.gpu_entry import dynamic_shared_bytes

        return dynamic_shared_bytes(self.kernel, self.target)


def debug_level() -> int:
    """POOT_DEBUG's level (poot.env parses it; a value that is not a level raises ConfigError)."""
    return env.debug_level()


def debug_print(level: int, text: str) -> None:
    """Emit `text` when POOT_DEBUG >= level: stderr (like tinygrad's DEBUG) and the poot.jit logger."""
    if debug_level() >= level:
        log.debug(text)
        print(text, file=sys.stderr, flush=True)


def get_target(target: str, arch: str | None = None):
    """The lowering object of `target` (a registered name, poot/jit/llvm/targets) for `arch`."""
    return target_named(target).lowering(arch)


def entry_symbol(kernel: Kernel, key: str) -> str:
    return f"poot_{re.sub(r'[^A-Za-z0-9_]', '_', kernel.name)}_{key[:16]}"


def compile_kernel(kernel: Kernel, target: str = "cpu", *, arch: str | None = None,
                   use_cache: bool = True) -> Artifact:
    """Compile `kernel` for `target` (cached in memory and on disk). Raises KIRError for a kernel the
    verifier rejects, CompileLimitError past a compile limit, LoweringError for a target problem."""
    tgt = get_target(target, arch)
    # the key ignores the name: same-bodied kernels (the steps of a stencil) share one compile
    text = to_json(replace(kernel, name=""))
    key = cache.cache_key(text, target, tgt.identity)
    if use_cache:
        art = cache.memory_get(key)
        if art is not None:
            return art
        hit = cache.disk_get(key)
        if hit is not None:
            header, payload = hit
            data = payload.decode() if header.get("text") else payload
            art = Artifact(target, kernel.name, header["entry"], data, kernel, header.get("arch", ""), key)
            cache.memory_put(key, art)
            return art
    art = build(kernel, target, tgt, key)
    if use_cache:
        cache.note_miss()
        cache.memory_put(key, art)
        payload = art.data if isinstance(art.data, bytes) else art.data.encode()
        cache.disk_put(key, {"target": target, "arch": art.arch, "name": kernel.name, "entry": art.entry,
                             "text": isinstance(art.data, str)}, payload)
    return art


def build(kernel: Kernel, target: str, tgt, key: str) -> Artifact:
    """Compile without the caches."""
    import llvmlite.binding as llvm

    from poot.jit.kir.verify import verify
    from poot.jit.llvm.lower import lower_to_llvm

    t0 = time.perf_counter()
    limits.check_kernel(kernel)
    verify(kernel, max_workgroup_size=tgt.max_workgroup_size)
    if debug_level() >= 3:
        from poot.jit.kir.text import format_kernel

        debug_print(3, f"--- KIR {kernel.name} ---\n{format_kernel(kernel)}")
    symbol = entry_symbol(kernel, key)
    ir = lower_to_llvm(kernel, tgt, symbol, verified=True)
    limits.check_ir(kernel.name, ir)
    if target_named(target).inspection_only:
        return Artifact(target, kernel.name, symbol, ir, kernel, tgt.arch, key)
    with _llvm_lock:
        try:
            mod = llvm.parse_assembly(ir)
            mod.verify()
        except RuntimeError as e:   # a lowering bug: never hand such IR to codegen
            raise LoweringError(f"kernel '{kernel.name}': the lowering produced invalid LLVM IR: {e}") from None
        mod = tgt.optimize(mod) or mod       # the CPU target may return a rewritten module
        debug_print(4, f"--- LLVM IR {kernel.name} ({target}) ---\n{mod}")
        if debug_level() >= 5:
            debug_print(5, f"--- {target} assembly {kernel.name} ---\n{tgt.assembly(mod)}")
        data = tgt.emit(mod)
    limits.check_artifact(kernel.name, data)
    log.debug("compiled %s for %s in %.1f ms", kernel.name, target, 1e3 * (time.perf_counter() - t0))
    return Artifact(target, kernel.name, symbol, data, kernel, tgt.arch, key)


def llvm_ir(kernel: Kernel, target: str = "cpu", *, arch: str | None = None, optimized: bool = True) -> str:
    """The LLVM IR of `kernel` for `target`, after the target's optimization pipeline when `optimized`
    (for inspection and tests: e.g. that a loop was vectorized)."""
    import llvmlite.binding as llvm

    from poot.jit.kir.verify import verify
    from poot.jit.llvm.lower import lower_to_llvm

    tgt = get_target(target, arch)
    verify(kernel, max_workgroup_size=tgt.max_workgroup_size)
    ir = lower_to_llvm(kernel, tgt, kernel.name, verified=True)
    if not optimized:
        return ir
    with _llvm_lock:
        mod = llvm.parse_assembly(ir)
        mod.verify()
        return str(tgt.optimize(mod) or mod)


def target_assembly(kernel: Kernel, target: str = "cpu", *, arch: str | None = None) -> str:
    """The target code of `kernel` as text (CPU assembly, PTX, SPIR-V disassembly), for inspection."""
    import llvmlite.binding as llvm

    tgt = get_target(target, arch)
    ir = llvm_ir(kernel, target, arch=arch, optimized=True)
    with _llvm_lock:
        return tgt.assembly(llvm.parse_assembly(ir))


__all__ = ["Artifact", "compile_kernel", "llvm_ir", "target_assembly", "build", "get_target", "debug_level", "debug_print", "TARGETS"]
