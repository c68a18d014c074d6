"""Elementwise functions that choose or compare: where, clip, isclose, allclose, array_equal."""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import ShapeError, exporter
from poot.trace.elementwise import _check_broadcast, equal, isnan, logical_and, logical_or
from poot.trace.lazy import Node, constant, record
from poot.trace.numpy_keywords import refuse_out
from poot.trace.promote import cast, device_of, finish, float_of, promote, wrap

__all__: list[str] = []


_export = exporter(globals(), __all__)


def _where(condition, x=None, y=None, *, size=None, fill_value=None):
    if x is None and y is None:
        from poot.trace.indexing import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ShapeError("where: give both x and y, or neither (then it is nonzero(condition))")
    if size is not None or fill_value is not None:     # JAX refuses them too: the shape is x's and y's
        raise ShapeError("where: size= and fill_value= apply to the one-argument where(condition) "
                         "(nonzero's positions); where(condition, x, y) has the broadcast shape")
    dev = device_of("where", (condition, x, y))
    cond_items, cd, _ = promote("where", (condition,), dev)
    (c,) = finish("where", cond_items, cd, dev)
    items, d, _ = promote("where", (x, y), dev)
    a, b = finish("where", items, d, dev)
    nodes = (cast(c, dt.bool_), a, b)
    _check_broadcast("where", nodes)
    return wrap(record("select", nodes))


_export("where", _where, "where(condition, x, y): elementwise choice (condition is truth-tested). "
                         "where(condition) alone is nonzero(condition), which realizes; with size=n "
                         "(and fill_value=, as JAX's) it is lazy and works inside @pt.jit.")


def _clip(x, min=None, max=None, **kwargs):  # noqa: A002 (NumPy's names)
    min = kwargs.pop("a_min", min)  # noqa: A001
    max = kwargs.pop("a_max", max)  # noqa: A001
    out = kwargs.pop("out", None)
    refuse_out("clip", out, lambda: _clip(x, min, max, **kwargs))
    if kwargs:
        raise TypeError(f"clip() got unexpected arguments {sorted(kwargs)}")
    items, d, dev = promote("clip", [x] + [b for b in (min, max) if b is not None])
    x_dtype = items[0].aval.dtype if isinstance(items[0], Node) else d
    if x_dtype.kind != d.kind:      # a float bound on integers, an int bound on bools: the standard leaves
        x_dtype = d                 # it open; NumPy promotes (cast back, 0 clipped at 1.5 would be 1)
    if d.kind in "iu":  # like NumPy: a Python bound beyond the dtype on its own side does not clip
        info = dt.iinfo(d)
        if type(min) is int and min < info.min:
            min = None  # noqa: A001
        if type(max) is int and max > info.max:
            max = None  # noqa: A001
        items, d, dev = promote("clip", [x] + [b for b in (min, max) if b is not None])
    nodes = finish("clip", items, d, dev)
    _check_broadcast("clip", nodes)
    if d.kind == "c":       # lexicographic on (real, imaginary), as NumPy
        from poot.trace.array import Array
        from poot.trace.complex_order import extreme

        r = Array(nodes[0])
        k = 1
        if min is not None:
            r = extreme(r, Array(nodes[k]), larger=True)
            k += 1
        if max is not None:
            r = extreme(r, Array(nodes[k]), larger=False)
        return wrap(cast(r._node, x_dtype))
    r = nodes[0]
    k = 1
    if min is not None:
        r = record("max", (r, nodes[k]))
        k += 1
    if max is not None:
        r = record("min", (r, nodes[k]))
    return wrap(cast(r, x_dtype))


_export("clip", _clip, "clip(x, min, max) = minimum(maximum(x, min), max); either bound may be None. "
                       "The result has x's dtype, as the array API standard says, where the bounds are "
                       "of x's kind; bounds of another kind (a float bound on an int array) promote as "
                       "NumPy does (np.clip on poot arrays keeps NumPy's promotion in every case).")


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    items, d, dev = promote("isclose", (a, b))
    f = float_of(d)
    x, y = finish("isclose", items, f, dev)
    _check_broadcast("isclose", (x, y))
    diff = record("abs", (record("sub", (x, y)),))
    f = dt.real_dtype(f)        # |.| of complex values is real: so are the tolerances
    tol = record("add", (constant(atol, f, dev), record("mul", (constant(rtol, f, dev),
                                                                record("abs", (y,))))))
    # Only finite pairs use the tolerance: atol + rtol*|inf| is inf, which would call every finite value
    # close to an infinity; NumPy's infinities are close only to the same infinity (the eq test).
    finite = record("and", (record("isfinite", (x,)), record("isfinite", (y,))))
    close = record("or", (record("eq", (x, y)), record("and", (finite, record("le", (diff, tol))))))
    if equal_nan:
        both = record("and", (record("isnan", (x,)), record("isnan", (y,))))
        close = record("or", (close, both))
    return wrap(close)


_export("isclose", _isclose, "Elementwise |a - b| <= atol + rtol * |b| (an inf is close only to the same inf).")


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    from poot.trace.reductions import all as all_

    return bool(all_(isclose(a, b, rtol, atol, equal_nan)))  # noqa: F821 (defined by _export)


def _array_equal(a1, a2, equal_nan=False):
    from poot.trace.reductions import all as all_

    from poot.trace.creation import asarray

    x, y = asarray(a1), asarray(a2)
    if x.shape != y.shape:
        return False
    eq = equal(x, y)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return bool(all_(eq))


_export("allclose", _allclose, "True when isclose holds everywhere (realizes; returns a Python bool).")
_export("array_equal", _array_equal, "True when shapes and values are equal (realizes; Python bool).")
