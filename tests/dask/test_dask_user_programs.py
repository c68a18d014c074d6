"""Programs a Dask user writes over poot chunks, each compared with the same program on NumPy-backed
Dask and on NumPy: the result stays a poot array, its dtype and shape are NumPy's, and the Dask array's
meta says its chunks are poot arrays. Also: NumPy's `like=` creation protocol (how Dask builds metas),
the "poot" Dask array backend (creation functions, `to_backend`, `da.random`), jitted functions in
`map_blocks`, and errors raised inside tasks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'poot[dask]')")
import dask  # noqa: E402

import poot as pt  # noqa: E402
import poot.dask  # noqa: E402,F401  (registers poot arrays as Dask chunks)
from tolerance import assert_close  # noqa: E402

RNG = np.random.default_rng(11)
A = RNG.standard_normal((23, 17)).astype(np.float32)          # every axis ends in a short chunk
AN = A.copy()
AN[3, 4] = AN[10, 1] = np.nan
LABELS = RNG.integers(0, 5, size=41)
CHUNKS = (7, 5)


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def poot_da(a, chunks=CHUNKS):
    return da.from_array(pt.asarray(a), chunks=chunks)


def both(program, *arrays, chunks=CHUNKS, ops=1, expected=None):
    """`program` on poot-backed and on NumPy-backed Dask arrays: the poot run keeps poot chunks
    (meta and result) and matches the NumPy-backed run (and `expected`, NumPy's own answer) in
    dtype, shape and value."""
    cs = chunks if isinstance(chunks, list) else [chunks] * len(arrays)
    on_poot = program(*[poot_da(a, c) for a, c in zip(arrays, cs)])
    on_numpy = program(*[da.from_array(a, chunks=c) for a, c in zip(arrays, cs)])
    assert isinstance(on_poot._meta, pt.Array), f"the Dask array's meta is a {type(on_poot._meta).__name__}"
    assert on_poot.dtype == on_numpy.dtype and on_poot.shape == on_numpy.shape
    got, want = on_poot.compute(), np.asarray(on_numpy.compute())
    assert isinstance(got, pt.Array), f"the result is a {type(got).__name__}, not a poot array"
    got = got.numpy()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert_close(got, want, want.dtype, ops=ops)
    if expected is not None:
        assert_close(got, np.asarray(expected), want.dtype, ops=ops)
    return got


# -- NumPy's like= protocol (NEP 35): how Dask makes the metas of its reductions ----------------
def test_creation_functions_with_like_give_poot_arrays(device):
    like = pt.empty((0,), dtype=pt.float32)
    cases = [(lambda m: np.asarray(np.array([], dtype=np.float32), like=m), np.zeros(0, np.float32)),
             (lambda m: np.array([[1, 2]], dtype=np.int32, like=m), np.array([[1, 2]], np.int32)),
             (lambda m: np.zeros((2, 3), like=m), np.zeros((2, 3))),
             (lambda m: np.full((2,), 2.5, dtype=np.float32, like=m), np.full((2,), 2.5, np.float32)),
             (lambda m: np.arange(1, 7, 2, like=m), np.arange(1, 7, 2)),
             (lambda m: np.eye(3, k=1, like=m), np.eye(3, k=1)),
             (lambda m: np.ones((2, 2), order="C", like=m), np.ones((2, 2)))]
    for make, expected in cases:
        got = make(like)
        assert isinstance(got, pt.Array) and got.device == device, type(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected)


def test_nan_reductions_ptp_and_searchsorted_keep_poot_metas():
    # their metas come from `np.asarray(np.array([]), like=meta)` and friends
    both(lambda x: da.nanmax(x, axis=0), AN, expected=np.nanmax(AN, axis=0))
    both(lambda x: da.nanmin(x), AN, expected=np.nanmin(AN))
    both(lambda x: da.nanargmax(x, axis=1), AN, expected=np.nanargmax(AN, axis=1))
    both(lambda x: da.ptp(x, axis=1), A, expected=np.ptp(A, axis=1))
    edges = np.linspace(-2, 2, 6)
    both(lambda x: da.searchsorted(da.from_array(edges), x), A.ravel(), chunks=(50,),
         expected=np.searchsorted(edges, A.ravel()))


def test_groupby_means_with_bincount():
    # the group mean of each label: sums and counts by bincount, as a Dask user computes it
    values = A.ravel()[:41]
    got = both(lambda lab, v: da.bincount(lab, weights=v, minlength=5) / da.bincount(lab, minlength=5),
               LABELS, values, chunks=(9,))
    want = np.bincount(LABELS, weights=values, minlength=5) / np.bincount(LABELS, minlength=5)
    assert_close(got, want, np.float64, ops=41)


# -- the "poot" Dask backend -------------------------------------------------------------------
def test_to_backend_poot_and_back():
    x = da.from_array(A, chunks=CHUNKS).to_backend("poot")
    assert isinstance(x._meta, pt.Array) and x.dtype == np.float32
    out = x.compute()
    assert isinstance(out, pt.Array)
    np.testing.assert_array_equal(out.numpy(), A)
    assert x.to_backend("poot") is x
    back = x.to_backend("numpy").compute()
    assert isinstance(back, np.ndarray) and np.array_equal(back, A)
    with pytest.raises(pt.DTypeError, match="<U1"):        # refused at the call, by poot
        da.from_array(np.array(["a", "b"]), chunks=1).to_backend("poot")


def test_creation_functions_under_the_poot_backend():
    with dask.config.set({"array.backend": "poot"}):
        made = {"ones": (da.ones((5, 4), chunks=2), np.ones((5, 4))),
                "zeros": (da.zeros(7, chunks=3, dtype=np.int32), np.zeros(7, np.int32)),
                "full": (da.full((3, 3), 2.5, chunks=2), np.full((3, 3), 2.5)),
                "arange": (da.arange(10, chunks=3), np.arange(10)),
                "arange float": (da.arange(0, 1, 0.25, chunks=3), np.arange(0, 1, 0.25))}
    for name, (x, expected) in made.items():
        assert isinstance(x._meta, pt.Array), name
        got = x.compute()
        assert isinstance(got, pt.Array), name
        assert got.dtype == expected.dtype, (name, got.dtype)
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=name)


def test_random_under_the_poot_backend():
    with dask.config.set({"array.backend": "poot"}):
        rng = da.random.default_rng(3)
        z = rng.standard_normal((4000,), chunks=1000)
        u = rng.random((40, 30), chunks=(10, 10), dtype=np.float32)
        k = rng.integers(0, 6, size=500, chunks=100)
        legacy = da.random.random((300,), chunks=100)
        again = da.random.default_rng(3).standard_normal((4000,), chunks=1000)
    for x, dtype in ((z, np.float64), (u, np.float32), (k, np.int64), (legacy, np.float64)):
        assert isinstance(x._meta, pt.Array) and x.dtype == dtype
    zs = z.compute().numpy()
    assert np.array_equal(zs, again.compute().numpy())              # deterministic per seed
    assert len(np.unique(zs[:2000])) == 2000                        # the chunks' streams differ
    assert abs(zs.mean()) < 0.1 and abs(zs.std() - 1) < 0.1        # 4000 draws: ~6 standard errors
    us = u.compute().numpy()
    assert us.dtype == np.float32 and 0 <= us.min() and us.max() < 1 and abs(us.mean() - 0.5) < 0.05
    ks = k.compute().numpy()
    assert set(np.unique(ks)) == set(range(6))
    ls = legacy.compute().numpy()
    assert 0 <= ls.min() and ls.max() < 1 and len(np.unique(ls)) == 300


# -- programs -------------------------------------------------------------------------------------
def test_standardize_and_reduce_over_each_axis():
    both(lambda x: ((x - x.mean(axis=0)) / x.std(axis=0)).sum(axis=1), A, ops=4 * A.size)
    both(lambda x: da.nanvar(x, axis=1, ddof=1), AN, ops=4 * A.size, expected=np.nanvar(AN, axis=1, ddof=1))
    both(lambda x: x.argmax(axis=0), A, expected=A.argmax(axis=0))
    both(lambda x: (x > 0).mean(axis=1), A, ops=A.size, expected=(A > 0).mean(axis=1))


def test_matmul_tensordot_and_einsum_across_chunks():
    b = RNG.standard_normal((17, 9)).astype(np.float32)
    both(lambda x, y: x @ y, A, b, chunks=[CHUNKS, (5, 4)], ops=17, expected=A @ b)
    both(lambda x: da.tensordot(x, x, axes=([0, 1], [0, 1])), A, ops=A.size,
         expected=np.tensordot(A, A, axes=([0, 1], [0, 1])))
    both(lambda x, y: da.einsum("ij,jk->ik", x, y), A, b, chunks=[CHUNKS, (5, 4)], ops=17)


def test_custom_blockwise_reduction():
    # a sum of squares with Dask's reduction(): chunk and aggregate steps on poot chunks
    def chunk(b, axis, keepdims):
        return (b * b).sum(axis=axis, keepdims=keepdims)

    def aggregate(b, axis, keepdims):
        return b.sum(axis=axis, keepdims=keepdims)

    both(lambda x: da.reduction(x, chunk, aggregate, axis=0, dtype=np.float32, split_every=2), A,
         ops=A.shape[0], expected=(A * A).sum(axis=0))


def test_map_overlap_stencil():
    def laplacian(b):
        return b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4 * b[1:-1, 1:-1]

    for boundary in ("periodic", "reflect", 0.0):
        both(lambda x, b=boundary: x.map_overlap(laplacian, depth=1, boundary=b, trim=False), A, ops=5)


def test_slicing_fancy_indexing_stack_and_rechunk():
    rows = np.array([3, 0, 22, 7, 7])
    both(lambda x: x[rows][:, [1, 16, 2]], A, expected=A[rows][:, [1, 16, 2]])
    both(lambda x: x[::-2, 3:11], A, expected=A[::-2, 3:11])
    both(lambda x: x.vindex[[1, 2, 3], [4, 5, 6]], A, expected=A[[1, 2, 3], [4, 5, 6]])
    both(lambda x: da.stack([x, 2 * x], axis=-1).reshape(23, 34).rechunk((4, 17)), A,
         expected=np.stack([A, 2 * A], axis=-1).reshape(23, 34))


def test_histogram_counts():
    h, _ = da.histogram(poot_da(A.ravel(), 50), bins=6, range=(-3, 3))
    got = h.compute()
    assert isinstance(got, pt.Array)
    want = np.histogram(A.ravel(), bins=6, range=(-3, 3))[0]
    assert got.numpy().dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_threaded_scheduler_and_persist():
    x = poot_da(A).persist()
    assert all(isinstance(v, pt.Array) for v in x.dask.values())
    y = (da.exp(-x * x) * 2 + x).sum(axis=0)
    with dask.config.set(scheduler="threads", num_workers=2):
        got = y.compute()
    assert isinstance(got, pt.Array)
    assert_close(got.numpy(), (np.exp(-A * A) * 2 + A).sum(axis=0), np.float32, ops=4 * A.shape[0])


# -- jitted functions in tasks ---------------------------------------------------------------------
@pt.jit
def _softmax(b):
    e = pt.exp(b - b.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_jitted_map_blocks_counts_only_traces_that_ran():
    """Dask calls the function on 0-size arrays to learn its output type, which a reduction refuses:
    such failed traces are not counted as traces, so two chunkings give no RetraceWarning."""
    _softmax.clear_cache()
    before = _softmax.trace_count
    with pytest.raises(pt.ShapeError):
        _softmax(pt.empty((0, 0), dtype=pt.float32))
    assert _softmax.trace_count == before
    e = np.exp(A - A.max(axis=-1, keepdims=True))
    expected = e / e.sum(axis=-1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pt.RetraceWarning)
        for chunks in ((7, 17), (5, 17), (4, 17), (23, 17)):
            got = poot_da(A, chunks).map_blocks(_softmax).compute()
            assert_close(got.numpy(), expected, np.float32, ops=A.shape[1])


def test_worker_threads_trace_a_jitted_function_once_per_shape():
    """Worker threads that meet a new chunk shape together: one traces it, the others wait for
    its program."""
    import threading

    calls = []

    @pt.jit
    def scaled(b):
        calls.append(b.shape)
        return pt.tanh(b) * 2.0

    gate = threading.Barrier(4)

    def call(i):
        gate.wait()
        return scaled(pt.asarray(A[i:i + 4]))

    with dask.config.set(scheduler="threads", num_workers=4):
        outs = dask.compute(*[dask.delayed(call)(i) for i in range(4)])
    assert scaled.trace_count == 1 and calls == [(4, 17)], calls
    for i, out in enumerate(outs):
        assert_close(out.numpy(), np.tanh(A[i:i + 4]) * 2.0, np.float32, ops=2)
    with dask.config.set(scheduler="threads", num_workers=4):
        got = poot_da(A, (6, 17)).map_blocks(scaled).compute()
    assert (6, 17) in calls and (5, 17) in calls and len(calls) == len(set(calls)), calls
    assert scaled.trace_count == len(calls)
    assert_close(got.numpy(), np.tanh(A) * 2.0, np.float32, ops=2)


def test_jitted_map_blocks_with_block_info_and_block_id():
    """Dask passes `block_info` as a dict keyed by None and input numbers (keys of two types)."""
    @pt.jit
    def shift_rows(b, block_info=None):
        (r0, _), _ = block_info[None]["array-location"]
        return b + r0

    @pt.jit
    def shift_blocks(b, block_id=None):
        return b + 100.0 * block_id[0] + block_id[1]

    rows = np.arange(A.shape[0], dtype=np.float32)[:, None] // CHUNKS[0] * CHUNKS[0]
    got = poot_da(A).map_blocks(shift_rows, dtype=np.float32).compute()
    assert_close(got.numpy(), A + rows, np.float32, ops=2)
    ids = rows / CHUNKS[0] * 100 + np.arange(A.shape[1], dtype=np.float32) // CHUNKS[1]
    got = poot_da(A).map_blocks(shift_blocks, dtype=np.float32).compute()
    assert_close(got.numpy(), A + ids, np.float32, ops=3)


def test_a_jitted_function_that_ran_pickles_for_process_workers():
    """dask.distributed sends a task's function to worker processes by cloudpickle: a jitted
    function that has already run here (its traced programs hold locks and compiled code) goes as
    the function and its options, and traces again there."""
    cloudpickle = pytest.importorskip("cloudpickle")
    scale = pt.jit(lambda b, k: b * k, static_argnums=1)
    x = poot_da(A)
    local = x.map_blocks(scale, 3.0).compute().numpy()
    copy = cloudpickle.loads(cloudpickle.dumps(scale))
    assert copy.static_argnums == (1,) and copy.trace_count == 0
    np.testing.assert_array_equal(x.map_blocks(copy, 3.0).compute().numpy(), local)
    np.testing.assert_array_equal(local, A * 3.0)


def test_errors_inside_tasks_are_poot_errors_naming_the_users_line():
    x = poot_da(A)
    with pytest.raises(pt.ShapeError, match="matmul") as caught:
        da.map_blocks(lambda b: b @ pt.ones((4, 2), dtype=pt.float32), x, chunks=(7, 2),
                      dtype=np.float32).compute()
    assert __file__ in str(caught.value)
    idx = pt.asarray(np.array([0, 100]))
    with pytest.raises(pt.PootError, match="out of bounds"):
        x.map_blocks(lambda b: pt.take(b, idx, axis=0), chunks=(2, 5), dtype=np.float32).compute()
