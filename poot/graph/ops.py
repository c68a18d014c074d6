"""The array primitives: each declared once in the op registry (poot/graph/registry.py) with its
shape/dtype rule, its oracle (NumPy) rule, its family, its fusion class and its cost.

Primitives are deliberately few: the tracer expresses everything else (softmax, var, einsum, random
numbers, integer-array indexing...) as compositions of these. Conventions every layer relies on:
- elementwise ops broadcast their inputs NumPy-style, but their inputs already share one dtype (the
  tracer inserts `convert`); comparisons and predicates return bool;
- reductions keep the reduced axes with size 1 (`keepdims=True`); the tracer reshapes if asked not to;
- `slice` is given per axis as start, step (non-zero, may be negative) and output size;
- `take` gathers along one axis with in-range non-negative indices; `scatter` writes along axis 0;
- complex64/complex128 values are accepted by the ops listed in COMPLEX_OPS (and by the structural
  ops, which ignore dtypes); `bitcast` between a complex dtype and its real one views the parts as a
  trailing axis of 2. poot/graph/complex_lower.py rewrites them into real ops before planning.
The upper layers attach their rules (index maps, KIR, derivatives, batching) to these same ops
through the registry. The host ops are declared in host.py and host_numpy.py, the control
constructs in control.py.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, PootIndexError, ShapeError
from poot.graph.aval import Aval, broadcast_shapes
from poot.graph.registry import OPS, Fusion, OpDef, declare

__all__ = ["OPS", "OpDef", "Fusion"]

# the family of an op (`OpDef.kind`) -> how the planner treats it; `index` ops are split by name below
_FUSION_OF_KIND = {"elementwise": Fusion.ELEMENTWISE, "source": Fusion.SOURCE, "reduce": Fusion.REDUCTION,
                   "argreduce": Fusion.REDUCTION, "scan": Fusion.SCAN, "movement": Fusion.MOVEMENT,
                   "contraction": Fusion.MATMUL, "host": Fusion.HOST, "control": Fusion.CONTROL}

# elementwise ops the planner counts as four cheap ones per element (transcendental, division):
# a value computed with one is stored rather than recomputed by several kernels
_COSTLY = frozenset({"exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
                     "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "pow", "atan2",
                     "hypot", "logaddexp", "div", "sqrt"})


def _register(name: str, kind: str, shape_rule: Callable, oracle: Callable, *, arity: int | None,
              params: tuple[str, ...] = (), fusion: Fusion | None = None, cost: int | None = None) -> OpDef:
    """Declare one primitive in the registry; its fusion class follows from its family unless given."""
    if cost is None and name in _COSTLY:
        cost = 4
    return declare(name, kind=kind, fusion=fusion or _FUSION_OF_KIND[kind], arity=arity, params=params,
                   shape_rule=shape_rule, oracle=oracle, cost=cost)


def _np(d: dt.DType):
    return d.np


def _check_kinds(op: str, d: dt.DType, kinds: str) -> None:
    if d.kind not in kinds:
        names = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "floating",
                 "c": "complex floating"}
        raise DTypeError(f"{op} does not accept {d.name}; it takes " + " or ".join(names[k] for k in kinds))


# --- elementwise ---------------------------------------------------------------------------------
def _erf(x):
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64))).astype(np.float64)


def _float_via64(fn):
    """Oracle for float ops NumPy lacks for some dtypes: compute in float64, round once."""
    return lambda x: fn(x.astype(np.float64)).astype(x.dtype)


UNARY_FLOAT = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": _float_via64(_erf), "floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc,
}
UNARY_NUMERIC = {"neg": np.negative, "abs": np.abs, "sign": np.sign}
UNARY_PREDICATE = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
UNARY_BITS = {"bitwise_not": np.invert}
UNARY_BOOL = {"logical_not": np.logical_not}

BINARY_ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "floordiv": np.floor_divide,
                "mod": np.remainder, "pow": np.power}
BINARY_ANY = {"max": np.maximum, "min": np.minimum}
BINARY_FLOAT = {"div": np.true_divide, "atan2": np.arctan2, "hypot": np.hypot,
                "logaddexp": np.logaddexp, "copysign": np.copysign, "nextafter": np.nextafter}
BINARY_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                  "gt": np.greater, "ge": np.greater_equal}
BINARY_BITS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
BINARY_SHIFT = {"shl": np.left_shift, "shr": np.right_shift}

# the elementwise ops, reductions and contractions that also take complex operands: each has a
# lowering rule in poot/graph/complex_lower.py (the others refuse complex with a DTypeError)
COMPLEX_OPS = frozenset({"exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
                         "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
                         "neg", "abs", "sign", "isnan", "isinf", "isfinite", "add", "sub", "mul", "pow",
                         "div", "eq", "ne", "reduce_sum", "reduce_prod", "cumsum", "matmul"})


def _with_complex(name: str, kinds: str) -> str:
    return kinds + "c" if name in COMPLEX_OPS else kinds


def _unary(name, fn, kinds, out_dtype=None):
    kinds = _with_complex(name, kinds)
    parts = name == "abs"      # abs of a complex value is real: the dtype of its parts

    def rule(avals):
        (a,) = avals
        _check_kinds(name, a.dtype, kinds)
        return Aval(a.shape, out_dtype or (dt.real_dtype(a.dtype) if parts else a.dtype))

    def oracle(xs):
        (x,) = xs
        r = np.asarray(fn(x))
        if out_dtype:
            return r.astype(_np(out_dtype))
        return r.astype(dt.real_dtype(dt.as_dtype(x.dtype)).np if parts else x.dtype, copy=False)

    _register(name, "elementwise", rule, oracle, arity=1)


for _n, _f in UNARY_FLOAT.items():
    _unary(_n, _f, "f")
for _n, _f in UNARY_NUMERIC.items():
    _unary(_n, _f, "iuf")
for _n, _f in UNARY_PREDICATE.items():
    _unary(_n, _f, "f", dt.bool_)
for _n, _f in UNARY_BITS.items():
    _unary(_n, _f, "biu")
for _n, _f in UNARY_BOOL.items():
    _unary(_n, _f, "b")


def _binary(name, fn, kinds, out_dtype=None):
    kinds = _with_complex(name, kinds)

    def rule(avals):
        a, b = avals
        if a.dtype is not b.dtype:
            raise DTypeError(f"{name}: operands must share a dtype, got {a.dtype.name} and {b.dtype.name}")
        _check_kinds(name, a.dtype, kinds)
        return Aval(broadcast_shapes(a.shape, b.shape, op=name), out_dtype or a.dtype)

    def oracle(xs):
        x, y = xs
        r = np.asarray(fn(x, y))
        return r.astype(_np(out_dtype) if out_dtype else x.dtype, copy=False)

    _register(name, "elementwise", rule, oracle, arity=2)


for _n, _f in BINARY_ARITH.items():
    _binary(_n, _f, "iuf")
for _n, _f in BINARY_ANY.items():
    _binary(_n, _f, "biuf")
for _n, _f in BINARY_FLOAT.items():
    _binary(_n, _f, "f")
for _n, _f in BINARY_COMPARE.items():
    _binary(_n, _f, "biuf", dt.bool_)
for _n, _f in BINARY_BITS.items():
    _binary(_n, _f, "biu")
for _n, _f in BINARY_SHIFT.items():
    _binary(_n, _f, "iu")


def _select_rule(avals):
    c, a, b = avals
    if c.dtype is not dt.bool_:
        raise DTypeError(f"select: the condition must be bool, got {c.dtype.name}")
    if a.dtype is not b.dtype:
        raise DTypeError(f"select: branches must share a dtype, got {a.dtype.name} and {b.dtype.name}")
    return Aval(broadcast_shapes(c.shape, a.shape, b.shape, op="where"), a.dtype)


_register("select", "elementwise", _select_rule, lambda xs: np.where(*xs), arity=3)


def _convert_rule(avals, dtype):
    return Aval(avals[0].shape, dtype)


def _float_to_int(x, target: np.dtype):
    """Float -> int as every compiled device casts (the kernel language's rule): truncate toward zero,
    saturate at the integer type's bounds, NaN gives 0. NumPy's own cast of an out-of-range value is
    platform-dependent (INT_MIN on x86), so the reference does not use it for those values."""
    info = np.iinfo(target)
    t = np.trunc(np.asarray(x, dtype=np.float64))
    high, low = t >= float(info.max), t <= float(info.min)
    inside = np.where(high | low | np.isnan(t), 0.0, t).astype(target)
    return np.where(high, target.type(info.max), np.where(low, target.type(info.min), inside)).astype(target)


def _convert_oracle(xs, dtype):
    x, target = xs[0], np.dtype(_np(dtype))
    if target.kind in "iu" and (x.dtype.kind == "f" or x.dtype.name == "bfloat16"):
        return _float_to_int(x, target)
    with np.errstate(all="ignore"):
        return x.astype(target)


_register("convert", "elementwise", _convert_rule, _convert_oracle, arity=1, params=("dtype",))


def _bitcast_rule(avals, dtype):
    (a,) = avals
    if a.dtype.kind == "c" and dtype is dt.real_dtype(a.dtype):   # the parts, on a last axis of 2
        return Aval(a.shape + (2,), dtype)
    if dtype.kind == "c" and a.dtype is dt.real_dtype(dtype):
        if a.shape[-1:] != (2,):
            raise ShapeError(f"bitcast to {dtype.name}: the parts need a last axis of 2, got {a.shape}")
        return Aval(a.shape[:-1], dtype)
    if (a.dtype.bits != dtype.bits or a.dtype is dt.bool_ or dtype is dt.bool_
            or "c" in (a.dtype.kind, dtype.kind)):
        raise DTypeError(f"bitcast: {a.dtype.name} and {dtype.name} differ in width")
    return Aval(a.shape, dtype)


def _bitcast_oracle(xs, dtype):
    x = xs[0]
    if "c" in (x.dtype.kind, _np(dtype).kind):    # the oracle reshapes the flat view to the aval
        return np.ascontiguousarray(x).reshape(-1).view(_np(dtype))
    return x.view(_np(dtype))


_register("bitcast", "elementwise", _bitcast_rule, _bitcast_oracle, arity=1, params=("dtype",))


# --- sources -------------------------------------------------------------------------------------
def _full_rule(avals, shape, value, dtype):
    return Aval(tuple(shape), dtype)


_register("full", "source", _full_rule,
          lambda xs, shape, value, dtype: np.full(shape, value, dtype=_np(dtype)), arity=0,
          params=("shape", "value", "dtype"))


def _iota_rule(avals, shape, axis, dtype):
    if not 0 <= axis < len(shape):
        raise ShapeError(f"iota: axis {axis} out of range for shape {shape}")
    return Aval(tuple(shape), dtype)


def _iota_oracle(xs, shape, axis, dtype):
    r = np.arange(shape[axis], dtype=_np(dtype)).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(r, shape).copy()


_register("iota", "source", _iota_rule, _iota_oracle, arity=0, params=("shape", "axis", "dtype"))


# --- reductions and scans -----------------------------------------------------------------------
REDUCE = {"reduce_sum": (np.sum, "biuf"), "reduce_prod": (np.prod, "biuf"),
          "reduce_max": (np.max, "biuf"), "reduce_min": (np.min, "biuf")}


def _reduce(name, fn, kinds):
    kinds = _with_complex(name, kinds)

    def rule(avals, axes):
        (a,) = avals
        _check_kinds(name, a.dtype, kinds)
        if any(not 0 <= ax < a.ndim for ax in axes):
            raise ShapeError(f"{name}: axes {axes} out of range for {a.ndim}-d input")
        if name in ("reduce_max", "reduce_min") and any(a.shape[ax] == 0 for ax in axes):
            raise ShapeError(f"{name.split('_')[1]}: zero-size reduction over axes {axes} of shape "
                             f"{a.shape} has no identity")
        return Aval(tuple(1 if i in axes else d for i, d in enumerate(a.shape)), a.dtype)

    def oracle(xs, axes):
        return np.asarray(fn(xs[0], axis=axes, keepdims=True)).astype(xs[0].dtype, copy=False)

    _register(name, "reduce", rule, oracle, arity=1, params=("axes",))


for _n, (_f, _k) in REDUCE.items():
    _reduce(_n, _f, _k)


def _argreduce(name, fn):
    def rule(avals, axis):
        (a,) = avals
        if not 0 <= axis < a.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for {a.ndim}-d input")
        if a.shape[axis] == 0:
            raise ShapeError(f"{name}: attempt to get {name} of an empty sequence (axis {axis} of {a.shape})")
        return Aval(tuple(1 if i == axis else d for i, d in enumerate(a.shape)), dt.int64)

    _register(name, "argreduce", rule,
              lambda xs, axis: fn(xs[0], axis=axis, keepdims=True).astype(np.int64), arity=1, params=("axis",))


_argreduce("argmax", np.argmax)
_argreduce("argmin", np.argmin)


def _scan(name, fn):
    kinds = _with_complex(name, "iuf")

    def rule(avals, axis):
        (a,) = avals
        _check_kinds(name, a.dtype, kinds)
        if not 0 <= axis < a.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for {a.ndim}-d input")
        return a

    _register(name, "scan", rule, lambda xs, axis: fn(xs[0], axis=axis).astype(xs[0].dtype, copy=False),
              arity=1, params=("axis",))


_scan("cumsum", np.cumsum)
_scan("cumprod", np.cumprod)


# --- movement ------------------------------------------------------------------------------------
def _reshape_rule(avals, shape):
    (a,) = avals
    if math.prod(shape) != a.size:
        raise ShapeError(f"reshape: cannot reshape {a.shape} ({a.size} elements) into {tuple(shape)}")
    return Aval(tuple(shape), a.dtype)


_register("reshape", "movement", _reshape_rule, lambda xs, shape: xs[0].reshape(shape), arity=1,
          params=("shape",))


def _broadcast_rule(avals, shape):
    (a,) = avals
    if broadcast_shapes(a.shape, shape, op="broadcast_to") != tuple(shape):
        raise ShapeError(f"broadcast_to: cannot broadcast {a.shape} to {tuple(shape)}")
    return Aval(tuple(shape), a.dtype)


_register("broadcast", "movement", _broadcast_rule,
          lambda xs, shape: np.broadcast_to(xs[0], shape).copy(), arity=1, params=("shape",))


def _transpose_rule(avals, perm):
    (a,) = avals
    if sorted(perm) != list(range(a.ndim)):
        raise ShapeError(f"transpose: {perm} is not a permutation of the {a.ndim} axes of {a.shape}")
    return Aval(tuple(a.shape[p] for p in perm), a.dtype)


_register("transpose", "movement", _transpose_rule, lambda xs, perm: np.transpose(xs[0], perm).copy(),
          arity=1, params=("perm",))


def _slice_rule(avals, starts, steps, sizes):
    (a,) = avals
    if not len(starts) == len(steps) == len(sizes) == a.ndim:
        raise ShapeError(f"slice: needs one (start, step, size) per axis of {a.shape}")
    for ax, (n, s, st, k) in enumerate(zip(a.shape, starts, steps, sizes)):
        if st == 0 or k < 0 or (k > 0 and not (0 <= s < n and 0 <= s + (k - 1) * st < n)):
            raise PootIndexError(f"slice: axis {ax} of size {n}: start {s}, step {st}, size {k} out of range")
    return Aval(tuple(sizes), a.dtype)


def _slice_index(starts, steps, sizes):
    return tuple(slice(s, s + k * st if s + k * st >= 0 else None, st) if k else slice(0, 0)
                 for s, st, k in zip(starts, steps, sizes))


_register("slice", "movement", _slice_rule,
          lambda xs, starts, steps, sizes: xs[0][_slice_index(starts, steps, sizes)].copy(), arity=1,
          params=("starts", "steps", "sizes"))


def _pad_rule(avals, widths, value):
    (a,) = avals
    if len(widths) != a.ndim or any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ShapeError(f"pad: widths {widths} do not fit {a.shape} (one non-negative pair per axis)")
    return Aval(tuple(d + lo + hi for d, (lo, hi) in zip(a.shape, widths)), a.dtype)


# pad and concatenate cost a select per element: the read is clamped and the result picked
_register("pad", "movement", _pad_rule,
          lambda xs, widths, value: np.pad(xs[0], widths, constant_values=value), arity=1,
          params=("widths", "value"), cost=1)


def _concat_rule(avals, axis):
    a0 = avals[0]
    for a in avals[1:]:
        if a.dtype is not a0.dtype:
            raise DTypeError(f"concatenate: dtypes differ ({a0.dtype.name} and {a.dtype.name})")
        if a.ndim != a0.ndim or any(x != y for i, (x, y) in enumerate(zip(a.shape, a0.shape)) if i != axis):
            raise ShapeError(f"concatenate: shapes {a0.shape} and {a.shape} differ outside axis {axis}")
    if not 0 <= axis < a0.ndim:
        raise ShapeError(f"concatenate: axis {axis} out of range for {a0.ndim}-d inputs")
    shape = list(a0.shape)
    shape[axis] = sum(a.shape[axis] for a in avals)
    return Aval(tuple(shape), a0.dtype)


_register("concatenate", "movement", _concat_rule, lambda xs, axis: np.concatenate(xs, axis=axis),
          arity=None, params=("axis",), cost=1)


# --- indexing ------------------------------------------------------------------------------------
def _take_rule(avals, axis):
    a, idx = avals
    if not dt.is_int(idx.dtype):
        raise DTypeError(f"take: indices must be integers, got {idx.dtype.name}")
    if not 0 <= axis < a.ndim:
        raise ShapeError(f"take: axis {axis} out of range for {a.ndim}-d input")
    return Aval(a.shape[:axis] + idx.shape + a.shape[axis + 1:], a.dtype)


_register("take", "index", _take_rule, lambda xs, axis: np.take(xs[0], xs[1], axis=axis), arity=2,
          params=("axis",), fusion=Fusion.GATHER)


def _scatter_rule(avals, mode):
    a, idx, upd = avals
    if not dt.is_int(idx.dtype):
        raise DTypeError(f"scatter: indices must be integers, got {idx.dtype.name}")
    if upd.dtype is not a.dtype:
        raise DTypeError(f"scatter: updates are {upd.dtype.name}, the target is {a.dtype.name}")
    if a.ndim == 0 or upd.shape != idx.shape + a.shape[1:]:
        raise ShapeError(f"scatter: updates of shape {upd.shape} do not match indices {idx.shape} "
                         f"into {a.shape}")
    if mode not in ("set", "add"):
        raise ShapeError(f"scatter: unknown mode {mode!r}")
    return a


def _scatter_oracle(xs, mode):
    x, idx, upd = xs
    out = x.copy()
    if mode == "set":
        out[idx] = upd
    else:
        np.add.at(out, idx, upd)
    return out


_register("scatter", "index", _scatter_rule, _scatter_oracle, arity=3, params=("mode",),
          fusion=Fusion.SCATTER)


def _update_slice_rule(avals, starts, steps, sizes):
    a, v = avals
    _slice_rule([a], starts, steps, sizes)
    if v.shape != tuple(sizes) or v.dtype is not a.dtype:
        raise ShapeError(f"update_slice: value {v} does not match the slice {tuple(sizes)} of {a}")
    return a


def _update_slice_oracle(xs, starts, steps, sizes):
    out = xs[0].copy()
    out[_slice_index(starts, steps, sizes)] = xs[1]
    return out


_register("update_slice", "index", _update_slice_rule, _update_slice_oracle, arity=2,
          params=("starts", "steps", "sizes"), fusion=Fusion.GATHER)


# --- contraction ---------------------------------------------------------------------------------
def _matmul_rule(avals):
    a, b = avals
    if a.dtype is not b.dtype:
        raise DTypeError(f"matmul: operands must share a dtype, got {a.dtype.name} and {b.dtype.name}")
    _check_kinds("matmul", a.dtype, "iufc")
    if a.ndim < 2 or b.ndim < 2:
        raise ShapeError(f"matmul: operands need 2 or more dimensions, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape} "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    return Aval(batch + (a.shape[-2], b.shape[-1]), a.dtype)


def _matmul_oracle(xs):
    a, b = xs
    if a.dtype in (np.float16, dt.bfloat16.np):  # accumulate in float32 as every device does
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return np.matmul(a, b)


_register("matmul", "contraction", _matmul_rule, _matmul_oracle, arity=2)
