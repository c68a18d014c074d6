"""poot is an array API standard 2023.12 namespace: every name, with the standard's signatures, the
info object, the Array's attributes and methods, and the version handshake."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import poot as pt

P, K = "positional", "keyword"  # a parameter the standard makes positional-only / keyword (or either)

# name -> the standard's parameters, in order: (name, how it is passed). "*name" is *args.
SIGNATURES = {
    # creation
    "arange": [("start", P), ("stop", P), ("step", P), ("dtype", K), ("device", K)],
    "asarray": [("obj", P), ("dtype", K), ("device", K), ("copy", K)],
    "empty": [("shape", P), ("dtype", K), ("device", K)],
    "empty_like": [("x", P), ("dtype", K), ("device", K)],
    "eye": [("n_rows", P), ("n_cols", P), ("k", K), ("dtype", K), ("device", K)],
    "from_dlpack": [("x", P), ("device", K), ("copy", K)],
    "full": [("shape", P), ("fill_value", P), ("dtype", K), ("device", K)],
    "full_like": [("x", P), ("fill_value", K), ("dtype", K), ("device", K)],
    "linspace": [("start", P), ("stop", P), ("num", K), ("dtype", K), ("device", K), ("endpoint", K)],
    "meshgrid": [("*arrays", P), ("indexing", K)],
    "ones": [("shape", P), ("dtype", K), ("device", K)],
    "ones_like": [("x", P), ("dtype", K), ("device", K)],
    "tril": [("x", P), ("k", K)],
    "triu": [("x", P), ("k", K)],
    "zeros": [("shape", P), ("dtype", K), ("device", K)],
    "zeros_like": [("x", P), ("dtype", K), ("device", K)],
    # data types
    "astype": [("x", P), ("dtype", P), ("copy", K), ("device", K)],
    "can_cast": [("from_", P), ("to", P)],
    "finfo": [("type", P)],
    "iinfo": [("type", P)],
    "isdtype": [("dtype", P), ("kind", P)],
    "result_type": [("*arrays_and_dtypes", P)],
    # elementwise (unary and binary ones are listed below), clip
    "clip": [("x", P), ("min", K), ("max", K)],
    # indexing
    "take": [("x", P), ("indices", P), ("axis", K)],
    # linear algebra in the main namespace
    "matmul": [("x1", P), ("x2", P)],
    "matrix_transpose": [("x", P)],
    "tensordot": [("x1", P), ("x2", P), ("axes", K)],
    "vecdot": [("x1", P), ("x2", P), ("axis", K)],
    # manipulation
    "broadcast_arrays": [("*arrays", P)],
    "broadcast_to": [("x", P), ("shape", K)],
    "concat": [("arrays", P), ("axis", K)],
    "expand_dims": [("x", P), ("axis", K)],
    "flip": [("x", P), ("axis", K)],
    "moveaxis": [("x", P), ("source", P), ("destination", P)],
    "permute_dims": [("x", P), ("axes", K)],
    "repeat": [("x", P), ("repeats", P), ("axis", K)],
    "reshape": [("x", P), ("shape", K), ("copy", K)],
    "roll": [("x", P), ("shift", K), ("axis", K)],
    "squeeze": [("x", P), ("axis", K)],
    "stack": [("arrays", P), ("axis", K)],
    "tile": [("x", P), ("repetitions", P)],
    "unstack": [("x", P), ("axis", K)],
    # searching
    "argmax": [("x", P), ("axis", K), ("keepdims", K)],
    "argmin": [("x", P), ("axis", K), ("keepdims", K)],
    "nonzero": [("x", P)],
    "searchsorted": [("x1", P), ("x2", P), ("side", K), ("sorter", K)],
    "where": [("condition", P), ("x1", P), ("x2", P)],
    # sets
    "unique_all": [("x", P)], "unique_counts": [("x", P)], "unique_inverse": [("x", P)],
    "unique_values": [("x", P)],
    # sorting
    "argsort": [("x", P), ("axis", K), ("descending", K), ("stable", K)],
    "sort": [("x", P), ("axis", K), ("descending", K), ("stable", K)],
    # statistical
    "cumulative_sum": [("x", P), ("axis", K), ("dtype", K), ("include_initial", K)],
    "max": [("x", P), ("axis", K), ("keepdims", K)],
    "mean": [("x", P), ("axis", K), ("keepdims", K)],
    "min": [("x", P), ("axis", K), ("keepdims", K)],
    "prod": [("x", P), ("axis", K), ("dtype", K), ("keepdims", K)],
    "std": [("x", P), ("axis", K), ("correction", K), ("keepdims", K)],
    "sum": [("x", P), ("axis", K), ("dtype", K), ("keepdims", K)],
    "var": [("x", P), ("axis", K), ("correction", K), ("keepdims", K)],
    # utility
    "all": [("x", P), ("axis", K), ("keepdims", K)],
    "any": [("x", P), ("axis", K), ("keepdims", K)],
}
UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj",
         "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p",
         "log2", "log10", "logical_not", "negative", "positive", "real", "round", "sign", "signbit",
         "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
          "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
          "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
          "maximum", "minimum", "multiply", "not_equal", "pow", "remainder", "subtract"]
SIGNATURES.update({f: [("x", P)] for f in UNARY})
SIGNATURES.update({f: [("x1", P), ("x2", P)] for f in BINARY})

LINALG = {
    "cholesky": [("x", P), ("upper", K)], "cross": [("x1", P), ("x2", P), ("axis", K)],
    "det": [("x", P)], "diagonal": [("x", P), ("offset", K)], "eigh": [("x", P)],
    "eigvalsh": [("x", P)], "inv": [("x", P)], "matmul": [("x1", P), ("x2", P)],
    "matrix_norm": [("x", P), ("keepdims", K), ("ord", K)], "matrix_power": [("x", P), ("n", P)],
    "matrix_rank": [("x", P), ("rtol", K)], "matrix_transpose": [("x", P)],
    "outer": [("x1", P), ("x2", P)], "pinv": [("x", P), ("rtol", K)], "qr": [("x", P), ("mode", K)],
    "slogdet": [("x", P)], "solve": [("x1", P), ("x2", P)], "svd": [("x", P), ("full_matrices", K)],
    "svdvals": [("x", P)], "tensordot": [("x1", P), ("x2", P), ("axes", K)],
    "trace": [("x", P), ("offset", K), ("dtype", K)], "vecdot": [("x1", P), ("x2", P), ("axis", K)],
    "vector_norm": [("x", P), ("axis", K), ("keepdims", K), ("ord", K)],
}
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
          "float64", "complex64", "complex128"]


def check_signature(fn, spec, where):
    """The standard's positional parameters can be passed by position (in its order), its keyword
    parameters by name; a standard *args is a *args."""
    params = list(inspect.signature(fn).parameters.values())
    kinds = inspect.Parameter
    for i, (name, how) in enumerate(spec):
        if name.startswith("*"):
            assert any(p.kind is kinds.VAR_POSITIONAL for p in params), f"{where}: no *{name[1:]}"
            continue
        if how == P:
            assert i < len(params) and params[i].kind in (kinds.POSITIONAL_ONLY,
                                                          kinds.POSITIONAL_OR_KEYWORD), \
                f"{where}: parameter {i} ({name}) cannot be passed by position: {params}"
        else:
            byname = {p.name: p for p in params}
            assert name in byname and byname[name].kind in (kinds.POSITIONAL_OR_KEYWORD,
                                                            kinds.KEYWORD_ONLY), \
                f"{where}: no keyword parameter {name!r}: {params}"
    required = [p for p in params if p.default is p.empty and p.kind in
                (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)]
    assert len(required) <= len([s for s in spec if not s[0].startswith("*")]), \
        f"{where}: requires more parameters than the standard: {required}"


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_every_standard_function_exists_with_its_signature(name):
    fn = getattr(pt, name)
    assert callable(fn)
    check_signature(fn, SIGNATURES[name], f"pt.{name}")


@pytest.mark.parametrize("name", sorted(LINALG))
def test_every_linalg_function_exists_with_its_signature(name):
    check_signature(getattr(pt.linalg, name), LINALG[name], f"pt.linalg.{name}")


def test_version_constants_and_dtypes():
    assert pt.__array_api_version__ == "2024.12"
    assert (pt.e, pt.pi) == (math.e, math.pi) and math.isinf(pt.inf) and math.isnan(pt.nan)
    assert pt.newaxis is None
    for name in DTYPES:
        d = getattr(pt, name)
        assert d == d and hash(d) == hash(getattr(pt, name))
        assert d != (pt.float64 if name != "float64" else pt.float32)
    assert pt.bool is pt.bool_


def test_fft_is_reported():
    """pt.fft has the frequency and shift helpers and the transforms (tests/trace/test_fft.py)."""
    assert callable(pt.fft.fftfreq) and callable(pt.fft.fftshift)
    assert pt.fft.rfft(pt.ones(4)).dtype is pt.complex128
    info = pt.__array_namespace_info__()
    assert info.extensions() == {"linalg": True, "fft": True}


def test_info_object():
    info = pt.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True,
                                   "max dimensions": 64}
    assert info.default_device() == "cpu" == pt.asarray(1.0).device
    assert "cpu" in info.devices()
    assert info.default_dtypes() == {"real floating": pt.float64, "complex floating": pt.complex128,
                                     "integral": pt.int64, "indexing": pt.int64}
    assert info.default_dtypes(device="cpu")["integral"] is pt.int64
    assert list(info.dtypes()) == DTYPES
    assert info.dtypes(kind="real floating") == {"float32": pt.float32, "float64": pt.float64}
    assert set(info.dtypes(kind="integral")) == set(DTYPES[1:9])
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8", "uint16", "uint32",
                                                                  "uint64"}
    assert info.dtypes(kind="complex floating") == {"complex64": pt.complex64, "complex128": pt.complex128}
    assert set(info.dtypes(kind="numeric")) == set(DTYPES[1:])
    with pytest.raises(pt.DTypeError, match="unknown data type kind 'floats'"):
        info.dtypes(kind="floats")
    with pytest.raises(pt.DeviceUnavailableError):
        info.dtypes(device="tpu")


def test_array_namespace_and_version_handshake():
    x = pt.asarray([1.0])
    assert x.__array_namespace__() is pt
    for v in ("2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is pt
    with pytest.raises(pt.PootError, match="api_version='2030.12' is not one of them"):
        x.__array_namespace__(api_version="2030.12")
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1.0")


def test_array_attributes_and_methods():
    x = pt.reshape(pt.arange(6, dtype=pt.float32), (2, 3))
    assert (x.dtype, x.ndim, x.shape, x.size, x.device) == (pt.float32, 2, (2, 3), 6, "cpu")
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    np.testing.assert_array_equal(x.mT.numpy(), x.numpy().T)
    for op in ["__abs__", "__add__", "__and__", "__array_namespace__", "__bool__", "__complex__",
               "__dlpack__", "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__ge__",
               "__getitem__", "__gt__", "__index__", "__int__", "__invert__", "__le__", "__lshift__",
               "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
               "__pow__", "__rshift__", "__setitem__", "__sub__", "__truediv__", "__xor__", "to_device"]:
        assert callable(getattr(pt.Array, op)), op
    for stem in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
                 "lshift", "rshift"]:
        assert callable(getattr(pt.Array, f"__r{stem}__")) and callable(getattr(pt.Array, f"__i{stem}__"))
    check_signature(pt.Array.to_device, [("self", P), ("device", P), ("stream", K)], "to_device")
    check_signature(pt.Array.__dlpack__, [("self", P), ("stream", K), ("max_version", K),
                                          ("dl_device", K), ("copy", K)], "__dlpack__")
    assert x.to_device("cpu", stream=None) is x
    assert float(x[1, 2]) == 5.0 and int(x[0, 1]) == 1 and complex(x[0, 0]) == 0j
    assert bool(x[0, 1]) and [10, 20][pt.asarray(1)] == 20


def test_data_dependent_functions_say_they_realize():
    for fn in (pt.unique_all, pt.unique_counts, pt.unique_inverse, pt.unique_values, pt.nonzero):
        assert "realiz" in fn.__doc__.lower(), fn.__name__
    assert "realiz" in pt.Array.__getitem__.__doc__  # boolean masks
    for fn in (pt.sort, pt.argsort):
        doc = " ".join(fn.__doc__.split())
        assert "host op" in doc and "@pt.jit" in doc


def test_data_dependent_functions_refuse_inside_jit():
    @pt.jit
    def f(x):
        return pt.unique_values(x)

    with pytest.raises(pt.TracerError, match="unique_values"):
        f(pt.asarray([1.0, 2.0]))
