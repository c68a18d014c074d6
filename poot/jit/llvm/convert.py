"""Value conversions of the shared lowering (a mixin of lower.Lowering): narrow-float rounding and
storage (f16 via LLVM half, bf16 with integer bit operations: round to nearest even, NaN kept quiet),
bit views, KIR casts (float -> int saturating), and nextafter on the bits of the value's own dtype."""
from __future__ import annotations

from poot import dtypes as dt
from poot.jit.llvm.ir import float_const, int_const, reg_type


def _sfx(ty: str) -> str:
    return {"float": "f32", "double": "f64", "half": "f16"}.get(ty, ty)


class Conversions:
    """Needs `self.op(text) -> value` and `self.intr(name, ret, args) -> value` (see Lowering)."""

    # -- narrow floats --------------------------------------------------------------------------
    def round_to(self, v: str, dtype) -> str:
        """Round a float register value to `dtype` (f16 / bf16), leaving it in float."""
        if dtype is dt.float16:
            h = self.op(f"fptrunc float {v} to half")
            return self.op(f"fpext half {h} to float")
        if dtype is dt.bfloat16:
            return self.op(f"bitcast i32 {self.bf16_bits32(v)} to float")
        return v

    def bf16_bits32(self, v: str) -> str:
        """float -> its bf16 rounding (RNE, NaN quieted) as i32 bits with the low half zero."""
        i = self.op(f"bitcast float {v} to i32")
        lsb = self.op(f"and i32 {self.op(f'lshr i32 {i}, 16')}, 1")
        r = self.op(f"add i32 {i}, {self.op(f'add i32 {lsb}, 32767')}")
        r = self.op(f"and i32 {r}, -65536")
        q = self.op(f"and i32 {self.op(f'or i32 {i}, 4194304')}, -65536")
        nan = self.op(f"fcmp uno float {v}, {v}")
        return self.op(f"select i1 {nan}, i32 {q}, i32 {r}")

    def to_mem(self, v: str, dtype) -> str:
        if dtype is dt.bool_:
            return self.op(f"zext i1 {v} to i8")
        if dtype is dt.float16:
            return self.op(f"fptrunc float {v} to half")
        if dtype is dt.bfloat16:
            return self.op(f"trunc i32 {self.op(f'lshr i32 {self.bf16_bits32(v)}, 16')} to i16")
        return v

    def from_mem(self, v: str, dtype) -> str:
        if dtype is dt.bool_:
            return self.op(f"icmp ne i8 {v}, 0")
        if dtype is dt.float16:
            return self.op(f"fpext half {v} to float")
        if dtype is dt.bfloat16:
            w = self.op(f"shl i32 {self.op(f'zext i16 {v} to i32')}, 16")
            return self.op(f"bitcast i32 {w} to float")
        return v

    def to_bits(self, v: str, dtype) -> str:
        """A float register value -> an integer of the dtype's width with its bits."""
        if dtype in (dt.float16, dt.bfloat16):
            return self.op(f"bitcast half {self.to_mem(v, dtype)} to i16") if dtype is dt.float16 \
                else self.to_mem(v, dtype)
        return self.op(f"bitcast {reg_type(dtype)} {v} to i{dtype.bits}")

    def from_bits(self, v: str, dtype) -> str:
        if dtype is dt.float16:
            return self.from_mem(self.op(f"bitcast i16 {v} to half"), dtype)
        if dtype is dt.bfloat16:
            return self.from_mem(v, dtype)
        return self.op(f"bitcast i{dtype.bits} {v} to {reg_type(dtype)}")

    def cast(self, v: str, src, dst) -> str:
        if src is dst:
            return v
        st, tt = reg_type(src), reg_type(dst)
        if dst is dt.bool_:
            if dt.is_float(src):
                return self.op(f"fcmp une {st} {v}, {float_const(0.0)}")
            return self.op(f"icmp ne {st} {v}, 0")
        if src is dt.bool_:
            return self.op(f"{'uitofp' if dt.is_float(dst) else 'zext'} i1 {v} to {tt}")
        if dt.is_int(src) and dt.is_int(dst):
            if src.bits == dst.bits:
                return v
            if src.bits > dst.bits:
                return self.op(f"trunc {st} {v} to {tt}")
            return self.op(f"{'sext' if dt.is_signed(src) else 'zext'} {st} {v} to {tt}")
        if dt.is_int(src):
            conv = "sitofp" if dt.is_signed(src) else "uitofp"
            if dst is dt.float16:
                return self.op(f"fpext half {self.op(f'{conv} {st} {v} to half')} to float")
            return self.round_to(self.op(f"{conv} {st} {v} to {tt}"), dst)
        if dt.is_int(dst):
            sat = "fptosi" if dt.is_signed(dst) else "fptoui"
            return self.intr(f"llvm.{sat}.sat.{tt}.{_sfx(st)}", tt, [(st, v)])
        # float -> float
        if src is dt.float64:
            if dst is dt.float16:
                return self.op(f"fpext half {self.op(f'fptrunc double {v} to half')} to float")
            return self.round_to(self.op(f"fptrunc double {v} to float"), dst)
        if dst is dt.float64:
            return self.op(f"fpext float {v} to double")
        return self.round_to(v, dst)

    def nextafter(self, a: str, b: str, t) -> str:
        ty, w = reg_type(t), t.bits
        it = f"i{w}"
        ia = self.to_bits(a, t)
        nan = self.op(f"fcmp uno {ty} {a}, {b}")
        eq = self.op(f"fcmp oeq {ty} {a}, {b}")
        zero = self.op(f"fcmp oeq {ty} {a}, {float_const(0.0)}")
        sign_b = self.op(f"and {it} {self.to_bits(b, t)}, {int_const(1 << (w - 1), w)}")
        tiny = self.op(f"or {it} {sign_b}, 1")
        up = self.op(f"xor i1 {self.op(f'fcmp olt {ty} {a}, {b}')}, {self.op(f'fcmp olt {ty} {a}, {float_const(0.0)}')}")
        step = self.op(f"select i1 {up}, {it} 1, {it} -1")
        moved = self.op(f"add {it} {ia}, {step}")
        r = self.op(f"select i1 {zero}, {it} {tiny}, {it} {moved}")
        rv = self.from_bits(r, t)
        r2 = self.op(f"select i1 {eq}, {ty} {b}, {ty} {rv}")
        s = self.op(f"fadd {ty} {a}, {b}")
        return self.op(f"select i1 {nan}, {ty} {s}, {ty} {r2}")



__all__ = ["Conversions"]
