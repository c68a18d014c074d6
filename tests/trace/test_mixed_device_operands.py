"""Operands on two devices: an index array or a scan's xs on another device than the current one.

A kernel reads buffers of its own device only, so an index array on another device must be refused
where it is written (a DeviceError naming both devices), not at realize naming a buffer; and a scan
whose carry is only Python scalars runs on its xs' device, not on the device of the `with` block."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt


def _other(device: str) -> str:
    """A second device name that is always available next to `device`."""
    return "oracle" if device != "oracle" else "cpu"


def test_index_array_on_another_device_is_refused_at_the_index(device):
    x = pt.array(np.arange(10.0, dtype=np.float32))
    idx = pt.array(np.array([1, 2]), device=_other(device))
    for index in (lambda: x[idx], lambda: x[idx * 1], lambda: pt.take(x, idx),
                  lambda: x.at[idx].set(5.0)):
        with pytest.raises(pt.DeviceError, match=f"index array is on '{_other(device)}'"):
            index()


def test_index_array_on_the_same_device_still_gathers(device):
    x = pt.array(np.arange(10.0, dtype=np.float32))
    np.testing.assert_array_equal(x[pt.array(np.array([3, -1]))].numpy(), [3.0, 9.0])
    np.testing.assert_array_equal(x[np.array([3, -1])].numpy(), [3.0, 9.0])


def test_elementwise_operands_on_two_devices_are_refused_when_recorded(device):
    x = pt.array(np.arange(3.0, dtype=np.float32))
    with pt.device(_other(device)):
        with pytest.raises(pt.DeviceError, match="different devices"):
            pt.lax.fori_loop(0, 3, lambda i, c: c + x.sum(), 0.0)


def test_scan_with_scalar_carry_runs_on_the_device_of_xs(device):
    xs_np = np.arange(1.0, 5.0, dtype=np.float32)
    xs = pt.array(xs_np)
    with pt.device(_other(device)):
        c, ys = pt.lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)
        jc, jys = pt.jit(lambda v: pt.lax.scan(lambda c, x: (c + x, c * x), 0.0, v))(xs)
    assert c.device == device and ys.device == device
    np.testing.assert_allclose(c.numpy(), xs_np.sum())
    np.testing.assert_allclose(ys.numpy(), np.concatenate([[0.0], np.cumsum(xs_np)[:-1]]) * xs_np)
    np.testing.assert_allclose(jc.numpy(), xs_np.sum())
    np.testing.assert_allclose(jys.numpy(), ys.numpy())
