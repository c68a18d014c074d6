"""Session 15 probe (H200): the CUDA split sum of 256M float32 under gpu_split.MAX_PIECES_GPU = 4096, 2048,
1024, 512 (device ms of one call, bench_cuda_common.time_poot), against the copy bandwidth."""
import numpy as np

import poot as pt
import poot.jit.execute as ex
from poot.jit.kernelgen import gpu_split
from bench_cuda_common import copy_bandwidth, need_cuda, time_poot

dev = need_cuda()
bw = copy_bandwidth(dev)
x = np.random.default_rng(0).random(256 << 20, dtype=np.float32)
committed = gpu_split.MAX_PIECES_GPU
with pt.device("cuda"):
    px = pt.realize(pt.array(x))
    for pieces in (4096, 2048, 1024, 512, 256):
        gpu_split.MAX_PIECES_GPU = pieces
        ex._PROGRAMS.clear()
        call = lambda: pt.realize(px.sum())  # noqa: E731
        got = float(call().numpy())
        d, _ = time_poot(dev, call)
        print(f"cuda sum 256M, {pieces} pieces{' (committed)' if pieces == committed else ''}: {min(d) * 1e3:.1f} us "
              f"= {100 * x.nbytes / (min(d) * 1e-3) / bw:.1f}% of copy; relative error "
              f"{abs(got - x.astype(np.float64).sum()) / x.size:.2e}", flush=True)
gpu_split.MAX_PIECES_GPU = committed
