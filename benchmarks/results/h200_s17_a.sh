# Session 17, first H200 call (at most 9 minutes): the cached-realize overhead on each device, the jitted
# per-call benchmark on CUDA, then the parity and kernel suites on cuda, and on wgpu and raw Vulkan side by
# side until the time is spent (the new full-range float32 transcendental test among them). Carry [".whl", ".gl"].
end=$((SECONDS+520)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
timeout 60 python3 benchmarks/results/h200_s17_overhead.py > $OUT/overhead.txt 2>&1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/cuda-h200.json timeout 90 python3 -m pytest -q $B benchmarks/bench_cuda_overhead.py \
    > $OUT/bench_cuda_overhead.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 120"
S="tests/trace tests/scripts tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py
   tests/devices/test_grid.py tests/jit/test_gpu_schedules.py tests/fuse/test_plan.py"
POOT_CACHE_DIR=/tmp/cache_cuda POOT_TEST_DEVICES=cuda POOT_KERNEL_DEVICES=cuda timeout -s INT 170 \
    $P -n 16 $S tests/jit/test_ptx.py tests/jit/test_kir_shuffle.py tests/devices/test_cuda.py > $OUT/parity_cuda.txt 2>&1
for d in wgpu vulkan; do
  POOT_CACHE_DIR=/tmp/cache_$d POOT_TEST_DEVICES=$d POOT_KERNEL_DEVICES=$d timeout -s INT $(left 5) \
      $P -n 8 tests/fuse/test_plan.py $S > $OUT/parity_$d.txt 2>&1 &
done; wait
cat $OUT/overhead.txt; grep -h "us per call" $OUT/bench_cuda_overhead.txt
for d in cuda wgpu vulkan; do grep -h "^FAILED\|^ERROR" $OUT/parity_$d.txt | head -8; tail -n 1 $OUT/parity_$d.txt; done
