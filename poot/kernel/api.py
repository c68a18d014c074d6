"""`@pt.kernel`, the kernel object it makes, and `pt.Context`: import, emulate, compile, launch.

    @pt.kernel                                      # or @pt.kernel(workgroup=(64, 4, 1), checks=False)
    def add(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32]):
        i = pt.thread_index()
        if i < len(c):
            c[i] = a[i] + b[i]

    add.kir                      # the verified KIR Kernel (imported on first use)
    add.emulate(a, b, c)         # plain Python over NumPy arrays: c is written in place
    add(pt.Context("cpu"), a, b, c)                 # compiled for the context's device, dispatched
    add.launch(ctx, a, b, c, threads=(n, 1, 1), workgroup=(64, 1, 1))

The import is lazy (the first `.kir`, `.emulate`, launch or compile), so a kernel may call device
functions defined further down its module, as Python would.
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from poot import devices
from poot.devices import Device
from poot.errors import (ArgumentError, KernelImportError, LoweringError, NotBuiltError, PootError, TracerError,
                         api_boundary, user_frame)
from poot.jit.kir.model import BufferParam, Kernel
from poot.jit.kir.verify import MAX_WORKGROUP_SIZE
from poot.kernel.diagnostics import code as diag_code
from poot.kernel.arguments import LaunchArguments
from poot.kernel.emulate import EmulatedKernel
from poot.kernel.importer import ImportedKernel, import_kernel
from poot.kernel.shared_memory import check_device as check_shared_memory

DEFAULT_WORKGROUP = (64, 1, 1)
CPU_VECTOR_BITS = (0, 256, 512)        # the cpu_vector_bits a kernel may ask for (0: LLVM's choice)


class Context:
    """Where kernels run: `pt.Context("cpu")`, `pt.Context("wgpu")`, a poot.devices Device, or (no
    argument) the default device, $POOT_DEVICE or the CPU."""

    def __init__(self, device: str | Device | None = None):
        if device is None:
            device = os.environ.get("POOT_DEVICE", "cpu") or "cpu"
        self.device = devices.get(device) if isinstance(device, str) else device
        if not isinstance(self.device, Device):
            raise PootError(f"Context needs a device name or a poot.devices.Device, got {device!r}")

    def synchronize(self) -> None:
        """Wait for this context's launches; raise poot.KernelTrap if one of them trapped."""
        from poot.jit.runtime.launch import synchronize

        synchronize(self.device)

    def __repr__(self) -> str:
        return f"poot.Context({self.device.name!r})"


def normalize_grid(g, what: str) -> tuple[int, int, int]:
    """`g` (an int or 1 to 3 ints) as 3 extents, padded with 1."""
    if isinstance(g, (int, np.integer)):
        g = (int(g),)
    if not isinstance(g, (tuple, list)):      # tuple("64") would be ('6', '4')
        raise PootError(f"{what} must be an int or a tuple of 1 to 3 ints, got {g!r} ({type(g).__name__})")
    g = tuple(g)
    if not all(isinstance(x, (int, np.integer)) for x in g):   # int() would truncate 64.5 without a word
        raise PootError(f"{what} extents must be integers, got {g}")
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3 or any(x < 0 for x in g):
        raise PootError(f"{what} must be 1 to 3 non-negative extents, got {g}")
    return g + (1,) * (3 - len(g))


def checked_workgroup(workgroup) -> tuple[int, int, int]:
    """A workgroup as 3 extents, refused (PootError) where KIR verification would refuse the kernel
    later with an internal-sounding error: a zero extent, more threads than the limit, bools."""
    if isinstance(workgroup, (tuple, list)) and any(isinstance(w, (bool, np.bool_)) for w in workgroup) \
            or isinstance(workgroup, (bool, np.bool_)):
        raise PootError(f"workgroup extents must be integers, got {workgroup!r}")
    wg = normalize_grid(workgroup, "workgroup")
    if any(w < 1 for w in wg):
        raise PootError(f"workgroup {wg} has a zero extent")
    threads = wg[0] * wg[1] * wg[2]
    if threads > MAX_WORKGROUP_SIZE:
        raise PootError(f"workgroup {wg} has {threads} threads; the limit is {MAX_WORKGROUP_SIZE}")
    return wg


THREAD_INDEX_LIMIT = 2**32     # thread indices are uint32: a grid axis holds at most this many threads


def grid_groups(name: str, grid, workgroup) -> tuple[int, int, int]:
    """The workgroups of a launch of `grid` threads (rounded up to whole workgroups); refuses a grid
    whose thread indices would not fit their uint32 (they would wrap around)."""
    groups = tuple(-(-t // w) for t, w in zip(grid, workgroup))
    for axis, (g, w) in enumerate(zip(groups, workgroup)):
        if g * w > THREAD_INDEX_LIMIT:
            raise PootError(f"kernel '{name}': threads={tuple(grid)} asks for {g * w:,} threads along axis {axis} "
                            f"(whole workgroups of {w}); thread indices are uint32, so an axis takes at most "
                            f"2**32 = {THREAD_INDEX_LIMIT:,}")
    return groups


class KernelFunction:
    """A Python function marked `@pt.kernel`."""

    __poot_kernel__ = True

    def __init__(self, fn, *, workgroup=DEFAULT_WORKGROUP, checks: bool = True, name: str | None = None,
                 cpu_vector_bits: int = 0):
        functools.update_wrapper(self, fn)
        self.fn = fn

        def config_error(message: str) -> KernelImportError:
            return KernelImportError(diag_code("bad-kernel-config"), message, fn.__code__.co_filename,
                                     fn.__code__.co_firstlineno, 0)

        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise config_error(f"name must be a Python identifier (the compiled entry point is named after it), "
                               f"got {name!r}")
        self.name = name or fn.__name__
        if not isinstance(checks, (bool, np.bool_)):    # checks="no" is truthy: it would turn checks on
            raise config_error(f"checks must be True or False, got {checks!r}")
        self.checks = bool(checks)
        if cpu_vector_bits not in CPU_VECTOR_BITS:
            raise config_error(f"cpu_vector_bits must be one of {CPU_VECTOR_BITS}, got {cpu_vector_bits!r}")
        self.cpu_vector_bits = cpu_vector_bits
        try:
            self.workgroup = checked_workgroup(workgroup)
        except PootError as e:
            raise config_error(str(e)) from None
        self._imports: dict = {}
        self._emulators: dict = {}

    # -- import ---------------------------------------------------------------------------------
    def imported(self, workgroup=None, *, name: str | None = None, display: str | None = None) -> ImportedKernel:
        wg = self.workgroup if workgroup is None else self.launch_workgroup(workgroup)
        key = (wg, name, display)
        hit = self._imports.get(key)
        if hit is None:
            hit = self._imports[key] = import_kernel(self.fn, name=name or self.name, workgroup=wg,
                                                     checks=self.checks, display=display, kernel_object=self,
                                                     cpu_vector_bits=self.cpu_vector_bits)
        return hit

    @property
    def kir(self) -> Kernel:
        """The verified KIR kernel (default workgroup)."""
        return self.imported().kernel

    def kernel_for(self, workgroup=None) -> Kernel:
        return self.imported(workgroup).kernel

    @property
    def traps(self):
        return self.kir.traps

    # -- emulation ------------------------------------------------------------------------------
    def launch_workgroup(self, workgroup) -> tuple[int, int, int]:
        """A workgroup given at a launch, refused with the kernel's name (checked_workgroup)."""
        try:
            return checked_workgroup(workgroup)
        except PootError as e:
            raise PootError(f"kernel '{self.name}': {e}") from None

    def parameter_names(self) -> list[str]:
        """The Python function's parameter names (without importing the kernel)."""
        import inspect

        try:
            return list(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            return []

    def keyword_error(self, how: str, kwargs: dict, accepted: tuple[str, ...]) -> ArgumentError:
        """ArgumentError for keywords a call does not take: the kernel's arguments are positional, in
        the order of its parameters; the launch options are the only keywords."""
        params = self.parameter_names()
        bad = ", ".join(map(repr, kwargs))
        if any(k in params for k in kwargs):
            return ArgumentError(f"kernel '{self.name}' takes its arguments by position, not by name: call "
                                 f"{how}; got keyword {bad}")
        options = f"the only keywords are {' and '.join(accepted)}" if accepted else \
            f"it takes no keywords; pass threads=/workgroup= to {self.name}.launch(ctx, ...)"
        return ArgumentError(f"kernel '{self.name}': unexpected keyword {bad} in {how}; {options}")

    @api_boundary           # like every public call, a mistake names the user's line (so launch, __call__)
    def emulate(self, *args, threads=None, workgroup=None, **kwargs) -> None:
        """Run the body as Python over NumPy arrays (Out/InOut arrays are written in place)."""
        if kwargs:
            raise self.keyword_error(f"{self.name}.emulate({', '.join(self.parameter_names())}, threads=..., "
                                     "workgroup=...)", kwargs, ("threads", "workgroup"))
        wg = self.workgroup if workgroup is None else self.launch_workgroup(workgroup)
        emu = self._emulators.get(wg)
        if emu is None:
            emu = self._emulators[wg] = EmulatedKernel(self.imported(wg))
        kernel = emu.kernel
        check_arity(kernel, args)
        grid = normalize_grid(threads, "threads") if threads is not None else default_threads(kernel, args)
        grid_groups(self.name, grid, wg)
        emu.run(args, grid, wg)

    # -- compile and launch ---------------------------------------------------------------------
    def compile(self, target: str, *, arch: str | None = None, workgroup=None):
        """The compiled artifact for `target` ('cpu', 'ptx', 'spirv', 'amdgcn')."""
        from poot.jit.runtime.launch import compiled

        imported = self.imported(workgroup)
        refuse_unbuildable(imported, target, arch)
        return compiled(imported.kernel, target, arch)

    @api_boundary
    def launch(self, ctx: Context = None, *args, threads=None, workgroup=None, **kwargs) -> None:
        """Dispatch on `ctx`'s device. A poot Array bound to an Out/InOut parameter takes the kernel's result
        as its new value (written in place where nothing else sees it: arguments.py); NumPy arrays are
        copied in (and the writable ones copied back) or, on the CPU, used in place."""
        if kwargs:
            raise self.keyword_error(f"{self.name}.launch(ctx, {', '.join(self.parameter_names())}, threads=..., "
                                     "workgroup=...)", kwargs, ("threads", "workgroup"))
        if not isinstance(ctx, Context):
            raise ArgumentError(f"kernel '{self.name}' is launched as {self.name}(ctx, *args) with ctx = "
                                f"pt.Context(device); got {type(ctx).__name__} first (use .emulate(...) to run "
                                "it on NumPy arrays without a device)")
        wg = self.workgroup if workgroup is None else self.launch_workgroup(workgroup)
        imported = self.imported(wg)
        kernel = imported.kernel
        check_arity(kernel, args)
        grid = normalize_grid(threads, "threads") if threads is not None else default_threads(kernel, args)
        groups = grid_groups(self.name, grid, wg)
        from poot.jit.runtime.launch import launch as device_launch

        device = ctx.device
        check_shared_memory(imported, device)     # before compiling: past the limit a device crashes
        refuse_unbuildable(imported, device.caps.target, device.caps.compile_arch)
        bound = LaunchArguments(self.name, device)
        try:
            for p, a in zip(kernel.params, args):
                bound.add(p, a)
        except TracerError as e:    # a traced array passed in (pt.vmap names the kernel from this)
            e.kernel = self.name
            raise
        if math.prod(groups) == 0:
            return
        device_launch(device, kernel, bound.buffers, bound.scalars, groups)
        bound.finish()

    @api_boundary
    def __call__(self, ctx: Context = None, *args, **kwargs):
        if kwargs:
            raise self.keyword_error(f"{self.name}(ctx, {', '.join(self.parameter_names())})", kwargs, ())
        return self.launch(ctx, *args)

    def __repr__(self) -> str:
        return f"<poot kernel {self.name} workgroup={self.workgroup}>"


def refuse_unbuildable(imported: ImportedKernel, target: str, arch: str | None) -> None:
    """NotBuiltError, at the line, for what a target's consumer would refuse only when loading the kernel
    (with a validation dump): wgpu's shader compiler naga (SPIR-V without an arch) takes float32 atomics
    on storage buffers, not on workgroup-shared arrays. No SPIR-V target builds 64-bit integer atomics, and
    the CPU target no subgroup exchanges (the lowering would refuse both without the user's line)."""
    from poot.jit.llvm.targets import BinaryFormat, target_named

    if imported.subgroup_exchanges and target_named(target).binary_format is BinaryFormat.OBJECT_CODE:
        op, where = imported.subgroup_exchanges[0]
        raise NotBuiltError(f"kernel '{imported.kernel.name}': {op} at {where} exchanges values between the lanes "
                            "of a subgroup, which the CPU target does not have (threads run one after another); "
                            "combine through a pt.shared array and pt.workgroup_barrier() instead, or run the "
                            "kernel on the cuda, rocm or vulkan device (or emulate it)")
    if not imported.shared_float_atomics and not imported.wide_atomics:
        return
    if target_named(target).binary_format is not BinaryFormat.SPIRV_WORDS:
        return
    if imported.wide_atomics:
        name, dtype, where = imported.wide_atomics[0]
        raise LoweringError(f"kernel '{imported.kernel.name}': atomic add on {dtype} needs the SPIR-V capability "
                            f"Int64Atomics (pt.atomic_add into buffer '{name}' at {where}), which LLVM's SPIR-V "
                            "backend does not offer for Vulkan (vulkan, wgpu); add into an int32/uint32 buffer, or "
                            "run the kernel on the cpu, cuda or rocm device")
    if arch or not imported.shared_float_atomics:
        return
    name, where = imported.shared_float_atomics[0]
    raise NotBuiltError(f"kernel '{imported.kernel.name}': pt.atomic_add on float shared array '{name}' at {where} "
                        "cannot be built for wgpu: its shader compiler (naga) takes float32 atomics on storage "
                        "buffers only. Add into an Out/InOut buffer, or into an int32/uint32 shared array (fixed "
                        "point), or run the kernel on the vulkan, cpu or cuda device")


def check_arity(kernel: Kernel, args) -> None:
    if len(args) != len(kernel.params):
        raise ArgumentError(f"kernel '{kernel.name}' takes {len(kernel.params)} arguments "
                            f"({', '.join(p.name for p in kernel.params)}), got {len(args)}")


def element_count(a) -> int:
    aval = getattr(a, "aval", None)
    if aval is not None and hasattr(a, "__poot_buffer__"):
        return int(math.prod(aval.shape))
    return int(np.size(a))


def default_threads(kernel: Kernel, args) -> tuple[int, int, int]:
    """One thread per element of the first writable buffer."""
    for p, a in zip(kernel.params, args):
        if isinstance(p, BufferParam) and p.access.writable:
            return (element_count(a), 1, 1)
    raise PootError(f"kernel '{kernel.name}' has no writable buffer to size the grid by; pass threads=(x, y, z)")


def kernel(fn=None, *, workgroup=DEFAULT_WORKGROUP, checks: bool = True, name: str | None = None,
           cpu_vector_bits: int = 0, **options):
    """Mark a Python function as a kernel: `@pt.kernel` or `@pt.kernel(workgroup=(x, y, z), checks=False)`.
    `cpu_vector_bits=512` lets the CPU lowering prefer 512-bit vectors where the host has them (LLVM
    otherwise keeps 256 on AVX-512 CPUs, which some lower their clocks for): worth it for kernels bound
    by arithmetic, such as the flash attention's matrix products; 0 leaves LLVM's choice. Any other
    option is `kernel-import::bad-kernel-config` (a misspelt `checks=False` must not pass unnoticed)."""
    if options:
        raise unknown_options(options, fn)
    config = dict(workgroup=workgroup, checks=checks, name=name, cpu_vector_bits=cpu_vector_bits)
    if fn is None:
        return functools.partial(_make_kernel, **config)
    return _make_kernel(fn, **config)


def _make_kernel(fn, **config) -> KernelFunction:
    """The kernel of `fn`, the same check for `@pt.kernel` and `@pt.kernel(...)`: anything but a Python
    function (a number, a class, a builtin) has no source to import."""
    if isinstance(fn, KernelFunction):
        return fn
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise PootError(f"@poot.kernel needs a Python function, got {fn!r} ({type(fn).__name__}); "
                        "pt.kernel(...) with options decorates a function: @pt.kernel(workgroup=...) above a def")
    return KernelFunction(fn, **config)


def unknown_options(options: dict, fn) -> KernelImportError:
    """`bad-kernel-config` for options @pt.kernel does not take, at the function's line (or the caller's)."""
    code = getattr(fn, "__code__", None)
    where = (code.co_filename, code.co_firstlineno) if code is not None else None
    if where is None:
        f = user_frame()
        where = (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)
    return KernelImportError(diag_code("bad-kernel-config"), f"@pt.kernel has no option "
                             f"{', '.join(map(repr, options))}; it takes workgroup, checks, name and "
                             "cpu_vector_bits", *where, 0)
