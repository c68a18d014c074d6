# Session 14: the parity suite (tests/trace, tests/scripts) and the kernel suites on each GPU device of the
# H200 in one call (test_cuda.py runs alone: h200_e2s14_final.sh; its out-of-memory test takes the whole GPU): cuda, raw vulkan and wgpu run side by side (16 cores split 6/5/5), each bounded (SIGINT
# makes pytest print its summary when time runs out). Run: bash benchmarks/results/h200_s14_parity.sh
# with carry [".whl", ".gl"] (shared/tools/device-carry.sh).
T=${T:-470}
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
{ nvidia-smi -L; python3 -m poot devices; } > $OUT/env.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short --timeout 120"
KERNELS="tests/test_import_run.py tests/test_macro_kernel.py tests/test_kernel_semantics.py"
run() {   # device, workers, extra paths
    d=$1; n=$2; shift 2
    POOT_CACHE_DIR=/tmp/cache_$d POOT_TEST_DEVICES=$d POOT_KERNEL_DEVICES=$d timeout -s INT $T \
        $P -n $n tests/trace tests/scripts $KERNELS "$@" > $OUT/parity_$d.txt 2>&1
}
run cuda 6 tests/devices/test_grid.py tests/jit/test_ptx.py tests/jit/test_gpu_schedules.py &
run vulkan 5 tests/devices/test_vulkan_device.py tests/devices/test_vulkan_spirv.py &
run wgpu 5 tests/devices/test_wgpu_device.py tests/devices/test_wgpu_spirv.py tests/devices/test_wgpu_spirv_naga.py &
wait
tail -n 3 $OUT/*.txt
