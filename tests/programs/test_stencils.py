"""Time loops over grids written with slices: a Jacobi / heat-equation stencil, and a channel flow
(momentum and pressure-Poisson updates of u, v, p with periodic x and walls in y)."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import check_program


# -- 7. Jacobi / heat stencil -----------------------------------------------------------------------
def heat_step(xp, u, alpha):
    new = u.copy()
    new[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                                - 4.0 * u[1:-1, 1:-1])
    new[-1, :] = 1.0  # a hot wall, fixed every step
    change = xp.abs(new - u).max()
    return new, change


def heat_run(xp, step, u):
    changes = []
    for _ in range(30):
        u, change = step(xp, u, 0.25)  # alpha = 1/4 is the Jacobi iteration for Laplace's equation
        changes.append(change)
    return u, xp.stack(changes)


def heat_inputs(dtype):
    n = 34
    y, x = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    u = np.exp(-((x - 0.5) ** 2 + (y - 0.4) ** 2) * 30.0)
    u[0, :] = 0.0
    return (u.astype(dtype),)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_heat_stencil(device, dtype):
    # each step averages neighbours (a contraction): the error stays a few roundings per step
    check_program(device, heat_run, heat_step, heat_inputs(dtype), ops=128, whole=True)


# -- channel flow (Navier-Stokes, finite differences) -----------------------------------------------
NX, NY, NIT = 24, 16, 12
DX, DY, DT = 2.0 / (NX - 1), 2.0 / (NY - 1), 0.002
RHO, NU, FORCE = 1.0, 0.1, 1.0


def ddx(xp, f):  # central difference, periodic in x
    return (xp.roll(f, -1, axis=1) - xp.roll(f, 1, axis=1)) / (2 * DX)


def ddy(xp, f):  # central difference inside, zero on the walls
    g = xp.zeros_like(f)
    g[1:-1] = (f[2:] - f[:-2]) / (2 * DY)
    return g


def laplacian(xp, f):
    lap = xp.zeros_like(f)
    lap[1:-1] = ((xp.roll(f, -1, axis=1) - 2 * f + xp.roll(f, 1, axis=1))[1:-1] / DX**2
                 + (f[2:] - 2 * f[1:-1] + f[:-2]) / DY**2)
    return lap


def channel_step(xp, u, v, p):
    b = RHO * ((ddx(xp, u) + ddy(xp, v)) / DT - ddx(xp, u) ** 2 - 2 * ddy(xp, u) * ddx(xp, v)
               - ddy(xp, v) ** 2)
    p = p.copy()  # updated in place below; the caller's p stays as it was
    for _ in range(NIT):  # Jacobi sweeps of the pressure Poisson equation
        pn = p.copy()
        p[1:-1] = (((xp.roll(pn, -1, axis=1) + xp.roll(pn, 1, axis=1))[1:-1] * DY**2
                    + (pn[2:] + pn[:-2]) * DX**2 - b[1:-1] * DX**2 * DY**2) / (2 * (DX**2 + DY**2)))
        p[0, :] = p[1, :]  # dp/dy = 0 on the walls
        p[-1, :] = p[-2, :]
    # upwind (backward) advection, pressure gradient, viscosity, a driving force along x
    bx = lambda f: (f - xp.roll(f, 1, axis=1)) / DX  # noqa: E731
    by = lambda f: xp.concatenate([xp.zeros_like(f[:1]), (f[1:] - f[:-1]) / DY])  # noqa: E731
    un = u - DT * (u * bx(u) + v * by(u)) - DT / RHO * ddx(xp, p) + NU * DT * laplacian(xp, u) + DT * FORCE
    vn = v - DT * (u * bx(v) + v * by(v)) - DT / RHO * ddy(xp, p) + NU * DT * laplacian(xp, v)
    for f in (un, vn):  # no-slip walls
        f[0, :] = 0.0
        f[-1, :] = 0.0
    return un, vn, p


def channel_run(xp, step, u, v, p):
    for _ in range(15):
        u, v, p = step(xp, u, v, p)
    return u, v, p, (u * u + v * v).sum() / 2


def channel_inputs():
    r = np.random.default_rng(7)
    return (0.01 * r.normal(size=(NY, NX)), 0.01 * r.normal(size=(NY, NX)), np.zeros((NY, NX)))


def test_channel_flow(device):
    check_program(device, channel_run, channel_step, channel_inputs(), ops=4096)
