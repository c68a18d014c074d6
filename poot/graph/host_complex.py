"""`host_complex`: a host op (poot/graph/host.py) run on complex operands, NumPy computing it in
complex arithmetic on the host (linalg.solve, inv, det, eigh, svd... of complex matrices).

Host steps compute on real values only, which keeps them out of the complex lowering; so a complex
operand or result travels as its parts, a real array of shape S + (2,) (real, imaginary: NumPy's
layout; poot/trace/array_api_linalg.py views complex arrays so with `bitcast`). Parameters:
- `wrapped`: the name of the host op, whose shape rule and NumPy rule this one reuses;
- `options`: its parameters, as sorted (name, value) pairs;
- `complex_inputs`: per operand, whether it is passed as parts.
Every result is complex (passed as parts) except those NumPy returns real for complex input:
eigenvalues of Hermitian matrices, singular values, slogdet's log |det|, unique's indices and counts.
"""
from __future__ import annotations

import numpy as np

from poot.errors import ShapeError
from poot.graph.aval import Aval
from poot.graph.host import HOST, LinAlgError, _host

# the results that are not complex: real values (eigenvalues of Hermitian matrices...) and indices
REAL_RESULTS = {"slogdet": (1,), "eigh": (0,), "eigvalsh": (0,), "svd": (1,), "svdvals": (0,),
                "unique": (1, 2, 3)}


def _inner(name: str):
    op = HOST.get(name)
    if op is None or name == "host_complex":
        raise ShapeError(f"host_complex: '{name}' is not a host op")
    return op


def _results(avals, wrapped, options, complex_inputs):
    op = wrapped
    if len(complex_inputs) != len(avals):
        raise ShapeError(f"host_complex: {len(complex_inputs)} operand kinds for {len(avals)} operands")
    inner = []
    for a, c in zip(avals, complex_inputs):
        if c and a.shape[-1:] != (2,):
            raise ShapeError(f"host_complex({op}): a complex operand is passed as parts (a last axis "
                             f"of 2), got {a}")
        inner.append(Aval(a.shape[:-1], a.dtype) if c else a)
    outs = _inner(op).results(inner, **dict(options))
    real = REAL_RESULTS.get(op, ())
    return [r if k in real else Aval(r.shape + (2,), r.dtype) for k, r in enumerate(outs)]


def _complex_of(parts: np.ndarray) -> np.ndarray:
    p = np.ascontiguousarray(parts)
    c = np.complex64 if p.dtype == np.float32 else np.complex128
    return p.reshape(-1).view(c).reshape(p.shape[:-1])


# ops that a real operand (a real matrix passed as complex: eig's operands always are) runs on
# NumPy's real routine for: LAPACK's real eigensolver returns real eigenvalues with imaginary part
# exactly 0 and complex ones in exact conjugate pairs, in NumPy's order; the complex one does not
_REAL_WHEN_REAL = {"eig": lambda a: tuple(np.linalg.eig(a)), "eigvals": lambda a: [np.linalg.eigvals(a)]}


def _compute(xs, wrapped, options, complex_inputs):
    op = wrapped
    part = next(x.dtype for x, c in zip(xs, complex_inputs) if c)
    cdt = np.complex64 if part == np.float32 else np.complex128
    if op in _REAL_WHEN_REAL and not any(c and x[..., 1].any() for x, c in zip(xs, complex_inputs)):
        try:            # NumPy's LinAlgError (NaN or inf entries) as poot's, as the complex routine's is
            outs = _REAL_WHEN_REAL[op](*[np.ascontiguousarray(x[..., 0]) if c else x
                                         for x, c in zip(xs, complex_inputs)])
        except np.linalg.LinAlgError as e:
            raise LinAlgError(f"linalg.{op}: {e}") from None
    else:
        outs = _inner(op).compute([_complex_of(x) if c else x for x, c in zip(xs, complex_inputs)],
                                  **dict(options))
    if op == "cholesky" and dict(options).get("upper"):    # U = L^H: the real rule only transposes
        outs = [np.conj(o) for o in outs]
    real = REAL_RESULTS.get(op, ())
    res = []
    for k, o in enumerate(outs):
        o = np.asarray(o)
        if k in real:     # real values computed as complex, or indices and counts
            res.append(np.ascontiguousarray(o.real, dtype=part) if o.dtype.kind == "c" else o)
        else:
            o = np.ascontiguousarray(o, dtype=cdt)
            res.append(o.reshape(-1).view(part).reshape(o.shape + (2,)))
    return res


_host("host_complex", _results, _compute, arity=None, params=("wrapped", "options", "complex_inputs"))
