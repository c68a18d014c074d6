"""CPU reductions that fold several memory streams at once (kernelgen/streams.py): the row-block, split
and column schedules against NumPy at shapes whose counts are not multiples of STREAMS (the tails),
for sums, products, extremes with NaNs, means and variances, integer and float dtypes; and the
launch geometry that says which schedule ran."""
import math

import numpy as np
import pytest

import poot as pt
from poot import devices, dtypes as dt
from poot.fuse.plan import plan_fusion
from poot.jit.codegen import generate
from poot.jit.codegen.streams import STREAMS
from tolerance import assert_close

from fuse.graphs import G

CPU = devices.get("cpu").caps
RNG = np.random.default_rng(11)

# (shape, axis): rows of 333 in blocks of STREAMS with one row left over; a split of 3 rows of
# 200,003 (pieces cut into STREAMS parts plus a tail); columns of 1,003 reduced positions; a
# non-contiguous reduced axis set of a 3-d array
SHAPES = [((1001, 333), 1), ((3, 200_003), 1), ((1003, 37), 0), ((6, 5, 7001), (0, 2))]


def _data(shape, dtype):
    if dtype.kind == "f":
        return RNG.standard_normal(shape).astype(dtype.np)
    return RNG.integers(-50, 50, shape).astype(dtype.np)


@pytest.mark.parametrize("shape,axis", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["sum", "max", "min", "mean", "var", "prod", "argmax"])
@pytest.mark.parametrize("dtype", [dt.float32, dt.float64, dt.int32], ids=lambda d: d.name)
def test_stream_schedules_match_numpy(shape, axis, op, dtype):
    if op == "argmax" and isinstance(axis, tuple):
        pytest.skip("argmax takes one axis")
    a = _data(shape, dtype)
    if op == "prod":
        a = (np.sign(a) + (a == 0)).astype(dtype.np)       # +-1: a product of thousands stays finite
    r = getattr(pt, op)(pt.asarray(a), axis=axis).numpy()
    e = getattr(np, op)(a.astype(np.float64) if dtype.kind == "f" else a, axis=axis)
    n = math.prod(a.shape) // max(1, math.prod(np.shape(e)))
    assert_close(r, e.astype(r.dtype), dt.as_dtype(r.dtype), n if op in ("sum", "mean", "var") else 1,
                 f"{op} {shape} axis={axis}")


@pytest.mark.parametrize("shape,axis", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_nan_in_any_stream_wins(shape, axis, op):
    a = _data(shape, dt.float32)
    flat = a.reshape(-1)
    flat[RNG.choice(flat.size, 7, replace=False)] = np.nan
    flat[-1] = np.nan                                     # in the last tail position
    r = getattr(pt, op)(pt.asarray(a), axis=axis).numpy()
    assert_close(r, getattr(np, op)(a, axis=axis), dt.float32, 1)


def _launches(shape, axes):
    g = G()
    x = g.input(shape)
    plan = plan_fusion(g.graph(g.op("reduce_max", x, axes=axes)))
    (step,) = plan.kernel_steps
    return generate(step, plan, CPU).launches


def test_row_blocks_take_streams_rows_per_workgroup():
    (launch,) = _launches((1001, 333), (1,))
    assert launch.groups[0] == math.ceil(1001 / STREAMS)


def test_rows_fewer_than_streams_keep_one_row_per_workgroup():
    (launch,) = _launches((3, 333), (1,))
    assert launch.groups[0] == 3
