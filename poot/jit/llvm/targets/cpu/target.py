"""The CPU target: native object code for the host CPU, run by poot.devices.cpu.

Entry ABI (see poot/jit/llvm/abi.py for the meta and trap words):

    void ENTRY(ptr buffers /* n pointers */, ptr meta, ptr trap, i64 group_begin, i64 group_end)

runs the linearized workgroups [group_begin, group_end) of the logical grid read from meta (x fastest),
stopping early once the trap word is set. Each workgroup is an internal, non-inlined function whose
buffer pointers are `noalias` (so loops vectorize without runtime alias checks; buffer params that
are written must not alias any other param), with its work items run as loops split at barriers
(poot/jit/llvm/workgroup.py). Compiled at O3 with the loop and SLP vectorizers (new pass manager).
"""
from __future__ import annotations

import functools
import os
import re
import sys
import tempfile

import llvmlite.binding as llvm

from poot.errors import ConfigError
from poot.jit.kir.model import TRAP_MISALIGNED, Access
from poot.jit.llvm.ir import Func
from poot.jit.llvm.targets.cpu.stream import mark_streaming_stores
from poot.jit.llvm.targets import target_named

NAME = "cpu"
MAX_INLINED_VARIANT_CALLS = 16
_VARIANT = re.compile(r"poot\.\w+\.f(?:32|64)\.v\d+")


@functools.lru_cache(maxsize=None)
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.lru_cache(maxsize=None)
def host() -> tuple[str, str, str]:
    """(triple, cpu name, feature string) of this machine."""
    _init()
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


class CpuTarget:
    name = NAME
    max_workgroup_size = target_named(NAME).max_workgroup_size   # the registry's limit
    as_global = as_shared = 0

    def __init__(self, arch: str | None = None):
        triple, cpu, features = host()
        self.arch = arch or cpu
        self.features = features if arch is None or arch == cpu else ""
        self.triple = triple
        self._tm = None
        self._streams: dict[str, set[str]] = {}   # entry symbol -> its `stream` buffer params
        if self.arch != cpu:
            self._tm = self._checked_target_machine(cpu)

    def _checked_target_machine(self, host_cpu: str):
        """The target machine for an `arch` the caller named. LLVM only prints "'x' is not a recognized
        processor" to fd 2 for an unknown name and aborts the process later, when it emits code; so
        its stderr is read back here and the name refused before anything is compiled."""
        sys.stderr.flush()
        with tempfile.TemporaryFile() as captured:
            saved = os.dup(2)
            os.dup2(captured.fileno(), 2)
            try:
                tm = llvm.Target.from_triple(self.triple).create_target_machine(
                    cpu=self.arch, features=self.features, opt=3, jit=True)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            captured.seek(0)
            said = captured.read().decode(errors="replace")
        if "not a recognized processor" in said:
            raise ConfigError(f"'{self.arch}' is not a CPU LLVM knows for {self.triple}: use the host's name "
                              f"('{host_cpu}', the default when --arch is left out) or another LLVM CPU name "
                              f"(`llc -mcpu=help` lists them)")
        if said:
            sys.stderr.write(said)
        return tm

    @property
    def tm(self):
        """The LLVM target machine, created on first use (a disk-cache hit never needs one)."""
        if self._tm is None:
            self._tm = llvm.Target.from_triple(self.triple).create_target_machine(
                cpu=self.arch, features=self.features, opt=3, jit=True)
        return self._tm

    @property
    def datalayout(self) -> str:
        return str(self.tm.target_data)

    @property
    def identity(self) -> str:
        """What the artifact depends on besides the kernel (part of the cache key)."""
        return f"{self.triple}/{self.arch}/{self.features}"

    @property
    def math_lanes(self) -> tuple[int, ...]:
        """Widths of the vector variants of float sin/cos (mathvec.py) on x86-64 (other hosts keep
        mathlib's inlined functions). All three: which width the vectorizer picks depends on the CPU
        (Intel's AVX-512 parts prefer 8 lanes, Zen 4 16, epilogues fewer), and a missing one means a
        call per lane; the unused ones are dropped after O3 (~2.5 ms compile time)."""
        return (4, 8, 16) if self.triple.startswith("x86_64") else ()

    def has_vector_bits(self, bits: int) -> bool:
        """Whether this CPU has `bits`-wide vector registers a kernel asked for (Kernel.cpu_vector_bits)."""
        if bits == 512:
            return "+avx512f" in self.features.split(",")
        return bits == 256 and "+avx2" in self.features.split(",")

    # -- IR -------------------------------------------------------------------------------------
    def build_module(self, kernel, module, symbol: str) -> None:
        feats = f' "target-features"="{self.features}"' if self.features else ""
        width = f' "prefer-vector-width"="{kernel.cpu_vector_bits}"' if self.has_vector_bits(kernel.cpu_vector_bits) else ""
        module.fn_attrs = f'"target-cpu"="{self.arch}"{feats}{width}'
        module.math_lanes = self.math_lanes
        from poot.jit.llvm.workgroup import WorkgroupLowering   # not imported on a cache hit

        nb = len(kernel.buffers)
        stream = [j for j, p in enumerate(kernel.buffers) if p.access is Access.STREAM]
        lw = WorkgroupLowering(kernel, module)
        f = Func()
        lw.reset_function(f)
        lw.meta, lw.trap = "%meta", "%trap"
        for j, p in enumerate(kernel.buffers):
            lw.buffers[p.name] = f"%b{j}"
        for a, g in enumerate(("%gx", "%gy", "%gz")):
            lw.ids[("group", a)] = g
        for s in kernel.shared:
            lw.shared_ptrs[s.name] = f.entry_op(f"alloca [{s.size} x {_mem(s.dtype)}], align 64", hint=f"sh.{s.name}.")
        lw.emit_group()
        params = ", ".join([f"ptr noalias{' align 64' if j in stream else ''} %b{j}" for j in range(nb)]
                           + ["ptr noalias readonly %meta", "ptr noalias %trap", "i32 %gx", "i32 %gy", "i32 %gz"])
        module.functions.append(f.render(f"define internal void @{symbol}.group({params}) noinline #0"))
        module.functions.append(self._entry(kernel, symbol, nb, lw.layout, stream))
        if stream and self.triple.startswith("x86_64"):
            module.intrinsic("llvm.x86.sse.sfence", "void", "")
            self._streams[symbol] = {f"%b{j}" for j in stream}

    def _entry(self, kernel, symbol: str, nb: int, layout, stream=()) -> str:
        grid_word, launch_word = layout.grid, layout.launch_id
        e = Func("e")
        bufs = []
        for j in range(nb):
            p = e.op(f"getelementptr ptr, ptr %bufs, i64 {j}")
            bufs.append(e.op(f"load ptr, ptr {p}"))
        if stream:                  # `align 64` on the group's params must hold: trap otherwise
            low = [e.op(f"and i64 {e.op(f'ptrtoint ptr {bufs[j]} to i64')}, 63") for j in stream]
            acc = low[0]
            for x in low[1:]:
                acc = e.op(f"or i64 {acc}, {x}")
            e.cbr(e.op(f"icmp eq i64 {acc}, 0"), "aligned", "misaligned")
            e.start("misaligned")
            res = e.op(f"cmpxchg ptr %trap, i32 0, i32 {TRAP_MISALIGNED} monotonic monotonic")
            e.cbr(e.op(f"extractvalue {{ i32, i1 }} {res}, 1"), "trapwon", "trapexit")
            e.start("trapwon")          # the first trap names its launch (as Lowering.write_trap)
            lid = e.op(f"load i32, ptr {e.op(f'getelementptr i32, ptr %meta, i64 {launch_word}')}")
            e.emit(f"store atomic i32 {lid}, ptr {e.op('getelementptr i32, ptr %trap, i64 1')} monotonic, align 4")
            e.br("trapexit")
            e.start("trapexit")
            e.term("ret void")
            e.start("aligned")
        dims = []
        for a in range(3):
            p = e.op(f"getelementptr i32, ptr %meta, i64 {grid_word + a}")
            v = e.op(f"zext i32 {e.op(f'load i32, ptr {p}')} to i64")
            dims.append(e.op(f"select i1 {e.op(f'icmp eq i64 {v}, 0')}, i64 1, i64 {v}"))
        nxy = e.op(f"mul i64 {dims[0]}, {dims[1]}")
        e.br("loop")
        e.start("loop")
        g = e.op(f"phi i64 [ %begin, %{'aligned' if stream else 'entry'} ], [ %gnext, %next ]", hint="g")
        e.cbr(e.op(f"icmp ult i64 {g}, %end"), "body", "exit")
        e.start("body")
        code = e.op("load atomic i32, ptr %trap monotonic, align 4")
        e.cbr(e.op(f"icmp eq i32 {code}, 0"), "run", "exit")
        e.start("run")
        gx = e.op(f"trunc i64 {e.op(f'urem i64 {g}, {dims[0]}')} to i32")
        gq = e.op(f"udiv i64 {g}, {dims[0]}")
        gy = e.op(f"trunc i64 {e.op(f'urem i64 {gq}, {dims[1]}')} to i32")
        gz = e.op(f"trunc i64 {e.op(f'udiv i64 {g}, {nxy}')} to i32")
        args = ", ".join([f"ptr {b}" for b in bufs] + ["ptr %meta", "ptr %trap", f"i32 {gx}", f"i32 {gy}", f"i32 {gz}"])
        e.emit(f"call void @{symbol}.group({args})")
        e.br("next")
        e.start("next")
        e.emit(f"%gnext = add nuw i64 {g}, 1")
        e.br("loop")
        e.start("exit")
        if stream and self.triple.startswith("x86_64"):   # streamed stores are weakly ordered
            e.emit("call void @llvm.x86.sse.sfence()")
        e.term("ret void")
        return e.render(f"define void @{symbol}(ptr %bufs, ptr %meta, ptr %trap, i64 %begin, i64 %end) #0")

    # -- machine code ---------------------------------------------------------------------------
    def optimize(self, mod):
        """O3; returns a new module when streaming stores were marked (cpu_stream.py), else None."""
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pto.loop_interleaving = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)
        variants = [f for f in mod.functions if _VARIANT.fullmatch(f.name)]
        if variants:         # mathvec.py's vector variants: inline the calls the vectorizer made, then drop them
            for f in variants:
                f.linkage = "internal"
            late = llvm.create_new_module_pass_manager()
            # ... unless a loop with a small constant trip count was fully unrolled around the calls:
            # 62 inlined copies of sin took codegen 10x longer than the kernel was worth
            if len(re.findall(rf"call [^\n]*@{_VARIANT.pattern}\(", str(mod))) <= MAX_INLINED_VARIANT_CALLS:
                late.add_always_inliner_pass()
            late.add_global_dead_code_eliminate_pass()
            late.run(mod, pb)
        streams = next((self._streams.pop(f.name) for f in mod.functions if f.name in self._streams), None)
        if streams:
            group = next(f.name for f in mod.functions if f.name.endswith(".group"))
            text, marked = mark_streaming_stores(str(mod), group, streams)
            if marked:
                return llvm.parse_assembly(text)
        return None

    def emit(self, mod) -> bytes:
        obj = self.tm.emit_object(mod)
        from poot.devices.cpu import runtime_symbols

        missing = [s for s in undefined_symbols(obj) if s not in runtime_symbols()]
        if missing:
            from poot.errors import LoweringError

            raise LoweringError(f"the CPU code needs library functions this process cannot provide: {missing}")
        return obj

    def assembly(self, mod) -> str:
        return self.tm.emit_assembly(mod)


def undefined_symbols(obj: bytes) -> list[str]:
    """Names an ELF64 relocatable object references but does not define ([] for other formats)."""
    import struct

    if obj[:4] != b"\x7fELF" or obj[4] != 2:
        return []
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + j * shentsize) for j in range(shnum)]
    out = []
    for sh in sections:
        if sh[1] != 2:                                   # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            name_off, info, _, shndx = struct.unpack_from("<IBBH", obj, off)
            if shndx == 0 and name_off:
                end = obj.index(b"\0", strtab[4] + name_off)
                out.append(obj[strtab[4] + name_off:end].decode())
    return out


def _mem(dtype) -> str:
    from poot.jit.llvm.ir import mem_type

    return mem_type(dtype)


__all__ = ["CpuTarget", "host"]
