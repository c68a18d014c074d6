"""`pt.nn.scaled_dot_product_attention` keeps its recording as a recipe (poot/trace/recipes.py): a
decode loop's later calls of one kind replay the equations instead of promoting and checking again,
and give what recording again would give."""
from __future__ import annotations

import sys

import numpy as np

import poot as pt
from poot.trace import attention


def _reference(q, k, v, scale):
    ratio = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, ratio, axis=1), np.repeat(v, ratio, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * scale
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def test_later_calls_replay_the_recording(monkeypatch):
    r = np.random.default_rng(0)
    qn = r.normal(size=(1, 4, 1, 8)).astype(np.float32)
    kn = r.normal(size=(1, 2, 6, 8)).astype(np.float32)
    vn = r.normal(size=(1, 2, 6, 8)).astype(np.float32)
    q, k, v = pt.asarray(qn), pt.asarray(kn), pt.asarray(vn)
    calls = []
    promote = attention.promote
    monkeypatch.setattr(attention, "promote", lambda *a: calls.append(1) or promote(*a))
    outs = [pt.nn.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=0.3) for _ in range(3)]
    replayed = len(calls)
    other = pt.nn.scaled_dot_product_attention(q, k, v, enable_gqa=True, scale=0.5)
    assert len(calls) == replayed + 1          # another scale is another kind of call: recorded
    assert replayed <= 1                       # the first call records (unless a test before it did)
    for out in outs:
        np.testing.assert_allclose(out.numpy(), _reference(qn, kn, vn, 0.3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(other.numpy(), _reference(qn, kn, vn, 0.5), rtol=1e-5, atol=1e-6)


def test_a_replayed_call_names_the_callers_line():
    q = pt.asarray(np.ones((1, 2, 1, 4), np.float32))
    k = pt.asarray(np.ones((1, 2, 3, 4), np.float32))
    for _ in range(2):                         # the second call replays
        out = pt.nn.scaled_dot_product_attention(q, k, k)
        line = sys._getframe().f_lineno - 1
    assert out._node.where == (__file__, line)


def test_shape_errors_still_name_the_problem():
    q = pt.asarray(np.ones((1, 4, 1, 8), np.float32))
    k = pt.asarray(np.ones((1, 3, 6, 8), np.float32))
    for _ in range(2):
        try:
            pt.nn.scaled_dot_product_attention(q, k, k, enable_gqa=True)
        except pt.PootError as e:
            assert "query heads" in str(e)
        else:
            raise AssertionError("4 query heads over 3 key/value heads must be refused")
