"""Environment variables read on hot paths: every realize and every jitted call asks for some.

Why: `os.environ.get(name)` encodes the name and decodes the value on each call, about 0.7 us; a
realize of a small chain reads POOT_DEBUG and the current device (POOT_DEVICE), and paid more for
those reads than for its kernel. `reader(name, parse)` returns a function that looks the encoded name
up in the mapping behind `os.environ` (CPython keeps it in `os.environ._data`) with one dict lookup,
and parses the value again only when it changed. Every change made through `os.environ`
(`os.environ[...] = ...`, `monkeypatch.setenv`) lands in that mapping, so nothing is missed. Where
the mapping is not there (another Python implementation), or `os.environ` was replaced by another
object, the reader falls back to `os.environ.get`.
"""
from __future__ import annotations

import os
from typing import Callable


def reader(name: str, parse: Callable) -> Callable:
    """A function returning `parse(value)` for the current value of environment variable `name`
    (None when unset); `parse` runs again only when the value changes."""
    environ = os.environ
    data = getattr(environ, "_data", None)
    encodekey = getattr(environ, "encodekey", None)
    decodevalue = getattr(environ, "decodevalue", None)
    if not isinstance(data, dict) or encodekey is None or decodevalue is None:
        return lambda: parse(os.environ.get(name))
    key = encodekey(name)
    last = [(object(), None)]   # (the raw value seen last, its parsed value), one tuple: threads agree

    def read():
        if os.environ is not environ:
            return parse(os.environ.get(name))
        raw = data.get(key)
        seen = last[0]
        if raw is seen[0]:
            return seen[1]
        value = parse(None if raw is None else decodevalue(raw))
        last[0] = (raw, value)
        return value

    return read


def _debug_from_env(value) -> int:
    """POOT_DEBUG's level as poot.jit.llvm.compile.debug_level reads it (0 when unset or not a number)."""
    try:
        return int(value or 0)
    except ValueError:
        return 0


# POOT_DEBUG for the runtime, which asks on every realize, every program run and every kernel launch
debug_level = reader("POOT_DEBUG", _debug_from_env)


def _on_unless_zero(value) -> bool:
    return (value or "1").strip() != "0"


# POOT_EAGER_REPLAY=0: every eager realize walks its program's steps, launch by launch, instead of
# replaying a recording from the program's third realize on (what a launch counter or a profiler that
# hooks dispatches wants to see)
eager_replay = reader("POOT_EAGER_REPLAY", _on_unless_zero)
