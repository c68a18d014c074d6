"""`poot.linalg`: the array API standard's linear algebra extension (built in
poot/trace/array_api_linalg.py, which says which functions are lazy and which are host fallbacks)."""
from .trace.array_api_linalg import *  # noqa: F401,F403
from .trace.array_api_linalg import __all__  # noqa: F401
