"""convolve, correlate and sliding_window_view gather their windows through a lazily computed index
(two iotas added), never a host table of outputs x window: a 200k x 1001 convolve must not build an
8 GB int64 table. Checked structurally (no leaf of the recorded graph is larger than the inputs) and
against NumPy: modes, dtypes, swapped operands, complex conjugation, window shapes and axes, under
@pt.jit and on a vulkan device where there is one."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as np_swv

import poot as pt

swv = pt.lib.stride_tricks.sliding_window_view
MODES = ("full", "same", "valid")


def _leaves(node):
    """Every realized leaf (an input or an uploaded constant) the pending graph of `node` reads."""
    seen, stack, out = set(), [node], []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op is None:
            out.append(n)
        else:
            stack.extend(n.inputs)
    return out


def _operands(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "c":
        return rng.standard_normal(n) + 1j * rng.standard_normal(n)
    if kind == "b":
        return rng.random(n) > 0.5
    if kind == "i":
        return rng.integers(-9, 10, n).astype(np.int32)
    return rng.standard_normal(n).astype(np.float32 if kind == "f4" else np.float64)


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_a_long_convolution_records_no_table_of_outputs_by_taps(fn):
    n, m = 200_000, 1001
    x, w = pt.zeros(n), pt.ones(m)
    for mode in MODES:
        out = getattr(pt, fn)(x, w, mode=mode)
        big = [leaf for leaf in _leaves(out._node) if leaf.aval.size > n + m]
        assert not big, f"{fn} {mode}: host-built leaves {big}"


def test_sliding_windows_record_no_table_of_positions_by_window():
    x = pt.zeros((1000, 300))
    out = swv(x, (101, 11))
    assert out.shape == (900, 290, 101, 11)
    assert all(leaf.aval.size <= x.size for leaf in _leaves(out._node))


def test_a_long_convolution_matches_numpy():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(20_000), rng.standard_normal(501)
    got = pt.convolve(pt.asarray(x), pt.asarray(w), mode="same").numpy()
    np.testing.assert_allclose(got, np.convolve(x, w, mode="same"), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["f8", "f4", "i", "b", "c"])
@pytest.mark.parametrize("n,m", [(1, 1), (7, 3), (3, 7), (6, 6), (1, 5), (12, 4)])
def test_convolve_and_correlate_match_numpy(kind, n, m):
    a, v = _operands(kind, n, 1), _operands(kind, m, 2)
    for fn in ("convolve", "correlate"):
        for mode in MODES:
            got = getattr(pt, fn)(pt.asarray(a), pt.asarray(v), mode=mode).numpy()
            want = getattr(np, fn)(a, v, mode=mode)
            assert got.shape == want.shape and got.dtype == want.dtype, (fn, mode)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_mixed_dtypes_promote_and_empty_inputs_raise():
    a, v = np.arange(5, dtype=np.int8), np.array([0.5, 1.5], np.float32)
    got = pt.convolve(pt.asarray(a), pt.asarray(v)).numpy()
    want = np.convolve(a, v)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want)
    for fn in (pt.convolve, pt.correlate):
        with pytest.raises(pt.PootError):
            fn(pt.zeros(0), pt.ones(3))
        with pytest.raises(pt.PootError):
            fn(pt.ones(3), pt.zeros(0))


@pytest.mark.parametrize("window,axis,shape", [
    (3, None, (9,)), ((2, 3, 4), None, (5, 6, 7)), (3, 0, (5, 6, 7)), (3, -1, (5, 6, 7)),
    ((2, 2), (0, 2), (5, 6, 7)), ((2, 3), (1, 1), (5, 6, 7)), (0, 1, (5, 6, 7)), (7, 2, (5, 6, 7)),
])
def test_sliding_window_view_matches_numpys_view(window, axis, shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    got = swv(pt.asarray(x), window, axis=axis).numpy()
    want = np_swv(x, window, axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_windows_under_jit():
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal(200), rng.standard_normal(9)

    @pt.jit
    def f(x, w):
        return pt.convolve(x, w, mode="same"), pt.correlate(w, x, mode="full"), swv(x, 5).mean(-1)

    c, r, s = f(pt.asarray(a), pt.asarray(v))
    np.testing.assert_allclose(c.numpy(), np.convolve(a, v, mode="same"), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r.numpy(), np.correlate(v, a, mode="full"), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.numpy(), np_swv(a, 5).mean(-1), rtol=1e-12)


def test_windows_on_vulkan():
    try:
        with pt.device("vulkan"):
            pt.ones(1).numpy()
    except pt.PootError:
        pytest.skip("no vulkan device here (lavapipe or a GPU)")
    rng = np.random.default_rng(4)
    a, v = rng.standard_normal(300).astype(np.float32), rng.standard_normal(17).astype(np.float32)
    with pt.device("vulkan"):
        x, w = pt.asarray(a), pt.asarray(v)
        for mode in MODES:
            np.testing.assert_allclose(pt.convolve(x, w, mode=mode).numpy(), np.convolve(a, v, mode=mode),
                                       rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(pt.correlate(w, x, mode=mode).numpy(), np.correlate(v, a, mode=mode),
                                       rtol=1e-4, atol=1e-4)
        got = pt.jit(lambda u: swv(u, 9).mean(-1))(x).numpy()
        np.testing.assert_allclose(got, np_swv(a, 9).mean(-1), rtol=1e-5, atol=1e-5)
