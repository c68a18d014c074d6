"""`poot.linalg`: the array API standard's linear algebra extension (built in
poot/trace/array_api_linalg.py, which says which functions are lazy and which are host fallbacks),
plus NumPy's `norm` (poot/trace/numpy_more.py), `lstsq` (poot/trace/lstsq.py) and cond, eig, eigvals,
multi_dot, tensorinv, tensorsolve (poot/trace/linalg_extra.py): not names of the standard, so not in
__all__."""
from poot.trace.array_api_linalg import *  # noqa: F401,F403
from poot.trace.array_api_linalg import __all__  # noqa: F401
from poot.trace.numpy_more import norm  # noqa: F401
from poot.trace.lstsq import lstsq  # noqa: F401
from poot.trace.linalg_extra import (cond, eig, eigvals, EigResult, multi_dot, tensorinv,  # noqa: F401
                                     tensorsolve)
