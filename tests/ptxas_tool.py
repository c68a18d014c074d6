"""Where ptxas (NVIDIA's PTX assembler) is: on the PATH (a CUDA toolkit), or inside the pip package
nvidia-cuda-nvcc that the test extra installs on Linux x86-64 (nvidia/cu*/bin/ptxas), so CI assembles
every kernel's PTX without a GPU or a toolkit. None where neither is."""
from __future__ import annotations

import glob
import importlib.util
import os
import shutil


def find_ptxas() -> str | None:
    path = shutil.which("ptxas")
    if path:
        return path
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(glob.glob(os.path.join(root, "cu*", "bin", "ptxas")), reverse=True):
            if os.access(path, os.X_OK):
                return path
    return None


PTXAS = find_ptxas()
SKIP_REASON = ("ptxas is not installed: neither a CUDA toolkit on the PATH nor the nvidia-cuda-nvcc package "
               "(pip install -e '.[test]' brings it on Linux x86-64)")
