# Device memory of every process of one `bench_pair` (judge, reference, solution), sampled every
# 0.25 s by a thread that sitecustomize.py starts in each (PYTHONPATH puts it first), in three
# variants: as is, with expandable segments, and with a gc.collect() at every sample.
#   bash bench/runner/memory_probe/run.sh [OPERATOR]     # on the H200, from the repository root; $OUT
# Writes $OUT/probe-VARIANT/mem-PID.txt (time, GiB allocated, GiB reserved, gc counts) and out.txt.
cd "$(dirname "$0")/../../.."
operator=${1:-kernels/level1/23_softmax}
for v in plain expandable gc; do
  mkdir -p "$OUT/probe-$v"; export PROBE_DIR="$OUT/probe-$v"
  ( unset PYTORCH_CUDA_ALLOC_CONF PROBE_GC
    [ $v = expandable ] && export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    [ $v = gc ] && export PROBE_GC=1
    PYTHONPATH="$PWD/bench/runner/memory_probe:$PWD" timeout 75 python3 -c "
import json, sys, time
from ladder.runner.bench import bench_pair
started = time.time()
r = bench_pair('$operator/solution.py', '$operator/problem.py', backend='cuda')
print(json.dumps({'ok': r['ok'], 's': time.time() - started,
                  'median_ms': [c.get('time_ms') and c['time_ms']['median'] for c in r['cases']]}))
" > "$OUT/probe-$v/out.txt" 2>&1 ); echo "$v rc $?"; tail -c 600 "$OUT/probe-$v/out.txt"; echo
done
