"""Every kernel under kernels/ is imported fresh from its source and run -- under emulation and on every
available device -- against its NumPy reference and against its own emulation."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import LoweringError
from poot.kernel import assets
from poot.jit.kir.model import BufferParam

ENTRIES = assets.load_manifest()


def _examples(entry):
    module = assets.load_source(entry)
    fn = assets.entry_function(entry, module)
    make = getattr(module, f"example_{entry.entry}", None)
    assert make is not None, f"kernels/{entry.source} defines no example_{entry.entry}(rng) to test it with"
    out = make(np.random.default_rng(1234))
    return fn, (out if isinstance(out, list) else [out])


def _outputs(fn, args) -> dict:
    return {p.name: a for p, a in zip(fn.kir.params, args) if isinstance(p, BufferParam) and p.access.writable}


def _assert_close(got, want, example, what):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.dtype}{got.shape} vs " \
                                                                  f"{want.dtype}{want.shape}"
    rtol, atol = example.tolerance(got.dtype)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=what)


def _run(run, fn, example):
    """Run one example; returns (outputs, trap or None)."""
    args = example.fresh_args()
    try:
        run(fn, args, example)
    except pt.KernelTrap as trap:
        return None, trap
    return _outputs(fn, args), None


def _check(fn, example, outputs, trap, where):
    if example.trap is not None:
        assert trap is not None, f"{where}: expected a trap ({example.trap!r}), none raised"
        assert trap.kernel == fn.kir.name
        assert example.trap in (trap.what or ""), f"{where}: trap {trap} is not {example.trap!r}"
        site = next(t for t in fn.kir.traps if t.code == trap.code)
        assert trap.where == site.where and site.where.split(":")[-1].isdigit()
        return
    assert trap is None, f"{where}: unexpected trap {trap}"
    for name, want in example.expected.items():
        _assert_close(outputs[name], want, example, f"{where}: buffer '{name}' vs NumPy")


def emulate(fn, args, example):
    fn.emulate(*args, threads=example.threads, workgroup=example.workgroup)


def _devices():
    """Every device kind; the ones this machine (or this build's compiler) cannot run skip, saying why."""
    from poot.jit.llvm import compile as jit_compile

    out = []
    for kind in devices.KNOWN:
        try:
            target = devices.get(kind).caps.target
        except pt.DeviceUnavailableError as e:
            out.append(pytest.param(kind, id=kind, marks=pytest.mark.skip(reason=f"device '{kind}': {e}")))
            continue
        if target not in jit_compile.TARGETS:
            why = f"device '{kind}' is here but the '{target}' compile target is not built yet"
            out.append(pytest.param(kind, id=kind, marks=pytest.mark.skip(reason=why)))
        else:
            out.append(pytest.param(kind, id=kind))
    return out


def test_manifest_is_not_empty():
    assert len(ENTRIES) >= 7


def test_every_kernel_source_is_in_the_manifest():
    root = assets.root_dir() / "kernels"
    listed = {e.source for e in ENTRIES}
    sources = {str(p.relative_to(root)) for p in root.glob("*/*.py") if p.name != "manifest.py"}
    assert sources - listed == set(), f"kernel sources without a manifest entry: {sorted(sources - listed)}"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_kernel_imports_fresh(entry):
    fn, examples = _examples(entry)
    kernel = fn.kir
    assert kernel.name == fn.name and kernel.params and examples
    again, _ = _examples(entry)
    assert again is not fn and again.kir == kernel      # a fresh module, the same KIR


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_emulation_matches_numpy(entry):
    fn, examples = _examples(entry)
    for i, ex in enumerate(examples):
        outputs, trap = _run(emulate, fn, ex)
        _check(fn, ex, outputs, trap, f"{entry.name} example {i} (emulated)")


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_device_matches_numpy_and_emulation(entry, device):
    fn, examples = _examples(entry)
    ctx = pt.Context(device)

    def launch(fn, args, example):
        fn.launch(ctx, *args, threads=example.threads, workgroup=example.workgroup)

    caps = devices.get(device).caps
    target = caps.target
    if entry.builds_for(target) and fn.kir.lane_span > caps.subgroup_size:
        pytest.skip(f"{entry.name} exchanges values across {fn.kir.lane_span} lanes; the subgroups of {device} "
                    f"exchange {caps.subgroup_size}")
    if not entry.builds_for(target):
        try:                          # refused, or right: never run wrongly
            outputs, trap = _run(launch, fn, examples[0])
        except (pt.NotBuiltError, LoweringError, pt.KernelImportError) as e:
            # a refusal may also be that its tiles need more shared memory than the device allows
            if isinstance(e, pt.KernelImportError) and e.code != "kernel-import::shared-too-large":
                raise
            pytest.skip(f"{entry.name} is built for {', '.join(entry.targets)}, not {target} (its manifest row)")
        _check(fn, examples[0], outputs, trap, f"{entry.name} example 0 on {device} (not in its manifest row)")
        return
    for i, ex in enumerate(examples):
        where = f"{entry.name} example {i} on {device}"
        outputs, trap = _run(launch, fn, ex)
        _check(fn, ex, outputs, trap, where)
        emu_outputs, emu_trap = _run(emulate, fn, ex)
        if ex.trap is not None:
            assert emu_trap is not None and emu_trap.code == trap.code, f"{where}: trap code differs from emulation"
            continue
        for name, got in outputs.items():
            _assert_close(got, emu_outputs[name], ex, f"{where}: buffer '{name}' vs emulation")


@pytest.mark.parametrize("device", _devices())
def test_kernel_runs_on_poot_arrays_in_place(device):
    """poot Arrays are used in place (no copy): the kernel writes into the array's own buffer."""
    entry = next(e for e in ENTRIES if e.name == "probe_add")
    fn, _ = _examples(entry)
    a = np.arange(100, dtype=np.float32)
    b = np.full(100, 0.5, np.float32)
    with pt.device(device):
        pa, pb, pc = pt.array(a), pt.array(b), pt.zeros(100, dtype=pt.f32)
        pc.numpy()
        fn(pt.Context(device), pa, pb, pc)
        np.testing.assert_array_equal(pc.numpy(), a + b)
