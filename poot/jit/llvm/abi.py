"""The launch ABI: how a compiled kernel receives its arguments. Identical on every target.

A kernel with buffer params b0..bn-1 (in declaration order) and scalar params s0..sm-1 is called with

  1. the n buffers, bound in order (CPU: an array of n pointers; PTX: n `ptr addrspace(1)` params;
     SPIR-V: bindings 0..n-1);
  2. one read-only **meta** buffer of uint32 words:
       word i, i < n          the element count of buffer i (`Len`)   -- so buffers hold < 2**32 elements
       then each scalar param in order: 8/16/32-bit ones in one word (the value's bits, zero-extended),
            64-bit ones in two words (little-endian), starting at an even word;
       then 3 words           the logical grid: num_groups x, y, z (`Index('num_groups', a)`)
       then 1 word            the launch id (written to the trap buffer by a trapping kernel)
     so `Len`, scalar `Read`s and `num_groups` come from the same place everywhere;
  3. one writable **trap** buffer of TRAP_WORDS uint32 words: word 0 the trap code (0: no trap; the first
     trap wins through an atomic compare-exchange 0 -> code), word 1 the launch id of the trapping
     launch (so a runtime that synchronizes late can name the kernel).

Aliasing. Buffer params are `noalias` on every target (that is what lets loops vectorize and GPU loads
use the read-only path): a buffer that the kernel writes must not be bound to two params, nor overlap
another param's buffer. Read-only params may share a buffer.

Grid folding. A launch has a logical grid (gx, gy, gz) of workgroups. A GPU device whose per-dimension
limits are smaller may run a *physical* grid (poot/devices/grid.py fold_grid), of at least gx*gy*gz groups; the kernel
computes its linear physical group id, decomposes it over the logical grid read from meta, and groups
beyond the logical count exit at once (uniformly for the whole workgroup, before any barrier).
The CPU runs the logical grid linearized: its entry takes a half-open range of linear group ids.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from poot import dtypes as dt
from poot.errors import LaunchError
from poot.jit.kir.model import Kernel

TRAP_WORDS = 4           # code, launch id, two reserved words
ABI_BUFFERS = 2          # meta and trap, bound after a kernel's own buffers
TRAP_CODE_WORD, TRAP_LAUNCH_WORD = 0, 1
MAX_ELEMENTS = 2**32 - 1


@dataclass(frozen=True)
class MetaLayout:
    """Word offsets into the meta buffer for one kernel."""
    lengths: tuple[int, ...]                 # word of each buffer param's element count
    scalars: tuple[tuple[str, int, object], ...]   # (name, word, dtype) per scalar param
    grid: int                                # first of the 3 num_groups words
    launch_id: int
    words: int                               # total words (padded to even)


def meta_layout(kernel: Kernel) -> MetaLayout:
    n = len(kernel.buffers)
    word = n
    scalars = []
    for p in kernel.scalars:
        if p.dtype.bits == 64:
            word += word & 1
            scalars.append((p.name, word, p.dtype))
            word += 2
        else:
            scalars.append((p.name, word, p.dtype))
            word += 1
    grid = word
    launch = grid + 3
    total = launch + 1
    return MetaLayout(tuple(range(n)), tuple(scalars), grid, launch, total + (total & 1))


def scalar_bits(value, dtype) -> int:
    """The bit pattern of scalar `value` as `dtype` (an unsigned int of dtype's width)."""
    if dtype is dt.bool_:
        return int(bool(value))
    if dt.is_int(dtype):
        integral = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if not integral and not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise LaunchError(f"scalar {value!r} is not an integer for a {dtype.name} param")
        v = int(value)
        info = dt.iinfo(dtype)
        if not info.min <= v <= info.max:
            raise LaunchError(f"scalar {value} does not fit {dtype.name}")
        return v & ((1 << dtype.bits) - 1)
    if dtype is dt.bfloat16 or dtype.bits < 64:
        utype = {16: np.uint16, 32: np.uint32}[dtype.bits]
        return int(np.array(float(value), dtype=np.float64).astype(dtype.np).view(utype))
    return int(np.array(float(value), dtype=np.float64).view(np.uint64))


def pack_meta(kernel: Kernel, lengths, scalars, groups, launch_id: int = 0,
              layout: MetaLayout | None = None) -> np.ndarray:
    """The meta words for one launch as a uint32 array. `lengths`: element count per buffer param;
    `scalars`: a dict by name or a sequence in param order; `groups`: the logical grid (x[, y[, z]])."""
    return np.array(meta_words(kernel, lengths, scalars, groups, launch_id, layout), dtype=np.uint32)


def meta_words(kernel: Kernel, lengths, scalars, groups, launch_id: int = 0,
               layout: MetaLayout | None = None) -> list[int]:
    """pack_meta's words as a list of ints (the host fast path: no NumPy array per launch)."""
    layout = layout or meta_layout(kernel)
    n = len(layout.lengths)
    if len(lengths) != n:
        raise LaunchError(f"kernel '{kernel.name}' takes {n} buffers, got {len(lengths)}")
    if n and (max(lengths) > MAX_ELEMENTS or min(lengths) < 0):
        raise LaunchError(f"kernel '{kernel.name}': a buffer of {max(lengths)} elements is above the limit of "
                          f"{MAX_ELEMENTS} (2**32-1) elements per buffer (lengths are uint32); split it")
    words = list(lengths) + [0] * (layout.words - n)
    if layout.scalars or scalars:
        _pack_scalars(kernel, layout, scalars, words)
    g = groups if type(groups) is tuple and len(groups) == 3 else normalize_grid(groups)
    words[layout.grid:layout.grid + 3] = g
    words[layout.launch_id] = launch_id & 0xFFFFFFFF
    return words


def _pack_scalars(kernel, layout: MetaLayout, scalars, words) -> None:
    if isinstance(scalars, dict):
        missing = [name for name, _, _ in layout.scalars if name not in scalars]
        extra = set(scalars) - {name for name, _, _ in layout.scalars}
        if missing or extra:
            raise LaunchError(f"kernel '{kernel.name}' scalars: missing {missing}, unexpected {sorted(extra)}")
        values = [scalars[name] for name, _, _ in layout.scalars]
    else:
        values = list(scalars or ())
        if len(values) != len(layout.scalars):
            raise LaunchError(f"kernel '{kernel.name}' takes {len(layout.scalars)} scalars, got {len(values)}")
    for (name, w, dtype), v in zip(layout.scalars, values):
        bits = scalar_bits(v, dtype)
        words[w] = bits & 0xFFFFFFFF
        if dtype.bits == 64:
            words[w + 1] = bits >> 32


def normalize_grid(groups) -> tuple[int, int, int]:
    g = (groups,) if isinstance(groups, (int, np.integer)) else tuple(groups)
    if not 1 <= len(g) <= 3:
        raise LaunchError(f"grid {groups!r} must have 1 to 3 dimensions")
    g = tuple(int(x) for x in g) + (1,) * (3 - len(g))
    if any(x < 0 or x > MAX_ELEMENTS for x in g):
        raise LaunchError(f"grid {g} has a dimension outside 0..2**32-1")
    return g


__all__ = ["MetaLayout", "meta_layout", "pack_meta", "meta_words", "scalar_bits", "normalize_grid",
           "TRAP_WORDS", "TRAP_CODE_WORD", "TRAP_LAUNCH_WORD", "MAX_ELEMENTS", "LaunchError"]
