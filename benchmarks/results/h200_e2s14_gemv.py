"""GEMV schedule sweep (E2 session 14): poot's generated GEMV under each POOT_GPU_GEMV_SCHEDULE beside
torch eager (a @ x), CUDA-event device times (bench_cuda_common.time_poot), % of the measured copy bandwidth.
Usage: python3 h200_e2s14_gemv.py [VARIANT ...]   (default: the list below); writes $OUT/gemv_sweep.json."""
import json, os, statistics, sys, time
sys.path.insert(0, "benchmarks")
import ml_dtypes
import numpy as np
import poot as pt
import poot.jit.execute as ex
from bench_cuda_common import _Events, copy_bandwidth, need_cuda, time_poot, time_torch

REPS = 20
VARIANTS = sys.argv[1:] or ["auto", "256,1,2", "32,16,2", "32,2,4", "32,8,2,2", "32,8,1,4", "32,4,2,4", "32,4,4,2",
                            "32,2,2,8", "32,4,1,8", "64,4,2,2", "64,2,2,4", "128,2,2,2", "128,1,2,4", "256,1,2,2",
                            "256,1,1,4"]
budget = time.time() + float(os.environ.get("SWEEP_SECONDS", "120"))
dev = need_cuda()
bw = copy_bandwidth(dev)
import torch
rows = []
print(f"copy bandwidth {bw / 1e12:.3f} TB/s", flush=True)
for dtype in ("f32", "bf16"):
    npd = np.float32 if dtype == "f32" else ml_dtypes.bfloat16
    for n, k in ((4096, 4096), (14336, 4096)):
        rng = np.random.default_rng(2)
        w = rng.standard_normal((n, k), dtype=np.float32).astype(npd)
        x = rng.standard_normal(k, dtype=np.float32).astype(npd)
        nbytes = w.nbytes + x.nbytes + n * w.itemsize
        tdt = torch.float32 if dtype == "f32" else torch.bfloat16
        tw, tx = (torch.from_numpy(a.astype(np.float32)).to("cuda", tdt) for a in (w, x))
        t = time_torch(torch, lambda: tw @ tx, reps=20)
        rec = {"shape": f"{n}x{k}", "dtype": dtype, "torch_ms_min": min(t), "torch_ms_median": statistics.median(t),
               "torch_pct": 100 * nbytes / (min(t) * 1e-3) / bw, "bytes": nbytes, "poot": {}}
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
                d, c = time_poot(dev, call)
                seen, dispatch = [], dev.dispatch
                dev.dispatch = lambda p, b, g: (seen.append((p, b, g)), dispatch(p, b, g))
                keep = call()
                del dev.dispatch
                ev, back = _Events(dev), []
                for _ in range(5):     # REPS launches back to back, as PyTorch's figure is taken
                    ev.record(ev.start)
                    for _ in range(REPS):
                        dispatch(*seen[-1])
                    ev.record(ev.end)
                    back.append(ev.ms(ev.start, ev.end) / REPS)
                del keep
                rec["poot"][v] = {"ms_min": min(d), "ms_median": statistics.median(d), "call_ms_min": min(c),
                                  "pct": 100 * nbytes / (min(d) * 1e-3) / bw, "correct": ok,
                                  "back_to_back_ms_min": min(back), "back_pct": 100 * nbytes / (min(back) * 1e-3) / bw}
        os.environ.pop("POOT_GPU_GEMV_SCHEDULE", None)
        del tw, tx
        best = max(rec["poot"], key=lambda v: rec["poot"][v]["pct"]) if rec["poot"] else None
        print(f"{dtype} {n}x{k}: torch {min(t) * 1e3:.1f} us ({rec['torch_pct']:.1f}%) | best {best} | " + " | ".join(
            f"{v} {r['ms_min'] * 1e3:.1f}us {r['pct']:.1f}% b2b {r['back_pct']:.1f}%{'' if r['correct'] else ' WRONG'}"
            for v, r in rec["poot"].items()),
            flush=True)
        rows.append(rec)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "gemv_best.txt"), "w") as f:
    for rec in rows:   # the fastest correct variant per shape (device time of one call)
        good = {v: r for v, r in rec["poot"].items() if r["correct"]}
        if good:
            f.write(f"{rec['shape']} {rec['dtype']} {min(good, key=lambda v: good[v]['ms_min'])}\n")
json.dump({"copy_bytes_per_s": bw, "gpu": dev.gpu, "rows": rows},
          open(os.path.join(os.environ.get("OUT", "/tmp"), "gemv_sweep.json"), "w"), indent=1)
