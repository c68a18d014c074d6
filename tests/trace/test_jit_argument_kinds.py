"""What a jitted (or vmapped, or differentiated) function accepts and how it treats it, as an eager call
does: lists of traced arrays as operands, big-endian and NumPy arguments (one signature with the poot
array of that shape and dtype), NumPy's linalg functions on traced arrays, bound methods whose object
holds arrays, and arguments updated in place under pt.vmap and the derivative transformations."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import poot as pt
from poot.transforms.tracing import ArgumentWriteError


# --- a list of traced 0-d arrays as an operand -----------------------------------------------------
def test_a_list_of_traced_scalars_as_an_operand_is_stacked():
    f = pt.jit(lambda x, a, b: x * [a, b])
    got = f(pt.ones(2), pt.asarray(2.0), pt.asarray(3.0))
    np.testing.assert_array_equal(got.numpy(), [2.0, 3.0])
    eager = pt.ones(2) * [pt.asarray(2.0), pt.asarray(3.0)]
    np.testing.assert_array_equal(eager.numpy(), got.numpy())


def test_a_tuple_mixing_traced_arrays_and_python_scalars_as_an_operand():
    f = pt.jit(lambda x, a: (a, 4.0) + x)
    np.testing.assert_array_equal(f(pt.zeros(2), pt.asarray(1.5)).numpy(), [1.5, 4.0])
    g = pt.jit(lambda x, a: pt.maximum(x, [[a], [a * 2]]))
    np.testing.assert_array_equal(g(pt.ones(3), pt.asarray(1.5)).numpy(), [[1.5] * 3, [3.0] * 3])


# --- NumPy arguments ---------------------------------------------------------------------------------
def test_a_big_endian_numpy_argument_is_taken_as_asarray_takes_it():
    f = pt.jit(lambda x: x * 2 + 1)
    big = np.arange(4, dtype=">f8")
    np.testing.assert_array_equal(f(big).numpy(), np.arange(4) * 2 + 1)
    np.testing.assert_array_equal(f({"a": big}["a"]).numpy(), np.arange(4) * 2 + 1)
    g = pt.jit(lambda d: d["v"] + 1)
    out = g({"v": np.arange(3, dtype=">i4")})
    assert out.dtype == pt.int32
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3])
    assert f.trace_count == 1      # the same values and native dtype as a little-endian array


def test_numpy_and_poot_arguments_of_one_shape_and_dtype_share_one_trace():
    f = pt.jit(lambda x, y: x * y)
    a = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(f(a, 2.0).numpy(), a * 2)
    np.testing.assert_array_equal(f(pt.asarray(a), 3.0).numpy(), a * 3)
    np.testing.assert_array_equal(f(pt.asarray(a), 4.0).numpy(), a * 4)   # the guard's path
    np.testing.assert_array_equal(f(a.astype(">f4"), 5.0).numpy(), a * 5)
    assert f.trace_count == 1
    assert f._hot is not None       # a poot call after a NumPy first call takes the guard
    g = pt.jit(lambda t: t[0] + t[1])
    g((np.ones(2), pt.ones(2)))
    g((pt.ones(2), np.ones(2)))
    g((np.float64(1.0), pt.asarray(2.0)))
    g((pt.asarray(1.0), np.float64(2.0)))
    assert g.trace_count == 2       # (shape (2,), shape ()) only


def test_a_numpy_scalar_argument_shares_the_trace_of_a_0d_array():
    f = pt.jit(lambda x: x + 1)
    assert float(f(np.float32(2.0))) == 3.0
    assert float(f(pt.asarray(np.float32(3.0)))) == 4.0
    assert f.trace_count == 1


# --- NumPy's linalg functions dispatch to pt.linalg ----------------------------------------------------
def test_numpy_linalg_functions_on_traced_arrays_dispatch_to_pt_linalg():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])

    @pt.jit
    def f(m, v):
        return (np.linalg.norm(v), np.linalg.norm(m, axis=1), np.linalg.solve(m, v), np.linalg.inv(m),
                np.linalg.det(m), np.linalg.cholesky(m), np.linalg.eigvalsh(m))

    got = f(pt.asarray(a), pt.asarray(b))
    want = (np.linalg.norm(b), np.linalg.norm(a, axis=1), np.linalg.solve(a, b), np.linalg.inv(a),
            np.linalg.det(a), np.linalg.cholesky(a), np.linalg.eigvalsh(a))
    for g, w in zip(got, want):
        assert isinstance(g, pt.Array)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)


def test_numpy_linalg_eagerly_stays_lazy_and_numpy_only_arguments_fall_back():
    x = pt.asarray(np.arange(4.0))
    assert isinstance(np.linalg.norm(x), pt.Array)
    m = pt.asarray(np.array([[2.0, 0.0], [0.0, 3.0]]))
    sign, logdet = np.linalg.slogdet(m)
    assert float(sign) == 1.0 and abs(float(logdet) - np.log(6.0)) < 1e-12
    # a parameter only NumPy's function has: NumPy answers, on the realized values
    np.testing.assert_allclose(np.linalg.eigvalsh(m, UPLO="U"), [2.0, 3.0])
    assert int(np.linalg.matrix_rank(m, 1e-8)) == 2


# --- bound methods ---------------------------------------------------------------------------------
class _Model:
    def __init__(self):
        self.W = pt.ones(2)
        self.k = 3

    def __call__(self, x):
        return x * self.W

    def scale(self, x):
        return x * self.k


@dataclasses.dataclass
class _Params:
    W: object

    def apply(self, x):
        return x * self.W


def test_jitting_a_bound_method_that_reads_its_objects_arrays_is_refused():
    m = _Model()
    with pytest.raises(pt.PootError, match=r"reads the array self\.W, held by the _Model object the method is bound"):
        pt.jit(m.__call__)(pt.ones(2))
    with pytest.raises(pt.PootError, match=r"pt\.jit\(_Params\.apply\)"):
        pt.jit(_Params(pt.ones(2)).apply)(pt.ones(2))
    # no array of the object read: nothing is baked in
    np.testing.assert_array_equal(pt.jit(m.scale)(pt.ones(2)).numpy(), [3.0, 3.0])


def test_the_ways_out_named_for_a_bound_method_work():
    p = _Params(pt.ones(2))
    f = pt.jit(_Params.apply)
    np.testing.assert_array_equal(f(p, pt.ones(2)).numpy(), [1.0, 1.0])
    p.W = pt.full(2, 5.0)
    np.testing.assert_array_equal(f(p, pt.ones(2)).numpy(), [5.0, 5.0])
    m = _Model()
    frozen = pt.jit(_Model.__call__, static_argnums=0)
    np.testing.assert_array_equal(frozen(m, pt.ones(2)).numpy(), [1.0, 1.0])


# --- in-place updates under pt.vmap and the derivative transformations --------------------------------
def _bump(x):
    x += 1
    return x.sum()


def test_in_place_updates_of_mapped_arguments_are_written_back_batched():
    a = pt.zeros((2, 3))
    np.testing.assert_array_equal(pt.vmap(_bump)(a).numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(a.numpy(), np.ones((2, 3)))
    b = pt.zeros((3, 2))
    pt.vmap(_bump, in_axes=1)(b)
    np.testing.assert_array_equal(b.numpy(), np.ones((3, 2)))

    def put(x, i):
        x[i] = 5.0
        return x

    c, i = pt.zeros((2, 3)), pt.asarray(np.array([0, 2]))
    want = np.array([[5.0, 0, 0], [0, 0, 5.0]])
    np.testing.assert_array_equal(pt.vmap(put)(c, i).numpy(), want)
    np.testing.assert_array_equal(c.numpy(), want)
    d = pt.zeros((2, 3))
    pt.jit(pt.vmap(put))(d, i)
    np.testing.assert_array_equal(d.numpy(), want)
    eager = np.zeros((2, 3))
    for k in range(2):          # what a loop over the examples does, in NumPy
        eager[k][[0, 2][k]] = 5.0
    np.testing.assert_array_equal(eager, want)


def test_a_per_example_write_into_an_unmapped_argument_is_refused_and_leaves_it_unchanged():
    def f(x, w):
        w += x
        return x

    w = pt.zeros(3)
    with pytest.raises(ArgumentWriteError, match=r"not mapped \(in_axes None\)"):
        pt.vmap(f, in_axes=(0, None))(pt.ones((2, 3)), w)
    np.testing.assert_array_equal(w.numpy(), np.zeros(3))

    def g(x, w):
        w += 1.0            # the same for every example: written back once
        return x + w

    w = pt.zeros(3)
    np.testing.assert_array_equal(pt.vmap(g, in_axes=(0, None))(pt.ones((2, 3)), w).numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(w.numpy(), np.ones(3))


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jvp"])
def test_a_differentiated_function_writing_into_its_argument_is_refused(transform):
    def h(x):
        x[0] = 5.0
        return (x * x).sum()

    b = pt.ones(3)
    with pytest.raises(ArgumentWriteError, match=r"writes into an argument in place") as info:
        if transform == "vjp":
            pt.vjp(h, b)
        elif transform == "jvp":
            pt.jvp(h, (b,), (pt.ones(3),))
        else:
            getattr(pt, transform)(h)(b)
    assert isinstance(info.value, pt.PootError)
    np.testing.assert_array_equal(b.numpy(), np.ones(3))
    # an update of a copy is a computation like any other
    np.testing.assert_allclose(pt.grad(lambda x: (x.copy() * 2).sum())(b).numpy(), np.full(3, 2.0))
