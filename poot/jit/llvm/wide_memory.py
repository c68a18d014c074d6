"""The lowering of KIR's 16-byte memory operations (model.py): LdMatrix (warp-level matrix fragments
from shared memory), LoadX4 / StoreX4 (4 uint32 words at once), the asynchronous global -> shared
copies (CopyAsync, AsyncCommit, AsyncWait), and the warpgroup matrix product that reads its operands from
shared memory (Wgmma, FenceProxyAsync). A mixin of `lower.Lowering`.

What every target gets here: LoadX4 and StoreX4 as four element accesses through the target's own
`_e_Load` / `_s_Store` (plain memory, so nothing is refused); LdMatrix and the asynchronous copies raise
NotBuiltError naming the operation. The PTX target overrides the hooks (`load_words`, `store_words`,
`ldmatrix_call`, `copy_async`, `copy_async_commit`, `copy_async_wait`) with the 16-byte instructions, and
`wgmma_call` / `fence_proxy_async` with Hopper's warpgroup instructions (sm_90a).

One LdMatrix / LoadX4 instruction serves the four element nodes the importer writes for one tuple
assignment: results are cached per (operands, function, basic block), like Mma's, and the cache is
emptied by every statement but an assignment (a store, barrier or copy in between must give a fresh
read) and pruned of entries whose index reads a local being reassigned. Wgmma results are cached the same
way (one instruction sequence for the 128 element nodes of one tuple assignment).
"""
from __future__ import annotations

import dataclasses

from poot import dtypes as dt
from poot.errors import NotBuiltError
from poot.jit.kir.model import (X4_WORDS, AsyncCommit, AsyncWait, Binary, BufferParam, Const, CopyAsync,
                         FenceProxyAsync, LdMatrix, Len, Load, LoadX4, Read, Store, StoreX4, Wgmma)

LDMATRIX_RESULT = "{ i32, i32, i32, i32 }"


def wgmma_result(n: int) -> str:
    """The LLVM type of a Wgmma's result: its n / 2 float32 elements of D."""
    return "{ " + ", ".join(["float"] * (n // 2)) + " }"


def names_read(e) -> set:
    """The locals and scalar params expression `e` reads."""
    if isinstance(e, Read):
        return {e.name}
    out: set = set()
    if dataclasses.is_dataclass(e):
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            for x in (v if isinstance(v, tuple) else (v,)):
                if dataclasses.is_dataclass(x):
                    out |= names_read(x)
    return out


def _word_index(index, i: int):
    return index if i == 0 else Binary("add", index, Const(i, index.dtype), index.dtype)


class WideMemoryLowering:
    frag_cache: dict

    # -- hooks: what a target without the 16-byte instructions does -----------------------------------
    def load_words(self, buffer: str, index) -> list[str]:
        """The X4_WORDS i32 words at `buffer[index...]`: one element load each (bounds-checked each)."""
        return [self._e_Load(Load(buffer, _word_index(index, i), dt.uint32)) for i in range(X4_WORDS)]

    def store_words(self, s: StoreX4) -> None:
        for i, v in enumerate(s.values):
            self._s_Store(Store(s.buffer, _word_index(s.index, i), v))

    def ldmatrix_call(self, e: LdMatrix) -> str:
        """The { i32 x 4 } result of one warp-level ldmatrix (LdMatrix)."""
        raise NotBuiltError(f"ldmatrix_x4{'_trans' if e.trans else ''} (a warp-level load of matrix fragments for "
                            "tensor cores) is built for the PTX target (sm_75 and newer) only; load the fragment "
                            "elements from shared memory one by one on this target")

    def copy_async(self, s: CopyAsync) -> None:
        raise NotBuiltError("copy_async (an asynchronous global -> shared copy, PTX cp.async) is built for the PTX "
                            "target (sm_80 and newer) only; copy with plain loads and stores on this target")

    def copy_async_commit(self) -> None:
        raise NotBuiltError("copy_async_commit (PTX cp.async.commit_group) is built for the PTX target (sm_80 and "
                            "newer) only")

    def copy_async_wait(self, pending: int) -> None:
        raise NotBuiltError("copy_async_wait (PTX cp.async.wait_group) is built for the PTX target (sm_80 and "
                            "newer) only")

    def wgmma_call(self, e: Wgmma) -> str:
        """The { float x n/2 } result of one warpgroup product (Wgmma)."""
        raise NotBuiltError(f"wgmma_m64n{e.n}k64 (a warpgroup matrix product on Hopper's tensor cores) is built for "
                            "the PTX target on sm_90a only; use mma_m16n8k16 on other GPUs")

    def fence_proxy_async(self) -> None:
        """Nothing: only a target with Wgmma has an asynchronous proxy to order shared writes before."""

    # -- helpers for targets --------------------------------------------------------------------------
    def span_ptr(self, buffer: str, index, guard: str | None = None, inbounds: bool = True) -> tuple[str, str]:
        """(pointer, its type) of the X4_WORDS words at `buffer[index]`. With kernel.checks, an index that
        is no multiple of X4_WORDS or whose words leave the array traps with TRAP_BOUNDS (only where the
        i1 `guard` holds, when given: a copy_async source that is not read is not checked)."""
        decl = self.decl[buffer]
        idx = self.op(f"zext i32 {self.expr(index)} to i64")
        if isinstance(decl, BufferParam):
            base, space = self.buffers[buffer], self.as_global
        else:
            base, space = self.shared_ptrs[buffer], self.as_shared
        if self.k.checks:
            n = self.op(f"zext i32 {self._e_Len(Len(buffer))} to i64") if isinstance(decl, BufferParam) \
                else str(decl.size)
            inside = self.op(f"icmp ult i64 {idx}, {n}")
            room = self.op(f"icmp uge i64 {self.op(f'sub i64 {n}, {idx}')}, {X4_WORDS}")
            aligned = self.op(f"icmp eq i64 {self.op(f'and i64 {idx}, {X4_WORDS - 1}')}, 0")
            ok = self.op(f"and i1 {inside}, {self.op(f'and i1 {room}, {aligned}')}")
            if guard is not None:
                ok = self.op(f"or i1 {self.op(f'xor i1 {guard}, true')}, {ok}")
            self.trap_unless(ok)
        gep = "getelementptr inbounds" if inbounds else "getelementptr"
        return self.op(f"{gep} i32, {self.ptr(space)} {base}, i64 {idx}"), self.ptr(space)

    def _fragment(self, key: tuple, make):
        """The cached result of `make()` for operands `key` in the current basic block."""
        hit = self.frag_cache.get(key + (id(self.f), len(self.f.blocks)))
        if hit is None:
            hit = make()
            self.frag_cache[key + (id(self.f), len(self.f.blocks))] = hit     # the block it ends in
        return hit

    def forget_fragments(self, assigned: str | None = None) -> None:
        """Drop every cached fragment (memory may have changed), or those whose index reads `assigned`."""
        if assigned is None:
            self.frag_cache = {}
        elif self.frag_cache:
            self.frag_cache = {k: r for k, r in self.frag_cache.items() if assigned not in names_read(k[2])}

    # -- KIR nodes ------------------------------------------------------------------------------------
    def _e_LdMatrix(self, e: LdMatrix) -> str:
        struct = self._fragment(("ldmatrix", e.shared, e.index, e.trans), lambda: self.ldmatrix_call(e))
        return self.op(f"extractvalue {LDMATRIX_RESULT} {struct}, {e.elem}")

    def _e_Wgmma(self, e: Wgmma) -> str:
        struct = self._fragment(("wgmma", e.a_shared, dataclasses.replace(e, elem=0)), lambda: self.wgmma_call(e))
        return self.op(f"extractvalue {wgmma_result(e.n)} {struct}, {e.elem}")

    def _s_FenceProxyAsync(self, s: FenceProxyAsync) -> None:
        self.fence_proxy_async()

    def _e_LoadX4(self, e: LoadX4) -> str:
        return self._fragment(("load_x4", e.buffer, e.index), lambda: self.load_words(e.buffer, e.index))[e.elem]

    def _s_StoreX4(self, s: StoreX4) -> None:
        self.store_words(s)

    def _s_CopyAsync(self, s: CopyAsync) -> None:
        self.copy_async(s)

    def _s_AsyncCommit(self, s: AsyncCommit) -> None:
        self.copy_async_commit()

    def _s_AsyncWait(self, s: AsyncWait) -> None:
        self.copy_async_wait(s.pending)


__all__ = ["WideMemoryLowering", "LDMATRIX_RESULT", "wgmma_result", "names_read"]
