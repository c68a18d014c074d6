# Session 15, sixth H200 call (about 4 minutes): the GEMV schedule sweep timed by CUDA-graph replays
# (h200_s15_gemv.py), then the SPIR-V sum with fewer pieces per row. Carry [".whl", ".gl"].
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:$PWD/benchmarks XDG_RUNTIME_DIR=/tmp POOT_CACHE_DIR=/tmp/pootcache PYTHONUNBUFFERED=1
SWEEP_SECONDS=150 timeout 200 python3 benchmarks/results/h200_s15_gemv.py > $OUT/gemv_sweep.txt 2>&1
PROBE_PIECES=1 timeout 60 python3 benchmarks/results/h200_s15_spirv_probe.py > $OUT/spirv_pieces.txt 2>$OUT/spirv_pieces.err
cat $OUT/gemv_sweep.txt $OUT/spirv_pieces.txt; tail -n 3 $OUT/spirv_pieces.err
