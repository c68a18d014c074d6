# E2 session 14, device run B (<= 6 min): CUDA device/schedule/shuffle tests and the linalg parity on CUDA
# (GEMV teams of several rows), the GEMV sweep with back-to-back timing, then bench_cuda_gemv per shape under
# the sweep's fastest schedule (beside PyTorch eager and torch.compile), and bench_cuda_reductions.
end=$((SECONDS+340)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 100"
timeout -s INT 50 $P -n 8 tests/devices/test_cuda.py tests/jit/test_gpu_schedules.py tests/jit/test_kir_shuffle.py > $OUT/cuda_tests.txt 2>&1
POOT_TEST_DEVICES=cuda timeout -s INT 40 $P -n 16 tests/trace/test_parity_linalg.py tests/trace/test_parity_nn.py > $OUT/parity_cuda.txt 2>&1
SWEEP_SECONDS=80 timeout 100 python3 benchmarks/results/h200_e2s14_gemv.py > $OUT/gemv_sweep.txt 2>&1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
while read shape dtype sched; do
  POOT_GPU_GEMV_SCHEDULE=$sched POOT_BENCH_OUT=$OUT/cuda-h200-e2s14b.json timeout $(left 70) python3 -m pytest -q $B \
      benchmarks/bench_cuda_gemv.py -k "$shape and $dtype" >> $OUT/bench_gemv.txt 2>&1
done < $OUT/gemv_best.txt
POOT_BENCH_OUT=$OUT/cuda-h200-e2s14b.json timeout $(left 0) python3 -m pytest -q $B benchmarks/bench_cuda_reductions.py > $OUT/bench_red.txt 2>&1
tail -n 2 $OUT/cuda_tests.txt $OUT/parity_cuda.txt; cat $OUT/gemv_best.txt; grep -v "^copy" $OUT/gemv_sweep.txt | tail -n 6
grep -h "% of copy" $OUT/bench_gemv.txt $OUT/bench_red.txt
