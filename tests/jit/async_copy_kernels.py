"""Kernels for test_kernel_async_copy.py: ldmatrix (both forms), copy_async groups with zero-fill, 4-word
loads and stores, and a one-warp 16x16x16 bf16 matrix product staged global -> shared -> mma fragments."""
import poot as pt

SENTINEL = 0xDEADBEEF
STAGE_WORDS = 11        # words of `out` each lane of `staged` writes


@pt.kernel(workgroup=(32, 1, 1))
def ldm(src: pt.In[pt.u32], perm: pt.In[pt.u32], out: pt.Out[pt.u32]):
    """Lane l passes row perm[l] of the 32 rows (4 words each) in shared; out gets both fragments."""
    s = pt.shared(pt.u32, 128)
    lane = pt.lane_index()
    for j in range(4):
        s[lane * 4 + j] = src[lane * 4 + j]
    pt.workgroup_barrier()
    at = perm[lane] * 4
    w0, w1, w2, w3 = pt.ldmatrix_x4(s, at)
    t0, t1, t2, t3 = pt.ldmatrix_x4_trans(s, at)
    o = lane * 8
    out[o] = w0
    out[o + 1] = w1
    out[o + 2] = w2
    out[o + 3] = w3
    out[o + 4] = t0
    out[o + 5] = t1
    out[o + 6] = t2
    out[o + 7] = t3


@pt.kernel(workgroup=(32, 1, 1), checks=False)
def ldm_twice(out: pt.Out[pt.u32]):
    """The same ldmatrix before and after a shared store: the second must read memory again."""
    s = pt.shared(pt.u32, 128)
    lane = pt.lane_index()
    at = lane * 4
    for j in range(4):
        s[at + j] = lane
    pt.workgroup_barrier()
    w0, w1, w2, w3 = pt.ldmatrix_x4(s, at)
    s[at] = lane + 100
    pt.workgroup_barrier()
    v0, v1, v2, v3 = pt.ldmatrix_x4(s, at)
    out[lane * 2] = w0
    out[lane * 2 + 1] = v0


@pt.kernel(workgroup=(32, 1, 1))
def staged(src: pt.In[pt.u32], n: pt.u32, out: pt.Out[pt.u32]):
    """Two commit groups (the second zero-filled past word n), read before, between and after the waits."""
    s = pt.shared(pt.u32, 256)
    lane = pt.lane_index()
    a = lane * 4
    b = 128 + lane * 4
    for j in range(4):
        s[b + j] = SENTINEL
    pt.copy_async(s, a, src, a, True)
    pt.copy_async_commit()
    pt.copy_async(s, b, src, b, b < n)
    pt.copy_async_commit()
    o = lane * STAGE_WORDS
    out[o] = s[a]                   # before any wait: not yet copied (the emulator's queued semantics)
    pt.copy_async_wait(1)
    out[o + 1] = s[a]               # the first group is done
    out[o + 2] = s[b]               # the second may still be in flight
    pt.copy_async_wait(0)
    for j in range(4):
        out[o + 3 + j] = s[a + j]
        out[o + 7 + j] = s[b + j]


@pt.kernel(workgroup=(64, 1, 1))
def words(src: pt.In[pt.u32], dst: pt.Out[pt.u32]):
    """4-word loads and stores through global and shared memory: dst row i = src row i ^ 1 reversed, word 1
    plus 1 (the neighbour's row, through shared memory and a barrier)."""
    s = pt.shared(pt.u32, 256)
    i = pt.thread_index()
    el = pt.local_index()
    w0, w1, w2, w3 = pt.load_x4(src, i * 4)
    pt.store_x4(s, el * 4, w3, w2, w1, w0)
    pt.workgroup_barrier()
    x0, x1, x2, x3 = pt.load_x4(s, (el ^ 1) * 4)
    pt.store_x4(dst, i * 4, x0, x1 + 1, x2, x3)


@pt.kernel(workgroup=(64, 1, 1), checks=False)
def reload(buf: pt.InOut[pt.u32]):
    """A 4-word load, a store to the same words, the same load again: it must see the store."""
    at = pt.thread_index() * 4
    a0, a1, a2, a3 = pt.load_x4(buf, at)
    pt.store_x4(buf, at, a1, a2, a3, a0)
    b0, b1, b2, b3 = pt.load_x4(buf, at)
    pt.store_x4(buf, at, b0 + b0, b1, b2, b3)


@pt.kernel(workgroup=(32, 1, 1))
def load_at(src: pt.In[pt.u32], at: pt.u32, out: pt.Out[pt.u32]):
    w0, w1, w2, w3 = pt.load_x4(src, at)
    out[pt.thread_index()] = w0 + w1 + w2 + w3


@pt.kernel(workgroup=(32, 1, 1))
def copy_at(src: pt.In[pt.u32], at: pt.u32, ok: pt.u32, out: pt.Out[pt.u32]):
    s = pt.shared(pt.u32, 128)
    lane = pt.lane_index()
    pt.copy_async(s, lane * 4, src, at, ok != 0)
    pt.copy_async_commit()
    pt.copy_async_wait(0)
    out[lane] = s[lane * 4]


@pt.device_fn
def lo(w):
    """The bfloat16 in the low half of word w (the lower-indexed element)."""
    return pt.bitcast(pt.u16(w & 0xFFFF), pt.bf16)


@pt.device_fn
def hi(w):
    return pt.bitcast(pt.u16(w >> 16), pt.bf16)


@pt.kernel(workgroup=(32, 1, 1))
def mma_tile(a: pt.In[pt.u32], b: pt.In[pt.u32], rows: pt.u32, c: pt.Out[pt.f32]):
    """C = A @ B for 16x16 bf16 A (row-major, rows past `rows` read as zero) and B (row-major [k][n]), both
    as uint32 words: copy_async to shared, fragments by ldmatrix_x4 (A) and ldmatrix_x4_trans (B), two
    m16n8k16 products (n 0-7 and 8-15)."""
    sa = pt.shared(pt.u32, 128)
    sb = pt.shared(pt.u32, 128)
    lane = pt.lane_index()
    pt.copy_async(sa, lane * 4, a, lane * 4, lane // 2 < rows)
    pt.copy_async(sb, lane * 4, b, lane * 4, True)
    pt.copy_async_commit()
    pt.copy_async_wait(0)
    pt.workgroup_barrier()
    # A's quadrants (rows 0-7 | 8-15) x (k 0-7 | 8-15): lane l gives row l % 16 at k (l // 16) * 8
    a0, a1, a2, a3 = pt.ldmatrix_x4(sa, (lane % 16) * 8 + (lane // 16) * 4)
    # B's 8x8 blocks (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15)
    b0, b1, b2, b3 = pt.ldmatrix_x4_trans(sb, (lane % 8 + 8 * ((lane // 8) % 2)) * 8 + 4 * (lane // 16))
    d0, d1, d2, d3 = pt.mma_m16n8k16(lo(a0), hi(a0), lo(a1), hi(a1), lo(a2), hi(a2), lo(a3), hi(a3),
                                     lo(b0), hi(b0), lo(b1), hi(b1), 0.0, 0.0, 0.0, 0.0)
    e0, e1, e2, e3 = pt.mma_m16n8k16(lo(a0), hi(a0), lo(a1), hi(a1), lo(a2), hi(a2), lo(a3), hi(a3),
                                     lo(b2), hi(b2), lo(b3), hi(b3), 0.0, 0.0, 0.0, 0.0)
    g = lane // 4
    t = lane % 4
    c[g * 16 + 2 * t] = d0
    c[g * 16 + 2 * t + 1] = d1
    c[(g + 8) * 16 + 2 * t] = d2
    c[(g + 8) * 16 + 2 * t + 1] = d3
    c[g * 16 + 8 + 2 * t] = e0
    c[g * 16 + 9 + 2 * t] = e1
    c[(g + 8) * 16 + 8 + 2 * t] = e2
    c[(g + 8) * 16 + 9 + 2 * t] = e3
