"""Collectives over a named vmap axis: `psum`, `pmax`, `pmin` (an operand reduced over every example
of the batch, the result the same for each) and `axis_index` (each example's position in it).

They are JAX's `lax.psum(x, 'i')` inside `vmap(f, axis_name='i')`: `f` is traced on one example, so
such an equation only has a meaning for the vmap that binds its `axis_name`, whose batching rule
(poot/transforms/collectives.py) replaces it with a reduction over the batch axis (or an iota). An
equation that reached a program unbatched names an axis no vmap bound: its NumPy rule refuses it.
They are host ops only so that such a stray equation fails in a step of its own with that message.
"""
from __future__ import annotations

from poot import dtypes as dt
from poot.errors import AxisNameError, DTypeError
from poot.graph.aval import Aval
from poot.graph.host import _host

COLLECTIVES = ("psum", "pmax", "pmin", "axis_index")


def _unbound(op: str):
    def compute(xs, axis_name):
        raise AxisNameError(f"{op}: unbound axis name {axis_name!r}: a collective only has a meaning inside "
                            f"pt.vmap(..., axis_name={axis_name!r}), which replaces it with an operation over "
                            f"the batch")
    return compute


def _same(op: str):
    def results(avals, axis_name):
        (a,) = avals
        if op == "psum" and a.dtype.kind == "b":
            raise DTypeError(f"psum does not take bool; convert it (x.astype(pt.int32)) to count")
        return [a]
    return results


for _op in ("psum", "pmax", "pmin"):
    _host(_op, _same(_op), _unbound(_op), params=("axis_name",))
_host("axis_index", lambda avals, axis_name: [Aval((), dt.int32)], _unbound("axis_index"), arity=0,
      params=("axis_name",))
