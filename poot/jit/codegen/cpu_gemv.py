"""CPU matrix products with a few result columns or rows, as generated kernels: the shape of every
linear layer in LLM decode, and of a few sequences decoded at once.

Why kernels of their own: the host path widened a 16-bit matrix to float32 on every call and then called
BLAS, so a bfloat16 GEMV read the weights once, wrote twice their size and read that again. Here each
matrix element is loaded once in its own dtype, widened in registers and multiplied in float32 into
float32 accumulators; the result is rounded to its dtype once, at the store. Reading the matrix's bytes
once is the bound, and both shapes are written so that LLVM's loop vectorizer meets it:

- "rows", C[b, n, j] = sum_k A[b, n, k] B[b, k, j] with at most MAX_COLUMNS columns j (w @ x): a
  workgroup (one thread on the CPU target) owns ROWS consecutive rows of A and walks their K elements in
  one loop: ROWS contiguous streams in flight, each element of B (small, in cache) loaded once per step
  for all of them. The accumulators combine with `add_reassoc`, which lets the vectorizer split each
  sum into vector lanes (the order of the sum is then the backend's, as in BLAS).
- "columns", C[b, j, n] = sum_k A[b, j, k] B[b, k, n] with at most MAX_COLUMNS rows j and more columns
  (x @ w, w stored [K, N]): workgroup p sums a piece of K, the rows of B scaled by A[j, k], into its
  float32 partials (a temporary of pieces x m x N); the rows of B are read whole and in order, and the
  inner loop runs along contiguous columns, so it vectorizes with no reassociation at all. A second
  launch adds the pieces in order and rounds once.

The workgroups are blocks of rows or pieces of K, so the CPU device splits a launch over its thread pool
by measured work like any other kernel; and since these are kernel launches, a jitted program's
recording keeps them in its one native chain. A transposed weight in `x @ w.T` for one row x is read in
place as `w @ x` (poot/fuse/row_products.py), and a float32 operand that only widens a 16-bit input
(`w_bf16 @ x_f32` promotes w) is read as that input (`widened_sources`). What the planner claims for
these kernels (the rule, with its measurements) is poot/jit/runtime/matvec.py; `shape_of` says which
products they compute at all.
"""
from __future__ import annotations

import contextlib
import math

from poot import dtypes as dt
from poot.errors import NotBuiltError
from poot.jit.kir.builder import KernelBuilder, binary, cast, const
from poot.jit.kir.model import Access, Index
from poot.jit.codegen.common import Launch, StepCode, ceil_div, groups_for

ROWS = 4                # rows-shape: rows of A per workgroup (streams in one loop, one load of B for all)
MAX_COLUMNS = 8         # result columns (rows-shape) or rows (columns-shape); wider products go to BLAS
PIECES = 16             # columns-shape: pieces of K summed apart (workgroups to share out), at most
MIN_PIECE = 32          # columns-shape: rows of B per piece, at least
COMBINE_BLOCK = 4096    # columns-shape: results per workgroup of the combine launch
FLOATS = (dt.float32, dt.bfloat16, dt.float16)
ACC = dt.float32


def shape_of(step) -> str | None:
    """"rows" for a product with at most MAX_COLUMNS result columns, "columns" for one with at most
    MAX_COLUMNS result rows and more columns, None where the kernels do not apply (other dtypes, an
    empty result, an empty sum)."""
    if step.kind != "matmul" or step.eqn is None:
        return None
    a, b = (v.aval for v in step.eqn.inputs)
    out = step.eqn.out.aval
    if not (a.ndim >= 2 and b.ndim >= 2 and a.dtype in FLOATS and b.dtype in FLOATS and out.dtype in FLOATS
            and out.size > 0 and a.shape[-1] > 0):
        return None
    if out.shape[-1] <= MAX_COLUMNS:
        return "rows"
    return "columns" if out.shape[-2] <= MAX_COLUMNS else None


def applies(step) -> bool:
    return shape_of(step) is not None


def generate_cpu_gemv(step, plan=None) -> StepCode:
    """The launches of one product: one over (batch, block of ROWS rows) workgroups for the rows-shape;
    for the columns-shape one over (batch, piece of K) into the float32 partials, then their combine.
    With the `plan`, an operand that only widens a 16-bit input is read as that input
    (`widened_sources`)."""
    shape = shape_of(step)
    if shape is None:
        operands = " @ ".join(str(v.aval) for v in step.eqn.inputs) if step.eqn is not None else step.kind
        raise NotBuiltError(f"cpu_gemv: step {step.name} ({operands}) is not a product this kernel computes: "
                            f"it takes float32, bfloat16 or float16 matmuls with at most {MAX_COLUMNS} result "
                            "columns or rows and a non-empty result")
    operands = list(step.eqn.inputs)
    for pos, (src, _) in (widened_sources(step, plan) if plan is not None else {}).items():
        operands[pos] = src
    return _rows_code(step, operands) if shape == "rows" else _columns_code(step, operands)


def widened_sources(step, plan) -> dict:
    """Operand position -> (16-bit float graph input, index of its convert step) for each float32
    operand of this matmul step that only widens that input: computed by a pointwise step of one
    `convert` that no other step reads and that is no result. The kernel reads the input itself, in
    registers, and the program skips the convert step (poot/jit/runtime/matvec.py), which would write
    the whole matrix in float32 on every call (`w_bf16 @ x_f32` promotes w)."""
    found = {}
    if step.kind != "matmul" or step.eqn is None:
        return found
    for pos, v in enumerate(step.eqn.inputs):
        e = plan.producer.get(v.id)
        if (v.aval.dtype is not dt.float32 or e is None or e.op != "convert"
                or e.inputs[0].aval.dtype not in (dt.bfloat16, dt.float16)):
            continue
        src = e.inputs[0]
        if not any(g.id == src.id for g in plan.graph.inputs) or any(o.id == v.id for o in plan.graph.outputs):
            continue
        writers = [i for i, s in enumerate(plan.steps) if any(o.id == v.id for o in s.outputs)]
        readers = [s for s in plan.steps if any(u.id == v.id for u in s.inputs)]
        if len(writers) != 1 or len(readers) != 1 or readers[0] is not step:
            continue
        writer = plan.steps[writers[0]]
        if writer.kind == "pointwise" and len(writer.outputs) == 1 and [u.id for u in writer.inputs] == [src.id]:
            found[pos] = (src, writers[0])
    return found


def pieces_for(k_len: int) -> int:
    """Pieces of K a columns-shape product is summed in: up to PIECES, each of MIN_PIECE rows or more."""
    return max(1, min(PIECES, k_len // MIN_PIECE))


class _Operands:
    """One kernel of a product under construction: its buffers (A, B, C and, with `partials`, the
    float32 temporary), the batch and block its workgroup computes, and each operand's element offset
    for that batch (NumPy broadcasting of the batch dimensions)."""

    def __init__(self, step, operands, name: str, blocks: int, partials: bool = False):
        e = step.eqn
        a, b = (v.aval for v in operands)
        out = e.out.aval
        self.m, self.n = out.shape[-2:]
        self.k = a.shape[-1]
        self.types = (a.dtype, b.dtype, out.dtype)
        self.batches = math.prod(out.shape[:-2])
        self.blocks = blocks
        self.idt = dt.int64
        self.kb = kb = KernelBuilder(name, workgroup=(1, 1, 1), checks=False)
        self.a = kb.buffer("a", a.dtype, Access.READ)
        self.b = kb.buffer("b", b.dtype, Access.READ)
        self.c = kb.buffer("c", out.dtype, Access.WRITE)
        self.bindings = [("var", operands[0]), ("var", operands[1]), ("var", e.out)]
        if partials:
            self.part = kb.buffer("part", ACC, Access.READ_WRITE)
            self.bindings.append(("temp", 0))
        group = kb.let("g", cast(Index("group", 0), self.idt))
        if self.batches > 1:
            self.batch = kb.let("bt", binary("div", group, self.const(blocks)))
            self.block = kb.let("blk", binary("rem", group, self.const(blocks)))
        else:
            self.batch, self.block = None, group
        self.a_base = self._offset(out.shape[:-2], a.shape[:-2], self.m * self.k)
        self.b_base = self._offset(out.shape[:-2], b.shape[:-2], self.k * self.n)
        self.c_base = self.per_batch(self.m * self.n)

    def const(self, v):
        return const(v, self.idt)

    def per_batch(self, size: int):
        """The element offset of this batch's slice of `size` elements (0 without batches)."""
        if self.batch is None:
            return self.const(0)
        return self.kb.let("bo", binary("mul", self.batch, self.const(size)))

    def _offset(self, out_batch, in_batch, matrix: int):
        """Element offset of an operand's matrix for this batch: an operand dimension of 1, or a
        missing one, repeats its matrix."""
        if self.batch is None or math.prod(in_batch) == 1:
            return self.const(0)
        kb = self.kb
        lead = len(out_batch) - len(in_batch)
        offset, stride, rest = None, matrix, self.batch
        for d in range(len(out_batch) - 1, -1, -1):       # innermost batch dimension first
            size = out_batch[d]
            coord = kb.let("bc", binary("rem", rest, self.const(size))) if d else rest
            if d:
                rest = kb.let("br", binary("div", rest, self.const(size)))
            if d >= lead and in_batch[d - lead] != 1:
                term = binary("mul", coord, self.const(stride))
                offset = term if offset is None else binary("add", offset, term)
            if d >= lead:
                stride *= in_batch[d - lead]
        return kb.let("boff", offset) if offset is not None else self.const(0)

    def launch(self) -> Launch:
        return Launch(self.kb.build(), self.bindings, groups_for(self.batches * self.blocks))


def _rows_code(step, operands) -> StepCode:
    """Rows-shape: the block's ROWS rows walked together, one accumulator per row and column (the last
    block of an uneven N clamps its extra rows onto the last row, loads them without a branch in the
    loop, and stores only the real ones)."""
    n, m = step.eqn.out.aval.shape[-2:]       # rows of A, result columns
    o = _Operands(step, operands, step.name, ceil_div(n, ROWS))
    kb, c_ = o.kb, o.const
    a_t, b_t, c_t = o.types
    k_len = o.k
    guarded = n % ROWS != 0
    first = kb.let("first", binary("mul", o.block, c_(ROWS)))
    row_ids = [first] + [kb.let("row", binary("add", first, c_(r))) for r in range(1, ROWS)]
    loads = [binary("min", r, c_(n - 1)) if guarded and i else r for i, r in enumerate(row_ids)]
    starts = [kb.let("ra", binary("add", o.a_base, binary("mul", r, c_(k_len)))) for r in loads]
    accs = [[kb.local("acc", ACC, const(0, ACC)) for _ in range(m)] for _ in range(ROWS)]
    with kb.for_("k", c_(0), c_(k_len), dtype=o.idt) as k:
        xk = binary("add", o.b_base, binary("mul", k, c_(m)) if m > 1 else k)
        xs = [kb.let("x", cast(kb.load(o.b, binary("add", xk, c_(j)) if j else xk, b_t), ACC)) for j in range(m)]
        for start, acc_row in zip(starts, accs):
            w = kb.let("w", cast(kb.load(o.a, binary("add", start, k), a_t), ACC))
            for acc, x in zip(acc_row, xs):
                kb.assign(acc, binary("add_reassoc", acc, binary("mul", w, x)))
    for i, (r, acc_row) in enumerate(zip(row_ids, accs)):
        with kb.if_(binary("lt", r, c_(n))) if guarded and i else contextlib.nullcontext():
            for j, acc in enumerate(acc_row):
                at = binary("add", o.c_base, binary("add", binary("mul", r, c_(m)), c_(j)))
                kb.store(o.c, at, cast(acc, c_t))
    return StepCode([o.launch()])


def _columns_code(step, operands) -> StepCode:
    """Columns-shape: workgroup p adds rows [k0, k1) of B, scaled by A[j, k], into its m x N float32
    partials; then the combine launch."""
    out = step.eqn.out.aval
    m, n = out.shape[-2:]
    k_len = operands[0].aval.shape[-1]
    per = ceil_div(k_len, pieces_for(k_len))
    pieces = ceil_div(k_len, per)
    o = _Operands(step, operands, step.name + "_pieces", pieces, partials=True)
    kb, c_ = o.kb, o.const
    a_t, b_t, _ = o.types
    part = kb.let("pp", binary("add", o.per_batch(pieces * m * n), binary("mul", o.block, c_(m * n))))
    k0 = kb.let("k0", binary("mul", o.block, c_(per)))
    k1 = kb.let("k1", binary("min", binary("add", k0, c_(per)), c_(k_len)))
    with kb.for_("i", c_(0), c_(m * n), dtype=o.idt) as i:
        kb.store(o.part, binary("add", part, i), const(0, ACC))
    with kb.for_("k", k0, k1, dtype=o.idt) as k:
        xs = [kb.let("x", cast(kb.load(o.a, binary("add", o.a_base, binary("add", k, c_(j * k_len))), a_t), ACC))
              for j in range(m)]
        row = kb.let("br", binary("add", o.b_base, binary("mul", k, c_(n))))
        with kb.for_("c", c_(0), c_(n), dtype=o.idt) as c:
            w = kb.let("w", cast(kb.load(o.b, binary("add", row, c), b_t), ACC))
            for j, x in enumerate(xs):
                at = kb.let("pa", binary("add", part, binary("add", c, c_(j * n)) if j else c))
                kb.store(o.part, at, binary("add", kb.load(o.part, at, ACC), binary("mul", w, x)))
    nbytes = o.batches * pieces * m * n * ACC.itemsize
    return StepCode([o.launch(), _columns_combine(step, operands, pieces)], temps=[nbytes])


def _columns_combine(step, operands, pieces: int) -> Launch:
    """C[b, j, c] = the sum of the pieces' partials, in piece order, rounded to C's dtype once."""
    m, n = step.eqn.out.aval.shape[-2:]
    total = m * n
    o = _Operands(step, operands, step.name + "_combine", ceil_div(total, COMBINE_BLOCK), partials=True)
    kb, c_ = o.kb, o.const
    start = kb.let("s", binary("mul", o.block, c_(COMBINE_BLOCK)))
    stop = kb.let("e", binary("min", binary("add", start, c_(COMBINE_BLOCK)), c_(total)))
    parts = o.per_batch(pieces * total)
    with kb.for_("i", start, stop, dtype=o.idt) as i:
        at = kb.let("pi", binary("add", parts, i))
        acc = kb.let("sum", kb.load(o.part, at, ACC))
        for p in range(1, pieces):
            acc = kb.let("sum", binary("add", acc, kb.load(o.part, binary("add", at, c_(p * total)), ACC)))
        kb.store(o.c, binary("add", o.c_base, i), cast(acc, o.types[2]))
    return o.launch()


__all__ = ["applies", "shape_of", "generate_cpu_gemv", "widened_sources", "pieces_for", "ROWS", "MAX_COLUMNS"]
