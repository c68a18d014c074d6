"""Ordering comparisons of 64-bit integers are right on every device, also on values widened from
32 bits inside a kernel (lavapipe evaluated a signed 64-bit compare of two widened values wrongly, so
a causal mask built from int64 iotas masked nothing there and softmax rows summed the future)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close


@pytest.mark.parametrize("n", [5, 7, 8, 9, 16])
def test_a_causal_mask_from_iotas_masks_the_future(device, n):
    s = np.random.default_rng(n).normal(size=(n, n)).astype(np.float32)
    i = pt.arange(n)
    got = pt.nn.softmax(pt.where(i[None, :] <= i[:, None], pt.asarray(s), -1e9), axis=-1).numpy()
    m = np.where(np.arange(n)[None, :] <= np.arange(n)[:, None], s, np.float32(-1e9))
    e = np.exp(m - m.max(-1, keepdims=True))
    assert_close(got, e / e.sum(-1, keepdims=True), pt.float32, ops=16)
    assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_widened_int64_comparisons_match_numpy(device, op):
    a = np.array([-7, -1, 0, 1, 5, 2**31 - 1, -2**31], dtype=np.int32)
    fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
          "eq": np.equal, "ne": np.not_equal}[op]
    wide = pt.asarray(a).astype(pt.int64)
    got = getattr(pt, {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                       "eq": "equal", "ne": "not_equal"}[op])(wide[:, None], wide[None, :] + 0)
    expected = fn(a.astype(np.int64)[:, None], a.astype(np.int64)[None, :])
    assert np.array_equal(got.numpy(), expected)
    big = np.array([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max], dtype=np.int64)
    got = getattr(pt, {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                       "eq": "equal", "ne": "not_equal"}[op])(pt.asarray(big)[:, None], pt.asarray(big)[None, :])
    assert np.array_equal(got.numpy(), fn(big[:, None], big[None, :]))
