"""Complex FFTs of power-of-two lengths as device kernels: radix-2 Stockham stages.

Without these kernels `pt.fft.fft` on a GPU is the `fft` host step (poot/graph/host_fft.py): the
array goes to the host, pocketfft transforms it and the result comes back. Here fft, ifft, fftn and
ifftn of complex parts (float32, or float64 where the device has it) whose every transformed axis has
a power-of-two length n >= 2 (no padding or truncation) run as generated kernels; other transforms keep
the host step.

Algorithm: per axis, log2(n) Stockham stages (the autosort form: no bit reversal). Stage s (Ns = 2**s)
has one thread per butterfly, n / 2 per row: thread j of a row reads a = x[j] and b = x[j + n/2],
multiplies b by the twiddle w = exp(-+2 pi i k / (2 Ns)) (k = j mod Ns) and writes a + w b to position
d = 2 (j - k) + k and a - w b to d + Ns. Each stage reads one buffer and writes another: the first
stage of the transform reads the operand, the last writes the result, the others ping-pong between
two scratch buffers. A row is read along its axis in place (the axis's stride apart); the stages
between an axis's first and last keep each row contiguous in scratch. fftn runs the axes one after
another; the scaling of the norm (backward, ortho, forward: the product over the axes) is applied by
the very last stage.

Rows short enough for shared memory (two tiles of up to MAX_TILE complex values, whole rows, several
short rows to a tile) take one launch for the whole axis instead: a workgroup reads its tile, runs
every stage in shared memory (a barrier between stages) and writes the results.

Twiddles are computed per thread, exactly reduced to an angle in [0, pi/4] (in integer units of a
turn / (8 Ns), through the symmetries of cos and sin about a quarter and an eighth turn) before
poot's own cos and sin (about 1 ulp on every target), so float32 results stay within a few ulps
times log2(n) of NumPy's, relative to the transform's size.

Why generated KIR: the length, stride and rows of each axis, the direction and the scale are baked
in as constants (one compile per shape, cached like every kernel); the stage number of a launch per
stage is a scalar, so the middle stages of an axis share one kernel.

POOT_GPU_FFT=auto takes the kernels on GPU devices and keeps the host step on the CPU (pocketfft is
faster there); host keeps the host step everywhere; kernels takes the kernels everywhere, the CPU
device included (which tests them where no GPU is).
"""
from __future__ import annotations

import math

from poot import dtypes as dt
from poot.jit.codegen.common import Launch, StepCode, ceil_div, env_choice, groups_for
from poot.jit.kir.builder import KernelBuilder, binary, cast, const, select, unary
from poot.jit.kir.model import Access, Index
from poot.jit.llvm.targets import KernelStyle, target_of

U32 = dt.uint32
FFT_FUNCTIONS = {"fft": -1, "ifft": 1, "fftn": -1, "ifftn": 1}     # the sign of the twiddles' exponent
THREADS = 256              # threads of a workgroup
MAX_TILE = 2048            # elements a workgroup transforms in shared memory (at most; whole rows)
MIN_TILE = 64              # rows shorter than this share a tile (a tiny one broke LLVM's SPIR-V backend)
MAX_WORDS = 1 << 31        # parts words of the operand: every word index fits the uint32 arithmetic


def fft_path() -> str:
    """POOT_GPU_FFT: "auto" (the kernels on GPU devices, the host step on the CPU), "host" (the host
    step everywhere) or "kernels" (the kernels everywhere, the CPU device included)."""
    return env_choice("POOT_GPU_FFT", ("auto", "host", "kernels"))


def claims(step, caps) -> bool:
    """Whether the host step `step` is a complex FFT these kernels run on a device with `caps`: fft,
    ifft, fftn or ifftn over axes of power-of-two lengths >= 2, unpadded and untruncated."""
    eqn = getattr(step, "eqn", None)
    if step.kind != "host" or eqn is None or eqn.op != "fft" or eqn.params["fn"] not in FFT_FUNCTIONS:
        return False
    mode = fft_path()
    if mode == "host" or (mode == "auto" and target_of(caps).style is not KernelStyle.GPU):
        return False
    aval = eqn.inputs[0].aval
    if aval.dtype is not dt.float32 and not (aval.dtype is dt.float64 and caps.float64):
        return False
    shape = aval.shape[:-1]
    for ax, n in zip(eqn.params["axes"], eqn.params["s"]):
        if n < 2 or n & (n - 1) or shape[ax] != n:
            return False
    return 0 < aval.size <= MAX_WORDS and aval.nbytes <= caps.max_buffer_bytes     # scratch: the operand's size


class _Axis:
    """The rows of one axis of the complex array: `rows` rows of n = 2**logn elements, `stride`
    elements apart along the axis (the product of the axes after it)."""

    def __init__(self, shape, axis: int):
        self.axis = axis
        self.n = shape[axis]
        self.logn = self.n.bit_length() - 1
        self.stride = math.prod(shape[axis + 1:])
        self.rows = math.prod(shape) // self.n
        self.threads = self.rows * self.n // 2

    def address(self, kb, row, i, natural: bool):
        """The complex element index of position `i` of row `row`: in the array's own layout
        (`natural`), else in the contiguous rows of scratch."""
        if self.stride == 1 or not natural:
            return binary("add", binary("mul", row, const(self.n, U32)), i)
        inner = kb.let("inner", binary("rem", row, const(self.stride, U32)))
        base = binary("add", binary("mul", binary("sub", row, inner), const(self.n, U32)), inner)
        return binary("add", base, binary("mul", i, const(self.stride, U32)))


def _scale(fn: str, norm: str, size: int) -> float:
    """The factor the norm puts on a transform of `size` points (the product of its lengths)."""
    inverse = FFT_FUNCTIONS[fn] > 0
    if norm == "ortho":
        return 1.0 / math.sqrt(size)
    if (norm == "forward") != inverse:
        return 1.0 / size
    return 1.0


def tile_for(n: int, rows: int, dtype, caps) -> int:
    """The elements (whole rows of n) one workgroup transforms in shared memory, or 0 where a row of
    n does not fit: shared memory holds two tiles of complex values (the stages ping-pong)."""
    fits = caps.shared_memory_bytes // (4 * dtype.itemsize)
    largest = min(MAX_TILE, 1 << (fits.bit_length() - 1)) if fits else 0
    if n > largest:
        return 0
    return min(largest, max(MIN_TILE, n << max(0, (rows - 1).bit_length())))


def generate_gpu_fft(step, plan, caps) -> StepCode:
    """The launches of an fft step (see the module docstring)."""
    eqn = step.eqn
    fn, axes, norm = eqn.params["fn"], eqn.params["axes"], eqn.params["norm"]
    parts = eqn.inputs[0].aval
    shape = parts.shape[:-1]
    geos = [_Axis(shape, ax) for ax in axes]
    tiles = {id(g): tile_for(g.n, g.rows, parts.dtype, caps) for g in geos}
    passes = [(g, s) for g in geos for s in ((None,) if tiles[id(g)] else range(g.logn))]   # None: a tile launch
    total = len(passes)
    scale = _scale(fn, norm, math.prod(g.n for g in geos))
    build = _Stages(step, parts.dtype, FFT_FUNCTIONS[fn])
    code = StepCode(temps=[parts.size * parts.dtype.itemsize] * min(total - 1, 2))
    kernels: dict = {}
    for at, (geo, s) in enumerate(passes):
        src = ("var", eqn.inputs[0]) if at == 0 else ("temp", (at - 1) % 2)
        dst = ("var", step.outputs[0]) if at == total - 1 else ("temp", at % 2)
        last = at == total - 1 and scale != 1.0
        if s is None:
            tile = tiles[id(geo)]
            kernel = build.tile_kernel(geo, tile, scale if last else None)
            code.launches.append(Launch(kernel, [src, dst], groups_for(ceil_div(geo.rows * geo.n, tile))))
            continue
        natural_in, natural_out = s == 0 or geo.stride == 1, s == geo.logn - 1 or geo.stride == 1
        key = (id(geo), natural_in, natural_out, last)
        if key not in kernels:
            kernels[key] = build.stage_kernel(geo, natural_in, natural_out, scale if last else None)
        unit = math.pi / (4 << s)                                       # the angle of one eighth-unit
        code.launches.append(Launch(kernels[key], [src, dst], groups_for(ceil_div(geo.threads, THREADS)),
                                    (s, unit)))
    return code


class _Stages:
    """Builds the stage kernels of one fft step: parts of `dtype`, twiddles exp(sign 2 pi i k/(2 Ns))."""

    def __init__(self, step, dtype, sign: int):
        self.step, self.dtype, self.sign = step, dtype, sign
        self.count = 0

    def stage_kernel(self, geo: _Axis, natural_in: bool, natural_out: bool, scale: float | None):
        """One radix-2 Stockham stage along `geo`'s axis; the stage s and its twiddle unit pi/(4 Ns)
        are scalars. `scale`: the norm's factor the last stage applies."""
        f = self.dtype
        self.count += 1
        kb = KernelBuilder(f"{self.step.name}_stage{self.count}", workgroup=(THREADS, 1, 1), checks=False)
        src = kb.buffer("src", f, Access.READ)
        dst = kb.buffer("dst", f, Access.WRITE)
        s = kb.scalar("s", U32)
        unit = kb.scalar("unit", f)
        half = geo.n // 2
        t = kb.let("t", cast(Index("thread", 0), U32))
        with kb.if_(binary("lt", t, const(geo.threads, U32))):
            row = kb.let("row", binary("shr", t, const(geo.logn - 1, U32)))
            j = kb.let("j", binary("and", t, const(half - 1, U32)))
            ns = kb.let("ns", binary("shl", const(1, U32), s))
            k = kb.let("k", binary("and", j, binary("sub", ns, const(1, U32))))
            ar, ai = self._load(kb, src, geo.address(kb, row, j, natural_in))
            br, bi = self._load(kb, src, geo.address(kb, row, binary("add", j, const(half, U32)), natural_in))
            sums, diffs = self._butterfly(kb, (ar, ai), (br, bi), k, ns, unit, scale)
            d = kb.let("d", binary("add", binary("shl", binary("sub", j, k), const(1, U32)), k))
            self._store(kb, dst, geo.address(kb, row, d, natural_out), sums)
            self._store(kb, dst, geo.address(kb, row, binary("add", d, ns), natural_out), diffs)
        return kb.build()

    def tile_kernel(self, geo: _Axis, tile: int, scale: float | None):
        """Every stage along `geo`'s axis in one launch: a workgroup reads `tile` elements (whole rows)
        into shared memory, runs the stages there (two halves of each shared array ping-pong, a barrier
        between stages) and writes the results, scaled by `scale` where given."""
        f = self.dtype
        self.count += 1
        threads = min(THREADS, tile // 2)
        kb = KernelBuilder(f"{self.step.name}_tile{self.count}", workgroup=(threads, 1, 1), checks=False)
        src = kb.buffer("src", f, Access.READ)
        dst = kb.buffer("dst", f, Access.WRITE)
        shared = (kb.shared("sre", f, 2 * tile), kb.shared("sim", f, 2 * tile))
        lane = kb.let("lane", cast(Index("local", 0), U32))
        first = kb.let("first", binary("mul", cast(Index("group", 0), U32), const(tile, U32)))

        def each_element(body) -> None:
            with kb.for_("c", 0, tile // threads, dtype=U32) as c:
                e = kb.let("e", binary("add", binary("mul", c, const(threads, U32)), lane))
                f_ = kb.let("f", binary("add", first, e))
                row = kb.let("row", binary("shr", f_, const(geo.logn, U32)))
                with kb.if_(binary("lt", row, const(geo.rows, U32))):
                    body(e, geo.address(kb, row, binary("and", f_, const(geo.n - 1, U32)), True))

        def read(e, at):
            for arr, v in zip(shared, self._load(kb, src, at)):
                kb.store(arr, e, v)

        each_element(read)
        half = geo.n // 2
        for s in range(geo.logn):
            kb.barrier()
            base_in, base_out = (s % 2) * tile, (1 - s % 2) * tile
            with kb.for_("c", 0, tile // 2 // threads, dtype=U32) as c:
                p = kb.let("p", binary("add", binary("mul", c, const(threads, U32)), lane))
                row_first = kb.let("r0", binary("shl", binary("shr", p, const(geo.logn - 1, U32)),
                                                 const(geo.logn, U32)))
                j = kb.let("j", binary("and", p, const(half - 1, U32)))
                ns = const(1 << s, U32)
                k = kb.let("k", binary("and", j, const((1 << s) - 1, U32)))
                a_at = kb.let("ia", binary("add", row_first, binary("add", j, const(base_in, U32))))
                b_at = binary("add", a_at, const(half, U32))
                ar, ai = (kb.let("re", kb.load(shared[0], a_at, f)), kb.let("im", kb.load(shared[1], a_at, f)))
                br, bi = (kb.let("re", kb.load(shared[0], b_at, f)), kb.let("im", kb.load(shared[1], b_at, f)))
                sums, diffs = self._butterfly(kb, (ar, ai), (br, bi), k, ns, const(math.pi / (4 << s), f),
                                              scale if s == geo.logn - 1 else None)
                d = binary("add", binary("shl", binary("sub", j, k), const(1, U32)), k)
                d_at = kb.let("id", binary("add", row_first, binary("add", d, const(base_out, U32))))
                for arr, v in zip(shared, sums):
                    kb.store(arr, d_at, v)
                for arr, v in zip(shared, diffs):
                    kb.store(arr, binary("add", d_at, ns), v)
        kb.barrier()
        base = (geo.logn % 2) * tile

        def write(e, at):
            at_shared = binary("add", e, const(base, U32))
            self._store(kb, dst, at, [kb.load(arr, at_shared, f) for arr in shared])

        each_element(write)
        return kb.build()

    def _butterfly(self, kb, a, b, k, ns, unit, scale):
        """(a + w b, a - w b) with w the twiddle of k (scaled by `scale` where given)."""
        f = self.dtype
        (ar, ai), (br, bi) = a, b
        wr, wi = self._twiddle(kb, k, ns, unit)
        tr = kb.let("tr", binary("sub", binary("mul", br, wr), binary("mul", bi, wi)))
        ti = kb.let("ti", binary("add", binary("mul", br, wi), binary("mul", bi, wr)))
        sums = (binary("add", ar, tr), binary("add", ai, ti))
        diffs = (binary("sub", ar, tr), binary("sub", ai, ti))
        if scale is not None:
            sums, diffs = ([binary("mul", v, const(scale, f)) for v in pair] for pair in (sums, diffs))
        return sums, diffs

    def _twiddle(self, kb, k, ns, unit):
        """(cos, sign * sin) of the angle 2 pi k / (2 Ns), from an angle in [0, pi/4]: in eighth-units
        (8 Ns to a turn) the angle is x = 4k < 4 Ns; past a quarter turn cos(x) = -cos(4 Ns - x), past
        an eighth cos and sin of g swap with those of 2 Ns - g."""
        f = self.dtype
        x = kb.let("x", binary("shl", k, const(2, U32)))
        quarter = binary("shl", ns, const(1, U32))
        flip = kb.let("flip", binary("gt", x, quarter))
        g = kb.let("g", select(flip, binary("sub", binary("shl", ns, const(2, U32)), x), x))
        swap = kb.let("swap", binary("gt", g, ns))
        h = select(swap, binary("sub", quarter, g), g)
        angle = kb.let("angle", binary("mul", cast(h, f), unit))
        c0, s0 = kb.let("c0", unary("cos", angle)), kb.let("s0", unary("sin", angle))
        c = select(swap, s0, c0)
        sn = select(swap, c0, s0)
        wr = kb.let("wr", select(flip, unary("neg", c), c))
        wi = kb.let("wi", sn if self.sign > 0 else unary("neg", sn))
        return wr, wi

    def _load(self, kb, buf, element):
        word = kb.let("at", binary("shl", element, const(1, U32)))
        return (kb.let("re", kb.load(buf, word, self.dtype)),
                kb.let("im", kb.load(buf, binary("add", word, const(1, U32)), self.dtype)))

    def _store(self, kb, buf, element, values) -> None:
        word = kb.let("to", binary("shl", element, const(1, U32)))
        kb.store(buf, word, values[0])
        kb.store(buf, binary("add", word, const(1, U32)), values[1])


__all__ = ["claims", "generate_gpu_fft", "fft_path", "FFT_FUNCTIONS"]
