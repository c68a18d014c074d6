# Session 15, last H200 call (at most 9.5 minutes): the wgpu read-back probe, the CUDA device tests alone (the
# out-of-memory test takes the whole GPU), then the whole parity and kernel suites on cuda with all 16 cores,
# bounded (SIGINT makes pytest print its summary if time runs out). Carry [".whl", ".gl"].
start=$SECONDS
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1 POOT_CACHE_DIR=/tmp/pootcache
timeout 40 python3 benchmarks/results/h200_s15_wgpu_read.py > $OUT/wgpu_read.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 120"
timeout -s INT 40 $P tests/devices/test_cuda.py > $OUT/cuda_device.txt 2>&1
POOT_CACHE_DIR=/tmp/cache_cuda POOT_TEST_DEVICES=cuda POOT_KERNEL_DEVICES=cuda timeout -s INT $((540 - SECONDS + start)) \
    $P -n 16 tests/trace tests/scripts tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py \
    tests/devices/test_grid.py tests/jit/test_ptx.py tests/jit/test_gpu_schedules.py tests/jit/test_kir_shuffle.py \
    > $OUT/parity_cuda_full.txt 2>&1
cat $OUT/wgpu_read.txt; tail -n 2 $OUT/cuda_device.txt; grep -h "^FAILED\|^ERROR" $OUT/parity_cuda_full.txt | head -20
tail -n 3 $OUT/parity_cuda_full.txt; echo "seconds: $((SECONDS - start))"
