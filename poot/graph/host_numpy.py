"""More host ops (see poot.graph.host for the mechanism): NumPy functions whose result shape is known
from the operands' shapes and parameters but whose values need a host computation: `histogram`.

Registered when poot.graph is imported, before the planner reads the op table.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import PootError
from poot.graph.aval import Aval
from poot.graph.host import _exact16, _host


class HostValueError(PootError, ValueError):
    """A host op's NumPy rule refused its operand values (a histogram range that is not finite...),
    found when the program ran it."""


def _histogram_avals(avals, bins, range, density, weighted):  # noqa: A002 (NumPy's name)
    a = avals[0]
    edges_given = bins is None
    n_edges = avals[1].shape[0] if edges_given else bins + 1
    edge_dtype = avals[1].dtype if edges_given else (a.dtype if a.dtype.kind == "f" else dt.float64)
    if density:
        count_dtype = dt.float64
    elif weighted:
        count_dtype = avals[-1].dtype
    else:
        count_dtype = dt.int64
    return [Aval((max(n_edges - 1, 0),), count_dtype), Aval((n_edges,), edge_dtype)]


def _histogram(xs, bins, range, density, weighted):  # noqa: A002
    a = _exact16(xs[0])
    k = 1
    if bins is None:
        edges, k = xs[1], 2
    else:
        edges = bins
    w = xs[k] if weighted else None
    try:
        with np.errstate(all="ignore"):
            counts, out_edges = np.histogram(a.reshape(-1), edges if bins is not None else _exact16(edges),
                                             range=range, density=density,
                                             weights=None if w is None else _exact16(w).reshape(-1))
    except ValueError as e:
        raise HostValueError(f"histogram: {e}") from None
    if bins is None:
        out_edges = xs[1]
    return [counts, out_edges]


_host("histogram", _histogram_avals, _histogram, arity=None,   # the data, then edges and weights if given
      params=("bins", "range", "density", "weighted"))

__all__ = ["HostValueError"]
