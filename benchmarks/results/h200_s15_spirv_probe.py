"""Session 15 probe (H200): why poot's generated pointwise kernels run at ~20% of the copy bandwidth through
wgpu while a hand-written one-element-per-thread chain reaches ~79%. On wgpu and raw Vulkan, GPU ms (median,
by timestamps) of: the hand copy kernel (twice, fresh buffers), poot's kernels for -a, the mixed chain and a
sum, under the committed schedule and with the grid-stride loop's grid or the 16-byte vector changed."""
import os
import statistics
import sys
import time

import numpy as np

import poot as pt
from poot import devices
from poot.jit import execute
from poot.jit.kernelgen import gpu_lanes, gpu_pointwise, gpu_split

from bench_wgpu_common import copy_kernel, launches_gpu_ms, poot_launches, prepared, upload

N = 64 << 20
rng = np.random.default_rng(0)
HOST = [rng.random(N, dtype=np.float32) for _ in range(3)]


def vulkan_ms(dev, launches, rounds=9):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:      # raise the clocks first (bench_wgpu_common.launches_gpu_ms)
        for p, b, g in launches * 20:
            dev.dispatch(p, b, g)
        dev.synchronize()
    os.environ["POOT_DEBUG"] = "1"
    try:
        out = []
        for r in range(rounds + 1):
            del dev.kernel_times[:]
            for p, b, g in launches:
                dev.dispatch(p, b, g)
            dev.synchronize()
            if r:
                out.append(sum(us for _, _, us in dev.kernel_times) / 1e3)
        return out
    finally:
        del os.environ["POOT_DEBUG"]


def timed(kind, dev, launches):
    ms = launches_gpu_ms(dev, launches) if kind == "wgpu" else vulkan_ms(dev, launches)
    return statistics.median(ms)


def poot_case(kind, dev, arrays, expr):
    execute._PROGRAMS.clear()
    with pt.device(kind):
        call = lambda: pt.realize(expr(*arrays))  # noqa: E731
        call()
        launches = poot_launches(dev, call)
    return launches


WIDE = lambda dtypes, caps=None: gpu_lanes.vector_width(dtypes)  # noqa: E731  16 bytes on every device
NARROW = lambda dtypes, caps=None: gpu_lanes.vector_width(dtypes, 4)  # noqa: E731
VARIANTS = {   # (module, attribute) -> value
    "committed": {},
    "16-byte": {(gpu_pointwise, "vector_width"): WIDE, (gpu_split, "vector_width"): WIDE},
    "4-byte": {(gpu_pointwise, "vector_width"): NARROW, (gpu_split, "vector_width"): NARROW},
    "4-byte, grid x4": {(gpu_pointwise, "vector_width"): NARROW, (gpu_split, "vector_width"): NARROW,
                        (gpu_pointwise, "GROUPS_PER_CORE"): gpu_pointwise.GROUPS_PER_CORE * 4},
}
if os.environ.get("PROBE_PIECES"):   # only the sum, with fewer pieces (partials) per row
    VARIANTS = {f"{p} pieces": {(gpu_split, "MAX_PIECES"): p} for p in (4096, 2048, 1024, 512, 256)}

for kind in ("wgpu", "vulkan"):
    try:
        dev = devices.get(kind)
    except Exception as e:     # noqa: BLE001
        print(kind, "unavailable:", e)
        continue
    for rep in range(2):
        x, out = upload(dev, np.ones(N, np.float32)), dev.allocate(4 * N)
        groups = -(-N // 256)
        program, args = prepared(dev, copy_kernel(), [x, out], groups, [N, N])
        ms = timed(kind, dev, [(program, args, (groups, 1, 1))])
        print(f"{kind} hand copy kernel #{rep}: {ms:.3f} ms = {8 * N / ms / 1e6:.0f} GB/s")
    with pt.device(kind):
        arrays = [pt.realize(pt.array(h)) for h in HOST]
    for label, patch in VARIANTS.items():
        saved = {k: getattr(*k) for k in patch}
        for (module, name), v in patch.items():
            setattr(module, name, v)
        try:
            for case, expr, nbytes in (("neg", lambda a, b, c: -a, 8 * N),
                                       ("mixed", lambda a, b, c: 2 * a + b * c - pt.exp(a) / (1 + b * b), 16 * N),
                                       ("sum", lambda a, b, c: a.sum(), 4 * N)):
                if os.environ.get("PROBE_PIECES") and case != "sum":
                    continue
                launches = poot_case(kind, dev, arrays, expr)
                ms = timed(kind, dev, launches)
                print(f"{kind} poot {case} [{label}]: {ms:.3f} ms = {nbytes / ms / 1e6:.0f} GB/s; "
                      f"{[(p.name, g) for p, _, g in launches]}")
        finally:
            for (module, name), v in saved.items():
                setattr(module, name, v)
    sys.stdout.flush()
