# Session 15, second H200 call (about 5 minutes): the CUDA device tests alone (with the ctypes hot path of
# cuda_hot.py), the launch probe (hot path against cuda-python), the SPIR-V schedule probe on wgpu and raw
# Vulkan, the CUDA GEMV and per-call benchmarks, and two parity files on cuda. Carry [".whl", ".gl"].
end=$((SECONDS+330)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 60"
timeout -s INT 40 $P tests/devices/test_cuda.py > $OUT/cuda_device.txt 2>&1
timeout 60 python3 benchmarks/results/h200_s15_probe.py > $OUT/probe.txt 2>&1
timeout 100 python3 benchmarks/results/h200_s15_spirv_probe.py > $OUT/spirv_probe.txt 2>$OUT/spirv_probe.err
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/cuda-h200.json timeout $(left 70) python3 -m pytest -q $B benchmarks/bench_cuda_gemv.py \
    benchmarks/bench_cuda_overhead.py > $OUT/bench_cuda.txt 2>&1
POOT_TEST_DEVICES=cuda POOT_KERNEL_DEVICES=cuda timeout -s INT $(left 3) $P -n 16 tests/trace/test_parity_linalg.py \
    tests/trace/test_parity_nn.py tests/jit > $OUT/parity_cuda.txt 2>&1
tail -n 3 $OUT/cuda_device.txt $OUT/parity_cuda.txt $OUT/bench_cuda.txt
grep -h "TB/s\|us per call" $OUT/bench_cuda.txt
cat $OUT/spirv_probe.txt; tail -n 3 $OUT/spirv_probe.err
sed -n '/^launch:/,$p' $OUT/probe.txt; head -n 2 $OUT/probe.txt
