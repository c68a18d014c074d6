"""Warpgroup matrix products in `@poot.kernel` bodies (Hopper's wgmma): import to KIR and emulation.

- `d0, ..., d127 = pt.wgmma_m64n256k64(dtype, a_shared, a_at, b_shared, b_at, c0, ..., c127)`: a warpgroup
  (an aligned run of 128 threads by local x index; workgroup (128k, 1, 1)) computes D = A @ B + C with A
  64 x 64 and B 64 x 256 of `dtype` (pt.bfloat16 or pt.float16) read from `pt.shared(pt.u32, n)` arrays, C
  and D 64 x 256 float32 held 128 a thread. `pt.wgmma_m64n128k64` and `pt.wgmma_m64n64k64` likewise with B
  64 x 128 or 64 x 64 and n / 2 elements of C and D a thread. The operands are lines of 128 bytes, 16-byte
  chunk c of line r stored at chunk c ^ (r % 8): line m of A (from word a_at) is row m, line 64 j + k of B
  (from word b_at) is B[k, 64 j : 64 j + 64]. The `_bt` forms take B transposed: line j of b_shared holds
  column j of B (64 elements of k), as K's rows are for Q @ K^T. a_at and b_at are multiples of 256 words
  and the same in every thread of the warpgroup. Thread t of the warpgroup (w = t // 32, l = t % 32)
  passes and receives, for i in 0..n/2 - 1 (j = i // 4), element (16 w + l // 4 + 8 (i % 4 >= 2),
  8 j + 2 (l % 4) + i % 2) of C and D. The whole product is done when the statement is
  (poot/jit/kir/model.py `Wgmma`).
- `pt.fence_proxy_async()`: after a thread's writes to an operand's shared array (stores, or the
  `copy_async_wait` that completes its copies) and before the barrier that precedes the product, so
  the tensor cores' reads see them (`FenceProxyAsync`).

Built on PTX for sm_90a only; elsewhere poot.NotBuiltError at compile time. The emulator answers each
128-thread run together (`wgmma_emulate`), four steps of 16 k each rounded to float32.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from poot import dtypes as dt
from poot.errors import PootError
from poot.jit.kir.model import (WGMMA_ALIGN_WORDS, WGMMA_K, WGMMA_LANES, WGMMA_M, Binary, Const, FenceProxyAsync, If,
                                Read, Wgmma)
from poot.kernel.async_copy import _array, _word_index
from poot.kernel.subgroup import mark_sync
from poot.kernel.values import Lit, Static, Val

LINE_WORDS = 32                          # one 128-byte line
A_WORDS = WGMMA_M * LINE_WORDS           # 64 lines
# the intrinsic -> (n, B given transposed)
SHAPES = {f"wgmma_m64n{n}k64{sfx}": (n, sfx == "_bt") for n in (64, 128, 256) for sfx in ("", "_bt")}
_INPUTS = {dt.bfloat16: "bf16", dt.float16: "f16"}
_NUMPY = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}


# --- import ----------------------------------------------------------------------------------------
def wgmma_assign(imp, target, value, node, op: str) -> None:
    """`d0, ..., d127 = pt.wgmma_m64n256k64(dtype, sa, a_at, sb, b_at, c0, ..., c127)` (or another form's n / 2):
    the indices checked (with checks), one Wgmma read per D element of one instruction sequence, then the
    results assigned."""
    what, (n, bt) = f"pt.{op}", SHAPES[op]
    nc = n // 2
    if len(target.elts) != nc:
        raise imp.err("bad-intrinsic-call", f"{what} returns {nc} values (this thread's elements of D): "
                      f"assign them to {nc} names", node)
    args = imp.args(value, 5 + nc, what)
    d = imp.expr(args[0])
    if not isinstance(d, Static) or d.obj not in _INPUTS:
        raise imp.err("bad-intrinsic-call", f"{what}: the first argument is the operands' dtype, pt.bfloat16 or "
                      "pt.float16", args[0])
    mark_sync(imp)
    spans = []
    for b_node, i_node, words in ((args[1], args[2], A_WORDS), (args[3], args[4], n * LINE_WORDS)):
        buf = _array(imp, b_node, what, shared=True)
        idx = _word_index(imp, buf, i_node, what)
        _check_span(imp, buf, idx, words, value)
        spans.append((buf.name, idx))
    c = []
    for i, a in enumerate(args[5:]):
        v = imp.value(a)
        v = imp.typed(v, a, dt.float32) if isinstance(v, Lit) else v
        if v.dtype is not dt.float32:
            raise imp.err("ambiguous-types", f"{what}: C element {i} is {v.dtype.name}; C accumulates in float32 "
                          "(cast with pt.f32(...))", a)
        c.append(v.expr if isinstance(v.expr, Read) else imp.to_temp(v).expr)
    (sa, ai), (sb, bi) = spans
    results = [imp.to_temp(Val(Wgmma(sa, ai, sb, bi, tuple(c), i, _INPUTS[d.obj], n, bt), dt.float32))
               for i in range(nc)]
    imp.annotate(value, ("subgroup", "wgmma", tuple(range(1, 5 + nc)), (_INPUTS[d.obj], n, bt)))
    for tgt, r in zip(target.elts, results):
        imp.assign_to(tgt, r, node)


def _check_span(imp, buf, idx, words: int, node) -> None:
    """With checks: trap unless the operand starts at a multiple of 256 words and its `words` lie inside."""
    if not imp.checks:
        return
    if isinstance(idx, Const) and idx.value % WGMMA_ALIGN_WORDS == 0 and idx.value + words <= buf.size:
        return
    code = imp.trap_site(f"wgmma operand outside its shared array or not at a multiple of {WGMMA_ALIGN_WORDS} "
                         f"words: {imp.sc.info.segment(node)} (array '{buf.py_name}')", node)
    u32, b = dt.uint32, dt.bool_
    misaligned = Binary("ne", Binary("rem", idx, Const(WGMMA_ALIGN_WORDS, u32), u32), Const(0, u32), b)
    outside = Binary("gt", idx, Const(max(buf.size - words, 0), u32), b)
    bad = Binary("or", misaligned, outside, b) if buf.size >= words else Const(True, b)
    imp.emit(If(bad, (imp.trap_stmt(code),)))


def call_warpgroup(imp, obj, node, want_result: bool):
    """`pt.fence_proxy_async()` (a statement); the product only as a tuple assignment's value."""
    what = f"pt.{obj.name}"
    if obj.kind == "wgmma":
        nc = SHAPES[obj.name][0] // 2
        raise imp.err("bad-intrinsic-call", f"{what}(...) is only the value of a tuple assignment `d0, ..., "
                      f"d{nc - 1} = {what}(dtype, a_shared, a_at, b_shared, b_at, c0, ..., c{nc - 1})`", node)
    if want_result:
        raise imp.err("bad-intrinsic-call", f"{what}() is a statement of its own; it has no value", node)
    imp.args(node, 0, what)
    imp.call_note(node, fence_proxy_async, ())
    imp.emit(FenceProxyAsync())
    return None


# --- emulation -------------------------------------------------------------------------------------
def fence_proxy_async() -> None:
    """Nothing to order: the emulator's shared memory is one store."""


def _lines(s: np.ndarray, at: int, n: int, inputs: str, what: str) -> np.ndarray:
    """`n` 128-byte lines from word `at` of shared array `s`, unswizzled, as float64 [n, 64]."""
    if at % WGMMA_ALIGN_WORDS or not 0 <= at <= len(s) - n * LINE_WORDS:
        raise PootError(f"wgmma: the {what} operand at word {at} is outside its shared array "
                        f"({len(s)} words) or not at a multiple of {WGMMA_ALIGN_WORDS} words")
    chunks = s[at:at + n * LINE_WORDS].reshape(n, 8, 4)
    r = np.arange(n)[:, None] % 8
    logical = chunks[np.arange(n)[:, None], np.arange(8)[None, :] ^ r]
    return np.ascontiguousarray(logical).view(np.uint16).view(_NUMPY[inputs]).astype(np.float64).reshape(n, 64)


def wgmma_emulate(requests: list) -> list:
    """Each thread's D elements; requests[t] = (sa, a_at, sb, b_at, c0, ..., inputs, n, bt) of thread t of
    the warpgroup. The products are exact in float64, each 16-k step's sum rounded to float32 as the hardware's
    accumulation is."""
    sa, ai, sb, bi = requests[0][:4]
    inputs, n, bt = requests[0][-3:]
    if any(int(r[1]) != int(ai) or int(r[3]) != int(bi) for r in requests):
        raise PootError(f"wgmma_m64n{n}k64: the threads of a warpgroup pass different operand indices; every "
                        "thread must pass the same a_at and b_at")
    m, k = WGMMA_M, WGMMA_K
    A = _lines(sa, int(ai), m, inputs, "A")
    lines = _lines(sb, int(bi), n, inputs, "B")
    B = lines.T if bt else lines.reshape(n // 64, k, 64).transpose(1, 0, 2).reshape(k, n)
    rows, cols = _fragment_coords(n // 2)
    D = np.zeros((m, n), np.float32)
    for t, r in enumerate(requests):
        D[rows[t], cols[t]] = np.array([float(x) for x in r[4:4 + n // 2]], np.float32)
    for s in range(0, k, 16):
        D = (A[:, s:s + 16] @ B[s:s + 16] + D.astype(np.float64)).astype(np.float32)
    return [tuple(D[rows[t], cols[t]]) for t in range(WGMMA_LANES)]


def _fragment_coords(nc: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) [128 threads, nc elements]: where each thread's C and D elements sit."""
    t = np.arange(WGMMA_LANES)[:, None]
    i = np.arange(nc)[None, :]
    w, lane = t // 32, t % 32
    rows = 16 * w + lane // 4 + 8 * ((i % 4) >= 2)
    cols = 8 * (i // 4) + 2 * (lane % 4) + i % 2
    return rows, cols


__all__ = ["wgmma_assign", "call_warpgroup", "wgmma_emulate", "fence_proxy_async"]
