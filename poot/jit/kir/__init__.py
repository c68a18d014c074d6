"""KIR, poot's kernel IR (see model.py for its semantics)."""
from poot.jit.kir.model import *  # noqa: F401,F403
