"""Evaluating graph values inside a kernel: `ValueGen.value(var, index)` returns a KIR expression for
`var[index]`, recursing through the equations of the kernel's closure down to loads of materialized
buffers. Movement ops are index arithmetic (poot.fuse.access); every computed value is bound to a
local and memoized per (value, index), so a DAG never turns into an exponentially large tree."""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import TRAP_INDEX
from poot.fuse.access import concat_offsets, operand_index
from poot.fuse.indexing import Clamp, Coord, Data, Div, Form, Mod, ravel
from poot.graph import Var
from poot.graph.ops import OPS
from poot.jit.kir.builder import binary, cast, const, select
from poot.jit.kir.model import Const, Load, Read
from poot.jit.codegen import elementwise  # noqa: F401  (registers each elementwise op's kir rule)
from poot.jit.llvm.targets import KernelStyle

_UNSIGNED = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


class ValueGen:
    def __init__(self, kb, producer: dict, buffers: dict[int, str], index_dtype):
        self.kb, self.producer, self.buffers = kb, producer, buffers
        self.idt = index_dtype
        self.coords: dict[str, object] = {}      # Coord name -> KIR expression
        self.reduced: dict[int, object] = {}     # reduction var id -> its value for the current row
        self.data: dict[object, object] = {}     # Data key -> KIR expression of the loaded index
        self.scopes: list[dict] = [{}]
        self._data_count = 0
        self._index_flags: dict[tuple[str, str], object] = {}   # (what, where) -> its trap flag

    # -- scopes: values computed inside a loop body are forgotten when the body ends --
    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def _get(self, key):
        for s in reversed(self.scopes):
            hit = s.get(key)
            if hit is not None:
                return hit
        return None

    def _bind(self, key, expr, name="t"):
        if not isinstance(expr, (Const, Read)):
            expr = self.kb.let(name, expr)
        self.scopes[-1][key] = expr
        return expr

    # -- indices --
    def index(self, f: Form):
        out = None
        for atom, coef in f.terms:
            a = self._atom(atom)
            term = a if coef == 1 else binary("mul", a, const(coef, self.idt))
            out = term if out is None else binary("add", out, term)
        if out is None:
            return const(f.const, self.idt)
        return binary("add", out, const(f.const, self.idt)) if f.const else out

    def _atom(self, a):
        if isinstance(a, Coord):
            return self.coords[a.name]
        if isinstance(a, Data):
            return self.data[a.key]
        key = ("atom", a)
        hit = self._get(key)
        if hit is not None:
            return hit
        inner = self.index(a.form)
        lo, hi = a.form.bounds()
        if isinstance(a, (Div, Mod)):
            k = const(a.k, self.idt)
            q, r = binary("div", inner, k), binary("rem", inner, k)
            if lo < 0:   # floor semantics for values that may be negative
                neg = binary("lt", r, 0)
                q = select(neg, binary("sub", q, 1), q)
                r = select(neg, binary("add", r, k), r)
            expr = q if isinstance(a, Div) else r
        else:  # Clamp
            ok = None
            if lo < 0:
                ok = binary("ge", inner, 0)
            if hi >= a.size:
                below = binary("lt", inner, a.size)
                ok = below if ok is None else binary("and", ok, below)
            expr = inner if ok is None else select(ok, inner, const(0, self.idt))
        return self._bind(key, expr, "ix")

    # -- values --
    def value(self, v: Var, idx: list[Form]):
        key = ("v", v.id, tuple(idx))
        hit = self._get(key)
        if hit is not None:
            return hit
        self._evaluate_operands_first(v, idx)
        return self._value(v, idx, key)

    def _evaluate_operands_first(self, v: Var, idx: list[Form]) -> None:
        """Bind the values of an elementwise/movement/concatenate chain below `v[idx]` bottom-up, so
        `_value` finds its operands memoized: a chain thousands of equations deep (a long pending
        loop, a big jitted function, appends in a loop) never nears Python's recursion limit."""
        stack, seen = [(v, idx, False)], set()
        while stack:                       # post-order: an equation after all its operands
            u, uidx, operands_done = stack.pop()
            key = ("v", u.id, tuple(uidx))
            if operands_done:
                if u is not v and self._get(key) is None:
                    self._value(u, uidx, key)
                continue
            if key in seen or u.id in self.buffers or u.id in self.reduced or self._get(key) is not None:
                continue
            seen.add(key)
            e = self.producer[u.id]
            if e.op == "update_slice":     # only the operands this index can read
                rel = slice_relation(e, uidx)
                stack.append((u, uidx, True))
                if rel != "out":
                    stack.append((e.inputs[1], operand_index(e, 1, uidx), False))
                if rel != "in":
                    stack.append((e.inputs[0], uidx, False))
                continue
            if e.op == "concatenate":      # only the pieces this index can read
                stack.append((u, uidx, True))
                stack.extend((e.inputs[k], operand_index(e, k, uidx), False) for k, _ in reached(e, uidx))
                continue
            if e.op == "pad" or OPS[e.op].kind not in ("elementwise", "movement"):
                continue
            stack.append((u, uidx, True))
            stack.extend((w, operand_index(e, k, uidx), False) for k, w in enumerate(e.inputs))

    def _value(self, v: Var, idx: list[Form], key):
        if v.id in self.buffers:
            expr = Load(self.buffers[v.id], self.index(ravel(idx, v.aval.shape)), v.aval.dtype)
            return self._bind(key, expr, "ld")
        if v.id in self.reduced:
            return self.reduced[v.id]
        e = self.producer[v.id]
        kind = OPS[e.op].kind
        if e.op == "full":
            return const(e.params["value"], e.params["dtype"])
        if e.op == "iota":
            expr = cast(self.index(idx[e.params["axis"]]), e.params["dtype"])
        elif e.op == "pad":
            expr = self._pad(e, idx)
        elif e.op == "concatenate":
            expr = self._concatenate(e, idx)
        elif e.op == "take":
            expr = self._take(e, idx)
        elif e.op == "update_slice":
            expr = self._update_slice(e, idx)
        elif kind == "movement":
            expr = self.value(e.inputs[0], operand_index(e, 0, idx))
        elif kind == "elementwise":
            args = [self.value(u, operand_index(e, k, idx)) for k, u in enumerate(e.inputs)]
            expr = OPS[e.op].kir(self.kb, e, *args)
        else:
            raise RuntimeError(f"kernelgen: '{e.op}' cannot be computed inside this kernel (planner bug)")
        return self._bind(key, expr, e.op[:6])

    def _pad(self, e, idx):
        x = e.inputs[0]
        ok = None
        for f, (lo, hi), n in zip(idx, e.params["widths"], x.aval.shape):
            if not (lo or hi):
                continue
            i = self.index(f)
            cond = binary("and", binary("ge", i, lo), binary("lt", i, lo + n))
            ok = cond if ok is None else binary("and", ok, cond)
        inner = self.value(x, operand_index(e, 0, idx))
        return inner if ok is None else select(ok, inner, const(e.params["value"], x.aval.dtype))

    def _concatenate(self, e, idx):
        """A balanced tree of selects on the position along the axis: depth log2(pieces), not a chain
        as long as the piece count. Pieces the index never reaches (by its bounds) cost no code."""
        ax = e.params["axis"]
        pieces = reached(e, idx)
        if len(pieces) == 1:
            k = pieces[0][0]
            return self.value(e.inputs[k], operand_index(e, k, idx))
        pos = self.index(idx[ax])
        if not isinstance(pos, (Const, Read)):
            pos = self.kb.let("pos", pos)
        reads = [(e.inputs[k], operand_index(e, k, idx)) for k, _ in pieces]
        values = [self.value(u, i) for u, i in reads]

        def tree(a: int, b: int):          # the value among pieces[a:b]
            if b - a == 1:
                return values[a]
            m = (a + b) // 2
            return select(binary("lt", pos, const(pieces[m][1], self.idt)), tree(a, m), tree(m, b))
        return tree(0, len(pieces))

    def _take(self, e, idx):
        x, ind = e.inputs
        ax, m = e.params["axis"], ind.aval.ndim
        n = x.aval.shape[ax]
        i = self.checked_index(self.value(ind, idx[ax:ax + m]), n,
                               f"index out of bounds for an axis of size {n}", e.where)
        self._data_count += 1
        dkey = ("take", self._data_count)
        self.data[dkey] = i
        src = idx[:ax] + [Form.of(Data(dkey, n))] + idx[ax + m:]
        return self.value(x, src)

    def checked_index(self, v, n: int, what: str, where: str):
        """`v` (an integer index expression) as an index-dtype local in [0, n): an out-of-range `v`
        sets the trap flag of the site (what, where), which traps at the end of the kernel with a
        KernelIndexError code, and reads as 0 meanwhile, so no access leaves the buffer. One unsigned
        compare and a flag update, no branch: the loop around it stays vectorizable."""
        t = v.dtype
        if t.bits < 64 and n >= 1 << (t.bits - 1):      # n may not fit the index's own type: widen
            v, t = cast(v, dt.int64), dt.int64
        u = _UNSIGNED[t.bits]
        bad = self.kb.let("bad", binary("ge", cast(v, u), const(n, u)))   # negatives wrap high
        flag = self._index_flags.get((what, where))
        if flag is None:
            code = TRAP_INDEX + len(self._index_flags)
            flag = self._index_flags[(what, where)] = self.kb.trap_flag(code, what, where)
        self.kb.assign(flag, binary("or", flag, bad))
        return self.kb.let("gi", select(bad, const(0, self.idt), cast(v, self.idt)))

    def _update_slice(self, e, idx):
        x, v = e.inputs
        p = e.params
        rel = slice_relation(e, idx)
        if rel == "out":       # an element this update does not write: the value below it, no select
            return self.value(x, idx)
        if rel == "in":
            return self.value(v, operand_index(e, 1, idx))
        inside = None
        for f, s, st, size, n in zip(idx, p["starts"], p["steps"], p["sizes"], x.aval.shape):
            if size == n and st == 1:
                continue
            i = self.index(f)
            rel = binary("sub", i, s) if st > 0 else binary("sub", const(s, self.idt), i)
            cond = binary("and", binary("ge", rel, 0), binary("lt", rel, size * abs(st)))
            if abs(st) != 1:
                cond = binary("and", cond, binary("eq", binary("rem", rel, abs(st)), 0))
            inside = cond if inside is None else binary("and", inside, cond)
        old = self.value(x, idx)
        new = self.value(v, operand_index(e, 1, idx))
        return new if inside is None else select(inside, new, old)


def reached(e, idx: list[Form]) -> list[tuple[int, int]]:
    """(operand, offset) of the non-empty pieces of concatenate `e` that `idx` can read (by its bounds
    along the axis). Where every piece is empty along the axis the result has no element, and the
    first piece stands in (its read never runs)."""
    ax = e.params["axis"]
    lo, hi = idx[ax].bounds()
    out = [(k, off) for k, (off, u) in enumerate(zip(concat_offsets(e), e.inputs))
           if u.aval.shape[ax] and off + u.aval.shape[ax] > lo and off <= hi]
    return (out or [(k, off) for k, (off, u) in enumerate(zip(concat_offsets(e), e.inputs)) if u.aval.shape[ax]]
            or [(0, 0)])


def slice_relation(e, idx: list[Form]) -> str | None:
    """Where `idx` lies relative to the slice an update_slice `e` writes, known from the forms' bounds
    alone: "in" (inside for every value the forms take), "out" (outside for every value), or None
    (decided at run time). A chain of updates read at an element few of them write (a row read back
    after other rows were written) thus costs no code for the others."""
    p = e.params
    inside = True
    for f, s, st, size, n in zip(idx, p["starts"], p["steps"], p["sizes"], e.inputs[0].aval.shape):
        if size == 0:
            return "out"
        if size == n and st == 1:
            continue
        first, last = (s, s + st * (size - 1)) if st > 0 else (s + st * (size - 1), s)
        lo, hi = f.bounds()
        if hi < first or lo > last:
            return "out"
        if f.is_const:
            if (f.const - first) % abs(st):
                return "out"
        elif abs(st) != 1 or lo < first or hi > last:
            inside = False
    return "in" if inside else None


def index_dtype_for(sizes, style: KernelStyle):
    """int64 on the CPU (addressing is 64-bit anyway); int32 on GPUs when every index fits."""
    if style is KernelStyle.CPU or max(sizes, default=0) >= 2**31 - 1:
        return dt.int64
    return dt.int32
