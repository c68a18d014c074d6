"""GPU matrix-vector products: C[b, m, 0] = sum_k A[b, m, k] B[b, k, 0] (the planner's `matmul` with one
output column, what `w @ x` for a vector x becomes).

The generic matmul schedule gives each thread one output and walks K alone: a 4096 x 4096 GEMV then runs
16 workgroups and reads each row of A with one thread (uncoalesced); it measured 2.8% of the H200's copy
bandwidth. Here a team of `lanes` threads owns `rows` outputs (usually 1): they stride over the rows of A
together (coalesced; 16-bit weights are loaded narrow and multiplied in float32), each taking
`vector_width` consecutive elements per step into as many accumulators per row (16-byte loads of A and
of the vector where K keeps the rows aligned; gpu_lanes.py), then each row's lanes combine their
partials: a warp butterfly, and one shared round for teams wider than a warp (gpu_lanes.shuffles; a
shared-memory tree on SPIR-V). One load of the vector serves a team's rows; the vector stays in cache.

The schedule (lanes, teams per workgroup, blocks per step, rows per team) was measured on an H100 with
the weights of each shape rotated over 256 MiB, so that none stays in L2 as none does in a decoder (a
sweep of POOT_GPU_GEMV_SCHEDULE over the shapes of Qwen2.5-0.5B and Llama-3-8B):
- rows of at least LONG_ROW elements: one row per 256-thread workgroup, two blocks per step (4096 x 4096
  bf16 2.5 TB/s, 896 x 4864 1.6 TB/s, against 2.0 and 0.64 with warps carrying 4 rows), lanes halved
  (teams filling the workgroup) while a thread would not get one whole step of a row;
- shorter 16-bit rows: warps carrying 4 rows each, one block per step, where that makes at least
  MANY_GROUPS workgroups (the LM head 151936 x 896: 2.9 TB/s, against 2.4 with 128 lanes); else 128
  lanes per row (1152 x 896: 0.80 TB/s, against 0.57: a few rows leave most of the GPU idle).
Where the lanes combine through a shared-memory tree (SPIR-V: wgpu, Vulkan), its barrier rounds cost more
than a wide team gains: rows of at least LONG_ROW get a warp-sized team each, 8 a workgroup, two blocks per
step (an H100 through Vulkan, kernel time: bf16 14336 x 4096 71.5 us against 89 with a workgroup a row,
4096 x 4096 26.0 against 31.7; 64- and 128-lane teams measured between the two). On SPIR-V a lane takes
one 32-bit word (two elements) of a 16-bit row per block, not eight elements (gpu_lanes.access_bytes: bf16
14336 x 4096 56.0 us against 71.1, 4096 x 4096 19.4 against 25.9).
POOT_GPU_GEMV_SCHEDULE forces any other.

The imported GEMV assets (kernels/contraction/gemv_{f32,bf16}.py: 64 lanes x 4 rows per workgroup,
one element per load) take f32 and bf16 [N, K] @ [K, 1] products instead where `gemv_path` says so:
POOT_GPU_GEMV=asset|generated forces a path; auto is the rule measured on the H200 (the generated
schedule, faster at every size there: bench_matmul --gemv-path).
"""
from __future__ import annotations

import contextlib
import os

from poot import dtypes as dt
from poot.errors import ConfigError
from poot.fuse.indexing import unravel
from poot.jit.kir.builder import binary, cast, const
from poot.jit.kir.model import Index
from poot.jit.codegen.common import (GPU_WORKGROUP, KernelContext, Launch, StepCode, asset, ceil_div, env_choice,
                                     groups_for)
from poot.jit.codegen.gpu_lanes import (UNROLL, VECTOR_BYTES, WARP, access_bytes, butterfly, fold_pairwise,
                                       lane_loop, shuffles, vector_width)
from poot.jit.codegen.opaque import _batch
from poot.jit.llvm.targets import KernelStyle

MIN_K = 2 * GPU_WORKGROUP    # shorter rows keep one thread per output
MIN_LANES = 32
LONG_ROW = 2048              # row length from which a row gets a whole workgroup
MANY_GROUPS = 256            # workgroups of 4-row warps that keep an H100's 132 SMs busy
SHORT_LANES = 128            # lanes per row for few short rows
ASSETS = {dt.float32: "gemv_f32", dt.bfloat16: "gemv_bf16"}
AUTO_PATH = "generated"
SCHEDULE_ENV = "POOT_GPU_GEMV_SCHEDULE"


def gemv_path() -> str:
    mode = env_choice("POOT_GPU_GEMV", ("auto", "asset", "generated"))
    return AUTO_PATH if mode == "auto" else mode


def asset_applies(step) -> bool:
    """An [N, K] @ [K, 1] product of one dtype that a GEMV asset computes."""
    a, b = (v.aval for v in step.eqn.inputs)
    out = step.eqn.out.aval
    return (a.ndim == 2 and b.ndim == 2 and b.shape[1] == 1 and a.size > 0 and out.dtype in ASSETS
            and a.dtype is out.dtype and b.dtype is out.dtype)


def generate_asset_gemv(step) -> StepCode:
    """One launch of the committed GEMV asset: w, x, y bound to A, the vector and the result."""
    a, b = step.eqn.inputs
    kernel = asset(ASSETS[step.eqn.out.aval.dtype])
    rows = kernel.workgroup[1]
    bindings = [("var", a), ("var", b), ("var", step.eqn.out)]
    return StepCode([Launch(kernel, bindings, groups_for(ceil_div(a.aval.shape[0], rows)))])


def applies(step) -> bool:
    a, _ = step.eqn.inputs
    out = step.eqn.out.aval
    return out.shape[-1] == 1 and a.aval.shape[-1] >= MIN_K and out.size > 0 and dt.is_float(out.dtype)


def schedule(n: int, K: int, vec: int, narrow: bool, tree: bool = False) -> tuple[int, int, int, int]:
    """(lanes per row, teams per workgroup, blocks per loop step, rows per team) for an n-row GEMV over
    rows of K (`narrow`: 16-bit weights; `tree`: lanes combine through a shared-memory tree, not shuffles;
    see the module docstring). POOT_GPU_GEMV_SCHEDULE=
    "lanes,teams,unroll[,rows]" forces one, to measure variants in one run (set it before a shape's
    first call: programs are cached by graph)."""
    forced = os.environ.get(SCHEDULE_ENV, "").strip().lower()
    if forced and forced != "auto":
        try:
            lanes, teams, unroll, per = ([int(x) for x in forced.split(",")] + [1])[:4]
        except ValueError:
            lanes = teams = unroll = per = 0
        threads = lanes * teams
        if (len(forced.split(",")) not in (3, 4) or lanes < MIN_LANES or lanes & (lanes - 1) or teams < 1
                or threads > 1024 or threads % MIN_LANES or not 1 <= unroll <= 8 or not 1 <= per <= 8):
            raise ConfigError(f"{SCHEDULE_ENV} is '{forced}'; use 'lanes,teams,unroll[,rows]': lanes a power of two "
                            ">= 32, lanes * teams <= 1024 threads, unroll 1..8, rows per team 1..8 (or auto)")
        return lanes, teams, unroll, per
    if tree and K >= LONG_ROW:
        return WARP, GPU_WORKGROUP // WARP, UNROLL, 1
    short = K < LONG_ROW and K >= WARP * vec
    if narrow and short and ceil_div(n, 4 * (GPU_WORKGROUP // WARP)) >= MANY_GROUPS:
        return WARP, GPU_WORKGROUP // WARP, 1, 4
    if narrow and short:       # measured best even where a lane gets less than one block of the row
        lanes = SHORT_LANES
        while lanes > MIN_LANES and 2 * K < lanes * vec:
            lanes //= 2
        return lanes, GPU_WORKGROUP // lanes, UNROLL, 1
    lanes = GPU_WORKGROUP
    while lanes > MIN_LANES and K < lanes * vec * UNROLL:
        lanes //= 2
    return lanes, GPU_WORKGROUP // lanes, UNROLL, 1


def generate_gpu_gemv(step, plan, caps) -> StepCode:
    e = step.eqn
    a, b = e.inputs
    out = e.out.aval
    n, K = out.size, a.aval.shape[-1]
    acc_t = dt.float32 if out.dtype in (dt.float16, dt.bfloat16) else out.dtype
    dtypes = [a.aval.dtype, b.aval.dtype]
    vec = vector_width(dtypes, access_bytes(caps, dtypes, VECTOR_BYTES))
    lanes, teams, unroll, per = schedule(n, K, vec, a.aval.dtype.itemsize == 2, tree=not shuffles(caps))
    threads, rows = lanes * teams, teams * per
    ctx = KernelContext(step, plan, KernelStyle.GPU, workgroup=(threads, 1, 1))
    kb, gen = ctx.kb, ctx.gen
    local = kb.let("local", cast(Index("local", 0), ctx.idt))
    lane = kb.let("lane", binary("rem", local, lanes)) if teams > 1 else local
    group = cast(Index("group", 0), ctx.idt)
    team = binary("add", binary("mul", group, teams), binary("div", local, lanes)) if teams > 1 else group
    first = kb.let("row", binary("mul", team, per) if per > 1 else team)
    partial_rows = n % rows != 0
    # a team's rows past the last one load the last row (no branch in the loop) and store nothing
    rows_of = [first] + [kb.let("row", binary("add", first, r)) for r in range(1, per)]
    loads_of = [kb.let("lrow", binary("min", r, n - 1)) if partial_rows and k else r for k, r in enumerate(rows_of)]
    idxs = [unravel(ctx.coord(f"i{k}", n, r), out.shape) for k, r in enumerate(loads_of)]
    accs = [[kb.local("acc", acc_t, const(0, acc_t)) for _ in range(vec)] for _ in range(per)]

    def term(base, slot):
        gen.push()
        kf = ctx.coord("kk", K, base) + slot       # the slot added last: see lane_loop
        for idx, acc in zip(idxs, accs):           # one load of the vector serves the team's rows
            ai = _batch(idx[:-2], out.shape[:-2], a.aval.shape[:-2]) + [idx[-2], kf]
            bi = _batch(idx[:-2], out.shape[:-2], b.aval.shape[:-2]) + [kf, idx[-1]]
            prod = binary("mul", cast(gen.value(a, ai), acc_t), cast(gen.value(b, bi), acc_t))
            kb.assign(acc[slot], binary("add", acc[slot], prod))
        gen.pop()

    with kb.if_(binary("lt", first, n)) if partial_rows else contextlib.nullcontext():
        lane_loop(ctx, lane, lanes, vec, 0, K, term, unroll=unroll)
    combine = _shuffle_rows if shuffles(caps) else _tree_rows
    for k, (row, acc) in enumerate(zip(rows_of, accs)):
        total = kb.let("rs", fold_pairwise(acc, lambda x, y: binary("add", x, y)))
        total = combine(ctx, total, local, lane, lanes, threads, acc_t)
        done = binary("eq", lane, 0)
        with kb.if_(binary("and", done, binary("lt", row, n)) if partial_rows else done):
            _store_row(ctx, row, cast(total, out.dtype), n, f"o{k}")
    return StepCode([Launch(ctx.build(), ctx.bindings, groups_for(ceil_div(n, rows)))])


def _store_row(ctx, row, product, n: int, coord: str) -> None:
    """Store one row's result: the product, or, where the step carries a fused epilogue
    (poot/jit/runtime/epilogues.py), each epilogue root at that row, computed from the product (already
    rounded to its dtype, as a stored product would be) and the epilogue's other inputs."""
    step, kb, gen = ctx.step, ctx.kb, ctx.gen
    if not step.epilogue_of:
        kb.store(ctx.out_names[0], row, product)
        return
    gen.push()                                  # this row's values are not another row's
    value = kb.let("prod", product)
    for vid in step.epilogue_of:
        gen.reduced[vid] = value
    at = ctx.coord(coord, n, row)
    for name, root in zip(ctx.out_names, step.outputs):
        kb.store(name, row, cast(gen.value(root, unravel(at, root.aval.shape)), root.aval.dtype))
    for vid in step.epilogue_of:
        del gen.reduced[vid]
    gen.pop()


def _shuffle_rows(ctx, total, local, lane, lanes, threads, acc_t):
    """Each row's sum by a warp butterfly; rows wider than a warp add their warps' sums through shared
    memory (one barrier). A row of one warp needs no shared memory and no barrier."""
    kb = ctx.kb
    (total,) = butterfly(kb, (total,), lambda own, other: (binary("add", own[0], other[0]),))
    warps = lanes // WARP
    if warps == 1:
        return total
    sums = kb.shared("sw", acc_t, threads // WARP)
    with kb.if_(binary("eq", binary("rem", local, WARP), 0)):
        kb.store(sums, binary("div", local, WARP), total)
    kb.barrier()
    first = kb.let("w0", binary("mul", binary("div", local, lanes), warps))
    return kb.let("rt", fold_pairwise([kb.load(sums, binary("add", first, w) if w else first, acc_t)
                                       for w in range(warps)], lambda x, y: binary("add", x, y)))


def _tree_rows(ctx, total, local, lane, lanes, threads, acc_t):
    """Each row's sum by a shared-memory tree over its lanes (targets without shuffles)."""
    kb = ctx.kb
    sums = kb.shared("sv", acc_t, threads)    # each row's lanes side by side: a tree per row
    kb.store(sums, local, total)
    kb.barrier()
    s = lanes // 2
    while s >= 1:
        with kb.if_(binary("lt", lane, s)):
            kb.store(sums, local, binary("add", kb.load(sums, local, acc_t),
                                         kb.load(sums, binary("add", local, s), acc_t)))
        kb.barrier()
        s //= 2
    return kb.load(sums, local, acc_t)
