"""sort and argsort as device kernels on GPU-shaped targets: a bitonic network over (key, index) pairs.

Without these kernels a sort on a GPU is a host step: the array goes to the host, NumPy sorts it and
the result comes back (two transfers and a wait for every launch before it). Here each row (the sort
axis, read in place with its stride: nothing is transposed) is padded to a power of two P and sorted
by a bitonic network of compare-exchanges of (key, index) pairs: the key is an order-preserving
unsigned image of the value (gpu_sort_keys.py), the index the element's position in its row. The
pairs are all distinct, so the network's result is the one stable order, the host op's bit for bit:

- ascending: NaNs last, -0.0 and +0.0 tied, ties in their original order;
- argsort descending: the keys inverted (NaNs first), ties still in their original order;
- sort descending: the ascending sort written back to front (the host op's reversed ascending order).

sort writes each element gathered by its index (its own bits: -0.0 stays -0.0), argsort the indices as
int64, written as (index, 0) uint32 pairs: no 64-bit arithmetic, so it runs where int64 does not.

Launches. A tile of T elements (T = 2048 where shared memory holds it; a tile holds several short rows,
or part of a long one) is sorted by one workgroup in shared memory. Rows up to T long are sorted by that
one launch, which reads the values and writes the results. A longer row is sorted tile by tile into
scratch (uint32 keys and indices, one word per key word), then each merge stage k = 2T, 4T, .., P runs
its compare distances j >= T up to GLOBAL_DISTANCES at a time per launch (a thread holds the 8 elements
three distances connect in registers: one pass over scratch instead of three) and one workgroup launch
for the distances below T (in shared memory); the last of these writes the results.

Why generated KIR rather than `@pt.kernel` assets: the value's dtype decides how it is read and keyed,
the row length and stride decide the addressing, and the first and last launches read the values and
write the results themselves; a generated kernel bakes all of that in as constants (one compile per
shape and dtype, cached like every kernel), where an asset would need a kernel per dtype and separate
passes to make the keys and gather the results.

The CPU keeps the host step (NumPy's SIMD sort is faster there than a network). POOT_GPU_SORT=host
keeps it on every device; POOT_GPU_SORT=kernels takes the kernels on every device, the CPU included.
"""
from __future__ import annotations

import math

from poot.jit.codegen.common import Launch, StepCode, ceil_div, env_choice, groups_for
from poot.jit.codegen.gpu_sort_keys import ALL_ONES, U32, ValueWords, copy_value, key_of, load_value, value_words
from poot.jit.kir.builder import KernelBuilder, binary, cast, const, select
from poot.jit.kir.model import Access, Index
from poot.jit.llvm.targets import KernelStyle, target_of

SORT_OPS = ("sort", "argsort")
MAX_TILE = 2048            # elements one workgroup sorts in shared memory (at most)
MIN_TILE = 64              # a tile of 2 (one short row) broke LLVM's SPIR-V backend ("Unsupported ptrcast user")
MAX_THREADS = 256          # threads of a workgroup
# compare distances >= T one global launch takes (each thread holds 2**this elements in registers): a
# pass over the scratch per GLOBAL_DISTANCES distances instead of per distance
GLOBAL_DISTANCES = 3
MAX_ELEMENTS = 1 << 31     # rows x padded length: every position fits the uint32 arithmetic


def sort_path() -> str:
    """POOT_GPU_SORT: "auto" (the kernels on GPU devices, the host step on the CPU), "host" (the host
    step everywhere) or "kernels" (the kernels everywhere: the CPU device runs the same workgroups,
    which tests the network where no GPU is)."""
    return env_choice("POOT_GPU_SORT", ("auto", "host", "kernels"))


def claims(step, caps) -> bool:
    """Whether the host step `step` is a sort or argsort these kernels run on a device with `caps`."""
    eqn = getattr(step, "eqn", None)
    if step.kind != "host" or eqn is None or eqn.op not in SORT_OPS:
        return False
    mode = sort_path()
    if mode == "host" or (mode == "auto" and target_of(caps).style is not KernelStyle.GPU):
        return False
    aval = eqn.inputs[0].aval
    if aval.dtype.kind not in "biuf" or aval.ndim == 0:
        return False
    geo = _Geometry(aval.shape, eqn.params["axis"], aval.dtype, caps)
    return geo.rows * geo.P <= MAX_ELEMENTS and geo.scratch_bytes <= caps.max_buffer_bytes


class _Geometry:
    """The rows of one sort: `rows` rows of `n` elements, `stride` apart along the axis (the product of
    the axes after it), padded to P = 2**logP; tiles of T = 2**logT elements, `threads` per workgroup."""

    def __init__(self, shape, axis: int, dtype, caps):
        self.n = shape[axis]
        self.stride = math.prod(shape[axis + 1:])
        self.rows = math.prod(shape) // self.n if self.n else 0
        self.layout: ValueWords = value_words(dtype)
        self.logP = max(1, (self.n - 1).bit_length())
        self.P = 1 << self.logP
        words = self.layout.key_words + 1                 # shared words per element: key(s), index
        fits = max(2, caps.shared_memory_bytes // (4 * words))
        max_tile = min(MAX_TILE, 1 << (fits.bit_length() - 1))
        if self.P >= max_tile:
            self.T = max_tile
        else:                  # whole rows per tile, as many as there are, at least MIN_TILE elements
            self.T = min(max_tile, max(MIN_TILE, self.P << max(0, (self.rows - 1).bit_length())))
        self.logT = self.T.bit_length() - 1
        self.threads = min(MAX_THREADS, self.T // 2)
        self.tiles = ceil_div(self.rows * self.P, self.T)
        self.scratch_bytes = self.rows * self.P * 4 if self.P > self.T else 0

    def place(self, kb, f):
        """(row, position in the row, whether it holds an element rather than padding) of flat padded
        position `f`."""
        row = kb.let("row", binary("shr", f, const(self.logP, U32)))
        i = kb.let("i", binary("and", f, const(self.P - 1, U32)))
        return row, i, binary("and", binary("lt", row, const(self.rows, U32)), binary("lt", i, const(self.n, U32)))

    def address(self, kb, row, i):
        """The element index of position `i` of row `row` (the sort axis `stride` apart)."""
        if self.stride == 1:
            return binary("add", binary("mul", row, const(self.n, U32)), i)
        inner = kb.let("inner", binary("rem", row, const(self.stride, U32)))
        base = binary("add", binary("mul", binary("sub", row, inner), const(self.n, U32)), inner)
        return binary("add", base, binary("mul", i, const(self.stride, U32)))


def generate_gpu_sort(step, plan, caps) -> StepCode:
    """The launches of a sort or argsort step (see the module docstring)."""
    eqn = step.eqn
    aval = eqn.inputs[0].aval
    geo = _Geometry(aval.shape, eqn.params["axis"], aval.dtype, caps)
    if geo.rows == 0 or geo.n == 0:
        return StepCode()
    op, descending = eqn.op, bool(eqn.params["descending"])
    sort = _Sort(step, geo, op, invert=descending and op == "argsort", reverse=descending and op == "sort")
    code = StepCode()
    if geo.P <= geo.T:
        code.launches.append(sort.tile_kernel(from_values=True, to_results=True))
        return code
    code.temps = [geo.rows * geo.P * 4] * (geo.layout.key_words + 1)
    code.launches.append(sort.tile_kernel(from_values=True, to_results=False))
    steps = {}             # distances per launch -> the kernel
    merges = {last: sort.tile_kernel(from_values=False, to_results=last) for last in (False, True)}
    for s in range(geo.logT + 1, geo.logP + 1):
        k = 1 << s
        t = s - 1                                # the distances 2**t >= T of stage k, GLOBAL_DISTANCES at a time
        while t >= geo.logT:
            m = min(GLOBAL_DISTANCES, t - geo.logT + 1)
            if m not in steps:
                steps[m] = sort.global_kernel(m)
            launch = steps[m]
            code.launches.append(Launch(launch.kernel, launch.bindings, launch.groups, (k, 1 << t)))
            t -= m
        merge = merges[s == geo.logP]
        code.launches.append(Launch(merge.kernel, merge.bindings, merge.groups, (k,)))
    return code


class _Sort:
    """Builds the kernels of one sort step."""

    def __init__(self, step, geo: _Geometry, op: str, invert: bool, reverse: bool):
        self.step, self.geo, self.op, self.invert, self.reverse = step, geo, op, invert, reverse
        self.nkeys = geo.layout.key_words

    # -- buffers --
    def _values(self, kb, bindings) -> str:
        bindings.append(("var", self.step.eqn.inputs[0]))
        return kb.buffer("values", self.geo.layout.word, Access.READ)

    def _results(self, kb, bindings) -> str:
        bindings.append(("var", self.step.outputs[0]))
        word = self.geo.layout.word if self.op == "sort" else U32      # argsort: int64 as uint32 pairs
        return kb.buffer("out", word, Access.WRITE)

    def _scratch(self, kb, bindings) -> tuple[list[str], str]:
        keys = []
        for w in range(self.nkeys):
            bindings.append(("temp", w))
            keys.append(kb.buffer(f"keys{w}", U32, Access.READ_WRITE))
        bindings.append(("temp", self.nkeys))
        return keys, kb.buffer("index", U32, Access.READ_WRITE)

    # -- kernels --
    def tile_kernel(self, *, from_values: bool, to_results: bool) -> Launch:
        """One workgroup per tile: read the tile (keys made from the values, or pairs from scratch),
        run the network's stages below T in shared memory (all of them: a whole sort of rows up to T
        long, or of a tile of a longer row; else the merge distances j < T of stage k, a scalar), and
        write the tile (the results, or the pairs back to scratch)."""
        geo = self.geo
        name = self.step.name + ("_tile" if from_values else "_merge")
        kb = KernelBuilder(name, workgroup=(geo.threads, 1, 1), checks=False)
        bindings: list = []
        values = self._values(kb, bindings) if from_values or (to_results and self.op == "sort") else None
        results = self._results(kb, bindings) if to_results else None
        scratch = self._scratch(kb, bindings) if not (from_values and to_results) else None
        stage_k = None if from_values else kb.scalar("k", U32)
        skeys = [kb.shared(f"sk{w}", U32, geo.T) for w in range(self.nkeys)]
        sidx = kb.shared("si", U32, geo.T)
        lane = kb.let("lane", cast(Index("local", 0), U32))
        first = kb.let("first", binary("mul", cast(Index("group", 0), U32), const(geo.T, U32)))

        with kb.for_("c", 0, geo.T // geo.threads, dtype=U32) as c:        # read the tile
            e = kb.let("e", binary("add", binary("mul", c, const(geo.threads, U32)), lane))
            f = kb.let("f", binary("add", first, e))
            if from_values:
                row, i, real = geo.place(kb, f)
                for w in range(self.nkeys):
                    kb.store(skeys[w], e, const(ALL_ONES, U32))
                kb.store(sidx, e, i)
                with kb.if_(real):
                    words = load_value(kb, values, geo.layout, geo.address(kb, row, i))
                    for w, key in enumerate(key_of(kb, self.step.eqn.inputs[0].aval.dtype, words, self.invert)):
                        kb.store(skeys[w], e, key)
            else:
                keys, index = scratch
                for w in range(self.nkeys):
                    kb.store(skeys[w], e, kb.load(keys[w], f, U32))
                kb.store(sidx, e, kb.load(index, f, U32))

        def stage(k, j) -> None:
            kb.barrier()
            with kb.for_("c", 0, geo.T // (2 * geo.threads), dtype=U32) as c:
                p = kb.let("p", binary("add", binary("mul", c, const(geo.threads, U32)), lane))
                lo = kb.let("lo", _pair_low(p, j))
                i = binary("and", binary("add", first, lo), const(geo.P - 1, U32))
                descending = binary("ne", binary("and", i, k), const(0, U32))
                self._exchange(kb, skeys, sidx, lo, binary("add", lo, j), descending)

        if from_values:                       # every stage below min(P, T): a whole sort of the tile
            with kb.for_("s", 1, min(geo.logP, geo.logT) + 1, dtype=U32) as s:
                with kb.for_("u", const(0, U32), s, dtype=U32) as u:
                    t = binary("sub", binary("sub", s, u), const(1, U32))
                    stage(kb.let("k", binary("shl", const(1, U32), s)), kb.let("j", binary("shl", const(1, U32), t)))
        else:                                 # the distances below T of merge stage k
            with kb.for_("u", 0, geo.logT, dtype=U32) as u:
                t = binary("sub", const(geo.logT - 1, U32), u)
                stage(stage_k, kb.let("j", binary("shl", const(1, U32), t)))
        kb.barrier()

        with kb.for_("c", 0, geo.T // geo.threads, dtype=U32) as c:        # write the tile
            e = kb.let("e", binary("add", binary("mul", c, const(geo.threads, U32)), lane))
            f = kb.let("f", binary("add", first, e))
            if to_results:
                row, i, real = geo.place(kb, f)
                with kb.if_(real):
                    self._write_result(kb, values, results, row, i, kb.load(sidx, e, U32))
            else:
                keys, index = scratch
                for w in range(self.nkeys):
                    kb.store(keys[w], f, kb.load(skeys[w], e, U32))
                kb.store(index, f, kb.load(sidx, e, U32))
        return Launch(kb.build(), bindings, groups_for(geo.tiles))

    def global_kernel(self, m: int) -> Launch:
        """Distances j, j/2, .., j/2**(m-1) (all >= T) of merge stage k (j and k scalars) over scratch:
        each thread loads the 2**m elements those distances connect (positions base + r * j/2**(m-1)),
        runs the m distances in registers and stores them back."""
        geo = self.geo
        kb = KernelBuilder(f"{self.step.name}_step{m}", workgroup=(MAX_THREADS, 1, 1), checks=False)
        bindings: list = []
        keys, index = self._scratch(kb, bindings)
        k, j = kb.scalar("k", U32), kb.scalar("j", U32)
        threads = geo.rows * geo.P >> m
        t = kb.let("t", cast(Index("thread", 0), U32))
        with kb.if_(binary("lt", t, const(threads, U32))):
            row_first = binary("shl", binary("shr", t, const(geo.logP - m, U32)), const(geo.logP, U32))
            step = kb.let("d", binary("shr", j, const(m - 1, U32)))            # the smallest distance
            q = binary("and", t, const((geo.P >> m) - 1, U32))
            below = binary("sub", step, const(1, U32))
            spread = binary("shl", binary("and", q, binary("xor", below, const(ALL_ONES, U32))), const(m, U32))
            lo = kb.let("lo", binary("or", spread, binary("and", q, below)))     # m zero bits inserted
            descending = kb.let("desc", binary("ne", binary("and", lo, k), const(0, U32)))
            first = kb.let("a", binary("add", row_first, lo))
            where = [kb.let("at", binary("add", first, binary("mul", step, const(r, U32)))) for r in range(1 << m)]
            held = [[kb.local("v", U32, kb.load(buf, at, U32)) for buf in keys + [index]] for at in where]
            for level in range(m - 1, -1, -1):                       # distance j first, then halves
                for r in range(1 << m):
                    if not r >> level & 1:
                        self._exchange_held(kb, held[r], held[r + (1 << level)], descending)
            for at, words in zip(where, held):
                for buf, v in zip(keys + [index], words):
                    kb.store(buf, at, v)
        return Launch(kb.build(), bindings, groups_for(ceil_div(threads, MAX_THREADS)))

    # -- pieces --
    def _exchange(self, kb, keys: list[str], index: str, a, b, descending) -> None:
        """Put the pairs at positions a < b of shared arrays in order: the smaller first (the larger
        where `descending`)."""
        ka = [kb.let("ka", kb.load(buf, a, U32)) for buf in keys] + [kb.let("ia", kb.load(index, a, U32))]
        kb_ = [kb.let("kb", kb.load(buf, b, U32)) for buf in keys] + [kb.let("ib", kb.load(index, b, U32))]
        with kb.if_(binary("ne", _greater(ka, kb_), descending)):
            for buf, x, y in zip(keys + [index], ka, kb_):
                kb.store(buf, a, y)
                kb.store(buf, b, x)

    def _exchange_held(self, kb, a: list, b: list, descending) -> None:
        """The same compare-exchange on pairs held in locals (key words, index)."""
        swap = kb.let("swap", binary("ne", _greater(a, b), descending))
        for x, y in zip(a, b):
            low = kb.let("low", select(swap, y, x))
            kb.assign(y, select(swap, x, y))
            kb.assign(x, low)

    def _write_result(self, kb, values, results, row, i, source) -> None:
        """Position `i` of row `row` holds the element at position `source`: sort copies its value (to
        position n-1-i when reversed), argsort writes the index as an int64 (uint32 low word, 0 high)."""
        geo = self.geo
        if self.op == "sort":
            pos = binary("sub", const(geo.n - 1, U32), i) if self.reverse else i
            copy_value(kb, results, geo.address(kb, row, pos), values, geo.address(kb, row, source), geo.layout)
            return
        word = kb.let("dst", binary("mul", geo.address(kb, row, i), const(2, U32)))
        kb.store(results, word, source)
        kb.store(results, binary("add", word, const(1, U32)), const(0, U32))


def _greater(a: list, b: list):
    """Whether pair `a` (key words, most significant first, then the index) is above pair `b`."""
    greater = binary("gt", a[-1], b[-1])
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        greater = binary("or", binary("gt", x, y), binary("and", binary("eq", x, y), greater))
    return greater


def _pair_low(p, j):
    """The lower position of compare pair number `p` at distance `j` (a power of two): p with a zero
    bit inserted at j's bit."""
    below = binary("sub", j, const(1, U32))
    return binary("or", binary("shl", binary("and", p, binary("xor", below, const(ALL_ONES, U32))), const(1, U32)),
                  binary("and", p, below))


__all__ = ["claims", "generate_gpu_sort", "sort_path", "SORT_OPS"]
