"""A replayed CPU program runs its kernels as one native call (poot/devices/cpu_chain.py)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import poot as pt
from poot.devices import cpu_chain, cpu_replay


def _recordings():
    return [o for o in gc.get_objects() if isinstance(o, cpu_replay.CpuRecording)]


def _softmax_rows(x, y):
    a = pt.exp(x) + y
    c = a / a.sum(axis=1, keepdims=True)
    return c, (c * 2).max(axis=0)


def _reference(x, y):
    a = np.exp(x) + y
    c = a / a.sum(axis=1, keepdims=True)
    return c, (c * 2).max(axis=0)


@pytest.mark.parametrize("rows", [3, 64, 3000])
def test_jitted_program_is_one_native_call_per_replay(rows):
    if not cpu_chain.enabled():
        pytest.skip("POOT_CPU_CHAIN=0 in the environment turns chaining off")
    rng = np.random.default_rng(rows)
    f = pt.jit(_softmax_rows)
    with pt.device("cpu"):
        x = rng.random((rows, 100), dtype=np.float32)
        y = rng.random((rows, 100), dtype=np.float32)
        X, Y = pt.array(x), pt.array(y)
        before = {id(r) for r in _recordings()}
        for _ in range(cpu_chain.MEASURED_RUNS + 1):      # traced, then measured, then chained
            f(X, Y)
        mine = [r for r in _recordings() if id(r) not in before and r.calls]
        assert mine, "the jitted call recorded no CPU launches"
        rec = mine[0]
        assert rec.chain is not None, "the recording was not chained after its measured runs"
        calls = rec.chain.calls
        for k in range(4):                                 # new inputs each time: slots rebound
            x = rng.random((rows, 100), dtype=np.float32)
            c, d = f(pt.array(x), Y)
            want_c, want_d = _reference(x, y)
            np.testing.assert_allclose(c.numpy(), want_c, rtol=2e-6, atol=1e-7)
            np.testing.assert_allclose(d.numpy(), want_d, rtol=2e-6, atol=1e-7)
        assert rec.chain.calls == calls + 4, "each replay should be exactly one native call"
        assert len(rec.calls) >= 2, "the program should have several kernel launches to chain"


def test_chain_ir_inlines_small_launches_and_splits_large_ones():
    class Prog:
        def __init__(self, address, group_ns):
            self.address, self.group_ns = address, group_ns

    class Call:
        def __init__(self, program, total):
            self.program, self.total = program, total
            self.ptrs, self.meta, self.trap = 0x1000, 0x2000, 0x3000

    small, large = Call(Prog(0xA0, 10.0), 4), Call(Prog(0xB0, 1000.0), 4096)
    ir = cpu_chain.chain_ir("c", [small, large], pool_run=0xF0, inline_ns=30_000, threads=2, per_thread=16)
    lines = [ln for ln in ir.splitlines() if "call void" in ln]
    assert f"inttoptr (i64 {0xA0} to ptr)(" in lines[0] and "i64 0, i64 4)" in lines[0]
    assert f"inttoptr (i64 {0xF0} to ptr)(ptr inttoptr (i64 {0xB0} to ptr)" in lines[1]
    assert "i64 4096, i64 128, i64 0)" in lines[1]          # total, chunk = 4096 // (2 * 16), begin
    one_core = cpu_chain.chain_ir("c", [large], pool_run=0xF0, inline_ns=30_000, threads=1, per_thread=16)
    assert f"i64 {0xF0}" not in one_core                     # nothing to split over: inline


def test_chain_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("POOT_CPU_CHAIN", "0")
    assert not cpu_chain.enabled()
    monkeypatch.setenv("POOT_CPU_CHAIN", "1")
    assert cpu_chain.enabled()
