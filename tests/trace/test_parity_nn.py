"""pt.nn against NumPy reference formulas computed in float64 (rounded to the result dtype): every
floating dtype (integers compute in NumPy's float type), 0-d, empty and non-contiguous inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from tolerance import assert_close

from .helpers import ALL_LAYOUTS, ids, layout_pair, values


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


NN = {  # name -> (poot call, float64 reference, applies to 0-d/empty inputs)
    "relu": (lambda x: pt.nn.relu(x), lambda a: np.maximum(a, 0), True),
    "sigmoid": (lambda x: pt.nn.sigmoid(x), lambda a: 1 / (1 + np.exp(-a)), True),
    "silu": (lambda x: pt.nn.silu(x), lambda a: a / (1 + np.exp(-a)), True),
    "gelu": (lambda x: pt.nn.gelu(x), lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2))), True),
    "gelu_tanh": (lambda x: pt.nn.gelu(x, approximate="tanh"),
                  lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3))), True),
    "softmax": (lambda x: pt.nn.softmax(x), lambda a: _softmax(a), False),
    "softmax_axis0": (lambda x: pt.nn.softmax(x, axis=0), lambda a: _softmax(a, 0), False),
    "softmax_all": (lambda x: pt.nn.softmax(x, axis=(0, 1)), lambda a: _softmax(a, (0, 1)), False),
    "log_softmax": (lambda x: pt.nn.log_softmax(x), lambda a: _log_softmax(a), False),
    "logsumexp": (lambda x: pt.nn.logsumexp(x, axis=-1),
                  lambda a: np.log(np.exp(a - a.max(-1, keepdims=True)).sum(-1)) + a.max(-1), False),
    "layer_norm": (lambda x: pt.nn.layer_norm(x),
                   lambda a: (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5), False),
    "rms_norm": (lambda x: pt.nn.rms_norm(x, eps=1e-3),
                 lambda a: a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-3), False),
}
DTYPES = [dt.float16, dt.bfloat16, dt.float32, dt.float64, dt.int32]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("name", list(NN))
def test_nn_matches_reference(device, name, dtype):
    fn, ref, any_shape = NN[name]
    cases = []
    for layout in ALL_LAYOUTS:
        if layout in ("0d", "empty") and not any_shape:
            continue
        a, x = layout_pair(dtype, layout)
        out = dtype if dtype.kind == "f" else dt.float64
        if name == "relu":
            out = dtype
        with np.errstate(all="ignore"):
            e = np.asarray(ref(a.astype(np.float64))).astype(out.np)
        cases.append((layout, fn(x), e, out))
    pt.realize(*(c[1] for c in cases))
    for layout, r, e, out in cases:
        assert r.dtype is out, layout
        assert_close(r.numpy(), e, out, 16, f"{name} {layout}")


@pytest.mark.parametrize("dtype", [dt.float32, dt.bfloat16, dt.float64], ids=ids)
def test_norms_with_weight_and_bias(device, dtype):
    a = values(dtype, (3, 8), 1)
    w, b = values(dtype, (8,), 2), values(dtype, (8,), 3)
    a64, w64, b64 = (t.astype(np.float64) for t in (a, w, b))
    ln = (a64 - a64.mean(-1, keepdims=True)) / np.sqrt(a64.var(-1, keepdims=True) + 1e-6) * w64 + b64
    rn = a64 / np.sqrt((a64 ** 2).mean(-1, keepdims=True) + 1e-6) * w64
    r1 = pt.nn.layer_norm(a, w, b, eps=1e-6)
    r2 = pt.nn.rms_norm(a, weight=w, eps=1e-6)
    assert r1.dtype is dtype and r2.dtype is dtype
    assert_close(r1.numpy(), ln.astype(dtype.np), dtype, 16)
    assert_close(r2.numpy(), rn.astype(dtype.np), dtype, 16)
    ln0 = (a64 - a64.mean(0)) / np.sqrt(a64.var(0) + 1e-5)
    assert_close(pt.nn.layer_norm(a, axis=0).numpy(), ln0.astype(dtype.np), dtype, 16)


def test_softmax_rows_sum_to_one_and_survive_large_values(device):
    x = pt.asarray(np.array([[1000.0, 1001.0, 1002.0], [-1e4, 0.0, 1e4]], np.float32))
    s = pt.nn.softmax(x).numpy()
    assert np.isfinite(s).all() and np.allclose(s.sum(-1), 1)
    assert np.isfinite(pt.nn.log_softmax(x).numpy()).all()


def test_one_hot(device):
    r = pt.nn.one_hot(np.array([0, 2, 1]), 3)
    assert r.numpy().tolist() == np.eye(3)[[0, 2, 1]].tolist() and r.dtype is pt.float64


@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
def test_normalizations_of_empty_arrays_are_empty(device, shape):
    x = pt.zeros(shape, dtype=pt.float32)
    for fn in (pt.nn.softmax, pt.nn.log_softmax, pt.nn.relu, pt.nn.gelu):
        r = fn(x)
        assert r.shape == shape and r.dtype is pt.float32 and r.numpy().shape == shape
