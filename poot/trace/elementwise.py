"""Elementwise functions with NumPy 2's dtype rules, recorded as graph primitives (or short
compositions of them). Every function broadcasts its operands NumPy-style."""
from __future__ import annotations

import math

import numpy as np

from poot import dtypes as dt
from poot.errors import DomainError, DTypeError, ShapeError, exporter
from poot.graph import broadcast_shapes
from poot.trace.array import Array
from poot.trace.lazy import Node, check_scalar_fits, constant, record, shared_constant
from poot.trace.promote import _WEAK_SAMPLE, cast, finish, float_of, promote, require, wrap

__all__: list[str] = []


_export = exporter(globals(), __all__)


def _check_broadcast(name, items):
    """Broadcast the operands' shapes; a ShapeError names them as the user passed them."""
    shapes = [it.aval.shape if isinstance(it, Node) else () for it in items]
    try:
        return broadcast_shapes(*shapes, op=name)
    except ShapeError as e:
        raise ShapeError(f"{e}; operands are "
                         + ", ".join(str(it.aval) if isinstance(it, Node) else repr(it) for it in items)
                         + ". Shapes broadcast when trailing dimensions are equal or 1: reshape one "
                         "operand or add an axis, e.g. x[:, None]") from None


def _unary_node(name, x):
    items, d, dev = promote(name, (x,))
    return finish(name, items, d, dev)[0], d


# --- unary -------------------------------------------------------------------------------------
_UNARY_FLOAT = {  # public name -> primitive; ints and bools compute in NumPy's float (int8 -> float16)
    "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
    "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "erf": "erf", "rint": "round",
}


def _make_unary_float(name, prim):
    def fn(x):
        n, d = _unary_node(name, x)
        if d.kind == "c" and prim == "round":                 # rint: each part rounded, as NumPy
            from poot.trace.complex_order import round_parts

            return round_parts(Array(n), 0)
        r = record(prim, (cast(n, float_of(d)),))
        # np.sin(0.5) is a float64 NumPy scalar, not a Python float: of a traced Python scalar (weak)
        # the result is strong too, so `f32_array + pt.sin(t)` is float64 under @pt.jit as eagerly
        r.weak = 0
        return wrap(r)

    return _export(name, fn, f"Elementwise {name}; integer and bool inputs compute in floating point "
                             f"(int8 -> float16, int16 -> float32, wider -> float64), as NumPy does.")


for _name, _prim in _UNARY_FLOAT.items():
    _make_unary_float(_name, _prim)
for _alias, _name in {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                      "acosh": "arccosh", "atanh": "arctanh"}.items():
    globals()[_alias] = globals()[_name]
    __all__.append(_alias)


def _make_int_identity(name, prim):
    def fn(x):
        n, d = _unary_node(name, x)
        return wrap(n if d.kind in "biu" else record(prim, (n,)))

    return _export(name, fn, f"Elementwise {name}; integers and bools are returned unchanged.")


for _name in ("floor", "ceil", "trunc"):
    _make_int_identity(_name, _name)


def _make_numeric(name, prim):
    def fn(x):
        n, d = _unary_node(name, x)
        require(name, d, "iufc", "convert bools first, e.g. x.astype(poot.int8)")
        return wrap(record(prim, (n,)))

    return _export(name, fn, f"Elementwise {name} (not defined for bool, as in NumPy).")


_make_numeric("negative", "neg")
_make_numeric("sign", "sign")


def _positive(x):
    n, d = _unary_node("positive", x)
    require("positive", d, "iufc")
    return wrap(n)


def _abs(x):
    n, d = _unary_node("abs", x)
    return wrap(n if d.kind == "b" else record("abs", (n,)))


_export("positive", _positive, "Elementwise +x (a new handle on the same value).")
_export("abs", _abs, "Elementwise absolute value (bools unchanged; abs(int8 -128) wraps as in NumPy).")
absolute = abs  # noqa: F821 (defined by _export)
__all__.append("absolute")


def _make_predicate(name, prim, for_ints):
    def fn(x):
        n, d = _unary_node(name, x)
        if d.kind not in "fc":
            return wrap(constant(for_ints, dt.bool_, n.device, n.aval.shape))
        return wrap(record(prim, (n,)))

    return _export(name, fn, f"Elementwise {name} -> bool (always {for_ints} for integers).")


_make_predicate("isnan", "isnan", False)
_make_predicate("isinf", "isinf", False)
_make_predicate("isfinite", "isfinite", True)


def _invert(x):
    n, d = _unary_node("bitwise_not", x)
    require("bitwise_not", d, "biu")
    return wrap(record("bitwise_not", (n,)))


def _logical_not(x):
    n, d = _unary_node("logical_not", x)
    return wrap(record("logical_not", (cast(n, dt.bool_),)))


_export("bitwise_not", _invert, "Elementwise ~x for integers; logical not for bools.")
invert = bitwise_invert = bitwise_not  # noqa: F821
__all__ += ["invert", "bitwise_invert"]
_export("logical_not", _logical_not, "Elementwise logical not (any dtype; nonzero is True).")


def _square(x):
    n, d = _unary_node("square", x)
    if d.kind == "b":
        n = cast(n, dt.int8)
    return wrap(record("mul", (n, n)))


def _reciprocal(x):
    n, d = _unary_node("reciprocal", x)
    if d.kind == "b":
        n, d = cast(n, dt.int8), dt.int8
    if d.kind in "fc":
        return wrap(record("div", (constant(1, d, n.device), n)))
    one = constant(1, d, n.device)
    is_unit = record("eq", (n, one))
    if d.kind == "i":
        is_unit = record("or", (is_unit, record("eq", (n, constant(-1, d, n.device)))))
    return wrap(record("select", (is_unit, n, constant(0, d, n.device))))


def _exp2(x):
    n, d = _unary_node("exp2", x)
    if d.kind == "c":
        return _complex_exp2(n)
    f = float_of(d)
    return wrap(record("pow", (constant(2.0, f, n.device), cast(n, f))))


def _complex_exp2(n):
    """exp(z ln 2) with z's parts scaled as reals, as NumPy does: 2 ** z by the complex power would
    multiply by ln 2 + 0j, and inf * 0 makes exp2(inf + 0j) inf + nan j instead of inf."""
    from poot.trace.complex_values import from_parts, parts

    p = parts(Array(n)) * math.log(2.0)
    z = from_parts(p[..., 0], p[..., 1])._node
    return wrap(record("exp", (z,)))


def _scale_by(name, factor):
    def fn(x):
        n, d = _unary_node(name, x)
        f = float_of(d)
        return wrap(record("mul", (cast(n, f), constant(factor, f, n.device))))

    return fn


def _signbit(x):
    n, d = _unary_node("signbit", x)
    if d.kind == "b":
        return wrap(constant(False, dt.bool_, n.device, n.aval.shape))
    if d.kind in "iu":
        return wrap(record("lt", (n, constant(0, d, n.device))))
    sign = record("copysign", (constant(1.0, d, n.device), n))
    return wrap(record("lt", (sign, constant(0.0, d, n.device))))


_export("square", _square, "Elementwise x * x (bool computes in int8, as in NumPy).")
_export("reciprocal", _reciprocal, "Elementwise 1 / x (integer division for integers, as in NumPy).")
_export("exp2", _exp2, "Elementwise 2 ** x in floating point.")
_export("deg2rad", _scale_by("deg2rad", math.pi / 180), "Degrees to radians.")
_export("rad2deg", _scale_by("rad2deg", 180 / math.pi), "Radians to degrees.")
radians, degrees = deg2rad, rad2deg  # noqa: F821
__all__ += ["radians", "degrees"]
_export("signbit", _signbit, "Elementwise: is the sign bit set (True for -0.0)?")


def _power_of_ten(n: int) -> float:
    """10.0 ** n as NumPy's round computes it (power_of_ten in its calculation.c): exact up to 1e8, then
    multiplied by 10 once per further digit, so past 1e22 it is NumPy's double, not the correctly
    rounded one, and past 1e308 it is inf (round then gives NaN, as NumPy's) where ** would raise."""
    if n < 9:
        return 10.0 ** n
    r = 1e9
    for _ in range(n - 9):
        r *= 10.0
        if r == math.inf:
            break
    return r


def _round(x, decimals=0):
    """NumPy's algorithm (PyArray_Round): scale by 10**|decimals|, rint, unscale; integers with
    negative decimals compute in float64 and cast back to their own dtype. `decimals` must be a
    Python int (it shapes the graph), so the scale is computed here, never as an array; a 0-d integer
    array (NumPy's or poot's) is read as one, as NumPy does (inside a trace: TracerError)."""
    if isinstance(decimals, (np.ndarray, Array)) and decimals.ndim == 0 and decimals.dtype.kind in "iu":
        decimals = int(decimals)
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise DTypeError(f"round: decimals must be an integer, got {decimals!r}")
    decimals = int(decimals)
    n, d = _unary_node("round", x)
    if d.kind == "c":
        from poot.trace.complex_order import round_parts     # each part rounded, as NumPy

        return round_parts(Array(n), decimals)
    if d.kind in "iu" and decimals >= 0:
        return wrap(n)
    if d.kind == "b" and decimals != 0:
        raise DTypeError(f"round: decimals={decimals} of a bool array would store a float result "
                         f"in bool (NumPy refuses it too); convert with .astype(float) first")
    f = dt.float64 if d.kind in "iu" else float_of(d)
    n = cast(n, f)
    if decimals == 0:
        return wrap(record("round", (n,)))
    scale = constant(_power_of_ten(decimals if decimals > 0 else -decimals), f, n.device)
    if decimals > 0:
        r = record("div", (record("round", (record("mul", (n, scale)),)), scale))
    else:
        r = record("mul", (record("round", (record("div", (n, scale)),)), scale))
    if d.kind in "iu":       # through the 64-bit integer, so a small integer type wraps as NumPy's
        wide = dt.int64 if d.kind == "i" else dt.uint64     # result does (int8 127 at -1: -126)
        r = cast(cast(r, wide), d) if d is not wide else cast(r, d)
    return wrap(r)


_export("round", _round, "Round half to even to `decimals` places (NumPy's algorithm: scale, rint, "
                         "unscale); integers are returned unchanged for decimals >= 0.")
around = round  # noqa: F821
__all__.append("around")


# --- binary ------------------------------------------------------------------------------------
def _binary_nodes(name, a, b, compute=None):
    ta, tb = type(a), type(b)
    if ta is Array and (tb is Array or tb is float or tb is int):  # the common cases, kept lean
        na = a._node
        da = na.aval.dtype
        if tb is Array:
            nb = b._node
            if nb.aval.dtype is da and nb.device == na.device:
                if nb.aval.shape != na.aval.shape:
                    _check_broadcast(name, (na, nb))
                c = compute(da) if compute else da
                return ([na, nb] if c is da else [cast(na, c), cast(nb, c)]), da
        else:
            d = dt.promote_with_scalar(da, b)
            c = compute(d) if compute else d
            check_scalar_fits(b, c, name)
            return [cast(na, c), shared_constant(b, c, na.device)], d
    items, d, dev = promote(name, (a, b))
    _check_broadcast(name, items)
    c = compute(d) if compute else d
    return finish(name, items, c, dev), d


def _make_arith(name, prim, bool_prim):
    def fn(x1, x2):
        (a, b), d = _binary_nodes(name, x1, x2)
        if d.kind == "b":
            if bool_prim is None:
                raise DTypeError(f"{name} is not defined for bool operands (NumPy refuses it too); "
                                 f"use logical_xor / the ^ operator, or convert with .astype(int)")
            return wrap(record(bool_prim, (a, b)))
        return wrap(record(prim, (a, b)))

    return _export(name, fn, f"Elementwise {name} with NumPy 2 promotion.")


_make_arith("add", "add", "or")
_make_arith("subtract", "sub", None)
_make_arith("multiply", "mul", "and")


def _make_int8_for_bool(name, prim):
    def fn(x1, x2):
        (a, b), d = _binary_nodes(name, x1, x2, lambda d: dt.int8 if d.kind == "b" else d)
        return wrap(record(prim, (a, b)))

    return _export(name, fn, f"Elementwise {name} (bool operands compute in int8, as in NumPy).")


_make_int8_for_bool("floor_divide", "floordiv")
_make_int8_for_bool("remainder", "mod")


def _power(x1, x2):
    if type(x1) is Array and x1._node.aval.dtype.kind == "c" and type(x2) in (int, float) \
            and x2 == int(x2) and -100 < x2 < 100:    # NumPy multiplies: exact for x ** 2 (abs is pt.abs here)
        from poot.trace.complex_values import integer_power

        return integer_power(x1, int(x2))
    if type(x1) is Array and x1._node.aval.dtype.kind == "f" and type(x2) is float and x2 == 0.5:
        r = sqrt(x1)  # noqa: F821  as NumPy computes it: power(-inf, 0.5) is nan, power(-0.0, 0.5) is -0.0
        r._node.weak = x1._node.weak & 1     # a traced Python scalar ** 0.5 is a Python float still
        return r
    (a, b), d = _binary_nodes("power", x1, x2, lambda d: dt.int8 if d.kind == "b" else d)
    if d.kind in "iu" and isinstance(x2, (int, np.integer)) and not isinstance(x2, bool) and x2 < 0:
        raise DomainError(f"power: integers to negative integer powers are not allowed (exponent {int(x2)}); "
                          "use a float base or pt.float_power")
    return wrap(record("pow", (a, b)))


_export("power", _power, "Elementwise power (bool operands compute in int8, as in NumPy; a complex "
                         "base to a small integer power multiplies, as NumPy does).")
mod, pow = remainder, power  # noqa: F821,A001
__all__ += ["mod", "pow"]


def _divide(x1, x2):
    (a, b), d = _binary_nodes("divide", x1, x2, lambda d: d if d.kind in "fc" else dt.float64)
    return wrap(record("div", (a, b)))


_export("divide", _divide, "Elementwise true division (integers and bools divide in float64).")
true_divide = divide  # noqa: F821
__all__.append("true_divide")


def _float_power(x1, x2):
    (a, b), d = _binary_nodes("float_power", x1, x2,
                              lambda d: dt.complex128 if d.kind == "c" else dt.float64)
    return wrap(record("pow", (a, b)))


_export("float_power", _float_power, "Elementwise power computed in float64.")


def _make_same(name, prim):
    def fn(x1, x2):
        (a, b), d = _binary_nodes(name, x1, x2)
        if d.kind == "c":       # lexicographic on (real, imaginary), as NumPy
            from poot.trace.complex_order import extreme

            return extreme(Array(a), Array(b), prim == "max")
        return wrap(record(prim, (a, b)))

    return _export(name, fn, f"Elementwise {name} (NaN propagates, as in NumPy; complex values "
                             f"compare by real part, then imaginary part).")


_make_same("maximum", "max")
_make_same("minimum", "min")


def _make_fmax(name, prim):
    def fn(x1, x2):
        (a, b), d = _binary_nodes(name, x1, x2)
        if d.kind == "c":       # lexicographic, a NaN part losing (NumPy's CGE/CLE rule)
            from poot.trace.complex_order import nan_skipping_extreme

            return nan_skipping_extreme(Array(a), Array(b), prim == "max")
        r = record(prim, (a, b))
        if d.kind == "f":
            r = record("select", (record("isnan", (b,)), a, r))
            r = record("select", (record("isnan", (a,)), b, r))
        return wrap(r)

    return _export(name, fn, f"Elementwise {name} ignoring NaN (NaN only when both are NaN).")


_make_fmax("fmax", "max")
_make_fmax("fmin", "min")


def float_pair(items, d, name):
    """NumPy's float type for a float-only binary function `name` of promoted `items` (promote's; `d`
    their dtype): the promotion of each strong operand's own float type (int8 with uint8 -> float16), and
    of the float type of the strong operands' dtype with each weak scalar (int8 with 2.5 -> float64, with
    2 -> float16; bool with 2 -> float64), as NumPy 2 picks the function's loop. Complex operands (a
    Python complex scalar included) have no loop: NumPy's TypeError, as a DTypeError naming `name`."""
    if d.kind == "c":
        kinds = ", ".join(type(it).__name__ if isinstance(it, (bool, int, float, complex)) else it.aval.dtype.name
                          for it in items)
        raise DTypeError(f"{name}: complex input is not supported (NumPy has no complex loop for it); got "
                         f"{kinds}")
    # a traced Python scalar (a jitted function's scalar argument: a Node of weak 1) is weak too
    weak = [it if isinstance(it, (bool, int, float)) else _WEAK_SAMPLE[it.aval.dtype.kind]
            for it in items if isinstance(it, (bool, int, float)) or it.weak == 1]
    raw = [it.aval.dtype for it in items if not isinstance(it, (bool, int, float)) and it.weak != 1]
    if not raw:
        return float_of(d)
    f = dt.result_type(*map(float_of, raw))
    joined = dt.result_type(*raw)
    for it in weak:
        f = dt.result_type(f, float_of(dt.promote_with_scalar(joined, it)))
    return f


def _make_float2(name, prim):
    def fn(x1, x2):
        items, d, dev = promote(name, (x1, x2))
        _check_broadcast(name, items)
        nodes = finish(name, items, float_pair(items, d, name), dev)
        return wrap(record(prim, tuple(nodes)))

    return _export(name, fn, f"Elementwise {name} in floating point (integers as NumPy promotes them).")


for _name, _prim in {"arctan2": "atan2", "hypot": "hypot", "logaddexp": "logaddexp",
                     "copysign": "copysign", "nextafter": "nextafter"}.items():
    _make_float2(_name, _prim)
atan2 = arctan2  # noqa: F821
__all__.append("atan2")


_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _outside_compare(prim, items, d, dev):
    """`x OP n` for an integer array x and a Python int n outside x's dtype: every element lies on
    the same side of n, so the answer is one bool everywhere (as NumPy 2 gives it). Converting n
    instead would round it onto the range's edge (2**63 as a float64 equals int64's largest value).
    None where no operand is such an int."""
    if d.kind not in "iu":
        return None
    info = dt.iinfo(d)
    for k, it in enumerate(items):
        if isinstance(it, int) and not isinstance(it, bool) and not info.min <= it <= info.max:
            other = items[1 - k]
            if not isinstance(other, Node):
                return None
            op = prim if k == 1 else _MIRRORED[prim]        # as `array OP n`
            below = it > info.max                            # every element is below n
            value = {"lt": below, "le": below, "gt": not below, "ge": not below, "eq": False,
                     "ne": True}[op]
            from poot.trace.movement import broadcast_to

            answer = wrap(shared_constant(value, dt.bool_, dev))
            return broadcast_to(answer, other.aval.shape) if other.aval.shape else answer
    return None


_ALWAYS_BELOW = {"lt": True, "le": True, "gt": False, "ge": False, "eq": False, "ne": True}


def _weak_int_compare(prim, items, d):
    """`x OP n` for an integer array x and n a Python int argument of @pt.jit (a traced int64): in
    int64 (against uint64, exactly), as eager code compares any int. Cast to x's dtype instead, n
    would have to fit it, and the jitted call would refuse n = 1000 against an int8 x."""
    if d.kind not in "iu" or len(items) != 2 or not all(isinstance(it, Node) for it in items):
        return None
    weak = [it.weak == 1 and it.aval.dtype.kind == "i" for it in items]
    if weak.count(True) != 1 or items[weak.index(False)].aval.dtype is dt.int64:
        return None
    if d is dt.uint64:
        return _mixed_sign_compare(prim, items, weak_ok=True)
    return wrap(record(prim, tuple(cast(it, dt.int64) for it in items)))


def _mixed_sign_compare(prim, items, weak_ok=False):
    """`s OP u` for a signed integer array s and a uint64 array u, exact as NumPy 2 compares them:
    their common type is float64, which rounds values past 2**53 (2**63 - 1 would equal 2**63). A
    negative s is below every u; any other s converts to uint64 exactly. None for other operands."""
    if len(items) != 2 or not all(isinstance(it, Node) and (weak_ok or it.weak != 1) for it in items):
        return None
    kinds = [it.aval.dtype for it in items]
    if {k.kind for k in kinds} != {"i", "u"} or dt.uint64 not in kinds:
        return None
    k = 0 if kinds[0].kind == "i" else 1
    signed, unsigned = Array(items[k]), Array(items[1 - k])
    op = prim if k == 0 else _MIRRORED[prim]                 # as `signed OP unsigned`
    exact = wrap(record(op, (signed.astype(dt.uint64)._node, unsigned._node)))
    from poot.trace.selection import where

    return where(wrap(record("lt", (signed._node, shared_constant(0, signed.dtype, signed.device)))),
                 _ALWAYS_BELOW[op], exact)


def _make_compare(name, prim):
    def fn(x1, x2):
        items, d, dev = promote(name, (x1, x2))
        _check_broadcast(name, items)
        constant = _outside_compare(prim, items, d, dev)
        if constant is not None:
            return constant
        exact = _mixed_sign_compare(prim, items)
        if exact is None:
            exact = _weak_int_compare(prim, items, d)
        if exact is not None:
            return exact
        nodes = finish(name, items, d, dev)
        if d.kind == "c" and prim in ("lt", "le", "gt", "ge"):     # lexicographic, as NumPy
            from poot.trace.complex_order import less

            a, b = (Array(n) for n in (nodes if prim in ("lt", "le") else nodes[::-1]))
            return less(a, b, prim in ("le", "ge"))
        return wrap(record(prim, tuple(nodes)))

    return _export(name, fn, f"Elementwise {name} -> bool (complex values compare by real part, then "
                             f"imaginary part, as in NumPy).")


for _name, _prim in {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                     "greater": "gt", "greater_equal": "ge"}.items():
    _make_compare(_name, _prim)


def _make_bits(name, prim):
    def fn(x1, x2):
        items, d, dev = promote(name, (x1, x2))
        require(name, d, "biu", "bitwise operations need integers or bools")
        _check_broadcast(name, items)
        nodes = finish(name, items, d, dev)
        return wrap(record(prim, tuple(nodes)))

    return _export(name, fn, f"Elementwise {name} of integers or bools.")


_make_bits("bitwise_and", "and")
_make_bits("bitwise_or", "or")
_make_bits("bitwise_xor", "xor")


def _make_shift(name, prim):
    def fn(x1, x2):
        items, d, dev = promote(name, (x1, x2))
        require(name, d, "biu", "shifts need integers")
        d = dt.int8 if d.kind == "b" else d
        _check_broadcast(name, items)
        nodes = finish(name, items, d, dev)
        return wrap(record(prim, tuple(nodes)))

    return _export(name, fn, f"Elementwise {name} of integers (shift counts below the bit width).")


_make_shift("left_shift", "shl")
_make_shift("right_shift", "shr")
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift  # noqa: F821
__all__ += ["bitwise_left_shift", "bitwise_right_shift"]


def _make_logical(name, prim):
    def fn(x1, x2):
        (a, b), d = _binary_nodes(name, x1, x2, lambda d: dt.bool_)
        return wrap(record(prim, (a, b)))

    return _export(name, fn, f"Elementwise {name} of truth values -> bool.")


_make_logical("logical_and", "and")
_make_logical("logical_or", "or")
_make_logical("logical_xor", "xor")

# the binary and unary functions as ufunc objects (pt.add.outer, pt.maximum.reduce, pt.negative.at...):
# the same calls
from poot.trace.ufunc import wrap_binary_ufuncs, wrap_unary_ufuncs  # noqa: E402

wrap_binary_ufuncs(globals())
wrap_unary_ufuncs(globals())
