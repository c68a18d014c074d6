"""Launch grids on GPU devices: a logical grid of workgroups, and the physical grid a device runs when the
logical one is over its per-dimension limits (poot's kernels rebuild their logical group ids from meta:
poot/jit/llvm/abi.py, "Grid folding"). One fold for every device, so CUDA, wgpu and raw Vulkan agree."""
from __future__ import annotations

import math

from poot.errors import DeviceError

SPIRV_MAX_GROUPS = 2**32      # poot's SPIR-V linearizes the physical group id in 32 bits (PTX, AMDGCN: 64)


def grid3(groups, device: str = "device") -> tuple[int, int, int]:
    """`groups` (an int or 1 to 3 extents) as three non-negative ints."""
    try:
        g = (int(groups),) if not hasattr(groups, "__len__") else tuple(int(x) for x in groups)
    except (TypeError, ValueError):
        raise DeviceError(f"{device}: bad grid {groups!r}: 1 to 3 non-negative integer extents") from None
    if not 1 <= len(g) <= 3 or min(g) < 0:
        raise DeviceError(f"{device}: bad grid {groups!r}: 1 to 3 non-negative extents")
    return g + (1,) * (3 - len(g))


def fold_grid(groups, limits, device: str = "device") -> tuple[int, int, int]:
    """A physical grid within `limits` (three per-dimension caps) holding at least prod(groups)
    workgroups: `groups` itself when it fits, else the groups laid out linearly over (PX, PY, PZ) with
    fewer than PY*PZ surplus groups (they exit at once)."""
    g = grid3(groups, device)
    lx, ly, lz = (int(x) for x in limits)
    if g[0] <= lx and g[1] <= ly and g[2] <= lz:
        return g
    total = math.prod(g)
    pz = -(-total // (lx * ly))
    if pz > lz:
        raise DeviceError(f"{device}: a grid of {g} ({total:,} workgroups) exceeds what the device can run "
                          f"({lx:,} x {ly:,} x {lz:,} workgroups)")
    py = -(-total // (lx * pz))
    px = -(-total // (py * pz))
    return px, py, pz


def dispatch_grid(device: str, program, groups, limits, max_groups: int | None = SPIRV_MAX_GROUPS
                  ) -> tuple[int, int, int]:
    """The grid `device` dispatches for `groups`: unchanged within `limits`, else folded, which only a
    program that rebuilds its logical grid (`program.folds_grid`: poot's kernels do) may be, to fewer
    than `max_groups` workgroups (None: no cap)."""
    g = grid3(groups, device)
    physical = fold_grid(g, limits, device)
    if physical == g:
        return g
    if not program.folds_grid:
        cap = f"{limits[0]:,}" if len(set(limits)) == 1 else str(tuple(limits))
        raise DeviceError(f"{device}: kernel '{program.name}' needs a grid of {g} workgroups, over this device's "
                          f"{cap} per dimension, and does not rebuild a folded grid")
    if max_groups is not None and math.prod(physical) >= max_groups:
        raise DeviceError(f"{device}: a folded grid of {math.prod(physical):,} workgroups is beyond the "
                          f"{max_groups.bit_length() - 1}-bit linear workgroup id of poot's kernels on this device")
    return physical


__all__ = ["grid3", "fold_grid", "dispatch_grid", "SPIRV_MAX_GROUPS"]
