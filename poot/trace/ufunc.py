"""`poot.Ufunc`: poot's elementwise functions as NumPy users write them, with the ufunc methods
`pt.add.outer(a, b)`, `pt.maximum.reduce(x, axis)`, `pt.multiply.accumulate(x)`, `pt.add.at(x, i, v)`,
`pt.add.reduceat(x, indices)`, `pt.negative.at(x, i)` and the attributes `nin`, `nout`, `nargs`,
`identity`, `types`, `ntypes`, `__name__`. The unary functions (`pt.negative`, `pt.sqrt`...) are
`UnaryUfunc`s: only `at` applies to them, and the other methods refuse as NumPy's do.

Why a `functools.partial` subclass: calling `pt.add(x, y)` must cost what calling the plain function
did, and a partial is called by C code (vectorcall) with no Python frame of its own, while a class
with a Python `__call__` would add one frame per call. The function under the partial is the
elementwise function's API boundary; NumPy's call keywords (`dtype=`, `casting=`...), which that
function does not take, reach ufunc_methods.call_with_keywords through the boundary's `keyword_form`
once the plain call has refused them. The methods are ordinary Python methods; their work lives in
ufunc_methods.py (reduceat in ufunc_reduceat.py).
"""
from __future__ import annotations

import functools
import math

from poot.errors import ArgumentValueError, api_boundary
from poot.trace.lost_writes import refuses_temporaries

_NO_VALUE = object()   # "not given" for `initial`, which may be None in NumPy's signature

# name -> (identity, reorderable): NumPy's `ufunc.identity`, and whether the reduction may combine
# elements in any order (then several axes at once and a log-depth tree are allowed, as in NumPy)
BINARY_UFUNCS = {
    "add": (0, True), "subtract": (None, False), "multiply": (1, True), "divide": (None, False),
    "floor_divide": (None, False), "remainder": (None, False), "power": (None, False),
    "float_power": (None, False), "maximum": (None, True), "minimum": (None, True),
    "fmax": (None, True), "fmin": (None, True), "arctan2": (None, False), "hypot": (0, True),
    "logaddexp": (-math.inf, True), "copysign": (None, False), "nextafter": (None, False),
    "equal": (None, False), "not_equal": (None, False), "less": (None, False),
    "less_equal": (None, False), "greater": (None, False), "greater_equal": (None, False),
    "bitwise_and": (-1, True), "bitwise_or": (0, True), "bitwise_xor": (0, True),
    "left_shift": (None, False), "right_shift": (None, False), "logical_and": (True, True),
    "logical_or": (False, True), "logical_xor": (False, True),
}


# NumPy's ufunc call keywords (ufunc_methods.call_with_keywords takes them)
CALL_KEYWORDS = frozenset(("dtype", "casting", "where", "order", "subok"))


_NO_BOUNDARY = object()


@api_boundary
def _keyword_call(uf, fn, args, kwargs):
    from poot.trace import ufunc_methods

    return ufunc_methods.call_with_keywords(uf, fn, args, kwargs)


class Ufunc(functools.partial):
    """A binary elementwise function with NumPy's ufunc methods. Call it as the function it wraps."""

    nin = 2
    nout = 1
    nargs = 3
    signature = None

    def __new__(cls, fn, name: str, identity, reorderable: bool):
        # the keywords reach call_with_keywords only from a call that passes them (pt.add(a, b,
        # dtype=pt.int16)): the API boundary's keyword_form, read once fn has refused them, costs the
        # other calls nothing (a plain function is put behind a boundary of its own first)
        form = getattr(fn, "keyword_form", _NO_BOUNDARY)
        if form is _NO_BOUNDARY:
            fn, form = api_boundary(fn), None
        self = super().__new__(cls, fn)
        self.__name__ = self.__qualname__ = name
        self.__doc__ = fn.__doc__
        self.__module__ = "poot"
        # the undecorated function: methods.py builds the operators (x + y) from it
        self.__wrapped__ = getattr(fn, "__wrapped__", fn)
        self.identity = identity
        self.reorderable = reorderable
        if form is None:
            fn.keyword_form = (CALL_KEYWORDS, functools.partial(_keyword_call, self, fn))
        return self

    @api_boundary
    def outer(self, A, B, /, **kwargs):
        """`f(a, b)` for every pair: the result has shape A.shape + B.shape (lazy)."""
        from poot.trace import ufunc_methods

        return ufunc_methods.outer(self, A, B, **kwargs)

    @api_boundary
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=True):
        """Combine the elements along `axis` (None: all axes; a tuple for reorderable ufuncs) with
        f, as NumPy's `ufunc.reduce` (lazy). add/multiply/maximum/minimum/logical_and/logical_or are
        poot's sum/prod/max/min/all/any; other reorderable ufuncs combine in a log-depth tree, the
        rest (subtract, divide, power...) left to right, one step per element."""
        from poot.trace import ufunc_methods

        return ufunc_methods.reduce(self, array, axis, dtype, out, keepdims,
                                    None if initial is _NO_VALUE else (initial,), where)

    @api_boundary
    def accumulate(self, array, axis=0, dtype=None, out=None):
        """The running f along `axis`, as NumPy's `ufunc.accumulate` (lazy): add and multiply are
        cumsum and cumprod, other reorderable ufuncs a log-depth scan, the rest left to right."""
        from poot.trace import ufunc_methods

        return ufunc_methods.accumulate(self, array, axis, dtype, out)

    @refuses_temporaries("Ufunc.at", 1, lambda uf: f"{uf.__name__}.at")
    @api_boundary
    def at(self, a, indices, b=None, /):
        """In place, unbuffered: `a[indices] = f(a[indices], b)` where a repeated index applies f
        once per occurrence (NumPy's `ufunc.at`). `a` (a poot array) takes the new value."""
        from poot.trace import ufunc_methods

        ufunc_methods.at(self, a, indices, b)

    @api_boundary
    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """f over each slice `array[indices[i]:indices[i+1]]` along `axis`, as NumPy's
        `ufunc.reduceat` (lazy): where indices[i] >= indices[i+1] the result is array[indices[i]],
        and the last slice runs to the end. Indices may be a poot array, also inside @pt.jit."""
        from poot.trace import ufunc_reduceat

        return ufunc_reduceat.reduceat(self, array, indices, axis, dtype, out)

    @property
    def types(self) -> list[str]:
        """NumPy's loop signatures ('ff->f') for the dtypes this function takes, in NumPy's type
        characters (bfloat16, which has none, is left out): found by recording the function on empty
        operands of each dtype, so they say what poot computes, not what NumPy would."""
        from poot.trace import ufunc_methods

        return list(ufunc_methods.loop_types(self))

    @property
    def ntypes(self) -> int:
        """How many dtype loops `types` lists."""
        return len(self.types)

    def __repr__(self) -> str:
        return f"<poot ufunc '{self.__name__}'>"

    def __reduce__(self):
        return (_by_name, (getattr(self, "_key", self.__name__),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class UnaryUfunc(Ufunc):
    """A unary elementwise function as a NumPy ufunc: `at` applies it in place at indices (once per
    occurrence of an index); reduce, accumulate, reduceat and outer refuse, as NumPy's do."""

    nin = 1
    nargs = 2

    def __new__(cls, fn, name: str, key: str):
        self = super().__new__(cls, fn, name, None, False)
        self._key = key
        return self

    def calling(self, fn) -> "UnaryUfunc":
        """This ufunc calling `fn` instead (recipes.memoize gives the function its recipes)."""
        return UnaryUfunc(fn, self.__name__, self._key)

    def _binary_only(self, method: str):
        raise ArgumentValueError(f"{self.__name__}.{method}: {method} only supported for binary functions "
                                 f"({self.__name__} takes one operand)")

    @api_boundary
    def outer(self, A, B, /, **kwargs):
        """Refused: a unary function has no outer product (NumPy's ValueError)."""
        self._binary_only("outer")

    @api_boundary
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=True):
        """Refused: a unary function has no reduction (NumPy's ValueError)."""
        self._binary_only("reduce")

    @api_boundary
    def accumulate(self, array, axis=0, dtype=None, out=None):
        """Refused: a unary function has no accumulation (NumPy's ValueError)."""
        self._binary_only("accumulate")

    @api_boundary
    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """Refused: a unary function has no reduction (NumPy's ValueError)."""
        self._binary_only("reduceat")

    @refuses_temporaries("UnaryUfunc.at", 1, lambda uf: f"{uf.__name__}.at")
    @api_boundary
    def at(self, a, indices, b=None, /):
        """In place, unbuffered: `a[indices] = f(a[indices])`, f applied once per occurrence of an
        index (NumPy's `ufunc.at`); the result is cast to a's dtype, as NumPy does."""
        from poot.trace import ufunc_methods

        if b is not None:
            raise ArgumentValueError(f"{self.__name__}.at: second operand provided when ufunc is unary")
        ufunc_methods.unary_at(self, a, indices)


# public name -> NumPy's name of the ufunc (np.abs.__name__ is 'absolute')
UNARY_UFUNCS = {
    "negative": "negative", "positive": "positive", "abs": "absolute", "absolute": "absolute",
    "sign": "sign", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "square": "square", "reciprocal": "reciprocal",
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsinh": "arcsinh", "arccosh": "arccosh", "arctanh": "arctanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "rint": "rint", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "signbit": "signbit",
    "deg2rad": "deg2rad", "rad2deg": "rad2deg", "radians": "radians", "degrees": "degrees",
    "logical_not": "logical_not", "invert": "invert", "bitwise_not": "invert",
    "bitwise_invert": "invert",
}


def wrap_unary_ufuncs(namespace: dict) -> None:
    """Replace each unary function of UNARY_UFUNCS in `namespace` (elementwise.py's globals) by its
    UnaryUfunc, under NumPy's name for it."""
    for key, name in UNARY_UFUNCS.items():
        fn = namespace.get(key)
        if fn is not None and not isinstance(fn, Ufunc):
            namespace[key] = UnaryUfunc(fn, name, key)


def _by_name(name: str) -> Ufunc:
    """The Ufunc a pickle names: elementwise.py's, else one of poot.trace's others (pt.gcd, pt.fmod)."""
    import poot.trace
    from poot.trace import elementwise

    found = getattr(elementwise, name, None)
    return found if isinstance(found, Ufunc) else getattr(poot.trace, name)


def wrap_binary_ufuncs(namespace: dict) -> None:
    """Replace each binary function of BINARY_UFUNCS in `namespace` (elementwise.py's globals) by
    its Ufunc, and every alias of it (`mod`, `pow`, `true_divide`, `atan2`...) by the same object."""
    made = {}
    for name, (identity, reorderable) in BINARY_UFUNCS.items():
        fn = namespace[name]
        made[id(fn)] = Ufunc(fn, name, identity, reorderable)
    for key, value in list(namespace.items()):
        u = made.get(id(value))
        if u is not None and not key.startswith("_"):
            namespace[key] = u


__all__ = ["Ufunc", "UnaryUfunc"]
