"""Hand-written NVPTX kernels for the CUDA device tests, so the device is tested without the KIR lowering.

Each follows poot's launch ABI (poot/jit/llvm/abi.py): the kernel's buffers, then meta (uint32 words: one
length per buffer, the logical grid x, y, z, the launch id), then trap. The linear physical block id
is `ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)`; blocks at or past the logical block count
(the product of meta's grid words) leave at once, so folded grids work. Built with llvmlite's NVPTX
target; `artifact()` wraps the PTX the way CudaDevice.load takes it."""
from __future__ import annotations

from types import SimpleNamespace

TRIPLE = "nvptx64-nvidia-cuda"

# name -> (buffer count, body). In a body: %i (i64 thread index), %lin (i64 block id), %tid (i32),
# %m<k> (i32 meta word k, for k < 8), %b<j> / %meta / %trap (the pointers), label %exit to leave.
KERNELS = {
    "poot_test_add": (3, """
  %in = icmp ult i64 %i, %n2
  br i1 %in, label %do, label %exit
do:
  %pa = getelementptr float, ptr addrspace(1) %b0, i64 %i
  %pb = getelementptr float, ptr addrspace(1) %b1, i64 %i
  %pc = getelementptr float, ptr addrspace(1) %b2, i64 %i
  %x = load float, ptr addrspace(1) %pa, align 4
  %y = load float, ptr addrspace(1) %pb, align 4
  %s = fadd float %x, %y
  store float %s, ptr addrspace(1) %pc, align 4
  br label %exit"""),
    "poot_test_groups": (1, """
  %first = icmp eq i32 %tid, 0
  %inb = icmp ult i64 %lin, %n0
  %w = and i1 %first, %inb
  br i1 %w, label %do, label %exit
do:
  %v64 = add i64 %lin, 1
  %v = trunc i64 %v64 to i32
  %p = getelementptr i32, ptr addrspace(1) %b0, i64 %lin
  store i32 %v, ptr addrspace(1) %p, align 4
  br label %exit"""),
    "poot_test_trap": (2, """
  %in = icmp ult i64 %i, %n1
  br i1 %in, label %do, label %exit
do:
  %px = getelementptr float, ptr addrspace(1) %b0, i64 %i
  %x = load float, ptr addrspace(1) %px, align 4
  %neg = fcmp olt float %x, 0.0
  br i1 %neg, label %trapped, label %ok
trapped:
  %old = cmpxchg ptr addrspace(1) %trap, i32 0, i32 2 monotonic monotonic
  %won = extractvalue { i32, i1 } %old, 1
  br i1 %won, label %mark, label %exit
mark:
  %pl = getelementptr i32, ptr addrspace(1) %trap, i64 1
  store i32 %m5, ptr addrspace(1) %pl, align 4
  br label %exit
ok:
  %y = fmul float %x, 2.0
  %py = getelementptr float, ptr addrspace(1) %b1, i64 %i
  store float %y, ptr addrspace(1) %py, align 4
  br label %exit"""),
    # a store a terabyte past its buffer: an illegal address, which CUDA makes a sticky error
    "poot_test_fault": (1, """
  %far = getelementptr i8, ptr addrspace(1) %b0, i64 1099511627776
  store volatile i32 7, ptr addrspace(1) %far, align 4
  br label %exit"""),
}


def llvm_ir(name: str, datalayout: str) -> str:
    nb, body = KERNELS[name]
    params = ", ".join([f"ptr addrspace(1) %b{j}" for j in range(nb)] + ["ptr addrspace(1) %meta",
                                                                          "ptr addrspace(1) %trap"])
    sreg = "\n".join(f"  %{r}.{a}.32 = call i32 @llvm.nvvm.read.ptx.sreg.{r}.{a}()\n"
                     f"  %{r}.{a} = zext i32 %{r}.{a}.32 to i64" for r in ("ctaid", "nctaid") for a in "xyz")
    meta = "\n".join(f"  %pm{k} = getelementptr i32, ptr addrspace(1) %meta, i64 {k}\n"
                     f"  %m{k} = load i32, ptr addrspace(1) %pm{k}, align 4\n"
                     f"  %n{k} = zext i32 %m{k} to i64" for k in range(8))
    decls = "\n".join(f"declare i32 @llvm.nvvm.read.ptx.sreg.{r}.{a}()"
                      for r in ("ctaid", "nctaid", "tid", "ntid") for a in "xyz")
    g = nb            # meta word of the logical grid's x
    return f"""target datalayout = "{datalayout}"
target triple = "{TRIPLE}"
{decls}
define ptx_kernel void @{name}({params}) {{
entry:
{sreg}
{meta}
  %yz0 = mul i64 %nctaid.y, %ctaid.z
  %yz = add i64 %ctaid.y, %yz0
  %lin0 = mul i64 %nctaid.x, %yz
  %lin = add i64 %ctaid.x, %lin0
  %gxy = mul i64 %n{g}, %n{g + 1}
  %total = mul i64 %gxy, %n{g + 2}
  %live = icmp ult i64 %lin, %total
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid64 = zext i32 %tid to i64
  %ntid64 = zext i32 %ntid to i64
  %base = mul i64 %lin, %ntid64
  %i = add i64 %base, %tid64
  br i1 %live, label %body, label %exit
body:{body}
exit:
  ret void
}}
"""


def ptx(name: str, arch: str = "sm_80") -> str:
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features="+ptx80", opt=2)
    mod = llvm.parse_assembly(llvm_ir(name, str(tm.target_data)))
    mod.verify()
    return tm.emit_assembly(mod)


def artifact(name: str, workgroup=(128, 1, 1), arch: str = "sm_80", **extra) -> SimpleNamespace:
    return SimpleNamespace(target="ptx", name=name, entry=name, data=ptx(name, arch), workgroup=workgroup, **extra)


def meta(lengths, groups, launch_id: int = 1):
    """The meta words of one launch: lengths, logical grid, launch id (padded to 8 words)."""
    import numpy as np

    words = list(lengths) + list(groups) + [1] * (3 - len(groups)) + [launch_id]
    return np.array(words + [0] * (8 - len(words)), dtype=np.uint32)
