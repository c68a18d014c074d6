"""`pt.quant`: weight matrices stored as integers with scales (int8 per channel, llama.cpp's q8_0 and
q4_0; poot/graph/quant.py defines the formats), and their products with float vectors.

    wq = pt.quant.quantize(w, "q8_0")        # w [N, K] float -> a QuantizedMatrix on w's device
    y = wq @ x                               # x [K] -> [N]: one quantized GEMV kernel
    h = pt.quant.linear(x, wq, bias)         # x [..., K] -> [..., N], x @ w.T + bias (torch's Linear)

Why: a decoder's weights dominate what each token reads; q8_0 halves bf16's bytes and q4_0 quarters
them. The product is one "qmatmul" equation run by kernels that read the integers as stored, so no
dequantized copy of the weight is ever made for a few rows of x. Past QMATMUL_MAX_ROWS rows (a prefill)
the weight is dequantized by fused elementwise ops and multiplied by the general matmul instead,
where re-reading the integers once per row would cost more than the copy.

Quantizing runs once, on the host (llama.cpp's rounding rules), like loading a checkpoint.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, ShapeError, api_boundary
from poot.graph.quant import BLOCK, FORMATS, PER_WORD, quantize_words, scale_shape
from poot.trace.array import Array
from poot.trace.creation import asarray
from poot.trace.lazy import record
from poot.trace.promote import wrap

__all__ = ["QuantizedMatrix", "quantize", "linear", "FORMATS"]

QMATMUL_MAX_ROWS = 16   # rows of x the quantized GEMV serves; more are a dequantize and a matmul


@dataclasses.dataclass(eq=False)
class QuantizedMatrix:
    """A weight matrix [N, K] in `format`: `words` (uint32) and `scales` (float32) are poot arrays on one
    device. `wq @ x` multiplies by a vector (or [K, B] columns); `dequantize()` is the float32 matrix the
    integers stand for. A dataclass, so it is a pytree: a jitted function takes it as an argument (its
    arrays are the leaves; the format, a string, is static)."""

    words: Array
    scales: Array
    format: str

    def __post_init__(self):
        fmt, words = self.format, self.words
        if fmt not in FORMATS:
            raise ShapeError(f"QuantizedMatrix: unknown format {fmt!r} (one of {', '.join(FORMATS)})")
        n, k = self.shape
        if words.dtype is not dt.uint32 or words.ndim != 2 or self.scales.dtype is not dt.float32 \
                or self.scales.shape != scale_shape(fmt, n, k):
            raise ShapeError(f"QuantizedMatrix: {fmt} [{n}, {k}] needs uint32 words [N, W] and float32 scales "
                             f"{scale_shape(fmt, n, k)}, got {words.dtype.name}{words.shape} and "
                             f"{self.scales.dtype.name}{self.scales.shape}")

    @property
    def shape(self) -> tuple[int, int]:
        """[N, K]: 4 int8 weights a word, or 8 of q4_0."""
        return self.words.shape[0], self.words.shape[-1] * PER_WORD[self.format]

    @property
    def device(self) -> str:
        return self.words.device

    @property
    def nbytes(self) -> int:
        """Bytes of the stored integers and scales (what a product reads)."""
        return self.words.nbytes + self.scales.nbytes

    def __repr__(self) -> str:
        return f"QuantizedMatrix({self.format}, shape={self.shape}, device='{self.device}', {self.nbytes} bytes)"

    def dequantize(self) -> Array:
        """The float32 [N, K] weights, computed lazily by elementwise ops (they fuse into their reader)."""
        n, k = self.shape
        w = self.words
        shifts = asarray(np.array([0, 8, 16, 24], np.uint32), device=w.device)
        b = ((w[..., None] >> shifts) & 255).reshape((n, -1))          # the bytes, in memory order
        if self.format == "q4_0":
            b = b.reshape((n, k // BLOCK, 16))
            from poot.trace.movement import concatenate

            q = concatenate([b & 15, b >> 4], axis=2).astype(dt.float32) - 8.0
            return (q * self.scales.reshape((n, k // BLOCK, 1))).reshape((n, k))
        q = b.astype(dt.int32)
        q = (q - ((q >> 7) << 8)).astype(dt.float32)                     # bytes 128..255 are -128..-1
        if self.format == "int8":
            return q * self.scales.reshape((n, 1))
        return (q.reshape((n, k // BLOCK, BLOCK)) * self.scales.reshape((n, k // BLOCK, 1))).reshape((n, k))

    @api_boundary
    def __matmul__(self, x):
        """w @ x for x [K] (-> [N]) or [K, B] (-> [N, B])."""
        x = x if isinstance(x, Array) else asarray(x, device=self.device)
        if x.ndim == 1:
            return linear(x, self)
        if x.ndim == 2:
            return linear(x.T, self).T
        raise ShapeError(f"QuantizedMatrix @ x: x must be [K] or [K, B], got {x.shape}")

    __array_ufunc__ = None        # ndarray @ w: NumPy hands the product to __rmatmul__

    @api_boundary
    def __rmatmul__(self, x):
        """x @ w for x [..., N]: through the dequantized matrix (the kernels read w row by row, as `w @ x`
        and the linear layer x @ w.T do; this product reads it by columns)."""
        x = x if isinstance(x, Array) else asarray(x, device=self.device)
        return x @ self.dequantize()


@api_boundary
def quantize(w, format: str = "q8_0", *, device=None) -> QuantizedMatrix:
    """`w` [N, K] (float; K a multiple of 32) quantized to `format` ("int8", "q8_0", "q4_0") by llama.cpp's
    rules, on `device` (default: w's, or the current one)."""
    if format not in FORMATS:
        raise ShapeError(f"quantize: unknown format {format!r} (one of {', '.join(FORMATS)})")
    if isinstance(w, Array):
        device = device or w.device
        w = w.numpy()
    w = np.asarray(w)
    if w.dtype.kind != "f" and "bfloat16" not in str(w.dtype):
        raise DTypeError(f"quantize: the weights must be floating point, got {w.dtype}")
    if w.ndim != 2 or w.shape[1] % BLOCK:
        raise ShapeError(f"quantize: the weights must be 2-D [N, K] with K a multiple of {BLOCK}, got shape {w.shape}")
    words, scales = quantize_words(w, format)
    return QuantizedMatrix(asarray(words, device=device), asarray(scales, device=device), format)


@api_boundary
def linear(x, w, bias=None):
    """x @ w.T (+ bias) for x [..., K]: w a QuantizedMatrix [N, K] (or any [N, K] array, multiplied as
    it is). The result is float32 (float64 for float64 x)."""
    x = x if isinstance(x, Array) else asarray(x)
    if not isinstance(w, QuantizedMatrix):
        y = x @ w.T
        return y if bias is None else y + bias
    n, k = w.shape
    if not dt.is_float(x.dtype):
        raise DTypeError(f"linear: x must be floating point, got {x.dtype.name}")
    if x.ndim == 0 or x.shape[-1] != k:
        raise ShapeError(f"linear: x {x.shape} does not end in the weight's K = {k} ({w})")
    if x.device != w.device:
        raise ShapeError(f"linear: x is on '{x.device}' and the weight on '{w.device}'")
    batch = x.shape[:-1]
    rows = math.prod(batch)
    flat = x.astype(dt.float32).reshape((rows, k))
    if rows > QMATMUL_MAX_ROWS:
        y = flat @ w.dequantize().T
    else:
        y = wrap(record("qmatmul", (w.words._node, w.scales._node, flat._node), {"format": w.format}))
    y = y.reshape(batch + (n,))
    if x.dtype is dt.float64:
        y = y.astype(dt.float64)
    return y if bias is None else y + bias
