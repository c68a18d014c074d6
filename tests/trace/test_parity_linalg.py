"""matmul (batched, 1-D rules), dot, vdot, inner, outer, tensordot, einsum, diagonal and trace
against NumPy, for every dtype NumPy multiplies, with contiguous and transposed operands."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from tolerance import assert_close

from .helpers import ALL, ids, reference_input, round_to, values

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 5)), ((3, 0), (0, 5)),
                 ((2, 3, 4), (2, 4, 1))]


def _pair(dtype, sa, sb, transposed):
    a, b = values(dtype, sa, 1), values(dtype, sb, 2)
    if not transposed:
        return (a, b), (pt.asarray(a), pt.asarray(b))
    at = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if a.ndim >= 2 else a
    bt = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if b.ndim >= 2 else b
    xa = pt.asarray(at).mT if a.ndim >= 2 else pt.asarray(a)[::-1][::-1]
    xb = pt.asarray(bt).mT if b.ndim >= 2 else pt.asarray(b)
    return (a, b), (xa, xb)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_matmul_matches_numpy(device, dtype):
    cases = []
    for sa, sb in MATMUL_SHAPES:
        for transposed in (False, True):
            (a, b), (x, y) = _pair(dtype, sa, sb, transposed)
            e = np.matmul(reference_input(a, dtype), reference_input(b, dtype))
            cases.append(((sa, sb, transposed), x @ y, e, sa[-1]))
            cases.append(((sa, sb, "np.matmul"), np.matmul(x, y), e, sa[-1]))
    pt.realize(*(c[1] for c in cases))
    for what, r, e, k in cases:
        assert r.dtype is dtype, what
        assert_close(r.numpy(), round_to(e, dtype), dtype, 2 * max(k, 1), str(what))


@pytest.mark.parametrize("dtype", [dt.bool_, dt.int8, dt.uint16, dt.int64, dt.float16, dt.bfloat16,
                                   dt.float32, dt.float64], ids=ids)
def test_products_match_numpy(device, dtype):
    a, b = values(dtype, (3, 4), 1), values(dtype, (4, 5), 2)
    v, w = values(dtype, (4,), 3), values(dtype, (4,), 4)
    c3 = values(dtype, (2, 3, 4), 5)
    ra, rb, rv, rw, rc = (reference_input(t, dtype) for t in (a, b, v, w, c3))
    cases = [
        ("dot 2d", pt.dot(a, b), np.dot(ra, rb)), ("dot 1d", pt.dot(v, w), np.dot(rv, rw)),
        ("dot nd", pt.dot(c3, b), np.dot(rc, rb)), ("dot nd-1d", pt.dot(c3, v), np.dot(rc, rv)),
        ("dot scalar", pt.dot(a, 2) if dtype.kind != "b" else pt.dot(a, True),
         np.dot(ra, 2 if dtype.kind != "b" else True)),
        ("vdot", pt.vdot(a, a), np.vdot(ra, ra)), ("inner", pt.inner(a, v), np.inner(ra, rv)),
        ("outer", pt.outer(v, w), np.outer(rv, rw)),
        ("tensordot 1", pt.tensordot(a, b, 1), np.tensordot(ra, rb, 1)),
        ("tensordot 0", pt.tensordot(v, w, 0), np.tensordot(rv, rw, 0)),
        ("tensordot pairs", pt.tensordot(c3, a, ([1, 2], [0, 1])), np.tensordot(rc, ra, ([1, 2], [0, 1]))),
        ("vecdot", pt.vecdot(c3, v), np.vecdot(rc, rv)),
        ("method dot", pt.asarray(a).dot(b), ra.dot(rb)),
    ]
    pt.realize(*(c[1] for c in cases))
    for what, r, e in cases:
        e = np.asarray(e)
        if what == "dot scalar":    # NumPy's dot makes an array of the Python scalar: int64, float64
            scalar = True if dtype.kind == "b" else 2
            want = dt.float64 if dtype is dt.bfloat16 else dt.as_dtype(np.dot(np.ones(1, dtype.np), scalar).dtype)
            assert r.dtype is want, what
            assert_close(r.numpy(), e.astype(want.np), want, 24, what)
            continue
        assert r.dtype is (dtype if dtype in (dt.bfloat16,) else dt.as_dtype(
            np.asarray(np.dot(a[:1, :1], b[:1, :1])).dtype)), what
        assert_close(r.numpy(), round_to(e, dtype), dtype, 24, what)


EINSUM = ["ij,jk->ik", "ij->ji", "ii->i", "ii", "ij->", "ij,ij->ij", "i,j->ij", "bij,bjk->bik",
          "...ij,...jk->...ik", "ij,jk", "ijk->kj", "i,i", "bi,bi->b", "ij,kj->ik", "abc,cd->abd",
          "ij,j->i", "i,ij,j->", "bij->b", "iij->ij", "...i->...", "ij,kl->ijkl"]
_SIZES = {"i": 3, "j": 4, "k": 2, "l": 2, "b": 2, "a": 2, "c": 3, "d": 2}


def _operands_for(spec, dtype):
    lhs = spec.split("->")[0].split(",")
    out = []
    for n, term in enumerate(lhs):
        shape = [2] if "..." in term else []
        shape += [_SIZES[c] if c not in "ij" or "ii" not in term else 3 for c in term.replace("...", "")]
        out.append(values(dtype, tuple(shape), n + 1))
    return out


@pytest.mark.parametrize("dtype", [dt.int32, dt.float32, dt.float64, dt.bfloat16], ids=ids)
@pytest.mark.parametrize("spec", EINSUM)
def test_einsum_matches_numpy(device, spec, dtype):
    ops = _operands_for(spec, dtype)
    r = pt.einsum(spec, *ops)
    e = np.einsum(spec, *(reference_input(o, dtype) for o in ops))
    assert r.dtype is dtype
    assert_close(r.numpy(), round_to(e, dtype), dtype, 16, spec)
    assert isinstance(np.einsum(spec, *(pt.asarray(o) for o in ops)), pt.Array)


@pytest.mark.parametrize("offset", [0, 1, -1, 5])
def test_diagonal_and_trace(device, offset):
    a = values(dt.float64, (3, 4, 5), 1)
    assert_close(pt.diagonal(a, offset).numpy(), np.diagonal(a, offset), dt.float64)
    assert_close(pt.diagonal(a, offset, 1, 2).numpy(), np.diagonal(a, offset, 1, 2), dt.float64)
    assert_close(pt.asarray(a[0]).trace(offset).numpy(), np.trace(a[0], offset), dt.float64, 4)
    assert_close(np.trace(pt.asarray(a), offset, 1, 2).numpy(), np.trace(a, offset, 1, 2), dt.float64, 4)


def test_matmul_refuses_0d_operands_like_numpy(device):
    with pytest.raises(ValueError):
        np.matmul(np.float64(2), np.ones(3))
    with pytest.raises(pt.ShapeError, match="at least 1 dimension"):
        pt.matmul(pt.asarray(2.0), pt.ones(3))
    with pytest.raises(pt.ShapeError, match="scalar"):
        pt.matmul(2.0, pt.ones(3))
