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

from poot.errors import ConfigError


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


# --- parsing: every integer variable and every on/off switch goes through these two, so a value poot
# cannot use stops with a ConfigError naming the variable instead of being read as a default (a typo in
# POOT_DISK_CACHE=of would otherwise leave the cache on without a word)
def parse_int(name: str, value, default: int, minimum: int = 0) -> int:
    """`value` (a variable's text, None when unset) as an integer >= `minimum`; unset or empty: `default`."""
    text = (value or "").strip()
    if not text:
        return default
    try:
        number = int(text, 10)   # Python's digits: "2_000_000" is fine, "1e9" and "1.5" are not
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number (unset it for poot's default)") from None
    if number < minimum:
        raise ConfigError(f"{name}={value!r} is below {minimum}, the least it takes (unset it for poot's default)")
    return number


def parse_switch(name: str, value, default: bool) -> bool:
    """`value` as an on/off switch: `1` on, `0` off; unset or empty: `default`. Anything else is refused
    (the switches are documented as 0/1, and POOT_LOG_COMPILES is compared with "1" where it is read)."""
    text = (value or "").strip()
    if not text:
        return default
    if text in ("0", "1"):
        return text == "1"
    raise ConfigError(f"{name}={value!r}: use 1 (on) or 0 (off), or unset it for the default "
                      f"({'1' if default else '0'})")


def integer(name: str, default: int, minimum: int = 0) -> int:
    """The integer variable `name` now (for reads off the hot paths; `reader` for the others)."""
    return parse_int(name, os.environ.get(name), default, minimum)


def switch(name: str, default: bool) -> bool:
    """The on/off variable `name` now (for reads off the hot paths; `reader` for the others)."""
    return parse_switch(name, os.environ.get(name), default)


def switch_reader(name: str, default: bool) -> Callable[[], bool]:
    """A cheap reader (see `reader`) of the on/off variable `name`."""
    return reader(name, lambda value: parse_switch(name, value, default))


# POOT_DEBUG for the runtime, which asks on every realize, every program run and every kernel launch;
# poot.jit.llvm.compile and the Vulkan device read it through the same function
debug_level = reader("POOT_DEBUG", lambda value: parse_int("POOT_DEBUG", value, 0))

# POOT_EAGER_REPLAY=0: every eager realize walks its program's steps, launch by launch, instead of
# replaying a recording from the program's third realize on (what a launch counter or a profiler that
# hooks dispatches wants to see)
eager_replay = switch_reader("POOT_EAGER_REPLAY", True)

# the switches read off the hot paths, with their defaults; `check` parses them all at import
SWITCHES = {"POOT_EAGER_REPLAY": True, "POOT_LOG_COMPILES": False, "POOT_DISK_CACHE": True,
            "POOT_CPU_CHAIN": True, "POOT_CPU_BLAS": True, "POOT_WGPU_NATIVE": True,
            "POOT_VULKAN_VALIDATION": False}
# the integer variables, with the least value each takes
INTEGERS = {"POOT_DEBUG": 0, "POOT_MAX_KERNEL_NODES": 1, "POOT_MAX_IR_BYTES": 1, "POOT_MAX_ARTIFACT_BYTES": 1,
            "POOT_CPU_POOL_BYTES": 0, "POOT_GC_THRESHOLD": 0}


def check() -> None:
    """Parse every switch and integer variable once (at `import poot`), so a bad value is reported when
    the program starts, not at the first realize or the first compile that happens to read it."""
    for name, default in SWITCHES.items():
        switch(name, default)
    for name, minimum in INTEGERS.items():
        integer(name, minimum, minimum)
