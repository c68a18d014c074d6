"""Recipes (poot/trace/recipes.py): a public function's recorded equations, replayed for later calls
of the same kind. A replay must give exactly what recording again would give."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from tolerance import assert_close


def test_replayed_slices_rolls_and_updates_match_numpy():
    r = np.random.default_rng(0)
    pn = r.normal(size=(9, 11))
    p = pt.asarray(pn)
    for step in range(4):                      # the first call records, the others replay
        q = p.copy()
        q[1:-1] = ((pt.roll(q, -1, axis=1) + pt.roll(q, 1, axis=1))[1:-1] + q[2:] + q[:-2]) / 4
        q[0, :] = q[1, :]
        q[-1, :] = 0.0
        qn = pn.copy()
        qn[1:-1] = ((np.roll(qn, -1, axis=1) + np.roll(qn, 1, axis=1))[1:-1] + qn[2:] + qn[:-2]) / 4
        qn[0, :] = qn[1, :]
        qn[-1, :] = 0.0
        p, pn = q, qn
        assert_close(p.numpy(), pn, dtype=np.float64, ops=8 * (step + 1), err_msg=f"step {step}")


def test_static_arguments_key_recipes_exactly():
    x = pt.asarray(np.array([-1.0, 2.0, -3.0]))
    a = pt.maximum(x, 0.0).numpy()
    b = pt.maximum(x, -0.0).numpy()
    assert np.signbit(a[0]) == np.signbit(np.maximum(np.array([-1.0]), 0.0)[0])
    assert np.array_equal(a, [0.0, 2.0, 0.0]) and np.array_equal(b, [0.0, 2.0, 0.0])
    assert np.array_equal(pt.sum(pt.ones((2, 3)), axis=0).numpy(), [2.0, 2.0, 2.0])
    assert np.array_equal(pt.sum(pt.ones((2, 3)), axis=1).numpy(), [3.0, 3.0])
    assert np.array_equal(pt.ones((2, 3))[1:].numpy(), np.ones((1, 3)))
    assert np.array_equal(pt.ones((2, 3))[:, 1:].numpy(), np.ones((2, 2)))
    assert np.array_equal(pt.arange(0.5, 3).numpy(), np.arange(0.5, 3))
    assert np.array_equal(pt.arange(1, 3).numpy(), np.arange(1, 3))


def test_value_dependent_calls_are_never_replayed():
    """A boolean mask's result shape depends on the mask's values: each call computes it anew."""
    for mask in ([True, False, True], [False, False, True], [True, True, True]):
        x = pt.asarray(np.arange(3.0))
        m = pt.asarray(np.array(mask))
        assert np.array_equal(x[m].numpy(), np.arange(3.0)[np.array(mask)])


def test_scalar_host_values_are_never_baked_in():
    """0-d values known on the host (elements read with integer indices) are not keyed: their values
    would otherwise be part of the replayed graph."""
    a = pt.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    for i in range(2):
        s = a[i, 0]
        got = pt.maximum(a, s).numpy()
        assert np.array_equal(got, np.maximum(a.numpy(), a.numpy()[i, 0]))


def test_long_replayed_chains_still_realize_at_the_depth_limit():
    from poot.trace.lazy import MAX_PENDING_DEPTH

    x = pt.asarray(np.zeros(4))
    xn = np.zeros(4)
    for _ in range(MAX_PENDING_DEPTH + 50):
        x = pt.roll(x + 1.0, 1)
        xn = np.roll(xn + 1.0, 1)
    assert x._node.depth <= MAX_PENDING_DEPTH + 2
    assert np.array_equal(x.numpy(), xn)


def test_errors_from_a_memoized_function_name_the_users_line():
    with pytest.raises(pt.ShapeError) as info:
        pt.concatenate([pt.ones((2, 3)), pt.ones((2, 4))])
    assert __file__ in str(info.value)
    with pytest.raises(pt.ShapeError):      # and again: failures are never kept as recipes
        pt.concatenate([pt.ones((2, 3)), pt.ones((2, 4))])


def test_tracing_records_its_own_graph():
    f = pt.jit(lambda x: pt.roll(x, 1)[1:] * 2.0)
    x = np.arange(5.0)
    pt.roll(pt.asarray(x), 1)[1:]               # a recipe of the eager call exists
    for _ in range(2):
        assert np.array_equal(f(pt.asarray(x)).numpy(), np.roll(x, 1)[1:] * 2.0)
    g = pt.grad(lambda x: (pt.roll(x, 1)[1:] ** 2).sum())
    want = np.append(2 * x[:4], 0.0)           # roll(x, 1)[1:] is x[:4]
    assert np.allclose(g(pt.asarray(x)).numpy(), want)


def test_outputs_that_are_tuples_or_lists_replay_whole():
    x = pt.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(3):
        parts = pt.split(x, 2, axis=1)
        assert isinstance(parts, (list, tuple)) and len(parts) == 2
        assert np.array_equal(parts[1].numpy(), np.arange(12.0).reshape(3, 4)[:, 2:])


def test_a_repeated_call_replays_its_recipe():
    """The second call of a kind makes its nodes from the recipe: same equations, shared params."""
    x = pt.asarray(np.arange(20.0).reshape(4, 5))
    first, second = x[1:-1, ::2], x[1:-1, ::2]
    a, b = first._node, second._node
    assert a is not b and a.op == b.op and a.aval == b.aval
    assert b.params is a.params or x[1:-1, ::2]._node.params is b.params
    assert np.array_equal(second.numpy(), np.arange(20.0).reshape(4, 5)[1:-1, ::2])


def test_pending_constants_are_keyed_by_value():
    """Promotion folds a pending constant into a converted constant: its value is part of the key."""
    a = pt.asarray(np.ones((1, 5)))
    b = pt.asarray(np.ones((1, 5)))
    x = a + pt.full((1, 5), 3, dtype=pt.int64)
    y = b + pt.full((1, 5), 1, dtype=pt.int64)
    assert np.array_equal(x.numpy(), np.full((1, 5), 4.0))
    assert np.array_equal(y.numpy(), np.full((1, 5), 2.0))


MASK = np.array([True, False, True])


@pytest.mark.parametrize("xp_call", [
    lambda xp, p, q: xp.concatenate([p, q]),
    lambda xp, p, q: xp.stack([p, q]),
    lambda xp, p, q: xp.where(xp.asarray(MASK), p, q),
], ids=["concatenate", "stack", "where"])
def test_a_call_with_one_array_twice_does_not_teach_later_calls(xp_call):
    """A first call passing one array twice must not leave a recipe that reads one argument for both."""
    a, b = np.arange(3.0), np.arange(3.0) + 10
    x = pt.asarray(a)
    np.testing.assert_array_equal(xp_call(pt, x, x).numpy(), xp_call(np, a, a))
    np.testing.assert_array_equal(xp_call(pt, pt.asarray(b), pt.asarray(a)).numpy(), xp_call(np, b, a))
    np.testing.assert_array_equal(xp_call(pt, x, x).numpy(), xp_call(np, a, a))
