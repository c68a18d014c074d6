"""LLVM intrinsics the SPIR-V target defines itself: ones LLVM 22's SPIR-V backend cannot select under
Vulkan (copysign), or selects as GLSL instructions weaker than LLVM's meaning (minimum/maximum: FMin/FMax
ignore NaN; float64 Fma: drivers need not fuse it; float64 RoundEven: wrong on lavapipe). Each becomes an
internal, always-inlined LLVM IR function -- for the shared lowering and for mathlib alike. A float32
`pt.fma` gets its own single-rounding definition (fused_fma32): GLSL's float Fma need not fuse either."""
from __future__ import annotations

from poot.jit.llvm.ir import int_const

def _copysign(ty: str, bits: int) -> str:
    return f"""  %ia = bitcast {ty} %a to i{bits}
  %ib = bitcast {ty} %b to i{bits}
  %m = and i{bits} %ia, {int_const((1 << (bits - 1)) - 1, bits)}
  %s = and i{bits} %ib, {int_const(1 << (bits - 1), bits)}
  %r = or i{bits} %m, %s
  %res = bitcast i{bits} %r to {ty}"""


def _min_max(ty: str, bits: int, which: str) -> str:
    """IEEE minimum/maximum: NaN from either side, -0 below +0 (the GPU's FMin/FMax promise neither)."""
    cmp, join = ("olt", "or") if which == "minimum" else ("ogt", "and")
    return f"""  %lt = fcmp {cmp} {ty} %a, %b
  %m = select i1 %lt, {ty} %a, {ty} %b
  %eq = fcmp oeq {ty} %a, %b
  %ia = bitcast {ty} %a to i{bits}
  %ib = bitcast {ty} %b to i{bits}
  %o = {join} i{bits} %ia, %ib
  %z = bitcast i{bits} %o to {ty}
  %r = select i1 %eq, {ty} %z, {ty} %m
  %nan = fcmp uno {ty} %a, %b
  %s = fadd {ty} %a, %b
  %res = select i1 %nan, {ty} %s, {ty} %r"""


def _fma64() -> str:
    """fma for doubles from exact pieces: drivers need not fuse a float64 Fma (lavapipe does not), and
    mathlib's exact products depend on it. Masked splits (a = ah + al, al = alh + alr; b = bh + bl)
    make every partial product exact, and a TwoSum chain adds them into the exact a*b - round(a*b);
    so fma(a, b, -a*b) is exact, other results are within an ulp, and a driver that contracts mul+add
    cannot change anything (every product it could fuse is exact)."""
    def split(x: str, src: str) -> str:
        return (f"  %{x}i = bitcast double %{src} to i64\n  %{x}hi = and i64 %{x}i, -134217728\n"
                f"  %{x}h = bitcast i64 %{x}hi to double\n  %{x}l = fsub double %{src}, %{x}h\n")

    def two_sum(s: str, x: str, y: str) -> str:       # s + t == x + y exactly
        return (f"  %{s} = fadd double %{x}, %{y}\n  %{s}v = fsub double %{s}, %{x}\n"
                f"  %{s}u = fsub double %{s}, %{s}v\n  %{s}x = fsub double %{x}, %{s}u\n"
                f"  %{s}y = fsub double %{y}, %{s}v\n  %{s}t = fadd double %{s}x, %{s}y\n")
    return (f"  %p = fmul double %a, %b\n{split('a', 'a')}{split('b', 'b')}{split('x', 'al')}"
            "  %hh = fmul double %ah, %bh\n  %hl = fmul double %ah, %bl\n  %lh = fmul double %al, %bh\n"
            "  %l1 = fmul double %xh, %bl\n  %l2 = fmul double %xl, %bl\n  %e0 = fsub double %hh, %p\n"
            + two_sum("s1", "e0", "hl") + two_sum("s2", "s1", "lh") + two_sum("s3", "s2", "l1")
            + two_sum("s4", "s3", "l2")
            + """  %r1 = fadd double %s1t, %s2t
  %r2 = fadd double %r1, %s3t
  %r3 = fadd double %r2, %s4t
  %e = fadd double %s4, %r3
""" + two_sum("s", "p", "c") + """  %lo = fadd double %st, %e
  %r = fadd double %s, %lo
  %ap = call double @llvm.fabs.f64(double %p)
  %fin = fcmp olt double %ap, 0x7FF0000000000000
  %res = select i1 %fin, double %r, double %s""")


def _roundeven64() -> str:
    """Half-to-even rounding of a double from floor (lavapipe's float64 RoundEven rounds halves toward
    zero): x - floor(x) is exact, ties go to the even neighbour, zeros keep x's sign."""
    return """  %f = call double @llvm.floor.f64(double %a)
  %d = fsub double %a, %f
  %half = fmul double %f, 0x3FE0000000000000
  %hf = call double @llvm.floor.f64(double %half)
  %odd = fcmp une double %half, %hf
  %up1 = fcmp ogt double %d, 0x3FE0000000000000
  %tie = fcmp oeq double %d, 0x3FE0000000000000
  %up2 = and i1 %tie, %odd
  %up = or i1 %up1, %up2
  %f1 = fadd double %f, 1.0
  %r = select i1 %up, double %f1, double %f
  %ir = bitcast double %r to i64
  %ix = bitcast double %a to i64
  %sx = and i64 %ix, -9223372036854775808
  %iz = or i64 %ir, %sx
  %z = bitcast i64 %iz to double
  %zero = fcmp oeq double %r, 0.0
  %res = select i1 %zero, double %z, double %r"""


def _fma32() -> str:
    """fma for floats with one rounding: the product of two floats is exact in double and TwoSum gives
    the double sum s and its exact error t; s is then rounded to odd (moved one ulp toward t where t is
    nonzero and s's last bit is even), which makes the final rounding to float the single rounding of
    a*b + c (53 >= 24 + 2 bits), subnormal results included. A NaN or an infinity leaves t NaN and s as
    it is. Every product is exact, so a driver that contracts mul+add cannot change anything."""
    return """  %ad = fpext float %a to double
  %bd = fpext float %b to double
  %cd = fpext float %c to double
  %p = fmul double %ad, %bd
  %s = fadd double %p, %cd
  %sv = fsub double %s, %p
  %su = fsub double %s, %sv
  %sx = fsub double %p, %su
  %sy = fsub double %cd, %sv
  %t = fadd double %sx, %sy
  %si = bitcast double %s to i64
  %ti = bitcast double %t to i64
  %low = and i64 %si, 1
  %even = icmp eq i64 %low, 0
  %inexact = fcmp one double %t, 0.0
  %fix = and i1 %inexact, %even
  %sx2 = xor i64 %si, %ti
  %same = icmp sge i64 %sx2, 0
  %step = select i1 %same, i64 1, i64 -1
  %adj = select i1 %fix, i64 %step, i64 0
  %oi = add i64 %si, %adj
  %o = bitcast i64 %oi to double
  %res = fptrunc double %o to float"""


def fused_fma32(module) -> str:
    """The float fma with one rounding that `pt.fma` promises, defined in `module` once (its name). A
    Vulkan driver need not fuse GLSL's Fma (lavapipe rounds the product). It computes in double, so only
    `pt.fma` on floats gets it: mathlib's float-native functions (NATIVE_F32) keep the GLSL Fma, as they
    are written not to need the fusion and a device without float64 runs them."""
    fn = "poot.spv.fma.exact.f32"
    module.declare(fn, f"define internal float @{fn}(float %a, float %b, float %c) #1 {{\n{_fma32()}\n"
                       "  ret float %res\n}")
    return "@" + fn


def redirect_intrinsics(module) -> None:
    """Intrinsics LLVM's SPIR-V backend cannot select under Vulkan (copysign), or selects as GLSL
    instructions weaker than LLVM's meaning (minimum/maximum: FMin/FMax ignore NaN; float64 Fma: not
    always fused; float64 RoundEven: wrong on lavapipe), become internal definitions -- for the
    lowering and for mathlib alike."""
    plain = module.intrinsic

    def intrinsic(name: str, ret: str, args: str) -> str:
        kind = name.split(".")[1] if name.startswith("llvm.") else ""
        bits = {"double": 64, "float": 32}.get(ret)
        if bits is None or kind not in ("copysign", "minimum", "maximum", "fma", "roundeven") or \
                (kind in ("fma", "roundeven") and bits != 64):
            return plain(name, ret, args)
        fn = f"poot.spv.{kind}.f{bits}"
        body = {"fma": _fma64, "roundeven": _roundeven64}[kind]() if kind in ("fma", "roundeven") else \
            _copysign(ret, bits) if kind == "copysign" else _min_max(ret, bits, kind)
        params = ", ".join(f"{ret} %{x}" for x in ("abc" if kind == "fma" else "a" if kind == "roundeven" else "ab"))
        if kind == "fma":
            plain("llvm.fabs.f64", "double", "double")
        if kind == "roundeven":
            plain("llvm.floor.f64", "double", "double")
        module.declare(fn, f"define internal {ret} @{fn}({params}) #1 {{\n{body}\n  ret {ret} %res\n}}")
        return "@" + fn
    module.intrinsic = intrinsic


__all__ = ["fused_fma32", "redirect_intrinsics"]
