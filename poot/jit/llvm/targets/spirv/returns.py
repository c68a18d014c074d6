"""Early returns for the SPIR-V target: a KIR -> KIR rewrite that leaves no Return statement.

LLVM 22's SPIR-V structurizer emits invalid SPIR-V (merges out of place, exits that bypass their
selection) for returns out of nested control flow, and for flag-guarded emulations of them; it handles
if/else and loops with break. So a Return is folded into the structure around it:

- `if c: A (returns)` followed by R becomes `if c: A' else: R'` -- what follows a statement that may
  return moves into the branches that fall through (duplicated only when both branches can);
- a Return inside a loop sets the local `__returned` and breaks; after each loop that may return,
  `if __returned: break` (in an enclosing loop) or `if not __returned: R'` (otherwise).

The verifier makes a Return before a barrier uniform, so the breaks and branches that replace it are
uniform too. Code duplication is capped; a kernel past the cap is refused by name.
"""
from __future__ import annotations

import dataclasses

from poot import dtypes as dt
from poot.errors import LoweringError
from poot.jit.kir.model import Assign, Break, Const, For, If, Kernel, Local, Read, Return, Unary, While

FLAG = "__returned"
MAX_GROWTH = 8                      # the rewritten body may hold at most this many times the statements


def _has_return(s) -> bool:
    if isinstance(s, Return):
        return True
    if isinstance(s, If):
        return any(map(_has_return, s.then)) or any(map(_has_return, s.orelse))
    if isinstance(s, (For, While)):
        return any(map(_has_return, s.body))
    return False


def _size(body) -> int:
    n = 0
    for s in body:
        n += 1
        for sub in ("then", "orelse", "body"):
            n += _size(getattr(s, sub, ()))
    return n


def _returned():
    return Read(FLAG, dt.bool_)


def _rewrite(body, in_loop: bool) -> tuple:
    out = []
    for i, s in enumerate(body):
        if not _has_return(s):
            out.append(s)
            continue
        rest = tuple(body[i + 1:])
        if isinstance(s, Return):
            if in_loop:
                out += [Assign(FLAG, Const(True, dt.bool_)), Break()]
            return tuple(out)
        if isinstance(s, If):
            then, orelse = _rewrite(tuple(s.then) + rest, in_loop), _rewrite(tuple(s.orelse) + rest, in_loop)
            if not then:                            # `if c: return` -> `if not c: rest` (one-armed)
                out.append(If(Unary("not", s.cond, dt.bool_), orelse))
            else:
                out.append(If(s.cond, then, orelse))
            return tuple(out)
        out.append(dataclasses.replace(s, body=_rewrite(s.body, True)))       # For / While
        if in_loop:
            out.append(If(_returned(), (Break(),)))
            out += _rewrite(rest, in_loop)
        elif rest:
            out.append(If(Unary("not", _returned(), dt.bool_), _rewrite(rest, in_loop)))
        return tuple(out)
    return tuple(out)


def eliminate_returns(kernel: Kernel) -> Kernel:
    """`kernel` without Return statements (see the module doc)."""
    if not any(map(_has_return, kernel.body)):
        return kernel
    body = _rewrite(kernel.body, False)
    if _size(body) > MAX_GROWTH * max(_size(kernel.body), 8):
        raise LoweringError(f"kernel '{kernel.name}': its early returns would need {_size(body)} statements "
                            "in structured form for the SPIR-V target; return from fewer places")
    flag_used = any(isinstance(n, Read) and n.name == FLAG for n in _walk(body))
    if not flag_used:
        return dataclasses.replace(kernel, body=body)
    return dataclasses.replace(kernel, body=(Assign(FLAG, Const(False, dt.bool_)),) + body,
                               locals=kernel.locals + (Local(FLAG, dt.bool_),))


def _walk(node):
    if isinstance(node, (tuple, list)):
        for x in node:
            yield from _walk(x)
    elif dataclasses.is_dataclass(node):
        yield node
        for f in dataclasses.fields(node):
            yield from _walk(getattr(node, f.name))


__all__ = ["eliminate_returns"]
