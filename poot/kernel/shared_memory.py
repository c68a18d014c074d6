"""How much shared memory a kernel's workgroup may declare, and the `kernel-import::shared-too-large` refusal.

No backend checked this before: an 8 MiB `pt.shared` array overflowed the CPU thread's stack (a segfault),
a 4 GiB one aborted naga (wgpu) and got the process killed on Vulkan. So the size is refused before any
compile, naming the kernel, its arrays, the bytes asked and the limit:

- at import, past `MAX_SHARED_BYTES` (2 GiB, the KIR verifier's bound): more than any device has;
- at launch, past the device's own limit (`device_limit`).
"""
from __future__ import annotations

from poot.errors import KernelImportError
from poot.jit.kir.verify import MAX_SHARED_BYTES
from poot.kernel.diagnostics import code

# The CPU runs a workgroup's shared arrays as allocas in the native stack frame of the thread that runs
# the group: the caller's thread or a pool worker created with the default pthread stack (8 MiB on
# Linux: RLIMIT_STACK). 1 MiB leaves 7/8 of such a stack to the kernel's locals and the frames below
# it, and still runs any kernel a GPU accepts (227 KiB is the most CUDA lets a block opt in to), so a
# GPU kernel is testable on the CPU. Capabilities.shared_memory_bytes is not used: the CPU device
# leaves it at the dataclass default (48 KiB), which would refuse GPU kernels the CPU runs fine.
CPU_SHARED_BYTES = 1 << 20
ALIGN = 16            # each array starts on a 16-byte boundary (poot/jit/llvm/gpu_entry.py shared_layout)


def shared_bytes(shared) -> int:
    """Bytes the arrays of `shared` (SharedArray declarations) take laid out one after another, each
    padded to 16 bytes as the GPU entry lays them out (a bound for the other targets)."""
    return sum(-(-s.size * s.dtype.itemsize // ALIGN) * ALIGN for s in shared)


def device_limit(caps) -> tuple[int, str]:
    """(bytes of shared memory one workgroup may use on a device with Capabilities `caps`, where that
    number comes from)."""
    from poot.jit.llvm.targets import target_of

    target = target_of(caps)
    if target.is_host:
        return CPU_SHARED_BYTES, "the CPU runs shared arrays on the thread's stack"
    optin = int(caps.extra.get("shared_memory_optin", 0) or 0)
    if target.static_shared_limit and optin > caps.shared_memory_bytes:
        # PTX: past its static limit (48 KiB) the arrays are one dynamic block the device raises the kernel's
        # limit for (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES, poot/devices/cuda.py), up to the
        # opt-in maximum (227 KiB on H100)
        return optin, "the GPU's opt-in maximum per block"
    return int(caps.shared_memory_bytes), "the device's shared memory per workgroup"


def describe(shared) -> str:
    return ", ".join(f"'{s.name}' ({s.size:,} x {s.dtype.name})" for s in shared)


def refuse(name: str, shared, info, nodes: dict, asked: int, limit: str) -> KernelImportError:
    """The shared-too-large error for kernel `name` with SharedArray declarations `shared`, located at
    its largest array's declaration (`nodes`: array name -> ast node, `info`: the kernel's SourceInfo);
    `limit` says what allows how many bytes."""
    big = max(shared, key=lambda s: s.size * s.dtype.itemsize)
    msg = (f"kernel '{name}': shared arrays {describe(shared)} take {asked:,} bytes per workgroup; "
           f"{limit}: use smaller arrays (tiles)")
    node = nodes.get(big.name)
    if info is None or node is None:
        return KernelImportError(code("shared-too-large"), msg)
    return info.error("shared-too-large", msg, node)


def check_device(imported, device) -> None:
    """Raise KernelImportError(kernel-import::shared-too-large) when `imported` (an ImportedKernel)
    declares more shared memory than `device` allows a workgroup."""
    kernel = imported.kernel
    if not kernel.shared:
        return
    asked = shared_bytes(kernel.shared)
    limit, why = device_limit(device.caps)
    if asked > limit:
        raise refuse(kernel.name, kernel.shared, imported.scope.info, imported.shared_nodes, asked,
                     f"device '{device.name}' allows at most {limit:,} bytes ({why})")


__all__ = ["CPU_SHARED_BYTES", "MAX_SHARED_BYTES", "check_device", "device_limit", "refuse", "shared_bytes"]
