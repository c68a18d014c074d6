"""pt.nn.conv1d/conv2d and max/avg pooling against NumPy references written as explicit loops (PyTorch's
definitions: cross-correlation, NCHW, weight (out, in / groups, kH, kW)); gradients against finite
differences in float64; inside @pt.jit; on every device of POOT_TEST_DEVICES; and the argument errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import poot as pt


# --- references (explicit loops) -----------------------------------------------------------------
def _pads(padding, kernel, dilation, n):
    if padding == "valid":
        return [(0, 0)] * n
    if padding == "same":
        tot = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [(t // 2, t - t // 2) for t in tot]
    p = padding if isinstance(padding, tuple) else (padding,) * n
    return [(q, q) for q in p]


def ref_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    N, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    sh, sw = stride if isinstance(stride, tuple) else (stride, stride)
    dh, dw = dilation if isinstance(dilation, tuple) else (dilation, dilation)
    (pt_, pb), (pl, pr) = _pads(padding, (KH, KW), (dh, dw), 2)
    xp = np.zeros((N, C, H + pt_ + pb, W + pl + pr))
    xp[:, :, pt_:pt_ + H, pl:pl + W] = x
    OH = (xp.shape[2] - dh * (KH - 1) - 1) // sh + 1
    OW = (xp.shape[3] - dw * (KW - 1) - 1) // sw + 1
    Og = O // groups
    out = np.zeros((N, O, OH, OW))
    for n, o, i, j in itertools.product(range(N), range(O), range(OH), range(OW)):
        g = o // Og
        acc = 0.0
        for c, ki, kj in itertools.product(range(Cg), range(KH), range(KW)):
            acc += xp[n, g * Cg + c, i * sh + ki * dh, j * sw + kj * dw] * w[o, c, ki, kj]
        out[n, o, i, j] = acc + (b[o] if b is not None else 0.0)
    return out


def ref_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    pad = padding if isinstance(padding, str) else (0, padding[0] if isinstance(padding, tuple) else padding)
    s = (1, stride[0] if isinstance(stride, tuple) else stride)
    d = (1, dilation[0] if isinstance(dilation, tuple) else dilation)
    if pad == "same":       # only the L axis pads: the H axis has kernel 1
        pad = "same"
    return ref_conv2d(np.asarray(x)[:, :, None, :], np.asarray(w)[:, :, None, :], b, s, pad, d, groups)[:, :, 0, :]


def ref_pool2d(x, k, s, p, kind, count_include_pad=True):
    x = np.asarray(x, np.float64)
    N, C, H, W = x.shape
    kh, kw = k
    sh, sw = s
    ph, pw = p
    OH = (H + 2 * ph - kh) // sh + 1
    OW = (W + 2 * pw - kw) // sw + 1
    out = np.zeros((N, C, OH, OW))
    for n, c, i, j in itertools.product(range(N), range(C), range(OH), range(OW)):
        vals = []
        for a, b in itertools.product(range(kh), range(kw)):
            r, q = i * sh + a - ph, j * sw + b - pw
            inside = 0 <= r < H and 0 <= q < W
            if inside:
                vals.append(x[n, c, r, q])
            elif kind == "avg" and count_include_pad:
                vals.append(0.0)
        out[n, c, i, j] = max(vals) if kind == "max" else sum(vals) / len(vals)
    return out


def _rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


# --- conv2d --------------------------------------------------------------------------------------
CONV2D = {  # id -> (x shape, w shape, kwargs)
    "odd": ((2, 3, 7, 5), (4, 3, 3, 2), {}),
    "stride2": ((1, 2, 9, 8), (3, 2, 3, 3), {"stride": 2}),
    "stride_tuple": ((1, 2, 9, 8), (3, 2, 2, 3), {"stride": (2, 1)}),
    "padding": ((2, 2, 5, 6), (3, 2, 3, 3), {"padding": 1}),
    "padding_tuple": ((1, 2, 5, 6), (3, 2, 3, 3), {"padding": (2, 0)}),
    "dilation2": ((1, 2, 9, 9), (2, 2, 3, 3), {"dilation": 2}),
    "all": ((2, 4, 11, 10), (6, 2, 3, 2), {"stride": (2, 3), "padding": (1, 2), "dilation": (2, 1),
                                           "groups": 2}),
    "groups2": ((2, 4, 6, 6), (6, 2, 3, 3), {"groups": 2}),
    "depthwise": ((2, 3, 6, 7), (6, 1, 3, 3), {"groups": 3, "padding": 1}),
    "same_odd": ((1, 2, 7, 6), (3, 2, 3, 3), {"padding": "same"}),
    "same_even_dilated": ((1, 2, 7, 6), (3, 2, 4, 2), {"padding": "same", "dilation": (1, 2)}),
    "valid": ((1, 2, 5, 5), (3, 2, 5, 5), {"padding": "valid"}),
    "1x1": ((2, 5, 4, 3), (7, 5, 1, 1), {}),
}


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("case", list(CONV2D))
def test_conv2d_matches_loops(case, bias):
    xs, ws, kw = CONV2D[case]
    x, w = _rand(xs, 0), _rand(ws, 1)
    b = _rand((ws[0],), 2) if bias else None
    got = pt.nn.conv2d(pt.array(x), pt.array(w), None if b is None else pt.array(b), **kw)
    want = ref_conv2d(x, w, b, **kw)
    assert got.shape == want.shape and got.dtype == pt.float32
    _close(got, want)


def test_conv2d_unbatched_and_numpy_operands():
    x, w = _rand((3, 6, 5), 0), _rand((4, 3, 3, 3), 1)
    got = pt.nn.conv2d(x, w, padding=1)
    _close(got, ref_conv2d(x[None], w, padding=1)[0])


def test_conv2d_float64_and_float16():
    x, w = _rand((1, 2, 6, 5), 0, np.float64), _rand((3, 2, 3, 3), 1, np.float64)
    got = pt.nn.conv2d(x, w, stride=2, padding=1)
    assert got.dtype == pt.float64
    _close(got, ref_conv2d(x, w, stride=2, padding=1), rtol=1e-12, atol=1e-12)
    h = pt.nn.conv2d(x.astype(np.float16), w.astype(np.float16))
    assert h.dtype == pt.float16
    _close(h, ref_conv2d(x.astype(np.float16), w.astype(np.float16)), rtol=2e-2, atol=2e-2)


# --- conv1d --------------------------------------------------------------------------------------
CONV1D = {
    "odd": ((2, 3, 11), (4, 3, 3), {}),
    "stride_pad_dil": ((2, 2, 13), (3, 2, 3), {"stride": 2, "padding": 2, "dilation": 2}),
    "groups_bias": ((1, 4, 9), (6, 2, 4), {"groups": 2, "padding": 1}),
    "depthwise": ((1, 3, 9), (3, 1, 5), {"groups": 3}),
    "same_even": ((1, 2, 8), (2, 2, 4), {"padding": "same"}),
}


@pytest.mark.parametrize("case", list(CONV1D))
def test_conv1d_matches_loops(case):
    xs, ws, kw = CONV1D[case]
    x, w, b = _rand(xs, 0), _rand(ws, 1), _rand((ws[0],), 2)
    got = pt.nn.conv1d(pt.array(x), pt.array(w), pt.array(b), **kw)
    want = ref_conv1d(x, w, b, **kw)
    assert got.shape == want.shape
    _close(got, want)


# --- pooling -------------------------------------------------------------------------------------
POOL = [  # (x shape, kernel, stride, padding)
    ((2, 3, 7, 6), (2, 2), None, (0, 0)),
    ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1)),
    ((1, 2, 8, 5), (3, 2), (1, 2), (1, 0)),
    ((1, 1, 5, 5), (5, 5), None, (2, 2)),
]


@pytest.mark.parametrize("xs,k,s,p", POOL, ids=[f"pool{i}" for i in range(len(POOL))])
def test_pool2d_matches_loops(xs, k, s, p):
    x = _rand(xs, 3)
    st = k if s is None else s
    _close(pt.nn.max_pool2d(pt.array(x), k, s, p), ref_pool2d(x, k, st, p, "max"))
    _close(pt.nn.avg_pool2d(pt.array(x), k, s, p), ref_pool2d(x, k, st, p, "avg"))
    _close(pt.nn.avg_pool2d(pt.array(x), k, s, p, count_include_pad=False),
           ref_pool2d(x, k, st, p, "avg", count_include_pad=False))


def test_max_pool_pads_with_minus_inf():
    x = -np.ones((1, 1, 3, 3), np.float32) * 5     # all negative: a zero pad would win
    got = pt.nn.max_pool2d(x, 3, stride=1, padding=1).numpy()
    assert (got == -5).all()
    xi = np.arange(-9, 0, dtype=np.int32).reshape(1, 1, 3, 3)
    gi = pt.nn.max_pool2d(xi, 2, stride=1, padding=1)
    assert gi.dtype == pt.int32
    np.testing.assert_array_equal(gi.numpy(), ref_pool2d(xi, (2, 2), (1, 1), (1, 1), "max"))


def test_pool1d_matches_loops():
    x = _rand((2, 3, 11), 4)
    want_max = ref_pool2d(x[:, :, None, :], (1, 3), (1, 2), (0, 1), "max")[:, :, 0]
    want_avg = ref_pool2d(x[:, :, None, :], (1, 3), (1, 2), (0, 1), "avg", False)[:, :, 0]
    _close(pt.nn.max_pool1d(x, 3, 2, 1), want_max)
    _close(pt.nn.avg_pool1d(x, 3, 2, 1, count_include_pad=False), want_avg)
    _close(pt.nn.avg_pool1d(x[0], 3), ref_pool2d(x[:1, :, None, :], (1, 3), (1, 3), (0, 0), "avg")[0, :, 0])


# --- gradients -----------------------------------------------------------------------------------
def _fd(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


def test_conv2d_grad_matches_finite_differences():
    x, w, b = _rand((2, 4, 5, 6), 5, np.float64), _rand((4, 2, 3, 2), 6, np.float64), _rand((4,), 7, np.float64)
    kw = {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2}
    r = _rand((2, 4, 3, 6), 8, np.float64)    # a random cotangent: sum(conv * r)

    def loss(a, c, d):
        return (pt.nn.conv2d(a, c, d, **kw) * r).sum()

    gx, gw, gb = pt.grad(loss, argnums=(0, 1, 2))(pt.array(x), pt.array(w), pt.array(b))
    assert ref_conv2d(x, w, b, **kw).shape == r.shape
    np.testing.assert_allclose(gx.numpy(), _fd(lambda a: (ref_conv2d(a, w, b, **kw) * r).sum(), x), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(gw.numpy(), _fd(lambda c: (ref_conv2d(x, c, b, **kw) * r).sum(), w), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(gb.numpy(), r.sum(axis=(0, 2, 3)), rtol=1e-12)


def test_pool_grads_match_finite_differences():
    x = _rand((1, 2, 5, 5), 9, np.float64)
    r = _rand((1, 2, 3, 3), 10, np.float64)
    for kind, f in (("max", pt.nn.max_pool2d), ("avg", pt.nn.avg_pool2d)):
        g = pt.grad(lambda a: (f(a, 3, 2, 1) * r).sum())(pt.array(x)).numpy()
        want = _fd(lambda a: (ref_pool2d(a, (3, 3), (2, 2), (1, 1), kind) * r).sum(), x)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7, err_msg=kind)


# --- jit, devices --------------------------------------------------------------------------------
def test_conv_and_pool_inside_jit():
    x, w, b = _rand((2, 3, 8, 8), 11), _rand((4, 3, 3, 3), 12), _rand((4,), 13)

    @pt.jit
    def net(x, w, b):
        h = pt.nn.relu(pt.nn.conv2d(x, w, b, padding="same"))
        return pt.nn.max_pool2d(h, 2)

    want = ref_pool2d(np.maximum(ref_conv2d(x, w, b, padding="same"), 0), (2, 2), (2, 2), (0, 0), "max")
    for _ in range(2):      # the second call replays the traced program
        _close(net(pt.array(x), pt.array(w), pt.array(b)), want)

    step = pt.jit(pt.grad(lambda w: (pt.nn.conv2d(pt.array(x), w, stride=2) ** 2).sum()))
    g = step(pt.array(w)).numpy()
    assert g.shape == w.shape and np.isfinite(g).all()


@pytest.mark.parametrize("case", ["all", "depthwise", "same_even_dilated"])
def test_conv2d_on_device(device, case):
    xs, ws, kw = CONV2D[case]
    x, w, b = _rand(xs, 0), _rand(ws, 1), _rand((ws[0],), 2)
    got = pt.nn.conv2d(pt.array(x), pt.array(w), pt.array(b), **kw)
    assert got.device == device
    _close(got, ref_conv2d(x, w, b, **kw), rtol=1e-4, atol=1e-4)


def test_pool_and_conv1d_on_device(device):
    x = _rand((1, 2, 7, 7), 3)
    _close(pt.nn.max_pool2d(pt.array(x), 3, 2, 1), ref_pool2d(x, (3, 3), (2, 2), (1, 1), "max"))
    _close(pt.nn.avg_pool2d(pt.array(x), 3, 2, 1, count_include_pad=False),
           ref_pool2d(x, (3, 3), (2, 2), (1, 1), "avg", False))
    xs, ws, kw = CONV1D["stride_pad_dil"]
    a, c = _rand(xs, 0), _rand(ws, 1)
    _close(pt.nn.conv1d(pt.array(a), pt.array(c), **kw), ref_conv1d(a, c, **kw), rtol=1e-4, atol=1e-4)


# --- errors --------------------------------------------------------------------------------------
X4 = np.zeros((1, 4, 5, 5), np.float32)
W4 = np.zeros((2, 4, 3, 3), np.float32)


@pytest.mark.parametrize("call,err,words", [
    (lambda: pt.nn.conv2d(np.zeros((5, 5), np.float32), W4), pt.ShapeError, "input must be 4-D"),
    (lambda: pt.nn.conv2d(X4, np.zeros((2, 4, 3), np.float32)), pt.ShapeError, "weight must be 4-D"),
    (lambda: pt.nn.conv1d(X4, W4), pt.ShapeError, "input must be 3-D"),
    (lambda: pt.nn.conv2d(X4, np.zeros((2, 3, 3, 3), np.float32)), pt.ShapeError, "channels"),
    (lambda: pt.nn.conv2d(X4, np.zeros((2, 1, 3, 3), np.float32), groups=3), pt.ShapeError, "groups=3"),
    (lambda: pt.nn.conv2d(X4, np.zeros((3, 2, 3, 3), np.float32), groups=2), pt.ShapeError, "out_channels"),
    (lambda: pt.nn.conv2d(X4, W4, groups=0), pt.ArgumentError, "groups"),
    (lambda: pt.nn.conv2d(X4, W4, stride=0), pt.ArgumentError, "stride"),
    (lambda: pt.nn.conv2d(X4, W4, stride=(1, -1)), pt.ArgumentError, "stride"),
    (lambda: pt.nn.conv2d(X4, W4, stride=(1, 1, 1)), pt.ArgumentError, "stride"),
    (lambda: pt.nn.conv2d(X4, W4, dilation=0), pt.ArgumentError, "dilation"),
    (lambda: pt.nn.conv2d(X4, W4, padding=-1), pt.ArgumentError, "padding"),
    (lambda: pt.nn.conv2d(X4, W4, padding="full"), pt.ArgumentError, "padding"),
    (lambda: pt.nn.conv2d(X4, W4, padding="same", stride=2), pt.ArgumentError, "padding='same'"),
    (lambda: pt.nn.conv2d(X4, np.zeros((2, 4, 7, 3), np.float32)), pt.ShapeError, "larger than the padded"),
    (lambda: pt.nn.conv2d(X4, W4, dilation=3), pt.ShapeError, "larger than the padded"),
    (lambda: pt.nn.conv2d(X4, W4, np.zeros(3, np.float32)), pt.ShapeError, "bias"),
    (lambda: pt.nn.max_pool2d(X4, 6), pt.ShapeError, "larger than the padded"),
    (lambda: pt.nn.max_pool2d(X4, 0), pt.ArgumentError, "kernel_size"),
    (lambda: pt.nn.avg_pool2d(X4, 2, stride=0), pt.ArgumentError, "stride"),
    (lambda: pt.nn.max_pool2d(X4, 2, padding=2), pt.ArgumentError, "half of the kernel"),
    (lambda: pt.nn.max_pool2d(X4[0, 0], 2), pt.ShapeError, "input must be 4-D"),
])
def test_errors_name_the_argument(call, err, words):
    with pytest.raises(err, match=None) as info:
        call()
    assert isinstance(info.value, pt.PootError)
    assert words in str(info.value), str(info.value)
