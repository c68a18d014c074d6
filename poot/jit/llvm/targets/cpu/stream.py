"""Streaming (non-temporal) stores for the CPU target's `stream` buffers (kir.model.Access.STREAM).

LLVM's loop vectorizer refuses to vectorize a loop whose scalar stores carry `!nontemporal` (no
aligned vector store can be proven for them), so the metadata is attached after the optimization
pipeline instead: to every vector store into a stream buffer whose alignment LLVM proved is at least
its size (the buffer's base is declared `align 64`; a pointwise block starts at a multiple of 16
elements). Unaligned or scalar stores (a block's remainder) stay ordinary stores. The entry function
ends with an `sfence`, so the streamed data is visible before the launch is seen as finished.
"""
from __future__ import annotations

import re

_GEP = re.compile(r"^\s*(%[-\w.$]+) = getelementptr (?:inbounds )?(?:nuw )?(?:nusw )?[^,]+, ptr (%[-\w.$]+),")
_STORE = re.compile(r"^(\s*store <(\d+) x (float|double|i8|i16|i32|i64|half|bfloat)> [^,]+, ptr (%[-\w.$]+), align (\d+))(.*)$")
_BYTES = {"float": 4, "double": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2}
_MD = re.compile(r"!(\d+)\b")


def mark_streaming_stores(text: str, group: str, stream_params: set[str]) -> tuple[str, int]:
    """`text` (optimized module IR) with the aligned vector stores of function `@group` into the
    pointer params named in `stream_params` ('%b2', ...) marked `!nontemporal`; and how many."""
    lines = text.split("\n")
    md = 1 + max((int(m) for m in _MD.findall(text)), default=-1)
    base: dict[str, str] = {}
    inside, marked = False, 0
    head = f"@{group}("
    for n, line in enumerate(lines):
        if not inside:
            inside = line.startswith("define") and (head in line or f'@"{group}"(' in line)
            continue
        if line.startswith("}"):
            break
        g = _GEP.match(line)
        if g:
            base[g.group(1)] = g.group(2)
            continue
        s = _STORE.match(line)
        if s and "!nontemporal" not in line:
            p = s.group(4)
            while p in base:
                p = base[p]
            if p in stream_params and int(s.group(5)) >= int(s.group(2)) * _BYTES[s.group(3)]:
                lines[n] = f"{s.group(1)}, !nontemporal !{md}{s.group(6)}"
                marked += 1
    if not marked:
        return text, 0
    return "\n".join(lines) + f"\n!{md} = !{{i32 1}}\n", marked
