"""What every benchmark module shares: timing of the user's call, the command-line options, the
description of the machine, and the one results schema every `--json` file follows.

Timing (`time_call`). A benchmark times what a user's code pays: the wall clock around the call, the
result realized on every repetition (`.numpy()` or `pt.realize`), the device synchronized at the end
of each round, the median over rounds. A round is `number` back-to-back calls then one synchronize
(`number` 1: every call waits for its result; more: asynchronous launches overlap as in a user's
loop); its figure is the round's seconds / `number`. Baselines run the same way in the same process,
so the ratio of two medians of one run is what to compare, never times of different runs.

Results schema (one JSON object per run; `benchmarks.report` reads them):

    {"machine": {...}, "commit": "<git sha>", "date": "<ISO 8601 UTC>", "benchmark": "<module name>",
     "rows": [{"name": str, "params": {...}, "device": str, "poot_s": median seconds,
               "baseline": "numpy" | "torch" | ... | null, "baseline_s": seconds | null,
               "ratio": baseline_s / poot_s (above 1: poot is faster) | null,
               optional: "kernel_s" (GPU kernel time by device timestamps), "bytes", "flops", "unit", ...}]}

A case with several baselines gives one row per baseline (same poot_s); one without any has
baseline null. Machine-dependent numbers (cores, GPU) are in "machine"; compare rows within one file.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from poot.errors import PootError

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
ROOT = os.path.dirname(HERE)
RECORD_KEYS = ("machine", "commit", "date", "benchmark", "rows")
ROW_KEYS = ("name", "params", "device", "poot_s", "baseline", "baseline_s", "ratio")
GPU_KINDS = ("cuda", "wgpu", "vulkan", "rocm")


class BenchmarkError(PootError):
    """A benchmark could not run as asked, or a results file does not follow the schema."""


# --- timing -----------------------------------------------------------------------------------------
def time_call(call, *, repeat: int = 7, number: int = 1, warmup: int = 1, sync=None) -> list[float]:
    """Seconds per call of `call()`, one figure per round (see the module docstring): `warmup` calls
    first (compiles, caches), then `repeat` rounds of `number` calls and one `sync()`."""
    sync = sync or (lambda: None)
    for _ in range(warmup):
        call()
    sync()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        sync()
        out.append((time.perf_counter() - t0) / number)
    return out


def interleaved_medians(calls: dict, repeat: int, warmup: int) -> dict:
    """Median seconds per call of each of `calls`, their repetitions taken in turn (poot, NumPy, ...,
    poot, ...), so a shared machine's changing load weighs on all of them alike."""
    for _ in range(warmup):
        for f in calls.values():
            f()
    samples = {name: [] for name in calls}
    for _ in range(repeat):
        for name, f in calls.items():
            t0 = time.perf_counter()
            f()
            samples[name].append(time.perf_counter() - t0)
    return {name: median(v) for name, v in samples.items()}


def cases_option(ap, cases, default=None, more_help: str = "", flag: str = "--cases") -> None:
    """`--cases` (or `flag`): a comma list of names from `cases` (default: `default`, or all of them);
    an unknown name is a usage error that lists the known ones."""
    known = list(cases)
    what = flag.lstrip("-")

    def parse(text: str) -> list[str]:
        names = comma_list(text)
        unknown = [c for c in names if c not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {what} {unknown}; known: {', '.join(known)}")
        return names

    ap.add_argument(flag, type=parse, default=list(default if default is not None else known),
                    help="comma list of: " + ", ".join(known) + more_help)


def median(samples) -> float:
    return float(statistics.median(samples))


def auto_number(call, sync=None, target_s: float = 0.05, cap: int = 1 << 14) -> int:
    """Calls per round so that a round lasts about `target_s` (1 for calls slower than that)."""
    sync = sync or (lambda: None)
    call()
    sync()
    t0 = time.perf_counter()
    call()
    sync()
    one = max(time.perf_counter() - t0, 1e-7)
    return max(1, min(cap, int(target_s / one)))


def poot_sync(kind: str):
    """The synchronize a round of poot calls on device `kind` ends with (nothing on the CPU, whose
    realize returns finished results)."""
    if kind == "cpu":
        return None
    import poot as pt

    return lambda: pt.synchronize(kind)


# --- rows and records -------------------------------------------------------------------------------
def row(name: str, params: dict, device: str, poot_s, baseline: str | None = None, baseline_s=None,
        **extra) -> dict:
    """One results row; `ratio` = baseline_s / poot_s (above 1: poot is faster), null without a baseline."""
    ratio = baseline_s / poot_s if baseline_s and poot_s else None
    out = {"name": name, "params": dict(params), "device": device, "poot_s": poot_s, "baseline": baseline,
           "baseline_s": baseline_s, "ratio": ratio}
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def rows_against(name: str, params: dict, device: str, poot_s, baselines: dict, **extra) -> list[dict]:
    """One row per measured baseline ({name: seconds}); a single baseline-less row where none ran."""
    measured = {b: s for b, s in baselines.items() if s is not None}
    if not measured:
        return [row(name, params, device, poot_s, **extra)]
    return [row(name, params, device, poot_s, b, s, **extra) for b, s in measured.items()]


def machine(devices=()) -> dict:
    """The host (node, CPU model, cores poot may use, Python, NumPy) and each named poot device."""
    import numpy as np

    out = {"node": platform.node(), "cpu": cpu_model(), "cores": cpu_threads(), "os": platform.platform(),
           "python": platform.python_version(), "numpy": np.__version__}
    described = {}
    for kind in devices:
        if kind == "cpu":
            continue
        dev, why = device_or_none(kind)
        if dev is not None:
            extra = dev.caps.extra
            described[kind] = str(getattr(dev, "gpu", None) or extra.get("gpu") or extra.get("adapter") or kind)
        else:
            described[kind] = f"unavailable: {why}"
    if described:
        out["devices"] = described
    return out


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def make_record(benchmark: str, rows: list[dict], devices=(), **extra) -> dict:
    rec = {"machine": machine(devices), "commit": commit(), "date": now(), "benchmark": benchmark, "rows": rows}
    rec.update(extra)
    validate(rec, benchmark)
    return rec


def validate(rec, where: str) -> None:
    """Raise BenchmarkError naming `where` and the field when `rec` does not follow the schema."""
    if not isinstance(rec, dict):
        raise BenchmarkError(f"{where}: a results file holds one JSON object, not {type(rec).__name__}")
    missing = [k for k in RECORD_KEYS if k not in rec]
    if missing:
        raise BenchmarkError(f"{where}: missing {', '.join(missing)} (a record needs {', '.join(RECORD_KEYS)})")
    if not isinstance(rec["rows"], list):
        raise BenchmarkError(f"{where}: 'rows' must be a list")
    for i, r in enumerate(rec["rows"]):
        lacking = [k for k in ROW_KEYS if k not in r]
        if lacking:
            raise BenchmarkError(f"{where}: row {i} ({r.get('name', '?')}) lacks {', '.join(lacking)}")
        if not isinstance(r["params"], dict):
            raise BenchmarkError(f"{where}: row {i} ({r['name']}): 'params' must be an object")


def write_json(path: str, rec: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(rec, f, indent=1, default=float)
        f.write("\n")


# --- command line -----------------------------------------------------------------------------------
def parser(doc: str, *, sizes: str | None = None, dtypes: str | None = None, devices: str = "cpu",
           repeat: int = 7, number: int = 1) -> argparse.ArgumentParser:
    """The options every benchmark module takes; modules add their own (cases, baselines...)."""
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc)
    if sizes is not None:
        ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes(sizes),
                        help=f"comma list of sizes: elements (1K, 10M, 1e8) or shapes (4096x4096); default {sizes}")
    if dtypes is not None:
        ap.add_argument("--dtypes", type=comma_list, default=comma_list(dtypes), help=f"default {dtypes}")
    ap.add_argument("--devices", type=comma_list, default=comma_list(devices),
                    help=f"poot devices to run on (absent ones are skipped, saying why); default {devices}")
    ap.add_argument("--repeat", type=int, default=repeat, help=f"timed rounds per case (median); default {repeat}")
    ap.add_argument("--number", type=int, default=number,
                    help="calls per round before the round's synchronize (0: enough for ~50 ms)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed calls first")
    ap.add_argument("--json", metavar="PATH", default=None, help="write the run's results record (schema: "
                    "benchmarks/common.py) to PATH")
    return ap


def comma_list(text: str) -> list[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]


_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_sizes(text: str) -> list:
    """'1K,10M,1e8' -> ints (K/M/G are powers of two); '4096x4096,512x8192' -> shape tuples."""
    out = []
    for tok in comma_list(text):
        if "x" in tok:
            out.append(tuple(parse_sizes(tok.replace("x", ","))))
            continue
        t = tok.upper()
        try:
            out.append(int(t[:-1]) * _SUFFIX[t[-1]] if t[-1] in _SUFFIX else int(float(t)))
        except (ValueError, IndexError):
            raise argparse.ArgumentTypeError(f"size {tok!r}: expected elements such as 1K, 10M, 1e8 or a shape "
                                             "such as 4096x4096") from None
    return out


def size_label(size) -> str:
    if isinstance(size, tuple):
        return "x".join(str(s) for s in size)
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{suffix}"
    return str(size)


def timing_kwargs(args, call=None, sync=None) -> dict:
    number = args.number or (auto_number(call, sync) if call else 1)
    return {"repeat": args.repeat, "number": number, "warmup": args.warmup, "sync": sync}


def median_s(args, call, sync=None) -> float:
    """Median seconds per call of `call` under the command line's timing (`timing_kwargs`)."""
    return median(time_call(call, **timing_kwargs(args, call, sync)))


@contextlib.contextmanager
def env_setting(name: str, value: str):
    """Environment variable `name` set to `value` inside, as it was after. poot reads such settings
    when it builds a program, so the program cache is cleared on the way in and on the way out: each
    setting's programs are built under it."""
    execute = runtime("execute")
    saved = os.environ.get(name)
    os.environ[name] = value
    execute._PROGRAMS.clear()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
        execute._PROGRAMS.clear()


def finish(args, benchmark: str, rows: list[dict], **extra) -> dict:
    """Print the rows as a table and write the record to --json (if given); returns the record."""
    print_rows(rows)
    rec = make_record(benchmark, rows, getattr(args, "devices", ()), **extra)
    if args.json:
        write_json(args.json, rec)
        print(f"wrote {args.json}")
    return rec


_noted: set = set()


def note_once(message: str) -> None:
    """Print `message` to stderr the first time only (a missing baseline is said once per run)."""
    if message not in _noted:
        _noted.add(message)
        print(message, file=sys.stderr)


def print_rows(rows: list[dict]) -> None:
    print(f"{'case':56s} {'device':7s} {'poot ms':>10s} {'baseline':>14s} {'ms':>10s} {'ratio':>7s} {'kernel ms':>10s}")
    for r in rows:
        params = ",".join(f"{k}={v}" for k, v in r["params"].items())
        name = f"{r['name']} {params}"[:56]
        base = r["baseline"] or "-"
        bs = f"{r['baseline_s'] * 1e3:10.3f}" if r["baseline_s"] else f"{'-':>10s}"
        ratio = f"{r['ratio']:7.2f}" if r["ratio"] else f"{'-':>7s}"
        ks = f"{r['kernel_s'] * 1e3:10.3f}" if r.get("kernel_s") else f"{'-':>10s}"
        poot = f"{r['poot_s'] * 1e3:10.3f}" if r["poot_s"] is not None else f"{'-':>10s}"
        print(f"{name:56s} {r['device']:7s} {poot} {base:>14s} {bs} {ratio} {ks}", flush=True)


# --- devices, optional baselines, moved poot modules ------------------------------------------------
def device_or_none(kind: str):
    """(poot device, None) or (None, why it is unavailable)."""
    from poot import devices
    from poot.errors import DeviceUnavailableError

    try:
        return devices.get(kind), None
    except DeviceUnavailableError as e:
        return None, str(e)


def available(kinds) -> list[str]:
    """The device kinds of `kinds` present here; prints why each absent one is skipped."""
    out = []
    for kind in kinds:
        dev, why = device_or_none(kind)
        if dev is None:
            print(f"skipping device {kind}: {why}", file=sys.stderr)
        else:
            out.append(kind)
    return out


def optional(name: str):
    """The module `name` where it imports, else None (baselines are not poot dependencies)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def poot_module(*candidates: str):
    """The first of `candidates` that imports: poot's runtime modules move between packages."""
    errors = []
    for name in candidates:
        try:
            return importlib.import_module(name)
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise BenchmarkError("none of these poot modules imports: " + "; ".join(errors))


def runtime(name: str):
    """poot's runtime module `name` (launch, compile, abi, matvec, execute, cache...), wherever it lives."""
    return poot_module(f"poot.jit.runtime.{name}", f"poot.jit.{name}")


def codegen(name: str):
    """poot's kernel generator module `name` (gpu_split, gpu_gemv...), wherever it lives."""
    return poot_module(f"poot.jit.codegen.{name}", f"poot.jit.codegen.{name}")


def numexpr_module(threads: int | None = None):
    ne = optional("numexpr")
    if ne is not None:
        ne.set_num_threads(threads or cpu_threads())
    return ne


def numba_module(threads: int | None = None):
    numba = optional("numba")
    if numba is not None:
        numba.set_num_threads(min(threads or cpu_threads(), numba.config.NUMBA_NUM_THREADS))
    return numba


def torch_cuda():
    """PyTorch where it sees a CUDA device, else None."""
    torch = optional("torch")
    return torch if torch is not None and torch.cuda.is_available() else None


_ceiling: list = []


def c_ceiling():
    """ceiling.c (plain C reductions, OpenMP on every core) built for this CPU and loaded with ctypes,
    once per process; None where gcc or OpenMP is missing (the reason goes to stderr)."""
    if _ceiling:
        return _ceiling[0]
    import ctypes
    import shutil
    import tempfile

    lib = None
    if shutil.which("gcc") is None:
        print("no C ceiling: gcc is not installed", file=sys.stderr)
    else:
        out = os.path.join(tempfile.mkdtemp(), "ceiling.so")
        r = subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                            os.path.join(HERE, "ceiling.c"), "-o", out], capture_output=True, text=True)
        if r.returncode:
            print(f"no C ceiling: ceiling.c did not build: {r.stderr.strip()[:200]}", file=sys.stderr)
        else:
            os.environ.setdefault("OMP_NUM_THREADS", str(cpu_threads()))
            lib = ctypes.CDLL(out)
            lib.full_reduce.restype = ctypes.c_float
            lib.full_reduce.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
            lib.axis_reduce.restype = None
            lib.axis_reduce.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_int, ctypes.c_int,
                                        ctypes.c_void_p]
    _ceiling.append(lib)
    return lib


def check_close(name: str, got, want, rtol: float, atol: float = 0.0) -> None:
    """Raise BenchmarkError naming the case when poot's result differs from the reference."""
    import numpy as np

    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if got.shape != want.shape or bad.any():
        raise BenchmarkError(f"{name}: poot's result differs from the reference at {int(bad.sum())} of "
                             f"{bad.size} elements (rtol {rtol}, atol {atol})")
