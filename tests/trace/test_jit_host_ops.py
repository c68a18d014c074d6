"""Host ops (sort, argsort, searchsorted, unique/nonzero with size=, the linalg factorizations) as
program steps: eager and jitted results against NumPy on every test device, the plan's host steps and
copies, and the TracerError of data-dependent shapes inside @pt.jit."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close

HERE = __file__


def rng(seed=0):
    return np.random.default_rng(seed)


def both(fn, *args):
    """fn eagerly and jitted (twice: the second call replays), as NumPy values."""
    eager = fn(*args)
    f = pt.jit(fn)
    f(*args)
    jitted = f(*args)
    assert f.trace_count == 1
    flat = lambda r: [np.asarray(v.numpy()) for v in (r if isinstance(r, tuple) else (r,))]  # noqa: E731
    return flat(eager), flat(jitted)


@pytest.mark.parametrize("dtype", [pt.float32, pt.int32])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(dtype, axis, descending, device):
    a = rng(1).integers(-5, 5, (6, 7)).astype(dtype.np)   # many ties: stability matters
    if dtype.kind == "f":
        a[2, 3] = np.nan
    x = pt.asarray(a)
    want = np.sort(a, axis=axis, kind="stable")
    want = np.flip(want, axis=axis) if descending else want
    if descending:
        order = a.shape[axis] - 1 - np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"),
                                            axis=axis)
    else:
        order = np.argsort(a, axis=axis, kind="stable")
    eager, jitted = both(lambda v: (pt.sort(v, axis=axis, descending=descending),
                                    pt.argsort(v, axis=axis, descending=descending)), x)
    for got in (eager, jitted):
        np.testing.assert_array_equal(got[0], want)
        np.testing.assert_array_equal(got[1], order)
        assert got[0].dtype == dtype.np and got[1].dtype == np.int64


def test_eager_sort_is_a_lazy_equation(device):
    x = pt.asarray(np.array([3.0, 1.0, 2.0], np.float32))
    y = pt.sort(x * 2)
    assert not y.is_realized            # recorded like any operation, run when needed
    np.testing.assert_array_equal((y + 1).numpy(), [3.0, 5.0, 7.0])


@pytest.mark.parametrize("n", [16, 5000])      # the fused compare-and-count, and the host step
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(n, side, device):
    a = np.sort(rng(2).integers(0, n // 2, n)).astype(np.float32)
    v = rng(3).integers(-1, n // 2 + 1, (4, 50)).astype(np.float32)
    eager, jitted = both(lambda s, q: pt.searchsorted(s, q, side=side), pt.asarray(a), pt.asarray(v))
    for got in (eager, jitted):
        np.testing.assert_array_equal(got[0], np.searchsorted(a, v, side=side))


def test_combined_elementwise_sort_and_reductions(device):
    """A trimmed mean per row: elementwise, a sort, a slice and reductions in one jitted function."""
    a = rng(4).standard_normal((8, 33)).astype(np.float32)

    def trimmed(x):
        s = pt.sort(x * 2.0 + 1.0, axis=-1)
        return s[:, 3:-3].mean(axis=-1) - x.max(axis=-1), pt.argsort(-x, axis=-1)[:, 0]

    s = np.sort(a * 2 + 1, axis=-1)
    eager, jitted = both(trimmed, pt.asarray(a))
    for got in (eager, jitted):
        assert_close(got[0], s[:, 3:-3].mean(axis=-1) - a.max(axis=-1), pt.float32, ops=32)
        np.testing.assert_array_equal(got[1], np.argmax(a, axis=-1))


def spd(n, batch=(), seed=0):
    a = rng(seed).standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_linalg_eager_and_jitted(batch, device):
    a = spd(4, batch)
    b = rng(5).standard_normal(batch + (4, 2)).astype(np.float32)
    d = pt.float32

    def fn(x, y):
        w, v = pt.linalg.eigh(x)
        u, s, vh = pt.linalg.svd(x, full_matrices=False)
        q, r = pt.linalg.qr(x)
        sign, logabs = pt.linalg.slogdet(x)
        return (w, v, pt.linalg.eigvalsh(x), u, s, vh, q, r, pt.linalg.cholesky(x), pt.linalg.inv(x),
                pt.linalg.solve(x, y), pt.linalg.det(x), sign, logabs, pt.linalg.pinv(x),
                pt.linalg.svdvals(x), pt.linalg.matrix_rank(x))

    a64 = a.astype(np.float64)
    for got in both(fn, pt.asarray(a), pt.asarray(b)):
        w, v, wv, u, s, vh, q, r, low, inv, sol, det, sign, logabs, pinv, sv, rank = got
        assert w.dtype == np.float32 and rank.dtype == np.int64
        assert_close((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a64, d, ops=256)
        assert_close(wv, np.linalg.eigvalsh(a64), d, ops=256)
        assert_close((u * s[..., None, :]) @ vh, a64, d, ops=256)
        assert_close(q @ r, a64, d, ops=256)
        assert_close(low, np.linalg.cholesky(a64), d, ops=64)
        assert_close(inv, np.linalg.inv(a64), d, ops=64)
        assert_close(sol, np.linalg.solve(a64, b), d, ops=64)
        assert_close(det / np.linalg.det(a64), np.ones(batch), d, ops=64)
        assert_close(sign, np.linalg.slogdet(a64)[0], d)
        assert_close(logabs, np.linalg.slogdet(a64)[1], d, ops=64)
        assert_close(pinv, np.linalg.pinv(a64), d, ops=256)
        assert_close(sv, np.linalg.svd(a64, compute_uv=False), d, ops=256)
        np.testing.assert_array_equal(rank, np.linalg.matrix_rank(a64))


def test_linalg_error_inside_jit(device):
    f = pt.jit(lambda x: pt.linalg.inv(x) * 2)
    with pytest.raises(pt.linalg.LinAlgError, match="linalg.inv: Singular matrix"):
        f(pt.zeros((3, 3), dtype=pt.float32))


def test_unique_with_size(device):
    a = np.array([[3, 1, 3], [7, 1, 1]], np.int32)     # unique: 1, 3, 7 (counts 3, 2, 1)
    x = pt.asarray(a)

    def fn(v):
        r = pt.unique_all(v, size=5, fill_value=-1)
        return (pt.unique_values(v, size=5), *r, pt.unique_counts(v, size=2).counts)

    for got in both(fn, x):
        vals_default, vals, first, inverse, counts, counts2 = got
        np.testing.assert_array_equal(vals_default, [1, 3, 7, 1, 1])   # JAX: padded with the minimum
        np.testing.assert_array_equal(vals, [1, 3, 7, -1, -1])
        np.testing.assert_array_equal(first, [1, 0, 3, 0, 0])
        np.testing.assert_array_equal(inverse, [[1, 0, 1], [2, 0, 0]])
        np.testing.assert_array_equal(counts, [3, 2, 1, 0, 0])
        np.testing.assert_array_equal(counts2, [3, 2])                 # truncated
        assert vals.dtype == np.int32 and counts.dtype == np.int64


def test_unique_with_size_float_nan(device):
    a = np.array([2.0, np.nan, 2.0, 0.5], np.float32)
    for got in both(lambda v: pt.unique_values(v, size=4, fill_value=9.0), pt.asarray(a)):
        np.testing.assert_array_equal(got[0], [0.5, 2.0, np.nan, 9.0])


def test_nonzero_with_size(device):
    a = np.array([[0, 2, 0], [5, 0, 6]], np.int32)
    x = pt.asarray(a)
    for got in both(lambda v: pt.nonzero(v, size=4), x):
        np.testing.assert_array_equal(got[0], [0, 1, 1, 0])
        np.testing.assert_array_equal(got[1], [1, 0, 2, 0])
    for got in both(lambda v: pt.nonzero(v, size=2, fill_value=(-1, -2)), x):
        np.testing.assert_array_equal(got[0], [0, 1])                  # truncated
        np.testing.assert_array_equal(got[1], [1, 0])
    for got in both(lambda v: pt.nonzero(v[0], size=3, fill_value=-1), x):
        np.testing.assert_array_equal(got[0], [1, -1, -1])

    @pt.jit
    def masked_sum(v, m):                 # the fixed-size way to write v[m].sum()
        (i,) = pt.nonzero(m, size=v.shape[0], fill_value=0)
        valid = pt.arange(v.shape[0]) < m.sum()
        return pt.where(valid, v[i], 0.0).sum()

    v = np.arange(5, dtype=np.float32)
    m = np.array([True, False, True, True, False])
    assert float(masked_sum(pt.asarray(v), pt.asarray(m))) == v[m].sum()


def test_plan_shows_host_steps_and_copies(device, monkeypatch):
    monkeypatch.setenv("POOT_GPU_SORT", "host")     # else a GPU sorts with kernels (tests/devices/test_gpu_sort.py)
    f = pt.jit(lambda x: pt.sort(x + 1.0) * 2.0)
    lowered = f.lower(pt.ones(8))
    text = lowered.as_text("plan")
    assert "host " in text and "sort" in text
    if device == "oracle":        # the NumPy reference runs no program
        return
    if lowered.target == "cpu":   # host memory: NumPy works on the buffers in place
        assert "in place (host memory, no copy)" in text
    else:
        assert "device -> host" in text and "host -> device" in text


def _raises_tracer(fn, *args, match):
    with pytest.raises(pt.TracerError) as e:
        pt.jit(fn)(*args)
    msg = str(e.value)
    for m in match:
        assert m in msg, (m, msg)
    assert HERE in msg            # names the user's line, not poot's
    assert ".numpy()" not in msg  # nor a call the user never made
    return msg


def test_data_dependent_shapes_inside_jit_name_the_operation_and_the_fix(device):
    x = pt.asarray(np.array([1.0, -2.0, 3.0], np.float32))
    _raises_tracer(lambda v: v[v > 0], x,
                   match=["x[mask] (boolean indexing)", "data-dependent shape", "pt.where", "size="])
    _raises_tracer(lambda v: pt.nonzero(v), x, match=["nonzero(x)", "size=n", "fill_value"])
    _raises_tracer(lambda v: pt.where(v > 0), x, match=["nonzero(x)", "size="])
    _raises_tracer(lambda v: pt.unique_values(v), x, match=["unique_values(x)", "size=n"])
    _raises_tracer(lambda v: pt.unique_counts(v), x, match=["unique_counts(x)", "size="])
    _raises_tracer(lambda v: pt.repeat(v, pt.asarray([1, 2, 0])), x,
                   match=["repeat(x, repeats) with an array of counts", "static_argnums"])
    # eagerly, the data-dependent forms still realize and compute on the host
    np.testing.assert_array_equal(x[x > 0].numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(pt.unique_values(x).numpy(), [-2.0, 1.0, 3.0])


def test_host_ops_in_control_bodies_and_half_floats(device):
    a = rng(6).standard_normal(6).astype(np.float32)
    r = pt.fori_loop(0, 3, lambda i, v: pt.sort(-v), pt.asarray(a))
    np.testing.assert_array_equal(r.numpy(), np.sort(-np.sort(-np.sort(-a))))
    m = rng(7).standard_normal((3, 3)).astype(np.float32)

    @pt.jit
    def g(v):
        return pt.cond(v.sum() > -100, lambda u: pt.linalg.eigvalsh(u @ u.T),
                       lambda u: pt.zeros(u.shape[0], dtype=u.dtype), v)

    assert_close(g(pt.asarray(m)).numpy(), np.linalg.eigvalsh((m @ m.T).astype(np.float64)),
                 pt.float32, ops=256)
    if device == "cpu":                   # float16 / bfloat16 sort exactly (through float32)
        for d in (pt.float16, pt.bfloat16):
            h = a.astype(d.np)
            want = np.sort(h.astype(np.float32)).astype(d.np)
            np.testing.assert_array_equal(pt.sort(pt.asarray(h)).numpy(), want)
