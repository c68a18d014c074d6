"""(a) fused elementwise chains over 10M float32: poot vs NumPy vs numexpr vs Numba (parallel loops), all
on every core, in the same run."""
import numpy as np
import pytest

import poot as pt

from conftest import need_numba, need_numexpr

N = 10_000_000


@pytest.fixture(scope="module")
def data(rng):
    a, b, c = (rng.random(N, dtype=np.float32) for _ in range(3))
    return a, b, c, pt.array(a), pt.array(b), pt.array(c)


CHAINS = {
    "mixed": ("2*a + b*c - exp(a)/(1 + b*b)",
              lambda a, b, c, m: 2 * a + b * c - m.exp(a) / (1 + b * b)),
    "poly": ("a*a*a + 3*a*b - c", lambda a, b, c, m: a * a * a + 3 * a * b - c),
    "transcendental": ("sin(a)*cos(b) + tanh(c)",
                       lambda a, b, c, m: m.sin(a) * m.cos(b) + m.tanh(c)),
    # the transcendental chain's parts alone (one read, one write each)
    "sin": ("sin(a)", lambda a, b, c, m: m.sin(a)),
    "cos": ("cos(a)", lambda a, b, c, m: m.cos(a)),
    "tanh": ("tanh(a)", lambda a, b, c, m: m.tanh(a)),
}


_NUMBA: dict = {}


def numba_chain(chain):
    """The chain as a Numba parallel loop writing a preallocated float32 result (compiled once)."""
    if chain not in _NUMBA:
        numba = need_numba()
        ufuncs = {name: getattr(np, name) for name in ("exp", "sin", "cos", "tanh")}
        scalar = numba.njit(eval("lambda a, b, c: " + CHAINS[chain][0], ufuncs))

        @numba.njit(parallel=True)
        def run(a, b, c, out):
            for i in numba.prange(a.size):
                out[i] = scalar(a[i], b[i], c[i])
        _NUMBA[chain] = run
    return _NUMBA[chain]


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("impl", ["poot", "numpy", "numexpr", "numba"])
def test_chain(benchmark, data, chain, impl):
    benchmark.group = f"elementwise-{chain}-10M-f32"
    a, b, c, pa, pb, pc = data
    expr, fn = CHAINS[chain]
    if impl == "poot":
        run = lambda: fn(pa, pb, pc, pt).numpy()  # noqa: E731
    elif impl == "numpy":
        run = lambda: fn(a, b, c, np)  # noqa: E731
    elif impl == "numba":
        kernel, out = numba_chain(chain), np.empty_like(a)
        run = lambda: (kernel(a, b, c, out), out)[1]  # noqa: E731
        run()                                          # compile outside the timing
    else:
        ne = need_numexpr()
        run = lambda: ne.evaluate(expr, local_dict={"a": a, "b": b, "c": c})  # noqa: E731
    out = benchmark(run)
    np.testing.assert_allclose(out, fn(a, b, c, np), rtol=2e-5, atol=1e-5)
