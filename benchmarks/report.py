"""Turn the results records (benchmarks/results/*.json, one per benchmark run, schema in benchmarks/common.py)
into benchmarks/results/REPORT.md: a summary (geometric mean of the ratios per run and baseline), one table
per benchmark (poot beside its baseline, the ratio, the kernel-only time where measured, machine, commit,
date), and plots of poot against its baselines over sizes (PNG files in results/plots/, with matplotlib:
the `plots` extra). Without matplotlib the tables are written and the report says the plots were skipped.

    python -m benchmarks.report [--results DIR] [--out DIR/REPORT.md] [--no-plots]
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
from collections import OrderedDict, defaultdict

from benchmarks import common as C

SIZE_KEYS = ("n", "shape", "a", "size", "context")


def load(results_dir: str) -> list[tuple[str, dict]]:
    """[(file name, record)] of every results JSON in `results_dir`, checked against the schema."""
    out = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        name = os.path.basename(path)
        try:
            with open(path) as f:
                rec = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise C.BenchmarkError(f"{name}: not a readable JSON file: {e}") from e
        C.validate(rec, name)
        out.append((name, rec))
    out.sort(key=lambda item: (item[1]["benchmark"], str(item[1]["date"]), item[0]))
    return out


def machine_label(m: dict) -> str:
    node = m.get("node", "?")
    what = m.get("gpu") or m.get("cpu") or ""
    cores = f", {m['cores']} cores" if m.get("cores") else ""
    return f"{node} ({what}{cores})" if what else f"{node}{cores}"


def ms(x) -> str:
    return f"{x * 1e3:.4g}" if isinstance(x, (int, float)) else "-"


def fmt_params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def size_value(v) -> float | None:
    """A size parameter as a number (elements): 1048576, '4096x4096' -> 16777216."""
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(math.prod(int(p) for p in v.split("x")))
        except ValueError:
            return None
    return None


def geomean(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def summary(records) -> list[str]:
    lines = ["| benchmark | file | machine | date | baseline | rows | geometric mean ratio |",
             "|---|---|---|---|---|---|---|"]
    for name, rec in records:
        per = defaultdict(list)
        for r in rec["rows"]:
            if r.get("ratio"):
                per[r["baseline"]].append(r["ratio"])
        for base, ratios in sorted(per.items()):
            lines.append(f"| {rec['benchmark']} | {name} | {machine_label(rec['machine'])} | {str(rec['date'])[:10]} | "
                         f"{base} | {len(ratios)} | {geomean(ratios):.3g} |")
    return lines


def table(records) -> list[str]:
    lines = ["| date | machine | commit | case | params | device | poot ms | baseline | baseline ms | ratio "
             "| kernel ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, rec in records:
        machine, commit = rec["machine"].get("node", "?"), str(rec["commit"])[:8]
        for r in rec["rows"]:
            ratio = f"{r['ratio']:.3g}" if r.get("ratio") else "-"
            lines.append(f"| {str(rec['date'])[:10]} | {machine} | {commit} | {r['name']} | "
                         f"{fmt_params(r['params'])} | {r['device']} | {ms(r['poot_s'])} | {r['baseline'] or '-'} | "
                         f"{ms(r['baseline_s'])} | {ratio} | {ms(r.get('kernel_s'))} |")
    return lines


def series(rec) -> OrderedDict:
    """{(case, device, other params): {implementation: [(size, seconds)]}} for cases run at two sizes or more."""
    out: OrderedDict = OrderedDict()
    for r in rec["rows"]:
        key = next((k for k in SIZE_KEYS if k in r["params"] and size_value(r["params"][k]) is not None), None)
        if key is None:
            continue
        x = size_value(r["params"][key])
        rest = tuple((k, str(v)) for k, v in r["params"].items() if k != key)
        lines = out.setdefault((r["name"], r["device"], rest), {})
        poot = r["poot_s"] if r["poot_s"] is not None else r.get("kernel_s")
        if poot is not None:
            lines.setdefault("poot" if r["poot_s"] is not None else "poot (kernel)", {})[x] = poot
        if r["poot_s"] is not None and r.get("kernel_s"):
            lines.setdefault("poot (kernel)", {})[x] = r["kernel_s"]
        if r["baseline"] and r["baseline_s"]:
            lines.setdefault(r["baseline"], {})[x] = r["baseline_s"]
    return OrderedDict((k, {impl: sorted(pts.items()) for impl, pts in v.items()}) for k, v in out.items()
                       if max((len(p) for p in v.values()), default=0) >= 2)


def plot(name: str, rec: dict, plots_dir: str, plt, max_panels: int = 12) -> str | None:
    """One PNG per results file: a panel per case run at several sizes, seconds against size (log-log)."""
    groups = list(series(rec).items())[:max_panels]
    if not groups:
        return None
    cols = min(3, len(groups))
    rows = -(-len(groups) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, ((case, device, rest), lines) in zip(axes.flat, groups):
        for impl, pts in lines.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl)
        ax.set_xscale("log")
        ax.set_yscale("log")
        subtitle = ", ".join(f"{k}={v}" for k, v in rest)
        ax.set_title(f"{case} on {device}" + (f"\n{subtitle}" if rest else ""), fontsize=8)
        ax.set_xlabel("size (elements)")
        ax.set_ylabel("seconds (median)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.suptitle(f"{rec['benchmark']}: {machine_label(rec['machine'])}, {str(rec['date'])[:10]}", fontsize=9)
    fig.tight_layout()
    os.makedirs(plots_dir, exist_ok=True)
    path = os.path.join(plots_dir, os.path.splitext(name)[0] + ".png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def matplotlib_pyplot():
    """pyplot on the file-only Agg backend, or None where matplotlib is not installed."""
    mpl = C.optional("matplotlib")
    if mpl is None:
        return None
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_report(results_dir: str, out_path: str | None = None, plots: bool = True) -> str:
    """Write the report for every record in `results_dir`; returns its path."""
    out_path = out_path or os.path.join(results_dir, "REPORT.md")
    records = load(results_dir)
    plt = matplotlib_pyplot() if plots else None
    plots_dir = os.path.join(os.path.dirname(os.path.abspath(out_path)), "plots")
    by_bench: OrderedDict = OrderedDict()
    for name, rec in records:
        by_bench.setdefault(rec["benchmark"], []).append((name, rec))
    lines = ["# poot benchmark results", "",
             f"Generated by `python -m benchmarks.report` from {len(records)} results files in this folder "
             "(one per run, "
             "written by the benchmark modules' `--json`; schema in benchmarks/common.py). Times are medians; "
             "ratio = baseline seconds / poot seconds (above 1: poot is faster). `kernel ms` is the GPU time of the "
             "kernels alone where measured. Compare rows within one run: machines and runs differ.", ""]
    if plt is None:
        why = "--no-plots was given" if not plots else "matplotlib is not installed (pip install 'poot[plots]')"
        lines += [f"Plots were skipped: {why}.", ""]
    lines += ["## Summary", ""] + summary(records) + [""]
    for bench, recs in by_bench.items():
        lines += [f"## {bench}", ""]
        for name, rec in recs:
            notes = "; ".join(str(rec[k]) for k in ("note", "timing") if rec.get(k))
            lines.append(f"- `{name}`: {machine_label(rec['machine'])}, commit {str(rec['commit'])[:8]}, "
                         f"{rec['date']}" + (f" -- {notes}" if notes else ""))
        lines += [""] + table(recs) + [""]
        if plt is not None:
            for name, rec in recs:
                path = plot(name, rec, plots_dir, plt)
                if path:
                    rel = os.path.relpath(path, os.path.dirname(os.path.abspath(out_path)))
                    lines += [f"![{name}]({rel})", ""]
    with open(out_path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return out_path


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--results", default=C.RESULTS, help="folder of results JSON files (default benchmarks/results)")
    ap.add_argument("--out", default=None, help="report path (default RESULTS/REPORT.md)")
    ap.add_argument("--no-plots", action="store_true", help="write the tables only")
    args = ap.parse_args(argv)
    path = write_report(args.results, args.out, plots=not args.no_plots)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
