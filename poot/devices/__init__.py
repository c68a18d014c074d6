"""poot.devices: one module per backend behind the Device protocol, and the registry that finds them."""
from __future__ import annotations

import threading

from ..errors import DeviceUnavailableError
from .base import Buffer, Capabilities, Device

_DEVICES: dict[str, Device] = {}
_CREATING = threading.RLock()      # threads asking for a device at once get one, not one each

KNOWN = ("cpu", "cuda", "wgpu", "vulkan", "rocm")


def parse_name(name: str) -> tuple[str, int]:
    """'cuda:1' -> ('cuda', 1); 'cpu' -> ('cpu', 0). Unknown kinds raise DeviceUnavailableError."""
    kind, _, idx = str(name).strip().lower().partition(":")
    if kind not in KNOWN:
        raise DeviceUnavailableError(f"unknown device '{name}'; poot knows " + ", ".join(KNOWN))
    try:
        return kind, int(idx) if idx else 0
    except ValueError:
        raise DeviceUnavailableError(f"bad device index in '{name}'") from None


def get(name: str = "cpu") -> Device:
    """The device called `name` (created on first use). Raises DeviceUnavailableError saying why."""
    dev = _DEVICES.get(name)         # a canonical name ("cpu", "cuda:0") is its registry key
    if dev is not None:
        return dev
    kind, idx = parse_name(name)
    key = kind if kind in ("cpu", "wgpu", "vulkan") else f"{kind}:{idx}"
    dev = _DEVICES.get(key)
    if dev is None:
        with _CREATING:
            dev = _DEVICES.get(key)
            if dev is None:
                dev = _DEVICES[key] = _create(kind, idx)
    return dev


def opened() -> list[Device]:
    """The devices created so far in this process (each once)."""
    seen: dict[int, Device] = {}
    for dev in list(_DEVICES.values()):
        seen.setdefault(id(dev), dev)
    return list(seen.values())


def _create(kind: str, idx: int) -> Device:
    if kind == "cpu":
        from .cpu import CpuDevice

        return CpuDevice()
    if kind == "wgpu":
        from .wgpu import WgpuDevice

        return WgpuDevice()
    if kind == "cuda":
        from .cuda import CudaDevice

        return CudaDevice(idx)
    if kind == "vulkan":
        from .vulkan import VulkanDevice

        return VulkanDevice()
    if kind == "rocm":
        from .rocm import RocmDevice

        return RocmDevice(idx)
    raise DeviceUnavailableError(f"device '{kind}' is not built yet in this version of poot")


def availability() -> list[tuple[str, bool, str]]:
    """(name, usable, detail) for every device kind: what `poot devices` prints."""
    out = []
    for kind in KNOWN:
        try:
            dev = get(kind)
            out.append((dev.name, True, f"{dev.caps.target} target, {dev.caps.cores} cores"
                        if kind == "cpu" else dev.describe() if hasattr(dev, "describe") else dev.caps.target))
        except DeviceUnavailableError as e:
            out.append((kind, False, str(e)))
    return out


__all__ = ["Buffer", "Capabilities", "Device", "get", "availability", "parse_name", "KNOWN"]
