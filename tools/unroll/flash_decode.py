"""Writes kernels/attention/flash_decode.py: the warp-per-key flash-decode kernels, unrolled.

The kernel language has no register arrays, so each lane's query values, accumulators and in-flight K/V
values are named locals (one per query row, head-dim slot and key); this script spells them out for the
two variants, head dims up to 128 and up to 256. Edit it, not the kernel file, then run
`python tools/unroll/flash_decode.py` and `poot regen-kernel-assets`
(tests/jit/test_kernel_unroll.py checks the kernel file is what this script writes).

`Tiles` names the shape: keys in flight per warp, warps a workgroup, 32-bit words a lane loads at once
from a 16-bit row (1, or 4: one 16-byte `pt.load_x4`, so a d128 row takes 16 lanes and one load
instruction of a warp reads two keys), query rows a workgroup, and two loop forms: `split` (the steps
every row sees whole in a loop of their own, the rest in a second) and `pipe` (each step's K and V loads
issued during the step before, carried as packed words). DEFAULT is the committed shape;
`--tiles keys,warps,vec,rows,split,pipe --out DIR` writes another one for benchmarks/bench_kernel_tiles.py
(`--kernel decode`)."""
import argparse
from dataclasses import dataclass
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "kernels/attention/flash_decode.py"
DMAXES = (128, 256)                    # the variants: largest head dim each serves


@dataclass(frozen=True)
class Tiles:
    keys: int = 4         # keys in flight per warp per step (their K and V loads issued before any reduction)
    warps: int = 4        # warps per workgroup
    vec: int = 1          # 32-bit words a lane loads at once from a 16-bit row: 1 (4 bytes) or 4 (16 bytes)
    rows: int = 4         # query rows (sharing a KV head) per workgroup
    split: int = 0        # 1: steps every row sees whole and the others in two loops (fewer live registers)
    pipe: int = 0         # 1: a step's K and V loads are issued one step ahead (in flight during the step before)

    def __post_init__(self):
        if self.vec not in (1, 4):
            raise ValueError("vec: 1 or 4 words (pt.load_x4) a load")
        for dmax in DMAXES:
            lay = Layout(dmax, True, self)
            if self.keys % lay.teams or self.keys < lay.teams:
                raise ValueError(f"keys: a multiple of the {lay.teams} keys one load instruction of a warp reads "
                                 f"at d{dmax}")
        if self.split and self.pipe:
            raise ValueError("split loops and loads a step ahead: one or the other")
        n = self.rows * (self.keys // Layout(128, True, self).teams)
        if n & (n - 1) or self.rows & (self.rows - 1):
            raise ValueError("rows, and rows x keys a lane: powers of two")

    @property
    def label(self) -> str:
        return (f"k{self.keys}_w{self.warps}_v{self.vec}_r{self.rows}" + ("_split" if self.split else "")
                + ("_pipe" if self.pipe else ""))


class Layout:
    """Which lanes hold which part of a row, for one variant: a row of dmax elements is `units` loads of
    `per` elements; `lanes` lanes share a row (a team; 32 // lanes teams a warp, each on its own keys),
    each issuing `loads` loads a row and holding `slots` values of it."""

    def __init__(self, dmax: int, words: bool, t: Tiles):
        self.vec = t.vec if words else 1
        self.per = self.vec * (2 if words else 1)
        units = dmax // self.per
        self.lanes = min(32, units)
        self.teams = 32 // self.lanes
        self.loads = units // self.lanes
        self.slots = self.loads * self.per
        self.kt = t.keys // self.teams         # keys a team takes per step


DEFAULT = Tiles()

HEAD = '''"""Flash decode for GPUs: few queries over a long KV cache, bandwidth-bound (PTX and AMDGCN: subgroup ops).

Same operands, scalars and semantics as the other flash kernels (kernels/attention/flash_gpu.py): q
[B * Hq, Lq, D], k [B * Hk, Lk, D], v [B * Hk, Lk, Dv] row-major of one dtype T, accumulated in f32; GQA by
ratio = Hq / Hk; an additive f32 mask at b * msb + h * msh + i * msq + j * msk when has_mask; query i sees
key j when -left <= j - i <= right; softcap > 0 applies softcap * tanh(s / softcap) before the mask.

attention_decode_<T>_d<N> (D, Dv <= N; N = 128 or 256) writes, per query row and split, the partial
maximum, sum and f32 accumulator (pm, pl, pacc) that attention_combine_<T> (flash_gpu.py) merges. The
16-bit kernels take q, k and v as 32-bit word views (two elements a word; D and Dv even).

Why this shape: decode reads every K and V row once and does little arithmetic per byte, so the kernel is
organised around the loads. @LAYOUT@ Every lane keeps the online-softmax state (m, l) of each query row redundantly
next to its own dims of the accumulator: the key loop has no barrier and no shared memory. Each warp has
KEYS = @KEYS@ keys in flight per step (their K and V loads issued before any reduction). One workgroup (WARPS = @WARPS@
warps) serves up to ROWS = @ROWS@ query rows that share a KV head (GQA heads x queries), so K and V are read once
for all of them (more rows: more workgroups along y, whose reads of the same keys at about the same time
mostly hit L2; 4 rows rather than 8 keep a d128 kernel near 128 registers, 4 workgroups an SM); q,
pre-scaled, stays in registers. @REDUCE@ A step whose keys every row of
the workgroup sees (no softcap) skips the per-key checks of `score` (a mask is still added). The warps of a
workgroup take interleaved groups of KEYS keys of the split's range and merge their states once, at the end,
through shared memory. Query rows of one workgroup share the union of their visible key ranges; `score`
masks each row's own window.

Launch: workgroup (@THREADS@, 1, 1), groups (splits, B * Hk * ceil(ratio * Lq / @ROWS@), 1); split s covers keys
[lo + s * chunk, lo + (s + 1) * chunk) of the workgroup's visible range [lo, hi).

This file is written by tools/unroll/flash_decode.py (the per-row code is unrolled): edit that script."""
import ml_dtypes
import numpy as np

import poot as pt
from poot.kernel.examples import Example

WARPS = @WARPS@                     # warps per workgroup
THREADS = 32 * WARPS
KEYS = @KEYS@                      # keys in flight per warp per step
VEC = @VEC@                       # 32-bit words a lane loads at once from a 16-bit row (4: pt.load_x4)
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


def head(t: Tiles) -> str:
    """The kernel file's docstring and shared definitions, for tile shape t."""
    lay = Layout(128, True, t)
    if t.vec == 1:
        layout = ("A warp works on one key at a time: lane l owns head dims l, l + 32, ... (f32) or\n"
                  "the word pairs 2w, 2w + 1 of words w = l, l + 32, ... (16-bit), so each load instruction of a "
                  "warp reads 128\ncontiguous bytes of a row.")
    else:
        layout = (f"The 16-bit kernels load {4 * t.vec} bytes a lane (pt.load_x4; D and Dv\n"
                  f"multiples of {2 * t.vec}): a d128 row is {lay.lanes} lanes' loads, so a warp's lanes form "
                  f"{lay.teams} teams, each on its own keys\n(one load instruction reads {lay.teams} whole rows), "
                  f"with its own online-softmax state, merged with the\nother teams' at the end; a d256 row "
                  f"takes a whole warp. The f32 kernels: lane l owns dims l, l + 32 and so on.")
    n = t.rows * lay.kt
    reduce = (f"The {n} partial dot products of a step ({t.rows} rows x {lay.kt} keys{' a team' if lay.teams > 1 else ''}) "
              f"are summed over the\n{'team' if lay.teams > 1 else 'warp'} by one transposing butterfly "
              f"({shuffles(n, lay.lanes)} shuffles where {n} butterflies take {n * halvings(lay.lanes)}).")
    out = HEAD
    for key, val in (("@LAYOUT@", layout), ("@REDUCE@", reduce), ("@KEYS@", t.keys), ("@WARPS@", t.warps),
                     ("@ROWS@", t.rows), ("@THREADS@", 32 * t.warps), ("@VEC@", t.vec)):
        out = out.replace(key, str(val))
    return out

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


def shuffles(n: int, lanes: int) -> int:
    """The shuffles reduce_lines spends on n values over teams of `lanes` lanes."""
    g = min(n, lanes)
    return n // g * (2 * g - 1 + halvings(lanes) - halvings(g))


def reduce_lines(ind: str, n: int, lanes: int = 32) -> str:
    """Sum y0 .. y{n-1} over each team of `lanes` lanes, leaving x0 .. x{n-1} (each the full sum) in every lane
    of the team (lanes a power of two; the team's first lane is `tb` where lanes < 32).

    A butterfly per value would take log2(lanes) shuffles each. Here each step exchanges half of a lane's
    values instead: at xor mask m, a lane keeps one half (by its bit m) and sends the other to its partner,
    so the values halve while the lanes that share a partial sum double. After log2(n) such steps lane L
    holds value o(L) summed over 2**log2(n) lanes, the remaining masks finish it as a plain butterfly,
    and n shuffles from the lanes that hold them hand every sum to every lane: 2n - 1 + (5 - log2 n)
    shuffles for n values over a warp, against 5n. More values than lanes go in groups of `lanes`."""
    masks = tuple(m for m in HALVINGS if m < lanes)
    g = min(n, lanes)
    steps = halvings(g)
    out = []
    for c in range(n // g):
        cur = [f"y{c * g + i}" for i in range(g)]
        tag = "" if g == n else f"{c}_"
        for m in masks[:steps]:
            half = len(cur) // 2
            nxt = []
            for i in range(half):
                a, b = cur[i], cur[half + i]
                name = f"z{m}_{tag}{i}"
                out.append(f"{ind}{name} = pt.where(up{m}, {b}, {a}) + pt.shuffle_xor(pt.where(up{m}, {a}, {b}), {m})\n")
                nxt.append(name)
            cur = nxt
        (v,) = cur
        for m in masks[steps:]:
            out.append(f"{ind}{v} = {v} + pt.shuffle_xor({v}, {m})\n")
        for o in range(g):
            lane = sum(masks[b] for b in range(steps) if (o >> (steps - 1 - b)) & 1)
            src = str(lane) if lanes == 32 else ("tb" if lane == 0 else f"tb + {lane}")
            out.append(f"{ind}x{c * g + o} = pt.shuffle({v}, {src})\n")
    return "".join(out)


def unpack(ind: str, dst: str, src: str, ok: str | None, words: bool, vec: int, s: int, extra: str = "") -> list:
    """Lines loading one unit of a row (`src` the index) into dst{slot} values of load s: zeroed where
    not ok (None: kept), each value times `extra` (" * scale") if given."""
    out = []
    if not words:
        val = f"pt.f32({src.split('[')[0]}[{src.split('[', 1)[1]}){extra}"
        out.append(f"{ind}{dst}_{s} = pt.where({ok}, {val}, pt.f32(0.0))\n" if ok else f"{ind}{dst}_{s} = {val}\n")
        return out
    if vec == 1:
        names = ["x"]
        out.append(f"{ind}x = {src}\n")
    else:
        names = [f"g{i}" for i in range(vec)]
        buf, at = src.split("[", 1)
        out.append(f"{ind}{', '.join(names)} = pt.load_x4({buf}, {at[:-1]})\n")
    for i, x in enumerate(names):
        for h, fn in enumerate(("low", "high")):
            slot = vec * 2 * s + 2 * i + h
            if ok:
                out.append(f"{ind}{dst}_{slot} = pt.where({ok}, {fn}({x}){extra}, pt.f32(0.0))\n")
            else:
                out.append(f"{ind}{dst}_{slot} = {fn}({x}){extra}\n")
    return out


def step_body(out: list, ind0: str, mode: str, cond: str, rows: int, words: bool, vec: int, lay, n: str,
              nv: str, pipe: int = 0) -> None:
    """One step of the key loop at indent ind0: loads, dot products, reduction, online-softmax update.
    mode "both": the scores take the fast path where `whole` (cond) holds, else `score`'s checks; "fast"
    and "slow": only that path (split loops)."""
    w = out.append
    slots, loads, per, teams, kt = lay.slots, lay.loads, lay.per, lay.teams, lay.kt
    keys = range(kt)
    nvals = rows * kt
    if teams == 1:
        w(f"{ind0}j0 = k0 + warp * KEYS                    # this warp's keys j0 .. j0 + KEYS - 1\n")
        for j in keys[1:]:
            w(f"{ind0}j{j} = j0 + {j}\n")
    else:
        w(f"{ind0}j0 = k0 + warp * KEYS + team             # this team's keys j0, j0 + {teams}, ..: a load reads "
          f"{teams} adjacent rows\n")
        for j in keys[1:]:
            w(f"{ind0}j{j} = j0 + {teams * j}\n")
    if not pipe:
        for j in keys:
            w(f"{ind0}kr = kbase + min(j{j}, c1 - 1) * {n}\n")
            for s in range(loads):
                out.extend(unpack(ind0, f"k{j}", f"k[kr + e{s}]", f"ok{s}", words, vec, s))
        for j in keys:
            w(f"{ind0}vr = vbase + min(j{j}, c1 - 1) * {nv}\n")
            for s in range(loads):
                out.extend(unpack(ind0, f"v{j}", f"v[vr + f{s}]", None, words, vec, s))
    else:
        w(f"{ind0}# this step's rows (loaded during the step before), then the next step's loads\n")
        for j in keys:
            for s in range(loads):
                out.extend(raw_unpack(ind0, f"k{j}", f"nk{j}", f"ok{s}", words, vec, s))
        for j in keys:
            for s in range(loads):
                out.extend(raw_unpack(ind0, f"v{j}", f"nv{j}", None, words, vec, s))
        for j in keys:
            w(f"{ind0}kr = kbase + min(j{j} + STEP, last) * {n}\n")
            for s in range(loads):
                w(raw_load(ind0, f"nk{j}", f"k[kr + e{s}]", words, vec, s))
        for j in keys:
            w(f"{ind0}vr = vbase + min(j{j} + STEP, last) * {nv}\n")
            for s in range(loads):
                w(raw_load(ind0, f"nv{j}", f"v[vr + f{s}]", words, vec, s))
    if mode == "both":
        w(f"{ind0}# every key of the step visible to every row, no softcap: the scores need no per-key checks\n")
        w(f"{ind0}whole = {cond}\n")
    w(f"{ind0}# the rows x keys dot products, summed over the {'warp' if teams == 1 else 'team'} by a transposing butterfly\n")
    vals = []
    for r in range(rows):
        for j in keys:
            dot = " + ".join(f"q{r}_{s} * k{j}_{s}" for s in range(slots))
            w(f"{ind0}y{len(vals)} = {dot}\n")
            vals.append(len(vals))
    w(reduce_lines(ind0, nvals, lay.lanes))
    for r in range(rows):
        ind = ind0
        if r:
            w(f"{ind0}if nr > {r}:\n")
            ind = ind0 + "    "
        if mode != "slow":
            sub = ind
            if mode == "both":
                w(f"{ind}if whole:\n")
                sub = ind + "    "
            w(f"{sub}{', '.join(f's{j}' for j in keys)} = {', '.join(f'x{r * kt + j}' for j in keys)}\n")
            w(f"{sub}if has_mask != 0:\n")
            for j in keys:
                w(f"{sub}    s{j} = s{j} + mask[mr{r} + j{j} * msk]\n")
        if mode != "fast":
            sub = ind
            if mode == "both":
                w(f"{ind}else:\n")
                sub = ind + "    "
            w(f"{sub}qi = (t0 + min(pt.u32({r}), nr - 1)) % Lq       # recomputed here: one live register less\n"
              if r else f"{sub}qi = t0 % Lq\n")
            for j in keys:
                w(f"{sub}s{j} = score(x{r * kt + j}, qi, j{j}, c1, left, right, mask, has_mask, mr{r} + j{j} * msk, "
                  f"softcap)\n")
        w(f"{ind}mx = max(m{r}, {', '.join(f's{j}' for j in keys)})\n")
        # (s - max) * LOG2E, not s * LOG2E - max * LOG2E: a masked logit can be as large as 1e38, and the
        # multiply-add would leave the rounding of max * LOG2E (half an ulp of 1e38) in the maximum's own
        # exponent, where s - max is exactly 0 (a Hugging Face finfo.min row averages its values)
        w(f"{ind}base = offset(mx)\n")
        w(f"{ind}alpha = pt.fast_exp2((m{r} - base) * LOG2E)\n")
        for j in keys:
            w(f"{ind}p{j} = pt.fast_exp2((s{j} - base) * LOG2E)\n")
        w(f"{ind}m{r} = mx\n")
        w(f"{ind}l{r} = l{r} * alpha + ({' + '.join(f'p{j}' for j in keys)})\n")
        for s in range(slots):
            w(f"{ind}a{r}_{s} = a{r}_{s} * alpha + {' + '.join(f'p{j} * v{j}_{s}' for j in keys)}\n")


def raw_names(dst: str, words: bool, vec: int, s: int) -> list:
    """The loaded (packed) values of load s of a row, carried from one step to the next with `pipe`."""
    return [f"{dst}_{s}_{i}" for i in range(vec)] if words and vec > 1 else [f"{dst}_{s}"]


def raw_load(ind: str, dst: str, src: str, words: bool, vec: int, s: int) -> str:
    names = raw_names(dst, words, vec, s)
    if words and vec > 1:
        buf, at = src.split("[", 1)
        return f"{ind}{', '.join(names)} = pt.load_x4({buf}, {at[:-1]})\n"
    return f"{ind}{names[0]} = {src}\n"


def raw_unpack(ind: str, dst: str, raw: str, ok: str | None, words: bool, vec: int, s: int) -> list:
    """dst{slot} values of load s from its packed values (raw_names(raw, ...)), zeroed where not ok."""
    out = []
    if not words:
        val = f"pt.f32({raw}_{s})"
        out.append(f"{ind}{dst}_{s} = pt.where({ok}, {val}, pt.f32(0.0))\n" if ok else f"{ind}{dst}_{s} = {val}\n")
        return out
    for i, x in enumerate(raw_names(raw, words, vec, s)):
        for h, fn in enumerate(("low", "high")):
            slot = vec * 2 * s + 2 * i + h
            out.append(f"{ind}{dst}_{slot} = pt.where({ok}, {fn}({x}), pt.f32(0.0))\n" if ok else
                       f"{ind}{dst}_{slot} = {fn}({x})\n")
    return out


def make(dmax: int, rows: int, words: bool, t: Tiles = DEFAULT) -> str:
    """The kernel factory of one variant: f32 elements (lane l owns dims l + 32 s) or, for 16-bit dtypes,
    32-bit words of two elements (lane l owns word w = l + 32 s: dims 2w and 2w + 1), so a warp's load
    reads 128 contiguous bytes either way and a 16-bit row takes half the load instructions. With
    t.vec = 4, a 16-bit load is 4 words (8 elements) a lane, `lay.lanes` lanes a row."""
    lay = Layout(dmax, words, t)
    slots, loads, vec, per, teams, kt = lay.slots, lay.loads, lay.vec, lay.per, lay.teams, lay.kt
    keys = range(kt)
    if words:
        out = [f"\n\ndef _make_decode_words_d{dmax}(T, name, low, high):\n",
               f'    """Head dims up to {dmax} (even{"" if vec == 1 else f", multiples of {per}"}), 16-bit q, k, v as '
               f'32-bit words: {slots} dims a lane, {rows} query rows\n    a workgroup; `low` and `high` widen a '
               f'word\'s two elements."""\n',
               SIGNATURE.replace("q: pt.In[T], k: pt.In[T], v: pt.In[T]", "q: pt.In[pt.u32], k: pt.In[pt.u32], "
                                 "v: pt.In[pt.u32]")]
    else:
        out = [f"\n\ndef _make_decode_d{dmax}(T, name):\n",
               f'    """Head dims up to {dmax}, f32 elements: {slots} dims a lane, {rows} query rows a workgroup."""\n',
               SIGNATURE]
    n, nv = ("Dw", "Dvw") if words else ("D", "Dv")     # a row's stride (words or elements)
    un, unv = (n, nv) if vec == 1 else ("Dq", "Dvq")    # a row's units: what d<s> counts
    w = out.append
    i8 = " " * 8
    states = "WARPS" if teams == 1 else f"WARPS * {teams}"
    w(f"{i8}s_m = pt.shared(pt.f32, {states} * {rows})          # each {'warp' if teams == 1 else 'team'}'s (m, l, accumulator) per row\n")
    w(f"{i8}s_l = pt.shared(pt.f32, {states} * {rows})\n")
    w(f"{i8}s_acc = pt.shared(pt.f32, {states} * {rows * dmax})\n")
    if words:
        w(f"{i8}Dw = D // 2                                   # words a row of q or k, of v\n{i8}Dvw = Dv // 2\n")
    if vec > 1:
        w(f"{i8}Dq = D // {per}                                   # {vec}-word loads a row of q or k, of v\n"
          f"{i8}Dvq = Dv // {per}\n")
    w(f"""{i8}t = pt.local_index_x()
{i8}lane = pt.lane_index()
{i8}warp = t // 32
""")
    if teams > 1:
        w(f"{i8}tl = lane % {lay.lanes}                             # lane within its team (a row's {lay.lanes} lanes)\n"
          f"{i8}team = lane // {lay.lanes}\n{i8}tb = lane - tl                                  # the team's first lane\n"
          f"{i8}tg = warp * {teams} + team                         # the team among the workgroup's\n")
    w(f"""{i8}split = pt.group_index_x()
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
    own = "lane" if teams == 1 else "tl"
    for s in range(loads):
        w(f"{i8}d{s} = {own} + {lay.lanes * s}\n" if s else f"{i8}d0 = {own}\n")
    scale_units = "" if vec == 1 else f" * {vec}"
    for s in range(loads):
        w(f"{i8}e{s} = min(d{s}, {un} - 1){scale_units}                             # past the head: load the last one\n"
          if s == 0 else f"{i8}e{s} = min(d{s}, {un} - 1){scale_units}\n")
        w(f"{i8}f{s} = min(d{s}, {unv} - 1){scale_units}\n")
        w(f"{i8}ok{s} = d{s} < {un}\n")
    for r in range(rows):
        u = "t0" if r == 0 else f"t0 + min(pt.u32({r}), nr - 1)"
        w(f"{i8}u{r} = {u}{'             # rows past nr load the last row and store nothing' if r == 1 else ''}\n")
        w(f"{i8}mr{r} = b * msb + (h0 + u{r} // Lq) * msh + u{r} % Lq * msq     # its mask row\n" if r == 0 else
          f"{i8}mr{r} = b * msb + (h0 + u{r} // Lq) * msh + u{r} % Lq * msq\n")
        w(f"{i8}at = (kvrow * grows + u{r}) * {n}\n")
        for s in range(loads):
            out.extend(unpack(i8, f"q{r}", f"q[at + e{s}]", f"ok{s}", words, vec, s, " * scale"))
        w(f"{i8}m{r} = pt.f32(NEG_INF)\n{i8}l{r} = pt.f32(0.0)\n")
        w(i8 + " = ".join(f"a{r}_{s}" for s in range(slots)) + " = pt.f32(0.0)\n")
    i12 = " " * 12
    nvals = rows * kt
    for m in tuple(m for m in HALVINGS if m < lay.lanes)[:halvings(min(nvals, lay.lanes))]:
        w(f"{i8}up{m} = (lane & {m}) != 0\n")
    w(f"{i8}plain = softcap <= 0.0\n")
    cond = ("plain and k0 + STEP <= c1 and pt.i32(k0) - pt.i32(qb) >= -left and "
            "pt.i32(k0 + STEP - 1) - pt.i32(qa) <= right")
    if t.pipe:
        w(f"{i8}last = max(c1, pt.u32(1)) - 1                 # the loads ahead stay on the split's last key\n")
        w(f"{i8}pj = c0 + warp * KEYS{'' if teams == 1 else ' + team'}                 # the first step's keys: loaded here\n")
        for j in keys:
            off = j * teams
            w(f"{i8}kr = kbase + min(pj{f' + {off}' if off else ''}, last) * {n}\n")
            for s in range(loads):
                w(raw_load(i8, f"nk{j}", f"k[kr + e{s}]", words, vec, s))
        for j in keys:
            off = j * teams
            w(f"{i8}vr = vbase + min(pj{f' + {off}' if off else ''}, last) * {nv}\n")
            for s in range(loads):
                w(raw_load(i8, f"nv{j}", f"v[vr + f{s}]", words, vec, s))
    if not t.split:
        w(f"{i8}for k0 in range(c0, c1, STEP):\n")
        step_body(out, i12, "both", cond, rows, words, vec, lay, n, nv, t.pipe)
    else:
        w(f"{i8}for k0 in range(c0, c1, STEP):            # the steps every row sees whole, no softcap: no per-key checks\n")
        w(f"{i12}if {cond}:\n")
        step_body(out, i12 + "    ", "fast", cond, rows, words, vec, lay, n, nv)
        w(f"{i8}for k0 in range(c0, c1, STEP):            # the others (window edges, the split's end, softcap)\n")
        w(f"{i12}if not ({cond}):\n")
        step_body(out, i12 + "    ", "slow", cond, rows, words, vec, lay, n, nv)
    me = "warp" if teams == 1 else "tg"
    w(f"{i8}if {'lane' if teams == 1 else 'tl'} == 0:\n")
    for r in range(rows):
        w(f"{i8}    s_m[{me} * {rows} + {r}] = m{r}\n{i8}    s_l[{me} * {rows} + {r}] = l{r}\n")
    for r in range(rows):
        for s in range(loads):
            for i in range(per):
                dim = f"d{s}" if per == 1 else f"{per} * d{s}" + (f" + {i}" if i else "")
                w(f"{i8}s_acc[({me} * {rows} + {r}) * {dmax} + {dim}] = a{r}_{per * s + i}\n")
    w(f"{i8}pt.workgroup_barrier()\n")
    ws = range(t.warps * teams)
    w(f"""{i8}for e in range(t, nr * Dv, THREADS):            # merge the {'warps' if teams == 1 else 'teams'}' states: one (row, dim) a thread
{i12}r = e // Dv
{i12}d = e % Dv
{i12}big = max({', '.join(f's_m[{x * rows} + r]' for x in ws)})
{i12}base = offset(big)
""")
    for x in ws:
        w(f"{i12}w{x} = pt.fast_exp2((s_m[{x * rows} + r] - base) * LOG2E)\n")
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
    for dmax in DMAXES:
        for t, np_t in (("f32", "np.float32"), ("f16", "np.float16"), ("bf16", "ml_dtypes.bfloat16")):
            out.append(f"\n\ndef example_attention_decode_{t}_d{dmax}(rng):\n"
                       f"    return _decode_examples({np_t}, {dmax})\n")
    return "".join(out)


def instances() -> str:
    lines = ["\n\n"]
    for dmax in DMAXES:
        lines.append(f'attention_decode_f32_d{dmax} = _make_decode_d{dmax}(pt.f32, "attention_decode_f32_d{dmax}")\n')
        for t in ("f16", "bf16"):
            lines.append(f'attention_decode_{t}_d{dmax} = _make_decode_words_d{dmax}(pt.{t}, "attention_decode_{t}_d{dmax}", '
                         f'{t}_low, {t}_high)\n')
    return "".join(lines)


def source(tiles: Tiles = DEFAULT) -> str:
    rows = tiles.rows
    tail = TAIL.replace("ROWS = {128: 4, 256: 4}", f"ROWS = {{128: {rows}, 256: {rows}}}")
    return (head(tiles) + "".join(make(d, rows, False, tiles) + make(d, rows, True, tiles) for d in DMAXES)
            + instances() + tail + _example_functions())


def outputs() -> dict:
    """The committed kernel file and its text."""
    return {TARGET: source()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", help="keys,warps[,vec[,rows[,split[,pipe]]]]: keys in flight per warp, warps a "
                    "workgroup, words a lane loads at once (1 or 4), query rows a workgroup, 1 for split loops, 1 for "
                    "loads a step ahead (default: the committed shape)")
    ap.add_argument("--out", type=Path, help="write flash_decode_<shape>.py into this folder instead")
    args = ap.parse_args(argv)
    tiles = Tiles(*map(int, args.tiles.split(","))) if args.tiles else DEFAULT
    target = TARGET if args.out is None else args.out / f"flash_decode_{tiles.label}.py"
    target.write_text(source(tiles))
    print(target)


if __name__ == "__main__":
    main()
