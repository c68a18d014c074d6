"""A Program recorded once on its device and replayed per call (what a jitted function runs, and an
eager realize of a cached program from its third call on: execute.run_program).

Recording walks the program's steps once, as `Program.run` would, with stand-in buffers for the inputs
and results (of the same sizes, or 4 bytes where the recording holds addresses alone:
`_stand_in_bytes`) and real buffers for the intermediates (allocated once,
shared between steps as the plan's lifetimes allow, kept for the program's life). The device
captures the dispatches (`device.record()`: ready ctypes calls on the CPU, a CUDA graph on CUDA, one
command buffer on wgpu). Host steps (a control-flow construct, NumPy's matmul) cannot be captured:
they split the recording into segments and run between them on the call's buffers. On the CPU a
small float32/float64 matmul is not one: it is a BLAS call the recording holds among its launches
(poot/devices/cpu_blas.py), so a program of kernels and matmuls stays one segment. A replay
allocates the results, rebinds the stand-ins to the call's buffers and runs the segments.

A device without `record()` runs the program step by step instead (`Replay.build` returns None).
"""
from __future__ import annotations

import numpy as np

from poot.devices.cpu import CpuBuffer, CpuDevice, ResultArena, buffer_address
from poot.jit.runtime import traps
from poot.jit.llvm import abi
from poot.jit.llvm.targets import target_of


def _stand_in_bytes(nbytes: int, dev, donate) -> int:
    """Stand-ins have the size of what replaces them where a device sizes its bindings at record time
    (wgpu's bind groups, Vulkan's descriptor sets) or a donating replay places results in them; 4 bytes
    where the recording holds addresses alone (Device.records_addresses): a jitted GEMV over a 117 MB
    matrix does not keep a second 117 MB buffer for its recording."""
    return 4 if dev.records_addresses and not donate else max(nbytes, 4)


def _native_gemm(action, dev):
    """(Gemm, var ids) for a host step that a CPU recording can hold as a native BLAS call."""
    offer = getattr(action, "native_gemm", None)
    return offer() if offer is not None and target_of(dev.caps).is_host else None


class Replay:
    def __init__(self, program, segments, inputs, fresh, outputs, slots):
        self.program = program
        self.segments = segments      # ("rec", recording, stand-ins it uses) | ("host", action)
        self.inputs = inputs          # stand-ins of the inputs, in order
        self.fresh = fresh            # [(stand-in, nbytes)] for the buffers results live in
        self.outputs = outputs        # per result: ("in", input position) or ("fresh", index)
        self.slots = slots            # for host steps: var id -> fixed buffer or stand-in
        # the intermediates are shared: one replay at a time. A call takes the one token and puts it
        # back (list.pop and append are atomic; a lock's acquire and release cost five times as much)
        self.turn = [True]
        self.host_steps = any(s[0] == "host" for s in segments)
        dev = program.device
        self.trap_words = (dev.read(program.trap_buffer)[: abi.TRAP_WORDS * 4].view(np.uint32)
                           if dev.shares_host_memory else None)   # the trap word, read in place

    @classmethod
    def build(cls, program, donate: frozenset = frozenset()) -> "Replay | None":
        """The replay of `program`; with `donate` (graph-input positions a call gives up), one whose
        intermediates and results may live in those inputs' buffers once their last reader has run,
        as Program.run places them: a result so placed is returned as that input's buffer."""
        dev = program.device
        if not hasattr(dev, "record"):
            return None
        alias_root: dict[int, int] = {}
        for _, actions, _ in program.steps:
            for kind, *rest in actions:
                if kind == "alias":
                    alias_root[rest[0]] = alias_root.get(rest[1], rest[1])
        input_pos = {vid: k for k, vid in enumerate(program.input_ids)}
        out_roots = {alias_root.get(v, v) for v in program.output_ids}
        bufs = {vid: dev.allocate(_stand_in_bytes(program.nbytes[vid], dev, donate)) for vid in program.input_ids}
        inputs = [bufs[vid] for vid in program.input_ids]
        stand_ins = {id(b) for b in inputs}
        fresh_index: dict[int, int] = {}
        fresh: list = []
        pool: dict[int, list] = {}
        donated_after = program._donations(inputs, set(donate)) if donate else {}
        donated_pos = {id(inputs[p]): p for p in donate}
        donated_out: dict[int, int] = {}          # result slot -> the donated input position it lives in
        for b in donated_after.pop(-1, ()):       # an in-place first step
            pool.setdefault(b.nbytes, []).append(b)
        segments: list = []
        slots: dict[int, object] = {}
        trap = program.trap_buffer
        rec = None
        for i, (allocs, actions, frees) in enumerate(program.steps):
            for slot in allocs:
                nb = program.nbytes[slot]
                given = [x for x in pool.get(nb, ()) if id(x) in donated_pos] if slot in out_roots else ()
                if given:
                    b = given[-1]
                    pool[nb].remove(b)
                    donated_out[slot] = donated_pos[id(b)]
                elif slot in out_roots:
                    b = dev.allocate(_stand_in_bytes(nb, dev, donate))
                    stand_ins.add(id(b))
                    fresh_index[slot] = len(fresh)
                    fresh.append((b, nb))
                else:
                    free = pool.get(nb)
                    b = free.pop() if free else dev.allocate(nb)
                bufs[slot] = b
            for kind, *rest in actions:
                native = _native_gemm(rest[0], dev) if kind == "host" else None
                if kind == "launch" or native is not None:
                    if rec is None:
                        rec = dev.record()
                        rec.__enter__()
                        used: dict[int, object] = {}
                        segments.append(("rec", rec, used))
                    ids = rest[0].args if native is None else native[1]
                    args = [bufs[a] for a in ids]
                    for b in args:
                        if id(b) in stand_ins:
                            used[id(b)] = b
                    if native is None:
                        if not rest[0].copies_onto_itself(args):
                            dev.dispatch(rest[0].program, args + [rest[0].meta, trap], rest[0].groups)
                    else:                  # a BLAS matmul the CPU recording holds among its calls
                        rec.add_gemm(native[0], args)
                elif kind == "alias":
                    bufs[rest[0]] = bufs[rest[1]]
                else:                      # a host step: ends the segment, runs between
                    if rec is not None:
                        rec.__exit__(None, None, None)
                        rec = None
                    slots.update(bufs)
                    segments.append(("host", rest[0]))
            for slot in frees:
                b = bufs.pop(slot, None)
                if b is not None and id(b) not in stand_ins:
                    pool.setdefault(b.nbytes, []).append(b)
            for b in donated_after.get(i, ()):
                pool.setdefault(b.nbytes, []).append(b)
        if rec is not None:
            rec.__exit__(None, None, None)
        outputs = []
        for vid in program.output_ids:
            root = alias_root.get(vid, vid)
            if root in input_pos or root in donated_out:
                outputs.append(("in", input_pos[root] if root in input_pos else donated_out[root]))
            else:
                outputs.append(("fresh", fresh_index[root]))
        segments = [(s[0], s[1], list(s[2].values())) if s[0] == "rec" else s for s in segments]
        return (CpuReplay if target_of(dev.caps).is_host else cls)(program, segments, inputs, fresh,
                                                                outputs, slots)

    def run(self, inputs: list, wheres=None):
        """The results for `inputs`, or None when another thread is replaying (run the program).
        Off the CPU nothing waits: the traps surface at the device's next host read (traps.py)."""
        turn = self.turn
        try:
            turn.pop()
        except IndexError:
            return None
        try:
            dev = self.program.device
            if self.trap_words is None:
                traps.launched(dev, self.program, wheres)
            swap = dict(zip(self.inputs, inputs))
            made = []
            for stand_in, nb in self.fresh:
                b = dev.allocate(nb)
                swap[stand_in] = b
                made.append(b)
            self._run_segments(swap)
            if self.trap_words is None:
                if self.host_steps:           # again: a host step's read may have checked the first
                    traps.launched(dev, self.program, wheres)
                dev.flush()
            elif self.trap_words[abi.TRAP_CODE_WORD]:
                self.program._check_trap()
            return [inputs[k] if kind == "in" else made[k] for kind, k in self.outputs]
        finally:
            turn.append(True)

    def _run_segments(self, swap: dict, patched: bool = False) -> None:
        """Each segment in order: recordings rebound to `swap[stand_in]` (or, `patched`, already
        holding this call's addresses), host steps on the call's buffers."""
        host_bufs = None
        for seg in self.segments:
            if seg[0] == "rec":
                if patched:
                    seg[1].run()
                else:
                    seg[1].replay({b: swap[b] for b in seg[2]})
            else:
                if host_bufs is None:
                    host_bufs = {vid: swap.get(b, b) for vid, b in self.slots.items()}
                seg[1].run(host_bufs)


class CpuReplay(Replay):
    """On the CPU the call's addresses are written straight into the recorded pointer slots, and the
    small results of a call are carved from shared chunks (cpu.ResultArena). An input's slots are
    rewritten only where its address changed: a loop passes the same arrays again."""

    def __init__(self, program, segments, inputs, fresh, outputs, slots):
        super().__init__(program, segments, inputs, fresh, outputs, slots)
        recs = [s[1] for s in segments if s[0] == "rec"]
        self.input_slots = [[p for r in recs for p in r.pointer_slots(b)] for b in inputs]
        # (pointer array, index, fresh buffer index) of each slot holding a fresh buffer's address
        self.fresh_slots = [(ptrs, k, j) for j, (b, _) in enumerate(fresh) for r in recs
                            for ptrs, k in r.pointer_slots(b)]
        self.fresh_sizes = [nb for _, nb in fresh]
        dev = program.device
        self.arena = ResultArena(dev, self.fresh_sizes) if isinstance(dev, CpuDevice) and fresh \
            and ResultArena.fits(self.fresh_sizes) else None
        self.input_addresses: list = [None] * len(inputs)   # what the input slots hold now
        # the one recording of a program without host steps, else None
        self.recording = segments[0][1] if len(segments) == 1 and segments[0][0] == "rec" else None
        self.trap_code = memoryview(self.trap_words)     # [TRAP_CODE_WORD] reads a Python int
        # per result: its position among the inputs, or ~its position among the fresh buffers
        self.result_picks = [k if kind == "in" else ~k for kind, k in outputs]
        self.only_fresh = all(kind == "fresh" for kind, _ in outputs) and \
            [k for _, k in outputs] == list(range(len(fresh)))

    def run(self, inputs: list, wheres=None):
        turn = self.turn
        try:
            turn.pop()
        except IndexError:
            return None
        try:
            known = self.input_addresses
            for j, b in enumerate(inputs):
                addr = b.address if type(b) is CpuBuffer else buffer_address(b)
                if addr != known[j]:
                    self.rebind(j, addr)
            if self.recording is not None:
                made = self.launch()
            else:
                made = self._fresh()
                swap = dict(zip(self.inputs, inputs))
                swap.update(zip((b for b, _ in self.fresh), made))
                self._run_segments(swap, patched=True)
                if self.trap_code[abi.TRAP_CODE_WORD]:
                    self.program._check_trap()
            if self.only_fresh:
                return made
            return [inputs[k] if k >= 0 else made[~k] for k in self.result_picks]
        finally:
            turn.append(True)

    def rebind(self, j: int, addr: int) -> None:
        """Point the slots of input `j` at `addr`, the address of this call's buffer. The caller holds
        the turn and calls it only where the address changed (`input_addresses[j]` differs)."""
        for ptrs, k in self.input_slots[j]:
            ptrs[k] = addr
        self.input_addresses[j] = addr

    def launch(self) -> list:
        """The fresh result buffers of a call of the one recording (`recording` is not None), its
        inputs bound (`rebind`), filled by its native call (or its dispatches). The caller holds the
        turn. A caller that binds the inputs as it finds their buffers (a jitted call) calls this
        itself, which spares it a list of the inputs, a second loop over them and a frame."""
        made = self._fresh()
        rec = self.recording
        chain = rec.chain
        if chain is not None and chain.inline is not None:   # rec.run(), less two frames
            chain.inline()
            chain.calls += 1
        else:
            rec.run()
        if self.trap_code[abi.TRAP_CODE_WORD]:
            self.program._check_trap()
        return made

    def _fresh(self) -> list:
        """Fresh result buffers, their addresses placed in the slots that hold them."""
        if self.arena is not None:
            made = self.arena.take()
        else:
            allocate = self.program.device.allocate
            made = [allocate(nb) for nb in self.fresh_sizes]
        for ptrs, k, j in self.fresh_slots:
            ptrs[k] = made[j].address
        return made
