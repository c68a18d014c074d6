"""Short scientific programs as a NumPy user writes them: a windowed spectrum and a spectrogram,
an image pipeline on uint8 pixels (padding modes, an integral-image box blur, Sobel edges,
thresholds, histograms), least-squares and decompositions, statistics with missing values, a
drawdown report, a Runge-Kutta integrator, and sorting / set bookkeeping of labels."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

from .harness import check_program


# -- spectrum: window, rfft, frequencies, inverse, complex64 spectra --------------------------------
FS, NPER, HOP = 200.0, 64, 16


def spectrum(xp, x):
    n = x.shape[-1]
    w = xp.hanning(n).astype(x.dtype)
    X = xp.fft.rfft(x * w)
    f = xp.fft.rfftfreq(n, d=1.0 / FS)
    power = xp.abs(X) ** 2 / (w ** 2).sum()
    peak = f[xp.argmax(power[1:]) + 1]
    back = xp.fft.irfft(X, n=n)                          # the windowed signal again
    centred = xp.fft.fftshift(xp.fft.fftfreq(n, d=1.0 / FS))
    frames = xp.lib.stride_tricks.sliding_window_view(x, NPER)[::HOP]
    frames = frames - frames.mean(axis=-1, keepdims=True)
    S = xp.fft.rfft(frames * xp.kaiser(NPER, 6.0), axis=-1).astype(xp.complex64)
    db = 10 * xp.log10(xp.abs(S) ** 2 + 1e-12)
    return power, peak, back, centred, S, db


def spectrum_run(xp, step, x):
    return step(xp, x)


def spectrum_inputs(dtype):
    t = np.arange(512) / FS
    r = np.random.default_rng(21)
    return ((np.sin(2 * np.pi * 12.5 * t) + 0.5 * np.sin(2 * np.pi * 40 * t) + 0.2 * r.normal(size=t.size))
            .astype(dtype),)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_spectrum_and_spectrogram(device, dtype):
    # an FFT of n points rounds about log2(n) times per output; the power sums n of them
    check_program(device, spectrum_run, spectrum, spectrum_inputs(dtype), ops=(512, 1, 512, 1, 256, 256))


# -- convolution and correlation modes, integer and float -------------------------------------------
def filters(xp, x, k, counts):
    smooth = xp.convolve(x, k / k.sum(), mode="same")
    full = xp.convolve(x, k, mode="full")
    valid = xp.correlate(x, k, mode="valid")
    lag = xp.argmax(xp.correlate(x, x[10:30], mode="full"))
    icount = xp.convolve(counts, xp.asarray([1, 2, 1]), mode="valid")   # integer result, exact
    return smooth, full, valid, lag, icount


def filters_run(xp, step, x, k, counts):
    return step(xp, x, k, counts)


def test_convolve_correlate_modes(device):
    r = np.random.default_rng(22)
    inputs = (r.normal(size=80), np.hamming(9), r.integers(0, 50, size=40))
    check_program(device, filters_run, filters, inputs, ops=32)


# -- image pipeline on uint8 pixels -----------------------------------------------------------------
def image(xp, img, mode):
    f = img.astype(xp.float32)
    p = xp.pad(f, 1, mode=mode)
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * f
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    mag = xp.hypot(gx, gy)
    # box blur by an integral image: two cumsums, then four corners per pixel
    k = 5
    c = xp.cumsum(xp.cumsum(xp.pad(f, k // 2, mode="edge"), axis=0), axis=1)
    c = xp.pad(c, ((1, 0), (1, 0)))
    blur = (c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]) / (k * k)
    binary = xp.where(blur > blur.mean(), xp.uint8(255), xp.uint8(0))
    saturated = xp.minimum(img.astype(xp.uint16) * 2, 255).astype(xp.uint8)
    shifted = xp.roll(img, (2, -3), axis=(0, 1))
    counts, edges = xp.histogram(img, bins=16, range=(0, 256))
    h2, _, _ = xp.histogram2d(gx.ravel(), gy.ravel(), bins=6, range=[[-600, 600], [-600, 600]])
    return lap, mag, blur, binary, saturated, shifted, counts, edges, h2, xp.gradient(blur)[1]


def image_run(xp, step, img, mode):
    return step(xp, img, mode)


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap", "constant", "symmetric"])
def test_image_pipeline(device, mode):
    r = np.random.default_rng(23)
    img = (r.random(size=(24, 31)) * 200 + np.linspace(0, 55, 31)).astype(np.uint8)
    # the integral image sums up to 24 * 31 pixel values in float32 before the corners cancel
    check_program(device, image_run, image, (img, mode), ops=(8, 16, 4096, 1, 1, 1, 1, 1, 1, 4096),
                  jit=mode == "reflect")


# -- least squares and decompositions ---------------------------------------------------------------
def fitting(xp, t, y, A, B):
    V = xp.stack([t ** 0, t, t ** 2, t ** 3], axis=1)
    coef, res, rank, sv = xp.linalg.lstsq(V, y, rcond=None)
    coef_pinv = xp.linalg.pinv(V) @ y
    X = xp.linalg.solve(A, B)                           # a batch of systems, several columns each
    sign, logdet = xp.linalg.slogdet(A)
    S = A[0] @ A[0].T
    w, U = xp.linalg.eigh(S)
    left, s, right = xp.linalg.svd(V, full_matrices=False)
    Q, R = xp.linalg.qr(V)
    P3 = xp.linalg.matrix_power(A[1], 3)
    gram = xp.einsum("bij,bik->bjk", A, A)
    traces = xp.einsum("bii->b", A)
    bilinear = xp.einsum("i,bij,j->b", y[:4], A, y[:4])
    k = xp.kron(xp.eye(2), A[0, :2, :2])
    td = xp.tensordot(A, B, axes=([0, 1], [0, 1]))
    return (coef, res, rank, sv, coef_pinv, X, sign, logdet, w, (U * w) @ U.T, s, (left * s) @ right,
            xp.abs(xp.diagonal(R)), Q @ R, P3, gram, traces, bilinear, k, td)


def fitting_run(xp, step, t, y, A, B):
    return step(xp, t, y, A, B)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_least_squares_and_decompositions(device, dtype):
    r = np.random.default_rng(24)
    t = np.linspace(-1, 1, 30)
    y = 1 - 2 * t + 0.5 * t ** 3 + 0.01 * r.normal(size=t.size)
    A = r.normal(size=(3, 4, 4)) + 4 * np.eye(4)
    B = r.normal(size=(3, 4, 2))
    inputs = tuple(a.astype(dtype) for a in (t, y, A, B))
    # factorizations of well-conditioned 4x4 and 30x4 matrices: a few hundred roundings
    check_program(device, fitting_run, fitting, inputs, ops=1000)


# -- statistics with missing values -----------------------------------------------------------------
def nanstats(xp, x, w, labels):
    q = xp.nanpercentile(x, [10, 50, 90], axis=0)      # an array q: float64 even for float32 data
    filled = xp.where(xp.isnan(x), xp.nanmean(x, axis=0), x)
    return (xp.nanmean(x, axis=1), xp.nanstd(x, axis=0, ddof=1), xp.nanmedian(x, axis=1), q,
            xp.nanquantile(x, 0.25), xp.corrcoef(filled.T), xp.cov(filled, rowvar=False, aweights=w),
            xp.average(filled, axis=0, weights=w), xp.median(filled, axis=0), xp.ptp(filled, axis=1),
            xp.bincount(labels, weights=w, minlength=5) if xp is np else
            xp.bincount(labels, weights=w, length=5))


def nanstats_run(xp, step, x, w, labels):
    return step(xp, x, w, labels)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_statistics_with_missing_values(device, dtype):
    r = np.random.default_rng(25)
    x = r.normal(size=(20, 4))
    x[r.random(size=x.shape) < 0.15] = np.nan
    x[:, 0] = np.where(np.isnan(x[:, 0]), 0.5, x[:, 0])
    inputs = (x.astype(dtype), r.random(size=20), np.arange(20) % 5)
    check_program(device, nanstats_run, nanstats, inputs, ops=64)


# -- a drawdown report: returns, compounding, running peaks, rolling means --------------------------
WINDOW = 5


def drawdown(xp, prices):
    rets = xp.diff(prices, axis=0) / prices[:-1]
    logret = xp.diff(xp.log(prices), axis=0, prepend=xp.log(prices[:1]))
    wealth = xp.cumprod(1 + rets, axis=0)
    peak = xp.maximum.accumulate(wealth, axis=0)
    dd = wealth / peak - 1
    c = xp.cumsum(prices, axis=0)
    rolling = (c[WINDOW:] - c[:-WINDOW]) / WINDOW
    sharpe = rets.mean(axis=0) / rets.std(axis=0, ddof=1) * xp.sqrt(252.0)
    return logret, wealth, dd, dd.min(axis=0), xp.argmin(dd, axis=0), rolling, sharpe


def drawdown_run(xp, step, prices):
    return step(xp, prices)


def test_drawdown_report(device):
    r = np.random.default_rng(26)
    prices = 100 * np.exp(np.cumsum(0.01 * r.normal(size=(80, 3)), axis=0))
    check_program(device, drawdown_run, drawdown, (prices,), ops=256)


# -- a Runge-Kutta integrator stepping a damped, driven oscillator ----------------------------------
H = 0.05


def rhs(xp, t, y):
    forcing = xp.sin(t).astype(y.dtype)   # np.sin(t) is a float64 NumPy scalar: keep y's precision
    return xp.stack([y[1], -y[0] - 0.1 * y[1] + forcing])


def rk4_step(xp, t, y):
    k1 = rhs(xp, t, y)
    k2 = rhs(xp, t + H / 2, y + H / 2 * k1)
    k3 = rhs(xp, t + H / 2, y + H / 2 * k2)
    k4 = rhs(xp, t + H, y + H * k3)
    return y + H / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_run(xp, step, y):
    path = [y]
    for i in range(40):
        y = step(xp, i * H, y)      # t changes each step: a traced float, one trace
        path.append(y)
    return y, xp.stack(path)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_runge_kutta_integrator(device, dtype):
    check_program(device, rk4_run, rk4_step, (np.array([1.0, 0.0], dtype),), ops=400)


# -- sorting and set bookkeeping of labelled records (eager: the results' sizes depend on values) ----
def bookkeeping(xp, ids, other, score, group):
    u, inv, counts = xp.unique(ids, return_inverse=True, return_counts=True)
    rows, first = xp.unique(xp.stack([group, ids % 3], axis=1), axis=0, return_index=True)
    common, ia, ib = xp.intersect1d(ids, other, return_indices=True)
    only = xp.setdiff1d(u, xp.unique(other), assume_unique=True)
    either = xp.union1d(ids, other)
    seen = xp.isin(ids, other)
    order = xp.lexsort((-score, group))                 # by group, then by falling score
    by_col = xp.sort(score.reshape(6, 5), axis=0, kind="stable")
    rank_in_col = xp.argsort(score.reshape(6, 5), axis=1, kind="stable")
    third = xp.partition(score, 3)[3]
    smallest = xp.sort(score[xp.argpartition(score, 4)[:5]])
    left = xp.searchsorted(u, other, side="left")
    right = xp.searchsorted(u, other, side="right")
    return (u, inv, counts, rows, first, common, ia, ib, only, either, seen, order, by_col, rank_in_col,
            third, smallest, left, right)


def bookkeeping_run(xp, step, *inputs):
    return step(xp, *inputs)


def test_sorting_and_set_bookkeeping(device):
    r = np.random.default_rng(27)
    inputs = (r.integers(0, 15, size=30), r.integers(8, 25, size=12), r.integers(0, 40, size=30) / 4.0,
              r.integers(0, 3, size=30))
    check_program(device, bookkeeping_run, bookkeeping, inputs, ops=1, jit=False)


def test_float32_percentiles_of_an_array_q_match_numpy_exactly():
    """nanpercentile of float32 data at an array of q is float64, rounded as NumPy rounds it (the
    statistics program's tolerance is float64's, so a float32-accurate result would not pass)."""
    x = np.random.default_rng(28).normal(size=(9, 5)).astype(np.float32)
    got = pt.nanpercentile(pt.asarray(x), [10, 50, 90], axis=0).numpy()
    np.testing.assert_array_equal(got, np.nanpercentile(x, [10, 50, 90], axis=0))
