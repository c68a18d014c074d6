"""Writes kernels/attention/flash_decode.py: the warp-per-key flash-decode kernels, unrolled.

The kernel language has no register arrays, so each lane's query values, accumulators and in-flight K/V
values are named locals (one per query row, head-dim slot and key); this script spells them out for the
two variants, head dims up to 128 and up to 256 (4 query rows a workgroup). Edit it, not the
kernel file, then run `python tools/unroll/flash_decode.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes)."""
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/attention/flash_decode.py"
WARPS = 4
KEYS = 4                               # keys in flight per warp per step
VARIANTS = ((128, 4), (256, 4))        # (largest head dim, query rows per workgroup)

HEAD = '''"""Flash decode for GPUs: few queries over a long KV cache, bandwidth-bound (PTX and AMDGCN: subgroup ops).

Same operands, scalars and semantics as the other flash kernels (kernels/attention/flash_gpu.py): q
[B * Hq, Lq, D], k [B * Hk, Lk, D], v [B * Hk, Lk, Dv] row-major of one dtype T, accumulated in f32; GQA by
ratio = Hq / Hk; an additive f32 mask at b * msb + h * msh + i * msq + j * msk when has_mask; query i sees
key j when -left <= j - i <= right; softcap > 0 applies softcap * tanh(s / softcap) before the mask.

attention_decode_<T>_d<N> (D, Dv <= N; N = 128 or 256) writes, per query row and split, the partial
maximum, sum and f32 accumulator (pm, pl, pacc) that attention_combine_<T> (flash_gpu.py) merges. The
16-bit kernels take q, k and v as 32-bit word views (two elements a word; D and Dv even).

Why this shape: decode reads every K and V row once and does little arithmetic per byte, so the kernel is
organised around the loads. A warp works on one key at a time: lane l owns head dims l, l + 32, ... (f32) or
the word pairs 2w, 2w + 1 of words w = l, l + 32, ... (16-bit), so each load instruction of a warp reads 128
contiguous bytes of a row. Every lane keeps the online-softmax state (m, l) of each query row redundantly
next to its own dims of the accumulator: the key loop has no barrier and no shared memory. Each warp has
KEYS = 4 keys in flight per step (their K and V loads issued before any reduction). One workgroup (WARPS = 4
warps) serves up to ROWS = 4 query rows that share a KV head (GQA heads x queries), so K and V are read once
for all of them (more rows: more workgroups along y, whose reads of the same keys at about the same time
mostly hit L2; 4 rows rather than 8 keep a d128 kernel near 128 registers, 4 workgroups an SM); q,
pre-scaled, stays in registers. The 16 partial dot products of a step (4 rows x 4 keys) are summed over the
warp by one transposing butterfly (32 shuffles where 16 butterflies take 80). A step whose keys every row of
the workgroup sees (no softcap) skips the per-key checks of `score` (a mask is still added). The warps of a
workgroup take interleaved groups of KEYS keys of the split's range and merge their states once, at the end,
through shared memory. Query rows of one workgroup share the union of their visible key ranges; `score`
masks each row's own window.

Launch: workgroup (128, 1, 1), groups (splits, B * Hk * ceil(ratio * Lq / 4), 1); split s covers keys
[lo + s * chunk, lo + (s + 1) * chunk) of the workgroup's visible range [lo, hi).

This file is written by tools/unroll/flash_decode.py (the per-row code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

WARPS = 4                     # warps per workgroup
THREADS = 32 * WARPS
KEYS = 4                      # keys in flight per warp per step
STEP = WARPS * KEYS           # keys per workgroup step
NEG_INF = float("-inf")
UNBOUNDED = 1 << 30
LOG2E = 1.4426950408889634    # exp(x) = 2 ** (x * LOG2E): the exponentials are pt.fast_exp2


@pt.device_fn
def key_lo(q_first, left):
    """The first key query `q_first` may see (window's left edge, clamped at 0)."""
    return pt.u32(max(pt.i32(q_first) - left, 0))


@pt.device_fn
def key_hi(q_last, right, Lk):
    """One past the last key query `q_last` may see (window's right edge, clamped to Lk)."""
    return pt.u32(min(max(pt.i32(q_last) + right + 1, 0), pt.i32(Lk)))


@pt.device_fn
def score(x, qi, kj, hi, left, right, mask, has_mask, at, softcap):
    """The logit of query qi against key kj: softcapped, plus the mask, -inf where not visible."""
    rel = pt.i32(kj) - pt.i32(qi)
    r = pt.f32(NEG_INF)
    if kj < hi and rel >= -left and rel <= right:
        r = x
        if softcap > 0.0:
            r = softcap * pt.tanh(x / softcap)
        if has_mask != 0:
            r = r + mask[at]
    return r


@pt.device_fn
def offset(m):
    """What exp() subtracts for a row whose maximum is m (0 while the row has seen nothing)."""
    r = m
    if m == NEG_INF:
        r = pt.f32(0.0)
    return r


@pt.device_fn
def bf16_low(w):
    """The first (lower-addressed) bfloat16 of a 32-bit word, widened: its bits are a float32's top half."""
    return pt.bitcast(w << 16, pt.f32)


@pt.device_fn
def bf16_high(w):
    return pt.bitcast(w & 0xFFFF0000, pt.f32)


@pt.device_fn
def f16_low(w):
    """The first (lower-addressed) float16 of a 32-bit word, widened."""
    return pt.f32(pt.bitcast(pt.u16(w & 0xFFFF), pt.f16))


@pt.device_fn
def f16_high(w):
    return pt.f32(pt.bitcast(pt.u16(w >> 16), pt.f16))
'''

SIGNATURE = '''    @pt.kernel(workgroup=(THREADS, 1, 1), name=name, checks=False)
    def attention_decode(q: pt.In[T], k: pt.In[T], v: pt.In[T], mask: pt.In[pt.f32], pm: pt.Out[pt.f32],
                         pl: pt.Out[pt.f32], pacc: pt.Out[pt.f32], Lq: pt.u32, Lk: pt.u32, D: pt.u32, Dv: pt.u32,
                         Hq: pt.u32, ratio: pt.u32, left: pt.i32, right: pt.i32, has_mask: pt.u32, msb: pt.u32,
                         msh: pt.u32, msq: pt.u32, msk: pt.u32, scale: pt.f32, softcap: pt.f32, chunk: pt.u32,
                         splits: pt.u32):
'''


HALVINGS = (16, 8, 4, 2, 1)            # the butterfly's xor masks


def halvings(n: int) -> int:
    """How many butterfly steps halve a lane's n values (n a power of two up to 32)."""
    return n.bit_length() - 1


def reduce_lines(ind: str, n: int) -> str:
    """Sum y0 .. y{n-1} over the warp's 32 lanes, leaving x0 .. x{n-1} (each the full sum) in every lane.

    A butterfly per value would take 5 shuffles each. Here each step exchanges half of a lane's values
    instead: at xor mask m, a lane keeps one half (by its bit m) and sends the other to its partner, so
    the values halve while the lanes that share a partial sum double. After log2(n) such steps lane L
    holds value o(L) summed over 2**log2(n) lanes, the remaining masks finish it as a plain butterfly,
    and n shuffles from the lanes that hold them hand every sum to every lane: 2n - 1 + (5 - log2 n)
    shuffles for n values, against 5n."""
    out, cur = [], [f"y{i}" for i in range(n)]
    steps = halvings(n)
    for m in HALVINGS[:steps]:
        half = len(cur) // 2
        nxt = []
        for i in range(half):
            a, b = cur[i], cur[half + i]
            name = f"z{m}_{i}"
            out.append(f"{ind}{name} = pt.where(up{m}, {b}, {a}) + pt.shuffle_xor(pt.where(up{m}, {a}, {b}), {m})\n")
            nxt.append(name)
        cur = nxt
    (v,) = cur
    for m in HALVINGS[steps:]:
        out.append(f"{ind}{v} = {v} + pt.shuffle_xor({v}, {m})\n")
    for o in range(n):
        lane = sum(HALVINGS[b] for b in range(steps) if (o >> (steps - 1 - b)) & 1)
        out.append(f"{ind}x{o} = pt.shuffle({v}, {lane})\n")
    return "".join(out)


def make(dmax: int, rows: int, words: bool) -> str:
    """The kernel factory of one variant: f32 elements (lane l owns dims l + 32 s) or, for 16-bit dtypes,
    32-bit words of two elements (lane l owns word w = l + 32 s: dims 2w and 2w + 1), so a warp's load
    reads 128 contiguous bytes either way and a 16-bit row takes half the load instructions."""
    slots = dmax // 32                      # values a lane holds per row
    loads = slots // 2 if words else slots  # loads a lane issues per row
    keys = range(KEYS)
    if words:
        out = [f"\n\ndef _make_decode_words_d{dmax}(T, name, low, high):\n",
               f'    """Head dims up to {dmax} (even), 16-bit q, k, v as 32-bit words: {slots} dims a lane, {rows} '
               f'query rows\n    a workgroup; `low` and `high` widen a word\'s two elements."""\n',
               SIGNATURE.replace("q: pt.In[T], k: pt.In[T], v: pt.In[T]", "q: pt.In[pt.u32], k: pt.In[pt.u32], "
                                 "v: pt.In[pt.u32]")]
    else:
        out = [f"\n\ndef _make_decode_d{dmax}(T, name):\n",
               f'    """Head dims up to {dmax}, f32 elements: {slots} dims a lane, {rows} query rows a workgroup."""\n',
               SIGNATURE]
    n, nv = ("Dw", "Dvw") if words else ("D", "Dv")
    w = out.append
    i8 = " " * 8
    w(f"{i8}s_m = pt.shared(pt.f32, WARPS * {rows})          # each warp's (m, l, accumulator) per row\n")
    w(f"{i8}s_l = pt.shared(pt.f32, WARPS * {rows})\n")
    w(f"{i8}s_acc = pt.shared(pt.f32, WARPS * {rows * dmax})\n")
    if words:
        w(f"{i8}Dw = D // 2                                   # words a row of q or k, of v\n{i8}Dvw = Dv // 2\n")
    w(f"""{i8}t = pt.local_index_x()
{i8}lane = pt.lane_index()
{i8}warp = t // 32
{i8}split = pt.group_index_x()
{i8}grows = ratio * Lq                              # query rows on one KV head: (head, query) pairs
{i8}blocks = (grows + {rows - 1}) // {rows}
{i8}kvrow = pt.group_index_y() // blocks
{i8}t0 = pt.group_index_y() % blocks * {rows}            # this workgroup's first row among them
{i8}nr = min(grows - t0, pt.u32({rows}))
{i8}row0 = kvrow * grows + t0                        # its first output row (b * Hq + h) * Lq + i
{i8}b = kvrow // (Hq // ratio)
{i8}h0 = kvrow % (Hq // ratio) * ratio
{i8}kbase = kvrow * Lk * {n}
{i8}vbase = kvrow * Lk * {nv}
{i8}qa = t0 % Lq
{i8}qb = (t0 + nr - 1) % Lq
{i8}if (t0 + nr - 1) // Lq != t0 // Lq:               # the rows span every query
{i8}    qa = pt.u32(0)
{i8}    qb = Lq - 1
{i8}c0 = key_lo(qa, left) + split * chunk
{i8}c1 = min(c0 + chunk, key_hi(qb, right, Lk))
""")
    for s in range(loads):
        w(f"{i8}d{s} = lane + {32 * s}\n" if s else f"{i8}d0 = lane\n")
    for s in range(loads):
        w(f"{i8}e{s} = min(d{s}, {n} - 1)                             # past the head: load the last one\n"
          if s == 0 else f"{i8}e{s} = min(d{s}, {n} - 1)\n")
        w(f"{i8}f{s} = min(d{s}, {nv} - 1)\n")
        w(f"{i8}ok{s} = d{s} < {n}\n")
    for r in range(rows):
        u = "t0" if r == 0 else f"t0 + min(pt.u32({r}), nr - 1)"
        w(f"{i8}u{r} = {u}{'             # rows past nr load the last row and store nothing' if r == 1 else ''}\n")
        w(f"{i8}mr{r} = b * msb + (h0 + u{r} // Lq) * msh + u{r} % Lq * msq     # its mask row\n" if r == 0 else
          f"{i8}mr{r} = b * msb + (h0 + u{r} // Lq) * msh + u{r} % Lq * msq\n")
        w(f"{i8}at = (kvrow * grows + u{r}) * {n}\n")
        for s in range(loads):
            if words:
                w(f"{i8}x = q[at + e{s}]\n")
                w(f"{i8}q{r}_{2 * s} = pt.where(ok{s}, low(x) * scale, pt.f32(0.0))\n")
                w(f"{i8}q{r}_{2 * s + 1} = pt.where(ok{s}, high(x) * scale, pt.f32(0.0))\n")
            else:
                w(f"{i8}q{r}_{s} = pt.where(ok{s}, pt.f32(q[at + e{s}]) * scale, pt.f32(0.0))\n")
        w(f"{i8}m{r} = pt.f32(NEG_INF)\n{i8}l{r} = pt.f32(0.0)\n")
        w(i8 + " = ".join(f"a{r}_{s}" for s in range(slots)) + " = pt.f32(0.0)\n")
    i12 = " " * 12
    for m in HALVINGS[:halvings(rows * KEYS)]:
        w(f"{i8}up{m} = (lane & {m}) != 0\n")
    w(f"{i8}plain = softcap <= 0.0\n")
    w(f"{i8}for k0 in range(c0, c1, STEP):\n")
    w(f"{i12}j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1\n")
    for j in keys[1:]:
        w(f"{i12}j{j} = j0 + {j}\n")
    for j in keys:
        w(f"{i12}kr = kbase + min(j{j}, c1 - 1) * {n}\n")
        for s in range(loads):
            if words:
                w(f"{i12}x = k[kr + e{s}]\n")
                w(f"{i12}k{j}_{2 * s} = pt.where(ok{s}, low(x), pt.f32(0.0))\n")
                w(f"{i12}k{j}_{2 * s + 1} = pt.where(ok{s}, high(x), pt.f32(0.0))\n")
            else:
                w(f"{i12}k{j}_{s} = pt.where(ok{s}, pt.f32(k[kr + e{s}]), pt.f32(0.0))\n")
    for j in keys:
        w(f"{i12}vr = vbase + min(j{j}, c1 - 1) * {nv}\n")
        for s in range(loads):
            if words:
                w(f"{i12}x = v[vr + f{s}]\n")
                w(f"{i12}v{j}_{2 * s} = low(x)\n{i12}v{j}_{2 * s + 1} = high(x)\n")
            else:
                w(f"{i12}v{j}_{s} = pt.f32(v[vr + f{s}])\n")
    w(f"{i12}# every key of the step visible to every row, no softcap: the scores need no per-key checks\n")
    w(f"{i12}whole = plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and "
      f"pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right\n")
    w(f"{i12}# the rows x keys dot products, summed over the warp by a transposing butterfly\n")
    vals = []
    for r in range(rows):
        for j in keys:
            dot = " + ".join(f"q{r}_{s} * k{j}_{s}" for s in range(slots))
            w(f"{i12}y{len(vals)} = {dot}\n")
            vals.append(len(vals))
    w(reduce_lines(i12, rows * KEYS))
    for r in range(rows):
        ind = i12
        if r:
            w(f"{i12}if nr > {r}:\n")
            ind = i12 + "    "
        w(f"{ind}if whole:\n")
        w(f"{ind}    {', '.join(f's{j}' for j in keys)} = {', '.join(f'x{r * KEYS + j}' for j in keys)}\n")
        w(f"{ind}    if has_mask != 0:\n")
        for j in keys:
            w(f"{ind}        s{j} = s{j} + mask[mr{r} + j{j} * msk]\n")
        w(f"{ind}else:\n")
        w(f"{ind}    qi = (t0 + min(pt.u32({r}), nr - 1)) % Lq       # recomputed here: one live register less\n"
          if r else f"{ind}    qi = t0 % Lq\n")
        for j in keys:
            w(f"{ind}    s{j} = score(x{r * KEYS + j}, qi, j{j}, c1, left, right, mask, has_mask, mr{r} + j{j} * msk, "
              f"softcap)\n")
        w(f"{ind}mx = max(m{r}, {', '.join(f's{j}' for j in keys)})\n")
        w(f"{ind}base = offset(mx) * LOG2E\n")
        w(f"{ind}alpha = pt.fast_exp2(m{r} * LOG2E - base)\n")
        for j in keys:
            w(f"{ind}p{j} = pt.fast_exp2(s{j} * LOG2E - base)\n")
        w(f"{ind}m{r} = mx\n")
        w(f"{ind}l{r} = l{r} * alpha + ({' + '.join(f'p{j}' for j in keys)})\n")
        for s in range(slots):
            w(f"{ind}a{r}_{s} = a{r}_{s} * alpha + {' + '.join(f'p{j} * v{j}_{s}' for j in keys)}\n")
    w(f"{i8}if lane == 0:\n")
    for r in range(rows):
        w(f"{i8}    s_m[warp * {rows} + {r}] = m{r}\n{i8}    s_l[warp * {rows} + {r}] = l{r}\n")
    for r in range(rows):
        for s in range(loads):
            if words:
                w(f"{i8}s_acc[(warp * {rows} + {r}) * {dmax} + 2 * d{s}] = a{r}_{2 * s}\n")
                w(f"{i8}s_acc[(warp * {rows} + {r}) * {dmax} + 2 * d{s} + 1] = a{r}_{2 * s + 1}\n")
            else:
                w(f"{i8}s_acc[(warp * {rows} + {r}) * {dmax} + d{s}] = a{r}_{s}\n")
    w(f"{i8}pt.workgroup_barrier()\n")
    ws = range(WARPS)
    w(f"""{i8}for e in range(t, nr * Dv, THREADS):            # merge the warps' states: one (row, dim) a thread
{i12}r = e // Dv
{i12}d = e % Dv
{i12}big = max({', '.join(f's_m[{x * rows} + r]' for x in ws)})
{i12}base = offset(big) * LOG2E
""")
    for x in ws:
        w(f"{i12}w{x} = pt.fast_exp2(s_m[{x * rows} + r] * LOG2E - base)\n")
    w(f"{i12}part = (row0 + r) * splits + split\n")
    terms = " + ".join(f"s_acc[({x * rows} + r) * {dmax} + d] * w{x}" for x in ws)
    w(f"{i12}pacc[part * Dv + d] = {terms}\n")
    w(f"{i12}if d == 0:\n{i12}    pm[part] = big\n")
    w(f"{i12}    pl[part] = {' + '.join(f's_l[{x * rows} + r] * w{x}' for x in ws)}\n")
    w("\n    return attention_decode\n")
    return "".join(out)


TAIL = '''ROWS = {128: 4, 256: 4}               # query rows a workgroup, by variant


def decode_groups(splits: int, kv_rows: int, grows: int, dmax: int) -> tuple[int, int, int]:
    """The decode launch's grid in threads: (splits, KV rows x row blocks) workgroups of THREADS."""
    return (splits * THREADS, kv_rows * -(-grows // ROWS[dmax]), 1)


def scores(q, k, mask, left, right, scale, softcap):
    """[rows, Lq, Lk] float64 logits as the kernel forms them (GQA by head ratio), -inf where not visible."""
    ratio = q.shape[0] // k.shape[0]
    k64 = np.repeat(k.astype(np.float64), ratio, axis=0)
    s = q.astype(np.float64) @ np.swapaxes(k64, -1, -2) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask
    rel = np.arange(k.shape[1])[None, :] - np.arange(q.shape[1])[:, None]
    return np.where((rel >= -left) & (rel <= right), s, -np.inf)


def partials(s, v, left, right, chunk, splits, rows_per_group):
    """Each (row, split)'s (max, sum, accumulator) in float64: the rows of one workgroup share the union of
    their visible key ranges, cut into `chunk`-key splits, as the kernel does."""
    rows, lq, lk = s.shape
    kv, dv = v.shape[0], v.shape[2]
    grows = rows // kv * lq
    s = s.reshape(kv, grows, lk)
    pm = np.full((kv, grows, splits), -np.inf)
    pl = np.zeros((kv, grows, splits))
    pacc = np.zeros((kv, grows, splits, dv))
    for g in range(kv):
        for t0 in range(0, grows, rows_per_group):
            nr = min(rows_per_group, grows - t0)
            qa, qb = (t0 % lq, (t0 + nr - 1) % lq) if (t0 + nr - 1) // lq == t0 // lq else (0, lq - 1)
            lo, hi = max(qa - left, 0), min(max(qb + right + 1, 0), lk)
            for sp in range(splits):
                c0, c1 = lo + sp * chunk, min(lo + (sp + 1) * chunk, hi)
                seg = s[g, t0:t0 + nr, c0:max(c0, c1)]
                if seg.shape[1] == 0:
                    continue
                m = seg.max(-1)
                e = np.exp(seg - np.where(np.isfinite(m), m, 0)[:, None])
                pm[g, t0:t0 + nr, sp] = m
                pl[g, t0:t0 + nr, sp] = e.sum(-1)
                pacc[g, t0:t0 + nr, sp] = e @ v[g, c0:c1].astype(np.float64)
    return pm.reshape(-1), pl.reshape(-1), pacc.reshape(-1)


CASES = (  # Hq, Hk, Lq, Lk, D, Dv, left, right, mask, softcap, chunk, splits
    (4, 1, 1, 37, 64, 64, UNBOUNDED, UNBOUNDED, False, 0.0, 32, 2),     # GQA 4, odd Lk, a partial step
    (7, 1, 2, 45, 80, 48, 20, 0, True, 3.0, 16, 3),                      # GQA 7 x 2 queries: two row blocks
    (2, 2, 3, 50, 128, 128, 5, 3, False, 0.0, 32, 2),                    # windows: splits past hi stay empty
)
WIDE = (
    (2, 1, 2, 29, 256, 200, UNBOUNDED, UNBOUNDED, True, 0.0, 16, 2),
    (3, 3, 1, 21, 160, 256, 4, UNBOUNDED, False, 5.0, 32, 1),
)


def _decode_examples(np_dtype, dmax):
    rng = np.random.default_rng(6)
    out = []
    for hq, hk, lq, lk, d, dv, left, right, with_mask, cap, chunk, splits in (CASES if dmax == 128 else WIDE):
        q = rng.standard_normal((hq, lq, d)).astype(np_dtype)
        k = rng.standard_normal((hk, lk, d)).astype(np_dtype)
        v = rng.standard_normal((hk, lk, dv)).astype(np_dtype)
        mask = (rng.standard_normal((hq, lq, lk)) * 0.5).astype(np.float32) if with_mask else np.zeros(1, np.float32)
        scale = float(1 / np.sqrt(d))
        s = scores(q, k, mask if with_mask else None, left, right, scale, cap)
        pm, pl, pacc = partials(s, v, left, right, chunk, splits, ROWS[dmax])
        rows = hq * lq
        strides = (0, lq * lk, lk, 1) if with_mask else (0, 0, 0, 0)
        qkv = tuple(x.reshape(-1) if np_dtype == np.float32 else x.reshape(-1).view(np.uint32) for x in (q, k, v))
        args = qkv + (mask.reshape(-1), np.zeros(rows * splits, np.float32),
                np.zeros(rows * splits, np.float32), np.zeros(rows * splits * dv, np.float32), lq, lk, d, dv, hq,
                hq // hk, left, right, int(with_mask)) + strides + (scale, cap, chunk, splits)
        out.append(Example(args=args, threads=decode_groups(splits, hk, hq // hk * lq, dmax),
                           expected={"pm": pm.astype(np.float32), "pl": pl.astype(np.float32),
                                     "pacc": pacc.astype(np.float32)}, rtol=2e-5, atol=2e-5))
    return out


'''


def _example_functions() -> str:
    out = []
    for dmax, _ in VARIANTS:
        for t, np_t in (("f32", "np.float32"), ("f16", "np.float16"), ("bf16", "ml_dtypes.bfloat16")):
            out.append(f"\n\ndef example_attention_decode_{t}_d{dmax}(rng):\n"
                       f"    return _decode_examples({np_t}, {dmax})\n")
    return "".join(out)


def instances() -> str:
    lines = ["\n\n"]
    for dmax, _ in VARIANTS:
        lines.append(f'attention_decode_f32_d{dmax} = _make_decode_d{dmax}(pt.f32, "attention_decode_f32_d{dmax}")\n')
        for t in ("f16", "bf16"):
            lines.append(f'attention_decode_{t}_d{dmax} = _make_decode_words_d{dmax}(pt.{t}, "attention_decode_{t}_d{dmax}", '
                         f'{t}_low, {t}_high)\n')
    return "".join(lines)


def source() -> str:
    return HEAD + "".join(make(d, r, False) + make(d, r, True) for d, r in VARIANTS) + instances() + TAIL + _example_functions()


def outputs() -> dict:
    """The committed kernel file and its text."""
    return {TARGET: source()}


if __name__ == "__main__":
    TARGET.write_text(source())
