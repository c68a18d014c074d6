"""`out=` is refused by every poot function (poot arrays are immutable values), with one class per
kind of mistake wherever it is given: OutShapeError (a ShapeError and NumPy's ValueError) for an out of
the wrong shape, OutDTypeError (a DTypeError and NumPy's TypeError) for a dtype NumPy's same_kind rule
refuses, OutError otherwise. The messages name the function and both shapes or dtypes."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt

X = np.arange(6.0).reshape(2, 3)

# name -> (call given an out=, the result NumPy's function gives without it)
CALLS = {
    "add": (lambda m, x, o: m.add(x, 1.0, out=o), lambda x: np.add(x, 1.0)),
    "exp": (lambda m, x, o: m.exp(x, out=o), np.exp),
    "sum": (lambda m, x, o: m.sum(x, axis=0, out=o), lambda x: np.sum(x, axis=0)),
    "mean": (lambda m, x, o: m.mean(x, axis=1, out=o), lambda x: np.mean(x, axis=1)),
    "max": (lambda m, x, o: m.max(x, axis=0, out=o), lambda x: np.max(x, axis=0)),
    "cumsum": (lambda m, x, o: m.cumsum(x, out=o), np.cumsum),
    "clip": (lambda m, x, o: m.clip(x, 0.0, 1.0, out=o), lambda x: np.clip(x, 0.0, 1.0)),
    "matmul": (lambda m, x, o: m.matmul(x, x.T, out=o), lambda x: np.matmul(x, x.T)),
    "dot": (lambda m, x, o: m.dot(x, x.T, out=o), lambda x: np.dot(x, x.T)),
    "median": (lambda m, x, o: m.median(x, axis=0, out=o), lambda x: np.median(x, axis=0)),
    "round": (lambda m, x, o: m.round(x, 1, out=o), lambda x: np.round(x, 1)),
    "add.reduce": (lambda m, x, o: m.add.reduce(x, axis=0, out=o), lambda x: np.add.reduce(x, axis=0)),
    "concatenate": (lambda m, x, o: m.concatenate([x, x], out=o), lambda x: np.concatenate([x, x])),
}


def _numpy_error(name, out):
    fn, _ = CALLS[name]
    with pytest.raises(Exception) as info:
        fn(np, X, out)
    return info.value


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("kind", ["numpy", "poot"])
def test_a_wrong_shape_out_is_an_out_shape_error_naming_both_shapes(device, name, kind):
    want = CALLS[name][1](X)
    bad = np.zeros((7,))
    assert isinstance(_numpy_error(name, bad), ValueError)      # NumPy's refusal is a ValueError
    out = bad if kind == "numpy" else pt.asarray(bad)
    with pytest.raises(pt.OutShapeError) as info:
        CALLS[name][0](pt, pt.asarray(X), out)
    assert isinstance(info.value, ValueError) and isinstance(info.value, pt.ShapeError)
    assert str(info.value).startswith(f"{name}: out= has shape (7,), but the result has shape {want.shape}")


# NumPy casts a reduction's or a scan's result to any out dtype (casting='unsafe'); dot refuses with a
# ValueError and concatenate takes its own casting=
SAME_KIND = ["add", "exp", "clip", "matmul", "round"]
ANY_DTYPE = ["sum", "mean", "max", "cumsum", "median", "add.reduce"]


@pytest.mark.parametrize("name", SAME_KIND)
def test_a_wrong_dtype_out_is_an_out_dtype_error_naming_both_dtypes(device, name):
    want = CALLS[name][1](X)
    bad = np.zeros(want.shape, np.int32)
    assert isinstance(_numpy_error(name, bad), TypeError)       # NumPy's same_kind refusal
    with pytest.raises(pt.OutDTypeError) as info:
        CALLS[name][0](pt, pt.asarray(X), bad)
    assert isinstance(info.value, TypeError) and isinstance(info.value, pt.DTypeError)
    assert str(info.value).startswith(f"{name}: out= has dtype int32, but the result's dtype float64 "
                                      f"cannot be cast to it under casting='same_kind'")


@pytest.mark.parametrize("name", ANY_DTYPE)
def test_a_reduction_takes_any_out_dtype_as_numpy_does(device, name):
    want = CALLS[name][1](X)
    got = np.zeros(want.shape, np.int32)
    CALLS[name][0](np, X, got)                                  # NumPy casts into it
    with pytest.raises(pt.OutError) as info:
        CALLS[name][0](pt, pt.asarray(X), got)
    assert type(info.value) is pt.OutError and "out= is not supported" in str(info.value)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_fitting_out_is_still_refused_with_one_class(device, name):
    want = CALLS[name][1](X)
    with pytest.raises(pt.OutError, match=rf"^{name}: out= is not supported \(poot arrays are immutable"):
        CALLS[name][0](pt, pt.asarray(X), pt.zeros(want.shape))


@pytest.mark.parametrize("name", ["add", "sum", "cumsum", "clip", "matmul", "add.reduce"])
def test_numpys_functions_given_a_poot_out_use_the_same_classes(device, name):
    x = pt.asarray(X)
    want = CALLS[name][1](X)
    with pytest.raises(pt.OutShapeError, match=rf"^np\.{name}: out= has shape \(7,\)"):
        CALLS[name][0](np, x, pt.zeros(7))
    wrong_kind = (pt.OutError if name in ANY_DTYPE else pt.OutDTypeError)
    with pytest.raises(wrong_kind) as info:
        CALLS[name][0](np, x, pt.zeros(want.shape, dtype=pt.int32))
    assert type(info.value) is wrong_kind
    with pytest.raises(pt.OutError, match=rf"^np\.{name}: out= is not supported"):
        CALLS[name][0](np, x, pt.zeros(want.shape))
    np.testing.assert_array_equal(x.numpy(), X)


def test_the_out_errors_are_of_numpys_and_poots_families():
    for cls in (pt.OutError, pt.OutShapeError, pt.OutDTypeError):
        assert issubclass(cls, pt.PootError) and issubclass(cls, pt.ArgumentError)
    assert issubclass(pt.OutShapeError, ValueError) and issubclass(pt.OutDTypeError, TypeError)
