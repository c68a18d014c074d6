# Session 15, first H200 call (about 6 minutes): the host cost of one small CUDA launch (h200_s15_probe.py),
# the wgpu benchmarks with their poot-kernels rows against the device's copy bandwidth through wgpu, raw
# Vulkan beside wgpu, and the CUDA GEMV (one and five per realize) and per-call benchmarks. Carry [".whl", ".gl"].
end=$((SECONDS+400)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
timeout 60 python3 benchmarks/results/h200_s15_probe.py > $OUT/probe.txt 2>&1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/wgpu-h200.json timeout $(left 250) python3 -m pytest -q $B benchmarks/bench_wgpu_elementwise.py \
    benchmarks/bench_wgpu_reductions.py > $OUT/bench_wgpu.txt 2>&1
POOT_BENCH_OUT=$OUT/vulkan-h200.json timeout $(left 160) python3 -m pytest -q $B benchmarks/bench_vulkan.py \
    > $OUT/bench_vulkan.txt 2>&1
POOT_BENCH_OUT=$OUT/cuda-h200.json timeout $(left 5) python3 -m pytest -q $B benchmarks/bench_cuda_gemv.py \
    benchmarks/bench_cuda_overhead.py > $OUT/bench_cuda.txt 2>&1
tail -n 2 $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt $OUT/bench_cuda.txt
grep -h "GB/s\|TB/s\|us per call" $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt $OUT/bench_cuda.txt
head -n 60 $OUT/probe.txt
