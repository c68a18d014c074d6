"""Session 15 probe (H200): where the host time of one small CUDA launch goes. For a bf16 4096^2 GEMV:
wall time per realize, a cProfile of realizes, and the host microseconds of the launch's parts --
the meta buffer (allocate + write), dev.dispatch, raw cuLaunchKernel with cuda-python's (args, types)
packing and with a prebuilt void** array -- and the GPU gap of one launch after an event."""
import cProfile
import ctypes
import pstats
import time

import ml_dtypes
import numpy as np

import poot as pt
from poot import devices
from poot.jit import launch as L

N = 2000


def per_call_us(fn, n=N, sync=None):
    fn()
    if sync:
        sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    if sync:
        sync()
    return (time.perf_counter() - t0) / n * 1e6


dev = devices.get("cuda")
rng = np.random.default_rng(0)
w = rng.standard_normal((4096, 4096), dtype=np.float32).astype(ml_dtypes.bfloat16)
x = rng.standard_normal(4096, dtype=np.float32).astype(ml_dtypes.bfloat16)
with pt.device("cuda"):
    pw, px = pt.realize(pt.array(w)), pt.realize(pt.array(x))
    call = lambda: pt.realize(pw @ px)  # noqa: E731
    call()
    print(f"realize wall: {per_call_us(call, 500):.1f} us per call")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        call()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(22)

    seen = []
    dispatch = dev.dispatch
    dev.dispatch = lambda p, b, g: (seen.append((p, list(b), g)), dispatch(p, b, g))
    call()
    del dev.dispatch
prog, bufs, grid = seen[-1]
print("launch:", prog.name, grid, prog.workgroup, len(bufs), "buffers")
sync = dev.synchronize
words = [0] * (bufs[-2].nbytes // 4)
print(f"meta buffer (allocate + write {len(words)} words): {per_call_us(lambda: L._meta_buffer(dev, words), sync=sync):.1f} us")
print(f"dev.dispatch: {per_call_us(lambda: dev.dispatch(prog, bufs, grid), sync=sync):.1f} us; "
      f"allocate + free 64 KiB: {per_call_us(lambda: dev.free(dev.allocate(1 << 16)), sync=sync):.1f} us")
drv, wg = dev._drv, prog.workgroup
ptrs = tuple(b.handle for b in bufs)


def raw(params):
    return lambda: drv.cuLaunchKernel(prog.function, *grid, *wg, prog.dynamic_shared, dev.stream, params, 0)


print(f"cuLaunchKernel (args, types): {per_call_us(raw((ptrs, prog.arg_types)), sync=sync):.1f} us")
values = (ctypes.c_uint64 * len(ptrs))(*ptrs)
pointers = (ctypes.c_void_p * len(ptrs))(*(ctypes.addressof(values) + 8 * i for i in range(len(ptrs))))
print(f"cuLaunchKernel (void** address): {per_call_us(raw(ctypes.addressof(pointers)), sync=sync):.1f} us")
print(f"cuStreamSynchronize of an idle stream: {per_call_us(sync):.1f} us")
print(f"trap check (read 4 words): {per_call_us(lambda: L.check_traps(dev)):.1f} us")

from bench_cuda_common import _Events  # noqa: E402

ev = _Events(dev)
for label, fn in (("dispatch", lambda: dev.dispatch(prog, bufs, grid)),
                  ("raw void**", raw(ctypes.addressof(pointers)))):
    one, five = [], []
    for _ in range(20):
        ev.record(ev.start)
        fn()
        ev.record(ev.end)
        one.append(ev.ms(ev.start, ev.end) * 1e3)
        ev.record(ev.start)
        for _ in range(20):
            fn()
        ev.record(ev.end)
        five.append(ev.ms(ev.start, ev.end) * 1e3 / 20)
    print(f"GPU us of one launch after an event, {label}: min {min(one):.1f} median {np.median(one):.1f}; "
          f"back to back (20): min {min(five):.1f} median {np.median(five):.1f}")
