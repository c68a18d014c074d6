"""AMD matrix cores on AMDGCN: the KIR `Mma` shapes "mfma_16x16x16" (CDNA, wave64) and "wmma_16x16x16"
(RDNA3, wave32), lowered to LLVM's intrinsics (fragment layouts: poot/jit/kir/model.py).

- MFMA: `llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> a, <4 x i16> b, <4 x float> c, i32 cbsz, i32 abid,
  i32 blgp)` (bf16 passed as its 16 bits) or `llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, ...)`,
  the broadcast controls 0 (every lane's own operands). gfx908 has no `.1k` bf16 form and is not offered.
- WMMA: `llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16(<16 x i16> a, <16 x i16> b, <8 x float> c)` or
  `.f16.v8f32.v16f16` with `<16 x half>`: the wave32 form, gfx11's default wave size (parse_arch lets no
  wavefrontsize feature through). gfx12's WMMA takes other fragments and is not offered.
An instruction the GPU lacks would abort LLVM in instruction selection, so an arch outside these lists
raises NotBuiltError before any IR reaches it.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import NotBuiltError
from poot.jit.kir.model import MMA_SHAPES

MFMA_ARCHS = ("gfx90a", "gfx942", "gfx950")
WMMA_ARCHS = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
# shape -> (archs, bf16 intrinsic, f16 intrinsic)
_INTRINSICS = {
    "mfma_16x16x16": (MFMA_ARCHS, "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", "llvm.amdgcn.mfma.f32.16x16x16f16"),
    "wmma_16x16x16": (WMMA_ARCHS, "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16",
                      "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16"),
}


class MatrixCoreLowering:
    """The Lowering mixin of the AMDGCN target for Mma; `cpu` (the gfx name) is set by the target."""
    mma_shapes = tuple(_INTRINSICS)
    cpu = ""

    def mma_call(self, e) -> str:
        archs, bf16_name, f16_name = _INTRINSICS[e.shape]
        shape = MMA_SHAPES[e.shape]
        if self.cpu not in archs:
            raise NotBuiltError(f"{shape.op} (an AMD matrix multiply-accumulate) is built for the AMDGCN target "
                                f"on {', '.join(archs)} only, not {self.cpu}; use a SIMT kernel on this GPU")
        f16 = e.a[0].dtype is dt.float16
        elem = "half" if f16 else "i16"

        def vector(xs) -> str:
            ty, v = f"<{len(xs)} x {elem}>", "poison"
            for i, x in enumerate(xs):
                v = self.op(f"insertelement {ty} {v}, {elem} {self.mma_bits(x, f16)}, i32 {i}")
            return v

        def floats(xs) -> str:
            ty, v = f"<{len(xs)} x float>", "poison"
            for i, x in enumerate(xs):
                v = self.op(f"insertelement {ty} {v}, float {self.expr(x)}, i32 {i}")
            return v

        c_ty = f"<{shape.c} x float>"
        args = [(f"<{shape.a} x {elem}>", vector(e.a)), (f"<{shape.b} x {elem}>", vector(e.b)), (c_ty, floats(e.c))]
        if e.shape.startswith("mfma"):
            args += [("i32", "0")] * 3           # cbsz, abid, blgp: no broadcast between lanes' blocks
        return self.intr(f16_name if f16 else bf16_name, c_ty, args)

    def mma_bits(self, x, f16: bool) -> str:
        """A 16-bit operand as the instruction takes it: a half, or a bf16's 16 bits (the high half of the
        float register that holds its exact value)."""
        if f16:
            return self.to_mem(self.expr(x), dt.float16)
        word = self.op(f"bitcast float {self.expr(x)} to i32")
        return self.op(f"trunc i32 {self.op(f'lshr i32 {word}, 16')} to i16")

    def mma_element(self, result: str, e) -> str:
        return self.op(f"extractelement <{MMA_SHAPES[e.shape].c} x float> {result}, i32 {e.elem}")


__all__ = ["MatrixCoreLowering", "MFMA_ARCHS", "WMMA_ARCHS"]
