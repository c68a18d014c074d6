"""The KIR verifier: every sample kernel passes; each fault raises KIRError with its stable kind."""
import dataclasses

import pytest

from poot import dtypes as dt
from poot.errors import KIRError
from poot.jit.kir import builder as B
from poot.jit.kir.model import (Access, Assign, AtomicAdd, Barrier, Binary, Break, BufferParam, Const,
                                Continue, For, If, Index, Kernel, Len, Load, Local, Read, Return,
                                ScalarParam, SharedArray, Store, Trap, Unary, While)
from poot.jit.kir.verify import verify

from kir_samples import all_kernels, reduce_shared_kernel

U, F = dt.uint32, dt.float32
TID = Index("thread", 0)
LID = Index("local", 0)


def K(body, params=(BufferParam("x", F, Access.READ), BufferParam("y", F, Access.WRITE)), locals_=(),
      shared=(), wg=(64, 1, 1)):
    return Kernel("k", tuple(params), tuple(body), tuple(locals_), tuple(shared), wg)


def kind_of(kernel, **kw):
    with pytest.raises(KIRError) as ei:
        verify(kernel, **kw)
    assert ei.value.kernel == kernel.name
    return ei.value.kind


@pytest.mark.parametrize("name,kernel", all_kernels())
def test_sample_kernels_verify(name, kernel):
    verify(kernel)


def test_empty_body_is_refused():
    assert kind_of(K([])) == "no-body"


def test_duplicate_names_are_refused():
    assert kind_of(K([Return()], locals_=[Local("x", U)])) == "duplicate-name"


def test_read_of_undeclared_value():
    assert kind_of(K([Store("y", TID, Read("nope", F))])) == "undeclared-value"


def test_assign_to_scalar_param_is_undeclared():
    k = K([Assign("s", Const(1, U))], params=[ScalarParam("s", U)])
    assert kind_of(k) == "undeclared-value"


def test_undefined_buffer():
    assert kind_of(K([Store("z", TID, Const(1.0, F))])) == "undefined-buffer"
    assert kind_of(K([Store("y", TID, Load("q", TID, F))])) == "undefined-buffer"


def test_type_mismatch_in_binary_and_store():
    assert kind_of(K([Store("y", TID, Binary("add", Load("x", TID, F), Const(1, U), F))])) == "type-mismatch"
    assert kind_of(K([Store("y", TID, Const(1, U))])) == "type-mismatch"
    assert kind_of(K([Store("y", TID, Binary("lt", Load("x", TID, F), Load("x", TID, F), F))])) == "type-mismatch"


def test_invalid_operand_type():
    assert kind_of(K([Store("y", TID, Unary("sin", Const(1, U), U))])) == "invalid-operand-type"
    assert kind_of(K([Store("y", TID, Binary("shl", Load("x", TID, F), Load("x", TID, F), F))])) \
        == "invalid-operand-type"


def test_inexact_float_constant_is_refused():
    assert kind_of(K([Store("y", TID, Const(0.1, F))])) == "bad-constant"
    verify(K([Store("y", TID, B.const(0.1, F))]))


def test_write_to_read_only_buffer_is_refused():
    assert kind_of(K([Store("x", TID, Const(1.0, F))])) == "write-to-read-only"
    assert kind_of(K([AtomicAdd("x", TID, Const(1.0, F))])) == "write-to-read-only"


def test_barrier_under_thread_dependent_if_is_divergent():
    k = K([If(Binary("lt", TID, Const(3, U), dt.bool_), (Barrier(),)), Return()])
    assert kind_of(k) == "barrier-divergent"


def test_barrier_under_local_derived_from_thread_index_is_divergent():
    k = K([Assign("t", Binary("mul", LID, Const(2, U), U)), Assign("u", Read("t", U)),
           If(Binary("lt", Read("u", U), Const(3, U), dt.bool_), (Barrier(),))],
          locals_=[Local("t", U), Local("u", U)])
    assert kind_of(k) == "barrier-divergent"


def test_barrier_after_divergent_early_return_is_divergent():
    k = K([If(Binary("ge", TID, Len("y"), dt.bool_), (Return(),)), Barrier()])
    assert kind_of(k) == "barrier-divergent"


def test_barrier_in_loop_with_divergent_break_is_divergent():
    k = K([While(Const(True, dt.bool_), (Barrier(), If(Binary("lt", LID, Const(3, U), dt.bool_), (Break(),))))])
    assert kind_of(k) == "barrier-divergent"


def test_barrier_under_uniform_control_is_accepted():
    k = K([If(Binary("lt", Index("group", 0), Const(3, U), dt.bool_), (Barrier(),)),
           If(Binary("lt", TID, Const(3, U), dt.bool_), (Return(),))])
    verify(k)
    verify(reduce_shared_kernel())


def test_workgroup_dimensions():
    assert kind_of(K([Return()], wg=(0, 1, 1))) == "zero-workgroup-dimension"
    assert kind_of(K([Return()], wg=(64, 32, 1))) == "workgroup-too-large"
    verify(K([Return()], wg=(64, 32, 1)), max_workgroup_size=4096)


def test_shared_arrays_past_2_gib_are_refused():
    """Past any device's shared memory (a 4 GiB array aborted naga): refused for KIR from any frontend."""
    half = SharedArray("a", F, 2**29)                      # 2 GiB: the bound itself is accepted
    verify(K([Return()], shared=[half]))
    assert kind_of(K([Return()], shared=[half, SharedArray("b", dt.uint8, 1)])) == "shared-too-large"
    assert kind_of(K([Return()], shared=[SharedArray("c", F, 2**30)])) == "shared-too-large"


def test_break_outside_loop():
    assert kind_of(K([Break()])) == "break-outside-loop"
    assert kind_of(K([If(Const(True, dt.bool_), (Continue(),))])) == "break-outside-loop"


def test_assign_to_loop_variable():
    k = K([For("i", Const(0, U), Const(4, U), 1, (Assign("i", Const(1, U)),))], locals_=[Local("i", U)])
    assert kind_of(k) == "assign-to-loop-variable"


def test_bad_step():
    assert kind_of(K([For("i", Const(0, U), Const(4, U), 0, (Return(),))], locals_=[Local("i", U)])) == "bad-step"
    assert kind_of(K([For("i", Const(0, U), Const(4, U), 1.5, (Return(),))], locals_=[Local("i", U)])) == "bad-step"


def test_unknown_op():
    assert kind_of(K([Store("y", TID, Unary("frobnicate", Load("x", TID, F), F))])) == "unknown-op"
    assert kind_of(K([Store("y", Index("warp", 0), Load("x", TID, F))])) == "unknown-op"


def test_bad_index_type():
    assert kind_of(K([Store("y", Const(1.0, F), Const(1.0, F))])) == "bad-index-type"


def test_atomic_unsupported_type():
    k = K([AtomicAdd("y", TID, Const(1, dt.int8))], params=[BufferParam("y", dt.int8, Access.READ_WRITE)])
    assert kind_of(k) == "atomic-unsupported-type"


def test_shared_array_is_writable_and_sized():
    verify(K([Store("s", LID, Const(1.0, F)), Barrier()], shared=[SharedArray("s", F, 64)]))
    assert kind_of(K([Return()], shared=[SharedArray("s", F, 0)])) == "bad-shared-size"


def test_bad_trap_code():
    assert kind_of(K([Trap(0)])) == "bad-trap-code"
