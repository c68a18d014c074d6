"""NumPy interop: NumPy functions and ufuncs called on poot Arrays stay lazy and return poot Arrays.

`np.exp(x)`, `np.add(x, y)`, `np.maximum.reduce(x)`, `np.sum(x, axis=0)`, `np.concatenate([x, y])`,
`np.where(c, x, y)`, `x_numpy @ x_poot`, `np.linalg.norm(x)`, `np.fft.rfft(x)` (NumPy's linalg and fft
functions that `pt.linalg` and `pt.fft` have, called with arguments they take)... dispatch to poot's own
functions. A NumPy function or ufunc
poot does not implement (or one called with arguments poot does not take, such as `out=` into a NumPy
array) falls back to NumPy: the poot arguments are realized and NumPy's result, a NumPy array, is
returned. Inside @poot.jit that fallback raises TracerError instead (nothing can be realized there).
"""
from __future__ import annotations

import inspect
import sys

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError


def _poot():
    import poot

    return poot


def _to_numpy(obj):
    from poot.trace.array import Array

    if isinstance(obj, Array):
        return obj.numpy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    return obj


def _fallback(fn, args, kwargs):
    return fn(*_to_numpy(args), **_to_numpy(kwargs))


# ufunc name -> poot function name
_UFUNCS = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
    "true_divide": "divide", "floor_divide": "floor_divide", "remainder": "remainder",
    "power": "power", "float_power": "float_power", "negative": "negative", "positive": "positive",
    "absolute": "abs", "sign": "sign", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "square": "square",
    "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "arcsin",
    "arccos": "arccos", "arctan": "arctan", "arctan2": "arctan2", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "arcsinh": "arcsinh", "arccosh": "arccosh", "arctanh": "arctanh",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "rint", "maximum": "maximum",
    "minimum": "minimum", "fmax": "fmax", "fmin": "fmin", "isnan": "isnan", "isinf": "isinf",
    "isfinite": "isfinite", "logaddexp": "logaddexp", "hypot": "hypot", "copysign": "copysign",
    "nextafter": "nextafter", "signbit": "signbit", "deg2rad": "deg2rad", "rad2deg": "rad2deg",
    "radians": "deg2rad", "degrees": "rad2deg", "equal": "equal", "not_equal": "not_equal",
    "less": "less", "less_equal": "less_equal", "greater": "greater",
    "greater_equal": "greater_equal", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_xor": "logical_xor", "logical_not": "logical_not", "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "invert": "bitwise_not",
    "bitwise_not": "bitwise_not", "left_shift": "left_shift", "right_shift": "right_shift",
    "matmul": "matmul", "vecdot": "vecdot", "conjugate": "conj", "conj": "conj",
    "bitwise_count": "bitwise_count",
    # poot functions (not Ufunc objects): the call is lazy and traceable, the methods fall back
    "cbrt": "cbrt", "fabs": "fabs", "fmod": "fmod", "frexp": "frexp", "modf": "modf", "ldexp": "ldexp",
    "gcd": "gcd", "lcm": "lcm", "heaviside": "heaviside", "logaddexp2": "logaddexp2",
    "spacing": "spacing", "matvec": "matvec", "vecmat": "vecmat",
}
_UNHANDLED = object()
_METHOD_ARGS = {"outer": 2, "reduce": 1, "accumulate": 1, "at": (2, 3), "reduceat": 2}


def _ufunc_method(pt, name, method, inputs, kwargs):
    """`np.add.outer(x, y)`, `np.maximum.reduce(x)`, `np.add.at(x, i, v)`, `np.add.reduceat(x, i)`,
    `np.negative.at(x, i)`... on poot arrays: the method of poot's own ufunc (poot/trace/ufunc.py),
    lazily. _UNHANDLED where poot has no such ufunc or does not build the call (then NumPy's
    fallback answers, except for `at`, which must update a poot array in place)."""
    from poot.errors import NotBuiltError
    from poot.trace.array import Array
    from poot.trace.ufunc import Ufunc

    target = getattr(pt, _UFUNCS.get(name) or "", None)
    count = _METHOD_ARGS[method]
    counts = count if isinstance(count, tuple) else (count,)
    if method == "at" and isinstance(inputs[0], Array):
        if not isinstance(target, Ufunc) or kwargs or len(inputs) not in counts:
            raise DTypeError(f"np.{name}.at on a poot array is not supported (poot has no ufunc "
                             f"{name}, or it takes no keyword arguments)")
        return target.at(*inputs)
    if not isinstance(target, Ufunc) or len(inputs) not in counts or method == "at":
        return _UNHANDLED
    try:
        return getattr(target, method)(*inputs, **kwargs)
    except (NotBuiltError, TypeError) as e:
        if isinstance(e, DTypeError):
            raise
        return _UNHANDLED


def _defers_to(values, array_type) -> bool:
    """NumPy's override protocol (NEP 13): an operand of another array library with its own
    `__array_ufunc__` (a Dask array, which registers poot arrays as its chunks) is higher in the
    hierarchy, so poot returns NotImplemented and lets it answer, instead of reading it to the host."""
    return any(hasattr(type(v), "__array_ufunc__") and not isinstance(v, (array_type, np.ndarray, np.generic))
               for v in values)


def _ufunc_in_dtype(pt, target: str, inputs, kwargs):
    """`np.add(x, y, dtype=d, casting=...)` on poot arrays, lazily (Dask adds partial sums so): poot's
    ufunc takes NumPy's call keywords (ufunc_methods.call_with_keywords: the inputs converted to `d`
    under `casting`, a comparison's dtype=bool being its result's). None where `d` is no poot dtype:
    NumPy's fallback answers those."""
    from poot.trace.array import Array
    from poot.trace.ufunc import Ufunc

    fn = getattr(pt, target)
    d = kwargs.get("dtype")
    if d is not None:
        try:
            d = dt.as_dtype(d)
        except DTypeError:
            return None
    if isinstance(fn, Ufunc):
        return fn(*inputs, **kwargs)
    if set(kwargs) != {"dtype"} or d is None or d.kind == "b":    # a plain function (cbrt, fabs...)
        return None
    result = fn(*[x.astype(d) if isinstance(x, Array) else x for x in inputs])
    return result if result.dtype is d else None


_CALL_KEYWORDS = frozenset({"dtype", "casting", "order", "subok"})   # what poot's ufunc calls take

# NumPy's arithmetic ufuncs -> the Array dunders that compute them (plain, reflected)
_ARITHMETIC = {np.add: ("__add__", "__radd__"), np.subtract: ("__sub__", "__rsub__"),
               np.multiply: ("__mul__", "__rmul__"), np.true_divide: ("__truediv__", "__rtruediv__"),
               np.power: ("__pow__", "__rpow__")}


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc in _ARITHMETIC:
        # `np.sqrt(n) * x`: NumPy's scalar hands the operator here; the Array's dunder computes it, on
        # its fast path where the scalar has x's dtype, instead of the ufunc's general dispatch
        a, b = inputs
        if type(b) is type(self) and isinstance(a, np.generic):
            return getattr(b, _ARITHMETIC[ufunc][1])(a)
        if type(a) is type(self) and isinstance(b, np.generic):
            return getattr(a, _ARITHMETIC[ufunc][0])(b)
    pt = _poot()
    from poot.trace.array import Array

    if _defers_to(inputs, Array):
        return NotImplemented
    if method == "at" and inputs and isinstance(inputs[0], Array) \
            and _is_temporary("ufunc.at", sys.getrefcount(inputs[0]), inputs[0], _probe_at):
        _ufunc_method(pt, ufunc.__name__, method, inputs, kwargs)      # its other errors first
        _refuse(f"np.{ufunc.__name__}.at")
    out = kwargs.get("out")
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if any(isinstance(o, Array) for o in outs):
            rest = {k: v for k, v in kwargs.items() if k != "out"}
            raise _out_error(f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"), out,
                             lambda: array_ufunc(self, ufunc, method, *inputs, **rest),
                             "same_kind" if method in ("__call__", "outer") else "unsafe")
        return _fallback(getattr(ufunc, method), inputs, kwargs)
    name = ufunc.__name__
    if method == "__call__" and name == "divmod" and not kwargs:
        return pt.floor_divide(*inputs), pt.remainder(*inputs)
    if method == "__call__" and _UFUNCS.get(name) and kwargs and set(kwargs) <= _CALL_KEYWORDS:
        result = _ufunc_in_dtype(pt, _UFUNCS[name], inputs, kwargs)
        if result is not None:
            return result
    if method == "__call__" and name in _UFUNCS and not kwargs:
        target = _UFUNCS[name]
        if target is None:  # conjugate of a real array
            return pt.asarray(inputs[0])
        return getattr(pt, target)(*inputs)
    if method in _METHOD_ARGS:
        result = _ufunc_method(pt, name, method, inputs, kwargs)
        if result is not _UNHANDLED:
            return result
    return _fallback(getattr(ufunc, method), inputs, kwargs)


# NumPy function name -> poot function name (same signature for what poot supports)
_FUNCTIONS = [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "any",
    "all", "cumsum", "cumprod", "count_nonzero", "reshape", "ravel", "transpose", "permute_dims",
    "matrix_transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
    "broadcast_arrays", "flip", "roll", "concatenate", "concat", "stack", "vstack", "hstack", "split",
    "array_split", "pad", "tile", "repeat", "atleast_1d", "atleast_2d", "where", "clip", "isclose",
    "allclose", "array_equal", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "diagonal",
    "trace", "take", "take_along_axis", "nonzero", "zeros_like", "ones_like", "full_like",
    "empty_like", "copy", "round", "around", "astype", "tril", "triu", "meshgrid", "result_type",
    # NumPy's functions beyond the standard (poot/trace/numpy_more.py, numpy_stats.py)
    "median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "nansum",
    "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin",
    # (not cov/corrcoef: scikit-learn's LDA adds np.cov(X) to a NumPy accumulator it made with np.zeros,
    # so those stay NumPy's, on a NumPy copy; pt.cov and pt.corrcoef are poot's)
    "nancumsum", "nancumprod", "diff", "isin", "convolve", "correlate", "interp",
    "column_stack", "dstack", "atleast_3d", "histogram", "bincount", "argwhere", "unique",
    # numpy_tail.py, numpy_poly.py, numpy_gradient.py, numpy_histdd.py, numpy_queries.py
    "insert", "delete", "resize", "rollaxis", "trim_zeros", "choose", "cumulative_prod", "i0",
    "gradient", "unwrap", "polyval", "polyder", "polyint", "polyadd", "polysub", "histogram2d",
    "histogramdd", "real_if_close", "array_equiv",
    # numpy_inplace.py: they change the poot array passed (NumPy's fallback would change a copy)
    "put", "put_along_axis", "putmask", "place", "copyto", "fill_diagonal",
    # the rest of poot's NumPy functions of arrays: lazy (and traceable) where NumPy's fallback would
    # read the array and hand back an ndarray (a Dask graph of poot chunks then mixes the two)
    "angle", "append", "argpartition", "argsort", "average", "block", "compress", "cross",
    "cumulative_sum", "diag", "diag_indices_from", "diagflat", "digitize", "dsplit", "ediff1d", "extract",
    "fix", "flatnonzero", "fliplr", "flipud", "histogram_bin_edges", "hsplit", "imag", "intersect1d",
    "iscomplex", "iscomplexobj", "isneginf", "isposinf", "isreal", "isrealobj", "kron", "lexsort",
    "nan_to_num", "packbits", "partition", "poly", "polydiv", "polyfit", "polymul", "ptp", "real",
    "roots", "rot90", "searchsorted", "select", "setdiff1d", "setxor1d", "sinc", "sort", "sort_complex",
    "trapezoid", "tril_indices_from", "triu_indices_from", "union1d", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "unpackbits", "unstack", "vander", "vsplit",
    # np.unravel_index(np.argmax(x), x.shape), np.linspace(x.min(), x.max(), n): traceable too
    "unravel_index", "ravel_multi_index", "linspace", "geomspace", "logspace", "piecewise", "ix_",
]


_INPLACE = {"put", "put_along_axis", "putmask", "place", "copyto", "fill_diagonal"}

# NumPy's own on concrete arrays (np.cov and np.corrcoef for the reason above; apply_along_axis and
# apply_over_axes because the user's function may need NumPy arrays), poot's twin inside @pt.jit,
# where NumPy's fallback cannot read a traced array and would only raise TracerError
_POOT_WHEN_TRACING = {"cov", "corrcoef", "apply_along_axis", "apply_over_axes"}


def _writes_into_numpy(args, kwargs) -> bool:
    """`np.copyto(nd, x)`, `np.put(nd, i, x)`...: the array written is the caller's ndarray, so NumPy
    writes it, reading the poot arguments (poot's versions rebind a poot array, and would refuse)."""
    dst = args[0] if args else next((kwargs[k] for k in ("dst", "a", "arr") if k in kwargs), None)
    return isinstance(dst, np.ndarray)


def _numpy_clip(pt, a, *bounds, **kwargs):
    """np.clip on poot arrays: NumPy promotes x with the bounds (pt.clip keeps x's dtype, as the
    array API standard says), so x is converted to that promotion first."""
    lo = kwargs.pop("min", kwargs.pop("a_min", bounds[0] if bounds else None))
    hi = kwargs.pop("max", kwargs.pop("a_max", bounds[1] if len(bounds) > 1 else None))
    x = pt.asarray(a)
    d = pt.result_type(x, *[b for b in (lo, hi) if b is not None])
    return pt.clip(x.astype(d, copy=False), lo, hi)


_LINALG_SIGNATURES: dict = {}


def _linalg_target(pt, name: str, args, kwargs, module: str = "linalg"):
    """`pt.linalg.<name>` for `np.linalg.<name>(*args, **kwargs)` on poot arrays (lazy, and traceable
    inside @pt.jit), where poot has that function and it takes these arguments; None otherwise, for
    NumPy's fallback (`np.linalg.eigh(a, UPLO="U")`, `matrix_rank(a, tol)`: NumPy's own parameters).
    `module="fft"` does the same for `np.fft.<name>` (`np.abs(np.fft.rfft(x))` stays lazy)."""
    target = getattr(getattr(pt, module), name, None)
    if not callable(target) or isinstance(target, type):
        return None
    sig = _LINALG_SIGNATURES.get((module, name))
    if sig is None:
        try:
            sig = _LINALG_SIGNATURES[(module, name)] = inspect.signature(target)
        except (TypeError, ValueError):
            return None
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return None
    return target


# NumPy's functions that cast their result to any out= dtype (reductions and scans: casting='unsafe');
# the others (clip, dot, round...) follow the ufuncs' same_kind rule
_ANY_OUT_DTYPE = {"sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "cumsum", "cumprod",
                  "median", "percentile", "quantile", "nansum", "nanprod", "nanmean", "nanvar", "nanstd",
                  "nanmax", "nanmin", "nancumsum", "nancumprod", "nanmedian", "nanpercentile",
                  "nanquantile", "cumulative_sum", "cumulative_prod", "any", "all", "argmax", "argmin",
                  "ptp", "trace"}


def _out_error(op: str, out, result, casting: str = "same_kind"):
    """errors.out_error for `op(..., out=<poot array>)`, against the lazy result `result()` gives
    without out= (where poot computes that call; else the shape and dtype are not compared)."""
    from poot.errors import PootError, out_error

    try:
        value = result()
    except (PootError, TypeError, ValueError):
        value = None
    return out_error(op, out, value, casting)


def _refuse_poot_out(self, func, types, args, kwargs) -> None:
    """`np.clip(x, 0, 1, out=x)`, `np.cumsum(x, out=x)`...: NumPy's fallback would write into a read-only
    copy of the poot array and fail with a bare ValueError; refuse it as the ufunc path does."""
    out = kwargs.get("out")
    outs = out if isinstance(out, tuple) else (out,)
    if any(isinstance(o, _array_type()) for o in outs):
        rest = {k: v for k, v in kwargs.items() if k != "out"}
        raise _out_error(f"np.{func.__name__}", out, lambda: array_function(self, func, types, args, rest),
                         "unsafe" if func.__name__ in _ANY_OUT_DTYPE else "same_kind")


def _is_temporary(site, count, target, call_with) -> bool:
    from poot.trace.lost_writes import is_temporary

    return is_temporary(site, count, target, call_with)


def _refuse(op):
    from poot.trace.lost_writes import refuse

    refuse(op)


# how many positional arguments after the array NumPy's dispatcher of each in-place function needs
_PROBE_ARGS = {"put": 2, "put_along_axis": 3, "putmask": 2, "place": 2, "copyto": 1, "fill_diagonal": 1}


def _probe_call(func, name, held):
    """np.<name>(<probe>, 0...) as a user calls it: the probe held by a name, or a temporary made in
    the call (lost_writes.py measures the two). Spelled out per argument count: a call with *args
    holds its arguments differently."""
    from poot.trace.lost_writes import probe

    n = _PROBE_ARGS[name]
    if held:
        p = probe()
        func(p, 0) if n == 1 else func(p, 0, 0) if n == 2 else func(p, 0, 0, 0)
    else:
        func(probe(), 0) if n == 1 else func(probe(), 0, 0) if n == 2 else func(probe(), 0, 0, 0)


def _probe_at(held):
    """np.add.at(<probe>, 0, 0), the probe held by a name or a temporary (lost_writes.py)."""
    from poot.trace.lost_writes import probe

    if held:
        p = probe()
        np.add.at(p, 0, 0)
    else:
        np.add.at(probe(), 0, 0)


# NumPy's creation functions that take `like=` (NEP 35): `np.asarray(data, like=x)` and
# `np.zeros(3, like=x)` call x's __array_function__ with the function and its other arguments, and
# the answer must be an array of x's kind (Dask builds its chunks' metadata this way, with
# `np.asarray(np.array([]), like=meta)`: a NumPy answer there turns a Dask array of poot chunks
# into one that claims NumPy chunks). These functions dispatch only through `like=`.
_LIKE_CREATION = {"array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
                  "zeros", "ones", "empty", "full", "arange", "eye", "identity", "tri", "fromfunction",
                  "frombuffer", "fromiter", "fromstring", "loadtxt", "genfromtxt"}

# NumPy's memory-layout keywords, which poot does not model: dropped where poot's function lacks them
_LAYOUT_KEYWORDS = {"order", "subok"}


def _like(pt, like, name, args, kwargs):
    """`np.<name>(*args, like=like, **kwargs)`: poot's function of that name, on `like`'s device
    (NumPy's `device=` keyword names only its CPU, so the like array's device decides)."""
    target = getattr(pt, name)
    params = inspect.signature(target).parameters
    kwargs = {k: v for k, v in kwargs.items()
              if k not in ("device", "like") and not (k in _LAYOUT_KEYWORDS and k not in params)}
    if "device" in params:
        kwargs["device"] = like.device
    out = target(*args, **kwargs)
    return out if out.device == like.device else out.to(like.device)


def _tracing() -> bool:
    from poot.trace.lazy import is_tracing

    return is_tracing()


def _array_type():
    from poot.trace.array import Array

    return Array


def array_function(self, func, types, args, kwargs):
    from poot.trace.array import Array

    if any(not issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented   # another array library that knows poot arrays (Dask) answers
    pt = _poot()
    name = func.__name__
    _refuse_poot_out(self, func, types, args, kwargs)
    if name in _LIKE_CREATION and func is getattr(np, name, None):
        return _like(pt, self, name, args, kwargs)
    if func is np.clip and kwargs.get("out") is None and len(args) <= 3:
        return _numpy_clip(pt, *args, **{k: v for k, v in kwargs.items() if k != "out"})
    if name in _INPLACE and _writes_into_numpy(args, kwargs):
        return _fallback(func, args, kwargs)
    if name in _INPLACE and args and isinstance(args[0], Array) and _is_temporary(
            f"np.{name}", sys.getrefcount(args[0]), args[0], lambda held: _probe_call(func, name, held)):
        getattr(pt, name)(*args, **kwargs)      # its other errors first
        _refuse(f"np.{name}")
    if name in _FUNCTIONS and func is getattr(np, name, None) and kwargs.get("out") is None:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        target = getattr(pt, name, None)
        if name == "trace":
            from poot.trace.linalg import trace as target
        if target is not None:
            return target(*args, **kwargs)
    if name in _POOT_WHEN_TRACING and func is getattr(np, name, None) and _tracing():
        return getattr(pt, name)(*args, **kwargs)
    if func is getattr(np.linalg, name, None) and kwargs.get("out") is None:
        target = _linalg_target(pt, name, args, kwargs)
        if target is not None:
            return target(*args, **kwargs)
    if func is getattr(np.fft, name, None) and kwargs.get("out") is None:
        target = _linalg_target(pt, name, args, kwargs, "fft")
        if target is not None:
            return target(*args, **kwargs)
    if func is np.lib.stride_tricks.sliding_window_view:     # numpy.lib's, poot's own under pt.lib
        return pt.lib.stride_tricks.sliding_window_view(*args, **kwargs)
    if name == "shape" and len(args) == 1:
        return args[0].shape
    if name in ("ndim", "size") and len(args) == 1:
        return getattr(args[0], name)
    return _fallback(func, args, kwargs)
