"""Subgroup operations in `@poot.kernel` bodies: import to KIR and emulation.

A subgroup is an aligned run of 32 threads by local x index (a warp): the kernel's workgroup must be
(32k, 1, 1), and every operation here is evaluated by all 32 lanes together, where a barrier would be
legal (the KIR verifier refuses one under thread-dependent control flow).

- `pt.lane_index()` (uint32): local x index % 32; `pt.subgroup_size()` (uint32): 32.
- `pt.shuffle(x, lane)`: x as the lane `lane % 32` of this subgroup holds it (KIR `Shuffle`).
- `pt.shuffle_xor(x, mask)`: x of lane (this lane ^ mask), mask a constant in 1..31 (KIR `ShuffleXor`).
- `pt.subgroup_sum(x)`, `pt.subgroup_max(x)`, `pt.subgroup_min(x)`: the subgroup's combination, the same
  in every lane: a butterfly over masks 16, 8, 4, 2, 1 (`v = op(v, shuffle_xor(v, m))`), each step in x's
  dtype (floats round per step, so a float sum is exact to that order, which the emulator follows).
- `d0, d1, d2, d3 = pt.mma_m16n8k16(a0, ..., a7, b0, ..., b3, c0, ..., c3)`: a warp-level
  D = A @ B + C (A 16x16, B 16x8 of bfloat16 or float16, C and D float32), each lane passing its elements
  of A, B and C and receiving its elements of D, placed as PTX's m16n8k16 row.col fragments
  (poot/jit/kir/model.py `Mma`). Only as the value of a tuple assignment to as many names as D elements.
- `d0, ..., d3 = pt.mfma_16x16x16(a0, ..., a3, b0, ..., b3, c0, ..., c3)`: AMD CDNA's matrix core (MFMA)
  over a wave of 64 lanes (workgroup (64k, 1, 1)): A, B, C, D all 16x16; lane l (i = l % 16, q = l // 16)
  passes A[i, 4q + j], B[4q + j, i], C[4q + j, i] and receives D[4q + j, i], j in 0..3.
- `d0, ..., d7 = pt.wmma_16x16x16(a0, ..., a15, b0, ..., b15, c0, ..., c7)`: AMD RDNA3's matrix core
  (WMMA) over a wave of 32 lanes: lane l (i = l % 16, h = l // 16) passes A[i, j] and B[j, i] (j in 0..15;
  lanes l and l + 16 pass the same ones, which the emulator checks) and C[2j + h, i], and receives
  D[2j + h, i], j in 0..7.

Targets: PTX (shuffles everywhere; mma on sm_80 and newer), AMDGCN (shuffles; mfma on gfx90a, gfx942 and
gfx950; wmma on gfx11) and SPIR-V (shuffles, run by a Vulkan device whose subgroups hold the lanes exchanged:
32 on NVIDIA GPUs). Compiling for any other target or arch raises poot.NotBuiltError naming the operation.

Emulation: the emulator turns each operation into a `yield` of a request; the scheduler (emulate.py) runs
the workgroup's threads to their next request, checks they all reached the same kind of operation, and
answers each 32-lane run with `answer(...)` below.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import PootError
from poot.jit.kir.model import (MMA_INPUTS, MMA_SHAPES, SHUFFLE_LANES, WGMMA_LANES, Binary, Cast, Index, Mma, Read, Shuffle,
                                ShuffleXor)
from poot.kernel import scalar_ops
from poot.kernel.values import Lit, Val, const

LANES = SHUFFLE_LANES
REDUCE_OPS = {"subgroup_sum": "add", "subgroup_max": "max", "subgroup_min": "min"}
BUTTERFLY = (16, 8, 4, 2, 1)
MMA_BY_OP = {shape.op: name for name, shape in MMA_SHAPES.items()}     # pt.<op> -> KIR Mma shape
# shape -> the emulator's request kind
MMA_KIND = {"m16n8k16": "mma", "mfma_16x16x16": "mfma", "wmma_16x16x16": "wmma"}
_KIND_LANES = {kind: MMA_SHAPES[shape].lanes for shape, kind in MMA_KIND.items()}


def run_lanes(kind: str) -> int:
    """How many consecutive lanes (by local x index) answer one request of `kind` together: an Mma
    shape's (MmaShape.lanes), a warpgroup's for wgmma, else a warp's."""
    return WGMMA_LANES if kind == "wgmma" else _KIND_LANES.get(kind, LANES)


def mark_sync(imp) -> None:
    """The scope (and the device functions inlined around it) hold a subgroup sync point: under emulation
    they run as generators, as for a barrier."""
    imp.sc.has_barrier = True
    for s in imp.inline_stack_scopes:
        s.has_barrier = True


def _operand(imp, node) -> Val:
    v = imp.value(node)
    return imp.typed(v, node) if isinstance(v, Lit) else v


def _lane(imp, node):
    v = imp.value(node)
    if isinstance(v, Lit):
        if isinstance(v.value, bool) or not isinstance(v.value, int) or v.value < 0:
            raise imp.err("bad-intrinsic-call", "pt.shuffle(x, lane): lane must be a non-negative integer", node)
        return const(v.value % LANES, dt.uint32)
    if not dt.is_int(v.dtype):
        raise imp.err("invalid-operand", f"pt.shuffle(x, lane): lane must be an integer, got {v.dtype.name}", node)
    return v.expr if v.dtype is dt.uint32 else Cast(v.expr, dt.uint32)


def call_subgroup(imp, obj, node):
    """Lower one subgroup intrinsic call (a method of the importer, bound by calls.py)."""
    k = obj.kind
    if k == "lane_index":
        imp.args(node, 0, "pt.lane_index")
        imp.call_note(node, lane_index, ())
        return Val(Binary("rem", Index("local", 0), const(LANES, dt.uint32), dt.uint32), dt.uint32)
    if k == "subgroup_size":
        imp.args(node, 0, "pt.subgroup_size")
        imp.call_note(node, subgroup_size, ())
        return Val(const(LANES, dt.uint32), dt.uint32)
    if k == "mma":
        na, nb, nc = MMA_SHAPES[MMA_BY_OP[obj.name]]
        raise imp.err("bad-intrinsic-call", f"pt.{obj.name}(...) is only the value of a tuple assignment "
                      f"`d0, ..., d{nc - 1} = pt.{obj.name}(a0, ..., a{na - 1}, b0, ..., b{nb - 1}, c0, ..., "
                      f"c{nc - 1})`", node)
    mark_sync(imp)
    imp.subgroup_exchanges.append((f"pt.{obj.name}", imp.sc.info.where(node)))
    if k == "shuffle":
        x_node, l_node = imp.args(node, 2, "pt.shuffle")
        x = _operand(imp, x_node)
        lane = _lane(imp, l_node)
        imp.annotate(node, ("subgroup", "shuffle", (0, 1), ()))
        return Val(Shuffle(x.expr, lane, x.dtype), x.dtype)
    if k == "shuffle_xor":
        x_node, m_node = imp.args(node, 2, "pt.shuffle_xor")
        m = imp.value(m_node)
        if not isinstance(m, Lit) or isinstance(m.value, bool) or not isinstance(m.value, int) \
                or not 1 <= m.value < LANES:
            raise imp.err("bad-intrinsic-call", f"pt.shuffle_xor(x, mask): mask must be a constant int in "
                          f"1..{LANES - 1}", m_node)
        x = _operand(imp, x_node)
        imp.annotate(node, ("subgroup", "xor", (0,), (m.value,)))
        return Val(ShuffleXor(x.expr, m.value, x.dtype), x.dtype)
    (x_node,) = imp.args(node, 1, f"pt.{obj.name}")
    x = _operand(imp, x_node)
    if dt.is_bool(x.dtype):
        raise imp.err("invalid-operand", f"pt.{obj.name} does not take bool", node)
    op, t = REDUCE_OPS[k], x.dtype
    v = imp.to_temp(x) if not isinstance(x.expr, Read) else x
    for m in BUTTERFLY:
        v = imp.to_temp(Val(Binary(op, v.expr, ShuffleXor(v.expr, m, t), t), t))
    imp.annotate(node, ("subgroup", "reduce", (0,), (op, t)))
    return v


def mma_assign(imp, target, value, node, op: str = "mma_m16n8k16") -> None:
    """`d0, ... = pt.<op>(a.., b.., c..)` for a matrix multiply-accumulate `op` (MMA_BY_OP): operands
    spilled to locals, one Mma read per D element of one instruction, then the results assigned."""
    shape = MMA_BY_OP[op]
    na, nb, nc = MMA_SHAPES[shape]
    if len(target.elts) != nc:
        raise imp.err("bad-intrinsic-call", f"pt.{op} returns {nc} values (this lane's elements of D): "
                      f"assign them to {nc} names", node)
    args = imp.args(value, na + nb + nc, f"pt.{op}")
    mark_sync(imp)
    imp.subgroup_exchanges.append((f"pt.{op}", imp.sc.info.where(node)))
    vals = [imp.value(a) for a in args]
    typed = [v for v in vals[:na + nb] if isinstance(v, Val)]
    t = typed[0].dtype if typed else dt.bfloat16
    if t not in MMA_INPUTS:
        raise imp.err("invalid-operand", f"pt.{op}: A and B elements must be bfloat16 or float16, got "
                      f"{t.name}", value)
    ops = []
    for i, (v, a) in enumerate(zip(vals, args)):
        want = t if i < na + nb else dt.float32
        if isinstance(v, Lit):
            v = imp.typed(v, a, want)
        if v.dtype is not want:
            raise imp.err("ambiguous-types", f"pt.{op}: argument {i + 1} is {v.dtype.name}, expected "
                          f"{want.name} (A and B elements {t.name}, C elements float32; cast with "
                          f"pt.{want.short}(...))", a)
        ops.append(v.expr if isinstance(v.expr, Read) else imp.to_temp(v).expr)
    a, b, c = tuple(ops[:na]), tuple(ops[na:na + nb]), tuple(ops[na + nb:])
    results = [imp.to_temp(Val(Mma(a, b, c, i, shape=shape), dt.float32)) for i in range(nc)]
    imp.annotate(value, ("subgroup", MMA_KIND[shape], tuple(range(na + nb + nc)), ()))
    for tgt, r in zip(target.elts, results):
        imp.assign_to(tgt, r, node)


# --- emulation ---------------------------------------------------------------------------------------
def lane_index():
    from poot.kernel.emulate_ops import STATE

    return np.uint32(STATE.local[0] % LANES)


def subgroup_size():
    return np.uint32(LANES)


def answer(kind: str, requests: list) -> list:
    """The per-lane results of one subgroup operation; `requests[i]` is lane i's request tuple (after
    the kind): its operands, then the annotation's extras."""
    n = len(requests)
    if kind == "shuffle":
        return [requests[int(r[1]) % LANES][0] if int(r[1]) % LANES < n else _missing() for r in requests]
    if kind == "xor":
        return [requests[i ^ r[1]][0] for i, r in enumerate(requests)]
    if kind == "reduce":
        op, t = requests[0][1], requests[0][2]
        vals = [scalar_ops.as_scalar(r[0], t) for r in requests]
        for m in BUTTERFLY:
            vals = [scalar_ops.as_scalar(scalar_ops.binary(op, vals[i], vals[i ^ m]), t) for i in range(n)]
        return vals
    if kind == "mma":
        return mma_emulate(requests)
    if kind == "mfma":
        return mfma_emulate(requests)
    if kind == "wmma":
        return wmma_emulate(requests)
    if kind == "ldmatrix":
        from poot.kernel.async_copy import ldmatrix_emulate

        return ldmatrix_emulate(requests)
    if kind == "wgmma":
        from poot.kernel.warpgroup import wgmma_emulate

        return wgmma_emulate(requests)
    raise PootError(f"unknown subgroup operation {kind!r}")


def _missing():
    raise PootError("a subgroup operation read a lane past the workgroup")


def mma_emulate(requests: list) -> list:
    """D = A @ B + C from the 32 lanes' fragments: products of the 16-bit inputs are exact in float64 as in
    float32, the sum is taken in float64 and rounded once to float32."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    for lane, r in enumerate(requests):
        g, t = lane // 4, lane % 4
        for i in range(8):
            A[g + 8 * ((i % 4) >= 2), 2 * t + i % 2 + 8 * (i >= 4)] = float(r[i])
        for i in range(4):
            B[2 * t + i % 2 + 8 * (i >= 2), g] = float(r[8 + i])
            C[g + 8 * (i >= 2), 2 * t + i % 2] = float(r[12 + i])
    D = (A @ B + C).astype(np.float32)
    return [tuple(D[lane // 4 + 8 * (i >= 2), 2 * (lane % 4) + i % 2] for i in range(4)) for lane in range(32)]


def mfma_emulate(requests: list) -> list:
    """D = A @ B + C over a 64-lane wave in MFMA 16x16x16's fragments, the sum rounded once (as mma)."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 16)), np.zeros((16, 16))
    for lane, r in enumerate(requests):
        i, q = lane % 16, lane // 16
        for j in range(4):
            A[i, 4 * q + j] = float(r[j])
            B[4 * q + j, i] = float(r[4 + j])
            C[4 * q + j, i] = float(r[8 + j])
    D = (A @ B + C).astype(np.float32)
    return [tuple(D[4 * (lane // 16) + j, lane % 16] for j in range(4)) for lane in range(64)]


def wmma_emulate(requests: list) -> list:
    """D = A @ B + C over a 32-lane wave in WMMA 16x16x16's fragments, the sum rounded once (as mma).
    The hardware reads A and B from either half of the wave, so the halves must agree: a kernel whose
    lanes l and l + 16 pass different elements is refused rather than given one half's answer."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 16)), np.zeros((16, 16))
    for lane, r in enumerate(requests):
        i, h = lane % 16, lane // 16
        if h and not _same_bits(r[:32], requests[i][:32]):
            raise PootError(f"wmma_16x16x16: lanes {i} and {lane} pass different A or B elements; the two "
                            "halves of the wave must hold the same A rows and B columns")
        for j in range(16):
            A[i, j] = float(r[j])
            B[j, i] = float(r[16 + j])
        for j in range(8):
            C[2 * j + h, i] = float(r[32 + j])
    D = (A @ B + C).astype(np.float32)
    return [tuple(D[2 * j + lane // 16, lane % 16] for j in range(8)) for lane in range(32)]


def _same_bits(xs, ys) -> bool:
    return all(np.asarray(x).tobytes() == np.asarray(y).tobytes() for x, y in zip(xs, ys))
