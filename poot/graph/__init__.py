"""poot.graph: abstract values, the Graph IR, the op table and the NumPy oracle."""
from .aval import Aval, broadcast_shapes, normalize_axes, normalize_axis
from .ir import Eqn, Graph, GraphError, Var
from .ops import OPS, OpDef
from .control import Region  # noqa: E402  (registers the control ops)
from . import host  # noqa: E402,F401  (registers the host ops)
from . import host_numpy  # noqa: E402,F401  (registers histogram)
from .oracle import evaluate

__all__ = ["Aval", "broadcast_shapes", "normalize_axes", "normalize_axis", "Eqn", "Graph",
           "GraphError", "Var", "OPS", "OpDef", "Region", "evaluate"]
