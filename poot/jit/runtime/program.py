"""A compiled plan for one device, recorded once and replayed on every call.

`Program(plan, device)` generates and compiles every kernel of the plan, packs each launch's meta words
into a device buffer, and records the launch list with buffer slots. `run(inputs)` binds the input
buffers, allocates the outputs (reusing intermediates as soon as they are dead) and dispatches the
launches in order. Nothing is re-planned or re-compiled. On the CPU the run checks the trap word at its
end (launches ran on this thread); on a GPU it waits for nothing: the program is noted as pending and
its traps are raised at the device's next host read or synchronize (traps.py).
"""
from __future__ import annotations

import logging
import math
import sys
import time

import numpy as np

from poot.devices import Buffer, Device
from poot.devices.cpu_blas import gemm_for
from poot.errors import kernel_trap
from poot.fuse.plan import Plan
from poot import env
from poot.jit.runtime import traps
from poot.jit.llvm import abi
from poot.jit.runtime.control import ControlRunner
from poot.jit.runtime.epilogues import fused_epilogues
from poot.jit.runtime.host import HostStep
from poot.jit.runtime.inplace import release_step, reused_operand
from poot.jit.runtime.launch import build_arch
from poot.jit.codegen import generate, host_claims
from poot.jit.kir.model import TRAP_MESSAGES
from poot.jit.runtime.matvec import absorbed_converts, generated_matvec, route_matvec
from poot.jit.llvm.targets import target_of

log = logging.getLogger("poot.jit.runtime.program")

# the kinds of `Program._schedule` ops (compared by identity)
_LAUNCH, _ALLOC = "launch", "alloc"


class _Launch:
    __slots__ = ("name", "program", "args", "groups", "meta", "kernel", "launch_id", "copy")

    def __init__(self, name, program, args, groups, meta, kernel, launch_id, copy=None):
        self.name, self.program, self.args, self.groups = name, program, args, groups
        self.meta, self.kernel, self.launch_id = meta, kernel, launch_id
        self.copy = copy          # codegen Launch.copy: (source, destination) argument positions

    def copies_onto_itself(self, args: list) -> bool:
        """A copy launch whose source and destination are one buffer (nothing to do)."""
        return self.copy is not None and args[self.copy[0]] is args[self.copy[1]]


class _HostMatmul:
    """matmul on the CPU device through the BLAS NumPy links (zero-copy views of the buffers)."""
    __slots__ = ("a", "b", "out", "avals")

    def __init__(self, eqn):
        self.a, self.b, self.out = eqn.inputs[0].id, eqn.inputs[1].id, eqn.out.id
        self.avals = (eqn.inputs[0].aval, eqn.inputs[1].aval, eqn.out.aval)

    def run(self, bufs):
        a_aval, b_aval, o_aval = self.avals
        a = _view(bufs[self.a], a_aval)
        b = _view(bufs[self.b], b_aval)
        out = _view(bufs[self.out], o_aval, writable=True)
        if o_aval.dtype.bits == 16 and o_aval.dtype.kind == "f":
            out[...] = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(out.dtype)
        elif o_aval.size:
            np.matmul(a, b, out=out)

    def native_gemm(self):
        """(Gemm, (a, b, out) var ids) where this matmul is a BLAS call a CPU recording can hold."""
        gemm = gemm_for(*self.avals)
        return (gemm, (self.a, self.b, self.out)) if gemm is not None else None


def _view(buf: Buffer, aval, writable=False) -> np.ndarray:
    return buf.handle[: aval.nbytes].view(aval.dtype.np).reshape(aval.shape)


class Program:
    def __init__(self, plan: Plan, device: Device):
        from poot.jit.llvm.compile import compile_kernel

        self.plan, self.device = plan, device
        graph = plan.graph
        self.input_ids = [v.id for v in graph.inputs]
        self.output_ids = [v.id for v in graph.outputs]
        self.nbytes = {v.id: v.aval.nbytes for v in graph.inputs}
        # per plan step: the slots it allocates, its actions, the slots that die after it
        self.steps: list[tuple[list[int], list[tuple], list[int]]] = []
        self.trap_buffer = traps.trap_buffer(device)
        # execute.run_program's replay of this program: the Replay (poot/jit/runtime/replay.py) it builds at
        # the second call (None before, and where none applies); eager_calls counts calls up to then
        self.eager_replay = None
        self.eager_calls = 0
        self.host_traps = target_of(device.caps).is_host  # launches ran here: check the word at once
        self.index_positions: tuple[int, ...] = ()        # set by execute.compiled_program
        self.index_wheres: tuple[str, ...] = ()
        self.launches: list[_Launch] = []
        if env.debug_level() >= 2:
            print(plan, file=sys.stderr)
        host_matmul = device.shares_host_memory          # NumPy matmul on views of the buffers
        absorbed = absorbed_converts(plan) if host_matmul else set()   # read in place by CPU GEMVs
        # pointwise epilogues computed by the product kernels before them (their steps are skipped)
        fusions = fused_epilogues(plan, device.caps, device.caps.max_buffers - abi.ABI_BUFFERS)
        absorbed |= {s for f in fusions.values() for s in f.absorbed}
        never_stored = {vid for f in fusions.values() for vid in f.hidden}
        alias_src: dict[int, int] = {}                   # view slot -> the slot whose buffer it shares
        for i, step in enumerate(plan.steps):
            if i in fusions:
                step = fusions[i].step
            allocs = [v.id for v in step.outputs]
            frees = [v.id for v in plan.free_after[i] if v.id not in never_stored]
            for v in step.outputs:
                self.nbytes[v.id] = v.aval.nbytes
            if i in absorbed:
                self.steps.append(([], [], frees))
                continue
            if step.kind == "alias":
                alias_src[step.outputs[0].id] = step.inputs[0].id
                self.steps.append(([], [("alias", step.outputs[0].id, step.inputs[0].id)], frees))
                continue
            if step.kind == "control":
                runner = ControlRunner(step, plan.producer, device)
                self.steps.append((allocs, [("host", runner)], frees))
                continue
            if step.kind == "host" and not host_claims(step, device.caps):   # else: sort/FFT kernels
                self.steps.append((allocs, [("host", HostStep(step, plan.producer, device))], frees))
                continue
            if step.kind == "matmul" and host_matmul and not generated_matvec(step, plan):
                self.steps.append((allocs, [("host", route_matvec(step.eqn, device) or _HostMatmul(step.eqn))], frees))
                continue
            code = generate(step, plan, device.caps)
            temp_slots = []
            for k, nb in enumerate(code.temps):      # temporaries live for this step only
                slot = -(1000 * (i + 1) + k)
                self.nbytes[slot] = max(nb, 4)
                temp_slots.append(slot)
            actions = []
            reuse = reused_operand(step, frees, alias_src)
            if reuse is not None:            # the scatter writes into its dying operand (inplace.py)
                out = step.outputs[0].id
                allocs.remove(out)
                frees.remove(reuse[1])
                alias_src[out] = reuse[0]
                actions.append(("alias", out, reuse[0]))
            for launch in code.launches:
                rec = self._record(launch, temp_slots, compile_kernel)
                if math.prod(launch.groups):
                    actions.append(("launch", rec))
            self.steps.append((allocs + temp_slots, actions, frees + temp_slots))
        self._by_launch_id = {rec.launch_id: rec for rec in self.launches}
        self.host_reads = not self.host_traps and any(a[0] == "host" for _, acts, _ in self.steps for a in acts)
        try:
            self._schedule = self._static_schedule()
        except KeyError:        # a slot read after it was freed: the general walk says so when it runs
            self._schedule = None

    def _static_schedule(self):
        """`run`'s steps worked out once: where the pool of freed buffers would put each slot depends
        only on the slots' sizes and the order of the steps, never on the buffers, so the run's
        buffers can be a list (the inputs, then each new allocation) and each launch a list of
        positions in it. (ops, output positions); ops are (_ALLOC, nbytes) and (_LAUNCH, launch,
        argument positions, its copy pair). None where a run needs the general walk: a host step
        (it reads every slot by var id), or a step freeing an input's or a result's slot."""
        n_inputs = len(self.input_ids)
        where = {vid: k for k, vid in enumerate(self.input_ids)}   # slot -> position in the list
        sizes: list[int] = []                                      # per new allocation: its bytes
        pool: dict[int, list[int]] = {}
        outputs = set(self.output_ids)
        ops: list[tuple] = []
        for allocs, actions, frees in self.steps:
            for slot in allocs:
                nb = self.nbytes[slot]
                free = pool.get(nb)
                if free:
                    where[slot] = free.pop()
                else:
                    where[slot] = n_inputs + len(sizes)
                    sizes.append(nb)
                    ops.append((_ALLOC, nb))
            for kind, *rest in actions:
                if kind == "launch":
                    rec = rest[0]
                    ops.append((_LAUNCH, rec, tuple([where[a] for a in rec.args]), rec.copy))
                elif kind == "alias":
                    where[rest[0]] = where[rest[1]]
                else:
                    return None
            for slot in frees:
                k = where.pop(slot, None)
                if k is None:
                    continue
                if slot in outputs or k < n_inputs:
                    return None
                pool.setdefault(sizes[k - n_inputs], []).append(k)
        if any(v not in where for v in self.output_ids):
            return None
        return ops, [where[v] for v in self.output_ids]

    def _run_scheduled(self, inputs: list[Buffer]) -> list[Buffer]:
        """`run`'s steps by the static schedule (`_static_schedule`): the results."""
        dev = self.device
        allocate, dispatch = dev.allocate, dev.dispatch
        trap = self.trap_buffer
        bufs = list(inputs)
        ops, outs = self._schedule
        for op in ops:
            if op[0] is _ALLOC:
                bufs.append(allocate(op[1]))
                continue
            _, rec, positions, copy = op
            args = [bufs[k] for k in positions]
            if copy is not None and args[copy[0]] is args[copy[1]]:
                continue                        # a copy onto itself: nothing to do
            args.append(rec.meta)
            args.append(trap)
            dispatch(rec.program, args, rec.groups)
        return [bufs[k] for k in outs]

    def _record(self, launch, temp_slots, compile_kernel) -> _Launch:
        device = self.device
        arch = build_arch(launch.kernel, device.caps)
        program = device.load(compile_kernel(launch.kernel, device.caps.target, arch=arch))
        args, lengths = [], []
        for param, (kind, what) in zip(launch.kernel.buffers, launch.bindings):
            slot = what.id if kind == "var" else temp_slots[what]
            args.append(slot)
            lengths.append(self.nbytes[slot] // param.dtype.itemsize)
        launch_id = traps.next_launch_id()
        words = abi.pack_meta(launch.kernel, lengths, list(launch.scalars), launch.groups, launch_id)
        meta = device.allocate(words.nbytes)
        device.write(meta, words)
        rec = _Launch(launch.kernel.name, program, args, launch.groups, meta, launch.kernel, launch_id,
                      launch.copy)
        self.launches.append(rec)
        return rec

    def run(self, inputs: list[Buffer], donate: set[int] | None = None, wheres=None) -> list[Buffer]:
        """Run on `inputs` (one buffer per graph input); the buffers of the input positions in
        `donate` may be reused for intermediates and results once their last reader has run.
        `wheres`: the lines of the index equations of the graph this run computes, when they are not
        those the program was compiled from (they name a trap raised later)."""
        dev = self.device
        if self.host_reads:          # before the launches too: a host step's read checks them
            traps.launched(dev, self, wheres)
        if not donate and self._schedule is not None and env.debug_level() < 1:
            outs = self._run_scheduled(inputs)
            if self.host_traps:
                self._check_trap()
            else:
                traps.launched(dev, self, wheres)
                dev.flush()
            return outs
        bufs: dict[int, Buffer] = dict(zip(self.input_ids, inputs))
        pool: dict[int, list[Buffer]] = {}
        donated_after = self._donations(inputs, donate) if donate else None
        for b in donated_after.pop(-1, ()) if donated_after else ():   # an in-place first step
            pool.setdefault(b.nbytes, []).append(b)
        level = env.debug_level()
        trap = self.trap_buffer
        outputs = set(self.output_ids)
        for i, (allocs, actions, frees) in enumerate(self.steps):
            for slot in allocs:
                nb = self.nbytes[slot]
                free = pool.get(nb)
                bufs[slot] = free.pop() if free else dev.allocate(nb)
            for kind, *rest in actions:
                if kind == "launch":
                    rec = rest[0]
                    args = [bufs[a] for a in rec.args]
                    if rec.copies_onto_itself(args):
                        continue
                    args.append(rec.meta)
                    args.append(trap)
                    if level >= 1:
                        t0 = time.perf_counter()
                        dev.dispatch(rec.program, args, rec.groups)
                        dev.synchronize()
                        print(f"poot: launch {rec.name} groups={rec.groups} "
                              f"{(time.perf_counter() - t0) * 1e6:.1f} us", file=sys.stderr)
                    else:
                        dev.dispatch(rec.program, args, rec.groups)
                elif kind == "host":
                    rest[0].run(bufs)
                else:  # alias: the output shares its source's buffer
                    bufs[rest[0]] = bufs[rest[1]]
            for slot in frees:
                b = bufs.pop(slot, None)
                if b is not None and slot not in outputs:
                    pool.setdefault(b.nbytes, []).append(b)
            if donated_after and i in donated_after:
                for b in donated_after[i]:
                    pool.setdefault(b.nbytes, []).append(b)
        if self.host_traps:
            self._check_trap()
        else:
            traps.launched(dev, self, wheres)
            dev.flush()
        return [bufs[v] for v in self.output_ids]

    def _donations(self, inputs: list[Buffer], donate: set[int]) -> dict[int, list[Buffer]]:
        """Step index -> donated input buffers free after it (an input that is also a result, or is
        never read, is not reused)."""
        outs = set(self.output_ids)
        after: dict[int, list[Buffer]] = {}
        for pos in donate:
            vid = self.input_ids[pos]
            last = self.plan.input_last_use.get(vid)
            if last is not None and vid not in outs and vid not in self.plan.aliased_outputs:
                after.setdefault(release_step(self.plan, vid, last), []).append(inputs[pos])
        return after

    def _check_trap(self) -> None:
        """Raise this run's trap (the CPU device: its launches have run)."""
        words = self.device.read(self.trap_buffer)[: abi.TRAP_WORDS * 4].view(np.uint32)
        code = int(words[abi.TRAP_CODE_WORD])
        if code == 0:
            return
        launch_id = int(words[abi.TRAP_LAUNCH_WORD])
        self.device.write(self.trap_buffer, np.zeros(abi.TRAP_WORDS, dtype=np.uint32))
        raise self.trap_error(code, launch_id)

    def trap_error(self, code: int, launch_id: int):
        """The error of trap `code` written by this program's launch `launch_id`."""
        rec = self._by_launch_id.get(launch_id)
        name = rec.name if rec else f"launch {launch_id}"
        site = next((t for t in rec.kernel.traps if t.code == code), None) if rec else None
        return kernel_trap(name, code, site.where if site else None, site.what if site else TRAP_MESSAGES.get(code))
