"""NumPy keywords that poot accepts without their memory meaning: `out=` (poot arrays are immutable
values, so a result is assigned, never written into a given array: only the default, None, is taken)
and `order=` (NumPy's memory layout, 'C', 'F', 'A' or 'K' in either case). Every poot array is stored
C-ordered and memory order is not modelled: a NumPy result's values do not depend on its layout, so a
creation function or a copy takes any order and gives NumPy's values. Where the order changes the values
(reshape, ravel, flatten) the caller reads the normalized letter (poot/trace/movement.py). A value NumPy
refuses gets a PootError naming the function and the value."""
from __future__ import annotations

from poot.errors import ArgumentError, ShapeError, out_error

ORDERS = ("C", "F", "A", "K")


def refuse_out(op: str, out, result=None) -> None:
    """Refuse a given `out=` with errors.out_error's class (OutError; OutShapeError or OutDTypeError
    where the array could not have held the result). `result`, a function giving the lazy result
    without out= (nothing runs), lets the wrong shape or dtype be named; it is called only when out=
    was given."""
    if out is not None:
        raise out_error(op, out, result() if result is not None else None)


def memory_order(op: str, order, default: str = "C") -> str:
    """NumPy's `order` as one upper-case letter of ORDERS (None is `default`), as NumPy reads it (the
    lower-case letters too): a non-string is NumPy's TypeError (ArgumentError), any other string its
    ValueError (ShapeError)."""
    if order is None:
        return default
    if not isinstance(order, str):
        raise ArgumentError(f"{op}: order must be a string ('C', 'F', 'A' or 'K'), not "
                            f"{type(order).__name__} ({order!r})")
    letter = order.upper()
    if letter not in ORDERS:
        raise ShapeError(f"{op}: order must be one of 'C', 'F', 'A' or 'K', got order={order!r}")
    return letter


def any_memory_order(op: str, order) -> None:
    """Check `order` of a function whose values do not depend on it (creation, copies, einsum): every
    order NumPy takes is accepted, and the result is C-ordered as every poot array is."""
    memory_order(op, order)
