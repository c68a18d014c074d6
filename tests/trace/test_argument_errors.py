"""Arguments a public function hands to Python or NumPy before checking them by name (a string for a
float, None for a sequence, 2**70 for an int64) surface as PootErrors naming the function and the
user's line, and remain the original exception's type (`except ValueError:` written for NumPy still
catches them). An exception raised by the user's own function inside a poot call is not touched."""
import numpy as np
import pytest

import poot as pt

X = pt.ones(3)

CASES = [
    ("beta", lambda: pt.random.default_rng(0).beta("abc", 1.0), ValueError),
    ("normal", lambda: pt.random.default_rng(0).normal(size="abc"), TypeError),
    ("eye", lambda: pt.eye(3, k="abc"), TypeError),
    ("linspace", lambda: pt.linspace(0, 5, num=None), TypeError),
    ("fft2", lambda: pt.fft.fft2(pt.ones((2, 2)), s=1.5), TypeError),
    ("column_stack", lambda: pt.column_stack(None), TypeError),
    ("tensordot", lambda: pt.tensordot(X, X, axes=None), TypeError),
    ("compress", lambda: pt.compress([[1, 2], [3]], pt.ones(3)), ValueError),
    ("std", lambda: pt.std(X, ddof=None), TypeError),
    ("arange", lambda: pt.arange(0, 5, 2**70), OverflowError),
    ("result_type", lambda: pt.result_type(), IndexError),
    ("item", lambda: pt.asarray([[1.0, 2.0]]).item(1, 2), IndexError),
    ("sum", lambda: pt.sum(X, keepdims=np.array([True, False])), ValueError),
]


@pytest.mark.parametrize("name, call, kind", CASES, ids=[c[0] for c in CASES])
def test_bare_exception_becomes_its_poot_twin(name, call, kind):
    with pytest.raises(pt.PootError) as e:
        call()
    assert isinstance(e.value, kind)
    text = str(e.value)
    assert text.startswith(f"{name}:") and "test_argument_errors.py" in text, text


def _mine(v):
    raise ValueError("the user's own error")


@pytest.mark.parametrize("call", [lambda: pt.vmap(_mine)(pt.ones((2, 2))), lambda: pt.jit(_mine)(X),
                                  lambda: pt.grad(_mine)(pt.asarray(1.0)),
                                  lambda: pt.fori_loop(0, 2, lambda i, c: _mine(c), X)],
                         ids=["vmap", "jit", "grad", "fori_loop"])
def test_the_users_own_exception_is_untouched(call):
    with pytest.raises(ValueError, match="the user's own error") as e:
        call()
    assert type(e.value) is ValueError


def test_meaningful_subclasses_are_untouched():
    with pytest.raises(np.linalg.LinAlgError):
        pt.linalg.inv(pt.zeros((2, 2)))


@pytest.mark.parametrize("make", [pt.grad, pt.value_and_grad, pt.vmap, pt.jacrev, pt.jacfwd, pt.hessian,
                                  pt.checkpoint, pt.jit, pt.tree_map, pt.float32],
                         ids=lambda f: getattr(f, "__name__", "jit"))
def test_a_call_that_does_not_fit_a_public_factory(make):
    with pytest.raises(pt.ArgumentError):
        make(lambda v: v, bogus_keyword=1)


def test_diagonal_offsets_are_integers_and_huge_counts_finish():
    for bad in (lambda: pt.eye(3, k=1.5), lambda: pt.eye(3, k=None), lambda: pt.triu(pt.ones((3, 3)), k=1.5),
                lambda: pt.tril(pt.ones((3, 3)), k="1")):
        with pytest.raises(pt.ArgumentError, match="offset k"):
            bad()
    np.testing.assert_array_equal(pt.eye(3, k=np.int64(1)).numpy(), np.eye(3, k=1))
    assert pt.eye(3, k=2**70).numpy().sum() == 0 and pt.tril(pt.ones((2, 2)), k=-2**70).numpy().sum() == 0
    assert pt.diff(pt.ones(3), n=2**70).shape == np.diff(np.ones(3), n=10).shape == (0,)   # no loop of 2**70
