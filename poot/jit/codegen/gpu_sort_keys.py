"""What the GPU sort network (gpu_sort.py) compares: an order-preserving unsigned image of each value.

The network sorts (key, index) pairs of uint32 words. A value's key is an unsigned integer image in
the order the host sort (poot/graph/host_sort.py) sorts values by, with its ties kept as ties, so the
index (the element's position in its row) alone breaks them and the sort is stable:

- bool and unsigned integers: the value, zero-extended;
- signed integers: the bits with the sign bit flipped (two's complement -> offset binary);
- floats: the sign-magnitude bits turned into offset binary (negative: every bit inverted; positive:
  the sign bit set), with -0.0 keyed as +0.0 (they tie) and every NaN as the largest key (NaNs sort
  last and tie, whatever their sign or payload). float16 and bfloat16 order as the float32 values the
  host sort widens them to; float64, int64 and uint64 have a two-word key (high word first).

Values are only ever read as unsigned words of their width (uint8, uint16, uint32; 64-bit types as
uint32 pairs), never into float registers: the sorted output copies each element's own bits (-0.0
stays -0.0, a NaN keeps its payload), and float64 and int64 sort on devices without 64-bit arithmetic.
The padding that fills a row to a power of two gets the largest key in every word and an index past
the row, so it sorts after everything, NaNs included.
"""
from __future__ import annotations

from dataclasses import dataclass

from poot import dtypes as dt
from poot.errors import DTypeError
from poot.jit.kir.builder import binary, cast, const, select
from poot.jit.kir.model import Expr

U32 = dt.uint32
ALL_ONES = 0xFFFFFFFF
SIGN32 = 0x80000000
# the largest magnitude bits below a NaN's (infinity), per float type: a larger magnitude is a NaN
_INFINITY_BITS = {dt.float16: 0x7C00, dt.bfloat16: 0x7F80, dt.float32: 0x7F800000}
_FLOAT64_INFINITY_HI = 0x7FF00000


@dataclass(frozen=True)
class ValueWords:
    """How the values of one dtype are read and copied: as `words` unsigned `word`s per element."""
    word: dt.DType
    words: int

    @property
    def key_words(self) -> int:
        """uint32 key words per element: 2 for the 64-bit types, else 1."""
        return self.words


def value_words(dtype: dt.DType) -> ValueWords:
    """The unsigned view of `dtype` the kernels read and copy values through."""
    if dtype.kind not in "biuf":
        raise DTypeError(f"GPU sort: no order for {dtype.name} values (bool, integers and reals sort)")
    size = dtype.itemsize
    if size == 8:
        return ValueWords(U32, 2)
    return ValueWords({1: dt.uint8, 2: dt.uint16, 4: U32}[size], 1)


def key_of(kb, dtype: dt.DType, words: list[Expr], invert: bool) -> list[Expr]:
    """The uint32 key words (most significant first) of the value held by `words` (its unsigned words
    as uint32, least significant first), inverted for a descending order when `invert`. `kb` holds the
    intermediate values in locals (an expression tree must not repeat a large subtree)."""
    if dtype.itemsize == 8:
        key = _key64(kb, dtype, *words)
    else:
        key = [_key32(kb, dtype, words[0])]
    return [binary("xor", k, const(ALL_ONES, U32)) if invert else k for k in key]


def _key32(kb, dtype: dt.DType, v: Expr) -> Expr:
    bits = dtype.bits
    sign = 1 << (bits - 1)
    if dtype.kind in "bu":
        return v
    if dtype.kind == "i":
        return binary("xor", v, const(sign, U32))
    infinity = _INFINITY_BITS.get(dtype)
    if infinity is None:
        raise DTypeError(f"GPU sort: no key for the float type {dtype.name}")
    magnitude = kb.let("mag", binary("and", v, const(sign - 1, U32)))
    v0 = kb.let("v0", select(binary("eq", magnitude, const(0, U32)), const(0, U32), v))   # -0.0 -> +0.0
    negative = binary("ne", binary("and", v0, const(sign, U32)), const(0, U32))
    ordered = select(negative, binary("xor", v0, const((1 << bits) - 1, U32)), binary("or", v0, const(sign, U32)))
    return kb.let("key", select(binary("gt", magnitude, const(infinity, U32)), const(ALL_ONES, U32), ordered))


def _key64(kb, dtype: dt.DType, lo: Expr, hi: Expr) -> list[Expr]:
    if dtype.kind == "u":
        return [hi, lo]
    if dtype.kind == "i":
        return [binary("xor", hi, const(SIGN32, U32)), lo]
    mag_hi = kb.let("mag", binary("and", hi, const(SIGN32 - 1, U32)))
    zero = kb.let("zero", binary("and", binary("eq", mag_hi, const(0, U32)), binary("eq", lo, const(0, U32))))
    nan = kb.let("nan", binary("or", binary("gt", mag_hi, const(_FLOAT64_INFINITY_HI, U32)),
                               binary("and", binary("eq", mag_hi, const(_FLOAT64_INFINITY_HI, U32)),
                                      binary("ne", lo, const(0, U32)))))
    negative = kb.let("neg", binary("and", binary("ne", binary("and", hi, const(SIGN32, U32)), const(0, U32)),
                                    binary("eq", zero, const(False, dt.bool_))))
    k_hi = select(negative, binary("xor", hi, const(ALL_ONES, U32)), binary("or", hi, const(SIGN32, U32)))
    k_lo = select(negative, binary("xor", lo, const(ALL_ONES, U32)), lo)
    k_hi = select(zero, const(SIGN32, U32), k_hi)
    k_lo = select(zero, const(0, U32), k_lo)
    return [kb.let("khi", select(nan, const(ALL_ONES, U32), k_hi)),
            kb.let("klo", select(nan, const(ALL_ONES, U32), k_lo))]


def load_value(kb, buffer: str, layout: ValueWords, element: Expr) -> list[Expr]:
    """The unsigned words of element `element` of `buffer`, each widened to uint32, least significant
    first (poot's GPUs are little-endian: a 64-bit element's low word comes first)."""
    if layout.words == 1:
        return [kb.let("w", cast(kb.load(buffer, element, layout.word), U32))]
    first = binary("mul", element, const(2, U32))
    return [kb.let("lo", kb.load(buffer, first, U32)),
            kb.let("hi", kb.load(buffer, binary("add", first, const(1, U32)), U32))]


def copy_value(kb, dst: str, dst_element: Expr, src: str, src_element: Expr, layout: ValueWords) -> None:
    """dst[dst_element] = src[src_element], bit for bit (as unsigned words)."""
    if layout.words == 1:
        kb.store(dst, dst_element, kb.load(src, src_element, layout.word))
        return
    d, s = binary("mul", dst_element, const(2, U32)), binary("mul", src_element, const(2, U32))
    for w in range(2):
        kb.store(dst, binary("add", d, const(w, U32)), kb.load(src, binary("add", s, const(w, U32)), U32))


__all__ = ["ValueWords", "value_words", "key_of", "load_value", "copy_value", "ALL_ONES", "U32"]
