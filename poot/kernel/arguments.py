"""A launch's arguments as device buffers and scalars (`KernelFunction.launch`, docs/kernels.md Launching).

poot Arrays are values (docs/array-api.md): a launch gives each array bound to a writable parameter a
new value, as `x += 1` does. The kernel writes the array's own memory where nothing else can see it,
else a copy the array then holds (`__poot_write_buffer__`), so values computed from the array before
the launch, other arrays sharing its memory and NumPy views of it keep the old value. NumPy arrays are
copied in and the writable ones copied back, except on a device that uses host memory in place (the CPU).

Arguments that share memory are copied apart, the same way for both kinds: a parameter never sees
another one's writes during the launch, and of two writable ones the later parameter's result wins.
"""
from __future__ import annotations

import numpy as np

from poot.errors import DTypeError, PootError
from poot.jit.kir.model import BufferParam
from poot.kernel.emulate import buffer_view, scalar_value


class LaunchArguments:
    """The buffers and scalars of one launch of kernel `name` on `device`, built param by param (`add`);
    `finish()` after the launch copies NumPy results back."""

    def __init__(self, name: str, device):
        self.name, self.device = name, device
        self.wrap = getattr(device, "wrap", None)     # a device that can use host memory in place (the CPU)
        self.buffers, self.scalars = [], []
        self.written: list = []                        # buffers bound to writable parameters
        self.copy_back: list = []                      # (NumPy view, buffer) of written NumPy arguments
        self.host_views: list = []

    def add(self, p, a) -> None:
        if not isinstance(p, BufferParam):
            self.scalars.append(scalar_value(p, a, self.name))
        elif hasattr(a, "__poot_buffer__"):
            self.buffers.append(self.array_buffer(p, a))
        else:
            self.buffers.append(self.host_buffer(p, a))

    def array_buffer(self, p: BufferParam, a):
        """The buffer of poot Array `a` for `p`: a writable parameter rebinds `a` (module doc)."""
        if a.aval.dtype is not p.dtype:
            raise DTypeError(f"kernel '{self.name}': buffer '{p.name}' is {p.dtype.name}, the array is "
                             f"{a.aval.dtype.name}")
        if a.__poot_buffer__().device is not self.device:
            raise PootError(f"kernel '{self.name}': array for '{p.name}' lives on {a.__poot_buffer__().device.name}, "
                            f"the context on {self.device.name}; move it with .to_device(...)")
        if p.access.writable:
            bound = any(b is a.__poot_buffer__() for b in self.buffers)
            buf = a.__poot_write_buffer__(private=bound)
            self.written.append(buf)
            return buf
        if any(b is a.__poot_buffer__() for b in self.written):    # the value from before the launch
            return self.device.duplicate(a.__poot_buffer__())          # (a copy queued before it)
        return a.__poot_buffer__()

    def host_buffer(self, p: BufferParam, a):
        """The buffer of NumPy array `a` for `p`: its memory where the device can use it and no other
        argument shares it, else a copy (copied back after the launch when `p` is written)."""
        from poot.jit.runtime.execute import numpy_to_buffer

        view = buffer_view(p, a, self.name)
        if self.wrap is not None and not any(np.shares_memory(view, o) for o in self.host_views):
            buf = self.wrap(view)                      # host memory the device can use as is: no copies
        else:
            buf = numpy_to_buffer(view.view(np.uint8), self.device)     # bytes: any dtype, bf16 too
            if p.access.writable:
                self.copy_back.append((view, buf))
        self.host_views.append(view)
        return buf

    def finish(self) -> None:
        """After the launch: a call with NumPy arguments is synchronous (its traps raise now), and the
        written NumPy arguments that were copied in get their results."""
        if self.host_views:
            from poot.jit.runtime.launch import synchronize

            synchronize(self.device)
        for view, buf in self.copy_back:
            raw = self.device.read(buf)
            view[...] = np.frombuffer(raw[: view.nbytes].tobytes(), dtype=view.dtype)
