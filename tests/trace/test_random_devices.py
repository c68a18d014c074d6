"""NumPy-style generators draw on the current device: one seeded on the CPU draws inside
`with pt.device(...)` on that device, with the numbers it would draw on the CPU (the key is made from
the seed on each device; the draw counter is one)."""
import numpy as np
import pytest

import poot as pt


def _other_device():
    for name in ("vulkan", "wgpu"):
        try:
            with pt.device(name):
                pt.ones(1).numpy()
            return name
        except pt.PootError:
            continue
    pytest.skip("no vulkan or wgpu device here (lavapipe or a GPU)")


def test_a_generator_seeded_on_the_cpu_draws_on_the_current_device():
    other = _other_device()
    a, b = pt.random.default_rng(7), pt.random.default_rng(7)
    want = [a.random(5).numpy(), a.uniform(2.0, 3.0, 4).numpy()]
    with pt.device(other):
        r, u = b.random(5), b.uniform(2.0, 3.0, 4)
        assert r.device == other and u.device == other
        np.testing.assert_array_equal(r.numpy(), want[0])
        np.testing.assert_allclose(u.numpy(), want[1], rtol=1e-15)


def test_module_random_follows_the_device():
    other = _other_device()
    pt.random.seed(3)
    cpu = pt.random.uniform(0.0, 1.0, 3).numpy()
    pt.random.seed(3)
    with pt.device(other):
        x = pt.random.uniform(0.0, 1.0, 3)
        assert x.device == other
        np.testing.assert_allclose(x.numpy(), cpu, rtol=1e-15)
    assert pt.random.rand(2).device == "cpu"
