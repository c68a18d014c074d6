"""Artifact caches: in memory, and on disk under POOT_CACHE_DIR (default ~/.cache/poot).

Key: sha256 of the kernel's canonical JSON, the target, its arch/features and a toolchain fingerprint
(llvmlite and LLVM versions, poot's version and the source of the lowering modules), so a change to
any of them misses instead of loading stale code.

Disk entries hold object code or PTX text, never pickles: `<dir>/v1/<key[:2]>/<key>.art` is one JSON
header line (format, key, target, arch, kernel name, entry symbol, payload size and sha256) followed by
the payload. Entries are written to a temporary file in the same directory and renamed into place, so
readers (other processes included) see a whole entry or none; directories are created with mode 0700.
On load the header must name the expected key and the payload must have the recorded size and
sha256: a corrupt or truncated entry is deleted and recompiled, never executed.

The memory cache is a least-recently-used map of at most MEMORY_ENTRIES artifacts and MEMORY_BYTES
bytes of code: a process that sees ever new shapes compiles ever new kernels, and an unbounded map
kept every one (and, through the artifact's kernel, the device programs loaded for it) for the life of
the process. An evicted artifact is read again from the disk cache, or recompiled, when next needed;
callers use what memory_get returns and never assume an entry stays.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from poot.errors import CacheError
from poot import env

log = logging.getLogger("poot.jit.llvm.cache")
FORMAT, VERSION = "poot-artifact", 1
MEMORY_ENTRIES = 256               # artifacts kept in memory (least recently used evicted first)
MEMORY_BYTES = 64 << 20            # bytes of object code / PTX text kept in memory, all artifacts together
_mem: OrderedDict[str, object] = OrderedDict()
_mem_bytes = 0                     # the payload bytes of the artifacts in _mem
_lock = threading.Lock()
_stats = {"memory_hits": 0, "disk_hits": 0, "misses": 0, "corrupt": 0}


def cache_dir() -> str:
    return os.environ.get("POOT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "poot")


def disk_enabled() -> bool:
    """The disk cache is on unless POOT_DISK_CACHE=0."""
    return _disk_cache()


_disk_cache = env.switch_reader("POOT_DISK_CACHE", True)


@functools.lru_cache(maxsize=None)
def toolchain_fingerprint() -> str:
    import llvmlite
    import llvmlite.binding as llvm

    from poot._version import __version__

    h = hashlib.sha256(f"llvmlite {llvmlite.__version__} llvm {llvm.llvm_version_info} poot {__version__}".encode())
    here = Path(__file__).resolve().parent            # poot/jit/llvm: the lowering, the ABI, every target
    for path in sorted(here.rglob("*.py")):
        h.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def cache_key(kernel_json: str, target: str, identity: str) -> str:
    h = hashlib.sha256()
    for part in (kernel_json, target, identity, toolchain_fingerprint()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(key: str) -> str:
    return os.path.join(cache_dir(), "v1", key[:2], key + ".art")


def _ensure_dir(path: str) -> None:
    root = cache_dir()
    if not os.path.isdir(root):
        os.makedirs(root, mode=0o700, exist_ok=True)
        os.chmod(root, 0o700)
    os.makedirs(path, mode=0o700, exist_ok=True)


# --- memory ----------------------------------------------------------------------------------------
def _payload_bytes(artifact) -> int:
    data = getattr(artifact, "data", None)
    return len(data) if isinstance(data, (bytes, bytearray, str)) else 0


def memory_get(key: str):
    with _lock:
        art = _mem.get(key)
        if art is not None:
            _mem.move_to_end(key)          # recently used: evicted last
            _stats["memory_hits"] += 1
    return art


def note_miss() -> None:
    _stats["misses"] += 1


def memory_put(key: str, artifact) -> None:
    """Keep `artifact`, evicting the least recently used entries past MEMORY_ENTRIES or MEMORY_BYTES
    (the newest entry is always kept, however large)."""
    global _mem_bytes
    with _lock:
        old = _mem.pop(key, None)
        if old is not None:
            _mem_bytes -= _payload_bytes(old)
        _mem[key] = artifact
        _mem_bytes += _payload_bytes(artifact)
        while len(_mem) > 1 and (len(_mem) > MEMORY_ENTRIES or _mem_bytes > MEMORY_BYTES):
            _, gone = _mem.popitem(last=False)
            _mem_bytes -= _payload_bytes(gone)


# --- disk ------------------------------------------------------------------------------------------
def disk_get(key: str):
    """(header dict, payload bytes) of a verified entry, or None (missing or corrupt: then deleted)."""
    if not disk_enabled():
        return None
    path = _path(key)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("poot cache: cannot read %s: %s", path, e)
        return None
    nl = blob.find(b"\n", 0, 4096)
    why = None
    header = None
    if nl < 0:
        why = "no header"
    else:
        try:
            header = json.loads(blob[:nl])
        except ValueError:
            why = "unreadable header"
    if why is None:
        payload = blob[nl + 1:]
        if header.get("format") != FORMAT or header.get("version") != VERSION or header.get("key") != key:
            why = "header does not match the key"
        elif header.get("size") != len(payload):
            why = f"truncated ({len(payload)} of {header.get('size')} bytes)"
        elif hashlib.sha256(payload).hexdigest() != header.get("sha256"):
            why = "payload hash mismatch"
    if why is not None:
        _stats["corrupt"] += 1
        log.warning("poot cache: discarding corrupt entry %s (%s); it will be recompiled", path, why)
        try:
            os.unlink(path)
        except OSError:
            pass
        return None
    _stats["disk_hits"] += 1
    return header, payload


def disk_put(key: str, header: dict, payload: bytes) -> None:
    if not disk_enabled():
        return
    path = _path(key)
    header = dict(header, format=FORMAT, version=VERSION, key=key, size=len(payload),
                  sha256=hashlib.sha256(payload).hexdigest())
    line = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    try:
        _ensure_dir(os.path.dirname(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(line + b"\n" + payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:   # a read-only or full disk must not fail the compile
        log.warning("poot cache: cannot write %s: %s", path, e)


def cache_info() -> dict:
    """Where the disk cache is, how many entries and bytes it holds, and this process's counters."""
    root = os.path.join(cache_dir(), "v1")
    entries = size = 0
    if os.path.isdir(root):
        for dirpath, _, files in os.walk(root):
            for n in files:
                if n.endswith(".art"):
                    entries += 1
                    try:
                        size += os.path.getsize(os.path.join(dirpath, n))
                    except OSError:
                        pass
    return {"dir": cache_dir(), "disk_entries": entries, "disk_bytes": size, "memory_entries": len(_mem),
            **_stats}


def cache_clear(memory: bool = True, disk: bool = True) -> int:
    """Drop cached artifacts; returns the number of disk entries removed."""
    global _mem_bytes
    removed = 0
    if memory:
        with _lock:
            _mem.clear()
            _mem_bytes = 0
    if disk:
        root = os.path.join(cache_dir(), "v1")
        if os.path.isdir(root):
            for dirpath, _, files in os.walk(root, topdown=False):
                for n in files:
                    if n.endswith(".art") or n.startswith(".tmp-"):
                        try:
                            os.unlink(os.path.join(dirpath, n))
                            removed += n.endswith(".art")
                        except OSError as e:
                            raise CacheError(f"cannot remove {os.path.join(dirpath, n)}: {e}") from None
                if dirpath != root:
                    try:
                        os.rmdir(dirpath)
                    except OSError:
                        pass
        pipelines = os.path.join(cache_dir(), "vulkan")       # the Vulkan device's pipeline caches
        if os.path.isdir(pipelines):
            for n in os.listdir(pipelines):
                if n.endswith(".pipelines"):
                    try:
                        os.unlink(os.path.join(pipelines, n))
                    except OSError as e:
                        raise CacheError(f"cannot remove {os.path.join(pipelines, n)}: {e}") from None
    return removed


__all__ = ["cache_dir", "cache_key", "cache_info", "cache_clear", "toolchain_fingerprint", "memory_get",
           "memory_put", "disk_get", "disk_put"]
