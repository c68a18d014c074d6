"""poot.trace: the lazy `poot.Array`, the NumPy-like public API and realization.

Operations on Arrays record graph equations (`poot.trace.lazy.Node`); a value is computed when it is
needed, through `poot.jit.runtime.execute.execute` on the array's device. `lazy.tracing()`, `lazy.placeholder()`
and `lazy.build_graph()` are the hooks @poot.jit traces with.
"""
from __future__ import annotations

import math as _math

from poot import dtypes as _dt
from poot.errors import api_boundary as _api_boundary
from poot.trace import methods as _methods  # noqa: F401  (installs the operators on Array)
from poot.trace import fft, nn, quant, random
from poot.trace.array import Array, realize, synchronize
from poot.trace.array_api_functions import *  # noqa: F401,F403
from poot.trace.array_api_functions import __all__ as _array_api_functions_all
from poot.trace.array_api_info import *  # noqa: F401,F403
from poot.trace.array_api_info import __all__ as _array_api_info_all
from poot.trace.array_api_sets import *  # noqa: F401,F403
from poot.trace.array_api_sets import __all__ as _array_api_sets_all
from poot.trace.complex_values import *  # noqa: F401,F403
from poot.trace.complex_values import __all__ as _complex_values_all
from poot.trace.creation import *  # noqa: F401,F403
from poot.trace.creation import __all__ as _creation_all
from poot.trace.context import device
from poot.trace.control import cond, fori_loop, while_loop
from poot.trace.jit import jit
from poot.trace.elementwise import *  # noqa: F401,F403
from poot.trace.elementwise import __all__ as _elementwise_all
from poot.trace.indexing import *  # noqa: F401,F403
from poot.trace.indexing import __all__ as _indexing_all
from poot.trace.linalg import *  # noqa: F401,F403
from poot.trace.linalg import __all__ as _linalg_all
from poot.trace.movement import *  # noqa: F401,F403
from poot.trace.movement import __all__ as _movement_all
from poot.trace.numpy_more import *  # noqa: F401,F403
from poot.trace.numpy_more import __all__ as _numpy_more_all
from poot.trace.numpy_files import *  # noqa: F401,F403
from poot.trace.numpy_files import __all__ as _numpy_files_all
from poot.trace.numpy_extras import *  # noqa: F401,F403
from poot.trace.numpy_extras import __all__ as _numpy_extras_all
from poot.trace.numpy_index_sets import *  # noqa: F401,F403
from poot.trace.numpy_index_sets import __all__ as _numpy_index_sets_all
from poot.trace.numpy_signals import *  # noqa: F401,F403
from poot.trace.numpy_signals import __all__ as _numpy_signals_all
from poot.trace.numpy_stats import *  # noqa: F401,F403
from poot.trace.numpy_stats import __all__ as _numpy_stats_all
from poot.trace.numpy_tail import *  # noqa: F401,F403
from poot.trace.numpy_tail import __all__ as _numpy_tail_all
from poot.trace.jax_names import *  # noqa: F401,F403
from poot.trace.jax_names import __all__ as _jax_names_all
from poot.trace.numpy_inplace import *  # noqa: F401,F403
from poot.trace.numpy_inplace import __all__ as _numpy_inplace_all
from poot.trace.numpy_queries import *  # noqa: F401,F403
from poot.trace.numpy_habits import *  # noqa: F401,F403
from poot.trace import numpy_methods as _numpy_methods  # noqa: F401,E402  (installs compress, put... on Array)
from poot.trace.numpy_habits import __all__ as _numpy_habits_all
from poot.trace.numpy_queries import __all__ as _numpy_queries_all
from poot.trace.numpy_poly import *  # noqa: F401,F403
from poot.trace.numpy_poly import __all__ as _numpy_poly_all
from poot.trace.numpy_gradient import *  # noqa: F401,F403
from poot.trace.numpy_gradient import __all__ as _numpy_gradient_all
from poot.trace.numpy_histdd import *  # noqa: F401,F403
from poot.trace.numpy_histdd import __all__ as _numpy_histdd_all
from poot.trace.reductions import *  # noqa: F401,F403
from poot.trace.reductions import __all__ as _reductions_all
from poot.trace.selection import *  # noqa: F401,F403
from poot.trace.selection import __all__ as _selection_all

from poot.trace.ndarray import ndarray  # noqa: E402
from poot.trace.cache_update import dynamic_update_slice, paged_update  # noqa: E402
from poot.trace.dynamic_slicing import dynamic_slice, top_k  # noqa: E402
newaxis = None
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan


@_api_boundary
def result_type(*arrays_and_dtypes):
    """The dtype NumPy 2 promotion gives these arrays, dtypes and (weak) Python scalars."""
    strong, weak = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, Array):
            strong.append(a.dtype)
        elif isinstance(a, (bool, int, float, complex)) and not hasattr(a, "dtype"):
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
    """`pt.float32(x)` outside a kernel: `x` (array, list or scalar) as a poot array of `dtype`. A Python
    int is range-checked against `dtype` (np.uint8(-1) raises in NumPy 2; 2**63 fits uint64), not made
    an int64 array first and then wrapped."""
    if type(value) is int or (type(value) is float and dtype.kind in "iu"):   # np.int32(nan) raises too
        return asarray(value, dtype=dtype)  # noqa: F405
    return asarray(value).astype(dtype)  # noqa: F405


__all__ = (["Array", "ndarray", "realize", "synchronize", "device", "fft", "nn", "quant", "random", "newaxis", "pi", "e", "inf", "nan",
            "result_type", "jit", "cond", "fori_loop", "while_loop", "dynamic_update_slice", "paged_update",
            "dynamic_slice", "top_k"]
           + _array_api_functions_all + _array_api_info_all + _array_api_sets_all
           + _complex_values_all + _creation_all + _elementwise_all + _indexing_all + _linalg_all + _movement_all
           + _reductions_all + _selection_all + _numpy_more_all + _numpy_files_all + _numpy_extras_all + _numpy_index_sets_all + _numpy_signals_all
           + _numpy_stats_all + _numpy_tail_all + _jax_names_all + _numpy_inplace_all + _numpy_queries_all + _numpy_poly_all
           + _numpy_gradient_all + _numpy_histdd_all
           + _numpy_habits_all)
