"""`pt.lib`: the parts of NumPy's numpy.lib that scripts reach for (`np.lib.stride_tricks`)."""
from poot.lib import stride_tricks

__all__ = ["stride_tricks"]
