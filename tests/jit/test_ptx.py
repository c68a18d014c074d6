"""The PTX target: every sample kernel's PTX assembles with ptxas for sm_80 and sm_90."""
import re
import subprocess

import pytest

from poot.errors import LoweringError
from poot.jit.llvm.compile import compile_kernel
from poot.jit.llvm.targets.ptx.target import ptx_feature

from kir_samples import all_kernels, reduce_shared_kernel
from ptxas_tool import PTXAS, SKIP_REASON

needs_ptxas = pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name,kernel", all_kernels())
def test_ptx_assembles(name, kernel, arch, tmp_path):
    art = compile_kernel(kernel, "ptx", arch=arch)
    assert f".target {arch}" in art.data and ".version 8." in art.data
    assert re.search(rf"\.visible \.entry {art.entry}\(", art.data)
    path = tmp_path / f"{name}.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", str(tmp_path / "out.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_ptx_kernel_shape():
    ptx = compile_kernel(reduce_shared_kernel(), "ptx").data
    assert ".shared" in ptx and "bar.sync" in ptx and ".maxntid 64, 1, 1" in ptx
    assert "%ctaid.x" in ptx and "%nctaid.x" in ptx      # folded-grid reconstruction


def test_ptx_arch_validation():
    assert ptx_feature("sm_90a") == "+ptx80" and ptx_feature("sm_100") == "+ptx86"
    with pytest.raises(LoweringError, match="sm_80"):
        ptx_feature("compute_80")


def test_bf16_rounding_takes_the_cvt_instruction_from_sm_80():
    """f32 -> bf16 is one cvt.rn.bf16.f32 (plus the select that keeps a NaN's sign and payload as
    NumPy does) where the GPU has it."""
    import poot as pt

    @pt.kernel(workgroup=(64, 1, 1))
    def to_bf16(x: pt.In[pt.f32], y: pt.Out[pt.bf16]):
        i = pt.thread_index()
        if i < len(y):
            y[i] = pt.bf16(x[i] * 3.0)

    assert "cvt.rn.bf16.f32" in compile_kernel(to_bf16.kir, "ptx", arch="sm_90", use_cache=False).data
