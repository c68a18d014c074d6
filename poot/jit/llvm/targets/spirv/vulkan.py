"""SPIR-V for a raw Vulkan consumer (poot.devices.vulkan): LLVM's SPIR-V without the naga post-pass,
with only what the Vulkan environment itself requires of it.

LLVM 22's Vulkan-flavoured output is not always valid Vulkan SPIR-V (`spirv-val --target-env vulkan1.3`
rejects it), and its barriers order no memory; these fixes, shared with the naga post-pass
(spirv_naga.py), are kept -- each rewrites a construct into the equivalent Vulkan spells, none changes
what the kernel computes:
- a merge instruction right before its block's branch (LLVM's scheduler sometimes puts work between);
- integer zeros as OpConstant (OpAccessChain indexes into a struct only with constants);
- no SaturatedConversion decoration (OpenCL only; the lowering saturates with compares anyway);
- OpOrdered/OpUnordered (Kernel capability) spelled with OpIsNan;
- KIR's barrier semantics (AcquireRelease | WorkgroupMemory | UniformMemory) where LLVM names none;
- OpSRem spelled a - (a / b) * b: NVIDIA's driver computes it as an unsigned remainder (-5 rem 30 gave
  11), with or without naga in between;
- the dead resource-name strings removed, with the Int8 capability they alone declare, so a module's
  capabilities say what it computes with (the device refuses a kernel by them: int8 only where used).
What naga alone needs is left out: NaN/inf literals stay literals, `Aligned` memory operands, unordered
float compares and integer operands stay as LLVM wrote them.
"""
from __future__ import annotations

from poot.jit.llvm.targets.spirv.naga import (assemble, drop_dead_declarations, drop_kernel_only_decorations,
                         drop_unused_small_int_capabilities, fix_barrier_semantics, merges_before_branches, parse,
                         spell_null_integers, spell_signed_remainders, spell_unordered_compares)

TARGET_ENV = "vulkan1.3"           # the SPIR-V target's arch for raw Vulkan (spirv-val's --target-env)


def fix_for_vulkan(data: bytes) -> bytes:
    header, insts = parse(bytes(data))
    insts = merges_before_branches(insts)
    insts = spell_null_integers(insts)
    insts = drop_kernel_only_decorations(insts)
    insts = spell_unordered_compares(header, insts)
    insts = spell_signed_remainders(header, insts)
    insts = fix_barrier_semantics(header, insts)
    insts = drop_dead_declarations(insts)
    insts = drop_unused_small_int_capabilities(insts)
    return assemble(header, insts)


__all__ = ["fix_for_vulkan", "TARGET_ENV"]
