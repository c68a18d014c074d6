"""The CPU's own float sin, cos (with vector variants) and tanh. sin/cos: a float-only reduction for
the common case, the exact one (mathlib's, in double) only where an argument needs it.

The branch-free mathlib functions must compute the slow exact reduction for every lane, since a
vectorized loop evaluates both sides of a select. Here `@poot.sin.f32` is a non-inlined scalar function
carrying "vector-function-abi-variant" names of `<N x float>` twins: LLVM's loop vectorizer calls
those, and each twin takes the fast path for the whole vector, branching (once per vector) to the
exact path when any lane has |x| > FAST_BOUND (or is inf or NaN), whose results those lanes take.
The twins have default linkage, so that O3 keeps them until the vectorizer calls them; after O3
the CPU target makes them internal, inlines them and drops them (targets/cpu.py). The scalar
function (remainder loops, unvectorized code) branches per element the same way: a result depends
on its argument only, never on its neighbours or on whether its loop was vectorized.

Fast path (|x| <= FAST_BOUND): n = rint(x*2/pi); r + lo = x - n*pi/2 by Cody-Waite in float, pi/2 as
three floats with FMAs, the rounding error of the second product kept in lo (without it: 1.48 ulp);
mathlib's float polynomials with lo as a first-order correction; the quadrant from n's low bits as
a swap and a sign flip. GPU targets keep mathlib's functions (Module.math_lanes is empty there).

Double sin, cos and tan take the same shape (`require(..., ty="double")`): mathlib's Cody-Waite path
for the vector, and mathtrig's Payne-Hanek path, behind the one branch, for vectors with a lane beyond
mathtrig.TRIG_LIMIT (2**50): a select would pay its ~700 operations on every element.
"""
from __future__ import annotations

import numpy as np

from poot.jit.llvm import mathcoeffs as C
from poot.jit.llvm import mathlib, mathtrig
from poot.jit.llvm.ir import Module
from poot.jit.llvm.mathbuild import MathBuilder

OPS = frozenset({"sin", "cos"})
DOUBLE_OPS = frozenset({"sin", "cos", "tan"})    # double: only the huge arguments take the branch
FAST_BOUND = 71476.0625          # NumPy's AVX-512 sinf bound; the fast path's accuracy below it is tested


def _pio2_floats() -> tuple[float, float, float]:
    """pi/2 as three floats, split off mathcoeffs' three-double pi/2 (the differences are exact)."""
    d0, d1, _ = C.PIO2
    p1 = float(np.float32(d0))
    p2 = float(np.float32(d0 - p1))
    return p1, p2, float(np.float32((d0 - p1 - p2) + d1))


PIO2_F = _pio2_floats()        # 0x1.921fb6p0, -0x1.777a5cp-25, -0x1.ee59dap-50


def _fast(b: MathBuilder, x, op: str):
    """sin or cos of x for |x| <= FAST_BOUND (and NaN), float only."""
    n = b.rint(b.mul(x, b.k(0.6366197723675814)))
    nn = b.neg(n)
    r1 = b.fma(nn, b.k(PIO2_F[0]), x)             # exact below FAST_BOUND
    t = b.mul(nn, b.k(PIO2_F[1]))
    t_lo = b.fma(nn, b.k(PIO2_F[1]), b.neg(t))     # n*P2 = t + t_lo exactly
    r, e = b.two_sum(r1, t)
    lo = b.fma(nn, b.k(PIO2_F[2]), b.add(e, t_lo))   # x - n*pi/2 = r + lo (to ~2**-48 relative)
    q = b.o(f"fptosi {b.ty} {n} to {b.it}")        # poison for NaN: those take the exact path
    if op == "cos":
        q = b.i("add", q, 1)
    z = b.mul(r, r)
    s = b.add(r, b.fma(b.mul(r, z), b.horner(z, mathtrig._SIN_P[:4]), lo))    # sin(r + lo) ~ .. + lo
    c = b.add(b.k(1.0), b.fma(z, b.horner(z, [-0.5] + mathtrig._COS_P[:4]), b.mul(b.neg(lo), r)))
    odd = b.o(f"icmp ne {b.it} {b.i('and', q, 1)}, {b.splat(0, 'i32')}")
    res = b.sel(odd, c, s)
    flip = b.i("shl", b.i("and", q, 2), 30)                 # quadrants 2, 3: negate
    res = b.from_bits(b.i("xor", b.bits_of(res), flip))
    return b.keep_zero(x, res) if op == "sin" else res


def _exact(b: MathBuilder, x, op: str):
    return mathtrig._sin(b, x) if op == "sin" else mathtrig._cos(b, x)


def _body(b: MathBuilder, x, op: str):
    """Fast path, then (one branch) the exact one when a lane (or the scalar) is beyond FAST_BOUND.
    Double: mathlib's Cody-Waite path, and its Payne-Hanek one beyond mathtrig.TRIG_LIMIT."""
    if b.dbl:
        value = mathtrig.TRIG_VALUES[op]
        big = b.cmp("ogt", b.fabs(x), b.k(mathtrig.TRIG_LIMIT))
        res = mathtrig.branch_rare(b, value(b, x, False), big, lambda: value(b, x, True), "huge")
        return mathtrig._in_range(b, x, res)
    fast = _fast(b, x, op)
    big = b.cmp("ugt", b.fabs(x), b.k(FAST_BOUND))   # unordered: NaN takes the exact path (NaN there too)
    anybig = big
    if b.lanes:
        fn = b.m.intrinsic(f"llvm.vector.reduce.or.v{b.lanes}i1", "i1", b.i1)
        anybig = b.o(f"call i1 {fn}({b.i1} {big})")
    here = b.f.blocks[-1][0]
    b.f.cbr(anybig, "exact", "done")
    b.f.start("exact")
    slow = _exact(b, x, op)
    if b.lanes:     # each lane as the scalar function computes it: a result never depends on its neighbours
        slow = b.sel(big, slow, fast)
    there = b.f.blocks[-1][0]
    b.f.br("done")
    b.f.start("done")
    return b.o(f"phi {b.ty} [ {fast}, %{here} ], [ {slow}, %{there} ]")


def _tanh(b: MathBuilder, x):
    """float tanh as mathlib's (e**2|x| - 1) / (e**2|x| + 1) with expm1 inlined, less what the CPU
    does not need: one clamp (2|x| <= 18 needs no second), no NaN guard before fptosi (a NaN's
    poison is selected away by nan_through), no zero test (copysign keeps -0.0), and Taylor terms to
    r**8 only (the r**9 one is < 2**-30 of r on |r| <= ln2/2)."""
    ax = b.fabs(x)
    ax = b.sel(b.cmp("ogt", ax, b.k(9.0)), b.k(9.0), ax)
    y = b.add(ax, ax)
    n = b.rint(b.mul(y, b.k(1.4426950408889634)))
    nn = b.neg(n)
    r = b.fma(nn, b.k(0.6931471824645996), y)
    r = b.fma(nn, b.k(-1.9046542121259336e-09), r)
    p = b.fma(b.mul(r, r), b.horner(r, mathlib._INV_FACT[2:9]), r)
    t = b.pow2(b.o(f"fptosi {b.ty} {n} to {b.it}"))
    em1 = b.fma(t, p, b.sub(t, b.k(1.0)))
    return b.nan_through(x, b.copysign(b.div(em1, b.add(em1, b.k(2.0))), x))


CPU_FLOAT = {"tanh": _tanh}      # scalar float functions the CPU uses instead of mathlib's


def require(module: Module, op: str, lanes: tuple[int, ...], ty: str = "float") -> str:
    """Define `@poot.<op>.f32` (or .f64 for ty 'double'; noinline, with vector variants of the given
    widths) once."""
    name = f"poot.{op}.{'f64' if ty == 'double' else 'f32'}"
    variants = ",".join(f"_ZGV_LLVM_N{n}v_{name}({name}.v{n})" for n in lanes)
    b = MathBuilder(module, ty)
    b.f.term(f"ret {ty} {_body(b, '%a0', op)}")
    module.functions.append(b.f.render(f'define internal {ty} @{name}({ty} %a0) noinline willreturn speculatable '
                                       f'memory(none) "vector-function-abi-variant"="{variants}" #0'))
    for n in lanes:
        v = MathBuilder(module, ty, n)
        v.f.term(f"ret {v.ty} {_body(v, '%a0', op)}")
        # not internal: O3 would delete it before the vectorizer calls it; the CPU target makes it
        # internal afterwards (targets/cpu.py)
        module.functions.append(v.f.render(f"define {v.ty} @{name}.v{n}({v.ty} %a0) #1"))
    return "@" + name


__all__ = ["require", "OPS", "DOUBLE_OPS", "FAST_BOUND"]
