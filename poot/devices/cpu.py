"""The CPU device: buffers are 64-byte aligned NumPy byte arrays; programs are native code produced
by poot's LLVM CPU target, run on the calling thread or split over the cores (ctypes releases the GIL
during each call).

Programs: `load(artifact)` links the artifact's object code into an MCJIT engine (no recompilation: a
disk-cached object loads in about a millisecond) and returns a CpuProgram wrapping the entry
`void entry(ptr buffers, ptr meta, ptr trap, i64 group_begin, i64 group_end)`. Kernels go into kernel
engines of at most ENGINE_OBJECTS object files each, not into one engine for the life of the process:
MCJIT cannot unload an object file, so a process that sees ever new shapes kept the code of every kernel
it ever compiled. Each program holds its engine; the device holds programs only weakly, and an engine
retired (full) whose programs are all gone is disposed, freeing its code (see `load`). The device's
first engine holds the native thread pool and the recordings' chains (cpu_chain.py) and is never dropped.
`dispatch(program, buffers, grid)` takes the kernel's buffers followed by the meta and trap buffers
(poot/jit/llvm/abi.py) and runs the linearized workgroups. A split launch runs on the native thread pool
of cpu_threads.py (a split costs microseconds), or, where the platform has none, on Python threads
taking chunks from a shared queue (a round trip costs 10-250 us). Whether a launch is split is
decided by its work, not its number of workgroups: each program keeps the time one of its
workgroups takes (measured on its launches), and a launch expected to take less than INLINE_NS runs
on the calling thread, as does a grid of one workgroup.
"""
from __future__ import annotations

import ctypes
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from poot.errors import DeviceError, OutOfMemoryError
from poot.devices.base import Buffer, Capabilities, Device
from poot.devices.cpu_pool import MIN_BYTES as POOL_MIN_BYTES, HostPool
from poot.devices.cpu_threads import NativePool, cores, start as start_native_pool

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


# Functions compiled kernels may call that LLVM's code generator emits as library calls (memset for
# zero-fill loops, fmod for float `rem`, half-precision conversions on CPUs without F16C). MCJIT does
# not search the process for them, so they are registered explicitly; poot's CPU target refuses an
# object that needs anything else (instead of crashing when it is called).
RUNTIME_SYMBOLS = ("memset", "memcpy", "memmove", "fmod", "fmodf", "__truncdfhf2", "__truncsfhf2",
                   "__extendhfsf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee",
                   # CPUs without FMA / SSE4.1 get these as calls instead of instructions
                   "fma", "fmaf", "roundeven", "roundevenf", "floor", "floorf", "ceil", "ceilf", "trunc", "truncf")
_runtime: dict | None = None


def runtime_symbols() -> dict:
    """{name: address} of the RUNTIME_SYMBOLS found in libc, libm and libgcc_s, registered with LLVM."""
    global _runtime
    if _runtime is None:
        import llvmlite.binding as llvm

        found = {}
        for lib in ("libc.so.6", "libm.so.6", "libgcc_s.so.1"):
            try:
                handle = ctypes.CDLL(lib)
            except OSError:
                continue
            for name in RUNTIME_SYMBOLS:
                if name not in found and hasattr(handle, name):
                    found[name] = ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
        for name, addr in found.items():
            llvm.add_symbol(name, addr)
        _runtime = found
    return _runtime


_addresses: dict = {}


def _address(handle: np.ndarray) -> int:
    """The data address of a buffer's NumPy array (cached per live array: `.ctypes.data` costs ~1 us)."""
    hit = _addresses.get(id(handle))
    if hit is not None and hit[0]() is handle:
        return hit[1]
    key = id(handle)
    addr = handle.ctypes.data
    _addresses[key] = (weakref.ref(handle, lambda _, k=key: _addresses.pop(k, None)), addr)
    return addr


_ENGINE_LOCK = threading.Lock()


class CpuBuffer(Buffer):
    """A CPU buffer that knows its data address (asking NumPy costs about a microsecond a time)."""

    __slots__ = ("address",)

    def __init__(self, device, nbytes: int, handle: np.ndarray, address: int):
        # Buffer's fields set here, not through super().__init__: made on every result of every call
        self.device, self.nbytes, self.handle, self.address = device, nbytes, handle, address


def buffer_address(buf: Buffer) -> int:
    """The data address of a CPU buffer. Another device's buffer (a GPU-resident index array handed to
    a CPU gather, say) is refused by name here: its handle has no host address to read."""
    if type(buf) is CpuBuffer:
        return buf.address
    handle = getattr(buf, "handle", None)
    if not isinstance(handle, np.ndarray):
        where = getattr(getattr(buf, "device", None), "name", "?")
        raise DeviceError(f"cpu: {buf!r} is not a buffer of the cpu device (it lives on '{where}', "
                          f"or was freed); move the array first, e.g. x.to('cpu')")
    return _address(handle)


def launch_args(buffers: list):
    """(pointer array, meta, trap address) of a dispatch's buffers: kernel buffers + [meta, trap]."""
    n = len(buffers) - 2
    ptrs = (ctypes.c_void_p * max(n, 1))(*[buffer_address(b) for b in buffers[:n]])
    meta = buffers[n].handle                      # a ctypes array (launch's host fast path) or NumPy
    meta = meta if isinstance(meta, ctypes.Array) else meta.ctypes.data
    return ptrs, meta, buffer_address(buffers[n + 1])


CHUNKS_PER_WORKER = 8            # Python-thread split: chunks per thread (each costs a GIL round trip)
NATIVE_CHUNKS_PER_THREAD = 16    # native split: chunks per thread (a claim is one compare-and-swap)
INLINE_NS = 30_000       # a launch expected to take less than this runs on the calling thread


def run_groups(pool_of, program, ptrs, meta, trap, total: int, cores: int) -> None:
    """Run groups [0, total) of `program` on this thread, or split over `cores` threads when the
    program's measured time per group says the launch takes INLINE_NS or more. A program's first
    launch runs chunks here until they are done or have taken INLINE_NS (its first group is slow:
    cold code), then splits the rest. Every launch measures the time per group again (the time spent
    inside the kernel, not waiting for threads), so one preempted run costs one split launch, and a
    kernel whose work grows with a scalar argument is split once it is seen to."""
    fn = program.fn
    workers = min(cores, total)
    est = program.group_ns
    if workers > 1 and est is None:
        step = max(1, total // (workers * CHUNKS_PER_WORKER))
        begin, t0 = 0, time.perf_counter_ns()
        while begin < total:
            fn(ptrs, meta, trap, begin, min(total, begin + step))
            begin = min(total, begin + step)
            if time.perf_counter_ns() - t0 >= INLINE_NS:
                break
        busy = time.perf_counter_ns() - t0
        if begin < total:
            busy += run_split(pool_of(), program, ptrs, meta, trap, total, workers, begin)
    elif workers <= 1 or est * total < INLINE_NS:
        t0 = time.perf_counter_ns()
        fn(ptrs, meta, trap, 0, total)
        busy = time.perf_counter_ns() - t0
    else:
        busy = run_split(pool_of(), program, ptrs, meta, trap, total, workers)
    program.group_ns = busy / total


def run_split(pool, program, ptrs, meta, trap, total: int, workers: int, begin: int = 0) -> int:
    """Run groups [begin, total) on up to `workers` threads, this one included; returns the
    nanoseconds of kernel time they spent (for a native pool: the wall time times the threads)."""
    if isinstance(pool, NativePool):
        threads = min(workers, pool.workers + 1)
        chunk = max(1, (total - begin) // (threads * NATIVE_CHUNKS_PER_THREAD))
        t0 = time.perf_counter_ns()
        if pool.run(program.address, ptrs, meta, trap, total, begin, chunk):
            return (time.perf_counter_ns() - t0) * threads
        program.fn(ptrs, meta, trap, begin, total)       # another thread's launch holds the pool
        return time.perf_counter_ns() - t0
    return _run_split_python(pool, program.fn, ptrs, meta, trap, total, workers, begin)


def _run_split_python(pool, fn, ptrs, meta, trap, total: int, workers: int, begin: int = 0) -> int:
    """Without the native pool (cpu_threads.start returned None): the groups on this thread and the
    ThreadPoolExecutor's, which take contiguous chunks of about (total - begin) / (workers *
    CHUNKS_PER_WORKER) groups from a shared queue until none are left; returns the nanoseconds spent
    in the kernel, summed over the chunks. The caller waits only for chunks some thread has started:
    a pool thread the OS has not scheduled yet finds the queue empty when it runs."""
    count = total - begin
    n = min(count, workers * CHUNKS_PER_WORKER)
    bounds = [begin + count * j // n for j in range(n + 1)]
    chunks = iter(range(n))            # next() on it is atomic under the GIL: each chunk runs once
    left = [n, 0]                      # chunks not finished, nanoseconds spent in finished ones
    lock = threading.Lock()
    finished = threading.Event()

    def work():
        for j in chunks:
            t0 = time.perf_counter_ns()
            fn(ptrs, meta, trap, bounds[j], bounds[j + 1])
            spent = time.perf_counter_ns() - t0
            with lock:
                left[0] -= 1
                left[1] += spent
                if not left[0]:
                    finished.set()

    for _ in range(workers - 1):
        pool.submit(work)
    work()
    finished.wait()
    return left[1]


class CpuProgram:
    """A loaded kernel: its name, entry symbol and callable entry point. `engine` (a _KernelEngine, or
    None) is the engine holding its code, referenced so that the code stays while the program does."""

    __slots__ = ("name", "entry", "fn", "address", "group_ns", "engine", "__weakref__")

    def __init__(self, name: str, entry: str, address: int, engine=None):
        self.name, self.entry, self.address, self.engine = name, entry, address, engine
        self.fn = _ENTRY(address)
        self.group_ns: float | None = None     # measured time per workgroup (see run_groups)

    def __repr__(self) -> str:
        return f"<CpuProgram {self.name} at 0x{self.address:x}>"


ENGINE_OBJECTS = 32     # kernel object files linked into one engine before the next is started


class _KernelEngine:
    """An MCJIT engine holding kernels' code: `entries` maps the entry symbols linked into it to their
    addresses (a kernel whose program was dropped is found again here, not linked twice), `live` the
    programs made from it that are still referenced (weakly: a live one keeps the engine from disposal),
    `objects` the object files it holds."""

    __slots__ = ("ee", "entries", "live", "objects")

    def __init__(self):
        import llvmlite.binding as llvm

        from poot.devices.llvm_lock import LLVM_LOCK

        tm = llvm.Target.from_default_triple().create_target_machine(jit=True)   # owned by the engine
        with LLVM_LOCK:               # the empty module lives in LLVM's global context
            self.ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        self.entries: dict[str, int] = {}
        self.live = weakref.WeakSet()
        self.objects = 0

    def link(self, artifact) -> int:
        """Add `artifact`'s object code; the address of its entry."""
        import llvmlite.binding as llvm

        self.ee.add_object_file(llvm.ObjectFileRef.from_data(bytes(artifact.data)))
        self.objects += 1
        addr = self.ee.get_function_address(artifact.entry)
        if not addr:
            raise DeviceError(f"kernel '{artifact.name}': entry symbol {artifact.entry} not found in its object code")
        self.entries[artifact.entry] = addr
        return addr

    def dispose(self) -> None:
        """Free the engine and its code: only once no program made from it can run again."""
        from poot.devices.llvm_lock import LLVM_LOCK

        with LLVM_LOCK:               # disposing deletes the engine's module from LLVM's global context
            self.ee.close()


_ALIGN = 64
RESULTS_MAX_BYTES = 3072     # a call's results carved from shared chunks take at most this together
RESULT_CHUNK_BYTES = 16384   # the size of one such chunk (a kept result holds at most one)


class ResultArena:
    """The small result buffers of one recorded program's calls, carved one after another out of
    shared chunks (each result on a 64-byte boundary).

    Why: a replayed call makes a fresh buffer per result, and each allocation costs about a
    microsecond of Python (the NumPy array, its address, the aligned view); a jitted call returning a
    vector and a scalar paid more for its allocations than for its kernels. Carving is a slice per
    result. A chunk's memory is freed when the last buffer carved from it is dropped, so a small
    result kept alone (a loss appended to a list every step) holds on to at most one chunk; the
    caps keep that small. Not thread-safe: its owner (a replay) runs one call at a time."""

    __slots__ = ("device", "sizes", "offsets", "layout", "total", "raw", "base", "used")

    def __init__(self, device, sizes):
        self.device, self.sizes = device, list(sizes)
        offsets, total = [], 0
        for n in self.sizes:
            offsets.append(total)
            total += -(-max(n, 1) // _ALIGN) * _ALIGN
        self.offsets, self.total = offsets, total
        # per result: (size, start, end) within a call's span, one tuple to unpack per result
        self.layout = tuple((n, o, o + n) for n, o in zip(self.sizes, offsets))
        self.raw, self.base, self.used = None, 0, RESULT_CHUNK_BYTES    # no chunk yet

    @staticmethod
    def fits(sizes) -> bool:
        """Whether results of `sizes` bytes are small enough to share chunks."""
        return sum(-(-max(n, 1) // _ALIGN) * _ALIGN for n in sizes) <= RESULTS_MAX_BYTES

    def take(self) -> list:
        """Fresh buffers of this program's result sizes. Each is filled by direct slot stores: calling
        CpuBuffer() runs a Python __init__ frame, which costs as much again as the rest of a result."""
        used = self.used
        if used + self.total > RESULT_CHUNK_BYTES:
            raw = np.empty(RESULT_CHUNK_BYTES + _ALIGN, dtype=np.uint8)
            base = ctypes.addressof(ctypes.c_char.from_buffer(raw))
            shift = (-base) % _ALIGN
            self.raw, self.base, used = raw[shift:], base + shift, 0
            self.device.fresh_allocations += 1
        self.used = used + self.total
        raw, base, dev, new = self.raw, self.base + used, self.device, object.__new__
        out = []
        for n, o, end in self.layout:
            b = new(CpuBuffer)
            b.device = dev
            b.nbytes = n
            b.handle = raw[used + o:used + end]
            b.address = base + o
            out.append(b)
        return out


class CpuDevice(Device):
    name = "cpu"
    shares_host_memory = True         # a buffer's handle is a NumPy uint8 array of host memory
    records_addresses = True          # a recording's calls read their pointer slots (cpu_replay.py)

    def __init__(self):
        self.caps = Capabilities(name="cpu", target="cpu", max_workgroup_size=1,
                                 cores=cores())
        self._host_pool = HostPool()
        self.fresh_allocations = 0        # allocations the pool did not serve (np.empty)

    def allocate(self, nbytes: int) -> Buffer:
        size = nbytes + _ALIGN
        raw = self._host_pool.take(size) if size >= POOL_MIN_BYTES else None   # large: reused (cpu_pool.py)
        if raw is None:                                   # small ones: malloc reuses freed blocks
            self.fresh_allocations += 1
            try:
                raw = np.empty(size, dtype=np.uint8)
            except MemoryError:     # NumPy's _ArrayMemoryError, as the devices' OutOfMemoryError
                raise OutOfMemoryError(f"cpu: cannot allocate {nbytes:,} bytes of host memory; make the "
                                       f"arrays smaller (check their sizes) or free some") from None
            if size >= POOL_MIN_BYTES:
                self._host_pool.adopt(raw)
        base = ctypes.addressof(ctypes.c_char.from_buffer(raw))
        off = (-base) % _ALIGN
        return CpuBuffer(self, nbytes, raw[off:off + nbytes], base + off)

    def wrap(self, array: np.ndarray) -> Buffer:
        """Adopt a C-contiguous NumPy array's memory as a buffer (no copy)."""
        flat = array.reshape(-1).view(np.uint8)
        return CpuBuffer(self, flat.nbytes, flat, _address(flat))

    def write(self, buf: Buffer, data) -> None:
        # an array is viewed as bytes by NumPy, not through memoryview: the buffer protocol has no format
        # for ml_dtypes' bfloat16 ('E') and refuses it
        if isinstance(data, np.ndarray):
            src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        else:
            src = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8)
        buf.handle[: src.nbytes] = src

    def read(self, buf: Buffer):
        view = buf.handle.view()
        view.flags.writeable = False
        return view

    def copy(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        dst.handle[:nbytes] = src.handle[:nbytes]

    # -- programs -------------------------------------------------------------------------------
    def _engine(self):
        eng = getattr(self, "_ee", None)
        if eng is None:
            with _ENGINE_LOCK:      # threads loading their first kernels at once make one engine
                eng = getattr(self, "_ee", None)
                if eng is None:
                    import llvmlite.binding as llvm

                    llvm.initialize_native_target()
                    llvm.initialize_native_asmprinter()
                    tm = llvm.Target.from_default_triple().create_target_machine(jit=True)
                    runtime_symbols()
                    # entry symbol -> program; weak, so that a program dropped by every cache and
                    # recording lets its engine go (a kernel engine holds the addresses themselves)
                    self._programs: weakref.WeakValueDictionary[str, CpuProgram] = weakref.WeakValueDictionary()
                    self._kernels: _KernelEngine | None = None       # the engine new kernels go into
                    self._retired: list[_KernelEngine] = []          # full ones still running programs
                    self._load_lock = threading.Lock()
                    eng = self._ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        return eng

    def load(self, artifact) -> CpuProgram:
        """Link `artifact` (target 'cpu': object code with an `entry` symbol) and return its program.

        A kernel whose program is still referenced gets that program; one linked into the current kernel
        engine gets a new program at the same address; any other is linked into the current engine, which
        is retired for a fresh one once it holds ENGINE_OBJECTS object files. Retired engines none of
        whose programs is referenced any more are disposed here, outside the load lock: a program being
        dispatched is referenced by its caller (and a recording by its calls), so its code is never
        freed under it."""
        if getattr(artifact, "target", None) != self.caps.target:
            raise DeviceError(f"the cpu device cannot load a '{getattr(artifact, 'target', '?')}' artifact")
        self._engine()
        dead = ()
        with self._load_lock:
            prog = self._programs.get(artifact.entry)
            if prog is None:
                kern = self._kernels
                addr = kern.entries.get(artifact.entry) if kern is not None else None
                if addr is None:
                    if kern is None or kern.objects >= ENGINE_OBJECTS:
                        if kern is not None:
                            self._retired.append(kern)
                        kern = self._kernels = _KernelEngine()
                    addr = kern.link(artifact)
                prog = CpuProgram(artifact.name, artifact.entry, addr, kern)
                kern.live.add(prog)
                self._programs[artifact.entry] = prog
                if self._retired:
                    dead = [e for e in self._retired if not e.live]
                    if dead:
                        self._retired = [e for e in self._retired if e.live]
        for e in dead:
            e.dispose()
        return prog

    def loaded_programs(self) -> dict:
        """How many kernel programs are referenced, and the kernel engines holding code (current and
        retired ones not yet disposed): what bounds the device's compiled code."""
        self._engine()
        with self._load_lock:
            engines = self._retired + ([self._kernels] if self._kernels is not None else [])
            return {"programs": len(self._programs), "engines": len(engines),
                    "objects": sum(e.objects for e in engines)}

    def dispatch(self, program: CpuProgram, buffers: list, grid) -> None:
        """Run `program` over `grid` workgroups; `buffers` = kernel buffers + [meta, trap]."""
        rec = self._recording
        if rec is not None:
            rec.add(program, buffers, grid)
            return
        gx, gy, gz = grid
        total = gx * gy * gz
        if total <= 0:
            return
        ptrs, meta, trap = launch_args(buffers)
        run_groups(self._pool, program, ptrs, meta, trap, total, self.caps.cores)

    # -- record / replay (poot/devices/cpu_replay.py) --------------------------------------------
    def record(self):
        """`with dev.record() as rec:` captures dispatches; `rec.replay(rebind)` runs them again."""
        from poot.devices.cpu_replay import CpuRecording

        return CpuRecording(self)

    def _pool(self) -> NativePool | ThreadPoolExecutor:
        """The threads launches split over: native ones (cpu_threads.py), or Python ones where the
        platform has none."""
        pool = getattr(self, "_threads", None)
        if pool is None:
            eng = self._engine()
            with self._load_lock:
                pool = getattr(self, "_threads", None)
                if pool is None:
                    pool = self._threads = start_native_pool(eng, self.caps.cores - 1) or \
                        ThreadPoolExecutor(max(1, self.caps.cores - 1), thread_name_prefix="poot-cpu")
        return pool
