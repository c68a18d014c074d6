# Session 13 final H200 run: CUDA/wgpu/Vulkan benchmarks first (quiet GPU), then the device + kernel suites,
# the previously failing wgpu/cuda tests, and the parity suite on the raw Vulkan device (bounded; SIGINT
# makes pytest print its summary when time runs out)
end=$((SECONDS+575)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
{ nvidia-smi -L; python3 -m poot devices; } > $OUT/env.txt 2>&1
B="-q -p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_ROUNDS=5 POOT_BENCH_OUT=$OUT/cuda-h200.json timeout 110 python3 -m pytest $B \
    benchmarks/bench_cuda_elementwise.py benchmarks/bench_cuda_reductions.py benchmarks/bench_cuda_gemv.py benchmarks/bench_cuda_overhead.py > $OUT/bench_cuda.txt 2>&1
POOT_BENCH_OUT=$OUT/wgpu-h200.json timeout 75 python3 -m pytest $B benchmarks/bench_wgpu_elementwise.py benchmarks/bench_wgpu_reductions.py > $OUT/bench_wgpu.txt 2>&1
POOT_BENCH_OUT=$OUT/vulkan-h200.json timeout 90 python3 -m pytest $B benchmarks/bench_vulkan.py > $OUT/bench_vulkan.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 100"
timeout -s INT 75 $P -n 16 tests/devices tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py \
    tests/jit/test_ptx.py tests/jit/test_ptxas_all_kernels.py tests/jit/test_gpu_schedules.py \
    --ignore=tests/devices/test_gpu_suites.py > $OUT/kernels.txt 2>&1
POOT_TEST_DEVICES=cuda,wgpu timeout -s INT 45 $P -n 16 tests/trace/test_jit.py tests/scripts tests/trace/test_parity_creation.py \
    tests/trace/test_array.py > $OUT/fixed_cuda_wgpu.txt 2>&1
POOT_TEST_DEVICES=vulkan timeout -s INT $(left 5) $P -n 16 tests/trace tests/scripts > $OUT/parity_vulkan.txt 2>&1
tail -n 3 $OUT/*.txt
