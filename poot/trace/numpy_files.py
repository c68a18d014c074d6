"""NumPy's `.npy`/`.npz` files: save, savez, savez_compressed and load. Writing realizes the arrays
(a file holds values); loading gives lazy-ready poot arrays on the chosen device.
"""
from __future__ import annotations

import numpy as np

from poot import dtypes as dt
from poot.errors import DTypeError, exporter
from poot.trace.array import Array
from poot.trace.numpy_stats import _leaf

__all__: list[str] = []
_export = exporter(globals(), __all__)


# --- files ---------------------------------------------------------------------------------------
def _host_for_file(x, op: str) -> np.ndarray:
    """x as the NumPy array a .npy/.npz file stores. bfloat16 has no .npy type code (it would be
    written as raw 2-byte voids that no loader reads back as numbers), so it is refused."""
    a = np.asarray(x.numpy() if isinstance(x, Array) else x)
    if a.dtype == dt.bfloat16.np:
        raise DTypeError(f"{op}: .npy files have no bfloat16 type; store x.astype(pt.float32) "
                         f"(exact) and convert back after loading")
    return a


def _save(file, arr_, allow_pickle=True, fix_imports=True):
    np.save(file, _host_for_file(arr_, "save"), allow_pickle=False)


def _savez_with(writer, op: str):
    def savez(file, *args, **kwds):
        arrays = [_host_for_file(a, op) for a in args]
        named = {k: _host_for_file(v, op) for k, v in kwds.items()}
        writer(file, *arrays, allow_pickle=False, **named)

    savez.__name__ = savez.__qualname__ = op
    return savez


def _load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
          device=None):
    from poot.trace.creation import _device

    if allow_pickle:
        raise DTypeError("load: allow_pickle=True is not supported (poot holds no object arrays)")
    got = np.load(file, mmap_mode=None, allow_pickle=False)
    if isinstance(got, np.ndarray):
        return _leaf(np.array(got), _device(device))
    with got:
        return {k: _leaf(np.array(got[k]), _device(device)) for k in got.files}


_export("save", _save, "Write an array to a NumPy .npy file (realizes it).")
_export("savez", _savez_with(np.savez, "savez"),
        "Write several arrays to an uncompressed .npz file (positional ones as arr_0, arr_1, ...).")
_export("savez_compressed", _savez_with(np.savez_compressed, "savez_compressed"),
        "Write several arrays to a compressed .npz file.")
_export("load", _load, "Read a .npy file into a poot array (a .npz file into a dict of arrays).")
