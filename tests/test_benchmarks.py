"""The benchmark modules stay runnable: each imports, offers `--json` in its command line, and the report
turns a results folder into REPORT.md (tables, plots where matplotlib is installed)."""
import contextlib
import glob
import importlib
import io
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import common, report  # noqa: E402

MODULES = sorted(os.path.splitext(os.path.basename(p))[0]
                 for p in glob.glob(os.path.join(ROOT, "benchmarks", "bench_*.py")))


def test_there_are_benchmark_modules():
    assert {"bench_elementwise", "bench_reductions", "bench_matmul", "bench_overhead"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_and_offers_json_output(name):
    module = importlib.import_module(f"benchmarks.{name}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert "--json" in out.getvalue()


def synthetic_record():
    rows = []
    for n, poot_s, numpy_s in ((1024, 2e-5, 1e-5), (1 << 20, 1e-3, 4e-3)):
        rows.append(common.row("elementwise-mixed", {"chain": "mixed", "n": n, "dtype": "float32"}, "cpu", poot_s,
                               "numpy", numpy_s, bytes=16 * n))
    return {"machine": {"node": "test-host", "cpu": "test cpu", "cores": 2}, "commit": "0123456789abcdef",
            "date": "2026-12-05T00:00:00+00:00", "benchmark": "bench_elementwise", "rows": rows}


def test_report_writes_tables_and_plots(tmp_path):
    rec = synthetic_record()
    (tmp_path / "bench_elementwise-test-host-2026-12-05.json").write_text(json.dumps(rec))
    with contextlib.redirect_stdout(io.StringIO()):
        path = report.main(["--results", str(tmp_path)])
    text = open(path).read()
    assert "## bench_elementwise" in text
    assert ("| 2026-12-05 | test-host | 01234567 | elementwise-mixed | chain=mixed, n=1048576, dtype=float32 | cpu "
            "| 1 | numpy | 4 | 4 |") in text
    assert rec["rows"][0]["ratio"] == pytest.approx(0.5)
    if report.matplotlib_pyplot() is None:
        assert "Plots were skipped" in text
    else:
        png = tmp_path / "plots" / "bench_elementwise-test-host-2026-12-05.png"
        assert png.exists() and png.stat().st_size > 1000
        assert "plots/bench_elementwise-test-host-2026-12-05.png" in text


def test_report_without_plots_says_so(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(synthetic_record()))
    text = open(report.write_report(str(tmp_path), plots=False)).read()
    assert "Plots were skipped: --no-plots was given." in text
    assert not (tmp_path / "plots").exists()


def test_report_names_a_file_that_breaks_the_schema(tmp_path):
    rec = synthetic_record()
    del rec["rows"][1]["baseline_s"]
    (tmp_path / "broken.json").write_text(json.dumps(rec))
    with pytest.raises(common.BenchmarkError, match="broken.json: row 1 .*baseline_s"):
        report.write_report(str(tmp_path), plots=False)
