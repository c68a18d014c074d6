"""The CUDA device's own logic on a fake driver (fake_libcuda.c: host memory, native stand-ins for the test
kernels, and the checks a real driver makes), so it runs in CI without a GPU: transfers through the
pinned ring, the pool and its out-of-memory path, module loading and its refusals, launches with grid
folding, per-thread contexts, CUDA-graph record/replay with rebinding, and sticky-error reporting.

This builds the fake with the C compiler and cuda.h, then runs the tests of cuda_fake_checks.py in a
child pytest whose LD_LIBRARY_PATH puts the fake's libcuda.so.1 first (the driver is loaded once per
process, so it cannot be swapped in this one)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_H = next((p for p in ("/usr/local/cuda/include", "/usr/include") if os.path.exists(f"{p}/cuda.h")), None)


@pytest.mark.parametrize("memory", ["pool", "no-pool"])
def test_device_on_the_fake_driver(tmp_path, memory):
    """Without memory pools (older GPUs) the device allocates with cuMemAlloc; both paths pass the same tests."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or CUDA_H is None:
        pytest.skip("needs a C compiler and the CUDA toolkit's cuda.h to build the fake driver")
    pytest.importorskip("cuda.bindings.driver")
    lib = tmp_path / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{CUDA_H}", os.path.join(HERE, "fake_libcuda.c"), "-o", str(lib),
                    "-ldl"], check=True, capture_output=True)
    env = dict(os.environ, POOT_FAKE_LIBCUDA=str(lib), FAKE_CUDA_MEMORY=str(256 << 20),
               LD_LIBRARY_PATH=f"{tmp_path}:{os.environ.get('LD_LIBRARY_PATH', '')}")
    if memory == "no-pool":
        env["FAKE_CUDA_NO_POOLS"] = "1"
    checks = os.path.join(HERE, "cuda_fake_checks.py")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", checks], env=env,
                       capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(HERE)))
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "SKIPPED" not in r.stdout, r.stdout[-2000:]
