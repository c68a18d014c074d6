"""KIR JSON: deterministic bytes, exact float bit patterns, lossless round trip; the text form."""
import json
import math
from functools import partial

import pytest
from hypothesis import given, settings, strategies as st

from poot import dtypes as dt
from poot.errors import KIRError
from poot.jit.kir import builder as B
from poot.jit.kir.model import Access, BufferParam, Const, Index, Kernel, Store
from poot.jit.kir.serialize import bits_float, float_bits, from_json, to_json
from poot.jit.kir.text import format_kernel
from poot.jit.kir.verify import verify

from kir_samples import all_kernels, chain_kernel, loops_kernel


@pytest.mark.parametrize("name,kernel", all_kernels())
def test_round_trip_is_lossless_and_byte_stable(name, kernel):
    text = to_json(kernel)
    back = from_json(text)
    assert back == kernel
    assert to_json(back) == text
    assert " " not in text.replace("\" \"", "")  # no whitespace variance between tokens
    verify(back)


def test_same_kernel_same_bytes_when_built_twice():
    assert to_json(chain_kernel()) == to_json(chain_kernel())
    assert to_json(chain_kernel()).encode() == to_json(from_json(to_json(chain_kernel()).encode())).encode()


def test_keys_are_sorted():
    d = json.loads(to_json(loops_kernel()))
    assert list(d) == sorted(d)


def _kernel_with_const(c: Const) -> Kernel:
    return Kernel("c", (BufferParam("y", c.dtype, Access.WRITE),), (Store("y", Index("thread", 0), c),))


FLOATS = [dt.float16, dt.bfloat16, dt.float32, dt.float64]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FLOATS), st.integers(min_value=0, max_value=2**64 - 1))
def test_float_constants_round_trip_bit_exact(dtype, raw):
    bits = raw & ((1 << dtype.bits) - 1)
    value = bits_float(bits, dtype)
    if math.isnan(value):
        bits = float_bits(value, dtype)   # NaN payloads are canonicalized by Python floats for narrow types
    k = _kernel_with_const(Const(value, dtype))
    text = to_json(k)
    back = from_json(text)
    got = back.body[0].value.value
    assert float_bits(got, dtype) == bits or (math.isnan(got) and math.isnan(value))
    assert to_json(back) == text


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([d for d in dt.ALL_DTYPES if dt.is_int(d)]), st.data())
def test_int_constants_round_trip(dtype, data):
    info = dt.iinfo(dtype)
    v = data.draw(st.integers(min_value=int(info.min), max_value=int(info.max)))
    k = _kernel_with_const(Const(v, dtype))
    assert from_json(to_json(k)) == k


def test_negative_zero_keeps_its_sign():
    k = _kernel_with_const(Const(-0.0, dt.float32))
    assert '"0x80000000"' in to_json(k)
    assert math.copysign(1, from_json(to_json(k)).body[0].value.value) == -1


@pytest.mark.parametrize("bad", ["", "{", "[]", '{"format":"other"}',
                                 '{"format":"poot-kir","version":99}',
                                 '{"format":"poot-kir","version":1,"name":"k"}'])
def test_malformed_json_is_refused(bad):
    with pytest.raises(KIRError) as ei:
        from_json(bad)
    assert ei.value.kind == "bad-json"


def test_float_constant_must_be_a_bit_pattern():
    text = to_json(_kernel_with_const(Const(1.0, dt.float32))).replace('"0x3f800000"', "1.0")
    with pytest.raises(KIRError, match="bit pattern"):
        from_json(text)


def test_text_form_reads_like_python():
    text = format_kernel(loops_kernel())
    assert text.startswith("kernel loops(out: out u32[])  workgroup=(16, 1, 1) checks\n")
    assert "  if t >= len(out):\n    return\n" in text
    assert "for j in range(0, t):" in text
    assert "continue" in text and "break" in text and "while w < 3:" in text
    chain = format_kernel(chain_kernel())
    assert "out[i] = ((2.0 * a[i]) + (b[i] * c[i])) - (exp(a[i]) / (1.0 + (b[i] * b[i])))" in chain


# --- random kernels ------------------------------------------------------------------------------
from poot.jit.kir.model import Binary, Cast, If, Load, Read, Select, Unary  # noqa: E402

_T = [dt.float32, dt.int32, dt.float16, dt.bfloat16, dt.float64, dt.uint8]


# named builders, not lambdas: hypothesis describes a lambda by re-executing its module's imports,
# which fails for this test module (ImportError "cannot import name 'kir' from 'jit'")
def _const(v, dtype):
    return B.const(v, dtype)


def _binary(op, a, b, dtype):
    return Binary(op, a, b, dtype)


def _neg(a, dtype):
    return Unary("neg", a, dtype)


def _min_select(a, b, dtype):
    return Select(Binary("lt", a, b, dt.bool_), a, b, dtype)


def _round_trip_cast(a, dtype):
    return Cast(Cast(a, dt.float64), dtype)


def _exprs(dtype):
    leaf = st.one_of(
        st.builds(partial(_const, dtype=dtype), st.floats(-1e3, 1e3, allow_nan=False) if dt.is_float(dtype)
                  else st.integers(0, 100)),
        st.just(Load("x_" + dtype.short, Index("thread", 0), dtype)),
        st.just(Read("v_" + dtype.short, dtype)))

    def grow(children):
        ops = ["add", "sub", "mul", "max"] + (["pow", "atan2"] if dt.is_float(dtype) else ["xor", "shl"])
        return st.one_of(
            st.builds(partial(_binary, dtype=dtype), st.sampled_from(ops), children, children),
            st.builds(partial(_neg, dtype=dtype), children),
            st.builds(partial(_min_select, dtype=dtype), children, children),
            st.builds(partial(_round_trip_cast, dtype=dtype), children))
    return st.recursive(leaf, grow, max_leaves=12)


@st.composite
def _kernels(draw):
    body = []
    for dtype in draw(st.lists(st.sampled_from(_T), min_size=1, max_size=4)):
        e = draw(_exprs(dtype))
        store = Store("y_" + dtype.short, Index("thread", 0), e)
        body.append(If(Binary("lt", Index("thread", 0), Index("num_groups", 0), dt.bool_), (store,))
                     if draw(st.booleans()) else store)
    from poot.jit.kir.model import Local
    params = tuple(p for t in _T for p in (BufferParam("x_" + t.short, t, Access.READ), BufferParam("y_" + t.short, t, Access.WRITE)))
    return Kernel("rand", params, tuple(body), tuple(Local("v_" + t.short, t) for t in _T))


@settings(max_examples=60, deadline=None)
@given(_kernels())
def test_random_kernels_round_trip_and_lower_to_valid_llvm(kernel):
    verify(kernel)
    text = to_json(kernel)
    back = from_json(text)
    assert to_json(back) == text
    assert format_kernel(back) == format_kernel(kernel)
    import llvmlite.binding as llvm

    from poot.jit.llvm.compile import get_target
    from poot.jit.llvm.lower import lower_to_llvm
    for target in ("cpu", "ptx"):
        mod = llvm.parse_assembly(lower_to_llvm(back, get_target(target), "rand"))
        mod.verify()
