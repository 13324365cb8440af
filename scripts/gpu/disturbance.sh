#!/usr/bin/env bash
# On the GPU machine: a one-off disturbance (docs/running.md, "Other processes on the GPU", and
# the re-runs of step 6). Another process (CuPy, 8192² float matrix multiplies) computes on the
# GPU from before `run --filter '^matmul/' --anchor never` starts until the run writes its
# result, so its first pass is slowed and its confirming re-run is not; then `compare` of the
# saved result, and `baseline update` of it (refused: measured beside another process).
#
#   OUT=DIR scripts/gpu/disturbance.sh     (DIR/r.json, r.confirm-1.json, run.log, compare.log,
#                                           update.log, smi.txt, load.log)
set -uo pipefail
BUILD_TARGET=kernelwatch_bench_matmul source "$(dirname "$0")/start.sh" results/disturbance
rm -f "$OUT/r.json" "$OUT/load.started"
OUT="$OUT" python3 - > "$OUT/load.log" 2>&1 <<'PY' &
import os, time
import cupy as cp
out = os.environ["OUT"]
a = cp.random.rand(8192, 8192, dtype=cp.float32)
b = cp.random.rand(8192, 8192, dtype=cp.float32)
open(f"{out}/load.started", "w").close()
n = 0
while not os.path.exists(f"{out}/r.json"):
    for _ in range(2):
        c = a @ b
    cp.cuda.Device().synchronize()
    n += 2
print("matmuls", n, "stopped", time.time())
PY
for _ in $(seq 60); do [ -e "$OUT/load.started" ] && break; sleep 0.5; done
{ time nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name --format=csv,noheader; } > "$OUT/smi.txt" 2>&1
PYTHONPATH=tools python3 -m kernelwatch run --filter '^matmul/' --anchor never --out "$OUT/r.json" > "$OUT/run.log" 2>&1
echo "run: exit $?"
wait
PYTHONPATH=tools python3 -m kernelwatch compare baselines/nvidia-h200-sm90 "$OUT/r.json" > "$OUT/compare.log" 2>&1
echo "compare: exit $?"
mkdir -p "$OUT/baselines"
PYTHONPATH=tools python3 -m kernelwatch baseline update "$OUT/r.json" --filter '^matmul/' --baselines "$OUT/baselines" > "$OUT/update.log" 2>&1
echo "baseline update: exit $?"
cat "$OUT/load.log"
