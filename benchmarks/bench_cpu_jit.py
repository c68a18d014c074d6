"""[C] per-call time of a jitted function on 10-element float32 arrays: one tiny op, and a chain of 20
ops, beside JAX's `jit` and Numba's `njit` (each where it installs) and plain NumPy, in one run.
Compare medians within a group; what is measured is the call overhead, not arithmetic."""
import numpy as np
import pytest

import poot as pt

N = 10


F = np.float32   # float32 constants: every framework keeps the float32 dtype (Numba needs it)


def one_op(x):
    return x * F(2.0)


def chain_20(x):
    # 20 elementwise ops; written once, run by every framework
    for _ in range(5):
        x = x * F(1.0001) + F(0.5)
        x = x - F(0.25)
        x = x * F(0.5)
    for _ in range(5):
        x = x + F(1.0)
    return x


CASES = {"one-op": one_op, "20-op-chain": chain_20}


@pytest.fixture
def data():
    return np.arange(N, dtype=np.float32)


@pytest.mark.parametrize("case", CASES)
def test_poot_jit(benchmark, case, data):
    benchmark.group = f"jit-call-{case}"
    f = pt.jit(CASES[case])
    x = pt.array(data)
    np.testing.assert_allclose(f(x).numpy(), CASES[case](data), rtol=1e-5)
    benchmark(f, x)


@pytest.mark.parametrize("case", CASES)
def test_numpy(benchmark, case, data):
    benchmark.group = f"jit-call-{case}"
    benchmark(CASES[case], data)


@pytest.mark.parametrize("case", CASES)
def test_jax_jit(benchmark, case, data):
    jax = pytest.importorskip("jax")
    benchmark.group = f"jit-call-{case}"
    f = jax.jit(CASES[case])
    x = jax.numpy.asarray(data)
    f(x).block_until_ready()
    benchmark(lambda: f(x).block_until_ready())


@pytest.mark.parametrize("case", CASES)
def test_numba_njit(benchmark, case, data):
    numba = pytest.importorskip("numba")
    benchmark.group = f"jit-call-{case}"
    f = numba.njit(CASES[case])
    f(data)
    benchmark(f, data)
