"""SPIR-V code generation in a worker process.

LLVM 22's SPIR-V backend is not safe to run many times in one process: once earlier modules and target
machines have been freed, it can hand a basic block an id that is already taken (spirv-val: "Id N is
defined more than once"; seen in about a third of kernels after the first few, never in a fresh
process or while every module and machine stays alive), and on IR it cannot select it abort()s (llvmlite
is built with assertions). So poot's process only writes LLVM IR; a worker process optimizes it and
emits SPIR-V, keeping every module and target machine alive (the state that breaks is keyed by their
addresses) and exiting after MAX_COMPILES, which bounds its memory. A worker that dies turns into a
poot.LoweringError carrying LLVM's message; the next compile starts a fresh worker.

Run as a script it is the worker: it imports only llvmlite, and reads and writes length-prefixed
messages on stdin/stdout (request: LLVM IR text; reply: status byte 0 + SPIR-V, or 1 + error text).
"""
from __future__ import annotations

import atexit
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading

TRIPLE = "spirv1.6-unknown-vulkan1.3-compute"
EXTENSIONS = "+SPV_EXT_shader_atomic_float_add"
MAX_COMPILES = 64
NO_GVN = "; poot: without NewGVN"    # first line of a request to optimize without it (see compile_spirv)
TIMEOUT_S = 120


# --- the worker side (no poot imports: it starts fast) ---------------------------------------------
def _optimize(llvm, mod, tm, gvn: bool = True) -> None:
    """A light pipeline: inline mathlib, promote locals to SSA, fold constants, number values, drop
    dead code. No instcombine: it rewrites shared-array GEPs into a form the SPIR-V backend cannot select
    for logical addressing (an assertion abort). No simplifycfg (nor, at emission, CodeGenPrepare: see
    worker_main): LLVM's SPIR-V structurizer takes the lowering's if/else and loop shapes for the
    constructs, and a pass that folds their empty merge and latch blocks away (simplifycfg, before or
    after mem2reg) leaves selections without a merge of their own and loops with one back edge per
    branch, which LoopSimplify then splits into nested loops: the structurizer turned those into SPIR-V
    that naga refuses, lavapipe's pipeline creation fails on (or computes wrongly), and often even
    `spirv-val` rejects. The driver's compiler optimizes the shader anyway."""
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.run(mod, pb)
    fpm = llvm.create_new_function_pass_manager()
    for add in (fpm.add_sroa_pass, fpm.add_sccp_pass,
                fpm.add_new_gvn_pass if gvn else None, fpm.add_aggressive_dce_pass):
        if add is not None:
            add()
    for fn in mod.functions:
        if not fn.is_declaration:
            fpm.run(fn, pb)
    gdce = llvm.create_new_module_pass_manager()
    gdce.add_global_dead_code_eliminate_pass()
    gdce.run(mod, pb)


# NewGVN marks a block it found unreachable with a store of poison through a null pointer; CodeGenPrepare
# deleted such blocks, but it no longer runs (worker_main). The store's i8 type would reach naga, which
# has no 8-bit integers, so the marker is dropped (the block stays, unreachable, behind a constant branch).
_UNREACHABLE_MARKER = re.compile(r"^\s*store i\d+ poison, ptr (?:null|poison)(?:, align \d+)?\n", re.M)
_FSUB = re.compile(r"^(\s*%[\w.]+ = fsub (?:[a-z]+ )*)(float|double) ([^,]+), (.+)$", re.M)
# a float product or quotient with a literal zero operand (either side): `fdiv float 0.000000e+00, %x`
_ZERO = r"-?0\.0+e\+00"
_ZERO_OPERAND = re.compile(rf"^(\s*%[\w.]+ = f(?:div|mul) (?:[a-z]+ )*)(float|double) "
                           rf"(?:({_ZERO}), ([^,\s]+)|([^,\s]+), ({_ZERO}))$", re.M)
# a float sum or product with any literal operand (decimal, or LLVM's 16 hex digits)
_LITERAL = r"-?\d\.\d+e[+-]\d+|0x[0-9A-Fa-f]{16}"
_LITERAL_OPERAND = re.compile(rf"^(\s*%[\w.]+ = f(?:add|mul) (?:[a-z]+ )*)(float|double) "
                              rf"(?:({_LITERAL}), ([^,\s]+)|([^,\s]+), ({_LITERAL}))$", re.M)
_TRAP = re.compile(r"^!poot\.trap\.binding = !\{!(\d+)\}$", re.M)
_RW_I32 = 'target("spirv.VulkanBuffer", [0 x i32], 12, 1)'
_HANDLE_FN = "llvm.spv.resource.handlefrombinding.tspirv.VulkanBuffer_a0i32_12_1t"
_POINTER_FN = "llvm.spv.resource.getpointer.p11.tspirv.VulkanBuffer_a0i32_12_1t"


def trap_binding_metadata(binding: int) -> str:
    """Module metadata naming the trap buffer's binding for the worker (the target adds it)."""
    return f"!poot.trap.binding = !{{!9999}}\n!9999 = !{{i32 {binding}}}"


def _opaque_operands(ir: str, source: str) -> str:
    """Hide the left operand of every float subtraction behind an xor with a zero loaded from the trap
    buffer (word 3, never written): Mesa's NIR folds `(a + b) - a` to `b` in any float op not marked
    exact, which erases the rounding error that mathlib's error-free transformations (TwoSum and kin)
    compute; naga drops SPIR-V's NoContraction, the one way to mark an op exact. A literal zero
    operand of a division or product is hidden the same way: lavapipe turned `x / 0.0` into 0 or a
    denormal, not NaN or inf (var of an empty array divides by a literal 0), and `0.0 / x` and
    `0.0 * x` into 0 (NIR lowers a division to a product with the reciprocal and folds a product with
    zero to zero), not NaN where x is 0, inf or NaN (`zeros(n) / 0.0`). Every other literal operand
    of a sum or product is hidden too: NIR reassociates `(a * b) * 100.0` into `(a * 100.0) * b` to
    bring constants together, which rounds differently (`round(x * s, 2)` scales by a literal 100.0,
    and one element in a few thousand came out 0.01 off NumPy's). After inlining, the
    entry function holds every subtraction. The trap binding comes from the module's metadata (in
    `source`, the IR before optimization); its handle is made again if optimization dropped it."""
    if " = fsub " not in ir and not _ZERO_OPERAND.search(ir) and not _LITERAL_OPERAND.search(ir):
        return ir
    meta = _TRAP.search(source)
    if meta is None:
        return ir
    node = re.search(rf"^!{meta.group(1)} = !{{i32 (\d+)}}$", source, re.M)
    binding = int(node.group(1))
    found = re.search(rf"^\s*(%[\w.]+) = (?:tail )?call {re.escape(_RW_I32)} @{re.escape(_HANDLE_FN)}"
                      rf"\(i32 0, i32 {binding},", ir, re.M)
    entry = re.search(r"^define void @[\w.$]+\(\)[^\n]*\{\n[\w.]+:\n", ir, re.M)
    zero = ""
    if found:
        handle, at = found.group(1), ir.index("\n", found.start()) + 1
    else:
        handle, at = "%poot.th", entry.end()
        zero = (f"  %poot.th = call {_RW_I32} @{_HANDLE_FN}(i32 0, i32 {binding}, i32 1, i32 0, ptr @.str.poot.trap)\n")
        d = entry.start()
        ir = ir[:d] + '@.str.poot.trap = private unnamed_addr constant [5 x i8] c"trap\\00"\n\n' + ir[d:]
        if f"@{_HANDLE_FN}(" not in ir.split("define")[0] and f"declare {_RW_I32} @{_HANDLE_FN}" not in ir:
            ir += f"\ndeclare {_RW_I32} @{_HANDLE_FN}(i32, i32, i32, i32, ptr)\n"
        at = re.search(r"^define void @[\w.$]+\(\)[^\n]*\{\n[\w.]+:\n", ir, re.M).end()
    zero += (f"  %poot.zp = call ptr addrspace(11) @{_POINTER_FN}({_RW_I32} {handle}, i32 3)\n"
             "  %poot.z32 = load i32, ptr addrspace(11) %poot.zp, align 4\n")
    if any(m.group(2) == "double" for m in [*_FSUB.finditer(ir), *_ZERO_OPERAND.finditer(ir),
                                            *_LITERAL_OPERAND.finditer(ir)]):     # a 64-bit zero for doubles
        zero += "  %poot.z64 = zext i32 %poot.z32 to i64\n"
    if f"declare ptr addrspace(11) @{_POINTER_FN}(" not in ir:
        ir += f"\ndeclare ptr addrspace(11) @{_POINTER_FN}({_RW_I32}, i32)\n"
    bits = {"float": 32, "double": 64}
    count = [0]

    def opaque(ty, v):
        """Lines that turn `v` into an equal value the driver cannot see through, and that value's name."""
        count[0] += 1
        k, w = count[0], bits[ty]
        return (f"  %poot.o{k} = bitcast {ty} {v} to i{w}\n  %poot.x{k} = xor i{w} %poot.o{k}, %poot.z{w}\n"
                f"  %poot.f{k} = bitcast i{w} %poot.x{k} to {ty}\n"), f"%poot.f{k}"

    def hide(m):
        head, ty, a, b = m.groups()
        lines, name = opaque(ty, a)
        return f"{lines}{head}{ty} {name}, {b}"

    def hide_zero(m):
        head, ty, zero_a, b, a, zero_b = m.groups()
        if zero_a is not None:
            lines, name = opaque(ty, zero_a)
            return f"{lines}{head}{ty} {name}, {b}"
        lines, name = opaque(ty, zero_b)
        return f"{lines}{head}{ty} {a}, {name}"

    ir = ir[:at] + zero + ir[at:]
    return _LITERAL_OPERAND.sub(hide_zero, _ZERO_OPERAND.sub(hide_zero, _FSUB.sub(hide, ir)))


def _read(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def worker_main() -> None:
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.set_option("", f"--spirv-ext={EXTENSIONS}")
    # CodeGenPrepare runs before the SPIR-V structurizer and folds blocks holding only phis and a branch
    # into their successor: the merge blocks of selections and the latches of loops (see _optimize)
    llvm.set_option("", "--disable-cgp")
    target = llvm.Target.from_triple(TRIPLE)
    keep = []                                   # see the module doc: freed modules/machines break ids
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            (n,) = struct.unpack("<I", _read(inp, 4))
            ir = _read(inp, n).decode()
        except EOFError:
            return
        try:
            mod = llvm.parse_assembly(ir)
            mod.verify()
            tm = target.create_target_machine(opt=2)
            _optimize(llvm, mod, tm, gvn=not ir.startswith(NO_GVN))
            mod = llvm.parse_assembly(_opaque_operands(_UNREACHABLE_MARKER.sub("", str(mod)), ir))
            mod.verify()
            emit_tm = target.create_target_machine(opt=2)
            reply = b"\x00" + emit_tm.emit_object(mod)
            keep.append((mod, tm, emit_tm))
        except Exception as e:                   # noqa: BLE001 -- reported to the parent as text
            reply = b"\x01" + f"{type(e).__name__}: {e}".encode()
        out.write(struct.pack("<I", len(reply)) + reply)
        out.flush()


# --- the parent side -------------------------------------------------------------------------------
class _Worker:
    def __init__(self):
        self.lock = threading.Lock()
        self.proc = None
        self.stderr = None
        self.count = 0
        atexit.register(self.stop)

    def start(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr)
        self.count = 0

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:                    # noqa: BLE001 -- it is going away either way
                self.proc.kill()
            self.proc = None

    def died(self, name: str) -> Exception:
        from poot.errors import LoweringError

        self.proc.kill()
        self.stderr.seek(0)
        lines = [ln for ln in self.stderr.read().decode(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith((" ", "Stack dump", "#", "0.", "1.", "2."))]
        self.proc = None
        return LoweringError(f"kernel '{name}': LLVM's SPIR-V backend failed: "
                             + (" | ".join(lines[-4:]) or "the worker process died"))

    def compile(self, ir: str, name: str) -> bytes:
        from poot.errors import LoweringError

        with self.lock:
            if self.proc is None or self.proc.poll() is not None or self.count >= MAX_COMPILES:
                self.stop()
                self.start()
            self.count += 1
            data = ir.encode()
            try:
                self.proc.stdin.write(struct.pack("<I", len(data)) + data)
                self.proc.stdin.flush()
                reply = self._reply()
            except (EOFError, BrokenPipeError, OSError):
                raise self.died(name) from None
            if reply[:1] != b"\x00":
                raise LoweringError(f"kernel '{name}': LLVM's SPIR-V backend failed: {reply[1:].decode()}")
            return reply[1:]

    def _reply(self) -> bytes:
        done = threading.Event()
        timer = threading.Timer(TIMEOUT_S, lambda: None if done.is_set() else self.proc.kill())
        timer.start()
        try:
            (n,) = struct.unpack("<I", _read(self.proc.stdout, 4))
            return _read(self.proc.stdout, n)
        finally:
            done.set()
            timer.cancel()


_worker = _Worker()


def compile_spirv(ir: str, name: str = "?") -> bytes:
    """Optimized SPIR-V (LLVM's output, before the naga post-pass) for LLVM IR text. NewGVN can fail
    to converge and abort ("Seem to have processed the same Value a lot": a full_iota_take gather of
    add.at); such a kernel is compiled again without it. Any other failure of a worker that had
    compiled other modules is tried once more in a fresh worker."""
    from poot.errors import LoweringError

    try:
        return _worker.compile(ir, name)
    except LoweringError as e:
        if "NewGVN" in str(e):
            return _worker.compile(f"{NO_GVN}\n{ir}", name)
        if _worker.count <= 1:          # a fresh worker failed on it: the kernel's own failure
            raise
    # a worker that had compiled other modules can fail where a fresh one does not (the module
    # docstring; seen as "Unsupported ptrcast user" once in hundreds of kernels): once more, fresh
    restart()
    return _worker.compile(ir, name)


def restart() -> None:
    """Drop the current worker: the next compile starts a fresh one."""
    with _worker.lock:
        _worker.stop()


if __name__ == "__main__":
    worker_main()
