# Session 17, second H200 call: the cached-realize overhead of the tree before this session (61541a5,
# carried in .old) and now, alternated, on the CPU and CUDA of the H200 host; then the parity and kernel
# suites on raw Vulkan over NVIDIA (the vulkan bindings carried as a wheel). Carry [".whl", ".gl", ".old"].
end=$((SECONDS+540)); left() { echo $(( end - SECONDS - $1 )); }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
for round in 1 2; do for tree in .old .; do
  echo "tree $tree round $round"; POOT_CACHE_DIR=/tmp/cache_ovh PYTHONPATH=/tmp/site:$PWD/$tree timeout 60 \
      python3 benchmarks/results/h200_s17_overhead.py 2>&1 | grep -v "^wgpu\|^vulkan"
done; done > $OUT/overhead_ab.txt
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 120"
S="tests/trace tests/scripts tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py
   tests/devices/test_grid.py tests/jit/test_gpu_schedules.py tests/fuse/test_plan.py tests/devices/test_vulkan_device.py"
POOT_CACHE_DIR=/tmp/cache_vulkan POOT_TEST_DEVICES=vulkan POOT_KERNEL_DEVICES=vulkan timeout -s INT $(left 5) \
    $P -n 14 $S > $OUT/parity_vulkan.txt 2>&1
cat $OUT/overhead_ab.txt; grep -h "^FAILED\|^ERROR" $OUT/parity_vulkan.txt | head -8; tail -n 1 $OUT/parity_vulkan.txt
