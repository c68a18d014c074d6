"""Property tests: random expression graphs (elementwise, reductions, movement and indexing mixed)
built step by step in NumPy and in poot from the same drawn choices, then compared."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poot as pt
from tolerance import assert_close

# the device fixture only makes a device current: one setup serves every example
SETTINGS = settings(max_examples=int(os.environ.get("POOT_PROPERTY_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


def _unary(data, a, x, is_float):
    ops = [("neg", np.negative, pt.negative), ("abs", np.abs, pt.abs)]
    if is_float:
        ops += [("tanh", np.tanh, pt.tanh), ("sin", np.sin, pt.sin),
                ("sqrt_abs", lambda v: np.sqrt(np.abs(v)), lambda v: pt.sqrt(pt.abs(v))),
                ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), pt.nn.sigmoid)]
    name, f, g = data.draw(st.sampled_from(ops), label="unary")
    return f(a), g(x)


def _binary(data, a, x, b, y, is_float):
    ops = [("add", np.add, pt.add), ("sub", np.subtract, pt.subtract), ("max", np.maximum, pt.maximum),
           ("min", np.minimum, pt.minimum),
           ("where", lambda p, q: np.where(p > q, p, q * 2), lambda p, q: pt.where(p > q, p, q * 2))]
    if is_float:
        ops.append(("mul", lambda p, q: np.tanh(p) * q, lambda p, q: pt.tanh(p) * q))
    name, f, g = data.draw(st.sampled_from(ops), label="binary")
    return f(a, b), g(x, y)


def _reduce(data, a, x, is_float):
    if a.ndim == 0:
        return a, x
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)), label="axis")
    keep = data.draw(st.booleans(), label="keepdims")
    ops = ["sum", "any"] + (["mean"] if is_float else []) + (["max"] if a.size and (
        axis is None or a.shape[axis]) else [])
    name = data.draw(st.sampled_from(ops), label="reduction")
    r = getattr(np, name)(a, axis=axis, keepdims=keep)
    s = getattr(pt, name)(x, axis=axis, keepdims=keep)
    if name == "any":
        return r.astype(a.dtype), s.astype(x.dtype)
    return np.asarray(r).astype(a.dtype), s.astype(x.dtype)


def _move(data, a, x):
    choices = ["flat", "expand", "flip", "slice", "concat", "cumsum"]
    if a.ndim >= 2:
        choices += ["transpose", "swap"]
    name = data.draw(st.sampled_from(choices), label="movement")
    if name == "flat":
        return a.reshape(-1), x.reshape(-1)
    if name == "expand":
        ax = data.draw(st.integers(-a.ndim - 1, a.ndim), label="ax")
        return np.expand_dims(a, ax), pt.expand_dims(x, ax)
    if name == "flip":
        return np.flip(a), pt.flip(x)
    if name == "transpose":
        return a.T, x.T
    if name == "swap":
        return np.swapaxes(a, 0, -1), pt.swapaxes(x, 0, -1)
    if name == "concat":
        if a.ndim == 0:
            return a, x
        return np.concatenate([a, a[::-1]], axis=-1), pt.concatenate([x, x[::-1]], axis=-1)
    if name == "cumsum":
        return np.cumsum(a, axis=None).astype(a.dtype), pt.cumsum(x, axis=None).astype(x.dtype)
    if a.ndim == 0:
        return a, x
    n = a.shape[0]
    start = data.draw(st.integers(-n - 1, n + 1), label="start")
    step = data.draw(st.sampled_from([1, 2, -1, -3]), label="step")
    return a[start::step], x[start::step]


def _run(data, dtype):
    is_float = np.dtype(dtype).kind == "f"
    shape = data.draw(shapes, label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    raw = rng.standard_normal(shape) * 2 if is_float else rng.integers(-20, 20, size=shape)
    a = np.asarray(raw).astype(dtype)
    x = pt.asarray(a)
    steps = data.draw(st.integers(1, 8), label="steps")
    for _ in range(steps):
        kind = data.draw(st.sampled_from(["unary", "binary", "reduce", "move", "index"]), label="kind")
        if kind == "unary":
            a, x = _unary(data, a, x, is_float)
        elif kind == "binary":
            b = np.asarray(rng.standard_normal(a.shape[-1:]) if is_float
                           else rng.integers(-5, 5, size=a.shape[-1:])).astype(dtype)
            a, x = _binary(data, a, x, b, pt.asarray(b), is_float)
        elif kind == "reduce":
            a, x = _reduce(data, a, x, is_float)
        elif kind == "move":
            a, x = _move(data, a, x)
        elif a.ndim and a.shape[0]:
            idx = data.draw(st.lists(st.integers(-a.shape[0], a.shape[0] - 1), max_size=4), label="idx")
            a, x = a[np.array(idx, dtype=np.int64)], x[np.array(idx, dtype=np.int64)]
        a = np.asarray(a)
        assert x.shape == a.shape
    return a, x, steps


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@SETTINGS
@given(data=st.data())
def test_random_float_graphs_match_numpy(device, dtype, data):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of an empty slice
        a, x, steps = _run(data, dtype)
    assert x.dtype.np == a.dtype
    assert_close(x.numpy(), a, x.dtype, ops=8 * steps * max(1, a.size) + 64)


@SETTINGS
@given(data=st.data())
def test_random_integer_graphs_match_numpy_exactly(device, data):
    with np.errstate(all="ignore"):
        a, x, _ = _run(data, np.int32)
    assert x.dtype is pt.int32
    assert np.array_equal(x.numpy(), a)


@SETTINGS
@given(shape_a=shapes, shape_b=shapes)
def test_broadcasting_agrees_with_numpy(device, shape_a, shape_b):
    a, b = np.ones(shape_a), np.ones(shape_b)
    try:
        e = a + b
    except ValueError:
        with pytest.raises(pt.ShapeError):
            pt.asarray(a) + pt.asarray(b)
        return
    assert (pt.asarray(a) + pt.asarray(b)).shape == e.shape
