"""CPU record/replay: a recording captures only its own thread's dispatches, and replays them with
rebound buffers."""
from __future__ import annotations

import threading

import numpy as np

import poot as pt
from poot.devices import get


def test_another_threads_work_runs_while_a_recording_is_open():
    dev = get("cpu")
    x = pt.array(np.arange(5, dtype=np.float32))
    (x + 1).numpy()                                  # compiled before the recording opens
    out = {}

    def other():
        out["y"] = (pt.array(np.arange(5, dtype=np.float32)) * 3 + 1).numpy().copy()

    with dev.record() as rec:
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(rec) == 0                             # nothing of the other thread was captured
    np.testing.assert_array_equal(out["y"], np.arange(5, dtype=np.float32) * 3 + 1)


def test_a_jitted_program_replays_with_new_inputs():
    f = pt.jit(lambda a, b: pt.exp(a) * b + 1.0)
    for k in range(3):
        a = np.linspace(-1, 1, 1000).astype(np.float32) * k
        b = np.full(1000, k, np.float32)
        np.testing.assert_allclose(f(pt.array(a), pt.array(b)).numpy(), np.exp(a) * b + 1, rtol=1e-6)
    assert f.trace_count == 1
