"""poot's benchmarks: parameterized modules (`python -m benchmarks.bench_<name> --help`), each timing the user's
call beside its baselines in the same run and writing one results JSON (`--json PATH`, schema in
benchmarks/common.py); `python -m benchmarks.report` turns benchmarks/results/*.json into REPORT.md."""
