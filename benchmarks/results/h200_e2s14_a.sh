# E2 session 14, device run A (<= 6 min): CUDA device/schedule/shuffle tests, the GEMV schedule sweep
# (POOT_GPU_GEMV_SCHEDULE variants, one process), the CUDA parity suites that exercise the shuffle combines,
# then bench_cuda_reductions + bench_cuda_gemv beside PyTorch eager and torch.compile. Outputs under $OUT.
end=$((SECONDS+340)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 100"
timeout -s INT 60 $P -n 8 tests/devices/test_cuda.py tests/jit/test_gpu_schedules.py tests/jit/test_kir_shuffle.py > $OUT/cuda_tests.txt 2>&1
SWEEP_SECONDS=85 timeout 110 python3 benchmarks/results/h200_e2s14_gemv.py > $OUT/gemv_sweep.txt 2>&1
POOT_TEST_DEVICES=cuda timeout -s INT 50 $P -n 16 tests/trace/test_parity_reductions.py tests/trace/test_parity_nn.py > $OUT/parity_cuda.txt 2>&1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/cuda-h200-e2s14.json timeout $(left 0) python3 -m pytest -q $B benchmarks/bench_cuda_reductions.py benchmarks/bench_cuda_gemv.py > $OUT/bench_cuda.txt 2>&1
tail -n 2 $OUT/cuda_tests.txt $OUT/parity_cuda.txt $OUT/bench_cuda.txt; grep -v "^copy" $OUT/gemv_sweep.txt | tail -n 6; grep -h "% of copy" $OUT/bench_cuda.txt
