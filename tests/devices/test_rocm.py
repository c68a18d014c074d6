"""The ROCm device. Everywhere: `poot devices` says why ROCm is unavailable (or what the GPU is), and the
driver-API code the ROCm device shares with CUDA has a HIP answer for every driver call and attribute it
uses (so a change to driver_api.py cannot silently break ROCm). On an AMD GPU: transfers, @pt.kernel launches
through the AMDGCN target (checked against NumPy), grid folding, traps and the array API. Without one
those skip with the reason. Nothing here has run on AMD hardware yet.
Run on an AMD GPU machine: python -m pytest -q tests/devices/test_rocm.py"""
from __future__ import annotations

import ast
import inspect
import types

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.devices import driver_api, rocm
from poot.errors import DeviceError, DeviceUnavailableError, KernelTrap


# --- everywhere -----------------------------------------------------------------------------------
def test_poot_devices_says_why_rocm_is_unavailable_or_what_it_is():
    row = next(r for r in devices.availability() if r[0].startswith("rocm"))
    if row[1]:
        assert row[2].startswith("amdgcn target gfx") and "CUs" in row[2]
    else:
        assert row[2].startswith("rocm: ") and "Traceback" not in row[2] and "not built" not in row[2]
        assert any(w in row[2] for w in ("not installed", "no ROCm runtime", "finds no usable AMD GPU", "failed"))


def test_a_missing_runtime_is_a_device_unavailable_error():
    try:
        pt.device("rocm:0")
    except DeviceUnavailableError as e:
        assert str(e).startswith("rocm: ")
    else:
        pytest.skip("an AMD GPU is present")


def _shared_methods():
    tree = ast.parse(inspect.getsource(driver_api))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DriverApiDevice")
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    helpers = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    return methods, helpers


def _is_driver(node) -> bool:
    """`drv` or `<anything>._drv`: how driver_api.py spells the driver module."""
    return (isinstance(node, ast.Name) and node.id == "drv") or (isinstance(node, ast.Attribute) and node.attr == "_drv")


def test_every_driver_call_of_the_shared_cuda_code_has_a_hip_answer():
    """RocmDevice runs DriverApiDevice's methods on _HipDriver: each driver attribute they (or the module
    helpers they call) touch must exist there."""
    methods, helpers = _shared_methods()
    used: dict[str, str] = {}
    assert issubclass(rocm.RocmDevice, driver_api.DriverApiDevice)
    for name in methods:
        called = {n.id for n in ast.walk(methods[name]) if isinstance(n, ast.Name) and n.id in helpers}
        for fn in [methods[name]] + [helpers[c] for c in called]:
            for node in ast.walk(fn):
                if isinstance(node, ast.Attribute) and _is_driver(node.value):
                    used.setdefault(node.attr, fn.name)
    driver = rocm._HipDriver(types.SimpleNamespace(hipEventDisableTiming=2))
    missing = {a: where for a, where in used.items() if not hasattr(driver, a)}
    assert not missing, f"driver calls of the shared CUDA code with no HIP counterpart in _HipDriver: {missing}"
    assert "cuMemAllocFromPoolAsync" in used and "cuLaunchKernel" in used     # the walk saw the calls


def test_the_shared_cuda_code_finds_every_attribute_it_reads():
    """Each `self.X` the shared methods read is set by RocmDevice.__init__ (or the `_init_state` it calls) or
    is one of its attributes."""
    methods, _ = _shared_methods()
    source = ast.parse(inspect.getsource(rocm.RocmDevice))
    init = next(f for f in source.body[0].body if isinstance(f, ast.FunctionDef) and f.name == "__init__")
    assert any(isinstance(n, ast.Attribute) and n.attr == "_init_state" for n in ast.walk(init))
    assigned = {t.attr for fn in (init, methods["_init_state"]) for n in ast.walk(fn)
                for t in (n.targets if isinstance(n, ast.Assign)
                          else [n.target] if isinstance(n, ast.AnnAssign) else [])
                for t in (t.elts if isinstance(t, ast.Tuple) else [t])
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    missing = {}
    for name in methods:
        for node in ast.walk(methods[name]):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                if node.attr not in assigned and not hasattr(rocm.RocmDevice, node.attr):
                    missing.setdefault(node.attr, name)
    assert not missing, f"attributes the shared CUDA code reads that RocmDevice never sets: {missing}"


def test_kernel_arguments_travel_in_hips_extra_buffer():
    calls = []
    hip = types.SimpleNamespace(hipEventDisableTiming=2, hipModuleLaunchKernel=lambda *a: calls.append(a) or (0,))
    rocm._HipDriver(hip).cuLaunchKernel("f", 4, 2, 1, 64, 1, 1, 0, "s", ((16, 32, 48), None), 0)
    (f, gx, gy, gz, bx, by, bz, shared, stream, params, extra), = calls
    assert (f, gx, gy, gz, bx, by, bz, shared, stream, params) == ("f", 4, 2, 1, 64, 1, 1, 0, "s", None)
    assert [p.value for p in extra] == [16, 32, 48]


# --- on an AMD GPU --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gpu():
    try:
        return devices.get("rocm:0")
    except DeviceUnavailableError as e:
        pytest.skip(f"no AMD GPU here: {e}")


@pt.kernel
def _scale(x: pt.In[pt.f32], y: pt.Out[pt.f32], a: pt.f32):
    i = pt.thread_index()
    if i < len(y):
        y[i] = a * x[i] + 1.0


@pt.kernel
def _checked(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = x[i + 1]


def test_capabilities_name_the_gpu(gpu):
    assert gpu.caps.target == "amdgcn" and gpu.caps.compile_arch.startswith("gfx")
    assert gpu.caps.subgroup_size in (32, 64) and gpu.caps.max_workgroup_size >= 256


def test_transfers_round_trip(gpu):
    for n in (0, 3, 1 << 20, (9 << 20) + 5):         # pageable and through the pinned ring
        data = np.random.default_rng(n).integers(0, 255, n, dtype=np.uint8)
        buf = gpu.allocate(n)
        gpu.write(buf, data)
        assert np.array_equal(gpu.read(buf), data)
        other = gpu.allocate(n)
        gpu.copy(other, buf, n)
        assert np.array_equal(gpu.read(other), data)


def test_a_kernel_runs_and_matches_numpy(gpu):
    x = np.random.default_rng(0).standard_normal(100_003).astype(np.float32)
    y = np.zeros_like(x)
    _scale(pt.Context("rocm"), x, y, 2.5)
    np.testing.assert_allclose(y, 2.5 * x + 1.0, rtol=1e-6)


def test_a_trap_is_a_kernel_trap_and_the_device_stays_usable(gpu):
    x = np.ones(64, np.float32)
    with pytest.raises(KernelTrap):
        _checked(pt.Context("rocm"), x, np.zeros(64, np.float32))
    test_a_kernel_runs_and_matches_numpy(gpu)


def test_array_api_on_rocm(gpu):
    a = np.random.default_rng(1).standard_normal((300, 257)).astype(np.float32)
    with pt.device("rocm"):
        out = (pt.exp(pt.array(a)) * 2.0).sum(axis=1).numpy()
    np.testing.assert_allclose(out, (np.exp(a) * 2.0).sum(axis=1), rtol=2e-5)


def test_loading_a_foreign_artifact_is_refused(gpu):
    with pytest.raises(DeviceError, match="expected an artifact whose data is a HSACO"):
        gpu.load(types.SimpleNamespace(data=b"\x03\x02\x23\x07", entry="k", name="k"))
