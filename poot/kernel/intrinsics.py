"""The objects a `@poot.kernel` body may call, recognised by the importer by *identity*, never by name.

Each intrinsic is a small singleton object. Called outside a kernel (in ordinary Python) it raises a
clear error: it only has a meaning inside a kernel body, where the importer lowers it to KIR, or inside
`kernel.emulate(...)`, where the emulator substitutes its NumPy implementation.

Math functions that the array API defines (`poot.sqrt`, `poot.exp`, `poot.minimum`...) belong to the
trace layer, which jit may not import: they are registered here with `register_math_function(obj,
kir_op)` by `poot/__init__.py`, so `pt.sqrt(x)` inside a kernel is the KIR `sqrt` because the object the
name resolves to is the one registered, whatever name it was imported under.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from poot.dtypes import DType, as_dtype
from poot.errors import PootError
from poot.jit.kir.model import BINARY_OPS, UNARY_OPS, Access

__all__ = [
    "In", "Out", "InOut", "BufferSpec", "Intrinsic", "device_fn", "DeviceFunction",
    "register_math_function", "math_op_of", "INTRINSICS",
    "thread_index", "thread_index_x", "thread_index_y", "thread_index_z",
    "local_index", "local_index_x", "local_index_y", "local_index_z",
    "group_index", "group_index_x", "group_index_y", "group_index_z",
    "group_size", "group_size_x", "group_size_y", "group_size_z",
    "num_groups", "num_groups_x", "num_groups_y", "num_groups_z",
    "workgroup_barrier", "shared", "atomic_add", "no_contract_add", "bitcast", "fma",
    "SUBGROUP", "shuffle", "shuffle_xor", "subgroup_sum", "subgroup_max", "subgroup_min", "subgroup_size",
    "lane_index", "mma_m16n8k16", "mfma_16x16x16", "wmma_16x16x16", "fast_exp2",
    "WIDE_MEMORY", "ldmatrix_x4", "ldmatrix_x4_trans", "load_x4", "store_x4", "copy_async", "copy_async_commit",
    "copy_async_wait", "WARPGROUP", "wgmma_m64n64k64", "wgmma_m64n128k64", "wgmma_m64n256k64",
    "wgmma_m64n64k64_bt", "wgmma_m64n128k64_bt", "wgmma_m64n256k64_bt", "fence_proxy_async",
]


# --- buffer parameter annotations -----------------------------------------------------------------
@dataclass(frozen=True)
class BufferSpec:
    """The annotation `pt.In[pt.f32]`: a 1-D buffer parameter of `dtype` with `access`."""
    dtype: DType
    access: Access

    def __repr__(self) -> str:
        return f"poot.{_ACCESS_NAME[self.access]}[poot.{self.dtype.short}]"


class _AccessMarker:
    """`In`, `Out`, `InOut`: subscript with a dtype to annotate a buffer parameter."""

    def __init__(self, access: Access, name: str):
        self.access, self.name = access, name

    def __getitem__(self, dtype):
        """The BufferSpec, or a BadBufferSpec the kernel import refuses as `bad-annotation` at the
        parameter (an error raised here would come from the `def` line, without the diagnostic code)."""
        if isinstance(dtype, tuple):
            return BadBufferSpec(self, dtype, "a buffer has one dtype")
        try:
            return BufferSpec(as_dtype(dtype), self.access)
        except Exception as e:  # noqa: BLE001 - whatever as_dtype refuses
            return BadBufferSpec(self, dtype, str(e))

    def __repr__(self) -> str:
        return f"poot.{self.name}"


@dataclass(frozen=True)
class BadBufferSpec:
    """`pt.In[...]` subscripted with something that is not one dtype; `reason` says why."""
    marker: _AccessMarker
    item: object
    reason: str

    def __repr__(self) -> str:
        return f"{self.marker!r}[{self.item!r}]"


In = _AccessMarker(Access.READ, "In")
Out = _AccessMarker(Access.WRITE, "Out")
InOut = _AccessMarker(Access.READ_WRITE, "InOut")
_ACCESS_NAME = {Access.READ: "In", Access.WRITE: "Out", Access.READ_WRITE: "InOut"}


# --- intrinsics --------------------------------------------------------------------------------------
class Intrinsic:
    """A function that only means something inside a kernel body. `kind` tells the importer what it
    lowers to; `axis` is the grid axis of an index intrinsic (None: taken from an optional argument)."""

    __slots__ = ("name", "kind", "axis", "__weakref__")

    def __init__(self, name: str, kind: str, axis: int | None = None):
        self.name, self.kind, self.axis = name, kind, axis

    def __call__(self, *args, **kwargs):
        raise PootError(f"poot.{self.name}() only has a meaning inside a @poot.kernel body (imported to KIR) "
                        "or under kernel.emulate(...); it cannot be called from ordinary Python")

    def __repr__(self) -> str:
        return f"<poot kernel intrinsic {self.name}>"


def _index_family(kind: str, base: str) -> tuple[Intrinsic, ...]:
    return (Intrinsic(base, kind, None), Intrinsic(base + "_x", kind, 0),
            Intrinsic(base + "_y", kind, 1), Intrinsic(base + "_z", kind, 2))


thread_index, thread_index_x, thread_index_y, thread_index_z = _index_family("thread", "thread_index")
local_index, local_index_x, local_index_y, local_index_z = _index_family("local", "local_index")
group_index, group_index_x, group_index_y, group_index_z = _index_family("group", "group_index")
group_size, group_size_x, group_size_y, group_size_z = _index_family("group_size", "group_size")
num_groups, num_groups_x, num_groups_y, num_groups_z = _index_family("num_groups", "num_groups")

workgroup_barrier = Intrinsic("workgroup_barrier", "barrier")
shared = Intrinsic("shared", "shared")
atomic_add = Intrinsic("atomic_add", "atomic_add")
no_contract_add = Intrinsic("no_contract_add", "no_contract_add")
bitcast = Intrinsic("bitcast", "bitcast")
fma = Intrinsic("fma", "fma")

# subgroup operations (the 32 lanes of an aligned run of local x indices; poot/kernel/subgroup.py)
shuffle = Intrinsic("shuffle", "shuffle")
shuffle_xor = Intrinsic("shuffle_xor", "shuffle_xor")
subgroup_sum = Intrinsic("subgroup_sum", "subgroup_sum")
subgroup_max = Intrinsic("subgroup_max", "subgroup_max")
subgroup_min = Intrinsic("subgroup_min", "subgroup_min")
subgroup_size = Intrinsic("subgroup_size", "subgroup_size")
lane_index = Intrinsic("lane_index", "lane_index")
# matrix multiply-accumulates over a run of lanes (poot/jit/kir/model.py MMA_SHAPES): PTX tensor cores,
# AMD CDNA (MFMA, wave64) and RDNA3 (WMMA, wave32) matrix cores
mma_m16n8k16 = Intrinsic("mma_m16n8k16", "mma")
mfma_16x16x16 = Intrinsic("mfma_16x16x16", "mma")
wmma_16x16x16 = Intrinsic("wmma_16x16x16", "mma")
SUBGROUP = frozenset({"shuffle", "shuffle_xor", "subgroup_sum", "subgroup_max", "subgroup_min", "subgroup_size",
                      "lane_index", "mma"})

# 16-byte memory operations: warp-level matrix fragments from shared memory, 4-word loads and stores, and
# asynchronous global -> shared copies (poot/kernel/async_copy.py)
ldmatrix_x4 = Intrinsic("ldmatrix_x4", "ldmatrix")
ldmatrix_x4_trans = Intrinsic("ldmatrix_x4_trans", "ldmatrix_trans")
load_x4 = Intrinsic("load_x4", "load_x4")
store_x4 = Intrinsic("store_x4", "store_x4")
copy_async = Intrinsic("copy_async", "copy_async")
copy_async_commit = Intrinsic("copy_async_commit", "copy_async_commit")
copy_async_wait = Intrinsic("copy_async_wait", "copy_async_wait")
WIDE_MEMORY = frozenset({"ldmatrix", "ldmatrix_trans", "load_x4", "store_x4", "copy_async", "copy_async_commit",
                         "copy_async_wait"})

# Hopper's warpgroup matrix product from shared memory and the fence before it (poot/kernel/warpgroup.py)
wgmma_m64n64k64 = Intrinsic("wgmma_m64n64k64", "wgmma")
wgmma_m64n128k64 = Intrinsic("wgmma_m64n128k64", "wgmma")
wgmma_m64n256k64 = Intrinsic("wgmma_m64n256k64", "wgmma")
wgmma_m64n64k64_bt = Intrinsic("wgmma_m64n64k64_bt", "wgmma")
wgmma_m64n128k64_bt = Intrinsic("wgmma_m64n128k64_bt", "wgmma")
wgmma_m64n256k64_bt = Intrinsic("wgmma_m64n256k64_bt", "wgmma")
fence_proxy_async = Intrinsic("fence_proxy_async", "fence_proxy_async")
WARPGROUP = frozenset({"wgmma", "fence_proxy_async"})

INTRINSICS: tuple[Intrinsic, ...] = tuple(v for v in list(globals().values()) if isinstance(v, Intrinsic))


# --- device functions -------------------------------------------------------------------------------
class DeviceFunction:
    """A helper marked `@pt.device_fn`: callable from kernels (inlined at each call site) and, outside
    kernels, an ordinary Python function."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "device_fn")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<poot device_fn {self.__qualname__}>"


def device_fn(fn) -> DeviceFunction:
    """Mark `fn` as callable from `@pt.kernel` bodies; the importer inlines it at each call."""
    if isinstance(fn, DeviceFunction):
        return fn
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise PootError(f"@poot.device_fn needs a Python function, got {fn!r}")
    return DeviceFunction(fn)


# --- math functions from other layers ------------------------------------------------------------
_MATH: dict[int, tuple[object, str]] = {}      # id(obj) -> (obj, kir op); obj kept alive here
MATH_KINDS = UNARY_OPS | BINARY_OPS | {"select"}

# the Python builtins a kernel may call (recognised by identity with the `builtins` module's objects)
BUILTINS = {builtins.len: "len", builtins.range: "range", builtins.min: "min", builtins.max: "max",
            builtins.abs: "abs"}


def register_math_function(obj, kir_op: str) -> None:
    """Let `obj` (e.g. the trace layer's `poot.sqrt`) be called in kernel bodies as the KIR op `kir_op`:
    a unary op (`sqrt`, `exp`...), a binary op (`min` for `poot.minimum`, `pow`...) or `select`
    (`poot.where`)."""
    if kir_op not in MATH_KINDS:
        raise PootError(f"register_math_function: unknown KIR op {kir_op!r}")
    _MATH[id(obj)] = (obj, kir_op)


def fast_exp2(x):
    """2**x in a kernel body, where a target's fast instruction may be used (PTX: ex2.approx.ftz, relative
    error below 2**-22, subnormal results 0; elsewhere and in the emulator the accurate exp2). Outside a
    kernel it is NumPy's exp2."""
    return np.exp2(x)


register_math_function(fast_exp2, "fast_exp2")


def math_op_of(obj) -> str | None:
    """The KIR op registered for `obj`, or None."""
    hit = _MATH.get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else None


# the array API names (as `poot` exports them) that mean a KIR op inside a kernel
ARRAY_MATH = {
    "sqrt": "sqrt", "rsqrt": "rsqrt", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "asin", "arcsin": "asin", "acos": "acos", "arccos": "acos", "atan": "atan", "arctan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "arcsinh": "asinh", "acosh": "acosh",
    "arccosh": "acosh", "atanh": "atanh", "arctanh": "atanh", "erf": "erf", "abs": "abs", "absolute": "abs",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "round", "rint": "round", "sign": "sign",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "negative": "neg", "minimum": "min",
    "maximum": "max", "pow": "pow", "power": "pow", "atan2": "atan2", "arctan2": "atan2", "hypot": "hypot",
    "copysign": "copysign", "nextafter": "nextafter", "where": "select",
}


def register_kernel_math(namespace: dict) -> None:
    """Register every function of ARRAY_MATH found in `namespace` (poot's own globals, from
    poot/__init__.py) as its KIR op."""
    for name, op in ARRAY_MATH.items():
        obj = namespace.get(name)
        if obj is not None and callable(obj):
            register_math_function(obj, op)
