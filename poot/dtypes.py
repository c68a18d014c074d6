"""poot's dtypes and type promotion: one base module every layer shares.

A `DType` is a singleton; `pt.float32 is pt.f32`, and the kernel annotations (`pt.In[pt.f32]`) use the
same objects. Promotion follows the Python array API standard inside each kind (bool, signed, unsigned,
floating) and NumPy 2 across kinds, with NumPy 2's rule that Python scalars are *weak*: they take the
array's dtype when their kind allows it (`f32_array * 2.0` stays float32, `i8_array + 1` stays int8).

complex64 and complex128 (kind 'c') are stored as NumPy stores them, the real and imaginary parts
interleaved; kernels never see them: graphs are lowered to real arithmetic on those parts before
planning (poot/graph/complex_lower.py), so `ALL_DTYPES` (the scalar types kernels compute in) stays
real and `ARRAY_DTYPES` lists every dtype an array may have.

bfloat16 is `ml_dtypes.bfloat16`: a real NumPy dtype (the one JAX and TensorFlow use), so a bf16 poot
array becomes a NumPy array users can compute with, print and save, instead of opaque uint16 bit
patterns; kernels still see it as 16-bit storage computed in float32.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from poot.errors import DTypeError

__all__ = [
    "DType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "ALL_DTYPES",
    "COMPLEX_DTYPES", "ARRAY_DTYPES", "is_complex", "real_dtype", "complex_dtype", "result_type", "as_dtype",
    "promote_with_scalar", "is_float", "is_int", "is_signed", "is_unsigned", "is_bool",
    "finfo", "iinfo", "default_float", "default_int", "CASTINGS",
]

# NumPy's casting rules, the values of every `casting=` argument (np.can_cast, astype, ufunc calls)
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


class DType:
    """A scalar type: name, kind ('b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex),
    width in bits (both parts together for complex)."""

    __slots__ = ("name", "kind", "bits", "np", "short", "__weakref__")

    def __init__(self, name: str, kind: str, bits: int, np_dtype, short: str):
        self.name, self.kind, self.bits, self.short = name, kind, bits, short
        self.np = np.dtype(np_dtype)

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: lets NumPy take a poot dtype anywhere it takes one (`np.dtype(pt.float32)`,
        `np.zeros(3, dtype=pt.int8)`), as NumPy accepts any object with a `.dtype` attribute."""
        return self.np

    # the NumPy dtype attributes that duck-typed libraries read from `array.dtype` (Dask's reductions
    # read `x.dtype.type`, `.fields`, `.hasobject`): answered by the NumPy dtype of the same type
    # (not `shape` or `base`: code tells arrays from dtypes by those)
    _NUMPY_ATTRIBUTES = frozenset({"type", "char", "str", "num", "names", "fields", "subdtype",
                                   "hasobject", "byteorder", "isnative", "descr", "alignment",
                                   "isbuiltin"})

    def __getattr__(self, attr: str):
        if attr in DType._NUMPY_ATTRIBUTES:
            return getattr(self.np, attr)
        raise AttributeError(f"poot dtype {self.name} has no attribute {attr!r}")

    def __repr__(self) -> str:
        return f"poot.{self.name}"

    __str__ = lambda self: self.name  # noqa: E731

    def __reduce__(self):
        return (as_dtype, (self.name,))

    # `pt.f32(x)` is a cast: inside an @pt.kernel the importer lowers it; outside it builds a 0-d array.
    def __call__(self, *args, **kwargs):
        from poot import _cast_hook  # set by poot/__init__: keeps this base module free of layers

        if len(args) != 1 or kwargs:
            from poot.errors import ArgumentError

            raise ArgumentError(f"pt.{self.name}(value) casts one value; got {len(args)} positional and "
                                f"{sorted(kwargs) or 'no'} keyword arguments")
        return _cast_hook(args[0], self)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        if not isinstance(other, (str, type, np.dtype)):
            return NotImplemented      # dicts, lists, arrays...: not a dtype (Python then says False)
        try:
            return self is as_dtype(other)
        except (DTypeError, TypeError, ValueError, KeyError):
            return False

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self.name)


bool_ = DType("bool", "b", 8, np.bool_, "bool_")
int8 = DType("int8", "i", 8, np.int8, "i8")
int16 = DType("int16", "i", 16, np.int16, "i16")
int32 = DType("int32", "i", 32, np.int32, "i32")
int64 = DType("int64", "i", 64, np.int64, "i64")
uint8 = DType("uint8", "u", 8, np.uint8, "u8")
uint16 = DType("uint16", "u", 16, np.uint16, "u16")
uint32 = DType("uint32", "u", 32, np.uint32, "u32")
uint64 = DType("uint64", "u", 64, np.uint64, "u64")
float16 = DType("float16", "f", 16, np.float16, "f16")
bfloat16 = DType("bfloat16", "f", 16, ml_dtypes.bfloat16, "bf16")
float32 = DType("float32", "f", 32, np.float32, "f32")
float64 = DType("float64", "f", 64, np.float64, "f64")
complex64 = DType("complex64", "c", 64, np.complex64, "c64")
complex128 = DType("complex128", "c", 128, np.complex128, "c128")

# the real dtypes: the scalar types kernels compute in (complex is lowered to them before planning)
ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64)
COMPLEX_DTYPES = (complex64, complex128)
ARRAY_DTYPES = ALL_DTYPES + COMPLEX_DTYPES     # every dtype a poot array may have
_BY_SHORT = {d.short: d for d in ARRAY_DTYPES}


def _numpy_reads(name: str) -> bool:
    try:
        np.dtype(name)
    except TypeError:
        return False
    return True


# strings as_dtype answers directly: the full names, and the short names NumPy gives no meaning of its
# own. 'i8', 'u8' and 'f16' are NumPy's byte-size codes (int64, uint64, float128): there NumPy's reading
# wins, as a user of NumPy expects (by_short is the kernel language's reading).
_BY_NAME = ({d.name: d for d in ARRAY_DTYPES} | {"bool_": bool_}
            | {s: d for s, d in _BY_SHORT.items() if not _numpy_reads(s)})
BY_NUMPY = {d.np: d for d in ARRAY_DTYPES}     # NumPy dtype (native byte order) -> poot dtype
_REAL_OF = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}

default_float = float64
default_int = int64


def by_short(name: str) -> DType:
    """The dtype of a short name as the kernel language spells it ('i8' is int8 here, as `pt.i8`)."""
    d = _BY_SHORT.get(name)
    if d is None:
        raise DTypeError(f"unknown short dtype name {name!r}; known: {', '.join(_BY_SHORT)}")
    return d


def as_dtype(x) -> DType:
    """Accept a DType, its name ('float32', 'f32'), a NumPy dtype, type code ('i8' is int64, as in
    NumPy) or scalar type, or Python bool/int/float."""
    if isinstance(x, DType):
        return x
    if x is bool:
        return bool_
    if x is int:
        return default_int
    if x is float:
        return default_float
    if x is complex:
        return complex128
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    try:
        npd = np.dtype(x)
    except TypeError:
        npd = None
    if npd is not None and npd in BY_NUMPY:
        return BY_NUMPY[npd]
    raise DTypeError(f"unsupported dtype {x!r}; poot supports "
                     + ", ".join(d.name for d in ARRAY_DTYPES))


def is_bool(d: DType) -> bool:
    return d.kind == "b"


def is_float(d: DType) -> bool:
    return d.kind == "f"


def is_signed(d: DType) -> bool:
    return d.kind == "i"


def is_unsigned(d: DType) -> bool:
    return d.kind == "u"


def is_int(d: DType) -> bool:
    return d.kind in "iu"


def is_complex(d: DType) -> bool:
    return d.kind == "c"


def real_dtype(d: DType) -> DType:
    """The dtype of a complex dtype's parts (complex64 -> float32); a real dtype is its own."""
    return _REAL_OF.get(d, d)


def complex_dtype(d: DType) -> DType:
    """The complex dtype holding values of `d` exactly as NumPy promotes them (float32 -> complex64,
    float64 and integers -> complex128)."""
    if d.kind == "c":
        return d
    if d.kind == "f":
        return _COMPLEX_OF[d]
    return complex128


# --- promotion -------------------------------------------------------------------------------
_INT_LADDER = {("i", 8): int8, ("i", 16): int16, ("i", 32): int32, ("i", 64): int64}


def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind == "c" or b.kind == "c":
        # complex with anything: the complex dtype whose parts hold the promotion of both parts
        return complex_dtype(_promote_pair(real_dtype(a), real_dtype(b)))
    if a.kind == b.kind and a.kind in "iu":
        return a if a.bits >= b.bits else b
    if a.kind in "iu" and b.kind in "iu":  # mixed signedness
        s, u = (a, b) if a.kind == "i" else (b, a)
        if s.bits > u.bits:
            return s
        if u.bits < 64:
            return _INT_LADDER[("i", u.bits * 2)]
        return float64  # int64 + uint64: NumPy's answer (the standard leaves it open)
    if a.kind == "f" and b.kind == "f":
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.bits >= b.bits else b
    # integer with float: NumPy 2's table (the standard leaves mixed kinds open). bfloat16 has an
    # 8-bit mantissa, so like JAX it only holds int8/uint8 exactly and widens to float32 above that.
    i, f = (a, b) if a.kind in "iu" else (b, a)
    need = {8: 16, 16: 32, 32: 64, 64: 64}[i.bits]
    if f is bfloat16:
        return bfloat16 if i.bits == 8 else float32 if i.bits == 16 else float64
    return f if f.bits >= need else {16: float16, 32: float32, 64: float64}[need]


def result_type(*dtypes: DType) -> DType:
    """Promote array dtypes (no Python scalars) as the standard and NumPy 2 do."""
    if not dtypes:
        raise DTypeError("result_type() needs at least one dtype")
    out = as_dtype(dtypes[0])
    for d in dtypes[1:]:
        out = _promote_pair(out, as_dtype(d))
    return out


def promote_with_scalar(d: DType, scalar) -> DType:
    """The dtype of `array(d) op scalar` for a weak Python scalar (bool, int, float)."""
    if isinstance(scalar, (bool, np.bool_)):
        return d
    if isinstance(scalar, int):
        return d if d.kind in "iufc" else default_int
    if isinstance(scalar, float):
        return d if d.kind in "fc" else default_float
    if isinstance(scalar, complex):   # weak too: float32 arrays take complex64, integers complex128
        return complex_dtype(d)
    raise DTypeError(f"cannot combine a {type(scalar).__name__} with a {d.name} array")


def scalar_dtype(scalar) -> DType:
    """The dtype a Python scalar takes on its own (no array to adapt to)."""
    if isinstance(scalar, np.generic):
        return as_dtype(scalar.dtype)
    if isinstance(scalar, bool):
        return bool_
    if isinstance(scalar, int):
        return default_int
    if isinstance(scalar, float):
        return default_float
    if isinstance(scalar, complex):
        return complex128
    raise DTypeError(f"unsupported scalar {scalar!r} of type {type(scalar).__name__}")


def finfo(d):
    d = as_dtype(d)
    if d.kind == "c":      # NumPy's answer: the limits of the parts (finfo(complex64).dtype is float32)
        return np.finfo(d.np)
    if d.kind != "f":
        raise DTypeError(f"finfo() needs a floating dtype (real or complex), got {d.name}")
    return ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)


def iinfo(d):
    d = as_dtype(d)
    if d.kind not in "iu":
        raise DTypeError(f"iinfo() needs an integer dtype, got {d.name}")
    return np.iinfo(d.np)
