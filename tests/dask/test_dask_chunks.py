"""poot arrays as Dask chunks, in process: every step keeps poot chunks, runs one poot program per
task, reads nothing back to NumPy, and matches NumPy."""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'poot[dask]')")
import dask  # noqa: E402

import poot as pt  # noqa: E402
import poot.dask as pdask  # noqa: E402
from poot.trace import counters  # noqa: E402
from tolerance import assert_close  # noqa: E402

RNG = np.random.default_rng(7)
A = RNG.random((60, 40), dtype=np.float32)
B = RNG.random((40, 30), dtype=np.float32)


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def run(darr, expected, ops: float = 1, one_program: bool = True):
    """Compute `darr`, check it against `expected`, and that every task kept poot arrays: at most
    one program and no host read per task (`one_program=False`: Dask's own step reads a scalar)."""
    pdask.task_stats(clear=True)
    out = darr.compute()
    stats = pdask.task_stats()
    assert isinstance(out, pt.Array), f"the result is a {type(out).__name__}, not a poot array"
    assert stats, "no task was recorded: the task-boundary pass is not installed"
    if one_program:
        assert all(s.programs <= 1 and s.host_reads == 0 for s in stats), stats
        assert any(s.programs == 1 for s in stats)
    assert_close(out.numpy(), expected, expected.dtype, ops=ops)
    return out


def test_import_poot_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, poot; assert 'dask' not in sys.modules, 'import poot imported dask'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_from_array_keeps_a_poot_meta_and_chunks(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    assert isinstance(x._meta, pt.Array) and x._meta.size == 0 and x._meta.ndim == 2
    assert x.dtype == np.float32 and x.dtype.type is np.float32
    blocks = x.to_delayed().ravel()
    assert all(isinstance(b.compute(), pt.Array) for b in blocks)
    run(x, A)
    # a poot array meeting a Dask array defers to Dask (never read to the host whole)
    assert isinstance(pt.asarray(A) + x, da.Array) and isinstance(np.add(pt.asarray(A), x), da.Array)


def test_elementwise_chain_is_one_program_per_task(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    y = da.exp(x) * 2.0 - da.sqrt(x) + 1.0
    out = run(y, np.exp(A) * 2.0 - np.sqrt(A) + 1.0, ops=4)
    assert out.device == device


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sum_and_mean(device, axis):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.sum(axis=axis), A.sum(axis=axis), ops=A.size)
    run(x.mean(axis=axis), A.mean(axis=axis), ops=A.size)


def test_max_and_nanmean(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.max(), np.asarray(A.max()))
    run(x.min(axis=1), A.min(axis=1))
    run(da.nanmean(x, axis=0), np.nanmean(A, axis=0), ops=A.size)


def test_var_over_an_axis(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.var(axis=0), A.var(axis=0).astype(np.float32), ops=A.size)


def test_argmax_over_an_axis(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.argmax(axis=0), A.argmax(axis=0))
    run(x.argmin(axis=1), A.argmin(axis=1))


def test_argmax_of_everything(device):
    # Dask's chunk step turns the flat position into a global one with np.unravel_index on the
    # host: one scalar read per chunk (see docs/dask.md); the chunks themselves stay poot arrays
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.argmax(), np.asarray(A.argmax()), one_program=False)


def test_matmul_and_tensordot(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    y = da.from_array(pt.asarray(B), chunks=(20, 10))
    run(x @ y, A @ B, ops=A.shape[1])
    run(da.tensordot(x, y, axes=1), np.tensordot(A, B, axes=1), ops=A.shape[1])
    run(da.einsum("ij,ij->i", x, x), np.einsum("ij,ij->i", A, A), ops=A.shape[1])


def test_rechunk_transpose_slice_concatenate(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.rechunk((25, 40)), A)
    run(x.T.rechunk((40, 7)), A.T)
    run(x[::3, 5:33], A[::3, 5:33])
    run(x[[1, 7, 44]], A[[1, 7, 44]])
    run(da.concatenate([x, x * 2], axis=0), np.concatenate([A, A * 2]))


def test_blockwise_and_map_blocks(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    y = da.blockwise(lambda u, v: u * v + 1.0, "ij", x, "ij", x, "ij", dtype=np.float32)
    run(y, A * A + 1.0, ops=2)
    z = x.map_blocks(lambda b: pt.tanh(b) * 3.0)
    assert isinstance(z._meta, pt.Array)
    run(z, np.tanh(A) * 3.0, ops=2)


def test_map_blocks_makes_chunks_and_from_delayed(device):
    def block(block_info=None):
        (start, stop), = block_info[None]["array-location"]
        return pt.arange(start, stop, dtype=pt.float32) * 0.5

    x = da.map_blocks(block, chunks=((10,) * 5,), dtype=np.float32, meta=pdask.meta(1))
    run(x * 2.0, np.arange(50, dtype=np.float32))
    parts = [da.from_delayed(dask.delayed(pt.full)((4,), float(i), dtype=pt.float32), shape=(4,),
                             dtype=np.float32, meta=pdask.meta(1)) for i in range(3)]
    run(da.concatenate(parts).sum(), np.asarray(np.float32(12.0)))   # 4 * (0 + 1 + 2)


def test_a_task_realizes_its_graph_as_one_program(device):
    """Measured inside the task: the chain recorded there runs when the task returns, once."""
    inside = []

    def chain(b):
        with counters.measure() as m:
            y = (pt.exp(b) - 1.0) * b + b.sum(axis=1, keepdims=True)
        inside.append((m.programs, m.host_reads, y.is_realized))
        return y

    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    expected = (np.exp(A) - 1.0) * A  # the row sums are per chunk: added below
    out = run(x.map_blocks(chain), _per_chunk_row_sums(expected, A, 20), ops=30)
    assert inside and all(rec == (0, 0, False) for rec in inside), inside
    assert isinstance(out, pt.Array)


def _per_chunk_row_sums(base, a, width):
    out = base.copy()
    for j in range(0, a.shape[1], width):
        out[:, j:j + width] += a[:, j:j + width].sum(axis=1, keepdims=True)
    return out


def test_threaded_scheduler_keeps_tasks_apart(device):
    # tasks on several threads: each realizes only its own graph (inputs are already realized)
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    y = ((x - x.mean(axis=0)) ** 2).sum(axis=0)
    with dask.config.set(scheduler="threads", num_workers=2):
        out = y.compute()
    assert_close(out.numpy(), ((A - A.mean(axis=0)) ** 2).sum(axis=0), np.float32, ops=A.size)


def test_to_numpy_backend_is_the_one_conversion(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    out = x.to_backend("numpy").compute()
    assert isinstance(out, np.ndarray) and np.array_equal(out, A)


def test_sizeof_does_not_realize():
    from dask.sizeof import sizeof

    y = pt.asarray(A) * 2.0
    assert sizeof(y) == A.nbytes and not y.is_realized


def test_tokenize_follows_the_value():
    from dask.base import tokenize

    assert tokenize(pt.asarray(A)) == tokenize(pt.asarray(A.copy()))
    assert tokenize(pt.asarray(A)) != tokenize(pt.asarray(A + 1))


def test_register_is_idempotent_and_installed():
    assert pdask.register() is True
    assert dask.config.get("array_optimize") is pdask.tasks.optimize


def test_cumsum_where_and_percentile(device):
    x = da.from_array(pt.asarray(A), chunks=(15, 20))
    run(x.cumsum(axis=0), A.cumsum(axis=0), ops=A.shape[0])
    run(da.where(x > 0.5, x, 0.0), np.where(A > 0.5, A, 0.0))
    # Dask's percentile merges per-chunk percentiles (an approximation): compare with Dask's own
    # answer on NumPy chunks; the merge reads the small per-chunk results with NumPy
    col = A[:, 0]
    got = da.percentile(da.from_array(pt.asarray(col), chunks=15), [10, 50, 90]).compute()
    want = da.percentile(da.from_array(col, chunks=15), [10, 50, 90]).compute()
    assert isinstance(got, pt.Array)
    assert_close(got.numpy(), want, np.float64, ops=4)
