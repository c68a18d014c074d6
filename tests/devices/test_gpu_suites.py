"""The array parity suites, the example scripts, the device programs (tests/programs/test_device_programs.py)
and the kernel semantics suite on both Vulkan consumers of poot's SPIR-V: the wgpu device and the raw Vulkan
device (lavapipe in CI). Each suite runs in a child pytest with POOT_TEST_DEVICES=<device> and
POOT_KERNEL_DEVICES=<device> and CI's hypothesis profile, so the plain test command covers both devices
without running every suite twice in this process. The imported-kernel suite (tests/test_import_run.py) and
the SPIR-V kernel suites (test_wgpu_spirv*.py, test_vulkan_spirv.py) take the devices in this process
already.

Cost. Nearly all of a child's time is compiling: LLVM emitting SPIR-V, the post-pass, and lavapipe
(llvmpipe compiles a shader at its first dispatch, in every process), once per distinct kernel (kernels
bake in their shapes). The children share one POOT_CACHE_DIR, where LLVM's SPIR-V is cached by its IR,
which both consumers share: the wgpu children run first and the vulkan ones mostly find it there. The
children start in SUITES order (the longest first), one per core; this process only waits.

Everything runs in the plain run: every parity suite (indexing and the whole elementwise dtype matrix
included), the scripts and the kernel semantics suite. Measured (this machine, 2 cores shared with
another agent's run, load average ~2.5, cold POOT_CACHE_DIR and Mesa cache): 24 passed in 638 s wall,
1139 CPU-s; child CPU seconds:
  wgpu:   unary ints 190, unary floats 85, binary 64, rest 39, indexing 89, reductions 73,
          nn_linalg 49, array 30, movement 28, creation 26, scripts 13, kernel_semantics 3   (689 s);
  vulkan: unary ints 107, unary floats 45, binary 43, rest 30, indexing 61, reductions 59,
          nn_linalg 33, array 17, movement 24, creation 20, scripts 8, kernel_semantics 2    (449 s).
Each child's CPU seconds are printed beside its wall time (wait4), the figure to budget CI by.
EXCLUDE: per-device exclusions, each with its reason (none today).
Run one suite by hand: POOT_TEST_DEVICES=wgpu python -m pytest tests/trace/test_parity_elementwise.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from poot import devices
from poot.errors import DeviceUnavailableError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVICES = ("wgpu", "vulkan")
SUITES = {   # the longest first: the children are started in this order, each device's in turn
    "elementwise_unary_ints": ["tests/trace/test_parity_elementwise.py", "-k", "unary and not float"],
    "elementwise_unary_floats": ["tests/trace/test_parity_elementwise.py", "-k", "unary and float"],
    "indexing": ["tests/trace/test_parity_indexing.py"],
    "reductions": ["tests/trace/test_parity_reductions.py"],
    "elementwise_binary": ["tests/trace/test_parity_elementwise.py", "-k", "binary"],
    "nn_linalg": ["tests/trace/test_parity_nn.py", "tests/trace/test_parity_linalg.py"],
    "elementwise_rest": ["tests/trace/test_parity_elementwise.py", "-k", "not unary and not binary"],
    "array": ["tests/trace/test_array.py", "tests/trace/test_errors.py", "tests/trace/test_lazy.py",
              "tests/trace/test_jit.py", "tests/trace/test_control.py", "tests/trace/test_properties.py"],
    "movement": ["tests/trace/test_parity_movement.py"],
    "creation": ["tests/trace/test_parity_creation.py"],
    "scripts": ["tests/scripts/test_scripts.py"],
    "device_programs": ["tests/programs/test_device_programs.py"],
    "kernel_semantics": ["tests/test_kernel_semantics.py"],
}
EXCLUDE: dict[tuple[str, str], tuple[str, str]] = {   # (device, suite) -> (-k expression, why)
}
CHILD_TIMEOUT_S = 1500


def _command(device: str, suite: str) -> list[str]:
    args = list(SUITES[suite])
    if (device, suite) in EXCLUDE:
        k = EXCLUDE[device, suite][0]
        if "-k" in args:
            i = args.index("-k") + 1
            args[i] = f"({args[i]}) and ({k})"
        else:
            args += ["-k", k]
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "-rfEs", *args]


@dataclass
class Child:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float          # user + system of the child and what it waited for (its SPIR-V worker)


def _run(device: str, suite: str) -> Child:
    """One child pytest; its CPU time comes from wait4, so it reads the same on a busy machine."""
    env = dict(os.environ, POOT_TEST_DEVICES=device, POOT_KERNEL_DEVICES=device, CI="true")
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(_command(device, suite), cwd=ROOT, env=env, stdout=out, stderr=err)
        timer = threading.Timer(CHILD_TIMEOUT_S, p.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)    # reaped here: Popen must not wait again
        text = [f.seek(0) or f.read().decode(errors="replace") for f in (out, err)]
    if p.returncode == -9:
        text[1] += f"\nchild killed after {CHILD_TIMEOUT_S} s"
    return Child(p.returncode, *text, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime)


@pytest.fixture(scope="module")
def children(request):
    """Start the child run of every (device, suite) this session selected, one per core; each test
    then waits for its own."""
    wanted = sorted(((it.callspec.params["device_name"], it.callspec.params["suite"]) for it in request.session.items
                     if it.originalname == "test_suite_passes_on_device" and hasattr(it, "callspec")),
                    key=lambda job: (DEVICES.index(job[0]), list(SUITES).index(job[1])))
    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
    jobs = {job: pool.submit(_run, *job) for job in wanted if _available(job[0]) is None}
    yield jobs
    pool.shutdown(wait=False, cancel_futures=True)


_seen: dict[str, str | None] = {}


def _available(device: str) -> str | None:
    """None if this machine has `device`, else why not."""
    if device not in _seen:
        try:
            devices.get(device)
            _seen[device] = None
        except DeviceUnavailableError as e:
            _seen[device] = str(e)
    return _seen[device]


@pytest.mark.slow
@pytest.mark.parametrize("suite", sorted(SUITES))
@pytest.mark.parametrize("device_name", DEVICES)
def test_suite_passes_on_device(children, device_name, suite):
    why = _available(device_name)
    if why is not None:
        pytest.skip(f"no {device_name} device here: {why}")
    r = children[device_name, suite].result()
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    print(f"{device_name} {suite}: {tail} (child {r.wall_s:.0f} s wall, {r.cpu_s:.0f} s CPU)")
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "unavailable here" not in r.stdout, r.stdout[-2000:]   # ran, on the device
