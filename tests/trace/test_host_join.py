"""`stack` and `concatenate` of small realized CPU arrays copy the bytes on the host at once
(poot/trace/fastpath.py `host_join`): a list of per-step losses stacked after a loop is one copy, not
an equation per piece and a kernel reading them all. The result must equal NumPy's bit for bit, be a
copy (later writes to a piece do not show), and every other case must keep the recorded path."""
import numpy as np
import pytest
from ml_dtypes import bfloat16

import poot as pt
from poot.trace import fastpath


def realized(a):
    return pt.realize(pt.asarray(np.array(a, copy=True)))


def is_host_joined(x) -> bool:
    return x._node.op is None and x._node.buf is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_, bfloat16])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (4, 1, 2)])
def test_stack_every_axis_matches_numpy(dtype, shape):
    r = np.random.default_rng(0)
    xs = [(r.normal(size=shape) * 4).astype(dtype) for _ in range(5)]
    ps = [realized(x) for x in xs]
    for axis in range(-len(shape) - 1, len(shape) + 1):
        got = pt.stack(ps, axis=axis)
        assert is_host_joined(got)
        np.testing.assert_array_equal(got.numpy(), np.stack(xs, axis=axis))
        assert got.numpy().dtype == np.stack(xs, axis=axis).dtype


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_of_unequal_pieces(axis):
    r = np.random.default_rng(1)
    shapes = [(2, 3), (2, 3), (2, 3)] if axis else [(1, 3), (4, 3), (2, 3)]
    shapes = [(2, 1), (2, 4), (2, 2)] if axis else shapes
    xs = [r.normal(size=s).astype(np.float32) for s in shapes]
    got = pt.concatenate([realized(x) for x in xs], axis=axis)
    assert is_host_joined(got)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(xs, axis=axis))


def test_losses_of_a_loop_and_element_reads():
    """0-d results of jitted calls and element reads (host values) stack like NumPy scalars."""
    step = pt.jit(lambda w: (w * 0.5, (w * w).sum()))
    w = pt.asarray(np.arange(4, dtype=np.float32))
    losses, ref, wn = [], [], np.arange(4, dtype=np.float32)
    for _ in range(6):
        w, loss = step(w)
        losses.append(loss)
        wn, ln = wn * np.float32(0.5), (wn * wn).sum()
        ref.append(ln)
    m = pt.asarray(np.arange(6.0).reshape(2, 3))
    losses_host = [m[0, 1], m[1, 2] * 2.0, m[1, 0]]
    np.testing.assert_allclose(pt.stack(losses).numpy(), np.stack(ref), rtol=1e-6)
    got = pt.stack(losses_host)
    assert is_host_joined(got)
    np.testing.assert_array_equal(got.numpy(), [1.0, 10.0, 3.0])


def test_result_is_a_copy():
    x = realized(np.arange(3, dtype=np.float64))
    s = pt.stack([x, x])
    x[1] = 100.0                                   # an in-place element write into the piece
    np.testing.assert_array_equal(s.numpy(), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(x.numpy(), [0, 100, 2])


def test_pending_pieces_mixed_dtypes_and_large_pieces_record():
    a = np.arange(4, dtype=np.float32)
    pending = pt.asarray(a) * 2                    # not realized: the recorded path
    got = pt.stack([realized(a), pending])
    assert got._node.op is not None
    np.testing.assert_array_equal(got.numpy(), np.stack([a, a * 2]))
    mixed = pt.concatenate([realized(a), realized(a.astype(np.float64))])   # promoted: a cast is pending
    np.testing.assert_array_equal(mixed.numpy(), np.concatenate([a, a.astype(np.float64)]))
    assert mixed.dtype == pt.float64
    big = np.ones(fastpath.HOST_JOIN_BYTES // 4, np.float32)
    got = pt.concatenate([realized(big), realized(big)])
    assert got._node.op is not None
    np.testing.assert_array_equal(got.numpy(), np.concatenate([big, big]))


def test_traced_stack_records():
    f = pt.jit(lambda a, b: pt.stack([a, b], axis=1) * 2)
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    np.testing.assert_array_equal(f(realized(a), realized(b)).numpy(), np.stack([a, b], axis=1) * 2)


def test_shape_errors_still_name_the_shapes():
    with pytest.raises(pt.PootError, match="shapes differ outside axis 0"):
        pt.concatenate([realized(np.ones((2, 3))), realized(np.ones((2, 4)))])
    with pytest.raises(pt.PootError, match="same shape"):
        pt.stack([realized(np.ones(2)), realized(np.ones(3))])
