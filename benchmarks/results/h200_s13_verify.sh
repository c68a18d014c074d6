# Session 13: re-check the raw Vulkan fixes on NVIDIA (SRem spelling, full descriptor pools), bounded
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=line --timeout 60"
POOT_KERNEL_DEVICES=vulkan timeout -s INT 35 $P -n 16 tests/devices/test_vulkan_device.py tests/devices/test_vulkan_spirv.py \
    tests/devices/test_cpu_dispatch.py tests/test_import_run.py tests/test_kernel_semantics.py > $OUT/vulkan_kernels.txt 2>&1
POOT_TEST_DEVICES=vulkan timeout -s INT 80 $P -n 16 tests/trace/test_parity_indexing.py tests/trace/test_parity_reductions.py \
    tests/trace/test_parity_creation.py tests/trace/test_jit.py tests/trace/test_parity_elementwise.py \
    -k "indexing or reductions or creation or jit or remainder or floor_divide or exp or log" > $OUT/parity_vulkan.txt 2>&1
tail -n 4 $OUT/*.txt
