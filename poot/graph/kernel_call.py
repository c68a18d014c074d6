"""The "kernel_call" primitive: a `@pt.kernel` run as a pure function of its operands.

Why a primitive: a kernel launched with `kernel(ctx, *arrays)` writes its Out buffers in place, on
realized arrays, outside the lazy graph, so it cannot be traced (@pt.jit), differentiated or batched.
`pt.kernel_call` (poot/trace/kernel_call.py) records it instead as one equation whose results are
fresh arrays: the Out buffers (zero-filled before the launch) and copies of the InOut buffers. It is
a host op (poot/graph/host.py): the program runs it as an opaque step on host memory, the kernel
compiled for the CPU (in place on the CPU device; elsewhere the operands are copied to the host and
the results back, as for every host step).

The graph layer knows nothing of kernels: the equation's one parameter, `launch`, is an object of the
trace layer (KernelLaunch) that says which results the call makes (`result_avals(operand avals)`)
and computes them (`run(arrays)`); it is hashable and compared by value, so equal calls share
programs and CSE. An equation per result, told apart by `index`, as for every multi-result op.
"""
from __future__ import annotations

from poot.graph.host import _host


def _results(avals, launch):
    return launch.result_avals(list(avals))


def _compute(xs, launch):
    return launch.run(list(xs))


_host("kernel_call", _results, _compute, arity=None, params=("launch",))
