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
