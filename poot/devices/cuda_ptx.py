"""What the CUDA device reads from PTX text before it loads a module: the entries with their parameters
and block shapes, and whether the driver and GPU can run it (the newest PTX ISA a driver compiles, the
.target arch)."""
from __future__ import annotations

import re

from poot.errors import DeviceError


def max_ptx_isa(driver_version: int) -> tuple[int, int]:
    """The newest PTX ISA a driver of `driver_version` (e.g. 12040 for 12.4) compiles."""
    major, minor = driver_version // 1000, driver_version % 1000 // 10
    if major >= 13:
        return 9, minor
    if major == 12:
        return 8, {6: 5, 7: 6, 8: 7, 9: 8}.get(minor, min(minor, 8))
    return (7, minor) if major == 11 else (6, 0)


_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)([^{]*)\{", re.S)


def ptx_entries(ptx: str) -> dict[str, tuple[list[str], tuple[int, ...] | None]]:
    """{entry name: (param type names, .reqntid block shape or None)} of a PTX module."""
    out = {}
    for m in _ENTRY.finditer(ptx):
        params = [p.split()[1] for p in m.group(2).split(",") if p.strip().startswith(".param")]
        req = re.search(r"\.reqntid\s+([\d,\s]+)", m.group(3))
        out[m.group(1)] = (params, tuple(int(x) for x in req.group(1).split(",")) if req else None)
    return out


def check_target(ptx: str, name: str, device: str, gpu: str, extra: dict) -> None:
    """Refuse PTX compiled for an arch this GPU cannot run or for a PTX ISA newer than its driver takes."""
    arch = extra["arch"]
    m = re.search(r"^\s*\.target\s+sm_(\d+)(a?)", ptx, re.M)
    if m and (int(m.group(1)) > int(arch[3:]) or (m.group(2) and m.group(1) != arch[3:])):
        raise DeviceError(f"{device}: kernel '{name}' was compiled for sm_{m.group(1)}{m.group(2)}, which "
                          f"this {gpu} ({arch}) cannot run; compile it with arch='{arch}'")
    v = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
    if v and (int(v.group(1)), int(v.group(2))) > max_ptx_isa(extra["driver_version"]):
        raise DeviceError(f"{device}: kernel '{name}' is PTX ISA {v.group(1)}.{v.group(2)}, newer than this "
                          f"driver compiles (<= {extra['max_ptx_isa']}); compile for an older PTX ISA "
                          "or update the NVIDIA driver")


__all__ = ["max_ptx_isa", "ptx_entries", "check_target"]
