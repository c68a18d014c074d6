"""NumPy keywords that poot accepts at their default value only: `out=` (poot arrays are immutable
values, so a result is assigned, never written into a given array) and `order=` (every poot array is
C-ordered). A NumPy script that spells the defaults out runs unchanged; any other value gets a
PootError naming the function and what to do instead."""
from __future__ import annotations

from poot.errors import ShapeError

_C_ORDERS = (None, "C", "K", "A")


def refuse_out(op: str, out) -> None:
    if out is not None:
        raise ShapeError(f"{op}: out= is not supported (poot arrays are immutable values); assign the "
                         f"result instead (y = {op}(...))")


def c_order_only(op: str, order) -> None:
    if order not in _C_ORDERS:
        raise ShapeError(f"{op}: order={order!r} is not supported; poot arrays are always C-ordered "
                         f"(give 'C', 'K', 'A' or None)")
