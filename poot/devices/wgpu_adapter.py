"""Finding a wgpu adapter, and the adapter features a SPIR-V program needs (the physical grid for a
logical one is poot/devices/grid.py's)."""
from __future__ import annotations

import os
import struct

from poot.errors import DeviceError, DeviceUnavailableError

# requested where the adapter has them; timestamp-query lets benchmarks time kernels on the GPU
FEATURES = ("shader-f16", "shader-f64", "shader-int64", "shader-i16", "shader-float32-atomic", "timestamp-query",
            "timestamp-query-inside-encoders")      # the last: benchmarks time buffer copies by GPU timestamps
LIMITS = ("max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
           "max-bindings-per-bind-group", "max-compute-workgroup-storage-size",
           "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
           "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
           "max-compute-workgroups-per-dimension")
# SPIR-V capability -> (the adapter feature it needs, the dtype a user knows it as)
CAPABILITY_FEATURES = {9: ("shader-f16", "float16"), 10: ("shader-f64", "float64"),
                        11: ("shader-int64", "int64"), 22: ("shader-i16", "int16"),
                        6033: ("shader-float32-atomic", "float32 atomic add")}
SUBGROUP_SHUFFLE = 65    # the SPIR-V capability GroupNonUniformShuffle: a kernel exchanging values across lanes
_ADAPTER_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 1}


def spirv_capabilities(data: bytes) -> set[int]:
    """The OpCapability operands of a SPIR-V module (they sit at its start)."""
    words = struct.unpack_from(f"<{len(data) // 4}I", data)
    if len(words) < 5 or words[0] != 0x07230203:
        raise DeviceError("wgpu: the program is not a SPIR-V module")
    caps, i = set(), 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if op == 17:
            caps.add(words[i + 1])
        elif op not in (10, 11, 14, 15, 16, 3, 5, 6, 7):   # past the preamble: no more capabilities
            break
        i += max(count, 1)
    return caps


def import_wgpu():
    if not os.environ.get("XDG_RUNTIME_DIR"):   # wgpu's GL probe prints errors without one
        os.environ["XDG_RUNTIME_DIR"] = "/tmp"
    try:
        import wgpu
    except ImportError as e:
        raise DeviceUnavailableError(f"wgpu: the 'wgpu' package is not installed ({e}); "
                                     "pip install 'poot[wgpu]'") from None
    return wgpu


def pick_adapter(wgpu):
    try:
        adapters = wgpu.gpu.enumerate_adapters_sync()
    except Exception as e:                                    # wgpu-native or the loader failed
        raise DeviceUnavailableError(f"wgpu: could not list adapters ({type(e).__name__}: {e})") from None
    usable = [a for a in adapters if a.info.get("backend_type") in _BACKEND_RANK]
    if not usable:
        seen = ", ".join(f"{a.info.get('device')} ({a.info.get('backend_type')})" for a in adapters)
        raise DeviceUnavailableError(
            "wgpu: no Vulkan, Metal or D3D12 adapter" + (f" (only {seen})" if seen else "")
            + "; on Linux without a GPU install Mesa's lavapipe (apt install mesa-vulkan-drivers)")
    want = os.environ.get("POOT_WGPU_ADAPTER", "").lower()
    if want:
        named = [a for a in usable if want in str(a.info.get("device", "")).lower()]
        if not named:
            raise DeviceUnavailableError(f"wgpu: no adapter matches POOT_WGPU_ADAPTER={want!r}")
        usable = named
    return min(usable, key=lambda a: (_ADAPTER_RANK.get(a.info.get("adapter_type"), 4),
                                      _BACKEND_RANK[a.info.get("backend_type")]))


__all__ = ["spirv_capabilities", "import_wgpu", "pick_adapter", "FEATURES", "LIMITS",
           "CAPABILITY_FEATURES"]
