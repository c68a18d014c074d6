"""Reuse of large host allocations for the CPU device.

A fresh allocation of tens of megabytes is an mmap the kernel zero-fills page by page on first touch:
writing a new 64 MiB result costs ~7 ms more than writing an old one (on the 2-core CI machine),
which is more than a fused kernel over that data takes. glibc keeps freed blocks only below 32 MiB,
so a loop producing big arrays pays that on every call. The pool keeps the raw NumPy byte arrays
behind CPU buffers of at least MIN_BYTES and hands one back out when nothing refers to it any more.

"Nothing refers to it" is exact, not a guess: every view NumPy makes of an array (a buffer's handle,
a `read()` view, an array returned to the user, a memoryview or DLPack export of one) holds a
reference to the array that owns the memory, so a pooled array whose reference count is the pool's
own is unreachable from anywhere else. The arrays the pool tracks (busy or idle) total at most
`POOT_CPU_POOL_BYTES` (default: a quarter of physical memory, at most 4 GiB; 0 turns pooling off);
allocations beyond that are ordinary ones.
"""
from __future__ import annotations

import os
import sys
import threading

import numpy as np

from poot import env

MIN_BYTES = 1 << 20


def _default_limit() -> int:
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        phys = 8 << 30
    return min(phys // 4, 4 << 30)


def _limit() -> int:
    if not (os.environ.get("POOT_CPU_POOL_BYTES") or "").strip():
        return _default_limit()
    return env.integer("POOT_CPU_POOL_BYTES", 0)


class HostPool:
    """Raw uint8 arrays by size; `take(n)` returns an idle one of exactly n bytes or None."""

    def __init__(self, limit: int | None = None):
        self.limit = _limit() if limit is None else limit
        self._by_size: dict[int, list[np.ndarray]] = {}
        self._lock = threading.Lock()
        self._idle_refs = self._calibrate()

    @staticmethod
    def _calibrate() -> int:
        """The reference count an array held only by a pool list shows from inside `_idle`."""
        probe = [np.empty(1, np.uint8)]
        return HostPool._refs(probe, 0)

    @staticmethod
    def _refs(bucket: list, i: int) -> int:
        return sys.getrefcount(bucket[i])

    def _idle(self, bucket: list, i: int) -> bool:
        return self._refs(bucket, i) <= self._idle_refs

    def take(self, nbytes: int) -> np.ndarray | None:
        if nbytes < MIN_BYTES or self.limit <= 0:
            return None
        with self._lock:
            bucket = self._by_size.get(nbytes)
            if bucket:
                for i in range(len(bucket)):
                    if self._idle(bucket, i):
                        raw = bucket.pop(i)
                        bucket.append(raw)            # most recently used last
                        return raw
        return None

    def adopt(self, raw: np.ndarray) -> None:
        """Track a new allocation if the tracked total stays within the limit, dropping idle ones
        to make room; an untracked array is simply freed when dropped."""
        nbytes = raw.nbytes
        if nbytes < MIN_BYTES or nbytes > self.limit:
            return
        with self._lock:
            excess = self.tracked_bytes() + nbytes - self.limit
            for size, bucket in list(self._by_size.items()):
                i = 0
                while excess > 0 and i < len(bucket):
                    if self._idle(bucket, i):
                        bucket.pop(i)
                        excess -= size
                    else:
                        i += 1
                if not bucket:
                    del self._by_size[size]
            if excess <= 0:
                self._by_size.setdefault(nbytes, []).append(raw)

    def tracked_bytes(self) -> int:
        return sum(size * len(bucket) for size, bucket in self._by_size.items())

    def idle_bytes(self) -> int:
        with self._lock:
            return sum(size for size, bucket in self._by_size.items()
                       for i in range(len(bucket)) if self._idle(bucket, i))

    def clear(self) -> None:
        """Forget every pooled array (busy ones stay alive with their users)."""
        with self._lock:
            self._by_size.clear()
