"""Signal, image and numerical-methods scripts, eagerly and under @pt.jit, against NumPy (or JAX):
means and variances with an integer dtype=, np.gradient with a traced 0-d spacing, logspace and
geomspace with array or complex ends, np.pad's argument checks, Polynomial.fit(...).convert(), and
jax.lax's running maximum, minimum and log-sum-exp."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tests.tolerance import assert_close


def both(fn, *args):
    """fn(pt, *args) eagerly and under @pt.jit, as NumPy arrays."""
    pa = [pt.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    eager = fn(pt, *pa)
    jitted = pt.jit(lambda *a: fn(pt, *a))(*pa)
    return eager, jitted


def check(fn, *args, ops=4):
    expected = fn(np, *args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for got in both(fn, *args):
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            e = np.asarray(e)
            assert g.dtype == e.dtype, f"{g.dtype} != NumPy's {e.dtype}"
            assert_close(g.numpy(), e, pt.dtypes.as_dtype(e.dtype), ops=ops)


# -- mean / var / std with an integer dtype: NumPy sums in that dtype and truncates the quotient --
I8 = np.array([100, 127, -128, -100, 50, 0, 1, -1], np.int8)


@pytest.mark.parametrize("fn", [
    lambda xp, a: xp.mean(a, dtype=np.int8),                       # the int8 sum wraps first
    lambda xp, a: xp.mean(a.reshape(2, 4), axis=1, dtype=np.uint8),
    lambda xp, a: a.mean(dtype=np.int64),
    lambda xp, a: xp.mean(a * 1.7, dtype=np.int32),                # float input, int mean: truncated
    lambda xp, a: xp.mean(a, dtype=np.int16, where=a > 0),
    lambda xp, a: xp.var(a, dtype=np.int64),
    lambda xp, a: xp.var(a.reshape(2, 4), axis=1, dtype=np.int32, ddof=1),
    lambda xp, a: xp.var(a, dtype=np.int16, where=a > -50),
    lambda xp, a: xp.std(a, dtype=np.int64),
    lambda xp, a: xp.nanmean(a, dtype=np.int16),
    lambda xp, a: xp.var(a, dtype=np.int64, ddof=0.5),             # a fractional ddof stays fractional
    lambda xp, a: xp.var(a * 0.5, ddof=0.5),
], ids=["mean-i8", "mean-axis-u8", "mean-i64", "mean-float-as-i32", "mean-where", "var-i64",
        "var-axis-ddof", "var-where", "std-i64", "nanmean", "var-i64-fractional-ddof", "var-fractional-ddof"])
def test_integer_dtype_mean_var_std(fn):
    check(fn, I8)


# -- np.gradient: a uniform spacing given as a 0-d array is traced under @pt.jit --------------------
@pytest.mark.parametrize("dtype,edge_order", [(np.float64, 1), (np.float64, 2), (np.float32, 2)])
def test_gradient_zero_d_array_spacing(dtype, edge_order):
    f = np.sin(np.linspace(0, 3, 24)).reshape(4, 6).astype(dtype)
    check(lambda xp, a, h: xp.gradient(a, h, edge_order=edge_order), f, np.array(0.3))
    check(lambda xp, a, h: xp.gradient(a, h, 2.0, edge_order=edge_order), f, np.array(0.3))


def test_gradient_spacing_from_a_traced_step():
    # a time step computed inside the jitted function, as in a simulation's diagnostics
    t = np.linspace(0.0, 2.0, 21)

    def velocity(xp, x, t):
        return xp.gradient(x, t[1] - t[0], edge_order=2)

    check(velocity, np.cos(t) * t, t)


# -- logspace / geomspace with array, complex or per-row ends -----------------------------------
@pytest.mark.parametrize("fn", [
    lambda xp, a, b: xp.geomspace(xp.abs(a), 100.0, 3),
    lambda xp, a, b: xp.geomspace(a, b, 4, axis=1),                # mixed signs per pair, axis 1
    lambda xp, a, b: xp.geomspace(xp.abs(a[:2]), xp.abs(b[:2, None]), 4, axis=-1, endpoint=False),
    lambda xp, a, b: xp.geomspace(xp.abs(a).astype(np.float32), 64.0, 4),  # NumPy: float64 at least
    lambda xp, a, b: xp.logspace(0, 2, 3, base=xp.abs(a) + 1),     # an array base
    lambda xp, a, b: xp.logspace(a, 2, 3),
    lambda xp, a, b: xp.logspace(a, b[:, None], 4, axis=1, base=2),
    lambda xp, a, b: xp.logspace(a.astype(np.float32), 2, 3),      # weak Python stop: float32
    lambda xp, a, b: xp.linspace(a.astype(np.float32), 2, 5),
], ids=["geom-array", "geom-signs-axis1", "geom-2d-noend", "geom-f32", "log-base-array",
        "log-array", "log-2d-axis1", "log-f32", "lin-f32-weak-stop"])
def test_spaced_values_with_array_ends(fn):
    check(fn, np.array([1.0, -10.0, 2.0]), np.array([1000.0, -0.1, 3.0]))


@pytest.mark.parametrize("fn", [
    lambda xp: xp.geomspace(1j, 1000j, 4),
    lambda xp: xp.geomspace(-1 + 0j, 1 + 0j, 5),
    lambda xp: xp.geomspace(1 + 1j, 100 + 100j, 3, endpoint=False),
    lambda xp: xp.logspace(0, 1j, 3),
], ids=["geom-imag", "geom-through-minus-one", "geom-diagonal", "log-complex"])
def test_spaced_values_complex(fn):
    check(fn)


def test_geomspace_zero_end_raises():
    with pytest.raises(pt.ShapeError, match="cannot include zero"):
        pt.geomspace(np.array([0.0, 1.0]), 10.0, 3)


# -- np.pad refuses what NumPy refuses instead of ignoring it -----------------------------------
@pytest.mark.parametrize("call,err,match", [
    (lambda a: pt.pad(a, 1.5), pt.ShapeTypeError, "integral"),
    (lambda a: pt.pad(a, ((1, 0), (0.5, 2))), pt.ShapeTypeError, "integral"),
    (lambda a: pt.pad(a, {1: 1.5}), pt.ShapeTypeError, "integral"),
    (lambda a: pt.pad(a, 1, mode="edge", constant_values=3), pt.ShapeError, "constant_values"),
    (lambda a: pt.pad(a, 1, mode="mean", constant_values=3), pt.ShapeError, "constant_values"),
    (lambda a: pt.pad(a, 1, reflect_type="odd"), pt.ShapeError, "reflect_type"),
    (lambda a: pt.pad(a, 1, stat_length=2), pt.ShapeError, "stat_length"),
], ids=["float-width", "float-pair", "float-dict", "edge-constant", "mean-constant",
        "constant-reflect-type", "constant-stat-length"])
def test_pad_refuses_bad_arguments(call, err, match):
    a = pt.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(err, match=match):
        call(a)
    with pytest.raises(err, match=match):
        pt.jit(call)(a)


def test_pad_integral_widths_still_work():
    img = np.arange(12.0).reshape(3, 4)
    check(lambda xp, a: xp.pad(a, np.array([[1, 2], [0, 3]]), mode="reflect"), img)
    check(lambda xp, a: xp.pad(a, {1: (2, 1)}, mode="wrap"), img)
    check(lambda xp, a: xp.pad(a, 2, constant_values=-1.5), img)


# -- Polynomial.fit(...).convert(): the coefficients in x itself ----------------------------------
def test_polynomial_fit_convert():
    x = np.linspace(2.0, 5.0, 30)
    y = 3 * x ** 2 - x + 1 + 0.01 * np.sin(7 * x)
    e = np.polynomial.Polynomial.fit(x, y, 2)
    p = pt.polynomial.Polynomial.fit(pt.asarray(x), pt.asarray(y), 2)
    # a least-squares fit (poot's lstsq, not NumPy's): the tolerance allows for its conditioning
    assert_close(p.convert().coef.numpy(), e.convert().coef, pt.float64, ops=4096)
    q, eq = p.convert(domain=[0, 1]), e.convert(domain=[0, 1])
    assert_close(q.coef.numpy(), eq.coef, pt.float64, ops=4096)
    np.testing.assert_array_equal(q.domain, eq.domain)
    assert_close(q(pt.asarray(x)).numpy(), eq(x), pt.float64, ops=4096)
    # NumPy trims the exact trailing zeros of the composed series
    np.testing.assert_array_equal(pt.polynomial.Polynomial([1.0, 2.0, 0.0]).convert().coef.numpy(),
                                  np.polynomial.Polynomial([1.0, 2.0, 0.0]).convert().coef)
    c = pt.polynomial.Polynomial.cast(pt.polynomial.Polynomial([1.0, 2.0, 3.0], domain=[0, 2]))
    np.testing.assert_allclose(c.coef.numpy(), np.polynomial.Polynomial.cast(
        np.polynomial.Polynomial([1.0, 2.0, 3.0], domain=[0, 2])).coef)
    with pytest.raises(pt.NotBuiltError, match="kind"):
        p.convert(kind=np.polynomial.Chebyshev)


# -- jax.lax running maximum / minimum / log-sum-exp ----------------------------------------------
@pytest.mark.parametrize("name", ["cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_lax_running_reductions(name, reverse, axis):
    jax = pytest.importorskip("jax")
    a = np.array([[1000.0, -3.0, 2.5], [999.0, 7.0, np.nan], [-5.0, 7.5, 1.0]], np.float32)
    expected = np.asarray(getattr(jax.lax, name)(a, axis=axis, reverse=reverse))
    for got in both(lambda xp, x: getattr(xp.lax, name)(x, axis=axis, reverse=reverse), a):
        assert got.dtype == expected.dtype
        assert_close(got.numpy(), expected, pt.float32, ops=4)


def test_lax_cummax_integers():
    jax = pytest.importorskip("jax")
    a = np.array([[3, -1, 7], [2, 9, -4]], np.int8)
    for name in ("cummax", "cummin"):
        expected = np.asarray(getattr(jax.lax, name)(a, axis=1))
        for got in both(lambda xp, x: getattr(xp.lax, name)(x, axis=1), a):
            np.testing.assert_array_equal(got.numpy(), expected)
            assert got.dtype == pt.int8


# -- float formatting: the shortest digits of the scalar's own dtype --------------------------------
@pytest.mark.parametrize("value", [np.float32(0.1), np.float16(0.1), np.float64(1 / 3),
                                   np.float32(1e-7), pt.bfloat16.np.type(0.1)],
                         ids=["f32", "f16", "f64", "f32-small", "bf16"])
def test_format_float(value):
    x = pt.asarray(value)
    assert pt.format_float_positional(x) == np.format_float_positional(value)
    assert pt.format_float_positional(x, precision=2, unique=False, pad_left=4) == \
        np.format_float_positional(value, precision=2, unique=False, pad_left=4)
    assert pt.format_float_scientific(x, precision=3, exp_digits=3) == \
        np.format_float_scientific(value, precision=3, exp_digits=3)
    with pytest.raises(pt.ShapeError, match="scalar"):
        pt.format_float_positional(pt.ones(3))


# -- np.poly1d: a fitted polynomial as an object -------------------------------------------------
X = np.linspace(-1.0, 2.0, 15)
Y = 2 * X ** 3 - X + 0.5


@pytest.mark.parametrize("fn", [
    lambda xp, x, y: xp.poly1d(xp.polyfit(x, y, 3))(x),
    lambda xp, x, y: xp.poly1d(xp.polyfit(x, y, 3)).deriv()(x),
    lambda xp, x, y: xp.poly1d(xp.polyfit(x, y, 2)).integ(k=1.5)(x),
    lambda xp, x, y: (xp.poly1d([1.0, 2, 3]) * xp.poly1d(y[:2]) + 5).coeffs,
    lambda xp, x, y: (3 - xp.poly1d([1.0, 2, 3]) ** 3).coeffs,
    lambda xp, x, y: (xp.poly1d([1, 2]) ** 0).coeffs,              # NumPy's int64 [1]
    lambda xp, x, y: xp.poly1d([1.0, 2, 3])(xp.poly1d([2.0, 1])).coeffs,
    lambda xp, x, y: xp.polyval([1.0, 2, 3], xp.poly1d(y[:2])).coeffs,
    lambda xp, x, y: xp.polyval(xp.poly1d([1.0, 2, 3]), x),
    lambda xp, x, y: xp.polyder(xp.poly1d(y[:4]), 2).coeffs,
    lambda xp, x, y: xp.poly1d(y[:3], r=True)(x),
    lambda xp, x, y: (xp.poly1d([1.0, 2, 3])[0], xp.poly1d([1.0, 2, 3])[2], xp.poly1d([1.0, 2])[5]),
    lambda xp, x, y: xp.poly1d([1, 2, 3]).integ().coeffs,
    lambda xp, x, y: xp.poly1d(y[:3].astype(np.float32))(x.astype(np.float32)),
], ids=["fit-eval", "deriv", "integ", "mul-add", "rsub-pow", "pow0", "compose", "polyval-compose",
        "polyval-poly1d", "polyder-poly1d", "from-roots", "getitem", "integ-int", "f32"])
def test_poly1d(fn):
    check(fn, X, Y, ops=64)


def test_poly1d_host_parts():
    p, e = pt.poly1d([0.0, 0.0, 1.0, -3.0, 2.0]), np.poly1d([0.0, 0.0, 1.0, -3.0, 2.0])
    assert p.order == e.order == len(p) and p.variable == "x"          # leading zeros dropped
    np.testing.assert_allclose(np.sort(p.roots.numpy()), np.sort(e.roots))
    assert str(pt.poly1d([1.0, 2, 3], variable="z")) == str(np.poly1d([1.0, 2, 3], variable="z"))
    assert repr(p) == repr(e)
    assert p == pt.poly1d([1.0, -3.0, 2.0]) and p != pt.poly1d([1.0, -3.0, 2.5])
    q, r = p / pt.poly1d([1.0, 1.0])
    eq, er = e / np.poly1d([1.0, 1.0])
    assert isinstance(q, pt.poly1d)
    np.testing.assert_allclose(q.coeffs.numpy(), eq.coeffs)
    np.testing.assert_allclose(r.coeffs.numpy(), er.coeffs)
    s, es = pt.poly1d([1.0, 2, 3]), np.poly1d([1.0, 2, 3])
    s[4], es[4] = 7.0, 7.0
    s[0], es[0] = -1.0, -1.0
    np.testing.assert_array_equal(s.coeffs.numpy(), es.coeffs)
    np.testing.assert_array_equal(pt.poly1d([0.0, 0.0]).coeffs.numpy(), np.poly1d([0.0, 0.0]).coeffs)
    with pytest.raises(pt.ShapeError, match="1d"):
        pt.poly1d(np.ones((2, 2)))


# -- numpy.polynomial fits in the Chebyshev, Legendre and Hermite bases ---------------------------
@pytest.mark.parametrize("module,prefix", [("chebyshev", "cheb"), ("legendre", "leg"), ("hermite", "herm")])
@pytest.mark.parametrize("deg", [0, 1, 5, [0, 2, 4]], ids=["deg0", "deg1", "deg5", "degs"])
def test_orthogonal_basis_fits(module, prefix, deg):
    x = np.linspace(-1.0, 1.0, 25)
    y = np.cos(3 * x) + 0.1 * x ** 5
    np_mod, pt_mod = getattr(np.polynomial, module), getattr(pt.polynomial, module)
    expected = getattr(np_mod, prefix + "fit")(x, y, deg)
    for got in both(lambda xp, a, b: getattr(pt_mod, prefix + "fit")(a, b, deg), x, y):
        assert_close(got.numpy(), expected, pt.float64, ops=4096)     # least squares: conditioning
    # the fitted series evaluates back through the module's own val
    fitted = getattr(pt_mod, prefix + "fit")(pt.asarray(x), pt.asarray(y), 5)
    assert_close(getattr(pt_mod, prefix + "val")(pt.asarray(x), fitted).numpy(),
                 getattr(np_mod, prefix + "val")(x, getattr(np_mod, prefix + "fit")(x, y, 5)), pt.float64,
                 ops=4096)
    v32 = getattr(pt_mod, prefix + "vander")(pt.asarray(x.astype(np.float32)), 4)
    e32 = getattr(np_mod, prefix + "vander")(x.astype(np.float32), 4)
    assert v32.dtype == e32.dtype
    assert_close(v32.numpy(), e32, pt.float32, ops=16)


def test_orthogonal_basis_fit_weights_full():
    x = np.linspace(-1.0, 1.0, 20)
    y = np.stack([np.sin(2 * x), np.exp(x)], axis=1)
    e, (eres, erank, _, _) = np.polynomial.chebyshev.chebfit(x, y, 3, w=np.abs(x) + 1, full=True)
    g, (gres, grank, _, _) = pt.polynomial.chebyshev.chebfit(pt.asarray(x), pt.asarray(y), 3,
                                                             w=pt.asarray(np.abs(x) + 1), full=True)
    assert_close(g.numpy(), e, pt.float64, ops=4096)
    assert_close(gres.numpy(), eres, pt.float64, ops=4096)
    assert int(grank) == erank


# -- jax.lax convolutions and windowed reductions: padding kinds, strides, dilations, layouts ---------
CONV_X = np.random.default_rng(3).standard_normal((2, 3, 9, 8))
CONV_W = np.random.default_rng(4).standard_normal((4, 3, 3, 2))


@pytest.mark.parametrize("call", [
    lambda l, a, b: l.conv(a, b, (1, 1), "SAME"),
    lambda l, a, b: l.conv(a, b, (2, 3), "VALID"),
    lambda l, a, b: l.conv_general_dilated(a, b, (2, 1), "SAME_LOWER", rhs_dilation=(2, 1)),
    lambda l, a, b: l.conv_general_dilated(a, b, (1, 2), [(-1, 2), (2, -1)]),      # negative crops
    lambda l, a, b: l.conv_general_dilated(a, b, (1, 1), [(1, 2), (0, 1)], lhs_dilation=(2, 3)),
    lambda l, a, b: l.conv_with_general_padding(a, b, (1, 1), [(1, 1), (2, 0)], (1, 2), (2, 1)),
    lambda l, a, b: l.conv_general_dilated(a.transpose(0, 2, 3, 1), b.transpose(2, 3, 1, 0), (2, 1), "SAME",
                                           dimension_numbers=("NHWC", "HWIO", "NCHW")),
    lambda l, a, b: l.conv_general_dilated(a, b[:, :1].repeat(2, axis=0)[:6], (1, 1), "SAME",
                                           feature_group_count=3),
    lambda l, a, b: l.conv_general_dilated(a[..., 0], b[..., 0], (2,), "SAME"),             # 1-D
], ids=["same", "valid-strided", "same-lower-dilated", "negative-pad", "lhs-dilation",
        "general-padding", "nhwc", "grouped", "1d"])
def test_lax_conv_matches_jax(call):
    jax = pytest.importorskip("jax")
    x, w = CONV_X.astype(np.float32), CONV_W.astype(np.float32)
    expected = np.asarray(call(jax.lax, x, w))
    for got in both(lambda xp, a, b: call(xp.lax, a, b), x, w):
        assert got.dtype == expected.dtype
        assert_close(got.numpy(), expected, pt.float32, ops=64)


def test_lax_conv_refusals():
    x, w = pt.asarray(CONV_X), pt.asarray(CONV_W)
    with pytest.raises(pt.ArgumentError, match="transposed"):
        pt.lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(pt.NotBuiltError, match="spatial"):
        pt.lax.conv(pt.ones((1, 1, 3, 3, 3)), pt.ones((1, 1, 2, 2, 2)), (1, 1, 1), "VALID")
    with pytest.raises(pt.ArgumentError, match="padding"):
        pt.lax.conv(x, w, (1, 1), "FULL")


@pytest.mark.parametrize("call", [
    lambda l, a: l.reduce_window(a, -np.inf, l.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),     # max pool
    lambda l, a: l.reduce_window(a, 0.0, l.add, (1, 1, 3, 3), (1, 1, 1, 1), "SAME") / 9,      # box blur
    lambda l, a: l.reduce_window(a, np.inf, l.min, (1, 1, 2, 3), (1, 1, 2, 1), "SAME_LOWER"),
    lambda l, a: l.reduce_window(a, 1.0, l.mul, (1, 1, 2, 2), (1, 1, 1, 1), [(0, 0), (0, 0), (1, 2), (0, 1)]),
    lambda l, a: l.reduce_window(a, 0.0, l.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID",
                                 window_dilation=(1, 1, 2, 3)),
    lambda l, a: l.reduce_window(a, 1.5, l.add, (1, 1, 2, 2), (1, 1, 2, 2), "SAME"),   # padding takes no part
    lambda l, a: l.reduce_window((a[0, 0] * 10).astype(np.int32), np.int32(5), l.min, (2, 2), (2, 2), "SAME"),
], ids=["max-pool", "box-same", "min-same-lower", "mul-pairs", "window-dilation", "init-not-identity",
        "int-min"])
def test_lax_reduce_window_matches_jax(call):
    jax = pytest.importorskip("jax")
    a = CONV_X.astype(np.float32)
    expected = np.asarray(call(jax.lax, a))
    for got in both(lambda xp, x: call(xp.lax, x), a):
        assert got.dtype == expected.dtype
        assert_close(got.numpy(), expected, pt.dtypes.as_dtype(expected.dtype), ops=16)
    with pytest.raises(pt.NotBuiltError, match="computation"):
        pt.lax.reduce_window(pt.asarray(a), 0.0, lambda u, v: u + v, (1, 1, 2, 2), (1, 1, 1, 1), "VALID")


# -- roots(p, strip_zeros=False) (JAX's): fixed length, so it runs inside @pt.jit ------------------
@pytest.mark.parametrize("p", [[1.0, -6, 11, -6], [0.0, 1, -3, 2], [1.0, -3, 2, 0], [0.0, 0, 1, 0],
                               [0.0, 0, 0], [2.0], [1.0, 0, 1], [0, 1, 2]],
                         ids=["cubic", "leading-zero", "trailing-zero", "both", "all-zero", "constant",
                              "complex-pair", "int"])
def test_roots_fixed_length(p):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        expected = np.asarray(jax.numpy.roots(jax.numpy.asarray(np.asarray(p)), strip_zeros=False))

    def ordered(r):     # eigenvalue order is LAPACK's: compare sorted, NaN last
        r = np.asarray(r)
        return r[np.lexsort((r.imag.round(9), r.real.round(9), np.isnan(r.real)))]

    for got in both(lambda xp, q: xp.roots(q, strip_zeros=False), np.asarray(p)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert_close(ordered(got.numpy()), ordered(expected), pt.float64, ops=64)


# -- convolve / correlate of half floats: NumPy's dot for them rounds once, at the end --------------
@pytest.mark.parametrize("dtype", [np.float16, pt.bfloat16.np], ids=["f16", "bf16"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_half_convolve_rounds_once(dtype, mode, name):
    u = np.random.default_rng(0).standard_normal((2, 40)).astype(dtype)
    expected = getattr(np, name)(u[0], u[1, :7], mode)
    for got in both(lambda xp, a, b: getattr(xp, name)(a, b, mode), u[0], u[1, :7]):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)    # NumPy's bits


# -- scalars given as arrays: a traced period or fill value, a 0-d decimals --------------------------
def test_traced_scalar_arguments():
    x = np.linspace(-2.0, 12.0, 40)
    xp_ = np.sort(np.random.default_rng(5).uniform(0.0, 10.0, 12))
    check(lambda xp, a, b, c, p: xp.interp(a, b, c, period=p), x, xp_, np.sin(xp_), np.array(3.0))
    check(lambda xp, a, b, c, p: xp.interp(a, b, c, period=p), x, xp_, np.sin(xp_), np.array(-4.0))
    img = np.arange(6, dtype=np.int8).reshape(2, 3)
    check(lambda xp, a, v: xp.pad(a, ((1, 0), (2, 1)), constant_values=v), img, np.array(-3))
    check(lambda xp, a, v: xp.pad(a.astype(np.float32), 2, constant_values=v), img, np.array(2.5))
    a = np.array([1.234, 5.678, -2.25])
    for d in (np.array(1), np.array(-1)):
        np.testing.assert_array_equal(pt.round(pt.asarray(a), pt.asarray(d)).numpy(), np.round(a, d))
        np.testing.assert_array_equal(pt.round(pt.asarray(a), d).numpy(), np.round(a, d))


def test_geomspace_refuses_a_zero_end_held_in_an_eager_array():
    """NumPy raises for a zero end; an eager poot array's end is read and refused as a number's is (a
    traced one cannot be read, and gives NumPy's formula's NaN)."""
    for start, stop in ((pt.asarray(0.0), 10.0), (1.0, pt.asarray([0.0, 2.0]))):
        with pytest.raises(ValueError, match="cannot include zero"):
            pt.geomspace(start, stop, 3)
    np.testing.assert_allclose(pt.geomspace(pt.asarray([1.0, 2.0]), 8.0, 3).numpy(),
                               np.geomspace(np.array([1.0, 2.0]), 8.0, 3))
