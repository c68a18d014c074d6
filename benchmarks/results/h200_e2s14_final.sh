# E2 session 14 re-measure (about 2.5 minutes, not run by E2): the CUDA device tests (test_cuda.py alone: its
# out-of-memory test must not share the GPU with other workers), GPU schedule and shuffle tests, the GEMV sweep
# for the committed auto rule only (one call and back to back), then the CUDA benchmarks beside PyTorch.
end=$((SECONDS+170)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 60"
timeout -s INT 30 $P tests/devices/test_cuda.py > $OUT/cuda_device.txt 2>&1
timeout -s INT 30 $P -n 8 tests/jit/test_gpu_schedules.py tests/jit/test_kir_shuffle.py > $OUT/cuda_schedules.txt 2>&1
SWEEP_SECONDS=20 timeout 40 python3 benchmarks/results/h200_e2s14_gemv.py auto > $OUT/gemv_sweep.txt 2>&1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/cuda-h200.json timeout $(left 0) python3 -m pytest -q $B benchmarks/bench_cuda_elementwise.py \
    benchmarks/bench_cuda_reductions.py benchmarks/bench_cuda_gemv.py > $OUT/bench_cuda.txt 2>&1
tail -n 2 $OUT/cuda_device.txt $OUT/cuda_schedules.txt $OUT/bench_cuda.txt; cat $OUT/gemv_sweep.txt; grep -h "% of copy" $OUT/bench_cuda.txt
