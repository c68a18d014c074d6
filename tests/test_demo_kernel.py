"""`poot demo`'s hand-written-kernel part: saxpy and the GEMV asset's source, emulated and run on the CPU."""
from poot import demo
from poot.kernel.demo import run_kernel_demo


def test_the_kernel_part_is_in_the_demo_and_matches_numpy():
    assert demo.kernel_part in demo.PARTS
    lines = []
    assert run_kernel_demo("cpu", n=4096, out=lines.append) is True
    text = "\n".join(lines)
    assert "DIFFERS" not in text
    assert text.count("matches NumPy") == 4, text     # saxpy emulated + run, GEMV emulated + run


def test_the_kernel_part_runs_on_the_default_device(monkeypatch):
    """`POOT_DEVICE=vulkan poot demo` runs the kernels on Vulkan, as the array part does; the oracle
    pseudo-device launches no kernels, so the part says it uses the CPU instead."""
    import importlib

    import poot as pt
    kernel_demo = importlib.import_module("poot.kernel.demo")   # poot.kernel is also the decorator's name

    seen = []
    monkeypatch.setattr(kernel_demo, "run_kernel_demo", lambda device, out=print: seen.append(device) or True)
    with pt.device("cpu"):
        assert demo.kernel_part(out=lambda line: None)
    lines = []
    with pt.device("oracle"):
        assert demo.kernel_part(out=lines.append)
    assert seen == ["cpu", "cpu"] and "oracle pseudo-device" in lines[0]
    monkeypatch.setattr(demo.trace_context, "current", lambda: "vulkan")
    demo.kernel_part(out=lambda line: None)
    assert seen[-1] == "vulkan"
