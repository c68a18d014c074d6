"""Breaks and continues for the SPIR-V target: a KIR -> KIR rewrite that leaves no Break or Continue,
so every loop LLVM sees has one exit (its header's test) and every selection falls through to its merge.

LLVM 22's SPIR-V structurizer gets single-exit loops and if/else diamonds right, but a loop left from
inside a selection (`if x[k] < 0: out[0] = k; break`) comes out with exits that bypass their selection
and merges out of place: naga refuses the module ("The `break` is used outside of a `loop` or `switch`
context"), lavapipe's pipeline creation fails (VkErrorUnknown), while `spirv-val` accepts it. So the
exits are spelled with flags before lowering, the loop's structure being kept:

- per loop, `stop` (a break was taken) and `skip` (the rest of this iteration is skipped: a break or a
  continue was taken), each only where needed; `skip` is cleared at the top of every iteration;
- a statement that may exit is followed by the rest of its block in `if not skip` (or `if not stop`);
  where one branch of an `if` always exits, the rest moves into the other branch instead (no flag test);
  statements after an unconditional exit are dead and dropped;
- a While that breaks becomes `while not stop: if cond: body else: stop = True` (its condition, which
  may load memory, is evaluated exactly when it was before);
- a For that breaks becomes a While over its trip count, `k < trips and not stop`, computed once as
  the For lowering computes it (lower.py for_header): no overflow at the end of the range.

Returns are folded first (spirv_returns.py; inside loops they become breaks). The verifier makes an exit
before a barrier uniform, so the flags that replace it are uniform too.
"""
from __future__ import annotations

import dataclasses

from poot import dtypes as dt
from poot.errors import LoweringError
from poot.jit.kir.model import (Assign, Binary, Break, Cast, Const, Continue, For, If, Kernel, Local, Read, Return,
                         Select, Unary, While)

_UNSIGNED = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


@dataclasses.dataclass
class _Loop:
    stop: str | None = None                 # set by a break
    skip: str | None = None                 # set by a break or a continue: the rest of the iteration is skipped

    @property
    def guard(self) -> str:
        return self.skip or self.stop


def _exits(body) -> set[str]:
    """The exits of the innermost enclosing loop taken somewhere in `body` ("break", "continue")."""
    found = set()
    for s in body:
        if isinstance(s, Break):
            found.add("break")
        elif isinstance(s, Continue):
            found.add("continue")
        elif isinstance(s, If):
            found |= _exits(s.then) | _exits(s.orelse)
    return found


def _always_exits(body) -> bool:
    """Whether every path through `body` ends in a break or a continue of the enclosing loop."""
    return any(isinstance(s, (Break, Continue)) or (isinstance(s, If) and _always_exits(s.then)
                                                     and _always_exits(s.orelse)) for s in body)


def _flag(name: str):
    return Read(name, dt.bool_)


def _not(e):
    return Unary("not", e, dt.bool_)


def _set(name: str, value: bool) -> Assign:
    return Assign(name, Const(value, dt.bool_))


def _if(cond, then, orelse=()) -> tuple:
    if not then and not orelse:
        return ()
    if not then:
        return (If(_not(cond), orelse),)
    return (If(cond, then, orelse),)


class _Rewrite:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.taken = {p.name for p in kernel.params} | {v.name for v in kernel.locals} | \
                     {s.name for s in kernel.shared}
        self.types = {v.name: v.dtype for v in kernel.locals}
        self.new_locals: list[Local] = []
        self.count = 0

    def fresh(self, hint: str, dtype) -> str:
        while True:
            self.count += 1
            name = f"__{hint}{self.count}"
            if name not in self.taken:
                break
        self.taken.add(name)
        self.new_locals.append(Local(name, dtype))
        return name

    # -- blocks ---------------------------------------------------------------------------------------
    def block(self, body, loop: _Loop | None) -> tuple:
        out: list = []
        for i, s in enumerate(body):
            if isinstance(s, Return):
                raise LoweringError(f"kernel '{self.kernel.name}': a Return is left after spirv_returns")
            if isinstance(s, Break):
                out.append(_set(loop.stop, True))
                if loop.skip:
                    out.append(_set(loop.skip, True))
                return tuple(out)
            if isinstance(s, Continue):
                out.append(_set(loop.skip, True))
                return tuple(out)
            if isinstance(s, (For, While)):
                out += self.loop(s)
                continue
            if not isinstance(s, If):
                out.append(s)
                continue
            rest = tuple(body[i + 1:])
            if loop is None or not _exits((s,)) or not rest:
                out += _if(s.cond, self.block(s.then, loop), self.block(s.orelse, loop))
                continue
            then_exits, else_exits = _always_exits(s.then), _always_exits(s.orelse)
            if then_exits and else_exits:       # what follows is dead
                out += _if(s.cond, self.block(s.then, loop), self.block(s.orelse, loop))
            elif then_exits:                    # the rest runs only on the else path
                out += _if(s.cond, self.block(s.then, loop), self.block(tuple(s.orelse) + rest, loop))
            elif else_exits:
                out += _if(s.cond, self.block(tuple(s.then) + rest, loop), self.block(s.orelse, loop))
            else:
                out += _if(s.cond, self.block(s.then, loop), self.block(s.orelse, loop))
                out += _if(_not(_flag(loop.guard)), self.block(rest, loop))
            return tuple(out)
        return tuple(out)

    # -- loops ----------------------------------------------------------------------------------------
    def loop(self, s) -> list:
        exits = _exits(s.body)
        loop = _Loop(stop=self.fresh("stop", dt.bool_) if "break" in exits else None,
                     skip=self.fresh("skip", dt.bool_) if "continue" in exits else None)
        body = self.block(s.body, loop)
        if loop.skip:
            body = (_set(loop.skip, False),) + body
        if loop.stop is None:
            return [dataclasses.replace(s, body=body)]
        if isinstance(s, While):
            if isinstance(s.cond, Const) and s.cond.value:
                inner = body
            else:
                inner = (If(s.cond, body, (_set(loop.stop, True),)),)
            return [_set(loop.stop, False), While(_not(_flag(loop.stop)), inner)]
        return self.counted(s, loop, body)

    def counted(self, s: For, loop: _Loop, body: tuple) -> list:
        """`s` (a For that breaks) as a While over its trip count."""
        t = self.types[s.var]
        u = _UNSIGNED[t.bits]
        start, end = self.fresh("start", t), self.fresh("end", t)
        trips, k = self.fresh("trips", u), self.fresh("k", u)
        up, mag = s.step > 0, abs(s.step)

        def unsigned(e):
            return e if t is u else Cast(e, u)
        lo, hi = (Read(start, t), Read(end, t)) if up else (Read(end, t), Read(start, t))
        diff = unsigned(Binary("sub", hi, lo, t))
        n = diff if mag == 1 else Binary("add", Binary("div", Binary("sub", diff, Const(1, u), u), Const(mag, u), u),
                                         Const(1, u), u)
        count = Select(Binary("lt", lo, hi, dt.bool_), n, Const(0, u), u)
        off = Read(k, u) if mag == 1 else Binary("mul", Read(k, u), Const(mag, u), u)
        var = Binary("add" if up else "sub", Read(start, t), off if t is u else Cast(off, t), t)
        go = Binary("and", _not(_flag(loop.stop)), Binary("lt", Read(k, u), Read(trips, u), dt.bool_), dt.bool_)
        head = (Assign(s.var, var), Assign(k, Binary("add", Read(k, u), Const(1, u), u)))
        return [Assign(start, s.start), Assign(end, s.stop), Assign(trips, count), Assign(k, Const(0, u)), _set(loop.stop, False),
                While(go, head + body)]


def _has_exit(body) -> bool:
    for s in body:
        if isinstance(s, (Break, Continue)):
            return True
        for sub in ("then", "orelse", "body"):
            if _has_exit(getattr(s, sub, ())):
                return True
    return False


def eliminate_loop_exits(kernel: Kernel) -> Kernel:
    """`kernel` (without Return statements) without Break and Continue (see the module doc)."""
    if not _has_exit(kernel.body):
        return kernel
    r = _Rewrite(kernel)
    body = r.block(kernel.body, None)
    return dataclasses.replace(kernel, body=body, locals=kernel.locals + tuple(r.new_locals))


__all__ = ["eliminate_loop_exits"]
