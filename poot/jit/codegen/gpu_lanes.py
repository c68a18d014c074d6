"""What GPU schedules share to earn the memory bandwidth: 16-byte accesses and loops that give a thread
several elements.

A thread that handles `vector_width` consecutive elements per step, starting at a multiple of that
width, issues loads and stores the backend merges into one 16-byte access per buffer (NVPTX and AMDGPU
run LLVM's load-store vectorizer; the kernel entry declares every buffer 16-byte aligned, which holds
because each is a whole device allocation). The consecutive elements go to separate accumulators in a
reduction, so their adds do not wait on one another. Nothing here changes what is computed: the order
of every sum is fixed by the shape alone.

Combines across threads use warp shuffles where the device has them (`shuffles(caps)`: a target that
declares `has_shuffles` in poot/jit/llvm/targets, PTX, AMDGCN and SPIR-V, on a device whose subgroups
exchange 32 consecutive threads or more: every CUDA and ROCm GPU, Vulkan on an NVIDIA GPU): a butterfly
of ShuffleXor over each 32 lanes, then one shared-memory round across the warps, instead of a
shared-memory tree of log2(lanes) barrier rounds. Other SPIR-V devices keep the tree (lavapipe's
subgroups hold 8 lanes; poot's wgpu device enables no subgroup operations, its caps say 1); the CPU
runs one thread per row.
"""
from __future__ import annotations

from poot.jit.kir.builder import binary, const, shuffle_xor
from poot.jit.kir.model import SHUFFLE_LANES
from poot.jit.llvm.targets import target_of

WARP = SHUFFLE_LANES

VECTOR_BYTES = 16
MAX_VECTOR = 8
UNROLL = 2           # blocks per loop step: two 16-byte loads per buffer in flight per thread


UNKNOWN_CORES = 128  # multiprocessors assumed where the device does not count them (wgpu, vulkan say 1)


def multiprocessors(caps) -> int:
    """The device's multiprocessor count for sizing grids; UNKNOWN_CORES where it reports none or 1."""
    return caps.cores if caps.cores and caps.cores > 1 else UNKNOWN_CORES


def shuffles(caps) -> bool:
    """Whether combines on this device may exchange values by ShuffleXor (see the module docstring)."""
    return caps is not None and target_of(caps).has_shuffles and caps.subgroup_size >= WARP


def butterfly(kb, values, combine, lanes: int = WARP):
    """Combine `values` (a tuple of expressions: a value, or a value and its index) over each aligned run
    of `lanes` threads (a power of two <= 32) with ShuffleXor; every thread of the run ends with the
    same result when `combine(own, other)` is commutative (partners combine the same two halves)."""
    values = tuple(kb.let("bv", v) for v in values)
    m = lanes // 2
    while m >= 1:
        other = tuple(kb.let("bx", shuffle_xor(v, m)) for v in values)
        values = tuple(kb.let("bv", v) for v in combine(values, other))
        m //= 2
    return values


def store_bytes(caps) -> int:
    """The widest store per thread on this device: its target's merged store (16 bytes where LLVM's
    load-store vectorizer runs), narrowed by the device's own Capabilities.vector_store_bytes (wgpu: 4)."""
    return min(target_of(caps).vector_store_bytes, caps.vector_store_bytes)


WORD_BYTES = 4       # what SPIR-V keeps 8- and 16-bit elements in


def access_bytes(caps, dtypes, widest: int) -> int:
    """The widest access per thread for elements of `dtypes` on this device: `widest` (16 bytes for loads,
    `store_bytes(caps)` where the thread also stores), but one 32-bit word where SPIR-V packs the narrowest
    of them. SPIR-V keeps 8- and 16-bit elements in words (a load and a shift; a store is an atomic on the
    word) and merges none of a thread's accesses, so eight bf16 a thread became four word loads (and eight
    atomics) at a 16-byte stride per lane; one word a thread keeps a warp on 128 contiguous bytes. H100
    through Vulkan, kernel time: a bf16 GEMV 14336 x 4096 56.0 us against 71.1 (gpu_gemv.py), the bf16
    mixed chain over 64M elements 0.414 ms against 0.716 (gpu_pointwise.py); float32 keeps its 16-byte
    blocks. Row reductions (rows.py) take words too: bf16 softmax over 16384 x 4096, 0.660 -> 0.337 ms,
    layer_norm 0.660 -> 0.219 ms; the flat split sums (gpu_split.py) keep 16-byte blocks, as fast or faster."""
    narrowest = min((d.itemsize for d in dtypes), default=WORD_BYTES)
    if caps is not None and narrowest < WORD_BYTES and target_of(caps).packs_narrow:
        return min(widest, WORD_BYTES)
    return widest


def vector_width(dtypes, access_bytes: int = VECTOR_BYTES) -> int:
    """Elements per access of at most `access_bytes` (16; a kernel whose stores take that width passes the
    device's Capabilities.vector_store_bytes, 4 on wgpu) of the narrowest of `dtypes` (bool and 8-bit
    types capped at 8)."""
    narrowest = min((d.itemsize for d in dtypes), default=4)
    return max(1, min(MAX_VECTOR, min(access_bytes, VECTOR_BYTES) // max(narrowest, 1)))


def lane_loop(ctx, lane, lanes: int, vec: int, j0, j1, body, unroll: int = UNROLL) -> None:
    """Cover positions [j0, j1) with `lanes` threads: steps of `unroll` blocks of lanes * vec positions,
    each thread taking `vec` consecutive ones per block (`body(base, slot)` for position base + slot,
    slot 0..vec-1; the blocks of a step are separate loads, in flight together), then the positions
    left after the last whole step strided by lanes (`body(j, 0)`). j0 must be a multiple of vec for the
    16-byte access. A body should add the slot last (an index `(row * K + base) + slot`): LLVM then
    sees the vec accesses as one base plus constants and merges them; `row * K + (base + slot)`
    came out as a scalar, a 2-wide and a 4-wide load for 8 bf16 (the first block of each step)."""
    kb, idt = ctx.kb, ctx.idt
    j0 = const(j0, idt) if isinstance(j0, int) else j0
    j1 = const(j1, idt) if isinstance(j1, int) else j1
    tail = j0
    if vec > 1:
        block = lanes * vec
        step = block * unroll
        tail = kb.let("jv", binary("add", j0, binary("mul", binary("div", binary("sub", j1, j0), step), step)))
        with kb.for_("jb", binary("add", j0, binary("mul", lane, vec)), tail, step=step, dtype=idt) as jb:
            for u in range(unroll):
                at = binary("add", jb, u * block) if u else jb
                for v in range(vec):
                    body(at, v)
    with kb.for_("jt", binary("add", tail, lane), j1, step=lanes, dtype=idt) as jt:
        body(jt, 0)


def fold_pairwise(values, combine):
    """Combine accumulators pairwise ((a0+a1)+(a2+a3)...): a fixed order, shallower than a chain."""
    values = list(values)
    while len(values) > 1:
        values = [combine(values[k], values[k + 1]) if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]
