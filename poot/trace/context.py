"""Devices as the tracer sees them: canonical names, the thread-local current device and `pt.device`.

A device is named by a string: "cpu", "cuda:0", "wgpu", ... and the pseudo-device "oracle", which
realizes graphs through the NumPy oracle (the reference semantics, for debugging) and keeps its bytes
in CPU buffers. The default device comes from the environment variable POOT_DEVICE ("cpu" if unset);
`with pt.device("oracle"): ...` changes it for the current thread.
"""
from __future__ import annotations

import threading

from poot import devices
from poot.errors import DeviceUnavailableError
from poot import env

ORACLE = "oracle"
_SINGLE = ("cpu", "wgpu", "vulkan")  # kinds with one device per machine: no ":n" suffix
_local = threading.local()


def canonical(name) -> str:
    """'CUDA' -> 'cuda:0', 'cpu' -> 'cpu', a Device -> its name, pt.device(...) -> its name."""
    if isinstance(name, device):
        return name.name
    if isinstance(name, devices.Device):
        return name.name
    s = str(name).strip().lower()
    if s == ORACLE:
        return ORACLE
    kind, idx = devices.parse_name(s)
    return kind if kind in _SINGLE else f"{kind}:{idx}"


def backend(name: str) -> devices.Device:
    """The Device that holds the buffers of arrays on `name` (the CPU for the oracle)."""
    return devices.get("cpu" if name == ORACLE else name)


def executor(name: str):
    """What `poot.jit.runtime.execute.execute` takes for `name`: the string "oracle" or a Device."""
    return ORACLE if name == ORACLE else devices.get(name)


def _default_from_env(value) -> str:
    return canonical((value or "").strip() or "cpu")   # unset or empty: the default device


# the variable is read on every jitted call and every recording without a device: a cheap read
default = env.reader("POOT_DEVICE", _default_from_env)
default.__doc__ = """The default device: env POOT_DEVICE, else "cpu"."""


def current() -> str:
    """The device new arrays go to on this thread. Read through the thread-local's own dict: getattr
    with a default raises and catches inside on a thread where no `pt.device` block ever ran, which
    cost more than the rest of a cached jitted call's argument check."""
    stack = _local.__dict__.get("stack")
    return stack[-1] if stack else default()


class device:  # noqa: N801 (lower case: it is used like a function, `with pt.device("cpu"):`)
    """`pt.device(name)`: a device handle and a context manager that makes it the current device of
    this thread. Raises DeviceUnavailableError (saying why) for a device that cannot be used here."""

    __slots__ = ("name",)

    def __init__(self, name="cpu"):
        self.name = canonical(name)
        backend(self.name)  # fail now, at the user's line, if the device cannot be used

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self.name)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False

    def __eq__(self, other):
        try:
            return self.name == canonical(other)
        except DeviceUnavailableError:
            return False

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"poot.device('{self.name}')"
