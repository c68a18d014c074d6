"""A cached program realized a second time replays a recording of its launches from the third realize on
(poot/jit/runtime/execute.py run_program): on every device, each realize with its own inputs and fresh
results, the intermediates the recording holds overwritten safely call after call, and a trap still
named at the next read. Devices that record addresses alone (CPU, CUDA) record with 4-byte stand-ins."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.jit.runtime import execute


@pytest.fixture
def compiled(device):
    """The device under test where it runs compiled programs (the oracle evaluates graphs in NumPy)."""
    if device == "oracle":
        pytest.skip("the oracle evaluates graphs in NumPy: it has no programs to record")
    return device


def _new_programs(before: set) -> list:
    return [p for p in execute._PROGRAMS.values() if id(p) not in before]


def _softmax_sums(x, y):
    """Two launches on every device: a row reduction, then a pointwise sum over the rows."""
    return pt.exp(x - x.max(axis=1, keepdims=True)).sum(axis=0) + y[0]


def test_each_realize_of_a_replayed_program_computes_its_own_inputs(compiled):
    rng = np.random.default_rng(7)
    before = {id(p) for p in execute._PROGRAMS.values()}
    kept = []
    for i in range(6):
        xn = rng.standard_normal((61, 35)).astype(np.float32) * (i + 1)
        yn = rng.standard_normal((3, 35)).astype(np.float32)
        r = _softmax_sums(pt.asarray(xn), pt.asarray(yn))
        pt.realize(r)
        kept.append((r, np.exp(xn - xn.max(axis=1, keepdims=True)).sum(axis=0) + yn[0]))
    for r, want in kept:        # results read after later realizes reused the recording's intermediates
        np.testing.assert_allclose(r.numpy(), want, rtol=2e-5, atol=1e-5)
    prog, = _new_programs(before)
    assert prog.eager_calls == 2 and prog.eager_replay is not None


def test_a_program_of_one_launch_replays_where_the_device_says_it_pays(compiled):
    """Vulkan and wgpu record and submit a command buffer per dispatch, so one launch replays too;
    a CUDA launch is no slower than a graph launch, and the CPU replays every program."""
    rng = np.random.default_rng(3)
    before = {id(p) for p in execute._PROGRAMS.values()}
    for i in range(5):
        xn = rng.standard_normal(301).astype(np.float32)
        r = pt.realize(pt.asarray(xn) * 2.5 + float(i))
        np.testing.assert_allclose(r.numpy(), xn * 2.5 + i, rtol=1e-6, atol=1e-6)
    (prog,) = _new_programs(before)
    assert len(prog.launches) == 1 and prog.eager_calls == 2
    dev = devices.get(compiled)
    replays = dev.replays_one_launch or not dev.name.startswith(("cuda", "rocm"))
    assert (prog.eager_replay is not None) == replays, (dev.name, prog.eager_replay)


def test_address_recordings_keep_no_full_size_copy_of_their_inputs(compiled):
    rng = np.random.default_rng(8)
    before = {id(p) for p in execute._PROGRAMS.values()}
    for _ in range(3):
        x = pt.asarray(rng.standard_normal((256, 64)).astype(np.float32))
        pt.realize(_softmax_sums(x, x[:2]))
    prog, = _new_programs(before)
    replay = prog.eager_replay
    assert replay is not None
    if devices.get(compiled).records_addresses:
        assert all(b.nbytes == 4 for b in replay.inputs) and all(b.nbytes == 4 for b, _ in replay.fresh)
    else:
        assert [b.nbytes for b in replay.inputs] == [prog.nbytes[v] for v in prog.input_ids]


def test_an_index_trap_in_a_replayed_program_names_its_line(compiled):
    xn = np.arange(12, dtype=np.float32).reshape(4, 3) / 12
    x = pt.asarray(xn)
    idx_ok = pt.asarray(np.array([0, 2, 1], np.int32))
    before = {id(p) for p in execute._PROGRAMS.values()}
    rows = xn[[0, 2, 1]]
    for _ in range(3):
        np.testing.assert_allclose(_softmax_sums(pt.take(x, idx_ok, axis=0), x).numpy(),
                                   np.exp(rows - rows.max(axis=1, keepdims=True)).sum(axis=0) + xn[0], rtol=1e-6)
    prog, = _new_programs(before)
    assert prog.eager_replay is not None
    bad = pt.asarray(np.array([0, 9, 1], np.int32))
    with pytest.raises(pt.PootIndexError, match=r"test_eager_replay.py:\d+ \(found by kernel"):
        _softmax_sums(pt.take(x, bad, axis=0), x).numpy()
