"""poot.graph: abstract values, the Graph IR, the op table and the NumPy oracle."""
from poot.graph.aval import Aval, broadcast_shapes, normalize_axes, normalize_axis
from poot.graph.ir import Eqn, Graph, GraphError, Var
from poot.graph.ops import OPS, OpDef
from poot.graph.control import Region  # noqa: E402  (registers the control ops)
from poot.graph import host  # noqa: E402,F401  (registers the host ops)
from poot.graph import host_numpy  # noqa: E402,F401  (registers histogram)
from poot.graph import host_fft  # noqa: E402,F401  (registers fft)
from poot.graph import host_complex  # noqa: E402,F401  (registers host_complex)
from poot.graph import attention  # noqa: E402,F401  (registers the attention op)
from poot.graph import sampling  # noqa: E402,F401  (registers the sample op)
from poot.graph import quant  # noqa: E402,F401  (registers the qmatmul op)
from poot.graph import collective  # noqa: E402,F401  (registers psum, pmax, pmin, axis_index)
from poot.graph.oracle import evaluate

__all__ = ["Aval", "broadcast_shapes", "normalize_axes", "normalize_axis", "Eqn", "Graph",
           "GraphError", "Var", "OPS", "OpDef", "Region", "evaluate"]
