"""16-byte memory operations in `@poot.kernel` bodies: the staging primitives of a tensor-core GEMM
(global -> shared without registers, shared -> mma fragments in one instruction), imported to KIR and
emulated. Arrays are uint32 (two 16-bit elements a word); every index is a WORD index that must be a
multiple of 4 (16 bytes), and `checks=True` kernels trap with TRAP_BOUNDS when it is not, or when the 4
words leave the array, as element accesses do when out of range.

- `w0, w1, w2, w3 = pt.ldmatrix_x4(s, at)` / `pt.ldmatrix_x4_trans(s, at)`: warp-level PTX
  `ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16` from a `pt.shared(pt.u32, n)` array. Lanes 8i..8i+7
  pass the rows 0..7 of 8x8 matrix i (each row 8 16-bit elements = 4 words at `at`); lane l (g = l // 4,
  t = l % 4) gets w_i = elements 2t, 2t+1 of row g of matrix i (low half first), or with `_trans`
  elements (row 2t, column g) and (row 2t + 1, column g). So for mma_m16n8k16, ldmatrix_x4 over A's
  quadrants (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15) gives the words
  of a0..a7, and ldmatrix_x4_trans over a row-major [k][n] B's (k 0-7, n 0-7), (k 8-15, n 0-7) the words
  of b0..b3 (then two more matrices: the next 8 columns of n). Like mma: a 4-name tuple assignment only,
  legal only where a barrier would be. PTX sm_75+.
- `w0, w1, w2, w3 = pt.load_x4(buf, at)` and the statement `pt.store_x4(buf, at, w0, w1, w2, w3)`: 4
  consecutive words of a uint32 buffer parameter or shared array in one 16-byte access (every target).
- `pt.copy_async(dst, dst_at, src, src_at, ok)`: start copying src[src_at:+4] (a uint32 buffer
  parameter) to dst[dst_at:+4] (a uint32 shared array); when `ok` is false the destination words become 0
  and src is not read (so a tile's edges need no branch). `pt.copy_async_commit()` closes this thread's
  copies since the last commit into a group; `pt.copy_async_wait(n)` (n a constant >= 0) waits until at
  most n committed groups are in flight. The copied words are this thread's to read after the wait;
  other threads need a `pt.workgroup_barrier()` after the wait too, as for any shared store. PTX sm_80+.

Emulation (the executable spec): ldmatrix is answered for the warp by `ldmatrix_emulate`; each thread's
copies are queued (the source read when the copy starts) and applied to shared memory only at the
copy_async_wait that covers their group, so a kernel that reads before waiting sees the old contents in
the emulator as it might on the GPU. Copies never waited for are never applied.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.jit.kir.model import (X4_WORDS, AsyncCommit, AsyncWait, Binary, Cast, Const, CopyAsync, If, LdMatrix, Len,
                         LoadX4, Read, StoreX4, TRAP_BOUNDS)
from poot.kernel import emulate_ops as emu
from poot.kernel import intrinsics as ix
from poot.kernel.subgroup import LANES, mark_sync
from poot.kernel.values import Buf, Lit, Val, const

TUPLE_RESULTS = frozenset({"ldmatrix", "ldmatrix_trans", "load_x4"})    # intrinsic kinds with 4 results


def is_tuple_call(obj) -> bool:
    """Whether intrinsic `obj` is one whose 4 results are only taken by a tuple assignment."""
    return isinstance(obj, ix.Intrinsic) and obj.kind in TUPLE_RESULTS


# --- import ----------------------------------------------------------------------------------------
def _array(imp, node, what: str, shared: bool | None = None) -> Buf:
    """The uint32 array argument `node` of `what`: shared only (True), a buffer parameter only (False),
    or either (None)."""
    b = imp.expr(node)
    kinds = {True: "a pt.shared(pt.u32, n) array", False: "a uint32 buffer parameter",
             None: "a uint32 buffer parameter or shared array"}[shared]
    if not isinstance(b, Buf) or (shared is not None and (b.access is None) != shared):
        raise imp.err("bad-intrinsic-call", f"{what}: this argument must be {kinds}", node)
    if b.dtype is not dt.uint32:
        raise imp.err("invalid-operand", f"{what} moves uint32 words; '{b.py_name}' is {b.dtype.name} (declare "
                      "it pt.u32 and pack two 16-bit elements a word)", node)
    return b


def _word_index(imp, buf: Buf, node, what: str):
    """A uint32 word index (a Read or a Const: it is used by the check and the access)."""
    idx = imp.index_of(buf, node)
    if idx.dtype.bits > 32:
        raise imp.err("invalid-operand", f"{what}: the word index is {idx.dtype.name}; it must be a 32-bit "
                      "integer", node)
    if idx.dtype is not dt.uint32:
        idx = Cast(idx, dt.uint32)
    return idx if isinstance(idx, (Read, Const)) else imp.to_temp(Val(idx, dt.uint32)).expr


def _span_check(imp, buf: Buf, idx, node, guard=None) -> int | None:
    """Emit `if (index % 4 != 0 or its 4 words leave buf) [and guard]: trap`; the trap code, or None
    when the kernel has no checks (or a constant index into a shared array is fine)."""
    if not imp.checks:
        return None
    if buf.access is None and isinstance(idx, Const) and idx.value % X4_WORDS == 0 \
            and idx.value + X4_WORDS <= buf.size and guard is None:
        return None
    code = imp.trap_site(f"16-byte access out of range or not at a multiple of 4 words: "
                         f"{imp.sc.info.segment(node)} (array '{buf.py_name}')", node)
    u32, b = dt.uint32, dt.bool_
    n = const(buf.size, u32) if buf.access is None else Len(buf.name)
    misaligned = Binary("ne", Binary("and", idx, const(X4_WORDS - 1, u32), u32), const(0, u32), b)
    outside = Binary("or", Binary("ge", idx, n, b), Binary("lt", Binary("sub", n, idx, u32), const(X4_WORDS, u32), b),
                     b)
    bad = Binary("or", misaligned, outside, b)
    imp.emit(If(bad if guard is None else Binary("and", guard, bad, b), (imp.trap_stmt(code),)))
    return code


def x4_assign(imp, target, value, node) -> None:
    """`w0, w1, w2, w3 = pt.ldmatrix_x4(s, at)` (or _trans, or pt.load_x4(buf, at)): the index checked, then
    four element reads of one instruction assigned to the targets."""
    obj = imp.expr(value.func).obj
    what = f"pt.{obj.name}"
    if len(target.elts) != X4_WORDS:
        raise imp.err("bad-intrinsic-call", f"{what} returns {X4_WORDS} uint32 words: assign them to "
                      f"{X4_WORDS} names", node)
    b_node, i_node = imp.args(value, 2, what)
    ldmatrix = obj.kind != "load_x4"
    buf = _array(imp, b_node, what, shared=True if ldmatrix else None)
    idx = _word_index(imp, buf, i_node, what)
    code = _span_check(imp, buf, idx, value)
    if ldmatrix:
        mark_sync(imp)
        trans = obj.kind == "ldmatrix_trans"
        nodes = [LdMatrix(buf.name, idx, trans, i) for i in range(X4_WORDS)]
        imp.annotate(value, ("subgroup", "ldmatrix", (0, 1), (trans,)))
        imp.annotate(value, ("span", 0, 1, code))
    else:
        nodes = [LoadX4(buf.name, idx, i) for i in range(X4_WORDS)]
        imp.call_note(value, load_x4, (0, 1), code)
    results = [imp.to_temp(Val(e, dt.uint32)) for e in nodes]
    for tgt, r in zip(target.elts, results):
        imp.assign_to(tgt, r, node)


def call_wide_memory(imp, obj, node, want_result: bool):
    """Lower a 16-byte memory intrinsic used as a call (the statements; the others are refused here)."""
    k, what = obj.kind, f"pt.{obj.name}"
    if k in TUPLE_RESULTS:
        raise imp.err("bad-intrinsic-call", f"{what}(...) is only the value of a tuple assignment "
                      f"`w0, w1, w2, w3 = {what}(...)`", node)
    if want_result:
        raise imp.err("bad-intrinsic-call", f"{what}(...) is a statement of its own; it has no value", node)
    if k == "store_x4":
        args = imp.args(node, 2 + X4_WORDS, what)
        buf = _array(imp, args[0], what)
        if not buf.writable:
            raise imp.err("write-to-input", f"'{buf.py_name}' is an In buffer (read-only); declare it "
                          "pt.Out[...] or pt.InOut[...] to write it", node)
        idx = _word_index(imp, buf, args[1], what)
        vals = []
        for a in args[2:]:
            v = imp.convert(imp.value(a), dt.uint32, a, what=f"{what} value", store=True)
            vals.append(v if isinstance(v, (Read, Const)) else imp.to_temp(Val(v, dt.uint32)).expr)
        code = _span_check(imp, buf, idx, node)
        imp.call_note(node, store_x4, range(2 + X4_WORDS), code)
        imp.emit(StoreX4(buf.name, idx, tuple(vals)))
    elif k == "copy_async":
        d_node, di_node, s_node, si_node, ok_node = imp.args(node, 5, what)
        dst = _array(imp, d_node, what, shared=True)
        src = _array(imp, s_node, what, shared=False)
        di = _word_index(imp, dst, di_node, what)
        si = _word_index(imp, src, si_node, what)
        ok = imp.cond(ok_node)
        ok = Const(bool(ok.value), dt.bool_) if isinstance(ok, Lit) else \
            ok.expr if isinstance(ok.expr, (Read, Const)) else imp.to_temp(ok).expr
        dcode = _span_check(imp, dst, di, node)
        if isinstance(ok, Const):                      # the source is checked only where it is read
            scode = _span_check(imp, src, si, node) if ok.value else None
        else:
            scode = _span_check(imp, src, si, node, guard=ok)
        imp.call_note(node, copy_async, range(5), dcode, scode)
        imp.emit(CopyAsync(dst.name, di, src.name, si, ok))
    elif k == "copy_async_commit":
        imp.args(node, 0, what)
        imp.call_note(node, copy_async_commit, ())
        imp.emit(AsyncCommit())
    else:
        (n_node,) = imp.args(node, 1, what)
        n = imp.value(n_node)
        if not isinstance(n, Lit) or isinstance(n.value, bool) or not isinstance(n.value, int) or n.value < 0:
            raise imp.err("bad-intrinsic-call", f"{what}(n): n (the committed groups that may stay in flight) must "
                          "be a constant int >= 0", n_node)
        imp.call_note(node, copy_async_wait, (), n.value)
        imp.emit(AsyncWait(n.value))
    return None


# --- emulation -------------------------------------------------------------------------------------
def span(buf, at, code) -> int:
    """`at` as an int, after the checks a 16-byte access makes (trap `code`, TRAP_BOUNDS by default)."""
    i = int(at)
    if i % X4_WORDS or not 0 <= i <= len(buf) - X4_WORDS:
        raise emu.TrapSignal(code if code is not None else TRAP_BOUNDS)
    return i


def load_x4(buf, at, code) -> tuple:
    i = span(buf, at, code)
    return tuple(np.uint32(w) for w in buf[i:i + X4_WORDS])


def store_x4(buf, at, w0, w1, w2, w3, code) -> None:
    i = span(buf, at, code)
    emu.untrack(buf)
    buf[i:i + X4_WORDS] = [np.uint32(int(w) & 0xFFFFFFFF) for w in (w0, w1, w2, w3)]


def _queue() -> tuple[list, list]:
    """(copies not yet committed, committed groups oldest first) of the running thread."""
    return emu.STATE.async_copies.setdefault(emu.STATE.thread, ([], []))


def copy_async(dst, dst_at, src, src_at, ok, dcode, scode) -> None:
    d = span(dst, dst_at, dcode)
    words = src[span(src, src_at, scode):][:X4_WORDS].copy() if ok else np.zeros(X4_WORDS, np.uint32)
    _queue()[0].append((dst, d, words))


def copy_async_commit() -> None:
    pending, groups = _queue()
    groups.append(list(pending))
    pending.clear()


def copy_async_wait(n: int) -> None:
    _, groups = _queue()
    while len(groups) > n:
        for dst, d, words in groups.pop(0):
            emu.untrack(dst)
            dst[d:d + X4_WORDS] = words


def ldmatrix_emulate(requests: list) -> list:
    """The four words each lane receives; requests[l] = (shared array, lane l's row word index, trans)."""
    s = requests[0][0]
    trans = requests[0][2]
    rows = [s[int(r[1]):int(r[1]) + X4_WORDS] for r in requests]          # lane l gives row l % 8 of matrix l // 8

    def elem(row, col) -> int:
        return (int(row[col // 2]) >> (16 * (col % 2))) & 0xFFFF

    out = []
    for lane in range(LANES):
        g, t = lane // 4, lane % 4
        if trans:
            words = [elem(rows[8 * i + 2 * t], g) | elem(rows[8 * i + 2 * t + 1], g) << 16 for i in range(4)]
        else:
            words = [int(rows[8 * i + g][t]) for i in range(4)]
        out.append(tuple(np.uint32(w) for w in words))
    return out


__all__ = ["x4_assign", "call_wide_memory", "is_tuple_call", "ldmatrix_emulate"]
