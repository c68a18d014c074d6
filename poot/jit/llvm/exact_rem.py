"""Exact float remainders for GPU targets: fmod as C defines it, in ordinary float operations.

Why: a GPU's remainder instruction is not fmod. Vulkan's OpFRem, and LLVM's `frem` on NVPTX and
AMDGPU, compute x - y * trunc(x / y) with a rounded quotient and product: wrong by up to half an ulp
of x (x % 0.7 near 1000 was off by 3e-5 in float32 on Vulkan), all wrong once the quotient passes the
mantissa (1e9 % 7 gave 64), NaN for y = inf, and x for a constant zero y. NumPy's remainder,
floor_divide and divmod are built on fmod, so every GPU target lowers a float `rem` with
`float_rem` below; the CPU target's `frem` is a call of the C library's exact fmod.

The mixin needs the Lowering's `op`, `intr`, `alloca`, `round_to` and function builder `f`; it goes
before Lowering in a target's bases (its `binary` hands every other operation on)."""
from __future__ import annotations

from poot import dtypes as dt
from poot.jit.llvm.convert import _sfx
from poot.jit.llvm.ir import float_const, reg_type


class ExactRemLowering:
    """Lowers float `rem` to the exact `float_rem`."""

    def binary(self, op: str, a: str, b: str, t) -> str:
        if op == "rem" and dt.is_float(t):
            return self.float_rem(a, b, t)
        return super().binary(op, a, b, t)

    def float_rem(self, a: str, b: str, t) -> str:
        """fmod as C (and NumPy's remainder, built on it) defines it: exact, NaN for a zero divisor or an
        infinite dividend, x for y = +-inf. |x| is reduced by |y| scaled by powers of two 2**(bits-2)
        apart: a loop scales |y| up while it stays below |x|, then each step of a second loop takes the
        exact remainder of a quotient below 2**(bits-2) (rem_step) and scales back down, ending at |y|
        -- a step per bits-2 of exponent difference, one for an ordinary quotient. The sign is x's."""
        ty = reg_type(t)
        sfx = _sfx(ty)
        o, f = self.op, self.f
        inf, zero, one = float_const(float("inf")), float_const(0.0), float_const(1.0)
        scale = float_const(float(1 << ((24 if ty == "float" else 53) - 2)))
        x = self.intr(f"llvm.fabs.{sfx}", ty, [(ty, a)])
        y = self.intr(f"llvm.fabs.{sfx}", ty, [(ty, b)])
        ok = o(f"and i1 {o(f'fcmp olt {ty} {x}, {inf}')}, {o(f'fcmp olt {ty} {y}, {inf}')}")
        ok = o(f"and i1 {ok}, {o(f'fcmp ogt {ty} {y}, {zero}')}")          # false for NaN
        rp, tp = self.alloca(ty, "remr"), self.alloca(ty, "remt")
        f.emit(f"store {ty} {o(f'select i1 {ok}, {ty} {x}, {ty} {zero}')}, ptr {rp}")
        y = o(f"select i1 {ok}, {ty} {y}, {ty} {one}")                      # no endless loop on 0/inf/NaN
        f.emit(f"store {ty} {y}, ptr {tp}")
        up, up_body, down, down_body, done = (f.label(n) for n in ("remup", "remupb", "remdn", "remdnb", "remend"))
        f.br(up)
        f.start(up)
        big = o(f"fmul {ty} {o(f'load {ty}, ptr {tp}')}, {scale}")          # inf past the range: stops
        f.cbr(o(f"fcmp ole {ty} {big}, {o(f'load {ty}, ptr {rp}')}"), up_body, down)
        f.start(up_body)
        f.emit(f"store {ty} {big}, ptr {tp}")
        f.br(up)
        f.start(down)
        step = o(f"load {ty}, ptr {tp}")
        f.cbr(o(f"fcmp oge {ty} {step}, {y}"), down_body, done)
        f.start(down_body)
        f.emit(f"store {ty} {self.rem_step(o(f'load {ty}, ptr {rp}'), step, ty)}, ptr {rp}")
        f.emit(f"store {ty} {o(f'fdiv {ty} {step}, {scale}')}, ptr {tp}")  # exact down to |y|
        f.br(down)
        f.start(done)
        r = o(f"load {ty}, ptr {rp}")
        abs_b = self.intr(f"llvm.fabs.{sfx}", ty, [(ty, b)])
        keep = o(f"and i1 {o(f'fcmp oeq {ty} {abs_b}, {inf}')}, {o(f'fcmp olt {ty} {x}, {inf}')}")
        r = o(f"select i1 {keep}, {ty} {x}, {ty} {r}")
        r = self.intr(f"llvm.copysign.{sfx}", ty, [(ty, r), (ty, a)])
        nan = o(f"and i1 {o(f'xor i1 {ok}, true')}, {o(f'xor i1 {keep}, true')}")
        r = o(f"select i1 {nan}, {ty} {float_const(float('nan'))}, {ty} {r}")
        return self.round_to(r, t)

    def rem_step(self, r: str, t: str, ty: str) -> str:
        """r mod t for finite 0 <= r < t * 2**(bits-2), t > 0, exact. q = trunc(r / t) and the product
        t * q is kept exactly as p + err (Dekker's split, no fused multiply-add needed), r - p is exact
        (p is within a factor 2 of r), and a q off by one (r / t rounded onto an integer) moves the
        result back into [0, t). Near the ends of the range both are scaled by a power of two first
        (exact there: r >= t, else r is the result), so that the split neither overflows nor loses bits
        to subnormals."""
        o = self.op
        sfx = _sfx(ty)
        r0, t0 = r, t
        bits, emax = (24, 127) if ty == "float" else (53, 1023)
        lo, hi = float_const(2.0 ** (2 * bits - emax)), float_const(2.0 ** (emax - bits))
        s = o(f"select i1 {o(f'fcmp ogt {ty} {t}, {hi}')}, {ty} {float_const(2.0 ** -(2 * bits))}, "
              f"{ty} {float_const(1.0)}")
        s = o(f"select i1 {o(f'fcmp olt {ty} {t}, {lo}')}, {ty} {float_const(2.0 ** (2 * bits))}, {ty} {s}")
        r, t = o(f"fmul {ty} {r}, {s}"), o(f"fmul {ty} {t}, {s}")
        splitter = float_const(float((1 << ((bits + 1) // 2)) + 1))

        def split(v):
            c = o(f"fmul {ty} {splitter}, {v}")
            hi = o(f"fsub {ty} {c}, {o(f'fsub {ty} {c}, {v}')}")
            return hi, o(f"fsub {ty} {v}, {hi}")
        q = self.intr(f"llvm.trunc.{sfx}", ty, [(ty, o(f"fdiv {ty} {r}, {t}"))])
        p = o(f"fmul {ty} {t}, {q}")
        th, tl = split(t)
        qh, ql = split(q)
        err = o(f"fsub {ty} {o(f'fmul {ty} {th}, {qh}')}, {p}")
        err = o(f"fadd {ty} {err}, {o(f'fmul {ty} {th}, {ql}')}")
        err = o(f"fadd {ty} {err}, {o(f'fmul {ty} {tl}, {qh}')}")
        err = o(f"fadd {ty} {err}, {o(f'fmul {ty} {tl}, {ql}')}")
        r = o(f"fsub {ty} {o(f'fsub {ty} {r}, {p}')}, {err}")
        zero = float_const(0.0)
        r = o(f"select i1 {o(f'fcmp olt {ty} {r}, {zero}')}, {ty} {o(f'fadd {ty} {r}, {t}')}, {ty} {r}")
        r = o(f"select i1 {o(f'fcmp oge {ty} {r}, {t}')}, {ty} {o(f'fsub {ty} {r}, {t}')}, {ty} {r}")
        r = o(f"fdiv {ty} {r}, {s}")
        return o(f"select i1 {o(f'fcmp olt {ty} {r0}, {t0}')}, {ty} {r0}, {ty} {r}")  # scaling r could lose it


__all__ = ["ExactRemLowering"]
