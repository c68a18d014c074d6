"""Shared pytest fixtures. `device`: each test that takes it runs once per device in the env var
POOT_TEST_DEVICES (a comma list, default "cpu"; "oracle" is the NumPy reference), with that device
current; a device this machine cannot use is skipped with the reason."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI replays the same examples on every run (a red CI blocks a landing, so a failure there must be
# reproducible); a developer's run explores new ones. Neither has a per-example deadline: an example
# that meets a new shape compiles its kernels, which takes longer than hypothesis's 200 ms on a busy
# machine.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def _test_devices() -> list[str]:
    return [d.strip() for d in os.environ.get("POOT_TEST_DEVICES", "cpu").split(",") if d.strip()]


@pytest.fixture(params=_test_devices())
def device(request):
    import poot as pt

    try:
        ctx = pt.device(request.param)
    except pt.DeviceUnavailableError as e:
        pytest.skip(f"device '{request.param}' is unavailable here: {e}")
    with ctx:
        yield ctx.name


def pytest_collection_modifyitems(config, items):
    """The Vulkan suites (tests/devices/test_gpu_suites.py) first: their child runs take about ten
    minutes of two cores, and started first under pytest-xdist (the README's test command: `-n auto
    --dist loadfile --no-loadscope-reorder`, which hands out the files in this order) they overlap the
    other workers' whole run instead of its tail. (loadfile keeps that file on one worker, whose module
    fixture starts the children once.)"""
    first = [it for it in items if it.path.name == "test_gpu_suites.py"]
    if first:
        items[:] = first + [it for it in items if it.path.name != "test_gpu_suites.py"]
