"""The array API standard's inspection and data type functions: `__array_namespace_info__()`,
`isdtype`, `can_cast`, `finfo`, `iinfo` (docs/array-api.md lists where poot deviates).

poot's dtypes beyond the standard's (float16, bfloat16) work everywhere but are not *array API* data
types, so `dtypes()` leaves them out, as the standard asks. complex64 and complex128 are array API
dtypes; kernels compute them as their real parts (poot/graph/complex_lower.py).
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import ArgumentValueError, DTypeError, api_boundary
from poot.trace import context as _dev

__all__ = ["__array_api_version__", "__array_namespace_info__", "isdtype", "can_cast", "finfo", "iinfo"]

# 2024.12 added count_nonzero, cumulative_prod, diff, nextafter, reciprocal, take_along_axis, Python
# scalars in binary functions and where, and the "max dimensions" capability; the earlier versions are
# subsets, so a library asking for any of them (array-api-compat asks for 2024.12) gets this namespace
API_VERSION = __array_api_version__ = "2024.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_STANDARD_DTYPES = (dt.bool_, dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32,
                    dt.uint64, dt.float32, dt.float64, dt.complex64, dt.complex128)
_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def _kind_letters(kind) -> str:
    """The poot kind letters ('b', 'i', 'u', 'f') a standard kind name (or tuple of them) covers."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    letters = ""
    for k in kinds:
        if k not in _KINDS:
            raise DTypeError(f"unknown data type kind {k!r}; the standard's kinds are "
                             + ", ".join(repr(n) for n in _KINDS))
        letters += _KINDS[k]
    return letters


class Info:
    """What `pt.__array_namespace_info__()` returns: the standard's inspection utilities."""

    __module__ = "poot"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent output shapes (unique_*, nonzero, x[mask], repeat
        with an array of counts) are supported: they realize their input at that point, since the
        result's shape depends on its values. Inside @pt.jit (or a pt.cond/fori_loop/while_loop body)
        they raise TracerError, so asked there both are False: array API libraries read this to pick
        a where-based path (array-api-extra's apply_where, as for jax.jit). "max dimensions" is
        NumPy's limit, which poot's shapes share."""
        from poot.graph.aval import MAX_NDIM
        from poot.trace.lazy import is_tracing

        eager = not is_tracing()
        return {"boolean indexing": eager, "data-dependent shapes": eager, "max dimensions": MAX_NDIM}

    def extensions(self) -> dict:
        """Which optional extensions exist (poot's addition to the standard's info object): `linalg`
        and `fft` (host steps over NumPy's pocketfft) both yes."""
        return {"linalg": True, "fft": True}

    def default_device(self):
        """The device new arrays go to: POOT_DEVICE, else "cpu" (`pt.device(...)` changes it per
        thread). Devices are named by strings, the same objects `x.device` gives."""
        return _dev.default()

    def devices(self) -> list:
        """Every device that can be used on this machine (creating each once to find out)."""
        from poot import devices

        return [_dev.canonical(name) for name, usable, _ in devices.availability() if usable]

    def default_dtypes(self, *, device=None) -> dict:
        """float64, complex128, int64 and int64 for indices on every device."""
        self._check_device(device)
        return {"real floating": dt.float64, "complex floating": dt.complex128, "integral": dt.int64,
                "indexing": dt.int64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes poot supports, by canonical name, optionally of one kind or a tuple
        of kinds ('bool', 'signed integer', 'unsigned integer', 'integral', 'real floating',
        'complex floating', 'numeric')."""
        self._check_device(device)
        letters = "biufc" if kind is None else _kind_letters(kind)
        return {d.name: d for d in _STANDARD_DTYPES if d.kind in letters}

    @staticmethod
    def _check_device(device):
        if device is not None:
            _dev.backend(_dev.canonical(device))  # DeviceUnavailableError names what is wrong

    def __repr__(self) -> str:
        return "poot.__array_namespace_info__()"


def __array_namespace_info__() -> Info:
    """The array API standard's inspection namespace (capabilities, devices, dtypes)."""
    return Info()


def _dtype_of(x, op: str) -> dt.DType:
    from poot.trace.array import Array

    if isinstance(x, Array):
        return x.dtype
    try:
        return dt.as_dtype(x)
    except DTypeError:
        raise DTypeError(f"{op}: expected a poot dtype or array, got {x!r}") from None


@api_boundary
def isdtype(dtype, kind) -> bool:
    """Is `dtype` of `kind`: a dtype, a kind name ('bool', 'signed integer', 'unsigned integer',
    'integral', 'real floating', 'complex floating', 'numeric') or a tuple of them?"""
    d = _dtype_of(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if d.kind in _kind_letters(k):
                return True
        elif d == _dtype_of(k, "isdtype"):
            return True
    return False




@api_boundary
def can_cast(from_, to, /, casting="safe") -> bool:
    """Can `from_` (a dtype or an array) be cast to `to` by type promotion, i.e. without losing
    values: the promotion of the two is `to` itself. NumPy's other `casting` rules ('no', 'equiv',
    'same_kind', 'unsafe') answer as np.can_cast does."""
    src, dst = _dtype_of(from_, "can_cast"), _dtype_of(to, "can_cast")
    if casting == "safe":
        return dt.result_type(src, dst) is dst
    if casting not in dt.CASTINGS:
        raise ArgumentValueError(f"can_cast: casting must be one of {', '.join(map(repr, dt.CASTINGS))}, "
                                 f"got {casting!r}")
    return bool(np.can_cast(src.np, dst.np, casting))


class _Limits:
    """The standard's finfo/iinfo object: `bits`, `max`, `min`, `dtype` (a poot dtype), plus `eps`
    and `smallest_normal` for floats; NumPy's other attributes (tiny, resolution...) pass through."""

    __slots__ = ("_np", "dtype", "bits")

    def __init__(self, np_info, d: dt.DType):
        self._np, self.dtype, self.bits = np_info, d, d.bits

    def __getattr__(self, name):
        if name == "_np":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._np!r})".replace(repr(self._np.dtype), self.dtype.name)


class finfo_object(_Limits):  # noqa: N801 (the standard's name)
    __slots__ = ()

    @property
    def max(self) -> float:
        return float(self._np.max)

    @property
    def min(self) -> float:
        return float(self._np.min)

    @property
    def eps(self) -> float:
        return float(self._np.eps)

    @property
    def smallest_normal(self) -> float:
        return float(self._np.smallest_normal)


class iinfo_object(_Limits):  # noqa: N801 (the standard's name)
    __slots__ = ()

    @property
    def max(self) -> int:
        return int(self._np.max)

    @property
    def min(self) -> int:
        return int(self._np.min)


@api_boundary
def finfo(type, /) -> finfo_object:  # noqa: A002 (the standard's parameter name)
    """Limits of a floating dtype (or of an array's dtype): bits, eps, max, min, smallest_normal; a
    complex dtype gives its parts' (finfo(complex64).dtype is float32, as the standard asks)."""
    d = _dtype_of(type, "finfo")
    return finfo_object(dt.finfo(d), dt.real_dtype(d))


@api_boundary
def iinfo(type, /) -> iinfo_object:  # noqa: A002 (the standard's parameter name)
    """Limits of an integer dtype (or of an array's dtype): bits, max, min."""
    d = _dtype_of(type, "iinfo")
    return iinfo_object(dt.iinfo(d), d)
