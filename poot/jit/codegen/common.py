"""What kernel generation hands to the program builder, and the pieces every schedule shares."""
from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field

from poot import dtypes as dt
from poot.errors import ConfigError
from poot.fuse.indexing import Coord, Form
from poot.fuse.plan import Step
from poot.jit.kir.builder import KernelBuilder, cast
from poot.jit.kir.model import Access, Index, Kernel
from poot.jit.codegen.values import ValueGen, index_dtype_for
from poot.jit.llvm.targets import KernelStyle, target_of


def env_choice(name: str, options: tuple) -> str:
    """The choice environment variable `name` makes among `options` (`options[0]` when unset or
    empty; case and surrounding spaces ignored); any other value is a ConfigError naming the options."""
    mode = os.environ.get(name, options[0]).strip().lower() or options[0]
    if mode not in options:
        raise ConfigError(f"{name} is '{mode}'; use {', '.join(options[:-1])} or {options[-1]}")
    return mode

CPU_BLOCK = 16384          # elements one CPU work unit handles in a pointwise kernel
GPU_WORKGROUP = 256


@dataclass
class Launch:
    kernel: Kernel
    bindings: list[tuple[str, object]]   # per buffer param: ("var", Var) or ("temp", k)
    groups: tuple[int, int, int]
    scalars: tuple = ()                   # the scalar params' values, in param order (imported kernels)
    # (source, destination) binding positions of a launch that only copies one buffer into another: a
    # program skips it where both are one buffer (a scatter into a donated input, in place)
    copy: tuple[int, int] | None = None


@dataclass
class StepCode:
    launches: list[Launch] = field(default_factory=list)
    temps: list[int] = field(default_factory=list)      # bytes of each temporary buffer


@functools.lru_cache(maxsize=None)
def asset(name: str) -> Kernel:
    """The verified KIR of the committed kernel asset `name` (assets/<name>.kir.json), loaded once: the
    hand-written kernels a schedule launches."""
    from poot.jit.kir.assets import load_asset

    return load_asset(name)


@functools.lru_cache(maxsize=None)
def asset_builds_for(name: str, target: str, arch: str | None = None) -> bool:
    """Whether the committed kernel asset `name` compiles for `target` (on `arch`, where its manifest row
    names GPUs): a schedule asks before it picks a kernel that exists for some targets only."""
    from poot.jit.kir.assets import load_manifest

    return any(e.name == name and e.builds_for(target, arch) for e in load_manifest())


def style_of(caps) -> KernelStyle:
    """The shape of the kernels to build for a device with capabilities `caps` (its target's)."""
    return target_of(caps).style


class KernelContext:
    """A KernelBuilder with the step's buffers declared and a ValueGen over them."""

    def __init__(self, step: Step, plan, style: KernelStyle, name: str | None = None,
                 extra_sizes=(), workgroup=None, out_access=Access.WRITE, with_outputs=True):
        self.step, self.plan, self.style = step, plan, style
        wg = workgroup or ((1, 1, 1) if style is KernelStyle.CPU else (GPU_WORKGROUP, 1, 1))
        self.kb = KernelBuilder(name or step.name, workgroup=wg, checks=False)
        self.bindings: list[tuple[str, object]] = []
        buffers: dict[int, str] = {}
        for k, v in enumerate(step.inputs):
            buffers[v.id] = self.kb.buffer(f"in{k}", v.aval.dtype, Access.READ)
            self.bindings.append(("var", v))
        self.out_names = []
        for k, v in enumerate(step.outputs if with_outputs else ()):
            self.out_names.append(self.kb.buffer(f"out{k}", v.aval.dtype, out_access))
            self.bindings.append(("var", v))
        sizes = [v.aval.size for v in step.inputs + step.outputs] + [math.prod(step.shape)] + list(extra_sizes)
        self.idt = index_dtype_for(sizes, style)
        self.gen = ValueGen(self.kb, plan.producer, buffers, self.idt)

    def coord(self, name: str, size: int, expr) -> Form:
        """Bind a loop coordinate and return its symbolic form."""
        self.gen.coords[name] = expr
        return Form.of(Coord(name, size))

    def thread(self):
        return self.kb.let("tid", cast(Index("thread", 0), self.idt))

    def temp_buffer(self, name: str, dtype, k: int, access=Access.READ_WRITE) -> str:
        """Declare temporary buffer number `k` of the step (allocated by the program)."""
        self.bindings.append(("temp", k))
        return self.kb.buffer(name, dtype, access)

    def build(self) -> Kernel:
        return self.kb.build()


def groups_for(n: int) -> tuple[int, int, int]:
    return (max(int(n), 0), 1, 1)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def acc_dtype(dtype):
    """Reductions of 16-bit floats accumulate in float32."""
    return dt.float32 if dtype in (dt.float16, dt.bfloat16) else dtype
