"""The kernel entry both pointer-argument GPU targets write (PTX, AMDGCN): what differs between them is
only how a work item reads its ids, so a target passes those in and adds its own calling convention
and attributes.

    <cc> void ENTRY(ptr addrspace(1) b0, ..., ptr addrspace(1) meta, ptr addrspace(1) trap)

Buffers are `noalias` global pointers (written buffers must not alias other params), 16-byte aligned
(each is a whole device allocation, and the devices check their allocator's alignment), so the
load-store vectorizer merges a thread's consecutive element accesses into 16-byte ones; shared arrays
addrspace(3) globals, or slices of one external (dynamically sized) block where they need more than the
target lets a kernel declare statically (PTX: 48 KiB; `dynamic_shared_bytes`). The physical grid holds at least the logical number of workgroups
(poot/devices/grid.py fold_grid): the entry linearizes its physical workgroup id, returns at once when it is past the logical grid
(uniform per workgroup, before any barrier), and otherwise decomposes it over the logical grid read
from meta.
"""
from __future__ import annotations

from poot.jit.kir.model import WGMMA_ALIGN_WORDS, wgmma_operands
from poot.jit.llvm.ir import Func, mem_type
from poot.jit.llvm.targets import target_named


def shared_alignment(kernel) -> dict[str, int]:
    """Each shared array's byte alignment: 16, or 1 KiB for the operands of a Wgmma (its 128-byte swizzle is
    taken from the address bits, model.py)."""
    swizzled = wgmma_operands(kernel.body)
    return {s.name: WGMMA_ALIGN_WORDS * 4 if s.name in swizzled else 16 for s in kernel.shared}


def shared_layout(kernel) -> tuple[list[int], int]:
    """Byte offsets of `kernel.shared`'s arrays laid out one after another (each at its
    `shared_alignment`), and the total."""
    offsets, at = [], 0
    align = shared_alignment(kernel)
    for s in kernel.shared:
        at = -(-at // align[s.name]) * align[s.name]
        offsets.append(at)
        at += -(-s.size * s.dtype.itemsize // 16) * 16
    return offsets, at


def dynamic_shared_bytes(kernel, target: str) -> int:
    """The bytes of dynamic shared memory a launch of `kernel` compiled for `target` must ask for: where
    the target limits static shared memory (PTX: 48 KiB) and the arrays need more, they live in one
    dynamic block whose size the driver is told at load and launch; else 0."""
    limit = target_named(target).static_shared_limit
    total = shared_layout(kernel)[1]
    return total if limit and total > limit else 0


def emit_gpu_kernel(lw, symbol: str, physical, local_id, dynamic_shared: bool = False) -> tuple[Func, str]:
    """Lower `lw.k` (a Lowering with address spaces 1 and 3) into a new entry function. `physical(f)` ->
    (three i64 physical workgroup ids, the i64 physical grid extents in x and y); `local_id(f, axis)`
    -> the i32 work-item id on `axis`. With `dynamic_shared` the shared arrays are slices of one
    external (dynamically sized) block. Returns the function and its parameter list."""
    kernel, module = lw.k, lw.m
    f = Func()
    lw.reset_function(f)
    lw.meta, lw.trap = "%meta", "%trap"
    for j, p in enumerate(kernel.buffers):
        lw.buffers[p.name] = f"%b{j}"
    align = shared_alignment(kernel)
    if dynamic_shared:
        block = f"@{symbol}_dynamic_shared"
        module.globals.append(f"{block} = external addrspace(3) global [0 x i8], "
                              f"align {max(align.values(), default=16)}")
        for s, off in zip(kernel.shared, shared_layout(kernel)[0]):
            lw.shared_ptrs[s.name] = f.op(f"getelementptr inbounds i8, ptr addrspace(3) {block}, i64 {off}")
    for s in kernel.shared if not dynamic_shared else ():
        g = f"@{symbol}.sh.{s.name}"
        module.globals.append(f"{g} = internal addrspace(3) global [{s.size} x {mem_type(s.dtype)}] poison, "
                              f"align {align[s.name]}")
        lw.shared_ptrs[s.name] = g
    lw.alloca_locals()
    c, n = physical(f)
    yz = f.op(f"add i64 {c[1]}, {f.op(f'mul i64 {n[1]}, {c[2]}')}")
    lin = f.op(f"add i64 {c[0]}, {f.op(f'mul i64 {n[0]}, {yz}')}")
    g = [f.op(f"zext i32 {lw.meta_word(lw.layout.grid + a)} to i64") for a in range(3)]
    gxy = f.op(f"mul i64 {g[0]}, {g[1]}")
    f.cbr(f.op(f"icmp uge i64 {lin}, {f.op(f'mul i64 {gxy}, {g[2]}')}"), "surplus", "run")
    f.start("surplus")
    f.term("ret void")
    f.start("run")
    q = f.op(f"udiv i64 {lin}, {g[0]}")
    ids = [f.op(f"urem i64 {lin}, {g[0]}"), f.op(f"urem i64 {q}, {g[1]}"), f.op(f"udiv i64 {lin}, {gxy}")]
    for a in range(3):
        lw.ids[("group", a)] = f.op(f"trunc i64 {ids[a]} to i32")
        lw.ids[("local", a)] = local_id(f, a) if kernel.workgroup[a] > 1 else "0"
    lw.stmts(kernel.body)
    f.term("ret void")
    params = ", ".join([f"ptr addrspace(1) noalias align 16 %b{j}" for j in range(len(kernel.buffers))]
                       + ["ptr addrspace(1) noalias readonly %meta", "ptr addrspace(1) noalias %trap"])
    return f, params


__all__ = ["dynamic_shared_bytes", "emit_gpu_kernel", "shared_layout"]
