"""Fixtures of the jit tests. `gpu`: a device context for each GPU kind this machine has (wgpu and Vulkan
on lavapipe in CI; CUDA and Vulkan on an NVIDIA GPU), each test run once per kind; a kind this machine
cannot use is skipped with the reason."""
from __future__ import annotations

import pytest

import poot as pt
from poot.errors import DeviceUnavailableError


@pytest.fixture(scope="module", params=["wgpu", "vulkan", "cuda"])
def gpu(request):
    try:
        return pt.device(request.param)
    except DeviceUnavailableError as e:
        pytest.skip(f"no {request.param} device here: {e}")


@pytest.fixture
def allocation_spy(monkeypatch):
    """`spy(dev)`: from now on (until the test's monkeypatch.undo()), the byte size of every allocation
    `dev` makes is appended to the list it returns. For tests that prove a program allocates nothing
    of some size (no L x L buffer, no copy of a donated cache per call)."""
    def spy(dev) -> list:
        sizes = []
        real = dev.allocate

        def allocate(nbytes, *a, **kw):
            sizes.append(nbytes)
            return real(nbytes, *a, **kw)

        monkeypatch.setattr(dev, "allocate", allocate)
        return sizes

    return spy
