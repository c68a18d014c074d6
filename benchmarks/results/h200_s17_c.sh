# Session 17, third H200 call: the native CPU thread pool on the host's 16 cores: its tests and the CPU
# parity suites, then CPU launches of every size with the tree before this session (61541a5, carried in
# .old) and now, alternated (h200_s17_cpu.py). Carry [".old"].
export PYTHONUNBUFFERED=1 POOT_CACHE_DIR=/tmp/pootcache
P="python3 -m pytest -q -p no:cacheprovider -p no:benchmark -rfE --tb=short"
PYTHONPATH=$PWD timeout 200 $P tests/devices/test_cpu_threads.py tests/devices/test_cpu_dispatch.py \
    tests/devices/test_cpu_replay.py tests/jit/test_cpu_streams.py tests/trace tests/scripts -n 4 > $OUT/cpu_tests.txt 2>&1
for round in 1 2; do for tree in .old .; do
  PYTHONPATH=$PWD/$tree timeout 150 python3 benchmarks/results/h200_s17_cpu.py
done; done > $OUT/cpu_sizes.txt 2>&1
grep -h "^FAILED\|^ERROR" $OUT/cpu_tests.txt | head; tail -n 1 $OUT/cpu_tests.txt; cat $OUT/cpu_sizes.txt
