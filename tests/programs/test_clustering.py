"""k-means (Lloyd's algorithm) written three ways: per-cluster boolean masks (`P[labels == k]`),
pt.where masks, and a one-hot matrix product."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

from .harness import check_program, to_poot

K = 3


def blobs():
    r = np.random.default_rng(3)
    centers = np.array([[0.0, 0.0], [6.0, 6.0], [-6.0, 5.0]])
    labels = r.integers(0, K, size=240)
    P = (centers[labels] + 0.8 * r.normal(size=(240, 2))).astype(np.float32)
    # first guesses: one point of each blob, off its center (the blobs are far apart, so no point
    # is ever near-equidistant from two centroids and argmin agrees between float32 programs)
    C = np.stack([P[np.flatnonzero(labels == k)[0]] for k in range(K)]) + np.float32(0.5)
    return P, C.astype(np.float32)


def assign(xp, P, C):
    d = ((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1)
    return xp.argmin(d, axis=1), d


# -- 3. boolean-mask style --------------------------------------------------------------------------
def kmeans_mask_step(xp, P, C):
    labels, _ = assign(xp, P, C)
    return xp.stack([P[labels == k].mean(axis=0) for k in range(C.shape[0])]), labels


def kmeans_run(xp, step, P, C):
    for _ in range(6):
        C, labels = step(xp, P, C)
    return C, labels


def test_kmeans_boolean_masks_eager(device):
    check_program(device, kmeans_run, kmeans_mask_step, blobs(), ops=256, jit=False)


def test_kmeans_boolean_masks_under_jit_explain_themselves(device):
    P, C = to_poot(blobs())
    step = pt.jit(kmeans_mask_step, static_argnums=0)
    with pytest.raises(pt.TracerError) as info:
        step(pt, P, C)
    msg = str(info.value)
    assert "boolean indexing" in msg
    assert "pt.where" in msg and "size=" in msg
    assert "kmeans_mask_step" in msg or "test_clustering.py" in msg  # it names the user's line


# -- the same step with pt.where masks (the fix the error suggests) ---------------------------------
def kmeans_where_step(xp, P, C):
    labels, _ = assign(xp, P, C)
    rows = []
    for k in range(C.shape[0]):
        m = (labels == k)[:, None]
        rows.append(xp.where(m, P, 0).sum(axis=0) / xp.maximum(m.sum(), 1).astype(P.dtype))
    return xp.stack(rows), labels


def test_kmeans_where_masks(device):
    check_program(device, kmeans_run, kmeans_where_step, blobs(), ops=256)


# -- 4. one-hot style -------------------------------------------------------------------------------
def kmeans_onehot_step(xp, P, C):
    labels, d = assign(xp, P, C)
    onehot = (labels[:, None] == xp.arange(C.shape[0])[None, :]).astype(P.dtype)
    counts = onehot.sum(axis=0)
    inertia = xp.take_along_axis(d, labels[:, None], axis=1).sum()
    return (onehot.T @ P) / xp.maximum(counts, 1)[:, None], labels, counts, inertia


def kmeans_onehot_run(xp, step, P, C):
    inertias = []
    for _ in range(6):
        C, labels, counts, inertia = step(xp, P, C)
        inertias.append(inertia)
    return C, labels, counts, xp.stack(inertias)


def test_kmeans_onehot(device):
    check_program(device, kmeans_onehot_run, kmeans_onehot_step, blobs(), ops=256, whole=True)


def test_kmeans_styles_agree(device):
    P, C = to_poot(blobs())
    a, la = kmeans_run(pt, kmeans_mask_step, P, C)
    b, lb, _, _ = kmeans_onehot_run(pt, pt.jit(kmeans_onehot_step, static_argnums=0), P, C)
    assert np.array_equal(la.numpy(), lb.numpy())
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
