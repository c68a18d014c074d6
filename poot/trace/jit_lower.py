"""`jitted.lower(*args)`: what one signature of a jitted function compiles to, for inspection
(like `jax.jit(f).lower(...)`)."""
from __future__ import annotations

from poot.errors import PootError

STAGES = ("graph", "plan", "kir", "llvm", "asm")


class Lowered:
    """The traced graph, its fusion plan, each kernel's KIR, and its target code."""

    def __init__(self, prog):
        from poot.fuse.plan import plan_fusion

        self._prog = prog
        self.graph = prog.graph
        self.device = prog.device
        self.plan = prog.program.plan if prog.program is not None else plan_fusion(prog.graph)

    @property
    def kernels(self) -> list:
        """The KIR kernels of the program's launches, in launch order (control-flow bodies are
        programs of their own and are listed after the launches that run them)."""
        if self._prog.program is None:
            return []
        return _kernels(self._prog.program)

    @property
    def target(self) -> str:
        prog = self._prog.program
        return prog.device.caps.target if prog is not None else "cpu"

    def as_text(self, stage: str = "graph") -> str:
        """One stage as text: "graph", "plan", "kir", "llvm" (optimized LLVM IR) or "asm" (the
        device's target code: CPU assembly, PTX, SPIR-V disassembly)."""
        from poot.jit.llvm.compile import llvm_ir, target_assembly
        from poot.jit.kir.text import format_kernel

        if stage == "graph":
            return str(self.graph)
        if stage == "plan":
            return _plan_text(self.plan, self._prog.program)
        if stage not in STAGES:
            raise PootError(f"as_text: unknown stage '{stage}'; the stages are {', '.join(STAGES)}")
        texts = []
        for k in self.kernels:
            if stage == "kir":
                texts.append(format_kernel(k))
            elif stage == "llvm":
                texts.append(llvm_ir(k, self.target))
            else:
                texts.append(target_assembly(k, self.target))
        return "\n\n".join(texts)

    def __repr__(self) -> str:
        return (f"<Lowered {self._prog.name} on {self.device}: {len(self.graph.eqns)} equations, "
                f"{len(self.plan.kernel_steps)} steps, {len(self.kernels)} kernels>")


def _plan_text(plan, program) -> str:
    """The plan, with each host step's copies between device and host memory under its line."""
    text = str(plan)
    if program is None:
        return text
    notes = {}
    for i, (_, actions, _) in enumerate(program.steps):
        for kind, *rest in actions:
            if kind == "host" and hasattr(rest[0], "transfers"):
                notes[f"  [{i}] "] = rest[0].transfers()
    out = []
    for line in text.splitlines():
        out.append(line)
        note = notes.get(line[:line.find("]") + 2]) if line.startswith("  [") else None
        if note:
            out.append("       " + note)
    return "\n".join(out)


def _kernels(program) -> list:
    out = [rec.kernel for rec in program.launches]
    for _, actions, _ in program.steps:
        for kind, *rest in actions:
            subs = getattr(rest[0], "subs", None) if kind == "host" else None
            for sub in subs or ():
                if sub.program is not None:
                    out += _kernels(sub.program)
    return out
