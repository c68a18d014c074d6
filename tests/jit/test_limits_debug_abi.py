"""Compile limits, POOT_DEBUG output, and the launch ABI's layout and grid folding."""
import numpy as np
import pytest

from poot import devices, dtypes as dt
from poot.errors import CompileLimitError
from poot.jit.llvm import limits
from poot.jit.llvm.abi import meta_layout, pack_meta
from poot.jit.llvm.compile import compile_kernel
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, ScalarParam, BufferParam, Kernel, Return
from poot.jit.runtime.launch import launch

from kir_samples import add_kernel, axpy_kernel, chain_kernel


def test_kernel_node_limit_fails_before_lowering():
    assert limits.count_nodes(add_kernel()) > 5
    with limits.limits(max_kernel_nodes=5):
        with pytest.raises(CompileLimitError, match="max_kernel_nodes"):
            compile_kernel(add_kernel(), use_cache=False)
    compile_kernel(add_kernel(), use_cache=False)


def test_ir_and_artifact_limits():
    with limits.limits(max_ir_bytes=1000):
        with pytest.raises(CompileLimitError, match="LLVM IR"):
            compile_kernel(chain_kernel(), use_cache=False)
    with limits.limits(max_artifact_bytes=100):
        with pytest.raises(CompileLimitError, match="max_artifact_bytes"):
            compile_kernel(chain_kernel(), use_cache=False)


def test_debug_levels_print_kir_ir_assembly_and_launches(monkeypatch, capsys):
    dev = devices.get("cpu")
    k = add_kernel(wg=16)
    a = np.ones(16, np.float32)
    monkeypatch.setenv("POOT_DEBUG", "5")
    compile_kernel(k, use_cache=False)
    err = capsys.readouterr().err
    assert "--- KIR add_f32 ---" in err and "kernel add_f32(" in err
    assert "--- LLVM IR add_f32 (cpu) ---" in err and "define void @poot_add_f32_" in err
    assert "--- cpu assembly add_f32 ---" in err
    monkeypatch.setenv("POOT_DEBUG", "1")
    launch(dev, k, [dev.wrap(a), dev.wrap(a), dev.wrap(np.zeros(16, np.float32))], (), 1)
    err = capsys.readouterr().err
    assert "poot launch" in err and "add_f32" in err and " us on cpu" in err
    monkeypatch.setenv("POOT_DEBUG", "0")
    launch(dev, k, [dev.wrap(a), dev.wrap(a), dev.wrap(np.zeros(16, np.float32))], (), 1)
    assert capsys.readouterr().err == ""


def test_meta_layout_aligns_64_bit_scalars():
    k = Kernel("m", (BufferParam("a", dt.float32, Access.READ), ScalarParam("s8", dt.int8),
                     ScalarParam("s64", dt.float64), ScalarParam("s32", dt.uint32), BufferParam("b", dt.int32, Access.WRITE)),
               (Return(),))
    lay = meta_layout(k)
    assert lay.lengths == (0, 1)
    assert [(n, w) for n, w, _ in lay.scalars] == [("s8", 2), ("s64", 4), ("s32", 6)]
    assert lay.grid == 7 and lay.launch_id == 10 and lay.words == 12
    words = pack_meta(k, [5, 6], {"s8": -1, "s64": 1.5, "s32": 7}, (3, 2), launch_id=9)
    assert words[:3].tolist() == [5, 6, 0xFF]
    assert words[4:6].view(np.float64)[0] == 1.5 and words[6] == 7
    assert words[7:11].tolist() == [3, 2, 1, 9]
