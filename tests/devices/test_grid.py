"""The one grid fold every GPU device uses (poot/devices/grid.py): fitting grids unchanged, large ones
within the caps with few surplus groups, and the refusals a user can act on."""
import math

import pytest

from poot.devices.grid import dispatch_grid, fold_grid, grid3
from poot.errors import DeviceError

WGPU = (65_535,) * 3
CUDA = (2**31 - 1, 65_535, 65_535)


class Program:
    def __init__(self, folds_grid: bool):
        self.name, self.folds_grid = "k", folds_grid


def test_grid3_normalizes_and_refuses_bad_grids():
    assert grid3(7) == (7, 1, 1) and grid3((3, 2)) == (3, 2, 1)
    for bad in [(1, -1), (), (1, 2, 3, 4), "x", (1.5j,)]:
        with pytest.raises(DeviceError, match="bad grid"):
            grid3(bad, "cuda:0")


@pytest.mark.parametrize("limits", [WGPU, CUDA, (100, 10, 10)])
@pytest.mark.parametrize("grid", [(10, 20, 30), (262_144,), (65_536, 1, 1), (65_535 * 65_535 + 1,),
                                  (1000, 1000, 1000), (3, 70_000, 1), (50, 50, 1)])
def test_fold_stays_within_the_limits_with_little_surplus(grid, limits):
    total = math.prod(grid)
    if total > math.prod(limits):
        with pytest.raises(DeviceError, match="exceeds what the device can run"):
            fold_grid(grid, limits)
        return
    p = fold_grid(grid, limits)
    if all(g <= lim for g, lim in zip(grid3(grid), limits)):
        assert p == grid3(grid)
    assert all(x <= lim for x, lim in zip(p, limits)) and math.prod(p) >= total
    assert math.prod(p) - total < p[1] * p[2]


def test_dispatch_grid_folds_only_programs_that_rebuild_their_grid():
    assert dispatch_grid("wgpu", Program(False), (10, 1, 1), WGPU) == (10, 1, 1)
    assert math.prod(dispatch_grid("wgpu", Program(True), 262_144, WGPU)) >= 262_144
    with pytest.raises(DeviceError, match="kernel 'k' needs a grid.*65,535 per dimension"):
        dispatch_grid("wgpu", Program(False), 262_144, WGPU)
    with pytest.raises(DeviceError, match="32-bit linear workgroup id"):
        dispatch_grid("vulkan", Program(True), (65_535 * 65_535 * 2,), WGPU)
    big = dispatch_grid("cuda:0", Program(True), (2**31, 65_535, 2), CUDA, max_groups=None)
    assert math.prod(big) >= 2**32 * 65_535 // 2
