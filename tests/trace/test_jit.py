"""@pt.jit: one trace per signature, replayed programs equal to eager results, pytrees, weak scalars,
static arguments, donation, TracerError at the user's line, compile logs and `.lower()`."""
from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
from typing import NamedTuple

import numpy as np
import pytest

import poot as pt

HERE = __file__


def rng(seed=0):
    return np.random.default_rng(seed)


def softmax_np(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_one_trace_for_repeated_calls_and_one_more_per_new_shape_dtype_or_static(device):
    @pt.jit(static_argnums=1)
    def f(x, axis):
        return (x * 2.0).sum(axis=axis)

    a = rng().standard_normal((3, 4)).astype(np.float32)
    for _ in range(3):
        np.testing.assert_allclose(f(pt.array(a), 0).numpy(), (a * 2).sum(0), rtol=1e-5)
    assert f.trace_count == 1
    f(pt.array(a[:2]), 0)                                   # new shape
    assert f.trace_count == 2
    f(pt.array(a.astype(np.float64)), 0)                    # new dtype
    assert f.trace_count == 3
    np.testing.assert_allclose(f(pt.array(a), 1).numpy(), (a * 2).sum(1), rtol=1e-5)  # new static
    assert f.trace_count == 4
    f(pt.array(a), 1)
    assert f.trace_count == 4


def test_a_new_python_scalar_value_does_not_retrace_and_stays_weakly_typed(device):
    @pt.jit
    def scale(x, s):
        return x * s + s

    a = np.arange(5, dtype=np.float32)
    for s in (2.0, 3.5, -1.0):
        y = scale(pt.array(a), s)
        assert y.dtype == pt.float32                        # a Python float does not widen float32
        np.testing.assert_allclose(y.numpy(), a * np.float32(s) + np.float32(s), rtol=1e-6)
    assert scale.trace_count == 1
    scale(pt.array(a), 2)                                   # an int is another signature
    assert scale.trace_count == 2


def test_weak_scalars_combined_with_each_other_stay_weak(device):
    @pt.jit
    def f(x, n):
        return x * (1.0 / n)

    y = f(pt.array(np.ones(3, np.float32)), 4.0)
    assert y.dtype == pt.float32
    np.testing.assert_allclose(y.numpy(), 0.25)


def test_an_int_scalar_argument_that_does_not_fit_the_array_dtype_is_refused(device):
    @pt.jit
    def add(x, k):
        return x + k

    x = pt.array(np.arange(4, dtype=np.int8))
    assert add(x, 3).numpy().tolist() == [3, 4, 5, 6]
    with pytest.raises(pt.DTypeError, match="out of bounds for int8"):
        add(x, 300)


def test_jitted_results_equal_eager_ones_for_a_model_step(device):
    def step(x, w, b):
        h = pt.nn.relu(x @ w + b)
        return pt.nn.softmax(h, axis=-1), (h * h).mean()

    r = rng(1)
    x, w, b = (r.standard_normal(s).astype(np.float32) for s in ((8, 16), (16, 10), (10,)))
    eager = step(pt.array(x), pt.array(w), pt.array(b))
    jitted = pt.jit(step)
    for _ in range(2):
        out = jitted(pt.array(x), pt.array(w), pt.array(b))
        np.testing.assert_allclose(out[0].numpy(), eager[0].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[1].numpy(), eager[1].numpy(), rtol=1e-5)
    h = np.maximum(x @ w + b, 0)
    np.testing.assert_allclose(out[0].numpy(), softmax_np(h), rtol=1e-4, atol=1e-6)


def test_numpy_arrays_are_transferred_and_results_are_poot_arrays(device):
    f = pt.jit(lambda a, b: a * b)
    a, b = np.arange(6.0).reshape(2, 3), np.full((3,), 2.0)
    y = f(a, b)
    assert isinstance(y, pt.Array) and y.device == device
    np.testing.assert_array_equal(y.numpy(), a * b)
    f(a + 1, b)
    assert f.trace_count == 1


class Params(NamedTuple):
    w: object
    b: object


@dataclasses.dataclass
class State:
    params: Params
    step: object
    name: str = "s"


def test_pytrees_round_trip(device):
    @pt.jit
    def update(state, batch):
        p = state.params
        grads = {"w": batch["x"].sum(axis=0), "b": batch["y"]}
        new = Params(p.w - 0.1 * grads["w"], p.b - 0.1 * grads["b"])
        return State(new, state.step + 1, state.name), [new.w.sum(), (new.b, None)]

    w, b = np.ones(3, np.float32), np.zeros(2, np.float32)
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(2, np.float32)
    state = State(Params(pt.array(w), pt.array(b)), 0)
    for k in range(1, 3):
        state, extra = update(state, {"x": pt.array(x), "y": pt.array(y)})
        assert isinstance(state, State) and isinstance(state.params, Params) and state.name == "s"
        assert isinstance(extra, list) and isinstance(extra[1], tuple) and extra[1][1] is None
        assert int(state.step) == k
    w_np, b_np = w, b
    for _ in range(2):   # the same float32 steps in NumPy
        w_np, b_np = w_np - np.float32(0.1) * x.sum(0), b_np - np.float32(0.1) * y
    tol = 8 * np.finfo(np.float32).eps   # kernels may contract a - b*c into one fma
    np.testing.assert_allclose(state.params.w.numpy(), w_np, rtol=tol, atol=tol)
    np.testing.assert_allclose(state.params.b.numpy(), b_np, rtol=tol, atol=tol)
    np.testing.assert_allclose(float(extra[0]), w_np.sum(), rtol=1e-6, atol=1e-6)
    assert update.trace_count == 2   # the Python int `step` of the first call, then an array


def test_python_control_flow_on_a_traced_value_raises_tracer_error_at_the_users_line(device):
    @pt.jit
    def f(x):
        if x.sum() > 0:                                     # the line the error names
            return x
        return -x

    line = f.fn.__code__.co_firstlineno + 2
    with pytest.raises(pt.TracerError) as info:
        f(pt.ones(3))
    msg = str(info.value)
    assert f"{HERE}:{line}" in msg
    for hint in ("pt.where", "pt.cond", "pt.fori_loop", "pt.while_loop", "static_argnums"):
        assert hint in msg


@pytest.mark.parametrize("use", [lambda x: float(x.sum()), lambda x: x.numpy(), lambda x: x.sum().item(),
                                 lambda x: range(x.shape[0] + x.sum().astype(pt.int64))])
def test_concrete_value_requests_inside_jit_raise_tracer_error(device, use):
    with pytest.raises(pt.TracerError, match="traced"):
        pt.jit(use)(pt.ones(3))


def test_static_argnames_and_unhashable_static_values(device):
    @pt.jit(static_argnames="shape")
    def make(x, shape):
        return x.reshape(shape) + 1

    x = pt.arange(6)
    assert make(x, shape=(2, 3)).shape == (2, 3)
    assert make(x, shape=(3, 2)).shape == (3, 2)
    assert make.trace_count == 2
    with pytest.raises(pt.PootError, match="'shape' is a list, which is not hashable"):
        make(x, shape=[2, 3])


def test_the_signature_cache_is_bounded(device):
    f = pt.jit(lambda x: x + 1, cache_size=2)
    for n in range(1, 6):
        assert f(pt.zeros(n)).shape == (n,)
    assert len(f._cache) == 2 and f.trace_count == 5
    f(pt.zeros(1))                                          # dropped from the cache: traced again
    assert f.trace_count == 6


def test_log_compiles_names_the_argument_that_changed(device, monkeypatch, caplog):
    monkeypatch.setenv("POOT_LOG_COMPILES", "1")

    @pt.jit
    def f(x, y):
        return x + y

    with caplog.at_level(logging.WARNING, logger="poot.jit"):
        f(pt.zeros(2), pt.zeros(2))
        f(pt.zeros(2), pt.zeros(1))
    text = caplog.text
    assert "first call" in text
    assert "'y' changed" in text and "f64[2]" in text and "f64[1]" in text


def test_a_warning_names_the_argument_that_keeps_changing(device):
    f = pt.jit(lambda x, n: x + 1)
    with pytest.warns(pt.RetraceWarning, match="'x' changed"):
        for n in range(1, 10):
            f(pt.zeros(n), 1)


def test_closed_over_lazy_arrays_are_computed_once_and_constant(device):
    table = pt.array(np.arange(4.0)) * 10                   # lazy, outside the function
    f = pt.jit(lambda x: x + table)
    np.testing.assert_array_equal(f(pt.ones(4)).numpy(), 1 + np.arange(4.0) * 10)
    assert table.is_realized
    np.testing.assert_array_equal(f(pt.zeros(4)).numpy(), np.arange(4.0) * 10)


def test_a_jitted_function_called_inside_another_inlines(device):
    inner = pt.jit(lambda x: x * 2)
    outer = pt.jit(lambda x: inner(x) + 1)
    np.testing.assert_array_equal(outer(pt.ones(3)).numpy(), [3.0, 3.0, 3.0])
    assert inner.trace_count == 0 and outer.trace_count == 1


def test_methods_can_be_jitted(device):
    class Model:
        def __init__(self):
            self.w = pt.array(np.float32(3.0))

        @pt.jit
        def __call__(self, x):
            return x * 2

    np.testing.assert_array_equal(Model()(pt.ones(2)).numpy(), [2.0, 2.0])


def test_identity_and_constant_results(device):
    f = pt.jit(lambda x, s: (x, s, 7, "label"))
    x = pt.array(np.arange(3.0))
    y, s, seven, label = f(x, 2.5)
    np.testing.assert_array_equal(y.numpy(), np.arange(3.0))
    assert float(s) == 2.5 and seven == 7 and label == "label"


def test_donated_arrays_back_results_and_cannot_be_used_again(device):
    @pt.jit(donate_argnums=0)
    def f(x):
        return pt.cumsum(pt.exp(x))

    a = rng(2).standard_normal(1000).astype(np.float32)
    x = pt.array(a)
    address = x._node.buf.handle.__array_interface__["data"][0] if device == "cpu" else None
    y = f(x)
    np.testing.assert_allclose(y.numpy(), np.cumsum(np.exp(a)), rtol=1e-4)
    if device == "cpu":    # the scan's result took the buffer x gave up once exp(x) was done
        assert y._node.buf.handle.__array_interface__["data"][0] == address
    with pytest.raises(pt.PootError, match="donated"):
        x.numpy()
    with pytest.raises(pt.PootError, match="donated"):
        (x + 1).numpy()
    with pytest.raises(pt.PootError, match="both static and donated"):
        pt.jit(lambda x: x, static_argnums=0, donate_argnums=0)


def test_concurrent_calls_give_each_caller_its_own_result(device):
    f = pt.jit(lambda x: pt.sqrt(x * x + 1.0).sum())
    inputs = [np.full(257, k, np.float32) for k in range(8)]
    results = {}

    def work(k):
        with pt.device(device):         # the current device is per thread: each caller opens the one under test
            for _ in range(20):
                results[k] = float(f(pt.array(inputs[k])))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(8):
        np.testing.assert_allclose(results[k], np.sqrt(inputs[k].astype(np.float64) ** 2 + 1).sum(), rtol=1e-5)


def test_lower_shows_graph_plan_kir_llvm_and_assembly(device):
    def f(x):
        e = pt.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    low = pt.jit(f).lower(pt.ones((4, 8), dtype=pt.float32))
    assert "exp" in low.as_text("graph") and "max" in low.as_text("graph")
    assert "1 steps" in low.as_text("plan")             # softmax is one kernel
    if device != "oracle":                              # the oracle compiles nothing
        assert len(low.kernels) >= 1
        assert "kernel" in low.as_text("kir")
        assert "define" in low.as_text("llvm")
        if device not in ("wgpu", "vulkan") or shutil.which("spirv-dis"):   # SPIR-V text needs spirv-dis
            assert len(low.as_text("asm")) > 100
    with pytest.raises(pt.PootError, match="unknown stage 'bogus'"):
        low.as_text("bogus")


def test_jit_refuses_what_is_not_a_function():
    with pytest.raises(pt.PootError, match="needs a function"):
        pt.jit(3)


def test_a_jitted_function_returns_bfloat16_and_replays(device):
    """bfloat16 results of a jitted function (the CPU reads them back as their bits) and a weak
    Python scalar bound to a 2-byte bfloat16 buffer on replay."""
    import ml_dtypes

    f = pt.jit(lambda x, s: x * 2 + s)
    a = (np.arange(6) - 2.5).astype(ml_dtypes.bfloat16)
    for s in (1.0, 0.5):
        got = f(pt.asarray(a), s)
        assert got.dtype is pt.bfloat16
        assert np.array_equal(got.numpy(), a * ml_dtypes.bfloat16(2) + ml_dtypes.bfloat16(s))
    assert f.trace_count == 1


def test_static_arguments_equal_in_value_but_not_in_type_trace_apart(device):
    @pt.jit(static_argnums=1)
    def div(x, c):
        return x / c if isinstance(c, float) else x // c

    x = pt.arange(4)
    np.testing.assert_array_equal(div(x, 2).numpy(), np.arange(4) // 2)
    np.testing.assert_allclose(div(x, 2.0).numpy(), np.arange(4) / 2.0)
    np.testing.assert_array_equal(div(x, True).numpy(), np.arange(4) // True)

    @pt.jit(static_argnames="c")
    def scale(x, c):
        return x * c

    assert scale(x, c=(2, 3)[0]).dtype == pt.int64
    assert scale(x, c=2.0).dtype == pt.float64


def test_arguments_updated_in_place_come_back_to_the_caller_on_every_call(device):
    def bump(x, params):
        x[0] += 1.0
        for p in params:
            p -= 0.5
        return x.sum()

    jitted = pt.jit(bump)
    eager_x, eager_ps = pt.zeros(3), [pt.ones(2), pt.ones(4)]
    x, ps = pt.zeros(3), [pt.ones(2), pt.ones(4)]
    for _ in range(3):
        want = bump(eager_x, eager_ps)
        got = jitted(x, ps)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(x.numpy(), [3.0, 0.0, 0.0])
    for p, q in zip(ps, eager_ps):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        np.testing.assert_array_equal(p.numpy(), np.full(p.shape, -0.5))
    assert jitted.trace_count == 1


def test_python_int_arguments_outside_int64_are_refused_not_wrapped(device):
    f = pt.jit(lambda x, n: x + n)
    np.testing.assert_array_equal(f(pt.zeros(2), -2**63).numpy(), np.zeros(2) + float(-2**63))
    for n in (2**63, 2**70, -2**63 - 1):
        with pytest.raises(pt.PootError, match="does not fit int64"):
            f(pt.zeros(2), n)


def test_partials_callable_objects_and_bad_argument_counts():
    import functools

    f = pt.jit(functools.partial(lambda a, x: a * x, 3.0))
    np.testing.assert_array_equal(f(pt.ones(2)).numpy(), [3.0, 3.0])
    assert f.__name__ == "<lambda>"

    class AddOne:
        def __call__(self, x):
            return x + 1

    np.testing.assert_array_equal(pt.jit(AddOne())(pt.ones(2)).numpy(), [2.0, 2.0])
    g = pt.jit(lambda x, y: x + y)
    for args, kwargs in (((pt.ones(2),), {}), ((pt.ones(2), 1, 2), {}), ((pt.ones(2),), {"z": 1})):
        with pytest.raises(pt.PootError, match=r"cannot call it with these arguments.*takes <lambda>\(x, y\)"):
            g(*args, **kwargs)


def test_retrace_warning_points_at_the_callers_line():
    h = pt.jit(lambda x: x * 2)
    with pytest.warns(pt.RetraceWarning) as caught:
        for n in range(1, 12):
            h(pt.ones(n))
    assert caught[0].filename == HERE
