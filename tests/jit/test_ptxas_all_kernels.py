"""Invalid PTX fails CI, not a user: the PTX of every imported kernel (each committed asset) and of every
kernel that kernelgen generates for a catalog of graphs (each elementwise op, each reduction kind along
each axis, softmax, layer_norm, split reductions, scans, gathers and scatters, movement, matmul, narrow
floats), planned for a CUDA GPU's capabilities, assembles with ptxas for sm_80 and sm_90."""
from __future__ import annotations

import subprocess

import pytest

from poot import dtypes as dt
from poot.graph import Aval, Eqn, Graph, Var
from poot.graph.ops import OPS

from ptxas_tool import PTXAS, SKIP_REASON
from target_caps import CUDA_CAPS

pytestmark = pytest.mark.skipif(PTXAS is None, reason=SKIP_REASON)
ARCHS = ("sm_80", "sm_90")
F32, F16, BF16, F64, I32, I64, U8 = dt.float32, dt.float16, dt.bfloat16, dt.float64, dt.int32, dt.int64, dt.uint8


class _G:
    def __init__(self):
        self.inputs, self.eqns = [], []

    def input(self, shape, dtype=F32):
        v = Var(Aval(tuple(shape), dtype))
        self.inputs.append(v)
        return v

    def op(self, name, *ins, **params):
        out = Var(OPS[name].shape_rule([v.aval for v in ins], **params))
        self.eqns.append(Eqn(name, ins, params, out))
        return out

    def const(self, value, dtype=F32):
        return self.op("full", shape=(), value=value, dtype=dtype)

    def graph(self, *outs):
        g = Graph(self.inputs, self.eqns, list(outs))
        g.validate()
        return g


UNARY_FLOAT = [
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "floor", "ceil", "round", "trunc", "neg", "abs", "sign",
    "isnan", "isinf", "isfinite"]
BINARY_FLOAT = ["add", "sub", "mul", "div", "floordiv", "mod", "pow", "max", "min", "atan2", "hypot", "logaddexp",
                "copysign", "nextafter", "eq", "ne", "lt", "le", "gt", "ge"]
BINARY_INT = ["add", "mul", "floordiv", "mod", "and", "or", "xor", "shl", "shr", "max", "lt"]


def _unary(op, dtype=F32, shape=(1000,)):
    g = _G()
    return g.graph(g.op(op, g.input(shape, dtype)))


def _binary(op, dtype=F32, shape=(1000,)):
    g = _G()
    return g.graph(g.op(op, g.input(shape, dtype), g.input(shape, dtype)))


def _reduce(op, axes, shape=(512, 384), dtype=F32):
    g = _G()
    return g.graph(g.op(op, g.input(shape, dtype), axes=axes))


def _softmax(shape=(64, 8192), axis=-1, dtype=F32):
    g = _G()
    x = g.input(shape, dtype)
    ax = axis % len(shape)
    e = g.op("exp", g.op("sub", x, g.op("reduce_max", x, axes=(ax,))))
    return g.graph(g.op("div", e, g.op("reduce_sum", e, axes=(ax,))))


def _layer_norm(shape=(64, 8192)):
    g = _G()
    x = g.input(shape)
    n = shape[-1]
    mean = g.op("mul", g.op("reduce_sum", x, axes=(1,)), g.const(1.0 / n))
    d = g.op("sub", x, mean)
    var = g.op("mul", g.op("reduce_sum", g.op("mul", d, d), axes=(1,)), g.const(1.0 / n))
    return g.graph(g.op("mul", d, g.op("div", g.const(1.0), g.op("sqrt", g.op("add", var, g.const(1e-5))))))


def _chain(dtype=F32, n=1 << 20):
    g = _G()
    a, b, c = g.input((n,), dtype), g.input((n,), dtype), g.input((n,), dtype)
    t = g.op("add", g.op("mul", a, b), g.op("div", g.op("exp", a), g.op("add", g.const(1.0, dtype), g.op("mul", b, b))))
    return g.graph(g.op("sub", t, c))


def _misc():
    out = {}
    g = _G()
    x = g.input((64, 48))
    out["transpose_add"] = g.graph(g.op("add", x, g.op("transpose", g.input((48, 64)), perm=(1, 0))))
    g = _G()
    x = g.input((64, 48))
    out["pad_slice"] = g.graph(g.op("slice", g.op("pad", x, widths=((1, 2), (3, 0)), value=0.0), starts=(1, 0),
                                    steps=(2, 3), sizes=(33, 17)))
    g = _G()
    out["concatenate"] = g.graph(g.op("concatenate", g.input((10, 8)), g.input((6, 8)), axis=0))
    g = _G()
    out["take"] = g.graph(g.op("take", g.input((100, 16)), g.input((37,), I64), axis=0))
    for mode in ("set", "add"):
        g = _G()
        out[f"scatter_{mode}"] = g.graph(g.op("scatter", g.input((100, 16)), g.input((37,), I64),
                                              g.input((37, 16)), mode=mode))
    g = _G()
    out["update_slice"] = g.graph(g.op("update_slice", g.input((32, 32)), g.input((8, 4)), starts=(2, 3),
                                       steps=(1, 2), sizes=(8, 4)))
    for op in ("cumsum", "cumprod"):
        for axis in (0, 1):
            g = _G()
            out[f"{op}_axis{axis}"] = g.graph(g.op(op, g.input((100, 70)), axis=axis))
    for op in ("argmax", "argmin"):
        g = _G()
        out[op] = g.graph(g.op(op, g.input((100, 70)), axis=1))
    g = _G()
    out["iota_select"] = g.graph(g.op("select", g.op("lt", g.op("iota", shape=(100,), axis=0, dtype=I32),
                                                     g.input((100,), I32)), g.input((100,)), g.input((100,))))
    for src, dst in ((F32, BF16), (BF16, F32), (F32, F16), (I32, F32), (F64, I64), (U8, F32)):
        g = _G()
        out[f"convert_{src.name}_{dst.name}"] = g.graph(g.op("convert", g.input((1000,), src), dtype=dst))
    g = _G()
    out["matmul"] = g.graph(g.op("matmul", g.input((64, 96)), g.input((96, 32))))
    g = _G()
    out["gemv"] = g.graph(g.op("matmul", g.input((512, 256)), g.input((256, 1))))
    g = _G()
    out["gemv_long"] = g.graph(g.op("matmul", g.input((512, 4096)), g.input((4096, 1))))
    g = _G()
    out["gemv_bf16_long"] = g.graph(g.op("matmul", g.input((512, 4096), BF16), g.input((4096, 1), BF16)))
    g = _G()
    out["gemv_tall"] = g.graph(g.op("matmul", g.input((14336, 4096)), g.input((4096, 1))))
    return out


def generated_cases():
    cases = {f"unary_{op}": _unary(op) for op in UNARY_FLOAT}
    cases.update({f"unary_{op}_bf16": _unary(op, BF16) for op in ("exp", "tanh", "sqrt")})
    cases.update({f"unary_{op}_f16": _unary(op, F16) for op in ("exp", "log")})
    cases.update({f"unary_{op}_f64": _unary(op, F64) for op in ("exp", "sin", "erf")})
    cases.update({f"binary_{op}": _binary(op) for op in BINARY_FLOAT})
    cases.update({f"binary_{op}_i32": _binary(op, I32) for op in BINARY_INT})
    for op in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        for axes in ((0,), (1,), (0, 1)):
            cases[f"{op}_{''.join(map(str, axes))}"] = _reduce(op, axes)
    cases["reduce_sum_long_row"] = _reduce("reduce_sum", (0,), shape=(1 << 22,))
    cases["reduce_sum_16k_axis0"] = _reduce("reduce_sum", (0,), shape=(16384, 16384))
    cases["reduce_sum_16k_axis1"] = _reduce("reduce_sum", (1,), shape=(16384, 16384))
    cases["reduce_sum_i64"] = _reduce("reduce_sum", (1,), dtype=I64)
    cases["reduce_max_bf16"] = _reduce("reduce_max", (1,), dtype=BF16)
    cases["softmax_rows"] = _softmax()
    cases["softmax_columns"] = _softmax(axis=0)
    cases["softmax_rows_bf16"] = _softmax(dtype=BF16)
    cases["layer_norm_rows"] = _layer_norm()
    cases["chain_f32"] = _chain()
    cases["chain_bf16"] = _chain(BF16)
    cases.update(_misc())
    return cases


CASES = generated_cases()


def _assemble(kernel, arch, tmp_path):
    from poot.jit.llvm.compile import compile_kernel

    art = compile_kernel(kernel, "ptx", arch=arch)
    path = tmp_path / f"{art.entry}.ptx"
    path.write_text(art.data)
    r = subprocess.run([PTXAS, f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, f"kernel '{kernel.name}' ({arch}):\n{r.stderr}"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_kernels_assemble(case, arch, tmp_path):
    from poot.fuse.plan import plan_fusion
    from poot.jit.codegen import generate

    plan = plan_fusion(CASES[case])
    kernels = [launch.kernel for step in plan.kernel_steps for launch in generate(step, plan, CUDA_CAPS).launches]
    assert kernels or all(s.kind == "alias" for s in plan.steps), f"{case}: no kernel generated"
    for kernel in kernels:
        _assemble(kernel, arch, tmp_path)


def _asset_names():
    from poot.jit.kir import assets

    return [e.name for e in assets.load_manifest() if e.builds_for("ptx")]   # the manifest's targets


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", _asset_names())
def test_imported_kernels_assemble(name, arch, tmp_path):
    from poot.jit.kir import assets

    _assemble(assets.load_asset(name), arch, tmp_path)
