"""Kernels for test_kernel_subgroup.py: subgroup operations and a warp-level m16n8k16 multiply-accumulate
(fragments loaded from row-major A [16, 16], B [16, 8], C [16, 8] per PTX's mma fragment layout)."""
import poot as pt

@pt.kernel(workgroup=(64, 1, 1))
def sg(x: pt.In[pt.f32], y: pt.Out[pt.f32], z: pt.Out[pt.f32], w: pt.Out[pt.i32], u: pt.Out[pt.f32]):
    i = pt.thread_index()
    lane = pt.lane_index()
    v = x[i]
    y[i] = pt.shuffle(v, (lane + 3) % pt.subgroup_size())
    z[i] = pt.subgroup_sum(v)
    w[i] = pt.subgroup_max(pt.i32(lane) * 7 % 11)
    u[i] = pt.shuffle_xor(v, 5)

@pt.device_fn
def mma_tile(a, b, c, d):
    """D = A @ B + C for one 16x8 tile, by the 32 lanes of a warp."""
    lane = pt.lane_index()
    g = lane // 4
    t = lane % 4
    a0 = a[g * 16 + 2 * t]
    a1 = a[g * 16 + 2 * t + 1]
    a2 = a[(g + 8) * 16 + 2 * t]
    a3 = a[(g + 8) * 16 + 2 * t + 1]
    a4 = a[g * 16 + 2 * t + 8]
    a5 = a[g * 16 + 2 * t + 9]
    a6 = a[(g + 8) * 16 + 2 * t + 8]
    a7 = a[(g + 8) * 16 + 2 * t + 9]
    b0 = b[(2 * t) * 8 + g]
    b1 = b[(2 * t + 1) * 8 + g]
    b2 = b[(2 * t + 8) * 8 + g]
    b3 = b[(2 * t + 9) * 8 + g]
    c0 = c[g * 8 + 2 * t]
    c1 = c[g * 8 + 2 * t + 1]
    c2 = c[(g + 8) * 8 + 2 * t]
    c3 = c[(g + 8) * 8 + 2 * t + 1]
    c0, c1, c2, c3 = pt.mma_m16n8k16(a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, c0, c1, c2, c3)
    d[g * 8 + 2 * t] = c0
    d[g * 8 + 2 * t + 1] = c1
    d[(g + 8) * 8 + 2 * t] = c2
    d[(g + 8) * 8 + 2 * t + 1] = c3


@pt.kernel(workgroup=(32, 1, 1))
def mma_bf16(a: pt.In[pt.bf16], b: pt.In[pt.bf16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    mma_tile(a, b, c, d)


@pt.kernel(workgroup=(32, 1, 1))
def mma_f16(a: pt.In[pt.f16], b: pt.In[pt.f16], c: pt.In[pt.f32], d: pt.Out[pt.f32]):
    mma_tile(a, b, c, d)
