"""GEMV schedule sweep (session 15): poot's generated GEMV under each POOT_GPU_GEMV_SCHEDULE, timed on the
GPU side: REPS launches of the kernel captured in one CUDA graph and replayed between two events, so the
~8 us the host spends per cuLaunchKernel (h200_s15_probe.py) does not starve the GPU as it did in session
14's back-to-back sweep. Beside torch eager (a @ x, 20 calls between events). Usage:
python3 h200_s15_gemv.py [VARIANT ...]; writes $OUT/gemv_sweep.json."""
import json
import os
import statistics
import sys
import time

import ml_dtypes
import numpy as np

import poot as pt
import poot.jit.execute as ex
from bench_cuda_common import _Events, copy_bandwidth, need_cuda, time_torch

REPS = 20
VARIANTS = sys.argv[1:] or ["auto", "256,1,2", "256,1,4", "128,2,2", "128,2,4", "64,4,2", "64,4,4", "32,8,1",
                            "32,8,2", "32,8,4", "32,16,2", "32,16,4", "32,8,1,4", "32,8,2,2", "32,4,2,4",
                            "64,4,2,2", "32,32,2", "32,4,4"]
budget = time.time() + float(os.environ.get("SWEEP_SECONDS", "150"))
dev = need_cuda()
bw = copy_bandwidth(dev)
import torch  # noqa: E402

rows = []
print(f"copy bandwidth {bw / 1e12:.3f} TB/s", flush=True)
for dtype in ("bf16", "f32"):
    npd = np.float32 if dtype == "f32" else ml_dtypes.bfloat16
    for n, k in ((4096, 4096), (14336, 4096)):
        rng = np.random.default_rng(2)
        w = rng.standard_normal((n, k), dtype=np.float32).astype(npd)
        x = rng.standard_normal(k, dtype=np.float32).astype(npd)
        nbytes = w.nbytes + x.nbytes + n * w.itemsize
        tdt = torch.float32 if dtype == "f32" else torch.bfloat16
        tw, tx = (torch.from_numpy(a.astype(np.float32)).to("cuda", tdt) for a in (w, x))
        t = time_torch(torch, lambda: tw @ tx, reps=20)
        rec = {"shape": f"{n}x{k}", "dtype": dtype, "torch_ms_min": min(t), "bytes": nbytes,
               "torch_pct": 100 * nbytes / (min(t) * 1e-3) / bw, "poot": {}}
        ref = w.astype(np.float64) @ x.astype(np.float64)
        scale = np.abs(w.astype(np.float64)) @ np.abs(x.astype(np.float64))
        eps = float(ml_dtypes.finfo(npd).eps)
        with pt.device("cuda"):
            pw, px = pt.realize(pt.array(w)), pt.realize(pt.array(x))
            for v in VARIANTS:
                if time.time() > budget:
                    break
                os.environ["POOT_GPU_GEMV_SCHEDULE"] = v
                ex._PROGRAMS.clear()
                call = lambda: pt.realize(pw @ px)  # noqa: E731
                got = call().numpy().astype(np.float64)
                ok = bool(np.all(np.abs(got - ref) <= eps * np.abs(ref) + 4 * np.finfo(np.float32).eps * scale))
                seen, dispatch = [], dev.dispatch
                dev.dispatch = lambda p, b, g: (seen.append((p, b, g)), dispatch(p, b, g))
                keep = call()
                del dev.dispatch
                with dev.record() as graph:
                    for _ in range(REPS):
                        dev.dispatch(*seen[-1])
                dev.replay(graph)
                ev, times = _Events(dev), []
                for _ in range(7):
                    ev.record(ev.start)
                    dev.replay(graph)
                    ev.record(ev.end)
                    times.append(ev.ms(ev.start, ev.end) / REPS)
                del keep, graph
                best = min(times)
                rec["poot"][v] = {"graph_ms_min": best, "graph_ms_median": statistics.median(times), "correct": ok,
                                  "pct": 100 * nbytes / (best * 1e-3) / bw, "launch": [seen[-1][0].workgroup,
                                                                                    seen[-1][2]]}
        os.environ.pop("POOT_GPU_GEMV_SCHEDULE", None)
        del tw, tx
        good = {v: r for v, r in rec["poot"].items() if r["correct"]}
        top = min(good, key=lambda v: good[v]["graph_ms_min"]) if good else None
        print(f"{dtype} {n}x{k}: torch {min(t) * 1e3:.1f} us ({rec['torch_pct']:.1f}%) | best {top} | " + " | ".join(
            f"{v} {r['graph_ms_min'] * 1e3:.1f}us {r['pct']:.1f}%{'' if r['correct'] else ' WRONG'}"
            for v, r in rec["poot"].items()), flush=True)
        rows.append(rec)
json.dump({"copy_bytes_per_s": bw, "gpu": dev.gpu, "rows": rows},
          open(os.path.join(os.environ.get("OUT", "/tmp"), "gemv_sweep.json"), "w"), indent=1)
