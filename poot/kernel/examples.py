"""`Example`: how a kernel source under kernels/ says how to run it and what it must produce.

A kernel source defines, next to each manifest entry function `f`, a function `example_f(rng)` that
returns an Example (or a list of them): the arguments (NumPy arrays and scalars), the NumPy reference
for the buffers it writes (by parameter name), and optionally the grid, a tolerance, or the trap it
must raise (a substring of the trap's description). tests/test_import_run.py runs every example
under emulation and on every available device, against the reference and against each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Example:
    args: tuple
    expected: dict = field(default_factory=dict)
    threads: object = None
    workgroup: object = None
    rtol: float | None = None
    atol: float | None = None
    trap: str | None = None

    def fresh_args(self) -> list:
        """A copy of the arguments (arrays copied), so each run starts from the same state."""
        return [a.copy() if isinstance(a, np.ndarray) else a for a in self.args]

    def tolerance(self, dtype: np.dtype) -> tuple[float, float]:
        """(rtol, atol): the example's own, else a few ulps of `dtype` (exact for integers)."""
        if dtype.kind != "f" and not str(dtype).startswith("bfloat"):
            return 0.0, 0.0
        eps = _eps(dtype)
        return (self.rtol if self.rtol is not None else 4 * eps,
                self.atol if self.atol is not None else 4 * eps)


def _eps(dtype) -> float:
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).eps)
