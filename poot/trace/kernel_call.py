"""`pt.kernel_call`: a `@pt.kernel` called as a function of arrays, recorded in the lazy graph.

    y = pt.kernel_call(softplus, x, x.shape)          # softplus(x: In[f32], y: Out[f32])

The arguments follow the kernel's parameters in order: an `In` buffer takes an array (any shape: the
kernel sees it flat), an `Out` buffer takes the shape of the result it makes (the dtype is the
annotation's; the buffer starts zero-filled), an `InOut` buffer an array whose updated copy is a
result, a scalar parameter a Python number (static: part of the trace). The results are the Out and
InOut buffers, in parameter order (one array, or a tuple of them).

Why not the in-place launch (`kernel(ctx, *arrays)`): it writes realized buffers outside the graph,
so @pt.jit cannot trace it and the transformations cannot see it. Recorded as the "kernel_call"
primitive (poot/graph/kernel_call.py), the call is lazy, runs inside jitted programs, batches under
pt.vmap (one call per example), and is differentiated through the rules the user pairs it with
(`pt.custom_vjp`, whose fwd and bwd call their kernels this way): a kernel has no derivative of its
own. The program runs it as a host step: the kernel compiled for the CPU on host memory.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from poot.errors import DTypeError, PootError, ShapeError, TracerError, api_boundary
from poot.graph import Aval
from poot.graph import kernel_call as _declare  # noqa: F401  (declares the primitive)
from poot.jit.kir.model import Access, BufferParam
from poot.kernel.api import Context, KernelFunction, normalize_grid
from poot.kernel.emulate import scalar_value
from poot.trace import context as _dev
from poot.trace import lazy
from poot.trace.array import Array

__all__ = ["kernel_call"]


class KernelLaunch:
    """The static part of one call: the kernel, its grid, and per parameter what it takes: an
    operand (`("in", k)` / `("inout", k)`, operand k), a fresh result (`("out", Aval)`) or a scalar
    (`("scalar", value)`). Hashable and compared by value (the kernel by identity)."""

    __slots__ = ("kernel", "layout", "threads", "workgroup", "_key")

    def __init__(self, kernel: KernelFunction, layout: tuple, threads, workgroup):
        self.kernel, self.layout, self.threads, self.workgroup = kernel, layout, threads, workgroup
        self._key = (id(kernel), layout, threads, workgroup)

    @property
    def name(self) -> str:
        return self.kernel.name

    def __eq__(self, other) -> bool:
        return isinstance(other, KernelLaunch) and self._key == other._key and self.kernel is other.kernel

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"<kernel {self.name}#{id(self.kernel):x} {self.layout} threads={self.threads}>"

    def result_avals(self, operands: list[Aval]) -> list[Aval]:
        outs = []
        for kind, what in self.layout:
            if kind == "out":
                outs.append(what)
            elif kind == "inout":
                outs.append(operands[what])
        return outs

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """The kernel launched on the CPU over host copies: the Out and InOut buffers after it."""
        args, results = [], []
        for kind, what in self.layout:
            if kind == "in":
                args.append(np.ascontiguousarray(arrays[what]))
            elif kind == "scalar":
                args.append(what)
            else:
                buf = (np.zeros(what.shape, what.dtype.np) if kind == "out"
                       else np.array(arrays[what], order="C", copy=True))
                args.append(buf)
                results.append(buf)
        self.kernel.launch(Context("cpu"), *args, threads=self.threads, workgroup=self.workgroup)
        return results


def _shape(value, kernel: str, param: str) -> tuple[int, ...]:
    try:
        shape = (operator.index(value),) if not isinstance(value, (tuple, list)) else \
            tuple(operator.index(d) for d in value)
    except TypeError:
        raise ShapeError(f"kernel_call('{kernel}'): '{param}' is an Out buffer; pass the shape of the "
                         f"result it makes (an int or a tuple of ints), got {type(value).__name__}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"kernel_call('{kernel}'): the shape {shape} for '{param}' has a negative size")
    return shape


def _operand(value, p: BufferParam, kernel: str, device: str) -> lazy.Node:
    if not isinstance(value, Array):
        from poot.trace.creation import asarray

        value = asarray(value, dtype=p.dtype, device=device)
    if value.dtype is not p.dtype:
        raise DTypeError(f"kernel_call('{kernel}'): buffer '{p.name}' is {p.dtype.name}, the array is "
                         f"{value.dtype.name}; convert it with .astype(pt.{p.dtype.name})")
    return value._node


@api_boundary
def kernel_call(kernel, *args, threads=None, workgroup=None):
    """Call `@pt.kernel` `kernel` as a function of arrays, recorded lazily: the results are its
    Out buffers (pass each one's shape in its place) and updated copies of its InOut buffers (see
    the module docstring). `threads` and `workgroup` are the launch grid (default: one thread per
    element of the first Out or InOut buffer)."""
    if not isinstance(kernel, KernelFunction):
        raise PootError(f"kernel_call needs a @pt.kernel function first; got {type(kernel).__name__}")
    name = kernel.name
    wg = kernel.workgroup if workgroup is None else normalize_grid(workgroup, "workgroup")
    params = kernel.kernel_for(wg).params
    if len(args) != len(params):
        raise PootError(f"kernel_call('{name}'): the kernel takes {len(params)} arguments "
                        f"({', '.join(p.name for p in params)}), got {len(args)}")
    device = next((a.device for a in args if isinstance(a, Array)), _dev.current())
    layout, operands, first_written = [], [], None
    for p, a in zip(params, args):
        if not isinstance(p, BufferParam):
            if isinstance(a, Array) and lazy.is_tracing():
                raise TracerError(
                    f"kernel '{name}': scalar parameter '{p.name}' ({p.dtype.name}) got a traced array: inside "
                    "@pt.jit every argument not marked static is traced, Python numbers too, so its value is "
                    "unknown while the call is recorded. Mark that argument static (pt.jit(fn, "
                    "static_argnums=...) or static_argnames=...), or pass the value in a 1-element array to an "
                    "In buffer parameter of the kernel")
            scalar_value(p, a, name)           # checks that the value fits the parameter's dtype
            layout.append(("scalar", a.item() if isinstance(a, np.generic) else a))
            continue
        if p.access is Access.READ:
            layout.append(("in", len(operands)))
            operands.append(_operand(a, p, name, device))
            continue
        if p.access is Access.READ_WRITE:
            layout.append(("inout", len(operands)))
            operands.append(_operand(a, p, name, device))
            size = math.prod(operands[-1].aval.shape)
        else:
            aval = Aval(_shape(a, name, p.name), p.dtype)
            layout.append(("out", aval))
            size = math.prod(aval.shape)
        first_written = size if first_written is None else first_written
    if first_written is None:
        raise PootError(f"kernel_call('{name}'): the kernel has no Out or InOut buffer, so the call "
                        f"has no result")
    grid = normalize_grid(threads, "threads") if threads is not None else (first_written, 1, 1)
    launch = KernelLaunch(kernel, tuple(layout), grid, wg)
    count = len(launch.result_avals([n.aval for n in operands]))
    outs = [Array(lazy.record("kernel_call", tuple(operands), {"launch": launch, "index": i}, device))
            for i in range(count)]
    return outs[0] if count == 1 else tuple(outs)
