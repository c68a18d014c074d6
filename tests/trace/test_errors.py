"""Bad input raises the right PootError subclass when the op is recorded, at the user's line, with a
message naming the op, the operand shapes and dtypes, and what would fix it."""
from __future__ import annotations

import os

import numpy as np
import pytest

import poot as pt

HERE = os.path.abspath(__file__)


def assert_located(info, *fragments):
    """The message names every fragment and this file's line of the failing call; the traceback
    holds no frame from inside poot's trace layer."""
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in message:\n{msg}"
    test_frames = [t for t in info.traceback if os.path.abspath(str(t.path)) == HERE]
    line = test_frames[-1].lineno + 1
    assert f"{HERE}:{line}" in msg, f"expected {HERE}:{line} in:\n{msg}"
    assert not any(os.sep + os.path.join("poot", "trace") in str(t.path) for t in info.traceback)


def test_broadcast_mismatch_is_a_shape_error(device):
    x, y = pt.zeros((2, 3)), pt.ones(4, dtype=pt.float32)
    with pytest.raises(pt.ShapeError) as info:
        x + y
    assert_located(info, "add", "(2, 3)", "(4,)", "f64[2,3]", "f32[4]", "x[:, None]")
    assert isinstance(info.value, ValueError)


def test_matmul_inner_dimensions(device):
    a, b = pt.ones((2, 3), dtype=pt.float32), pt.ones((4, 5), dtype=pt.float32)
    with pytest.raises(pt.ShapeError) as info:
        a @ b
    assert_located(info, "matmul", "f32[2,3]", "f32[4,5]", "3 != 4", "transpose")
    with pytest.raises(pt.ShapeError) as info:
        pt.matmul(pt.ones((2, 2, 3)), pt.ones((3, 3, 4)))
    assert_located(info, "matmul", "batch")


def test_reshape_size(device):
    x = pt.zeros((2, 3))
    with pytest.raises(pt.ShapeError) as info:
        x.reshape(4, 2)
    assert_located(info, "reshape", "f64[2,3]", "(4, 2)", "6 elements")
    with pytest.raises(pt.ShapeError) as info:
        pt.reshape(x, (-1, 4))
    assert_located(info, "reshape", "-1")


@pytest.mark.parametrize("data", [np.ones(2, np.clongdouble), np.array([object(), 1], dtype=object),
                                  np.array(["a"]), np.ones(2, np.longdouble)],
                         ids=["clongdouble", "object", "string", "longdouble"])
def test_unsupported_dtypes(device, data):
    with pytest.raises(pt.DTypeError) as info:
        pt.asarray(data)
    assert_located(info, "array", "not supported")


def test_unsupported_dtype_arguments_and_op_dtypes(device):
    with pytest.raises(pt.DTypeError) as info:
        pt.zeros(3, dtype=np.clongdouble)
    assert_located(info, "complex")
    x = pt.ones(3, dtype=pt.float32)
    with pytest.raises(pt.DTypeError) as info:
        x & x
    assert_located(info, "bitwise_and", "float32")
    with pytest.raises(pt.DTypeError) as info:
        pt.floor(x + 1j)                    # NumPy has no floor of complex values either
    assert_located(info, "complex64")
    with pytest.raises(pt.DTypeError) as info:
        pt.asarray(np.arange(3, dtype=np.int8)) + 300
    assert_located(info, "300", "int8")


def test_axis_out_of_range(device):
    x = pt.zeros((2, 3))
    with pytest.raises(pt.AxisError) as info:
        x.sum(axis=3)
    assert_located(info, "sum", "axis 3", "f64[2,3]", "[-2, 1]")
    assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)
    for call in (lambda: pt.transpose(x, (0, 2)), lambda: pt.concatenate([x, x], axis=-3),
                 lambda: pt.argmax(x, axis=2), lambda: pt.expand_dims(x, 4), lambda: pt.flip(x, 5)):
        with pytest.raises(pt.AxisError):
            call()


def test_index_out_of_range(device):
    x = pt.zeros((2, 3))
    with pytest.raises(pt.PootIndexError) as info:
        x[5]
    assert_located(info, "index 5", "axis 0", "size 2", "f64[2,3]")
    assert isinstance(info.value, IndexError)
    with pytest.raises(IndexError) as info:
        x[:, [0, 7]]
    assert_located(info, "index 7", "size 3")
    with pytest.raises(IndexError) as info:
        x[0, 0, 0]
    assert_located(info, "too many indices", "f64[2,3]")
    with pytest.raises(IndexError):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError):
        x[[0, 1], [0, 1, 2]]


def test_mixing_devices(device):
    x = pt.ones(3, device="cpu")
    y = pt.ones(3, device="oracle")
    with pytest.raises(pt.DeviceError) as info:
        x + y
    assert_located(info, "add", "'cpu'", "'oracle'", ".to(")
    with pytest.raises(pt.DeviceError):
        pt.concatenate([x, y])
    assert (x + y.to("cpu")).device == "cpu"


def test_unknown_device(device):
    with pytest.raises(pt.DeviceUnavailableError) as info:
        pt.device("tpu")
    assert "tpu" in str(info.value)


def test_other_shape_errors(device):
    x, y = pt.zeros((2, 3)), pt.zeros((3, 3))
    with pytest.raises(pt.ShapeError) as info:
        pt.concatenate([x, pt.zeros((2, 4))])
    assert_located(info, "concatenate", "f64[2,3]", "f64[2,4]")
    with pytest.raises(pt.ShapeError) as info:
        pt.stack([x, y])
    assert_located(info, "stack", "same shape")
    with pytest.raises(pt.ShapeError) as info:
        x[0] = np.ones(4)
    assert_located(info, "setitem", "(4,)", "(3,)")
    with pytest.raises(pt.ShapeError) as info:
        pt.broadcast_to(x, (3, 3))
    assert_located(info, "broadcast_to", "f64[2,3]", "(3, 3)")
    with pytest.raises(pt.ShapeError) as info:
        pt.split(x, 2, axis=1)
    assert_located(info, "split", "equal")
    with pytest.raises(pt.ShapeError) as info:
        pt.einsum("ij,jk->ik", x, pt.zeros((4, 2)))
    assert_located(info, "einsum", "'j'")
    with pytest.raises(pt.ShapeError) as info:
        bool(x)
    assert_located(info, "ambiguous", "f64[2,3]")


def test_errors_are_raised_when_recorded_not_when_realized(device):
    x = pt.zeros((2, 3)) * 2  # pending
    with pytest.raises(pt.ShapeError):
        x + pt.zeros(4)
    assert not x.is_realized


def test_tracer_error_names_the_line_and_suggests_alternatives(device):
    from poot.trace import lazy

    x = pt.Array(lazy.placeholder(pt.graph.Aval((3,), pt.float32), device))
    y = pt.exp(x).sum()
    with pytest.raises(pt.TracerError) as info:
        float(y)
    assert_located(info, "float()", "pt.where", "pt.cond", "pt.fori_loop", "pt.while_loop", HERE)
    with lazy.tracing():
        z = pt.ones(2) + 1
        with pytest.raises(pt.TracerError):
            z.numpy()
        with pytest.raises(pt.TracerError):
            if z.sum() > 0:
                pass


def test_a_failure_inside_poot_is_an_internal_error_with_the_graph(device, monkeypatch):
    """A bug in poot's planner or code generator reaches the user as poot.InternalError, which says
    it is poot's bug and carries the graph to report, never as a bare KeyError from poot's insides."""
    if device == "oracle":
        pytest.skip("the oracle device evaluates graphs with NumPy; it plans nothing")
    import poot.fuse.plan as plan

    def broken(graph, max_buffers=None):
        raise KeyError("a key the planner lost")

    monkeypatch.setattr(plan, "plan_fusion", broken)
    x = pt.asarray(np.arange(3, dtype=np.float32))
    with pytest.raises(pt.InternalError) as info:
        (pt.sin(x) * 7.0).numpy()
    msg = str(info.value)
    assert "KeyError" in msg and "a key the planner lost" in msg and "bug in poot" in msg
    assert "sin" in msg and "f32[3]" in msg          # the graph dump
    assert isinstance(info.value, pt.PootError) and isinstance(info.value.cause, KeyError)


def test_integers_to_negative_integer_powers_are_refused_as_numpy_does():
    a = pt.asarray(np.array([1, 2, 3]))
    for e in (-1, np.int64(-2)):
        with pytest.raises(pt.DomainError, match="negative integer powers"):
            a ** e
    with pytest.raises(ValueError):
        pt.power(a, -3)
    np.testing.assert_array_equal((a ** 2).numpy(), [1, 4, 9])


def test_arguments_that_do_not_fit_name_the_function():
    x = pt.asarray(np.ones(3))
    with pytest.raises(pt.OutError, match=r"add: out= is not supported \(poot arrays are immutable"):
        pt.add(x, x, out=x)
    with pytest.raises(TypeError, match=r"exp: takes 1 positional argument"):
        pt.exp(x, x)
    with pytest.raises(pt.ArgumentError) as info:
        pt.sum(x, bogus=1)
    assert str(info.value).count("(at ") == 1 and "test_errors.py" in str(info.value)
