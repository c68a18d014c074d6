"""GEMV over quantized weights: y[b, n] = sum_k w[n, k] * x[b, k] for a few rows b of x, with w [N, K]
stored in one of three integer formats (poot/graph/quant.py defines them and their oracle):

- int8:  q int8 [N, K] and one f32 scale a row:        w[n, k] = s[n] * q[n, k];
- q8_0:  q int8 [N, K] and one scale a block of 32:    w[n, k] = d[n, k // 32] * q[n, k];
- q4_0:  4-bit q [N, K] and one scale a block of 32:   w[n, k] = d[n, k // 32] * (q[n, k] - 8),
  llama.cpp's nibble order: byte j of a block's 16 holds element j (low nibble) and j + 16 (high).

The integers travel as uint32 words (4 int8 or 8 nibbles a word, the lowest-addressed byte in the low
bits), so a GPU reads whole words and unpacks them in registers; scales are f32. qgemv_<format>_gpu: one
workgroup owns one output row n for every b; its LANES lanes take the row's blocks of 32 in turn (a
block's words are contiguous), each block's dot product is taken in f32 and scaled once, and the lanes'
partial sums meet in a shared-memory tree. qgemv_<format>_cpu: one thread a row (the CPU device spreads
rows over its threads) reads the same memory as bytes (int8, or uint8 for q4_0) and keeps 32 partial
sums, one per place in a block, summed pairwise at the row's end.

Launch: groups (N, 1, 1); qs (N * K / 4 words, or N * K / 8 for q4_0), scales (N, or N * K / 32), x (B * K),
y (B * N); scalars N, K (a multiple of 32), B and span = 32. span is BLOCK passed at launch: with a
constant trip count LLVM unrolls the CPU dots' loops before it vectorizes them, and the unrolled uint32
indices (which may wrap) no longer look consecutive; a runtime count keeps them vector loops."""
import numpy as np

import poot as pt
from poot.kernel.examples import Example

LANES = 64          # lanes of a GPU workgroup (one output row)
BLOCK = 32          # weights a scale covers in the block formats (and a lane's unit of work in all)


@pt.device_fn
def signed_byte(w, c):
    """Byte c (0..3) of word w as a signed 8-bit value, in f32."""
    return pt.f32(pt.bitcast(w << (24 - 8 * c), pt.i32) >> 24)


@pt.device_fn
def dot_int8(qs, x, row, blk, xb, K):
    """The dot product of block blk of row `row` (32 int8 weights, 8 words) with x[xb + blk * 32 + j]."""
    at = row * (K // 4) + blk * 8
    xj = xb + blk * BLOCK
    s = pt.f32(0.0)
    for t in range(8):
        w = qs[at + t]
        j = xj + 4 * pt.u32(t)
        s += signed_byte(w, pt.u32(0)) * x[j] + signed_byte(w, pt.u32(1)) * x[j + 1] \
            + signed_byte(w, pt.u32(2)) * x[j + 2] + signed_byte(w, pt.u32(3)) * x[j + 3]
    return s


@pt.device_fn
def dot_q4(qs, x, row, blk, xb, K):
    """The same for a q4_0 block: 16 bytes (4 words), byte j holding elements j and j + 16."""
    at = row * (K // 8) + blk * 4
    xj = xb + blk * BLOCK
    s = pt.f32(0.0)
    for t in range(4):
        w = qs[at + t]
        j = xj + 4 * pt.u32(t)
        for c in range(4):
            byte = (w >> (8 * pt.u32(c))) & 255
            s += pt.f32(pt.i32(byte & 15) - 8) * x[j + pt.u32(c)] + pt.f32(pt.i32(byte >> 4) - 8) * x[j + pt.u32(c) + 16]
    return s


@pt.device_fn
def pairwise_sum(p):
    """The sum of the 32 values of scratch array p, pairwise."""
    for j in range(16):
        p[j] += p[j + 16]
    for j in range(8):
        p[j] += p[j + 8]
    for j in range(4):
        p[j] += p[j + 4]
    return (p[0] + p[2]) + (p[1] + p[3])


@pt.device_fn
def add_int8_bytes(qs, x, p, d, row, blk, xb, K, span):
    """p[j] += d * q[j] * x[j] over block blk of the row (the CPU kernels read the words as bytes): each
    of the 32 lanes of p keeps its own sum across the row's blocks, so the loop is one vector
    multiply-add a few lanes at a time (a serial float sum could not be vectorized without reordering)."""
    at = row * K + blk * BLOCK
    xj = xb + blk * BLOCK
    for j in range(span):
        p[j] += d * pt.f32(qs[at + j]) * x[xj + j]


@pt.device_fn
def add_q4_bytes(qs, x, p, d, row, blk, xb, K, span):
    """The same for a q4_0 block: byte j holds element j (low nibble) and j + 16 (high)."""
    at = row * (K // 2) + blk * 16
    xj = xb + blk * BLOCK
    for j in range(span // 2):
        byte = pt.i32(qs[at + j])
        p[j] += d * pt.f32((byte & 15) - 8) * x[xj + j]
        p[j + 16] += d * pt.f32((byte >> 4) - 8) * x[xj + j + 16]


@pt.device_fn
def row_scale(scales, row, blk, blocks):
    """int8: one scale a row."""
    return scales[row]


@pt.device_fn
def block_scale(scales, row, blk, blocks):
    """q8_0 and q4_0: one scale a block."""
    return scales[row * blocks + blk]


def _make_gpu(dot, scale, name):
    @pt.kernel(workgroup=(LANES, 1, 1), name=name, checks=False)
    def qgemv(qs: pt.In[pt.u32], scales: pt.In[pt.f32], x: pt.In[pt.f32], y: pt.Out[pt.f32], N: pt.u32,
              K: pt.u32, B: pt.u32, span: pt.u32):
        partial = pt.shared(pt.f32, LANES)
        lane = pt.local_index_x()
        row = pt.group_index_x()
        blocks = K // BLOCK
        for b in range(0, B):
            acc = pt.f32(0.0)
            xb = b * K
            for blk in range(lane, blocks, LANES):
                acc += scale(scales, row, blk, blocks) * dot(qs, x, row, blk, xb, K)
            pt.workgroup_barrier()
            partial[lane] = acc
            pt.workgroup_barrier()
            step = LANES // 2
            while step > 0:
                if lane < step:
                    partial[lane] += partial[lane + step]
                pt.workgroup_barrier()
                step //= 2
            if lane == 0:
                y[b * N + row] = partial[0]

    return qgemv


def _make_cpu(add, scale, name, word):
    @pt.kernel(workgroup=(1, 1, 1), name=name, checks=False)
    def qgemv(qs: pt.In[word], scales: pt.In[pt.f32], x: pt.In[pt.f32], y: pt.Out[pt.f32], N: pt.u32,
              K: pt.u32, B: pt.u32, span: pt.u32):
        lanes = pt.shared(pt.f32, BLOCK)         # 32 partial sums of the row, one per place in a block
        row = pt.group_index_x()
        blocks = K // BLOCK
        for b in range(0, B):
            for j in range(span):
                lanes[j] = 0.0
            xb = b * K
            for blk in range(blocks):
                add(qs, x, lanes, scale(scales, row, blk, blocks), row, blk, xb, K, span)
            y[b * N + row] = pairwise_sum(lanes)

    return qgemv


qgemv_int8_cpu = _make_cpu(add_int8_bytes, row_scale, "qgemv_int8_cpu", pt.i8)
qgemv_q8_0_cpu = _make_cpu(add_int8_bytes, block_scale, "qgemv_q8_0_cpu", pt.i8)
qgemv_q4_0_cpu = _make_cpu(add_q4_bytes, block_scale, "qgemv_q4_0_cpu", pt.u8)
qgemv_int8_gpu = _make_gpu(dot_int8, row_scale, "qgemv_int8_gpu")
qgemv_q8_0_gpu = _make_gpu(dot_int8, block_scale, "qgemv_q8_0_gpu")
qgemv_q4_0_gpu = _make_gpu(dot_q4, block_scale, "qgemv_q4_0_gpu")


def _examples(fmt, lanes):
    from poot.graph.quant import dequantize_words, quantize_words

    rng = np.random.default_rng(11)
    out = []
    for n, k, b in ((5, 64, 1), (3, 96, 3)):
        w = rng.standard_normal((n, k)).astype(np.float32)
        x = rng.standard_normal((b, k)).astype(np.float32)
        qs, scales = quantize_words(w, fmt)
        ref = x.astype(np.float64) @ dequantize_words(qs, scales, fmt, (n, k)).astype(np.float64).T
        eps = float(np.finfo(np.float32).eps)
        words = qs.reshape(-1) if lanes > 1 else qs.reshape(-1).view(np.uint8 if fmt == "q4_0" else np.int8)
        out.append(Example(args=(words, scales.reshape(-1), x.reshape(-1), np.zeros(b * n, np.float32),
                                 n, k, b, BLOCK),
                           threads=(n * lanes, 1, 1), expected={"y": ref.astype(np.float32).reshape(-1)},
                           rtol=8 * eps * np.sqrt(k), atol=8 * eps * k * float(np.abs(ref).max() + 1)))
    return out


def example_qgemv_int8_cpu(rng):
    return _examples("int8", 1)


def example_qgemv_q8_0_cpu(rng):
    return _examples("q8_0", 1)


def example_qgemv_q4_0_cpu(rng):
    return _examples("q4_0", 1)


def example_qgemv_int8_gpu(rng):
    return _examples("int8", LANES)


def example_qgemv_q8_0_gpu(rng):
    return _examples("q8_0", LANES)


def example_qgemv_q4_0_gpu(rng):
    return _examples("q4_0", LANES)
