"""poot.devices: one module per backend behind the Device protocol, and the registry that finds them."""
from __future__ import annotations

import importlib
import threading

from poot.errors import DeviceUnavailableError
from poot.devices.base import Buffer, Capabilities, Device

_DEVICES: dict[str, Device] = {}
_CREATING = threading.RLock()      # threads asking for a device at once get one, not one each

# kind -> ("module:Class" of its device, whether the machine has one of it: then it is named without ":n")
KINDS = {
    "cpu": ("poot.devices.cpu:CpuDevice", True),
    "cuda": ("poot.devices.cuda:CudaDevice", False),
    "wgpu": ("poot.devices.wgpu:WgpuDevice", True),
    "vulkan": ("poot.devices.vulkan:VulkanDevice", True),
    "rocm": ("poot.devices.rocm:RocmDevice", False),
}
KNOWN = tuple(KINDS)


def parse_name(name: str) -> tuple[str, int]:
    """'cuda:1' -> ('cuda', 1); 'cpu' -> ('cpu', 0). Unknown kinds raise DeviceUnavailableError."""
    kind, _, idx = str(name).strip().lower().partition(":")
    if kind not in KNOWN:
        raise DeviceUnavailableError(f"unknown device '{name}'; poot knows " + ", ".join(KNOWN)
                                     + " and the pseudo-device oracle (NumPy's reference semantics)")
    try:
        index = int(idx) if idx else 0
    except ValueError:
        raise DeviceUnavailableError(f"bad device index in '{name}'") from None
    if index < 0:
        raise DeviceUnavailableError(f"bad device index in '{name}': indices count from 0")
    if index and KINDS[kind][1]:
        # one device of this kind per machine: a silent fallback to it would hide a typo
        raise DeviceUnavailableError(f"'{name}': poot opens one {kind} device, named '{kind}' (or "
                                     f"'{kind}:0'); index {index} names none")
    return kind, index


def get(name: str = "cpu") -> Device:
    """The device called `name` (created on first use). Raises DeviceUnavailableError saying why."""
    dev = _DEVICES.get(name)         # a canonical name ("cpu", "cuda:0") is its registry key
    if dev is not None:
        return dev
    kind, idx = parse_name(name)
    key = kind if KINDS[kind][1] else f"{kind}:{idx}"
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
    """A new device of a known `kind` (its module is imported only now: each needs its own driver)."""
    module, _, cls = KINDS[kind][0].partition(":")
    device_class = getattr(importlib.import_module(module), cls)
    return device_class() if KINDS[kind][1] else device_class(idx)


def availability() -> list[tuple[str, bool, str]]:
    """(name, usable, detail) for every device kind: what `poot devices` prints."""
    out = []
    for kind in KNOWN:
        try:
            dev = get(kind)
            out.append((dev.name, True, dev.describe()))
        except DeviceUnavailableError as e:
            out.append((kind, False, str(e)))
    return out


__all__ = ["Buffer", "Capabilities", "Device", "get", "availability", "parse_name", "KNOWN", "KINDS"]
