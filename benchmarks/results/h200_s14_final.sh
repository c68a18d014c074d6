# Session 14, last H200 call: the E2 re-measure (CUDA device tests alone, GPU schedules, the GEMV auto rule,
# the CUDA benchmarks beside PyTorch), then the whole parity + kernel suite on cuda with all 16 cores, bounded
# (SIGINT makes pytest print its summary when time runs out). Carry [".whl", ".gl"].
start=$SECONDS
bash benchmarks/results/h200_e2s14_final.sh
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 120"
POOT_CACHE_DIR=/tmp/cache_cuda POOT_TEST_DEVICES=cuda POOT_KERNEL_DEVICES=cuda timeout -s INT $((440 - SECONDS + start)) \
    $P -n 16 tests/trace tests/scripts tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py \
    tests/devices/test_grid.py tests/jit/test_ptx.py > $OUT/parity_cuda_full.txt 2>&1
tail -n 3 $OUT/parity_cuda_full.txt
