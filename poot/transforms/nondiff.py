"""The primitives without derivative rules, each with the reason, and which primitives have several
results. Every op of the graph op table is either in the rule tables (poot.transforms.vjp_rules /
jvp_rules) or here (tests/transforms/test_rule_coverage.py checks it).

NON_DIFFERENTIABLE: ops whose derivative is zero wherever it exists; the passes give them no
tangent and no cotangent. VJP_UNSUPPORTED / JVP_UNSUPPORTED: ops whose derivative exists but is not
computed in that mode; reaching one with a differentiated operand raises a NotBuiltError naming it.
"""
from __future__ import annotations

_BOOL_OR_INT = "its result is boolean or integer: nothing to differentiate"
_PIECEWISE = "piecewise constant: its derivative is zero wherever it is defined"

NON_DIFFERENTIABLE: dict[str, str] = {
    **{op: _BOOL_OR_INT for op in (
        "isnan", "isinf", "isfinite", "bitwise_not", "logical_not", "eq", "ne", "lt", "le", "gt", "ge",
        "and", "or", "xor", "shl", "shr", "argmax", "argmin", "argsort", "searchsorted", "nonzero",
        "sample")},
    **{op: _PIECEWISE for op in ("floor", "ceil", "round", "trunc", "sign", "floordiv")},
    "nextafter": "the next representable number: a step function of its operands",
    "bitcast": "reinterprets the bits: no derivative relates the values",
    "full": "a constant: it has no operands",
    "iota": "a constant: it has no operands",
    "unique": "the set of distinct values: its size and order change with the values",
    "histogram": "bin counts are piecewise constant in the data; the edges are a fixed grid",
    "axis_index": "an example's integer position along a vmap axis",
}

_QUANT = ("the product with quantized weights has no derivative rule yet: multiply by "
          "w.dequantize() to differentiate with respect to x")

_KERNEL = ("a @pt.kernel has no derivative of its own: pair it with its backward kernel by calling "
           "it inside a pt.custom_vjp function whose defvjp(fwd, bwd) rules call the kernels with "
           "pt.kernel_call (docs/transforms.md, 'Kernels with their backward')")

_FFT = ("the derivative of a Fourier transform (another transform) has no rule yet; differentiate "
        "an explicit DFT matrix product instead")

_COMPLEX_HOST = ("derivatives of complex linear algebra (Wirtinger calculus) are not built; "
                 "differentiate real formulations")

VJP_UNSUPPORTED: dict[str, str] = {
    "kernel_call": _KERNEL,
    "qmatmul": _QUANT,
    "fft": _FFT,
    "host_complex": _COMPLEX_HOST,
    "eig": _COMPLEX_HOST,
    "eigvals": _COMPLEX_HOST,
    "while": ("reverse mode through while_loop needs its trip count, unknown when tracing; use "
              "fori_loop with Python int bounds, or forward mode (pt.jvp)"),
}

JVP_UNSUPPORTED: dict[str, str] = {
    "kernel_call": _KERNEL,
    "qmatmul": _QUANT,
    "fft": _FFT,
    "host_complex": _COMPLEX_HOST,
    "eig": _COMPLEX_HOST,
    "eigvals": _COMPLEX_HOST,
}

# ops whose equations are the results of one construct, told apart by the `index` parameter
MULTI_RESULT = frozenset({"cond", "while", "fori", "eigh", "eig", "svd", "qr", "slogdet", "unique",
                          "kernel_call"})

# the same declarations in the op registry (poot/graph/registry.py): an op without a vjp or jvp rule
# carries the reason there
from poot.graph import kernel_call as _kernel_call  # noqa: E402,F401  (declares "kernel_call")
from poot.graph import registry as _registry  # noqa: E402

for _name, _why in NON_DIFFERENTIABLE.items():
    _registry.get(_name).without(vjp=_why, jvp=_why)
for _name, _why in VJP_UNSUPPORTED.items():
    _registry.get(_name).without(vjp=_why)
for _name, _why in JVP_UNSUPPORTED.items():
    _registry.get(_name).without(jvp=_why)
