"""Loops whose body scatters into its carry (dynamic_update_slice of a buffer, scan stacking its outputs,
a differentiated loop's residuals) update the carry in place from the second iteration on: the body
gets the carry the loop made in the last iteration as a donated input (poot/jit/runtime/control.py).
Without it, every iteration copied the whole carry and a loop of n steps cost n squared."""
import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("kind", ["fori", "while"])
def test_loop_writing_rows_allocates_no_carry_per_iteration(device, monkeypatch, allocation_spy, kind):
    n, width = 40, 1024

    def body(i, b):
        return pt.dynamic_update_slice(b, pt.ones((1, width)) * i, (i, 0))

    if kind == "fori":
        f = pt.jit(lambda b: pt.fori_loop(0, n, body, b))
    else:
        f = pt.jit(lambda b: pt.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, body(c[0], c[1])),
                                           (pt.asarray(0), b))[1])
    b = pt.zeros((n, width))
    pt.realize(f(b))                                        # compiles
    sizes = allocation_spy(pt.devices.get(device))
    out = f(b).numpy()
    monkeypatch.undo()
    carry_sized = [s for s in sizes if s >= n * width * 4]
    assert len(carry_sized) <= 4, sizes                     # not one per iteration (40)
    np.testing.assert_array_equal(out, np.repeat(np.arange(n, dtype=np.float32)[:, None], width, 1))
    np.testing.assert_array_equal(b.numpy(), 0)             # the argument is not written through


def test_scan_stacking_and_grad_of_a_loop_stay_right(device):
    rng = np.random.default_rng(0)
    xs = rng.random((50, 64)).astype(np.float32)

    def step(c, x):
        return c + x, c * x

    c, ys = pt.jit(lambda xs: pt.scan(step, pt.zeros(64), xs))(pt.asarray(xs))
    want_c, want_ys = np.zeros(64, np.float32), []
    for x in xs:
        want_ys.append(want_c * x)
        want_c = want_c + x
    np.testing.assert_allclose(ys.numpy(), np.stack(want_ys), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), want_c, rtol=1e-6)

    w = rng.standard_normal(8).astype(np.float32)

    def loss(w):
        return pt.sum(pt.fori_loop(0, 30, lambda i, h: pt.sin(h) * 0.9 + w * 0.1, w))

    h, grad = w.astype(np.float64), np.eye(8)               # forward-mode reference: dh/dw
    for _ in range(30):
        grad = np.cos(h)[:, None] * grad * 0.9 + np.eye(8) * 0.1
        h = np.sin(h) * 0.9 + w * 0.1
    np.testing.assert_allclose(pt.jit(pt.grad(loss))(pt.asarray(w)).numpy(), grad.sum(0), rtol=2e-4, atol=1e-5)


def test_a_carry_passed_through_or_twice_is_not_donated(device):
    """A carry the body passes through unchanged is the caller's buffer, and one buffer at two carry
    positions must not be given up twice: both stay as they were."""
    b = pt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))

    def body(i, c):
        keep, upd, same = c
        upd = pt.dynamic_update_slice(upd, pt.full((1, 4), 9.0), (i, 0))
        return keep, upd, upd

    keep, upd, same = pt.jit(lambda b: pt.fori_loop(0, 3, body, (b, b, b)))(b)
    np.testing.assert_array_equal(keep.numpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(upd.numpy(), np.full((3, 4), 9.0))
    np.testing.assert_array_equal(same.numpy(), np.full((3, 4), 9.0))
    np.testing.assert_array_equal(b.numpy(), np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("donating", [False, True])
def test_loop_trips_replay_the_body_instead_of_walking_it(device, monkeypatch, donating):
    """From the third trip on, a body (and one donating its carry: a scan stacking its outputs)
    replays its recording, as a cached eager realize does, so a trip costs one native call on the CPU
    rather than a walk of the body's steps; the results stay those of the walk."""
    from poot.jit.runtime.program import Program

    n = 30
    xs = np.linspace(0.0, 1.0, n * 16, dtype=np.float32).reshape(n, 16)

    def step(c, x):
        c = 0.5 * c + pt.tanh(x)
        return c, c * 2.0

    if donating:
        f = pt.jit(lambda xs: pt.scan(step, pt.zeros(16), xs))
    else:
        f = pt.jit(lambda xs: (pt.fori_loop(0, n, lambda i, c: step(c, xs[i])[0], pt.zeros(16)), None))
    x = pt.asarray(xs)
    pt.realize(f(x)[0])                                     # compiles
    walks = []
    run = Program.run
    monkeypatch.setattr(Program, "run", lambda self, *a, **k: walks.append(1) or run(self, *a, **k))
    c, ys = f(x)
    got_c, got_ys = c.numpy(), ys.numpy() if donating else None
    monkeypatch.undo()
    dev = pt.devices.get(device)
    if dev.caps.target == "cpu" or dev.replays_one_launch or donating:
        assert len(walks) <= 4, len(walks)                  # not one per trip (30)
    # (CUDA launches a one-kernel body directly: a graph launch would cost more than the kernel's)
    want_c, want_ys = np.zeros(16, np.float32), []
    for row in xs:
        want_c = 0.5 * want_c + np.tanh(row)
        want_ys.append(want_c * 2.0)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-5, atol=1e-6)
    if donating:
        np.testing.assert_allclose(got_ys, np.stack(want_ys), rtol=1e-5, atol=1e-6)
