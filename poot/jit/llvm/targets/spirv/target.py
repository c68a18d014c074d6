"""The SPIR-V target (Vulkan compute, run by poot.devices.wgpu and poot.devices.vulkan):
`spirv1.6-unknown-vulkan1.3-compute` with HLSL-style resources, then a post-pass chosen by `arch`, the
consumer: "" (wgpu) the naga post-pass (poot/jit/llvm/targets/spirv/naga.py); "vulkan1.3" (raw Vulkan) only
the fixes the Vulkan environment requires (poot/jit/llvm/targets/spirv/vulkan.py). One lowering, two consumers.

Entry ABI (poot/jit/llvm/abi.py): `void ENTRY()` with "hlsl.numthreads" = the kernel's workgroup; buffer
param j is the storage buffer at (set 0, binding j), then meta at binding n (read-only uint32 words)
and trap at binding n+1. Shared arrays are Workgroup (addrspace 3) globals.

What differs from the other targets, and why:
- Buffers are resource handles (`llvm.spv.resource.handlefrombinding`), an element pointer is
  `llvm.spv.resource.getpointer(handle, i32 index)`: logical SPIR-V has no pointer arithmetic.
  Indices are 32-bit (buffers hold < 2**32 elements), so kernels need no Int64.
- naga (wgpu's translator) has no 8- or 16-bit integers. Kernels compute int8/uint8/int16/uint16
  in 32 bits (spirv_widen.py); buffers of them, and of bool and bfloat16, are read as 32-bit words
  (shift and mask) and written with word atomics, an `and` clearing the field's bits that are 0 in
  the new value and an `or` setting those that are 1 (other threads own the other bytes of the word,
  and threads storing one value to one element must not undo each other; both masks depend on the
  stored value, so a driver that assumes bindings never alias cannot order them before the load of
  an in-place update: SpirvLowering.packed_store says why); shared arrays of them take a word per
  element. float16 is native `half` (the
  device asks for the adapter's shader-f16).
- The grid is folded (poot/devices/grid.py fold_grid): the entry linearizes its physical workgroup
  id over NumWorkgroups, leaves at once past the logical group count (uniform per workgroup, before
  any barrier) and unflattens the rest over the logical grid from meta.
- Barriers are `llvm.spv.group.memory.barrier.with.group.sync`; the post-pass gives them workgroup
  and buffer memory semantics. Atomics carry syncscope("device") on buffers, ("workgroup") on shared
  memory (Vulkan forbids the default CrossDevice scope); float add uses SPV_EXT_shader_atomic_float_add.
- `cmpxchg` on a resource pointer aborts LLVM 22's SPIR-V backend, so a thread that trapped takes a
  ticket from a counter (trap word 2, `atomicrmw add`) once, at the end of the kernel (its first code
  kept in a local until then); the thread holding ticket 0 puts code and launch id in.
- Control flow stays in the shapes LLVM's SPIR-V structurizer gets right (one-armed and two-armed
  selections, loops whose only exit is the header's test): a trap does not end the thread but stops its
  stores and atomics (so every thread still reaches every barrier), Return statements are folded into
  the structure before lowering (spirv_returns.py), then Break and Continue become flags and guarded
  ifs (spirv_loops.py); early `ret`s and loops left from inside a selection produced SPIR-V that naga
  and Vulkan drivers refuse. No pass may fold the constructs' empty merge and latch blocks before the
  structurizer: the worker runs no simplifycfg and LLVM's CodeGenPrepare is off (spirv_worker.py).
- Float -> int casts saturate with explicit compares (`fptosi.sat` lowers to a decoration Vulkan does
  not have); copysign, NaN-propagating min/max, float64 fma and float64 roundeven are defined in IR
  (spirv_intrinsics.py); int8..uint16 compute in 32 bits (spirv_widen.py).
- Codegen runs in a worker process (spirv_worker.py): the backend corrupts ids across modules in one
  process and aborts on IR it cannot select. The worker also hides the left operand of each float
  subtraction from Mesa's float algebra, which otherwise erases mathlib's error-free transformations.
  Its output (before the post-pass) is cached on disk by the IR, which is the same for both consumers:
  the second one compiles a kernel with only its post-pass (llvm_spirv).

Known limits on wgpu: drivers may contract a*b+c (naga drops NoContraction, so `add_nocontract` is not
honoured there), need not fuse a float Fma (lavapipe does not: mathlib's float reductions are exact
either way) and Mesa computes a/b as a*(1/b) (within ~1 ulp); a kernel binds at most the adapter's
max-storage-buffers-per-shader-stage buffers (Capabilities.max_buffers, meta and trap included).
"""
from __future__ import annotations

import functools
import hashlib
import re
import subprocess
from pathlib import Path

import llvmlite.binding as llvm

from poot.errors import LoweringError
from poot.jit.llvm import cache
from poot.jit.llvm.ir import Func
from poot.jit.llvm.targets.spirv.intrinsics import redirect_intrinsics
from poot.jit.llvm.targets.spirv.loops import eliminate_loop_exits
from poot.jit.llvm.targets.spirv.lowering import SpirvLowering, storage_type
from poot.jit.llvm.targets.spirv.naga import POST_PASS_VERSION, duplicate_ids, fix_for_naga, rename_entry
from poot.jit.llvm.targets.spirv.returns import eliminate_returns
from poot.jit.llvm.targets.spirv.vulkan import TARGET_ENV, fix_for_vulkan
from poot.jit.llvm.targets.spirv.widen import widen_narrow_ints
from poot.jit.llvm.targets.spirv.worker import EXTENSIONS, TRIPLE, compile_spirv, trap_binding_metadata
from poot.jit.llvm.targets.spirv.worker import restart as restart_worker
from poot.jit.llvm.targets import target_named

NAME = "spirv"


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.lru_cache(maxsize=None)
def _sources_digest() -> str:
    here = Path(__file__).resolve()
    files = sorted(here.parent.glob("*.py"))   # this target's modules: the lowering, the worker, the post-passes
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]


SHARED_ENTRY = "poot_entry"     # the entry symbol LLVM compiles under; each artifact's own name is put back after


def llvm_spirv(ir: str, name: str) -> bytes:
    """LLVM's SPIR-V for `ir` (before either consumer's post-pass), from the disk cache where another
    process compiled the same IR: the two consumers lower a kernel to the same IR (the entry symbol aside,
    so it is compiled as SHARED_ENTRY), and LLVM's emission is most of a cold compile."""
    key = cache.cache_key(ir, "spirv-llvm", f"{TRIPLE}/{EXTENSIONS}/{_sources_digest()}")   # the worker's pipeline too
    hit = cache.disk_get(key)
    if hit is not None:
        return hit[1]
    for _ in (0, 1):
        raw = compile_spirv(ir, name)
        dups = duplicate_ids(raw)
        if not dups:
            cache.disk_put(key, {"target": "spirv-llvm", "name": name, "entry": SHARED_ENTRY, "text": False}, raw)
            return raw
        restart_worker()                    # a worker gone bad: try once more in a fresh one
    raise LoweringError(f"kernel '{name}': LLVM's SPIR-V backend defined ids {sorted(dups)[:5]} twice")


class SpirvTarget:
    name = NAME
    max_workgroup_size = target_named(NAME).max_workgroup_size   # the registry's limit
    as_global, as_shared = 11, 3

    def __init__(self, arch: str | None = None):
        _init()
        self.arch = arch or ""
        if self.arch not in ("", TARGET_ENV):
            raise LoweringError(f"SPIR-V arch '{self.arch}': the consumers are '' (wgpu, naga post-pass) and "
                                f"'{TARGET_ENV}' (raw Vulkan)")
        self.triple = TRIPLE
        self.datalayout = str(self.machine().target_data)

    @property
    def identity(self) -> str:
        """Part of the artifact cache key: the triple, the post-pass, and a digest of this target's own
        sources (the SPIR-V lowering, the widening, the worker and the post-passes), so a change to any
        of them recompiles instead of loading stale SPIR-V."""
        post = TARGET_ENV if self.arch else f"naga-post-pass-{POST_PASS_VERSION}"
        return f"{TRIPLE}/{EXTENSIONS}/{post}/{_sources_digest()}"

    def build_module(self, kernel, module, symbol: str) -> None:
        kernel = eliminate_loop_exits(eliminate_returns(widen_narrow_ints(kernel)))
        redirect_intrinsics(module)
        lw = SpirvLowering(kernel, module)
        f = Func()
        lw.reset_function(f)
        nb = len(kernel.buffers)
        for j, p in enumerate(kernel.buffers):
            lw.bind(p.name, j, storage_type(p.dtype), p.access.writable)
        lw.bind("$meta", nb, "i32", False)
        lw.bind("$trap", nb + 1, "i32", True)
        for s in kernel.shared:
            g = f"@sh.{s.name}"
            module.globals.append(f"{g} = internal addrspace(3) global [{s.size} x {storage_type(s.dtype)}] poison")
            lw.shared_ptrs[s.name] = g
        lw.alloca_locals()

        def builtin(name: str, axis: int) -> str:
            fn = module.intrinsic(f"llvm.spv.{name}.i32", "i32", "i32")
            return f.op(f"call i32 {fn}(i32 {axis})")
        # linear physical workgroup -> logical group ids; workgroups past the logical grid leave at once
        c = [builtin("group.id", a) for a in range(3)]
        n = [builtin("num.workgroups", a) for a in range(2)]
        yz = f.op(f"add i32 {c[1]}, {f.op(f'mul i32 {n[1]}, {c[2]}')}")
        lin = f.op(f"add i32 {c[0]}, {f.op(f'mul i32 {n[0]}, {yz}')}")
        g = [lw.meta_word(lw.layout.grid + a) for a in range(3)]
        gxy = f.op(f"mul i32 {g[0]}, {g[1]}")
        f.cbr(f.op(f"icmp ult i32 {lin}, {f.op(f'mul i32 {gxy}, {g[2]}')}"), "run", "exit")
        f.start("run")
        lw.init_flags()
        q = f.op(f"udiv i32 {lin}, {g[0]}")
        ids = [f.op(f"urem i32 {lin}, {g[0]}"), f.op(f"urem i32 {q}, {g[1]}"), f.op(f"udiv i32 {lin}, {gxy}")]
        for a in range(3):
            lw.ids[("group", a)] = ids[a]
            lw.ids[("local", a)] = builtin("thread.id.in.group", a) if kernel.workgroup[a] > 1 else "0"
        lw.stmts(kernel.body)
        lw.report_trap()
        f.br("exit")
        f.start("exit")
        f.term("ret void")
        wx, wy, wz = kernel.workgroup
        module.attributes.append(f'attributes #2 = {{ convergent nounwind "hlsl.shader"="compute" '
                                 f'"hlsl.numthreads"="{wx},{wy},{wz}" }}')
        module.functions.append(f.render(f"define void @{symbol}() #2"))
        module.attributes.append(trap_binding_metadata(nb + 1))

    def machine(self):
        return llvm.Target.from_triple(TRIPLE).create_target_machine(opt=2)

    def optimize(self, mod) -> None:
        """Nothing here: the SPIR-V worker process optimizes (spirv_worker.py says why)."""

    def emit(self, mod) -> bytes:
        ir = str(mod)
        entry = re.search(r"define void @([\w.$]+)\(\)", ir)
        name = entry.group(1) if entry else "?"
        if entry:
            raw = rename_entry(llvm_spirv(re.sub(rf"@{re.escape(name)}\b", f"@{SHARED_ENTRY}", ir), name),
                               SHARED_ENTRY, name)
        else:
            raw = llvm_spirv(ir, name)
        return fix_for_vulkan(raw) if self.arch else fix_for_naga(raw)

    def assembly(self, mod) -> str:
        spv = self.emit(mod)
        try:
            return subprocess.run(["spirv-dis", "-"], input=spv, capture_output=True, check=True).stdout.decode()
        except (OSError, subprocess.CalledProcessError) as e:
            return f"; spirv-dis unavailable ({e}); {len(spv)} bytes of SPIR-V"


__all__ = ["SpirvTarget", "TRIPLE"]
