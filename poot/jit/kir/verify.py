"""The KIR verifier: every kernel is checked here before anything lowers it (this LLVM build aborts
the process on malformed IR, so nothing unverified may reach it).

`verify(kernel)` returns None or raises `poot.errors.KIRError(kind, message, kernel_name)`. The kinds
are stable (tests and tools match on them):

  no-body                   the body has no statement
  bad-name                  a kernel or declaration name that is not a Python identifier
  duplicate-name            two params / locals / shared arrays share a name
  undeclared-value          a Read or Assign of a name that is no local (or scalar param, for Read)
  undefined-buffer          a Load/Store/Len/AtomicAdd of a name that is no buffer param / shared array
  type-mismatch             an expression's dtype disagrees with its operands or its declaration
  invalid-operand-type      an op applied to a dtype it does not take (sin of an int, shl of a float...)
  bad-constant              a constant whose value is not exactly representable in its dtype
  write-to-read-only        a Store/AtomicAdd into an `in` buffer
  barrier-divergent         a Barrier under control flow that may differ between the threads of a
                            workgroup (see "uniformity" below)
  zero-workgroup-dimension  a workgroup extent < 1 (or not 3 dimensions)
  workgroup-too-large       workgroup threads above `max_workgroup_size` (default 1024)
  bad-shared-size           a shared array of size < 1
  shared-too-large          shared arrays of more than MAX_SHARED_BYTES (2 GiB) together: more than any device
                            has, and past what the targets can lay out (a 4 GiB array aborted naga, the
                            WGSL compiler); each device's own, smaller limit is checked at launch
                            (poot/kernel/shared_memory.py)
  break-outside-loop        Break or Continue outside a For/While
  assign-to-loop-variable   an Assign to the variable of an enclosing For
  bad-step                  a For step that is zero or not an int
  unknown-op                an op / index kind / statement the model does not define
  bad-index-type            a buffer index that is not an integer
  atomic-unsupported-type   AtomicAdd on a dtype other than int32/uint32/int64/uint64/float32
  bad-trap-code             a Trap code outside 1..2**31-1
  bad-shuffle               a ShuffleXor mask that is no int in 1..31
  shuffle-workgroup         a ShuffleXor in a kernel whose workgroup is not (32k, 1, 1) (a subgroup
                            exchange needs whole warps of consecutive threads)
  shuffle-divergent         a ShuffleXor, Shuffle, Mma or LdMatrix evaluated under divergent control (as for
                            barriers)
  bad-mma                   an Mma of an unknown shape, operand count, element or operand dtypes
                            (a 64-lane shape, mfma_16x16x16, needs a workgroup of (64k, 1, 1): shuffle-workgroup)
  bad-x4                    an LdMatrix, LoadX4 or StoreX4 on an array that is not uint32 (LdMatrix: not
                            a shared array), a non-uint32 index, or an element / value count out of 0..3
  bad-copy-async            a CopyAsync whose dst is no uint32 shared array, src no uint32 buffer param,
                            ok no bool; an AsyncWait count that is no int >= 0

Uniformity: a value is *divergent* when it may differ between the threads of one workgroup: it
depends on the `thread` or `local` index, on an AtomicAdd result, on a Load at a divergent index, or
on a local assigned a divergent value or assigned under divergent control. Control is divergent
inside an If/While whose condition is divergent, inside a For whose bounds are divergent, inside a
whole loop that a divergent Break/Continue/Return may leave early, and after a Return reached under
divergent control (the threads that returned are gone). The analysis is flow-insensitive over
locals (a local is divergent if any assignment makes it so), iterated to a fixed point.
"""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import KIRError
from poot.jit.kir.model import (BINARY_OPS, BIT_BINARY, COMPARE_OPS, FLOAT_BINARY, FLOAT_UNARY, INDEX_KINDS,
                    PREDICATE_UNARY, UNARY_OPS, X4_WORDS, Assign, AsyncCommit, AsyncWait, AtomicAdd, Barrier,
                    Binary, Bitcast, Break, BufferParam, Cast, Const, Continue, CopyAsync, Fma, For, If, Index,
                    Kernel, LdMatrix, Len, Load, LoadX4, MMA_INPUTS, MMA_SHAPES, Mma, Read, Return, ScalarParam,
                    Select, SHUFFLE_LANES, SharedArray, Shuffle, ShuffleXor, Store, StoreX4, Trap, Unary, While,
                    WGMMA_INPUTS, WGMMA_LANES, WGMMA_N, FenceProxyAsync, Wgmma)
from poot.jit.kir.uniformity import divergent_barrier, divergent_shuffle

ATOMIC_DTYPES = (dt.int32, dt.uint32, dt.int64, dt.uint64, dt.float32)
MAX_WORKGROUP_SIZE = 1024
MAX_SHARED_BYTES = 2**31       # shared bytes of one kernel (all arrays): kind shared-too-large past it
_SCALAR_TYPES = frozenset(dt.ALL_DTYPES)


def verify(kernel: Kernel, *, max_workgroup_size: int = MAX_WORKGROUP_SIZE) -> None:
    """Check `kernel` against the KIR model; raise KIRError(kind, message, name) on the first fault."""
    _Verifier(kernel, max_workgroup_size).run()


class _Verifier:
    def __init__(self, kernel: Kernel, max_wg: int):
        self.k, self.max_wg = kernel, max_wg
        self.name = getattr(kernel, "name", "?")

    def fail(self, kind: str, message: str):
        raise KIRError(kind, message, self.name)

    # -- declarations ---------------------------------------------------------------------------
    def run(self) -> None:
        k = self.k
        if not isinstance(k, Kernel):
            self.fail("unknown-op", f"expected a Kernel, got {type(k).__name__}")
        if not isinstance(k.name, str) or not k.name.isidentifier():
            self.fail("bad-name", f"kernel name {k.name!r} is not an identifier")
        wg = tuple(k.workgroup)
        if len(wg) != 3 or any(not isinstance(w, int) or w < 1 for w in wg):
            self.fail("zero-workgroup-dimension", f"workgroup {wg} must be three extents >= 1")
        if wg[0] * wg[1] * wg[2] > self.max_wg:
            self.fail("workgroup-too-large",
                      f"workgroup {wg} has {wg[0] * wg[1] * wg[2]} threads; the limit is {self.max_wg}")
        self.buffers: dict = {}
        self.scalars: dict = {}
        self.locals: dict = {}
        self.shared: dict = {}
        seen: set = set()
        for decl, table in ([(p, self.buffers if isinstance(p, BufferParam) else self.scalars) for p in k.params]
                            + [(v, self.locals) for v in k.locals] + [(s, self.shared) for s in k.shared]):
            if not isinstance(decl.name, str) or not decl.name.isidentifier():
                self.fail("bad-name", f"name {decl.name!r} is not an identifier")
            if decl.name in seen:
                self.fail("duplicate-name", f"'{decl.name}' is declared more than once")
            seen.add(decl.name)
            if decl.dtype not in _SCALAR_TYPES:
                self.fail("invalid-operand-type", f"'{decl.name}' has unsupported dtype {decl.dtype!r}")
            if not isinstance(decl, (BufferParam, ScalarParam)) and hasattr(decl, "size"):
                if not isinstance(decl.size, int) or decl.size < 1:
                    self.fail("bad-shared-size", f"shared array '{decl.name}' has size {decl.size!r}")
            table[decl.name] = decl
        total = sum(s.size * s.dtype.itemsize for s in self.shared.values())
        if total > MAX_SHARED_BYTES:
            arrays = ", ".join(f"'{s.name}' ({s.size} x {s.dtype.name})" for s in self.shared.values())
            self.fail("shared-too-large", f"shared arrays {arrays} take {total:,} bytes together; no device has "
                      f"more than {MAX_SHARED_BYTES:,} bytes of shared memory per workgroup")
        if not k.body:
            self.fail("no-body", "the kernel body is empty (a kernel needs at least one statement)")
        self.loop_vars: list[str] = []
        self.loop_depth = 0
        self._check_block(k.body)
        self._uniformity()

    # -- expressions ----------------------------------------------------------------------------
    def expr(self, e) -> None:
        t = getattr(e, "dtype", None)
        if t not in _SCALAR_TYPES:
            self.fail("type-mismatch", f"expression {type(e).__name__} has no valid dtype ({t!r})")
        if isinstance(e, Const):
            self._const(e)
        elif isinstance(e, Read):
            decl = self.locals.get(e.name) or self.scalars.get(e.name)
            if decl is None:
                self.fail("undeclared-value", f"read of '{e.name}', which is no local or scalar param")
            self._same(e.dtype, decl.dtype, f"read of '{e.name}'")
        elif isinstance(e, Load):
            decl = self._buffer(e.buffer, "load from")
            self._index(e.index, e.buffer)
            self._same(e.dtype, decl.dtype, f"load from '{e.buffer}'")
        elif isinstance(e, Len):
            if e.buffer not in self.buffers:
                self.fail("undefined-buffer", f"len() of '{e.buffer}', which is no buffer param")
            self._same(e.dtype, dt.uint32, "len()")
        elif isinstance(e, Unary):
            self._unary(e)
        elif isinstance(e, Binary):
            self._binary(e)
        elif isinstance(e, Select):
            for x in (e.cond, e.a, e.b):
                self.expr(x)
            self._same(e.cond.dtype, dt.bool_, "select condition")
            self._same(e.a.dtype, e.b.dtype, "select arms")
            self._same(e.dtype, e.a.dtype, "select result")
        elif isinstance(e, Fma):
            for x in (e.a, e.b, e.c):
                self.expr(x)
                self._same(x.dtype, e.dtype, "fma operand")
            if not dt.is_float(e.dtype):
                self.fail("invalid-operand-type", f"fma needs floats, got {e.dtype.name}")
        elif isinstance(e, Cast):
            self.expr(e.x)
        elif isinstance(e, Bitcast):
            self.expr(e.x)
            if dt.is_bool(e.dtype) or dt.is_bool(e.x.dtype) or e.dtype.bits != e.x.dtype.bits:
                self.fail("invalid-operand-type",
                          f"bitcast {e.x.dtype.name} -> {e.dtype.name} needs two non-bool types of one width")
        elif isinstance(e, ShuffleXor):
            self._shuffle(e)
        elif isinstance(e, Shuffle):
            self.expr(e.index)
            self._same(e.index.dtype, dt.uint32, "shuffle lane index")
            self._subgroup_op(e.x, e.dtype, "shuffle")
        elif isinstance(e, Mma):
            self._mma(e)
        elif isinstance(e, Wgmma):
            self._wgmma(e)
        elif isinstance(e, (LdMatrix, LoadX4)):
            what = "ldmatrix" if isinstance(e, LdMatrix) else "load_x4"
            decl = self._words(e.shared if isinstance(e, LdMatrix) else e.buffer, e.index, what)
            if isinstance(e, LdMatrix):
                if not isinstance(decl, SharedArray):
                    self.fail("bad-x4", f"ldmatrix reads a shared array; '{e.shared}' is a buffer param")
                if not isinstance(e.trans, bool):
                    self.fail("bad-x4", f"ldmatrix trans flag {e.trans!r} must be a bool")
                self._subgroup_op(None, e.dtype, "ldmatrix")
            self._x4_elem(e.elem, what)
            self._same(e.dtype, dt.uint32, f"{what} result")
        elif isinstance(e, Index):
            if e.kind not in INDEX_KINDS or e.axis not in (0, 1, 2):
                self.fail("unknown-op", f"index {e.kind!r} axis {e.axis!r}")
            self._same(e.dtype, dt.uint32, f"index {e.kind}")
        else:
            self.fail("unknown-op", f"unknown expression node {type(e).__name__}")

    def _shuffle(self, e: ShuffleXor) -> None:
        if not isinstance(e.mask, int) or isinstance(e.mask, bool) or not 1 <= e.mask < SHUFFLE_LANES:
            self.fail("bad-shuffle", f"shuffle_xor mask {e.mask!r} must be an int in 1..{SHUFFLE_LANES - 1}")
        self._subgroup_op(e.x, e.dtype, "shuffle_xor")

    def _subgroup_op(self, x, dtype, what: str, lanes: int = SHUFFLE_LANES) -> None:
        """An operation over aligned runs of `lanes` threads: the workgroup must be whole runs along x."""
        if x is not None:
            self.expr(x)
            self._same(dtype, x.dtype, f"{what} result")
        wx, wy, wz = self.k.workgroup
        if wx % lanes or wy != 1 or wz != 1:
            self.fail("shuffle-workgroup", f"{what} needs a workgroup of ({lanes}k, 1, 1) threads, "
                      f"this kernel has {tuple(self.k.workgroup)}")

    def _mma(self, e: Mma) -> None:
        shape = MMA_SHAPES.get(e.shape)
        if shape is None:
            self.fail("bad-mma", f"mma shape {e.shape!r}; known: {', '.join(MMA_SHAPES)}")
        na, nb, nc = shape
        if not (isinstance(e.a, tuple) and isinstance(e.b, tuple) and isinstance(e.c, tuple)
                and (len(e.a), len(e.b), len(e.c)) == (na, nb, nc)):
            self.fail("bad-mma", f"{shape.op} takes {na} A, {nb} B and {nc} C elements per lane")
        if not isinstance(e.elem, int) or isinstance(e.elem, bool) or not 0 <= e.elem < nc:
            self.fail("bad-mma", f"{shape.op} result element {e.elem!r} must be an int in 0..{nc - 1}")
        for x in e.a + e.b + e.c:
            self.expr(x)
        t = e.a[0].dtype
        if t not in MMA_INPUTS or any(x.dtype is not t for x in e.a + e.b):
            self.fail("bad-mma", f"{shape.op} A and B elements must all be bfloat16 or all float16")
        if any(x.dtype is not dt.float32 for x in e.c) or e.dtype is not dt.float32:
            self.fail("bad-mma", f"{shape.op} accumulates in float32: C elements and the result must be float32")
        self._subgroup_op(None, e.dtype, shape.op, shape.lanes)

    def _wgmma(self, e: Wgmma) -> None:
        for name, index in ((e.a_shared, e.a_index), (e.b_shared, e.b_index)):
            if not isinstance(self._words(name, index, "wgmma"), SharedArray):
                self.fail("bad-mma", f"wgmma reads its operands from shared arrays; '{name}' is a buffer param")
        if e.inputs not in WGMMA_INPUTS:
            self.fail("bad-mma", f"wgmma inputs {e.inputs!r} must be one of {', '.join(WGMMA_INPUTS)}")
        if not isinstance(e.bt, bool):
            self.fail("bad-mma", f"wgmma bt flag {e.bt!r} must be a bool")
        if e.n not in WGMMA_N:
            self.fail("bad-mma", f"wgmma column count {e.n!r} must be one of {WGMMA_N}")
        if not isinstance(e.c, tuple) or len(e.c) != e.n // 2:
            self.fail("bad-mma", f"wgmma with n = {e.n} takes {e.n // 2} C elements per thread")
        if not isinstance(e.elem, int) or isinstance(e.elem, bool) or not 0 <= e.elem < e.n // 2:
            self.fail("bad-mma", f"wgmma result element {e.elem!r} must be an int in 0..{e.n // 2 - 1}")
        for x in e.c:
            self.expr(x)
        if any(x.dtype is not dt.float32 for x in e.c) or e.dtype is not dt.float32:
            self.fail("bad-mma", "wgmma accumulates in float32: C elements and the result must be float32")
        self._subgroup_op(None, e.dtype, "wgmma", WGMMA_LANES)

    def _words(self, name: str, index, what: str):
        """The declaration of uint32 array `name` that a 16-byte access reads or writes at `index`."""
        decl = self._buffer(name, what)
        self.expr(index)
        if decl.dtype is not dt.uint32 or index.dtype is not dt.uint32:
            self.fail("bad-x4", f"{what} needs a uint32 array and a uint32 word index; '{name}' is "
                      f"{decl.dtype.name}, the index {index.dtype.name}")
        return decl

    def _x4_elem(self, elem, what: str) -> None:
        if not isinstance(elem, int) or isinstance(elem, bool) or not 0 <= elem < X4_WORDS:
            self.fail("bad-x4", f"{what} element {elem!r} must be an int in 0..{X4_WORDS - 1}")

    def _copy_async(self, s: CopyAsync) -> None:
        dst = self._buffer(s.dst, "copy_async to")
        src = self._buffer(s.src, "copy_async from")
        if not isinstance(dst, SharedArray) or not isinstance(src, BufferParam):
            self.fail("bad-copy-async", f"copy_async copies from a buffer param into a shared array, not from "
                      f"'{s.src}' into '{s.dst}'")
        if dst.dtype is not dt.uint32 or src.dtype is not dt.uint32:
            self.fail("bad-copy-async", f"copy_async copies uint32 words; '{s.src}' is {src.dtype.name}, "
                      f"'{s.dst}' {dst.dtype.name}")
        for i in (s.dst_index, s.src_index, s.ok):
            self.expr(i)
        if s.dst_index.dtype is not dt.uint32 or s.src_index.dtype is not dt.uint32 or s.ok.dtype is not dt.bool_:
            self.fail("bad-copy-async", "copy_async takes uint32 word indices and a bool ok")

    def _const(self, e: Const) -> None:
        v, t = e.value, e.dtype
        if dt.is_bool(t):
            ok = isinstance(v, (bool, np.bool_))
        elif dt.is_int(t):
            ok = isinstance(v, (int, np.integer)) and not isinstance(v, bool)
            if ok and not (dt.iinfo(t).min <= int(v) <= dt.iinfo(t).max):
                self.fail("bad-constant", f"{v} does not fit in {t.name}")
        else:
            ok = isinstance(v, (float, int, np.floating)) and not isinstance(v, bool)
            if ok and not math.isnan(v) and float(t.np.type(v)) != float(v):
                self.fail("bad-constant", f"{v!r} is not exactly representable in {t.name}; round it first")
        if not ok:
            self.fail("type-mismatch", f"constant {v!r} ({type(v).__name__}) is not a {t.name}")

    def _unary(self, e: Unary) -> None:
        if e.op not in UNARY_OPS:
            self.fail("unknown-op", f"unknown unary op {e.op!r}")
        self.expr(e.x)
        xt = e.x.dtype
        if e.op in FLOAT_UNARY and not dt.is_float(xt):
            self.fail("invalid-operand-type", f"{e.op} needs a float operand, got {xt.name}")
        if e.op == "not" and not dt.is_bool(xt):
            self.fail("invalid-operand-type", f"not needs a bool operand, got {xt.name} (use bitnot)")
        if e.op == "bitnot" and dt.is_float(xt):
            self.fail("invalid-operand-type", "bitnot needs an integer or bool operand")
        if e.op in ("neg", "abs", "sign") and dt.is_bool(xt):
            self.fail("invalid-operand-type", f"{e.op} does not take bool")
        self._same(e.dtype, dt.bool_ if e.op in PREDICATE_UNARY else xt, f"{e.op} result")

    def _binary(self, e: Binary) -> None:
        if e.op not in BINARY_OPS:
            self.fail("unknown-op", f"unknown binary op {e.op!r}")
        self.expr(e.a)
        self.expr(e.b)
        t = e.a.dtype
        self._same(e.b.dtype, t, f"{e.op} operands")
        if e.op in FLOAT_BINARY and not dt.is_float(t):
            self.fail("invalid-operand-type", f"{e.op} needs float operands, got {t.name}")
        if e.op in BIT_BINARY and dt.is_float(t):
            self.fail("invalid-operand-type", f"{e.op} needs integer or bool operands, got {t.name}")
        if e.op in ("shl", "shr") and dt.is_bool(t):
            self.fail("invalid-operand-type", f"{e.op} does not take bool")
        if e.op in ("add", "sub", "mul", "div", "rem", "min", "max", "add_nocontract") and dt.is_bool(t):
            self.fail("invalid-operand-type", f"{e.op} does not take bool (cast first)")
        if e.op == "add_nocontract" and not dt.is_float(t):
            self.fail("invalid-operand-type", "add_nocontract needs float operands")
        self._same(e.dtype, dt.bool_ if e.op in COMPARE_OPS else t, f"{e.op} result")

    def _same(self, got, want, what: str) -> None:
        if got is not want:
            self.fail("type-mismatch", f"{what}: {getattr(got, 'name', got)} vs {getattr(want, 'name', want)}")

    def _buffer(self, name: str, what: str):
        decl = self.buffers.get(name) or self.shared.get(name)
        if decl is None:
            self.fail("undefined-buffer", f"{what} '{name}', which is no buffer param or shared array")
        return decl

    def _index(self, idx, buffer: str) -> None:
        self.expr(idx)
        if not dt.is_int(idx.dtype):
            self.fail("bad-index-type", f"index into '{buffer}' is {idx.dtype.name}; it must be an integer")

    # -- statements -----------------------------------------------------------------------------
    def _check_block(self, body) -> None:
        if not isinstance(body, tuple):
            self.fail("unknown-op", f"a statement block must be a tuple, got {type(body).__name__}")
        for s in body:
            self._stmt(s)

    def _local(self, name: str, what: str):
        decl = self.locals.get(name)
        if decl is None:
            self.fail("undeclared-value", f"{what} '{name}', which is no declared local")
        return decl

    def _stmt(self, s) -> None:
        if isinstance(s, Assign):
            decl = self._local(s.name, "assignment to")
            if s.name in self.loop_vars:
                self.fail("assign-to-loop-variable", f"'{s.name}' is the variable of an enclosing for loop")
            self.expr(s.value)
            self._same(s.value.dtype, decl.dtype, f"assignment to '{s.name}'")
        elif isinstance(s, (Store, AtomicAdd)):
            decl = self._buffer(s.buffer, "store to" if isinstance(s, Store) else "atomic add to")
            if isinstance(decl, BufferParam) and not decl.access.writable:
                self.fail("write-to-read-only", f"'{s.buffer}' is a read-only ('in') buffer")
            self._index(s.index, s.buffer)
            self.expr(s.value)
            self._same(s.value.dtype, decl.dtype, f"value stored to '{s.buffer}'")
            if isinstance(s, AtomicAdd):
                if decl.dtype not in ATOMIC_DTYPES:
                    self.fail("atomic-unsupported-type", f"atomic add on {decl.dtype.name} ('{s.buffer}'); "
                              "supported: " + ", ".join(d.name for d in ATOMIC_DTYPES))
                if s.result is not None:
                    if s.result in self.loop_vars:
                        self.fail("assign-to-loop-variable", f"'{s.result}' is a for-loop variable")
                    self._same(self._local(s.result, "atomic result into").dtype, decl.dtype, "atomic result")
        elif isinstance(s, If):
            self.expr(s.cond)
            self._same(s.cond.dtype, dt.bool_, "if condition")
            self._check_block(s.then)
            self._check_block(s.orelse)
        elif isinstance(s, For):
            decl = self._local(s.var, "for loop over")
            if not dt.is_int(decl.dtype):
                self.fail("type-mismatch", f"for-loop variable '{s.var}' is {decl.dtype.name}; it must be an integer")
            if s.var in self.loop_vars:
                self.fail("assign-to-loop-variable", f"'{s.var}' is already the variable of an enclosing loop")
            for b in (s.start, s.stop):
                self.expr(b)
                self._same(b.dtype, decl.dtype, f"for-loop bound of '{s.var}'")
            if not isinstance(s.step, int) or isinstance(s.step, bool) or s.step == 0:
                self.fail("bad-step", f"for-loop step {s.step!r} must be a non-zero int")
            info = dt.iinfo(decl.dtype)
            if not -(info.max + 1) < s.step <= info.max or (dt.is_unsigned(decl.dtype) and abs(s.step) > info.max):
                self.fail("bad-step", f"for-loop step {s.step} does not fit {decl.dtype.name}")
            self.loop_vars.append(s.var)
            self.loop_depth += 1
            self._check_block(s.body)
            self.loop_depth -= 1
            self.loop_vars.pop()
        elif isinstance(s, While):
            self.expr(s.cond)
            self._same(s.cond.dtype, dt.bool_, "while condition")
            self.loop_depth += 1
            self._check_block(s.body)
            self.loop_depth -= 1
        elif isinstance(s, (Break, Continue)):
            if self.loop_depth == 0:
                self.fail("break-outside-loop", f"{type(s).__name__.lower()} outside a loop")
        elif isinstance(s, Trap):
            if not isinstance(s.code, int) or not 1 <= s.code < 2**31:
                self.fail("bad-trap-code", f"trap code {s.code!r} must be in 1..2**31-1")
        elif isinstance(s, StoreX4):
            decl = self._words(s.buffer, s.index, "store_x4")
            if isinstance(decl, BufferParam) and not decl.access.writable:
                self.fail("write-to-read-only", f"'{s.buffer}' is a read-only ('in') buffer")
            if not isinstance(s.values, tuple) or len(s.values) != X4_WORDS:
                self.fail("bad-x4", f"store_x4 writes {X4_WORDS} values")
            for v in s.values:
                self.expr(v)
                self._same(v.dtype, dt.uint32, f"value stored to '{s.buffer}'")
        elif isinstance(s, CopyAsync):
            self._copy_async(s)
        elif isinstance(s, AsyncWait):
            if not isinstance(s.pending, int) or isinstance(s.pending, bool) or s.pending < 0:
                self.fail("bad-copy-async", f"copy_async_wait count {s.pending!r} must be an int >= 0")
        elif not isinstance(s, (Return, Barrier, AsyncCommit, FenceProxyAsync)):
            self.fail("unknown-op", f"unknown statement {type(s).__name__}")

    def _uniformity(self) -> None:
        if divergent_barrier(self.k.body) is not None:
            self.fail("barrier-divergent", "barrier under control flow that depends on the thread/local index "
                      "(or after a possibly-divergent return or loop exit); every thread of the workgroup "
                      "must reach the same barriers")
        if divergent_shuffle(self.k.body) is not None:
            self.fail("shuffle-divergent", "a subgroup operation (shuffle, mma, ldmatrix) under control flow that "
                      "depends on the thread/local index (or after a possibly-divergent return or loop exit): the "
                      "other lanes of its warp may not evaluate it")


__all__ = ["verify", "ATOMIC_DTYPES", "MAX_WORKGROUP_SIZE"]
