"""Mistakes users make, eagerly and under @pt.jit: each raises a PootError whose class is the one NumPy
(or JAX, or Python) raises for the same mistake, so `except TypeError:` / `except ValueError:` /
`except np.exceptions.AxisError:` written for NumPy still catch it, and whose message names what was
wrong and the user's line. A fuzz of shapes and axes through common reductions and shape functions
checks the same against NumPy: its error class where NumPy raises, its values where it does not."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import poot as pt

HERE = "test_user_mistakes.py"


def _raises(cls, fn, *words):
    """fn() raises a PootError that is a `cls`, whose message names each of `words` and this file."""
    with pytest.raises(cls) as info:
        r = fn()
        if isinstance(r, pt.Array):
            r.numpy()
    e = info.value
    assert isinstance(e, pt.PootError), type(e)
    msg = str(e)
    for w in words:
        assert w in msg, (w, msg)
    assert HERE in msg, msg
    return e


def _jit(fn):
    return pt.jit(fn)


MODES = [pytest.param(lambda f: f, id="eager"), pytest.param(_jit, id="jit")]


# --- axes: a non-integer axis is NumPy's TypeError (and still a poot AxisError) ----------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", [lambda x: pt.sum(x, axis=1.0), lambda x: pt.argmax(x, axis=1.0),
                                  lambda x: pt.cumsum(x, axis=0.0), lambda x: pt.sort(x, axis=1.5),
                                  lambda x: pt.concatenate([x, x], axis=1.0), lambda x: x.mean(axis="1"),
                                  lambda x: pt.argmax(x, axis=(0, 1))])
def test_a_non_integer_axis_is_a_type_error(device, mode, call):
    x = pt.ones((3, 4))
    e = _raises(TypeError, lambda: mode(call)(x), "axis must be an integer", "f64[3,4]")
    assert isinstance(e, pt.AxisError) and isinstance(e, pt.AxisTypeError)
    with pytest.raises(TypeError):                        # NumPy's class for the same call
        call(np.ones((3, 4)))


def test_axes_out_of_range_or_repeated_are_axis_errors(device):
    x, xn = pt.ones((3, 4)), np.ones((3, 4))
    for call in (lambda m, a: m.sum(a, axis=2), lambda m, a: m.sum(a, axis=(0, 0)),
                 lambda m, a: m.linalg.norm(a, axis=2), lambda m, a: m.expand_dims(a, 3)):
        with pytest.raises((ValueError, np.exceptions.AxisError)):
            call(np, xn)
        e = _raises(ValueError, lambda: call(pt, x), "axis")
        assert isinstance(e, pt.AxisError) or isinstance(e, pt.ShapeError)
    # a tuple axis of a 0-d array is out of range, as in NumPy (an int 0 is taken)
    _raises(np.exceptions.AxisError, lambda: pt.sum(pt.asarray(1.0), axis=(0,)), "axis 0", "dimension 0")
    assert pt.sum(pt.asarray(2.0), axis=0).item() == np.sum(np.asarray(2.0), axis=0) == 2.0


def test_sorting_a_0d_array_is_numpys_axis_error(device):
    with pytest.raises(np.exceptions.AxisError):
        np.sort(np.asarray(1.0))
    e = _raises(np.exceptions.AxisError, lambda: pt.sort(pt.asarray(1.0)), "0-d array", "sort")
    assert isinstance(e, pt.ShapeError)


# --- shapes --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda m: m.zeros((2.0, 3)), lambda m: m.ones("3"),
                                  lambda m: m.arange(12.0).reshape(3.0, 4), lambda m: m.arange(12).reshape("34")])
def test_a_non_integer_shape_is_a_type_error(device, call):
    with pytest.raises(TypeError):
        call(np)
    e = _raises(TypeError, lambda: call(pt), "tuple of ints")
    assert isinstance(e, pt.ShapeError) and isinstance(e, pt.ShapeTypeError)


@pytest.mark.parametrize("call", [lambda: pt.ones((2**32, 2**32)), lambda: pt.zeros(2**63),
                                  lambda: pt.ones((2**40, 1), dtype=pt.int8) + pt.ones((1, 2**40), dtype=pt.int8),
                                  lambda: pt.broadcast_to(pt.ones(1), (2**62, 4))])
def test_an_array_too_big_to_exist_is_a_shape_error_when_recorded(device, call):
    """More bytes than an int64 counts: NumPy's ValueError, raised where the user asked for it, not
    an InternalError from the compiler at the next realize."""
    e = _raises(ValueError, call, "too big")
    assert isinstance(e, pt.ShapeError) and not isinstance(e, pt.InternalError)


@pytest.mark.parametrize("mode", MODES)
def test_more_than_numpys_64_dimensions_is_a_shape_error_when_recorded(device, mode):
    with pytest.raises(ValueError):
        np.ones((1,) * 70)
    _raises(ValueError, lambda: mode(lambda: pt.ones((1,) * 70))(), "70 dimensions", "at most 64")
    assert pt.ones((1,) * 64).reshape(()).item() == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_shape_mistakes_name_the_shapes(device, mode):
    a, b = pt.ones((3, 4)), pt.ones((5, 6))
    _raises(ValueError, lambda: mode(lambda a, b: a @ b)(a, b), "f64[3,4]", "f64[5,6]")
    _raises(ValueError, lambda: mode(lambda a, b: a + b)(a, b), "(3, 4)", "(5, 6)")
    _raises(ValueError, lambda: mode(lambda a: a.reshape(5, 3))(a), "(5, 3)", "12 elements")
    _raises(ValueError, lambda: mode(lambda a: a.reshape(-1, -1))(a), "single -1")
    _raises(ValueError, lambda: mode(lambda a, b: pt.concatenate([a, b]))(a, b))


# --- integers that do not fit -------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda m: m.asarray([1], dtype=m.int8) + 300, lambda m: m.full(3, 300, dtype=m.int8),
                                  lambda m: m.asarray([-1], dtype=m.uint8)])
def test_a_python_int_outside_the_dtype_is_numpys_overflow_error(device, call):
    with pytest.raises(OverflowError):
        call(np)
    _raises(OverflowError, lambda: call(pt), "out of bounds for")


def test_a_python_int_outside_an_arrays_dtype_is_also_a_dtype_error(device):
    e = _raises(OverflowError, lambda: pt.ones(2, dtype=pt.int8) * 1000, "1000", "int8")
    assert isinstance(e, pt.DTypeError) and isinstance(e, pt.ScalarOverflowError)


def test_setting_a_python_int_outside_the_dtype_is_an_overflow_error(device):
    x = pt.zeros(4, dtype=pt.int8)

    def put():
        x[0] = 300
    _raises(OverflowError, put, "300", "int8")


@pytest.mark.parametrize("value, cls", [(float("nan"), ValueError), (float("inf"), OverflowError),
                                        (float("-inf"), OverflowError)])
def test_setting_nan_or_inf_into_an_integer_array_is_numpys_class(device, value, cls):
    xn, x = np.zeros(3, np.int32), pt.zeros(3, dtype=pt.int32)

    def put(a):
        a[0] = value
    with pytest.raises(cls):
        put(xn)
    _raises(cls, lambda: put(x), "int32")


@pytest.mark.parametrize("value", [3e9, -3e9, 1e20, -1.5, 255.9, float("inf"), float("nan")])
def test_a_folded_float_constant_casts_as_astype_does(device, value):
    """astype saturates out-of-range floats (NaN to 0) on every path: a 0-d constant's cast, folded
    at record time, gave NumPy's wrapped int (3e9 -> -1294967296) before."""
    for d in (pt.int32, pt.uint8, pt.int8):
        want = pt.asarray(np.array([value])).astype(d).numpy()[0]           # the device's convert
        assert pt.asarray(value).astype(d).item() == want, (value, d)
        assert pt.full((), value).astype(d).item() == want, (value, d)
        info = np.iinfo(d.np)
        assert want == (0 if value != value else int(np.clip(np.trunc(value), info.min, info.max)))


@pytest.mark.parametrize("call", [lambda m: m.int32(3e9), lambda m: m.uint8(-1.5),
                                  lambda m: m.asarray(3e9, dtype=m.int32), lambda m: m.int32(float("inf")),
                                  lambda m: m.int32(float("nan"))])
def test_converting_a_python_float_that_does_not_fit_raises_as_numpy(device, call):
    try:
        call(np)
    except (ValueError, OverflowError) as e:
        _raises(type(e), lambda: call(pt))
    else:
        raise AssertionError("NumPy converted it")


# --- indexing -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("idx", [lambda m: (m.asarray([0, 1]), m.asarray([0, 1, 2])),
                                 lambda m: ([0, 1], m.asarray([0, 1, 2])),
                                 lambda m: (m.asarray([0, 1]), [0, 1, 2])])
def test_index_arrays_that_do_not_broadcast_name_their_shapes(device, idx):
    xn = np.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError):
        xn[idx(np)]
    _raises(IndexError, lambda: pt.asarray(xn)[idx(pt)], "could not be broadcast", "(2,)", "(3,)")


def test_index_mistakes_are_numpys_classes(device):
    x, xn = pt.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    for idx in (3, (0, 4), (0, 0, 0), 1.0, (0, 1.5), [0.0, 1.0], np.array([True, False])):
        try:
            xn[idx]
        except Exception as ne:
            _raises(type(ne), lambda: x[idx])
        else:
            raise AssertionError(idx)
    _raises(IndexError, lambda: x[pt.asarray([0, 5])], "out of bounds")


@pytest.mark.parametrize("mode", MODES)
def test_a_boolean_mask_of_the_wrong_shape_is_an_index_error_under_jit_too(device, mode):
    """Under @pt.jit the mask's shape is checked before its values are asked for: the mistake is the
    shape, not a data-dependent result (a mask that fits still sets through pt.where)."""
    def put(x):
        x[x[:2] > 0] = 0.0
        return x
    _raises(IndexError, lambda: mode(put)(pt.asarray([-1.0, 2.0, 3.0])), "boolean index of shape (2,)", "(3,)")

    def relu(x):
        x[x < 0] = 0.0
        return x
    np.testing.assert_array_equal(mode(relu)(pt.asarray([-1.0, 2.0, -3.0])).numpy(), [0.0, 2.0, 0.0])


def test_assignment_of_a_wrong_shape_names_both_shapes(device):
    x = pt.zeros((3, 4))

    def put():
        x[0] = pt.ones(5)
    _raises(ValueError, put, "(5,)", "(4,)")


# --- dtypes -------------------------------------------------------------------------------------------
def test_astype_casting_rules_refuse_as_numpy(device):
    x, xn = pt.arange(3.0), np.arange(3.0)
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        for d in (pt.int32, pt.float32, pt.float64, pt.complex128):
            try:
                want = xn.astype(d.np, casting=casting)
            except TypeError:
                _raises(TypeError, lambda: x.astype(d, casting=casting), casting, d.name)
            else:
                got = x.astype(d, casting=casting)
                assert got.dtype == d
                np.testing.assert_array_equal(got.numpy(), want)
    _raises(ValueError, lambda: x.astype(pt.int32, casting="bogus"), "bogus")


def test_can_cast_takes_numpys_casting_rules(device):
    ds = (pt.bool_, pt.int8, pt.uint16, pt.int64, pt.float16, pt.float32, pt.float64, pt.complex64)
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        for a in ds:
            for b in ds:
                assert pt.can_cast(a, b, casting=casting) == np.can_cast(a.np, b.np, casting), (a, b, casting)
    assert pt.can_cast(pt.int8, pt.int16) and not pt.can_cast(pt.float32, pt.int32)
    _raises(ValueError, lambda: pt.can_cast(pt.int8, pt.int16, casting="bogus"), "bogus")


def test_a_bad_dtype_name_is_a_type_error(device):
    with pytest.raises(TypeError):
        np.zeros(3, dtype="flaot32")
    _raises(TypeError, lambda: pt.zeros(3, dtype="flaot32"), "flaot32")


# --- calls that do not fit ----------------------------------------------------------------------------
@pytest.mark.parametrize("call, word", [(lambda x: pt.sum(x, axis=1, keepdim=True), "keepdim"),
                                        (lambda x: x.sum(axis=1, keepdim=True), "keepdim"),
                                        (lambda x: pt.mean(x, dim=1), "dim"),
                                        (lambda x: pt.trace(x, bogus=1), "bogus"),
                                        (lambda x: pt.trace(x, 0, 0, 1, None, None, 5), "positional")])
def test_a_misspelt_keyword_is_an_argument_error(device, call, word):
    e = _raises(TypeError, lambda: call(pt.ones((3, 3))), word)
    assert isinstance(e, pt.ArgumentError)


def test_trace_still_is_nps_trace_and_the_subpackage(device):
    x = np.arange(9.0).reshape(3, 3)
    assert pt.trace(pt.asarray(x), 1).item() == np.trace(x, 1)
    assert pt.trace(pt.asarray(x), axis1=1, axis2=0).item() == np.trace(x, axis1=1, axis2=0)
    from poot.trace import lazy
    assert pt.trace.lazy is lazy


def test_jit_calls_that_do_not_fit_are_type_errors(device):
    g = pt.jit(lambda x, y: x + y)
    x = pt.ones(3)
    _raises(TypeError, lambda: g(x, x, x), "too many positional arguments", "(x, y)")
    _raises(TypeError, lambda: g(x), "missing a required argument: 'y'")
    e = _raises(TypeError, lambda: g(x, z=x), "unexpected keyword argument 'z'")     # the misspelt name
    assert "missing" not in str(e)
    _raises(TypeError, lambda: pt.jit(lambda x, n: x, static_argnums=(1,))(x, [1, 2]), "not hashable")
    _raises(TypeError, lambda: pt.jit(lambda x: x, donate_argnums=(3,))(x), "donate_argnums holds 3")
    np.testing.assert_array_equal(pt.jit(lambda x: x + 1, donate_argnums=(0,))(pt.ones(2)).numpy(), [2.0, 2.0])


@pytest.mark.parametrize("transform", [pt.jit, pt.vmap, pt.grad, pt.jacrev, pt.checkpoint, pt.custom_vjp])
def test_a_transform_of_something_not_callable_is_a_type_error(device, transform):
    e = _raises(TypeError, lambda: transform(3), "needs a function")
    assert isinstance(e, pt.ArgumentError)


@pytest.mark.parametrize("call", [lambda: pt.vmap(lambda a: a, in_axes=1.0)(pt.ones((3, 2))),
                                  lambda: pt.vmap(lambda a: a, out_axes=["0"])(pt.ones(3)),
                                  lambda: pt.lax.scan(3, pt.ones(2), pt.ones((3, 2))),
                                  lambda: pt.lax.map(None, pt.ones(3)),
                                  lambda: pt.jvp(lambda x: x, pt.ones(2), pt.ones(2)),
                                  lambda: pt.lax.fori_loop(0, 3.5, lambda i, c: c + 1, pt.ones(2))])
def test_transform_arguments_of_the_wrong_type_are_type_errors(device, call):
    e = _raises(TypeError, call)
    assert isinstance(e, pt.ArgumentError)


@pytest.mark.parametrize("mode", MODES)
def test_a_float_array_loop_bound_is_refused_as_a_float_one_is(device, mode):
    """fori_loop(0, 3.5) is refused; an array 3.5 ran ceil(3.5) = 4 turns without a word."""
    run = mode(lambda n: pt.lax.fori_loop(0, n, lambda i, c: c + 1, pt.zeros(())))
    _raises(TypeError, lambda: run(pt.asarray(3.5)), "upper must be an integer", "f64[]")
    _raises(TypeError, lambda: run(pt.asarray([3])), "upper must be an integer", "i64[1]")
    assert run(pt.asarray(3)).item() == 3.0


# --- tracing mistakes ---------------------------------------------------------------------------------
def test_tracer_mistakes_name_the_line(device):
    @pt.jit
    def branch(x):
        if x.sum() > 0:
            return x
        return -x
    _raises(pt.TracerError, lambda: branch(pt.ones(3)), "bool()")
    _raises(pt.TracerError, lambda: pt.jit(lambda x: pt.zeros(int(x.sum())))(pt.ones(3)), "int()")
    leaked = []

    @pt.jit
    def keep(x):
        leaked.append(x * 2)
        return x
    keep(pt.ones(3))
    _raises(pt.LeakedTracerError, lambda: (leaked[0] + 1).numpy(), "leaked")
    _raises(pt.TracerError, lambda: pt.jit(lambda x: x[x > 0])(pt.ones(3)), "data-dependent shape")


def test_while_loop_names_what_cond_fun_returned(device):
    _raises(ValueError, lambda: pt.lax.while_loop(lambda c: c < 10, lambda c: c + 1, pt.ones(3)),
            "one scalar; it returned bool_[3]")


def test_grad_and_vmap_mistakes(device):
    _raises(ValueError, lambda: pt.grad(lambda x: x * 2)(pt.ones(3)), "scalar", "f64[3]")
    _raises(TypeError, lambda: pt.grad(lambda x: x.sum())(pt.ones(3, dtype=pt.int32)), "int32")
    e = _raises(pt.PootError, lambda: pt.vmap(lambda a, b: a + b)(pt.ones((3, 2)), pt.ones((4, 2))),
                "size 3", "size 4")
    assert "argument a" in str(e) and "argument b" in str(e)


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_torchs_normalized_shape_is_not_taken_as_a_weight(device, op):
    """F.layer_norm(x, x.shape[-1:]) in torch; here the second argument is the weight, and (3,) would
    scale the result by 3 without a word."""
    x = pt.asarray(np.arange(6.0).reshape(2, 3))
    f = getattr(pt.nn, op)
    e = _raises(TypeError, lambda: f(x, (3,)), "weight", "normalized_shape")
    assert isinstance(e, pt.ArgumentError)
    _raises(TypeError, lambda: f(x, [2, 3]), "(2, 3)")
    np.testing.assert_allclose(f(x, [1.0, 2.0, 3.0]).numpy(), f(x).numpy() * [1.0, 2.0, 3.0])


# --- linalg -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, args", [("inv", [[[1.0, 2.0], [2.0, 4.0]]]), ("inv", [np.ones((2, 3))]),
                                        ("solve", [[[1.0, 2.0], [2.0, 4.0]], [1.0, 1.0]]),
                                        ("cholesky", [[[1.0, 2.0], [2.0, 1.0]]]), ("det", [np.ones((2, 3))]),
                                        ("eigvals", [[[np.inf, 1.0], [1.0, 1.0]]])])
def test_linalg_mistakes_are_numpys_linalg_error(device, name, args):
    with pytest.raises(np.linalg.LinAlgError):
        getattr(np.linalg, name)(*[np.asarray(a) for a in args])
    _raises(np.linalg.LinAlgError, lambda: getattr(pt.linalg, name)(*[pt.asarray(np.asarray(a)) for a in args]))


def test_linalg_norm_errors_name_the_users_line(device):
    _raises(np.exceptions.AxisError, lambda: pt.linalg.norm(pt.ones((3, 4)), axis=2), "linalg.norm", "axis 2")
    np.testing.assert_allclose(pt.linalg.norm(pt.ones((3, 4)), axis=1.0).numpy(),     # NumPy's int(axis)
                               np.linalg.norm(np.ones((3, 4)), axis=1))


# --- @pt.kernel ---------------------------------------------------------------------------------------
@pt.kernel
def _add(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(c):
        c[i] = a[i] + b[i]


@pt.kernel
def _off_by_one(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    c[i] = a[i + 1]


@pt.kernel
def _writes_input(a: pt.In[pt.f32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(a):
        a[i] = 1.0


def test_kernel_launch_mistakes_name_the_users_line(device):
    ctx = pt.Context("cpu")
    a, c = np.ones(8, np.float32), np.zeros(8, np.float32)
    for run in (lambda *xs: _add(ctx, *xs), _add.emulate, lambda *xs: _add.launch(ctx, *xs)):
        _raises(TypeError, lambda: run(a, c), "takes 3 arguments (a, b, c), got 2")
        _raises(TypeError, lambda: run(a.astype(np.float64), a, c), "buffer 'a' is float32", "float64")
    _raises(TypeError, lambda: _add(a, a, c), "pt.Context")
    _raises(ValueError, lambda: _add(ctx, a, a, np.broadcast_to(np.float32(0), (8,))), "writable")
    _add(ctx, a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_a_kernel_launched_on_traced_values_is_named(device):
    """The launch's boundary cuts its traceback; vmap and grad still name the kernel."""
    ctx = pt.Context("cpu")

    def f(x):
        c = pt.zeros((8,), dtype=pt.float32)
        _add(ctx, x, x, c)
        return c.sum()
    x = pt.ones(8, dtype=pt.float32)
    _raises(pt.PootError, lambda: pt.vmap(f)(pt.ones((2, 8), dtype=pt.float32)), "kernel '_add'", "vmap")
    _raises(pt.NotBuiltError, lambda: pt.grad(f)(x), "kernel '_add'", "differentiated")


def test_kernel_body_mistakes(device):
    a, c = np.ones(8, np.float32), np.zeros(8, np.float32)
    e = _raises(pt.KernelTrap, lambda: _off_by_one.emulate(a, c), "index out of range", "a[i + 1]")
    assert re.search(rf"{HERE}:\d+", str(e))
    with pytest.raises(pt.KernelImportError) as info:
        _writes_input.emulate(a, c)
    assert info.value.code == "kernel-import::write-to-input" and HERE in str(info.value)


# --- NaN and inf where NumPy warns, not raises ---------------------------------------------------------
def test_nan_and_inf_inputs_give_numpys_values_without_raising(device):
    x = np.array([1.0, -1.0, 0.0, np.nan, np.inf, -np.inf])
    px = pt.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("log", "sqrt", "arccos", "reciprocal", "log1p", "sign"):
            np.testing.assert_array_equal(getattr(pt, name)(px).numpy(), getattr(np, name)(x), err_msg=name)
        for name in ("max", "min", "sum", "mean", "nanmax", "nanmean", "nansum", "median"):
            np.testing.assert_array_equal(getattr(pt, name)(px).numpy(), getattr(np, name)(x), err_msg=name)
        np.testing.assert_array_equal(pt.mean(pt.zeros((0, 3)), axis=0).numpy(), np.mean(np.zeros((0, 3)), axis=0))
        np.testing.assert_array_equal(pt.var(pt.ones(2), ddof=3).numpy(), np.var(np.ones(2), ddof=3))
        i = np.array([7, -7, 0], np.int32)
        np.testing.assert_array_equal((pt.asarray(i) // 0).numpy(), i // 0)
        np.testing.assert_array_equal((pt.asarray(i) % 0).numpy(), i % 0)
    with pytest.raises(ValueError):
        np.max(np.zeros(0))
    _raises(ValueError, lambda: pt.max(pt.zeros(0)), "zero-size")


# --- a fuzz of shapes and axes against NumPy -----------------------------------------------------------
_REDUCE = ("sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "ptp", "nansum", "count_nonzero")
_ONE_AXIS = ("argmax", "argmin", "cumsum", "cumprod", "sort", "diff")


def _fuzz_call(m, name, x, axis, keepdims):
    f = getattr(m, name)
    if name in _REDUCE:
        kw = {} if axis == "omit" else {"axis": axis}
        if keepdims and name != "count_nonzero":
            kw["keepdims"] = True
        return f(x, **kw)
    if name in _ONE_AXIS:
        return f(x) if axis == "omit" else f(x, axis=axis)
    if name == "flip":
        return f(x) if axis == "omit" else f(x, axis)
    if name == "expand_dims":
        return f(x, 0 if axis in ("omit", None) else axis)
    if name == "moveaxis":
        return f(x, 0 if axis in ("omit", None) else axis, -1)
    return f([x, x]) if axis == "omit" else f([x, x], axis=axis)        # concatenate, stack


def _known_difference(name, shape, axis):
    """Corners where poot refuses what NumPy allows by accident (or the reverse), on purpose: a 0-d
    array's axis as a tuple or through sort/concatenate (poot names the 0-d array first)."""
    return shape == () and (isinstance(axis, tuple) or name in ("sort", "concatenate"))


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(_REDUCE + _ONE_AXIS + ("flip", "expand_dims", "moveaxis", "concatenate",
                                                          "stack"))),
       shape=st.lists(st.integers(0, 3), max_size=3).map(tuple),
       axis=st.one_of(st.just("omit"), st.none(), st.integers(-4, 4), st.floats(0, 2).filter(lambda f: f != int(f)),
                      st.lists(st.integers(-3, 3), max_size=3).map(tuple)),
       keepdims=st.booleans(), dtype=st.sampled_from(["float64", "float32", "int32", "bool"]))
def test_fuzz_reductions_and_shape_functions_against_numpy(name, shape, axis, keepdims, dtype):
    if _known_difference(name, shape, axis):
        return
    xn = (np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.asarray(_fuzz_call(np, name, xn, axis, keepdims))
        except Exception as ne:                                     # the same mistake, NumPy's class
            with pytest.raises(type(ne) if type(ne).__module__ == "builtins" or
                               isinstance(ne, np.exceptions.AxisError) else Exception) as info:
                _fuzz_call(pt, name, pt.asarray(xn), axis, keepdims).numpy()
            assert isinstance(info.value, pt.PootError), (name, shape, axis, info.value)
            return
        got = _fuzz_call(pt, name, pt.asarray(xn), axis, keepdims).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (name, shape, axis, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12, equal_nan=True)
