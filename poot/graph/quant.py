"""The "qmatmul" primitive: x @ w.T for float x [B, K] and a weight w [N, K] stored quantized, as ONE
equation the planner hands to the quantized GEMV kernels (kernels/contraction/qgemv.py), which read
the integers and scales as stored: a dequantized copy of w never exists.

Formats (the integers as uint32 words, the lowest-addressed byte in the low bits; scales float32):
- "int8": q int8 [N, K], one scale a row s [N]: w[n, k] = s[n] * q[n, k] (symmetric, per channel).
- "q8_0": q int8 [N, K], one scale a block of 32 d [N, K / 32]: w = d * q (llama.cpp's q8_0).
- "q4_0": 4-bit q [N, K] in blocks of 32 (16 bytes: byte j holds element j in its low nibble and
  j + 16 in its high one), d [N, K / 32]: w = d * (q - 8) (llama.cpp's q4_0).
llama.cpp stores block scales as float16; here they are float32 holding the float16-rounded value, so
the weights are the same numbers and every target reads them without 16-bit loads.

Operands: words uint32 [N, K / 4] (q4_0: [N, K / 8]), scales float32 ([N] or [N, K / 32]), x float32
[B, K]. Result: float32 [B, N]. The oracle dequantizes in float64 and rounds the product once.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DomainError, DTypeError, ShapeError
from poot.graph.aval import Aval
from poot.graph.ops import _register
from poot.graph.registry import Fusion

FORMATS = ("int8", "q8_0", "q4_0")
BLOCK = 32
PER_WORD = {"int8": 4, "q8_0": 4, "q4_0": 8}     # weights a uint32 word holds


def word_shape(fmt: str, n: int, k: int) -> tuple[int, int]:
    return (n, k // PER_WORD[fmt])


def scale_shape(fmt: str, n: int, k: int) -> tuple:
    return (n,) if fmt == "int8" else (n, k // BLOCK)


def qmatmul_rule(avals, format):
    words, scales, x = avals
    if format not in FORMATS:
        raise ShapeError(f"qmatmul: unknown format {format!r} (one of {', '.join(FORMATS)})")
    if x.dtype is not dt.float32 or x.ndim != 2 or words.dtype is not dt.uint32 or words.ndim != 2 \
            or scales.dtype is not dt.float32:
        raise DTypeError(f"qmatmul: takes uint32 words [N, W], float32 scales and float32 x [B, K], got "
                         f"{words}, {scales}, {x}")
    n, k = words.shape[0], x.shape[1]
    if k % BLOCK or words.shape != word_shape(format, n, k) or scales.shape != scale_shape(format, n, k):
        raise ShapeError(f"qmatmul: {format} words {words.shape} and scales {scales.shape} do not fit x "
                         f"{x.shape} (K a multiple of {BLOCK}, words {word_shape(format, n, k)}, scales "
                         f"{scale_shape(format, n, k)})")
    return Aval((x.shape[0], n), dt.float32)


def _round_half_away(v: np.ndarray) -> np.ndarray:
    return np.trunc(v + np.copysign(0.5, v))


def quantize_words(w: np.ndarray, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """(words, scales) of float weights w [N, K] in format `fmt`, by llama.cpp's rounding rules (q8_0:
    d = max|x| / 127, q = round(x / d); q4_0: d = m / -8 with m the block's value of largest magnitude,
    q = min(15, trunc(x / d + 8.5)); int8: per row like q8_0)."""
    w = _finite_float32(w, fmt)
    n, k = w.shape
    if fmt == "int8":
        amax = np.abs(w).max(axis=1)
        s = (amax / 127).astype(np.float32)
        inv = np.divide(1.0, s, out=np.zeros_like(s), where=s != 0)
        q = _round_half_away(w * inv[:, None]).astype(np.int8)
        return q.view(np.uint8).view("<u4").reshape(n, k // 4), s
    blocks = w.reshape(n, k // BLOCK, BLOCK)
    if fmt == "q8_0":
        d = np.abs(blocks).max(axis=2) / 127
        inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
        q = _round_half_away(blocks * inv[..., None]).astype(np.int8).reshape(n, k)
        return q.view(np.uint8).view("<u4").reshape(n, k // 4), _half_scales(d, blocks, fmt)
    if fmt == "q4_0":
        at = np.abs(blocks).argmax(axis=2)
        m = np.take_along_axis(blocks, at[..., None], axis=2)[..., 0]
        d = m / -8
        inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
        q = np.minimum(15, np.trunc(blocks * inv[..., None] + 8.5)).astype(np.uint8)
        packed = (q[..., :16] | (q[..., 16:] << 4)).astype(np.uint8).reshape(n, k // 2)
        return packed.view("<u4").reshape(n, k // 8), _half_scales(d, blocks, fmt)
    raise ShapeError(f"unknown quantization format {fmt!r} (one of {', '.join(FORMATS)})")


def _finite_float32(w, fmt: str) -> np.ndarray:
    """`w` as float32, refusing NaN, infinities and values past float32's range: a block holding one
    has no scale (NaN or inf times every integer), and NumPy would only warn while making it."""
    w = np.asarray(w)
    with np.errstate(over="ignore", invalid="ignore"):
        w32 = w.astype(np.float32)
    bad = ~np.isfinite(w32)
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        what = "not finite" if not np.isfinite(w[r, c]) else "beyond float32's range"
        raise DomainError(f"quantize: weight [{r}, {c}] is {float(w[r, c])!r} ({what}; {int(bad.sum())} such "
                          f"weight(s) in all): {fmt} quantizes finite float32 weights only")
    return w32


def _half_scales(d: np.ndarray, blocks: np.ndarray, fmt: str) -> np.ndarray:
    """The block scales `d` [N, K / 32] rounded to float16 (llama.cpp's storage), as float32. A block
    whose scale float16 cannot hold (past 65504) is refused: its weights would dequantize to inf and
    its products to NaN."""
    with np.errstate(over="ignore"):
        half = d.astype(np.float16)
    bad = ~np.isfinite(half)
    if bad.any():
        r, b = (int(i) for i in np.argwhere(bad)[0])
        per = 127 if fmt == "q8_0" else 8
        amax = float(np.abs(blocks[r, b]).max())
        raise DomainError(f"quantize: row {r}, block {b} (columns {b * BLOCK}..{b * BLOCK + BLOCK - 1}) has "
                          f"|w| up to {amax:g}, past {fmt}'s limit of about {65504.0 * per:g} (its float16 "
                          f"block scale, max|w| / {per}, overflows past 65504; {int(bad.sum())} such block(s) in all): "
                          f"scale the weights down or use format='int8' (a float32 scale per row)")
    return half.astype(np.float32)


def dequantize_words(words: np.ndarray, scales: np.ndarray, fmt: str, shape) -> np.ndarray:
    """The float32 weights [N, K] that (words, scales) stand for."""
    n, k = shape
    raw = np.ascontiguousarray(words, "<u4").view(np.uint8).reshape(n, -1)
    if fmt == "q4_0":
        b = raw.reshape(n, k // BLOCK, 16)
        q = np.concatenate([b & 15, b >> 4], axis=2).astype(np.float32) - 8
        return (q * scales.reshape(n, k // BLOCK, 1)).reshape(n, k).astype(np.float32)
    q = raw.view(np.int8).astype(np.float32)
    if fmt == "int8":
        return q * scales.reshape(n, 1)
    return (q.reshape(n, k // BLOCK, BLOCK) * scales.reshape(n, k // BLOCK, 1)).reshape(n, k)


def qmatmul_oracle(xs, format):
    words, scales, x = xs
    w = dequantize_words(words, scales, format, (words.shape[0], x.shape[1]))
    return (x.astype(np.float64) @ w.astype(np.float64).T).astype(np.float32)


_register("qmatmul", "qmatmul", qmatmul_rule, qmatmul_oracle, arity=3, params=("format",), fusion=Fusion.QMATMUL)
