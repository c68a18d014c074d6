"""`pt.fast_exp2` in kernel bodies: the accurate exp2 in the emulator and where a target has nothing
faster, PTX's ex2.approx.ftz (relative error below 2**-22, subnormal results 0) on NVIDIA; the same
values within that bound on every test device."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.jit.llvm.compile import compile_kernel


@pt.kernel(workgroup=(32, 1, 1))
def powers(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index_x()
    if i < len(x):
        y[i] = pt.fast_exp2(x[i])


def _inputs():
    x = np.concatenate([np.linspace(-125, 127, 250), [-np.inf, 0.0, -0.0, 0.5, -1.0, np.nan]]).astype(np.float32)
    return x, np.zeros_like(x)


def test_emulation_is_the_accurate_exp2():
    x, y = _inputs()
    powers.emulate(x, y, threads=(x.size, 1, 1))
    np.testing.assert_array_equal(y, np.exp2(x))


def test_ptx_uses_the_fast_instruction_and_the_cpu_does_not():
    assert "ex2.approx.ftz.f32" in compile_kernel(powers.kir, "ptx", arch="sm_90").data
    assert b"ex2.approx" not in compile_kernel(powers.kir, "cpu").data


def test_fast_exp2_on_each_device(device):
    x, y = _inputs()
    powers.launch(pt.Context(device), x, y, threads=(x.size, 1, 1))
    want = np.exp2(x.astype(np.float64))
    normal = want >= np.finfo(np.float32).tiny            # ex2.approx.ftz flushes subnormal results to 0
    np.testing.assert_allclose(y[normal], want[normal], rtol=2.0**-21)
    assert np.isnan(y[-1]) and (y[~normal & ~np.isnan(x)] <= np.finfo(np.float32).tiny).all()


def test_fast_exp2_needs_a_float():
    @pt.kernel(workgroup=(32, 1, 1))
    def on_ints(x: pt.In[pt.i32], y: pt.Out[pt.i32]):
        i = pt.thread_index_x()
        y[i] = pt.fast_exp2(x[i])

    with pytest.raises(pt.PootError, match="fast_exp2"):
        on_ints.kir
