"""Mistakes in declaring, calling and launching a kernel give a poot error that says what was wrong and
what to do: never a bare AttributeError / TypeError from Python's own argument binding."""
import warnings

import numpy as np
import pytest

import poot as pt
from poot.errors import ArgumentError, KernelImportError, LoweringError, PootError, TracerError


@pt.kernel
def widen(x: pt.In[pt.f16], y: pt.Out[pt.f32]):
    i = pt.thread_index()
    if i < len(y):
        y[i] = pt.f32(x[i])


@pt.kernel
def acc(x: pt.In[pt.f32], y: pt.InOut[pt.f32], s: pt.f32):
    i = pt.thread_index()
    if i < len(y):
        y[i] += x[i] * s


def buffers():
    return np.ones(4, np.float16), np.zeros(4, np.float32)


# --- the decorator ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("thing", [3, "f", None.__class__, len], ids=["int", "str", "class", "builtin"])
def test_kernel_with_options_applied_to_a_non_function(thing):
    with pytest.raises(PootError, match=r"@poot.kernel needs a Python function, got .*decorates a function"):
        pt.kernel(workgroup=(32,))(thing)


@pytest.mark.parametrize("options, what", [
    (dict(name=3), "name must be a Python identifier"), (dict(name="my kernel!"), "name must be a Python identifier"),
    (dict(checks="no"), "checks must be True or False"), (dict(workgroup=(True,)), "extents must be integers"),
    (dict(workgroup=True), "extents must be integers"), (dict(workgroup=(0, 1, 1)), "zero extent"),
])
def test_bad_options_are_refused_at_the_decorator(options, what):
    def body(y: pt.Out[pt.f32]):
        y[0] = 1.0
    with pytest.raises(KernelImportError, match=what) as e:
        pt.kernel(**options)(body)
    assert e.value.code == "kernel-import::bad-kernel-config"


# --- keywords on a call, a launch, an emulation --------------------------------------------------------------
def test_buffers_passed_by_name_say_the_arguments_are_positional():
    x, y = buffers()
    for call in (lambda: widen(pt.Context("cpu"), x=x, y=y), lambda: widen(x=x, y=y),
                 lambda: widen.launch(pt.Context("cpu"), x=x, y=y), lambda: widen.emulate(x=x, y=y)):
        with pytest.raises(ArgumentError, match=r"kernel 'widen' takes its arguments by position.*x, y.*'x', 'y'"):
            call()


def test_launch_options_on_a_plain_call_point_to_launch():
    x, y = buffers()
    with pytest.raises(ArgumentError, match=r"unexpected keyword 'threads' in widen\(ctx, x, y\).*widen.launch"):
        widen(pt.Context("cpu"), x, y, threads=(4, 1, 1))


@pytest.mark.parametrize("method", ["launch", "emulate"])
def test_a_misspelt_launch_option_names_the_accepted_ones(method):
    x, y = buffers()
    args = (pt.Context("cpu"), x, y) if method == "launch" else (x, y)
    with pytest.raises(ArgumentError, match=rf"kernel 'widen': unexpected keyword 'grid' in widen.{method}\(.*"
                                            "the only keywords are threads and workgroup"):
        getattr(widen, method)(*args, grid=(4,))
    widen.emulate(x, y, threads=(4,))       # the right keywords still work
    assert y.tolist() == [1.0] * 4


@pytest.mark.parametrize("workgroup, what", [((2048, 1, 1), "2048 threads; the limit is 1024"),
                                             ((0, 1, 1), "zero extent")])
def test_a_bad_launch_workgroup_is_a_poot_error_naming_the_kernel(workgroup, what):
    x, y = buffers()
    for call in (lambda: widen.launch(pt.Context("cpu"), x, y, workgroup=workgroup),
                 lambda: widen.emulate(x, y, workgroup=workgroup)):
        with pytest.raises(PootError, match=rf"kernel 'widen': workgroup .*{what}"):
            call()


# --- a Python number through @pt.jit into a kernel's scalar ---------------------------------------------------
def test_a_traced_scalar_says_to_mark_it_static():
    def step(x, y, s):
        return pt.kernel_call(acc, x, y, s)

    x, y = pt.ones(4, dtype=pt.float32), pt.zeros(4, dtype=pt.float32)
    with pytest.raises(TracerError, match=r"scalar parameter 's' \(float32\) got a traced array.*static_argnums"):
        pt.jit(step)(x, y, 2.0)
    assert pt.jit(step, static_argnums=(2,))(x, y, 2.0).numpy().tolist() == [2.0] * 4


def test_a_poot_array_for_a_scalar_outside_jit():
    x, y = pt.ones(4, dtype=pt.float32), pt.zeros(4, dtype=pt.float32)
    with pytest.raises(PootError, match=r"scalar parameter 's' \(float32\) got a poot Array; pass a Python number"):
        pt.kernel_call(acc, x, y, pt.asarray(np.float32(2)))


# --- annotations ---------------------------------------------------------------------------------------------
def import_error(fn) -> KernelImportError:
    with pytest.raises(KernelImportError) as e:
        pt.kernel(fn).kir
    return e.value


def test_a_buffer_of_two_dtypes_is_a_bad_annotation():
    def k(x: pt.In[pt.f32, pt.i32], y: pt.Out[pt.f32]):
        y[0] = x[0]
    e = import_error(k)
    assert e.code == "kernel-import::bad-annotation" and "parameter 'x'" in str(e) and "one dtype" in str(e)


@pytest.mark.parametrize("scalar", [False, True], ids=["buffer", "scalar"])
def test_a_complex_dtype_is_a_bad_annotation_at_the_parameter(scalar):
    if scalar:
        def k(y: pt.Out[pt.f32], x: pt.complex64):
            y[0] = 1.0
    else:
        def k(y: pt.Out[pt.f32], x: pt.In[pt.complex64]):
            y[0] = 1.0
    e = import_error(k)
    assert e.code == "kernel-import::bad-annotation" and "complex64" in str(e) and e.line > 0


# --- messages ------------------------------------------------------------------------------------------------
def test_an_array_function_in_a_kernel_is_not_sent_to_device_fn():
    def k(a: pt.In[pt.f32], b: pt.Out[pt.f32]):
        b[0] = pt.sum(a)
    e = import_error(k)
    assert "array-level poot function" in str(e) and "device_fn" not in str(e)


def test_an_overflowing_constant_is_an_error_not_an_infinity():
    def k(x: pt.Out[pt.f32]):
        x[0] = 1e308 * 10.0
    e = import_error(k)
    assert e.code == "kernel-import::constant-error" and "overflows" in str(e)


def test_folding_sqrt_of_a_negative_constant_gives_nan_without_a_warning():
    @pt.kernel
    def k(x: pt.Out[pt.f32]):
        x[0] = pt.sqrt(-1.0)
    out = np.zeros(1, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k.emulate(out, threads=1)
    assert np.isnan(out[0])


@pt.kernel
def count64(x: pt.In[pt.i32], total: pt.InOut[pt.i64]):
    i = pt.thread_index()
    if i < len(x):
        pt.atomic_add(total, 0, pt.i64(x[i]))


def test_a_64_bit_atomic_for_spirv_names_the_line():
    with pytest.raises(LoweringError, match=r"atomic add on int64 needs the SPIR-V capability Int64Atomics "
                                            r"\(pt.atomic_add into buffer 'total' at .*test_kernel_call_errors.py:\d+"):
        count64.compile("spirv")


def test_a_wrong_device_array_says_to_device():
    try:
        other = pt.Context("vulkan")
    except pt.DeviceUnavailableError:
        pytest.skip("needs a second device")
    y = pt.zeros(4, dtype=pt.float32)
    with pytest.raises(PootError, match=r"move it with .to_device\(...\)"):
        acc(other, pt.ones(4, dtype=pt.float32), y, 1.0)
