"""The generated CPU GEMV (poot/jit/codegen/cpu_gemv.py): NumPy's float64 answer for float32, bfloat16
and float16 weights, eager and jitted, with transposed weights read in place and no float32 copy of a
16-bit weight."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import poot as pt
from poot import dtypes as dt
from poot.jit.codegen import cpu_gemv
from poot.jit.runtime import execute, matvec
from tests.tolerance import assert_close

DTYPES = ["float32", "bfloat16", "float16"]


@pytest.fixture(autouse=True)
def _the_default_rule(monkeypatch):
    """Each test starts from the default rule (a test forcing a path sets it again)."""
    monkeypatch.delenv("POOT_CPU_GEMV", raising=False)


def _operands(shape_w, shape_x, dtype, seed=0):
    """Poot arrays of `dtype` and their exact values in float64 (the inputs rounded to `dtype` first)."""
    rng = np.random.default_rng(seed)
    d = getattr(pt, dtype)
    w = pt.asarray(rng.standard_normal(shape_w).astype(np.float32)).astype(d)
    x = pt.asarray(rng.standard_normal(shape_x).astype(np.float32)).astype(d)
    pt.realize(w, x)
    return w, x, w.numpy().astype(np.float64), x.numpy().astype(np.float64)


def _check(got, ref, dtype, k):
    """float32 results carry the accumulation's error (K roundings); 16-bit ones their one rounding at
    the store, which is larger than the float32 accumulation's at these sizes."""
    assert_close(got, ref, getattr(pt, dtype), ops=max(k, 1) if dtype == "float32" else 1)


def _programs():
    return list(execute._PROGRAMS.values())


def _matmul_actions(programs):
    """(kind, what) of each action of the programs' matmul plan steps."""
    out = []
    for prog in programs:
        for step, (_, actions, _) in zip(prog.plan.steps, prog.steps):
            if step.kind == "matmul":
                out += [(a[0], a[1]) for a in actions]
    return out


def _generated_only(programs, dtype):
    """Every matmul of `programs` ran as launches of the generated kernels, reading its operands in
    their own dtype (`dtype`; None: whichever they have)."""
    actions = _matmul_actions(programs)
    assert actions, "no matmul step was planned"
    for kind, what in actions:
        assert kind == "launch", f"a matmul ran as a {kind} step, not the generated kernel"
        a, b = what.kernel.params[:2]
        assert a.dtype is b.dtype and (dtype is None or a.dtype is dtype), \
            f"the kernel reads {a.dtype.name} and {b.dtype.name}, not the operands as stored"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, k", [(1, 1), (1, 5), (3, 17), (37, 300), (64, 129), (5, 1000)])
def test_weight_times_vector_matches_numpy(dtype, n, k):
    w, x, w64, x64 = _operands((n, k), (k,), dtype)
    execute._PROGRAMS.clear()
    _check((w @ x).numpy(), w64 @ x64, dtype, k)
    if dtype != "float32" or matvec.GENERATED_F32:           # 16-bit weights always; float32 by the rule
        _generated_only(_programs(), getattr(pt, dtype))
    else:
        assert [kind for kind, _ in _matmul_actions(_programs())] == ["host"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [2, 3, 8])
def test_a_few_columns_share_one_pass_over_the_weight(monkeypatch, dtype, m):
    monkeypatch.setenv("POOT_CPU_GEMV", "generated")
    w, x, w64, x64 = _operands((13, 70), (70, m), dtype, seed=m)
    execute._PROGRAMS.clear()
    _check((w @ x).numpy(), w64 @ x64, dtype, 70)
    _generated_only(_programs(), getattr(pt, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k, n", [(1, 7, 100), (1, 300, 1001), (3, 33, 257), (8, 64, 40), (2, 1, 70),
                                     (1, 1000, 9 + cpu_gemv.MAX_COLUMNS)])
def test_a_few_rows_times_a_matrix(monkeypatch, dtype, m, k, n):
    """x @ w with w stored [K, N]: the columns-shape kernels (pieces of K, then their combine)."""
    monkeypatch.setenv("POOT_CPU_GEMV", "generated")
    x, w, x64, w64 = _operands((m, k), (k, n), dtype, seed=k)
    execute._PROGRAMS.clear()
    _check((x @ w).numpy(), x64 @ w64, dtype, k)
    _generated_only(_programs(), getattr(pt, dtype))
    names = [what.kernel.name.rsplit("_", 1)[-1] for _, what in _matmul_actions(_programs())]
    assert names == ["pieces", "combine"]


def test_a_row_vector_times_a_16_bit_matrix_is_claimed_by_default():
    x, w, x64, w64 = _operands((1, 200), (200, 300), "bfloat16", seed=7)
    xb, wb, xb64, wb64 = _operands((2, 3, 1, 40), (3, 40, 50), "float16", seed=8)   # batched, broadcast
    execute._PROGRAMS.clear()
    _check((x @ w).numpy(), x64 @ w64, "bfloat16", 200)
    _check((x.reshape((200,)) @ w).numpy(), x64[0] @ w64, "bfloat16", 200)
    _check((xb @ wb).numpy(), xb64 @ wb64, "float16", 40)
    _generated_only(_programs(), None)


def test_products_with_many_rows_and_columns_stay_on_the_host_path():
    w, x, w64, x64 = _operands((cpu_gemv.MAX_COLUMNS + 1, 10), (10, cpu_gemv.MAX_COLUMNS + 1), "bfloat16")
    execute._PROGRAMS.clear()
    _check((w @ x).numpy(), w64 @ x64, "bfloat16", 10)
    assert [kind for kind, _ in _matmul_actions(_programs())] == ["host"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_and_broadcast_matrices(monkeypatch, dtype):
    monkeypatch.setenv("POOT_CPU_GEMV", "generated")
    w, x, w64, x64 = _operands((2, 3, 9, 33), (3, 33, 1), dtype)      # x's batch broadcasts over w's
    _check((w @ x).numpy(), w64 @ x64, dtype, 33)
    w2, x2, w2_64, x2_64 = _operands((9, 33), (4, 33, 2), dtype, seed=1)   # one matrix, four vectors
    execute._PROGRAMS.clear()
    _check((w2 @ x2).numpy(), w2_64 @ x2_64, dtype, 33)
    _generated_only(_programs(), getattr(pt, dtype))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_transposed_weight_is_read_in_place(dtype):
    """x @ w.T (a linear layer) for one row: no transpose kernel, no copy; the GEMV reads w's rows."""
    w, x, w64, x64 = _operands((45, 67), (67,), dtype, seed=2)
    x2 = x.reshape((1, 67))
    b = pt.asarray(np.ones((3, 1, 67), np.float32)).astype(getattr(pt, dtype))
    execute._PROGRAMS.clear()
    _check((x @ w.T).numpy(), x64 @ w64.T, dtype, 67)
    _check((x2 @ w.T).numpy(), x64[None] @ w64.T, dtype, 67)
    _check((b @ w.T).numpy(), np.ones((3, 1, 67)) @ w64.T, dtype, 67)
    programs = _programs()
    _generated_only(programs, getattr(pt, dtype))
    kinds = {step.name.split("_", 1)[1] for prog in programs for step in prog.plan.steps if step.kind != "alias"}
    assert not any("transpose" in k for k in kinds), f"a transpose was planned: {kinds}"


def test_several_rows_keep_the_transpose():
    """Turning x @ w.T around for several rows would transpose x and the result instead: left alone."""
    from poot.fuse.plan import plan_fusion
    from poot.trace.lazy import build_graph

    w, x, w64, x64 = _operands((45, 67), (3, 67), "bfloat16", seed=9)
    y = x @ w.T
    steps = plan_fusion(build_graph([y._node])[0]).steps
    assert any("transpose" in s.name for s in steps)
    _check(y.numpy(), x64 @ w64.T, "bfloat16", 67)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 23), k=st.integers(1, 70), m=st.integers(1, cpu_gemv.MAX_COLUMNS),
       dtype=st.sampled_from(["bfloat16", "float16"]), rows_first=st.booleans())
def test_any_small_shape(n, k, m, dtype, rows_first):
    """w @ x (rows-shape) or x @ w (columns-shape, when the other side is wider) for odd shapes."""
    if rows_first:
        a, b, a64, b64 = _operands((n, k), (k, m), dtype, seed=n * k)
    else:
        a, b, a64, b64 = _operands((m, k), (k, n + cpu_gemv.MAX_COLUMNS), dtype, seed=n * k)
    _check((a @ b).numpy(), a64 @ b64, dtype, k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jitted_linear_layers(monkeypatch, dtype):
    """Two layers in one jitted function, as in decode: both products are launches of the program."""
    monkeypatch.setenv("POOT_CPU_GEMV", "generated")
    w1, x, w1_64, x64 = _operands((40, 24), (24,), dtype, seed=3)
    w2, _, w2_64, _ = _operands((24, 40), (1,), dtype, seed=4)

    @pt.jit
    def mlp(a, b, v):
        h = pt.maximum(v @ a.T, 0.0)
        return b @ h

    execute._PROGRAMS.clear()
    for _ in range(3):                              # traced, recorded, then replayed
        got = mlp(w1, w2, x).numpy()
    hidden = np.maximum(x64 @ w1_64.T, 0.0).astype(np.float32)     # rounded to the dtype, as poot stores it
    hidden = pt.asarray(hidden).astype(getattr(pt, dtype)).numpy().astype(np.float64)
    _check(got, w2_64 @ hidden, dtype, 40)
    _generated_only(_programs(), getattr(pt, dtype))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_float32_vector_reads_the_16_bit_weight_as_stored(dtype):
    """w16 @ x32 and x32 @ w16.T promote w to float32; the kernel reads w itself and the program skips
    the conversion (an empty step), so no float32 copy of w is written."""
    w, _, w64, _ = _operands((29, 150), (1,), dtype, seed=10)
    x = pt.asarray(np.random.default_rng(11).standard_normal(150).astype(np.float32))
    x64 = x.numpy().astype(np.float64)
    f = pt.jit(lambda a, v: v @ a.T)
    execute._PROGRAMS.clear()
    for got in ((w @ x).numpy(), f(w, x).numpy(), f(w, x).numpy()):
        assert got.dtype == np.float32
        _check(got, w64 @ x64, "float32", 150)
    for prog in _programs():
        kinds = {step.kind: actions for step, (_, actions, _) in zip(prog.plan.steps, prog.steps)}
        launch = [what for kind, what in _matmul_actions([prog])]
        assert [p.dtype for p in launch[0].kernel.params[:2]] == [getattr(pt, dtype), pt.float32]
        assert kinds["pointwise"] == [], "the conversion of the weight still ran"


def test_a_donated_weight_lives_until_the_product_reads_it():
    """The product reads the 16-bit input after its (skipped) conversion: a donated input's buffer is
    not handed to the value computed in between (here the vector, of the weight's byte size)."""
    k = 48
    w, _, w64, _ = _operands((2, k), (1,), "bfloat16", seed=12)      # 4 * k bytes, as a float32 [k]
    v = pt.asarray(np.linspace(-1, 1, k, dtype=np.float32))

    def step(a, u):
        wide = a.astype(pt.float32)       # the conversion first, then a value of a's size, then the product
        return wide @ (u * 2.0)

    f = pt.jit(step, donate_argnums=(0,))
    for _ in range(3):
        got = f(pt.asarray(w.numpy()), v).numpy()       # a fresh donated copy each call
        _check(got, w64 @ (v.numpy().astype(np.float64) * 2.0), "float32", k)


def test_no_float32_copy_of_a_16_bit_weight():
    """The call allocates nothing near the size of the weight widened to float32 (the host path did)."""
    n, k = 512, 1024
    w, x, w64, x64 = _operands((n, k), (k,), "bfloat16", seed=5)
    f = pt.jit(lambda a, v: a @ v)
    f(w, x).numpy()
    tracemalloc.start()
    try:
        got = f(w, x).numpy()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _check(got, w64 @ x64, "bfloat16", k)
    assert peak < n * k * 2 // 4, f"the call allocated {peak} bytes (the weight is {n * k * 2})"


def test_the_host_path_still_widens_when_asked(monkeypatch):
    """POOT_CPU_GEMV=blas keeps 16-bit products on the host (the path to compare against)."""
    monkeypatch.setenv("POOT_CPU_GEMV", "blas")
    w, x, w64, x64 = _operands((20, 30), (30,), "bfloat16", seed=6)
    execute._PROGRAMS.clear()
    _check((w @ x).numpy(), w64 @ x64, "bfloat16", 30)
    assert [kind for kind, _ in _matmul_actions(_programs())] == ["host"]


@pytest.mark.parametrize("shape_w, shape_x", [((0, 5), (5,)), ((4, 0), (0,)), ((3, 5), (5, 0))])
def test_empty_products(shape_w, shape_x):
    w, x, w64, x64 = _operands(shape_w, shape_x, "bfloat16")
    got = (w @ x).numpy()
    assert got.shape == (w64 @ x64).shape
    assert not got.astype(np.float64).any()


def test_non_finite_values_propagate():
    w = np.ones((5, 40), np.float32)
    w[1, 3], w[2, 39], w[3, 0] = np.nan, np.inf, -np.inf
    x = np.ones(40, np.float32)
    got = (pt.asarray(w).astype(pt.bfloat16) @ pt.asarray(x).astype(pt.bfloat16)).numpy().astype(np.float64)
    assert_close(got, w.astype(np.float64) @ x, dt.bfloat16)


def test_the_kernel_refuses_products_it_does_not_compute():
    from poot.fuse.plan import plan_fusion
    from poot.trace.lazy import build_graph

    y = pt.asarray(np.ones((4, 3))) @ pt.asarray(np.ones(3))        # float64
    step = next(s for s in plan_fusion(build_graph([y._node])[0]).steps if s.kind == "matmul")
    assert not cpu_gemv.applies(step)
    with pytest.raises(pt.PootError, match=r"k1_matmul .*f64.* is not a product this kernel computes"):
        cpu_gemv.generate_cpu_gemv(step)
