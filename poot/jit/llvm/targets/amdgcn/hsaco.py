"""HSACO: the code object a ROCm runtime loads (`hipModuleLoadData`). An AMDGPU relocatable ELF object
from LLVM becomes one by a link with LLD as a shared object: `ld.lld -shared`.

The linker is the `ld.lld` the `ziglang` wheel carries (LLD 22, `pip install 'poot[rocm]'`): it links
the code-object v5 that LLVM 22 writes, where Debian's lld 14 stops at v4 ("unknown abi version").

`inspect_hsaco(data)` reads back what a loader relies on, so tests (and anyone holding a .hsaco) can
check a file without an AMD GPU: the ELF header (64-bit, OS/ABI AMDGPU_HSA, machine EM_AMDGPU), the
kernel descriptor symbols (`<kernel>.kd`, one per kernel) and the AMDGPU metadata note (NT_AMDGPU_METADATA,
a MessagePack map naming the target and each kernel's arguments and resources).
"""
from __future__ import annotations

import functools
import os
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from poot.errors import LoweringError

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
NT_AMDGPU_METADATA = 32
ET_DYN = 3
_SHT_SYMTAB, _SHT_NOTE, _SHT_DYNSYM = 2, 7, 11


@functools.lru_cache(maxsize=None)
def linker() -> tuple[str, str]:
    """(the zig executable that runs `ld.lld`, its LLD version line). LoweringError when not installed."""
    try:
        import ziglang
    except ImportError:
        raise LoweringError("linking a HSACO needs LLD from the 'ziglang' wheel, which is not installed: "
                            "pip install 'poot[rocm]' (or pip install ziglang)") from None
    zig = str(Path(ziglang.__file__).parent / "zig")
    try:
        out = subprocess.run([zig, "ld.lld", "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise LoweringError(f"the ziglang wheel's ld.lld does not run ({zig}: {e})") from None
    return zig, out.stdout.strip()


def link_hsaco(obj: bytes, name: str) -> bytes:
    """The HSACO of the AMDGPU relocatable object `obj` (kernel `name`, for messages)."""
    zig, _ = linker()
    with tempfile.TemporaryDirectory(prefix="poot-hsaco-") as tmp:
        src, dst = os.path.join(tmp, "k.o"), os.path.join(tmp, "k.hsaco")
        Path(src).write_bytes(obj)
        out = subprocess.run([zig, "ld.lld", "-shared", "--no-undefined", src, "-o", dst],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise LoweringError(f"kernel '{name}': ld.lld could not link the AMDGPU object into a HSACO:\n"
                                f"{out.stderr.strip()}")
        return Path(dst).read_bytes()


@dataclass(frozen=True)
class HsacoInfo:
    elf_type: int            # 3 (ET_DYN) for a linked code object, 1 for a relocatable one
    os_abi: int              # 64: AMDGPU HSA
    abi_version: int         # 3 = code object v5
    machine: int             # 224: EM_AMDGPU
    flags: int               # EF_AMDGPU_MACH in the low byte, xnack/sramecc bits above
    symbols: tuple[str, ...]
    metadata: bytes          # the desc of the NT_AMDGPU_METADATA note (MessagePack); b"" if absent

    @property
    def kernel_descriptors(self) -> tuple[str, ...]:
        """The kernels, by their kernel descriptor symbols `<name>.kd`."""
        return tuple(s[:-3] for s in self.symbols if s.endswith(".kd"))

    @property
    def target(self) -> str:
        """The `amdhsa.target` string of the metadata, e.g. 'amdgcn-amd-amdhsa--gfx90a'."""
        key = self.metadata.find(b"amdhsa.target")
        if key < 0:
            return ""
        return _msgpack_str(self.metadata, key + len(b"amdhsa.target"))


def inspect_hsaco(data: bytes) -> HsacoInfo:
    """The ELF facts of a code object (see the module docstring). LoweringError if it is no ELF64."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise LoweringError("not a little-endian ELF64 file (a HSACO is one)")
    os_abi, abi_version = data[7], data[8]
    e_type, machine = struct.unpack_from("<HH", data, 0x10)
    flags, = struct.unpack_from("<I", data, 0x30)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + j * shentsize) for j in range(shnum)]
    symbols, metadata = [], b""
    for sh in sections:
        kind, offset, size = sh[1], sh[4], sh[5]
        if kind in (_SHT_SYMTAB, _SHT_DYNSYM):
            strtab = sections[sh[6]][4]
            for off in range(offset + 24, offset + size, 24):        # entry 0 is the null symbol
                name_off, = struct.unpack_from("<I", data, off)
                if name_off:
                    end = data.index(b"\0", strtab + name_off)
                    symbols.append(data[strtab + name_off:end].decode())
        elif kind == _SHT_NOTE:
            metadata = metadata or _note(data[offset:offset + size], b"AMDGPU", NT_AMDGPU_METADATA)
    return HsacoInfo(e_type, os_abi, abi_version, machine, flags, tuple(dict.fromkeys(symbols)), metadata)


def _note(notes: bytes, owner: bytes, note_type: int) -> bytes:
    """The desc of the first note of `owner` and `note_type` in a note section (4-byte aligned)."""
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, pos)
        name = notes[pos + 12:pos + 12 + namesz].rstrip(b"\0")
        desc = pos + 12 + (namesz + 3 & ~3)
        if name == owner and kind == note_type:
            return notes[desc:desc + descsz]
        pos = desc + (descsz + 3 & ~3)
    return b""


def _msgpack_str(buf: bytes, pos: int) -> str:
    """The MessagePack string at `pos` (fixstr, str8 or str16), or '' if something else is there."""
    tag = buf[pos]
    if 0xA0 <= tag <= 0xBF:
        n, start = tag & 0x1F, pos + 1
    elif tag == 0xD9:
        n, start = buf[pos + 1], pos + 2
    elif tag == 0xDA:
        n, start = struct.unpack_from(">H", buf, pos + 1)[0], pos + 3
    else:
        return ""
    return buf[start:start + n].decode(errors="replace")


__all__ = ["link_hsaco", "inspect_hsaco", "HsacoInfo", "linker", "EM_AMDGPU", "ELFOSABI_AMDGPU_HSA"]
