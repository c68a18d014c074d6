"""KIR, the kernel IR: one typed, structured IR for generated and imported kernels, taken by every target.

A kernel is SPMD: the body runs once per thread of a 3-D grid of workgroups (`workgroup` threads each,
at most 3 dimensions). The body is a tree of statements (structured control flow: if, for, while,
break, continue, return), expressions are pure trees whose every node carries its scalar dtype (the
same `poot.dtypes` objects the arrays use), and mutable scalar locals are declared up front.

Semantics every target implements (the emulator in `poot.kernel` is the executable spec):
- Index intrinsics (`Index`) are uint32. thread = group * group_size + local, per axis.
- Integer arithmetic wraps (two's complement). `div`/`rem` on integers truncate toward zero (C);
  a zero divisor gives 0 (never a hardware fault) and so does INT_MIN / -1's overflow. Shifts
  take the shift amount modulo nothing: amounts >= the width give 0 (or -1 for a negative `shr`).
- `shr` is arithmetic on signed types, logical on unsigned ones.
- Float ops follow IEEE 754 with round-to-nearest; f16/bf16 operations compute in float32 and round
  once per operation (NumPy's semantics). `min`/`max` propagate NaN (NumPy's maximum/minimum).
  Float-to-int conversion saturates; NaN converts to 0.
- Loads and stores index elements, not bytes. With `checks` on, an out-of-range index traps with
  `TRAP_BOUNDS` instead of touching memory. `Trap(code)` ends the kernel for that thread; the
  runtime raises poot.KernelTrap at the next synchronize.
- Barriers synchronize the workgroup and order shared and buffer memory; they are only legal in
  control flow that every thread of the workgroup takes the same way (the verifier checks it).
- `ShuffleXor(x, mask)` is x as the thread whose local x index is (this thread's) ^ mask holds it: a
  subgroup exchange inside each aligned run of 32 threads (a warp), for combines without shared
  memory or barriers. Legal only in a workgroup (32k, 1, 1) and where a Barrier would be (every thread
  evaluates it together). Lowered on PTX, AMDGCN and SPIR-V (OpGroupNonUniformShuffle, run only by a
  device whose subgroups hold the lanes exchanged: `Kernel.lane_span`); on the CPU lowering raises
  NotBuiltError, and kernel generation uses it only where `caps` allow (poot/jit/codegen/gpu_lanes.py `shuffles`).
- `Shuffle(x, index)` is x as the thread at lane `index % 32` of this thread's aligned run of 32 threads
  holds it (the index a uint32 value, any per thread). Same rules and targets as ShuffleXor.
- `Mma(a, b, c, elem)` is element `elem` (0..3) of this lane's part of D = A @ B + C, a warp-level
  m16n8k16 multiply-accumulate over the 32 lanes of the thread's aligned run: A 16x16 and B 16x8 of
  bfloat16 or float16, C and D 16x8 float32. Each lane holds 8 elements of A, 4 of B and 4 of C and D,
  placed as PTX's `mma.m16n8k16.row.col` fragments (g = lane // 4, t = lane % 4):
  a[i] = A[g + 8 * (i % 4 >= 2), 2 * t + i % 2 + 8 * (i >= 4)], b[i] = B[2 * t + i % 2 + 8 * (i >= 2), g],
  c[i] = C[g + 8 * (i >= 2), 2 * t + i % 2] (and D likewise). The products are exact in float32, the sum is
  accumulated in float32 (the emulator rounds the exact sum once). Where a Barrier would be legal only;
  lowered on PTX for sm_80 and newer (LLVM's `llvm.nvvm.mma.m16n8k16.row.col.bf16` / `.f32.f32`); elsewhere
  lowering raises NotBuiltError. Equal Mma operands in one basic block share one instruction.
  Two more shapes (`shape`, MMA_SHAPES) are AMD matrix cores, D = A @ B + C with A, B, C, D 16x16 (A and B
  bfloat16 or float16, C and D float32, the products exact, the sum accumulated in float32):
  - "mfma_16x16x16": over a wave of 64 lanes (workgroup (64k, 1, 1)); lane l (i = l % 16, q = l // 16)
    holds a[j] = A[i, 4q + j], b[j] = B[4q + j, i], c[j] = C[4q + j, i] (D likewise), j in 0..3.
    Lowered on AMDGCN for CDNA (gfx90a, gfx942, gfx950) to `llvm.amdgcn.mfma.f32.16x16x16bf16.1k` /
    `.16x16x16f16`.
  - "wmma_16x16x16": over a wave of 32 lanes; lane l (i = l % 16, h = l // 16) holds a[j] = A[i, j] and
    b[j] = B[j, i], j in 0..15 (lanes l and l + 16 must hold the same A and B elements: the hardware
    reads them from either half), and c[j] = C[2j + h, i] (D likewise), j in 0..7. Lowered on AMDGCN for
    RDNA3 (gfx11) to `llvm.amdgcn.wmma.f32.16x16x16.bf16` / `.f16`.
- `LdMatrix(shared, index, trans, elem)` is uint32 word `elem` (0..3) of this lane's part of four 8x8
  matrices of 16-bit elements that the warp reads from a uint32 shared array (PTX
  `ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`). Each lane passes `index`, the word index (a
  multiple of 4: 16 bytes) of one 8-element row: lanes 8i..8i+7 give rows 0..7 of matrix i. Lane l
  (g = l // 4, t = l % 4) receives, for matrix i: without `trans`, word t of the row lane 8i+g gave
  (elements 2t, 2t+1 of row g, the lower in the low half); with `trans`, element (row 2t, column g) in
  the low half and (row 2t+1, column g) in the high half (columns: the 8 elements of each row). Warp-level
  like Mma (legal only where a Barrier would be, workgroup (32k, 1, 1)); the result differs per lane.
  Lowered on PTX for sm_75 and newer; elsewhere NotBuiltError. Equal operands in one basic block with no
  statement between them but assignments share one instruction (it reads memory: a store, barrier or
  asynchronous-copy statement in between gives a fresh read).
- `LoadX4(buffer, index, elem)` is uint32 word `elem` of the 16 bytes at word `index` (a multiple of 4)
  of a uint32 buffer or shared array: one 16-byte load on PTX (`ld.global.v4.u32` / `ld.shared.v4.u32`;
  buffers are 16-byte aligned), four element loads elsewhere. `StoreX4(buffer, index, values)` writes
  the 4 words likewise. Per thread. With `checks`, an index that is no multiple of 4 or whose 4 words
  leave the array traps with TRAP_BOUNDS. Shared caching as for LdMatrix.
- `CopyAsync(dst, dst_index, src, src_index, ok)` starts copying 16 bytes (4 uint32 words) from uint32
  buffer parameter `src` at word `src_index` to uint32 shared array `dst` at word `dst_index` (both
  multiples of 4); when `ok` is false the 4 destination words are zero-filled and `src` is not read
  (PTX `cp.async.cg.shared.global` with src-size 0), so a tile's edges need no branch. `AsyncCommit()`
  closes this thread's copies started since the last commit into a group (`cp.async.commit_group`);
  `AsyncWait(pending)` waits until at most `pending` (a constant >= 0) of this thread's committed groups
  are still in flight (`cp.async.wait_group`). A copy's destination is defined only after a wait that
  covers its group; other threads see it only after a Barrier that follows that wait. Per thread. With
  `checks`, a bad `dst_index` (and, when ok, `src_index`) traps with TRAP_BOUNDS as for LoadX4. The
  emulator queues each thread's copies and applies a group's at the wait that covers it (a read before
  the wait sees the old shared contents), so kernels that forget the wait fail under emulation too.
  Lowered on PTX for sm_80 and newer; elsewhere NotBuiltError.
- `Wgmma(a_shared, a_index, b_shared, b_index, c, elem, inputs, n, bt)` is element `elem` (0..n/2 - 1) of
  this thread's part of D = A @ B + C over a warpgroup (an aligned run of 128 threads by local x index:
  workgroup (128k, 1, 1)): A 64 x 64 and B 64 x n (n 64, 128 or 256) of `inputs` ("bf16" or "f16") read from
  uint32 shared arrays, C and D 64 x n float32, in four steps of 16 k (PTX `wgmma.mma_async.m64n{n}k16`
  four times, then a wait: the result is complete when the expression is). Both operands are lines of 128
  bytes whose 16-byte chunk c of line r is stored at chunk c ^ (r % 8) (the 128-byte swizzle): A's line m
  holds row m (64 elements of k) at word `a_index` + 32 m; B's line 64 j + k holds B[k, 64 j : 64 j + 64]
  at word `b_index` + 32 (64 j + k), or with `bt` (B given transposed, as K is in Q @ K^T) line j holds
  B[:, j]. Each index is a multiple of 256 words (1 KiB): the swizzle is taken from the address, and a
  shared array a Wgmma reads starts 1 KiB-aligned. Thread t of
  the warpgroup (w = t // 32, l = t % 32) holds c[4 j + i] = C[16 w + l // 4 + 8 (i >= 2), 8 j + 2 (l % 4) +
  i % 2] (D likewise), j in 0..n/8 - 1: mma's C fragment per 8 columns. Every thread of the warpgroup passes
  the same indices. The products are exact, each step's sum is accumulated in float32. Legal where a
  Barrier would be; the shared memory it reads must be written before a `FenceProxyAsync` and a Barrier.
  Lowered on PTX for sm_90a only (Hopper); elsewhere NotBuiltError. One instruction sequence per distinct
  operand tuple in a basic block, as for LdMatrix.
- `FenceProxyAsync()` orders this thread's earlier shared-memory writes (stores, completed copies) before
  later reads by the tensor cores' asynchronous proxy (Wgmma): `fence.proxy.async.shared::cta` on PTX, put
  between a thread's writes and the Barrier before a Wgmma that reads them. Nothing elsewhere.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Union

from poot import dtypes as dt
from poot.dtypes import DType

TRAP_BOUNDS = 1      # a checked buffer access out of range
TRAP_ASSERT = 2      # first code for `assert` statements; later asserts count up from here
TRAP_MISALIGNED = 0x7FFF0001   # a `stream` buffer whose base is not 64-byte aligned (CPU)
TRAP_MESSAGES = {TRAP_BOUNDS: "buffer index out of bounds",
                 TRAP_MISALIGNED: "a 'stream' buffer is not 64-byte aligned"}


class Access(enum.Enum):
    READ = "in"
    WRITE = "out"
    READ_WRITE = "inout"
    # written once per element, in order, and not read again soon (a large fresh result): the CPU
    # target stores it past the caches (no read-for-ownership of the destination). Its base must be
    # 64-byte aligned, as every buffer the CPU device allocates is; a launch on another traps with
    # TRAP_MISALIGNED. Other targets treat it as "out".
    STREAM = "stream"

    @property
    def writable(self) -> bool:
        return self is not Access.READ


# --- declarations --------------------------------------------------------------------------------
@dataclass(frozen=True)
class BufferParam:
    name: str
    dtype: DType
    access: Access


@dataclass(frozen=True)
class ScalarParam:
    name: str
    dtype: DType


Param = Union[BufferParam, ScalarParam]


@dataclass(frozen=True)
class Local:
    name: str
    dtype: DType


@dataclass(frozen=True)
class SharedArray:
    """Workgroup-shared memory: `size` elements, visible to the threads of one workgroup."""
    name: str
    dtype: DType
    size: int


# --- expressions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Const:
    value: Union[bool, int, float]
    dtype: DType


@dataclass(frozen=True)
class Read:
    """The value of a local or a scalar parameter."""
    name: str
    dtype: DType


@dataclass(frozen=True)
class Load:
    """`buffer[index]` of a buffer parameter or a shared array."""
    buffer: str
    index: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Len:
    """Number of elements of a buffer parameter (uint32)."""
    buffer: str
    dtype: DType = dt.uint32


UNARY_OPS = frozenset({
    "neg", "not", "bitnot", "abs", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "floor", "ceil", "trunc", "round", "sign", "isnan", "isinf", "isfinite",
    "fast_exp2",   # 2**x to within a few ulp, tiny results flushed to zero (see FAST_EXP2)
})
# fast_exp2 is exp2 where the target has nothing faster, and the emulator computes exp2; PTX lowers it to
# ex2.approx.ftz.f32 (relative error below 2**-22, subnormal results 0): the exponential of an online
# softmax, where the accurate exp's range reduction costs more than the tensor-core work it feeds.
FAST_EXP2 = "fast_exp2"
# ops whose result is bool whatever the operand
PREDICATE_UNARY = frozenset({"isnan", "isinf", "isfinite"})
FLOAT_UNARY = UNARY_OPS - {"neg", "not", "bitnot", "abs", "sign"}

BINARY_OPS = frozenset({
    "add", "sub", "mul", "div", "rem", "min", "max", "pow", "atan2", "hypot", "copysign",
    "nextafter", "and", "or", "xor", "shl", "shr", "eq", "ne", "lt", "le", "gt", "ge",
    "add_nocontract",  # an add that must not be contracted into an FMA with a neighbouring mul
    # accumulator combines of reductions: like add/mul/min/max, but the target may reassociate them
    # (e.g. vectorize a reduction loop with several partial accumulators)
    "add_reassoc", "mul_reassoc", "min_reassoc", "max_reassoc",
})
COMPARE_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
FLOAT_BINARY = frozenset({"pow", "atan2", "hypot", "copysign", "nextafter"})
BIT_BINARY = frozenset({"and", "or", "xor", "shl", "shr"})


@dataclass(frozen=True)
class Unary:
    op: str
    x: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Binary:
    op: str
    a: "Expr"
    b: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Select:
    cond: "Expr"
    a: "Expr"
    b: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Fma:
    """a * b + c with one rounding (floats only)."""
    a: "Expr"
    b: "Expr"
    c: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Cast:
    """Value conversion (int<->float saturating, widening, narrowing, to/from bool)."""
    x: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Bitcast:
    """Reinterpret the bits of `x` as another type of the same width."""
    x: "Expr"
    dtype: DType


SHUFFLE_LANES = 32   # threads one ShuffleXor exchanges within (masks 1..31)


@dataclass(frozen=True)
class ShuffleXor:
    """`x` of the thread whose local x index is this thread's ^ `mask` (a constant in 1..31)."""
    x: "Expr"
    mask: int
    dtype: DType


@dataclass(frozen=True)
class Shuffle:
    """`x` of the thread at lane `index % 32` of this thread's aligned run of 32 threads (uint32 index)."""
    x: "Expr"
    index: "Expr"
    dtype: DType


@dataclass(frozen=True)
class MmaShape:
    """One matrix multiply-accumulate instruction family: the elements of A, B and C/D each lane holds,
    the lanes that compute one product together, and the kernel language's name for it (`pt.<op>`)."""
    op: str
    a: int
    b: int
    c: int
    lanes: int

    def __iter__(self):         # (a, b, c): the per-lane operand counts
        return iter((self.a, self.b, self.c))


MMA_SHAPES = {
    "m16n8k16": MmaShape("mma_m16n8k16", 8, 4, 4, 32),          # PTX tensor cores, a warp
    "mfma_16x16x16": MmaShape("mfma_16x16x16", 4, 4, 4, 64),    # AMD CDNA matrix cores, a wave64
    "wmma_16x16x16": MmaShape("wmma_16x16x16", 16, 16, 8, 32),  # AMD RDNA3 matrix cores, a wave32
}
MMA_INPUTS = (dt.bfloat16, dt.float16)


@dataclass(frozen=True)
class Mma:
    """Element `elem` of this lane's D fragment of D = A @ B + C over the lanes of one matrix instruction
    (`shape`, a key of MMA_SHAPES; module docstring)."""
    a: tuple
    b: tuple
    c: tuple
    elem: int
    dtype: DType = dt.float32
    shape: str = "m16n8k16"


@dataclass(frozen=True)
class Wgmma:
    """Element `elem` of this thread's D fragment of a warpgroup's D = A @ B + C, A and B read from shared
    memory in the 128-byte-swizzled line layout (module docstring)."""
    a_shared: str
    a_index: "Expr"
    b_shared: str
    b_index: "Expr"
    c: tuple
    elem: int
    inputs: str                  # the dtype short name of A and B: "bf16" or "f16"
    n: int = 256                 # columns of B, C and D: one of WGMMA_N
    bt: bool = False             # B's lines are its columns (lines of k) rather than rows (lines of n)
    dtype: DType = dt.float32


WGMMA_LANES = 128       # threads of a warpgroup
WGMMA_M, WGMMA_K = 64, 64       # rows of A, C and D; k of one Wgmma
WGMMA_N = (64, 128, 256)        # its column counts; n / 2 float32 accumulators a thread
WGMMA_ALIGN_WORDS = 256         # 1 KiB: the swizzle repeats every 8 lines of 128 bytes
WGMMA_INPUTS = ("bf16", "f16")


def wgmma_operands(node) -> set:
    """The shared arrays a Wgmma anywhere under `node` (a kernel body, statement or expression) reads:
    empty where the kernel has none (it then needs no Hopper-specific build)."""
    out: set = set()
    if isinstance(node, Wgmma):
        out |= {node.a_shared, node.b_shared}
    if isinstance(node, (list, tuple)):
        for x in node:
            out |= wgmma_operands(x)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            out |= wgmma_operands(getattr(node, f.name))
    return out


X4_WORDS = 4        # uint32 words of one LdMatrix row, LoadX4/StoreX4 and CopyAsync (16 bytes)


@dataclass(frozen=True)
class LdMatrix:
    """Word `elem` of this lane's fragment of four 8x8 b16 matrices read from shared (module docstring)."""
    shared: str
    index: "Expr"
    trans: bool
    elem: int
    dtype: DType = dt.uint32


@dataclass(frozen=True)
class LoadX4:
    """Word `elem` of the 4 uint32 words at `index` (a multiple of 4) of a buffer or shared array."""
    buffer: str
    index: "Expr"
    elem: int
    dtype: DType = dt.uint32


INDEX_KINDS = ("thread", "local", "group", "group_size", "num_groups")


@dataclass(frozen=True)
class Index:
    """A grid coordinate: kind in INDEX_KINDS, axis 0 (x), 1 (y) or 2 (z). Always uint32."""
    kind: str
    axis: int
    dtype: DType = dt.uint32


Expr = Union[Const, Read, Load, Len, Unary, Binary, Select, Fma, Cast, Bitcast, Index, ShuffleXor, Shuffle, Mma,
             LdMatrix, LoadX4, Wgmma]


# --- statements ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Assign:
    name: str
    value: Expr


@dataclass(frozen=True)
class Store:
    buffer: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class AtomicAdd:
    """`buffer[index] += value` atomically (integers and float32); `result` receives the old value."""
    buffer: str
    index: Expr
    value: Expr
    result: Union[str, None] = None


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()


@dataclass(frozen=True)
class For:
    """`for var in range(start, stop, step)`: `step` is a non-zero constant; `var` a declared integer
    local that the body must not assign. start and stop are evaluated once, before the first iteration."""
    var: str
    start: Expr
    stop: Expr
    step: int
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class While:
    cond: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Break:
    pass


@dataclass(frozen=True)
class Continue:
    pass


@dataclass(frozen=True)
class Return:
    pass


@dataclass(frozen=True)
class Barrier:
    """Workgroup barrier with workgroup- and device-memory ordering."""


@dataclass(frozen=True)
class Trap:
    code: int


@dataclass(frozen=True)
class StoreX4:
    """`buffer[index:index + 4] = values` (4 uint32 words, index a multiple of 4) in one 16-byte store."""
    buffer: str
    index: Expr
    values: tuple


@dataclass(frozen=True)
class CopyAsync:
    """Start copying 4 uint32 words src[src_index:+4] -> dst[dst_index:+4] (zeros when not `ok`)."""
    dst: str
    dst_index: Expr
    src: str
    src_index: Expr
    ok: Expr


@dataclass(frozen=True)
class AsyncCommit:
    """Close this thread's CopyAsyncs since the last commit into one group."""


@dataclass(frozen=True)
class AsyncWait:
    """Wait until at most `pending` of this thread's committed copy groups are in flight."""
    pending: int


@dataclass(frozen=True)
class FenceProxyAsync:
    """Order this thread's earlier shared-memory writes before later Wgmma reads of them."""


Stmt = Union[Assign, Store, AtomicAdd, If, For, While, Break, Continue, Return, Barrier, Trap, StoreX4, CopyAsync,
             AsyncCommit, AsyncWait, FenceProxyAsync]


@dataclass(frozen=True)
class TrapSite:
    """What a trap code means, for poot.KernelTrap: a description and the source 'file:line'."""
    code: int
    what: str
    where: str = ""


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    locals: tuple[Local, ...] = ()
    shared: tuple[SharedArray, ...] = ()
    workgroup: tuple[int, int, int] = (64, 1, 1)
    checks: bool = True                       # bounds-check every buffer access
    cpu_vector_bits: int = 0                  # widest vectors the CPU lowering may prefer (0: LLVM's choice)
    traps: tuple[TrapSite, ...] = field(default=())

    @property
    def buffers(self) -> tuple[BufferParam, ...]:
        return tuple(p for p in self.params if isinstance(p, BufferParam))

    @property
    def scalars(self) -> tuple[ScalarParam, ...]:
        return tuple(p for p in self.params if isinstance(p, ScalarParam))

    @property
    def lane_span(self) -> int:
        """How many consecutive lanes of a subgroup the kernel exchanges values across: 0 without
        ShuffleXor/Shuffle, else the aligned run the widest one reaches (a mask's next power of two, 32
        for an indexed Shuffle). A device runs the kernel only where its subgroups hold that many."""
        span = 0
        stack: list = [self.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (tuple, list)):
                stack.extend(node)
                continue
            if isinstance(node, ShuffleXor):
                span = max(span, 1 << node.mask.bit_length())
            elif isinstance(node, Shuffle):
                span = max(span, 32)
            if dataclasses.is_dataclass(node) and not isinstance(node, type):
                stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        return span

