"""poot.trace: the lazy `poot.Array`, the NumPy-like public API and realization.

Operations on Arrays record graph equations (`poot.trace.lazy.Node`); a value is computed when it is
needed, through `poot.jit.execute.execute` on the array's device. `lazy.tracing()`, `lazy.placeholder()`
and `lazy.build_graph()` are the hooks @poot.jit traces with.
"""
from __future__ import annotations

import math as _math

from .. import dtypes as _dt
from ..errors import api_boundary as _api_boundary
from . import methods as _methods  # noqa: F401  (installs the operators on Array)
from . import nn, random
from .array import Array, realize, synchronize
from .array_api_functions import *  # noqa: F401,F403
from .array_api_functions import __all__ as _array_api_functions_all
from .array_api_info import *  # noqa: F401,F403
from .array_api_info import __all__ as _array_api_info_all
from .array_api_sets import *  # noqa: F401,F403
from .array_api_sets import __all__ as _array_api_sets_all
from .creation import *  # noqa: F401,F403
from .creation import __all__ as _creation_all
from .context import device
from .control import cond, fori_loop, while_loop
from .jit import jit
from .elementwise import *  # noqa: F401,F403
from .elementwise import __all__ as _elementwise_all
from .indexing import *  # noqa: F401,F403
from .indexing import __all__ as _indexing_all
from .linalg import *  # noqa: F401,F403
from .linalg import __all__ as _linalg_all
from .movement import *  # noqa: F401,F403
from .movement import __all__ as _movement_all
from .numpy_more import *  # noqa: F401,F403
from .numpy_more import __all__ as _numpy_more_all
from .numpy_stats import *  # noqa: F401,F403
from .numpy_stats import __all__ as _numpy_stats_all
from .reductions import *  # noqa: F401,F403
from .reductions import __all__ as _reductions_all
from .selection import *  # noqa: F401,F403
from .selection import __all__ as _selection_all

ndarray = Array
newaxis = None
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan


@_api_boundary
def result_type(*arrays_and_dtypes):
    """The dtype NumPy 2 promotion gives these arrays, dtypes and (weak) Python scalars."""
    strong, weak = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, Array):
            strong.append(a.dtype)
        elif isinstance(a, (bool, int, float)) and not hasattr(a, "dtype"):
            weak.append(a)
        elif hasattr(a, "dtype") and not isinstance(a, type):
            strong.append(_dt.as_dtype(a.dtype))
        else:
            strong.append(_dt.as_dtype(a))
    if not strong:
        strong = [_dt.scalar_dtype(weak.pop(0))]
    d = _dt.result_type(*strong)
    for s in weak:
        d = _dt.promote_with_scalar(d, s)
    return d


def cast_to(value, dtype):
    """`pt.float32(x)` outside a kernel: `x` (array, list or scalar) as a poot array of `dtype`."""
    return asarray(value).astype(dtype)  # noqa: F405


__all__ = (["Array", "ndarray", "realize", "synchronize", "device", "nn", "random", "newaxis", "pi", "e", "inf", "nan",
            "result_type", "jit", "cond", "fori_loop", "while_loop"]
           + _array_api_functions_all + _array_api_info_all + _array_api_sets_all
           + _creation_all + _elementwise_all + _indexing_all + _linalg_all + _movement_all
           + _reductions_all + _selection_all + _numpy_more_all
           + _numpy_stats_all)
