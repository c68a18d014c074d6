"""Image-processing programs as NumPy users write them on uint8 and float32 images (odd sizes,
grayscale and HxWx3 colour): convolution with slices and with sliding_window_view, Sobel edges,
separable Gaussian blur over each padding mode, box filters from integral images, histogram
equalization with lookup tables, Otsu's threshold, morphology, flips and rotations, nearest and
bilinear resizing, colour conversion, alpha blending with uint8 wraparound and clipping, and
connected-component labelling passes. Each runs with NumPy, with poot eagerly and under `@pt.jit`;
integer results must match exactly, float ones within their dtype's tolerance."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

from .harness import compare, to_poot

H, W = 37, 51   # odd, so no size divides evenly


def images(seed=0):
    rng = np.random.default_rng(seed)
    gray = rng.integers(0, 256, (H, W), dtype=np.uint8)
    color = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    return gray, color


def check(device, fn, *inputs, ops=8):
    """fn(xp, *inputs) with NumPy, then with poot eagerly and jitted; every result leaf must match."""
    expected = fn(np, *inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for label, f in (("eager", fn), ("jit", pt.jit(fn, static_argnums=0))):
        got = f(pt, *to_poot(inputs))
        compare(got if isinstance(got, tuple) else (got,), expected, device, ops, label)


# -- filters ----------------------------------------------------------------------------------------
def convolve(xp, img, k):
    kh, kw = k.shape
    oh, ow = img.shape[0] - kh + 1, img.shape[1] - kw + 1
    f = img.astype(xp.float32)
    out = xp.zeros((oh, ow), dtype=xp.float32)
    for i in range(kh):          # one shifted slice per tap
        for j in range(kw):
            out = out + k[i, j] * f[i:i + oh, j:j + ow]
    win = xp.lib.stride_tricks.sliding_window_view(f, k.shape)
    return out, (win * k).sum(axis=(-2, -1)), xp.einsum("ijkl,kl->ij", win, k)


def test_convolution_slices_and_windows(device):
    gray, _ = images()
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16
    check(device, convolve, gray, k, ops=16)


def sobel(xp, img):
    p = xp.pad(img.astype(xp.float32), 1, mode="edge")
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    mag = xp.sqrt(gx * gx + gy * gy)
    edges = (mag > 200).astype(xp.uint8) * 255
    return gx, gy, mag, edges


def test_sobel_edges(device):
    gray, _ = images()
    check(device, sobel, gray)


@pytest.mark.parametrize("mode", ["reflect", "edge", "constant", "symmetric", "wrap"])
def test_separable_gaussian_blur(device, mode):
    def blur(xp, img):
        r = 3
        x = xp.arange(-r, r + 1, dtype=xp.float32)
        k = xp.exp(-x * x / 4.5)
        k = k / k.sum()
        p = xp.pad(img.astype(xp.float32), ((r, r), (r, r), (0, 0)), mode=mode)
        rows = sum(k[i] * p[:, i:i + W] for i in range(2 * r + 1))
        out = sum(k[i] * rows[i:i + H] for i in range(2 * r + 1))
        return out, xp.clip(out + 0.5, 0, 255).astype(xp.uint8)

    _, color = images()
    check(device, blur, color, ops=32)


def box_filter(xp, img, r=2):
    ii = xp.pad(xp.cumsum(xp.cumsum(img, axis=0), axis=1), ((1, 0), (1, 0)))   # uint8 -> uint64
    k = 2 * r + 1
    s = ii[k:, k:] - ii[:-k, k:] - ii[k:, :-k] + ii[:-k, :-k]
    return ii, s, (s // (k * k)).astype(xp.uint8)


def test_box_filter_from_integral_image(device):
    gray, _ = images()
    check(device, box_filter, gray)


# -- histograms and thresholds ----------------------------------------------------------------------
def equalize(xp, img):
    hist = xp.bincount(img.ravel(), minlength=256)   # uint8: always 256 bins, so jit can trace it
    cdf = hist.cumsum()
    lut = (cdf * 255 // cdf[-1]).astype(xp.uint8)
    h2, _ = xp.histogram(img, bins=256, range=(0, 256))
    smooth = xp.interp(img.astype(xp.float32), xp.arange(256), cdf / cdf[-1] * 255)
    return hist, lut[img], xp.take(lut, img), h2, smooth


def test_histogram_equalization(device):
    gray, color = images()
    check(device, equalize, gray)
    check(device, lambda xp, c: xp.stack([equalize(xp, c[..., i])[1] for i in range(3)], axis=-1), color)


def otsu(xp, img):
    hist = xp.bincount(img.ravel(), minlength=256).astype(xp.float32)
    p = hist / hist.sum()
    omega = xp.cumsum(p)
    mu = xp.cumsum(p * xp.arange(256, dtype=xp.float32))
    denom = omega * (1 - omega)
    between = xp.where(denom > 1e-6, (mu[-1] * omega - mu) ** 2 / xp.where(denom > 1e-6, denom, 1), 0)
    t = xp.argmax(between)
    return t, xp.where(img > t, 255, 0).astype(xp.uint8), (img > t).view(xp.uint8) * 255


def test_otsu_threshold(device):
    rng = np.random.default_rng(3)   # two well separated modes, so the threshold is clear-cut
    img = np.where(rng.random((H, W)) < 0.4, rng.normal(60, 10, (H, W)), rng.normal(180, 12, (H, W)))
    check(device, otsu, np.clip(img, 0, 255).astype(np.uint8))


def test_bincount_of_uint8_has_a_static_length():
    x = pt.asarray(np.array([0, 3, 3, 255], np.uint8))
    got = pt.jit(lambda v: pt.bincount(v, minlength=256))(x)
    assert got.shape == (256,) and got.numpy()[[0, 3, 255]].tolist() == [1, 2, 1]
    with pytest.raises(pt.TracerError):   # a uint8 value may reach bin 199: the length is max(x) + 1
        pt.jit(lambda v: pt.bincount(v, minlength=199))(x)


# -- morphology, geometry ---------------------------------------------------------------------------
def morphology(xp, img):
    p = xp.pad(img, 1, mode="constant", constant_values=255)
    eroded = xp.lib.stride_tricks.sliding_window_view(p, (3, 3)).min(axis=(-2, -1))
    q = xp.pad(eroded, 1)
    dilated = q[:H, :W]
    for i in range(3):
        for j in range(3):
            dilated = xp.maximum(dilated, q[i:i + H, j:j + W])
    return eroded, dilated, img - dilated    # uint8: the difference wraps


def test_erosion_dilation(device):
    gray, _ = images()
    check(device, morphology, gray)


def geometry(xp, img):
    return (xp.rot90(img), xp.rot90(img, 2), xp.rot90(img, -1, axes=(1, 0)), xp.flip(img, axis=0),
            xp.fliplr(img), img[::-1, ::-1, ::-1], xp.transpose(img, (1, 0, 2)), xp.moveaxis(img, -1, 0))


def test_flips_and_rotations(device):
    _, color = images()
    check(device, geometry, color)


def resize(xp, img, oh=23, ow=80):
    h, w = img.shape[:2]
    ri, ci = xp.arange(oh) * h // oh, xp.arange(ow) * w // ow
    nearest = img[ri[:, None], ci[None, :]]
    taken = xp.take(xp.take(img, ri, axis=0), ci, axis=1)
    # float64 coordinates: a GPU may contract (i + 0.5) * s - 0.5 into one FMA, and the weights' last
    # bit, times a difference of up to 255 between neighbours, would exceed float32's tolerance
    y = xp.clip((xp.arange(oh, dtype=xp.float64) + 0.5) * (h / oh) - 0.5, 0, h - 1)
    x = xp.clip((xp.arange(ow, dtype=xp.float64) + 0.5) * (w / ow) - 0.5, 0, w - 1)
    y0, x0 = xp.floor(y).astype(xp.int32), xp.floor(x).astype(xp.int32)
    y1, x1 = xp.minimum(y0 + 1, h - 1), xp.minimum(x0 + 1, w - 1)
    wy, wx = (y - y0)[:, None, None], (x - x0)[None, :, None]
    f = img.astype(xp.float32)
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bottom = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    return nearest, taken, top * (1 - wy) + bottom * wy


def test_nearest_and_bilinear_resize(device):
    _, color = images()
    check(device, resize, color)


# -- colour -----------------------------------------------------------------------------------------
def colour(xp, img):
    f = img.astype(xp.float32)
    w = xp.array([0.299, 0.587, 0.114], dtype=xp.float32)
    wi = xp.array([77, 150, 29], dtype=xp.uint16)
    mx, mn = f.max(-1), f.min(-1)
    d = mx - mn
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    dd = xp.where(d > 0, d, 1)
    hue = xp.where(mx == r, ((g - b) / dd) % 6, xp.where(mx == g, (b - r) / dd + 2, (r - g) / dd + 4))
    hue = xp.where(d > 0, hue * 60, 0)
    sat = xp.where(mx > 0, d / xp.where(mx > 0, mx, 1), 0)
    return (f @ w, xp.tensordot(f, w, axes=([2], [0])), (img @ wi) >> 8, xp.argmax(img, axis=-1),
            xp.stack([hue, sat, mx / 255], axis=-1))


def test_colour_conversion(device):
    _, color = images()
    check(device, colour, color)


def blend(xp, a, b, alpha):
    t = alpha[..., None].astype(xp.float32) / 255
    mixed = a * t + b * (1 - t)
    return (a + b, a - b, a * 3, 255 - a, xp.clip(a.astype(xp.int16) + b, 0, 255).astype(xp.uint8),
            mixed, xp.clip(mixed + 0.5, 0, 255).astype(xp.uint8), (a // 2 + b // 2), a << 2)


def test_alpha_blending_and_uint8_wraparound(device):
    gray, color = images()
    _, other = images(1)
    check(device, blend, color, other, gray)


def test_round_to_decimals_of_a_scaled_image(device):
    # round(x * s, 2) scales by a literal 100: a compiler that reassociates (x * s) * 100 into
    # (x * 100) * s lands a product with a fractional part near .5 on the other side of it
    x = np.random.default_rng(5).random((H, W, 8), dtype=np.float32)
    check(device, lambda xp, v: (xp.round(v * 255, 2), xp.round(v * 3, 3)), x, ops=1)


# -- labelling --------------------------------------------------------------------------------------
def label(xp, img, passes=30):
    fg = img > 0
    lab = xp.where(fg, xp.arange(1, img.size + 1, dtype=xp.int32).reshape(img.shape), 0)
    for _ in range(passes):   # each pass spreads the largest label to 4-neighbours in the foreground
        p = xp.pad(lab, 1)
        m = xp.maximum(xp.maximum(p[:-2, 1:-1], p[2:, 1:-1]), xp.maximum(p[1:-1, :-2], p[1:-1, 2:]))
        lab = xp.where(fg, xp.maximum(lab, m), 0)
    return lab


def test_connected_component_labelling(device):
    blobs = (np.random.default_rng(2).random((H, W)) > 0.55).astype(np.uint8)
    check(device, label, blobs)
