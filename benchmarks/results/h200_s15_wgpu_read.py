"""Session 15 probe (H200): in bench_wgpu_*.py every kernel timed after the first large read-back ran up
to 4x slower than the same kernel in h200_s15_spirv_probe.py (which reads nothing back). GPU ms (median of
21, timestamps) of the hand copy and mixed kernels before and after dev.read of a 256 MB buffer, and after
each step that might undo it."""
import time

import numpy as np

from poot import devices

from bench_wgpu_common import copy_kernel, gpu_ms, prepared, upload
from bench_wgpu_elementwise import chain_kernel

N = 64 << 20
dev = devices.get("wgpu")
rng = np.random.default_rng(0)
ins = [upload(dev, rng.random(N, dtype=np.float32)) for _ in range(3)]
out1 = dev.allocate(4 * N)
x2, o2 = upload(dev, np.ones(N, np.float32)), dev.allocate(4 * N)
groups = -(-N // 256)
mixed = prepared(dev, chain_kernel("mixed", False), ins + [out1], groups, [N] * 4)
copy = prepared(dev, copy_kernel(), [x2, o2], groups, [N, N])


def show(label):
    m = float(np.median(gpu_ms(dev, *mixed, groups)))
    c = float(np.median(gpu_ms(dev, *copy, groups)))
    print(f"{label:<48} mixed {m:.3f} ms  copy {c:.3f} ms  ({8 * N / c / 1e6:.0f} GB/s)", flush=True)


show("before any read")
show("again")
small = upload(dev, np.arange(1024, dtype=np.float32))
dev.read(small)
show("after reading 4 KiB")
dev.read(out1)
show("after reading 256 MB")
show("again")
time.sleep(1.0)
show("after 1 s idle")
import gc  # noqa: E402
gc.collect()
dev.synchronize()
show("after gc + synchronize")
x3, o3 = upload(dev, np.ones(N, np.float32)), dev.allocate(4 * N)
copy = prepared(dev, copy_kernel(), [x3, o3], groups, [N, N])
show("copy on new buffers")
