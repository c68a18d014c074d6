"""The naga post-pass on LLVM's SPIR-V, instruction by instruction (no adapter needed)."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import poot as pt
from poot import dtypes as dt
from poot.errors import LoweringError
from poot.jit.llvm.compile import compile_kernel, get_target
from poot.jit.llvm.targets.spirv import naga as N
from poot.jit.llvm.lower import lower_to_llvm
from poot.jit.llvm.targets.spirv.worker import compile_spirv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jit"))
import kir_samples as S  # noqa: E402


def raw_spirv(kernel) -> bytes:
    """LLVM's SPIR-V for `kernel`, before the post-pass."""
    import llvmlite.binding as llvm

    tgt = get_target("spirv")
    mod = llvm.parse_assembly(lower_to_llvm(kernel, tgt, "main"))
    return compile_spirv(str(mod), kernel.name)


def ops(spv: bytes) -> list[list[int]]:
    return N.parse(spv)[1]


def valid(spv: bytes) -> None:
    if shutil.which("spirv-val"):
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", "-"], input=spv, capture_output=True)
        assert r.returncode == 0, r.stderr.decode()


@pytest.fixture(scope="module")
def reduce_raw():
    return raw_spirv(S.reduce_shared_kernel(64))


def test_resource_name_strings_and_the_int8_capability_are_dropped(reduce_raw):
    assert any(N.opcode(i) == 21 and i[2] == 8 for i in ops(reduce_raw))          # LLVM's i8 name strings
    fixed = N.fix_for_naga(reduce_raw)
    insts = ops(fixed)
    assert not any(N.opcode(i) == 21 and i[2] == 8 for i in insts)
    assert [17, 39] not in [i[:2] for i in insts if N.opcode(i) == 17]
    assert not any(N.opcode(i) == N.OP_VARIABLE and i[3] == N.STORAGE_FUNCTION for i in insts)
    valid(fixed)


def test_memory_operands_are_stripped(reduce_raw):
    assert any(N.opcode(i) == N.OP_LOAD and len(i) > 4 for i in ops(reduce_raw))
    insts = ops(N.fix_for_naga(reduce_raw))
    assert all(len(i) == 4 for i in insts if N.opcode(i) == N.OP_LOAD)
    assert all(len(i) == 3 for i in insts if N.opcode(i) == N.OP_STORE)


def test_barriers_get_workgroup_and_uniform_memory_semantics(reduce_raw):
    def semantics(spv):
        insts = ops(spv)
        consts = {i[2]: i[3] for i in insts if N.opcode(i) == N.OP_CONSTANT and len(i) == 4}
        return [consts[i[3]] for i in insts if N.opcode(i) == N.OP_CONTROL_BARRIER]
    assert semantics(reduce_raw) and all(s & N.SEM_STORAGE_CLASS_BITS == 0 for s in semantics(reduce_raw))
    assert set(semantics(N.fix_for_naga(reduce_raw))) == {N.BARRIER_SEMANTICS}


def test_the_post_pass_is_idempotent(reduce_raw):
    once = N.fix_for_naga(reduce_raw)
    assert N.fix_for_naga(once) == once


def test_unordered_compares_become_isnan():
    raw = raw_spirv(S.add_kernel(dt.bfloat16))      # bf16 rounding tests NaN with fcmp uno
    assert any(N.opcode(i) == N.OP_UNORDERED for i in ops(raw))
    fixed = N.fix_for_naga(raw)
    assert not any(N.opcode(i) in (N.OP_UNORDERED, N.OP_ORDERED) for i in ops(fixed))
    assert any(N.opcode(i) == N.OP_IS_NAN for i in ops(fixed))
    valid(fixed)


def test_signed_integer_ops_get_signed_operands():
    fixed = N.fix_for_naga(raw_spirv(S.binary_kernel("div", dt.int32)))
    insts = ops(fixed)
    signed = {i[1] for i in insts if N.opcode(i) == N.OP_TYPE_INT and i[3] == 1}
    divs = [i for i in insts if N.opcode(i) == 135]
    types = {i[2]: i[1] for i in insts if len(i) > 2 and N.opcode(i) not in N._NO_RESULT}
    assert divs and all(d[1] in signed and types[d[3]] in signed and types[d[4]] in signed for d in divs)
    valid(fixed)


@pytest.mark.parametrize("post_pass", ["naga", "vulkan"])
def test_signed_remainders_are_spelled_with_a_signed_division(post_pass):
    # NVIDIA's driver computes OpSRem as an unsigned remainder, behind naga and without it
    from poot.jit.llvm.targets.spirv.vulkan import fix_for_vulkan

    raw = raw_spirv(S.binary_kernel("rem", dt.int32))
    assert any(N.opcode(i) == N.OP_S_REM for i in ops(raw))
    insts = ops((N.fix_for_naga if post_pass == "naga" else fix_for_vulkan)(raw))
    assert not any(N.opcode(i) == N.OP_S_REM for i in insts)
    assert any(N.opcode(i) == N.OP_S_DIV for i in insts) and any(N.opcode(i) == N.OP_I_SUB for i in insts)
    valid(N.fix_for_naga(raw))


def test_nan_and_infinite_literals_are_made_at_run_time():
    raw = raw_spirv(S.unary_kernel("log", dt.float64))
    floats = {i[1]: i[2] for i in ops(raw) if N.opcode(i) == N.OP_TYPE_FLOAT}

    def nonfinite(spv):
        return [i for i in ops(spv) if N.opcode(i) == N.OP_CONSTANT and i[1] in floats
                and N._nonfinite(i[3:], floats[i[1]])]
    assert nonfinite(raw)
    fixed = N.fix_for_naga(raw)
    assert not nonfinite(fixed)
    valid(fixed)


@pt.kernel(workgroup=(64,))
def last_lane_reads_shared(x: pt.In[pt.i32], y: pt.Out[pt.i32]):
    s = pt.shared(pt.i32, 64)
    t = pt.local_index()
    s[t] = x[pt.thread_index()]
    if t == 63:
        y[pt.group_index()] = s[t]          # LLVM folds s[t] to s[63]: a constant i64 access-chain index


def test_constant_64_bit_access_chain_indices_become_32_bit():
    # naga evaluates a constant index as u32 only: the module was refused ("invalid access Constant(..)")
    def wide_indices(spv):
        insts = ops(spv)
        ints = {i[1]: i[2] for i in insts if N.opcode(i) == N.OP_TYPE_INT}
        wide = {i[2] for i in insts if N.opcode(i) == N.OP_CONSTANT and ints.get(i[1]) == 64}
        return [i for i in insts if N.opcode(i) in N.OP_ACCESS_CHAINS and wide & set(i[4:])]
    raw = raw_spirv(last_lane_reads_shared.kir)
    assert wide_indices(raw)
    fixed = N.fix_for_naga(raw)
    assert not wide_indices(fixed)
    valid(fixed)
    assert N.fix_for_naga(fixed) == fixed


def test_duplicate_ids_are_found():
    spv = compile_kernel(S.add_kernel(), "spirv").data
    assert N.duplicate_ids(spv) == set()
    header, insts = N.parse(spv)
    label = next(i for i in insts if N.opcode(i) == 248)
    some_type = next(i for i in insts if N.opcode(i) == 19)
    label[1] = some_type[1]
    assert N.duplicate_ids(N.assemble(header, insts)) == {some_type[1]}


@pytest.mark.parametrize("junk", [b"", b"\x00" * 7, struct.pack("<5I", 0x12345678, 0, 0, 10, 0),
                                  struct.pack("<6I", 0x07230203, 0x10600, 0, 10, 0, (9 << 16) | 17)],
                         ids=["empty", "ragged", "bad-magic", "truncated"])
def test_bad_input_is_a_lowering_error(junk):
    with pytest.raises(LoweringError):
        N.fix_for_naga(junk)
