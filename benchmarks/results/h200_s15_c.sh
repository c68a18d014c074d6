# Session 15, third H200 call (about 4 minutes): the SPIR-V schedule probe (wgpu with 4-byte accesses,
# committed), the wgpu benchmarks (poot-kernels rows), raw Vulkan beside wgpu, and all CUDA benchmarks
# beside PyTorch eager and torch.compile (GEMV one per realize and five per jitted replay). Carry [".whl", ".gl"].
end=$((SECONDS+330)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
timeout 100 python3 benchmarks/results/h200_s15_spirv_probe.py > $OUT/spirv_probe.txt 2>$OUT/spirv_probe.err
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/wgpu-h200.json timeout $(left 200) python3 -m pytest -q $B benchmarks/bench_wgpu_elementwise.py \
    benchmarks/bench_wgpu_reductions.py > $OUT/bench_wgpu.txt 2>&1
POOT_BENCH_OUT=$OUT/vulkan-h200.json timeout $(left 170) python3 -m pytest -q $B benchmarks/bench_vulkan.py \
    > $OUT/bench_vulkan.txt 2>&1
POOT_BENCH_OUT=$OUT/cuda-h200.json timeout $(left 3) python3 -m pytest -q $B benchmarks/bench_cuda_elementwise.py \
    benchmarks/bench_cuda_reductions.py benchmarks/bench_cuda_gemv.py benchmarks/bench_cuda_overhead.py \
    > $OUT/bench_cuda.txt 2>&1
tail -n 2 $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt $OUT/bench_cuda.txt
cat $OUT/spirv_probe.txt; tail -n 2 $OUT/spirv_probe.err
grep -h "GB/s\|TB/s\|us per call" $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt $OUT/bench_cuda.txt
