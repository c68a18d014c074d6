"""SPIR-V compiles run in a worker process whose LLVM can fail after many modules where a fresh one
does not: such a failure is tried once more in a fresh worker; a fresh worker's failure is raised."""
from __future__ import annotations

import pytest

import poot as pt
from poot.jit.llvm.targets.spirv import worker


class FakeWorker:
    """Stands in for the worker process: fails the first `fail` compiles, with `count` modules done."""

    def __init__(self, fail: int, count: int):
        self.fail, self.count, self.requests, self.restarts = fail, count, [], 0

    def compile(self, ir, name):
        self.requests.append(ir)
        if len(self.requests) <= self.fail:
            raise pt.LoweringError(f"kernel '{name}': LLVM's SPIR-V backend failed: Unsupported ptrcast user")
        return b"spirv"


@pytest.fixture
def fake(monkeypatch):
    def make(fail, count):
        w = FakeWorker(fail, count)
        monkeypatch.setattr(worker, "_worker", w)
        monkeypatch.setattr(worker, "restart", lambda: setattr(w, "restarts", w.restarts + 1))
        return w
    return make


def test_a_used_workers_failure_is_retried_in_a_fresh_one(fake):
    w = fake(fail=1, count=40)
    assert worker.compile_spirv("ir", "k") == b"spirv"
    assert w.requests == ["ir", "ir"] and w.restarts == 1


def test_a_fresh_workers_failure_is_raised(fake):
    w = fake(fail=1, count=1)
    with pytest.raises(pt.LoweringError, match="ptrcast"):
        worker.compile_spirv("ir", "k")
    assert w.requests == ["ir"] and w.restarts == 0


def test_a_failure_that_repeats_in_the_fresh_worker_is_raised(fake):
    w = fake(fail=2, count=40)
    with pytest.raises(pt.LoweringError, match="ptrcast"):
        worker.compile_spirv("ir", "k")
    assert len(w.requests) == 2
