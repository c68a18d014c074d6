# Session 15, fifth H200 call (about 2.5 minutes): the wgpu and raw Vulkan benchmarks again, now with half a
# second of the same kernels before each timing (the clocks drop after a second idle), and the SPIR-V probe.
# Carry [".whl", ".gl"].
end=$((SECONDS+200)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
B="-p no:cacheprovider --benchmark-group-by=group --benchmark-columns=min,median,rounds -s -rfE --tb=short"
POOT_BENCH_OUT=$OUT/wgpu-h200.json timeout $(left 90) python3 -m pytest -q $B benchmarks/bench_wgpu_elementwise.py \
    benchmarks/bench_wgpu_reductions.py > $OUT/bench_wgpu.txt 2>&1
POOT_BENCH_OUT=$OUT/vulkan-h200.json timeout $(left 50) python3 -m pytest -q $B benchmarks/bench_vulkan.py \
    > $OUT/bench_vulkan.txt 2>&1
timeout $(left 3) python3 benchmarks/results/h200_s15_spirv_probe.py > $OUT/spirv_probe.txt 2>$OUT/spirv_probe.err
tail -n 2 $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt
grep -h "GB/s\|TB/s" $OUT/bench_wgpu.txt $OUT/bench_vulkan.txt; cat $OUT/spirv_probe.txt
