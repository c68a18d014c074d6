"""Where the user is: the innermost frame outside the poot package, which every recorded node keeps
(`Node.where`) and every error names. Recording asks on each operation, so the test is cached per
code object and a node keeps the (code, instruction offset) pair, its line found only when asked."""
from __future__ import annotations

import os
import sys

from poot.errors import line_at

_POOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# id of a code object -> True when it lives inside the poot package. Keyed by id, not by the code
# object: hashing a code object hashes its name, constants and names every time (0.3 to 0.6 us for
# a user's function, on every recorded operation). _code_kept holds each code object counted, so
# no other one can take its id.
_internal_code: dict = {}
_code_kept: list = []


def is_internal(code) -> bool:
    """Does this code object live inside the poot package (cached per code object)?"""
    inside = _internal_code.get(id(code))
    if inside is None:
        inside = os.path.abspath(code.co_filename).startswith(_POOT_DIR)
        _code_kept.append(code)
        _internal_code[id(code)] = inside
    return inside


def caller_where():
    """(filename, line) of the innermost frame outside poot; cheap: one dict lookup per frame."""
    return where_from(sys._getframe(2))


def where_from(f):
    """(filename, line) of frame `f` or, where `f` is inside poot, of the innermost frame outside
    poot that called it. A caller that knows which frames above it are poot's passes the first one
    it does not know (`sys._getframe(k)`): asking a frame for `f_back` makes Python build a frame
    object for each one walked (and copy its locals out when it returns), about 0.2 us a frame,
    while `sys._getframe(k)` builds only the one it returns."""
    w = lazy_where_from(f)
    return (w[0].co_filename, line_at(w[0], w[1])) if w is not None else None


def lazy_where_from(f):
    """where_from(f) as a node keeps it (Node.where): (code object, byte offset of the instruction
    running) of that frame, the line left to be found when it is asked for (errors.line_at)."""
    while f is not None:
        code = f.f_code
        inside = _internal_code.get(id(code))
        if inside is None:
            inside = is_internal(code)
        if not inside:
            return (code, f.f_lasti)
        f = f.f_back
    return None


def format_where(where) -> str:
    return f"{where[0]}:{where[1]}" if where else "<unknown>"
