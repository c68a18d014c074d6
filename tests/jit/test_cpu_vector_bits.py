"""`@pt.kernel(cpu_vector_bits=512)`: a kernel bound by arithmetic may ask the CPU lowering for 512-bit
vectors where the host has them (LLVM prefers 256 on AVX-512 CPUs). The request travels in the KIR (and
its JSON form), reaches the function's attributes only where the CPU has such registers, changes no
result, and a value other than 0, 256 or 512 is refused at the decorator with a poot error."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.jit.kir.serialize import from_json, to_json
from poot.jit.llvm.compile import llvm_ir
from poot.jit.llvm.targets import target_named


@pt.kernel(cpu_vector_bits=512)
def scaled_sum(a: pt.f32, x: pt.In[pt.f32], y: pt.In[pt.f32], out: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(out):
        out[i] = a * x[i] + y[i] * y[i]


def test_the_request_travels_in_the_kir_and_its_json():
    kir = scaled_sum.kir
    assert kir.cpu_vector_bits == 512
    assert from_json(to_json(kir)).cpu_vector_bits == 512
    assert '"cpu_vector_bits"' not in to_json(type(kir)(name="k", params=(), body=()))   # absent when 0


def test_the_cpu_lowering_asks_llvm_only_where_the_host_has_the_registers():
    ir = llvm_ir(scaled_sum.kir, "cpu", optimized=False)
    wide = target_named("cpu").lowering(None).has_vector_bits(512)
    assert ('"prefer-vector-width"="512"' in ir) == wide


def test_results_are_unchanged():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    scaled_sum(pt.Context("cpu"), 1.5, x, y, out)
    np.testing.assert_allclose(out, np.float32(1.5) * x + y * y, rtol=1e-6, atol=1e-6)   # fused or not


def test_an_unknown_width_is_refused_at_the_decorator():
    with pytest.raises(pt.PootError, match="cpu_vector_bits"):
        @pt.kernel(cpu_vector_bits=384)
        def bad(x: pt.Out[pt.f32]):
            x[0] = 1.0
