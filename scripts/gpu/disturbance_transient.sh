#!/usr/bin/env bash
# On the GPU machine: a disturbance that comes and goes inside one round of `run` (docs/running.md,
# "Other processes on the GPU"), which nvidia-smi between rounds cannot see. Another process
# (CuPy, 8192² float matrix multiplies) computes on the GPU for HOLD s, from DELAY s after the
# first measuring process of `run --filter '^matmul/' --anchor never` starts (the run's start is
# no clock: what came before its rounds took 7 s on one H200 and 12 s on another, and a load
# timed from it missed the rounds); the harness's own monitor must count it
# (other_processes_on_gpu) and the run name the benchmarks it ran during. Then the harness's GPU
# test of the same (DisturbanceMonitor.*), and `baseline update` of the result (refused).
#
#   OUT=DIR [DELAY=0.5] [HOLD=1.5] scripts/gpu/disturbance_transient.sh
#     (DIR/r.json, run.log, update.log, load.log, monitor_test.log)
set -uo pipefail
BUILD_TARGET=kernelwatch_bench_matmul source "$(dirname "$0")/start.sh" results/disturbance-transient
cmake --build --preset release -j --target kernelwatch_harness_tests >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
DELAY=${DELAY:-0.5} HOLD=${HOLD:-1.5}
rm -f "$OUT/r.json" "$OUT/go"
OUT="$OUT" HOLD="$HOLD" python3 - > "$OUT/load.log" 2>&1 <<'PY' &
import os, time
import cupy as cp  # no CUDA context until the first array
out, hold = os.environ["OUT"], float(os.environ["HOLD"])
while not os.path.exists(f"{out}/go"):
    time.sleep(0.01)
start = time.time()
a = cp.random.rand(8192, 8192, dtype=cp.float32)
b = cp.random.rand(8192, 8192, dtype=cp.float32)
n = 0
while time.time() - start < hold:
    c = a @ b
    cp.cuda.Device().synchronize()
    n += 1
print("pid", os.getpid(), "matmuls", n, "from", start, "to", time.time())
PY
load=$!
started=$(date +%s.%N)
(until pgrep -f "kernelwatch_bench_matmul .*--benchmark_out=" > /dev/null; do sleep 0.05; done
 sleep "$DELAY"; touch "$OUT/go") &
PYTHONPATH=tools python3 -m kernelwatch run --filter '^matmul/' --anchor never --out "$OUT/r.json" > "$OUT/run.log" 2>&1
echo "run: exit $? (started $started, ended $(date +%s.%N))"
touch "$OUT/go"  # (a load never started, its process never seen: it runs now, after the run)
wait "$load"
cat "$OUT/load.log"
grep -c "seen by the harness" "$OUT/run.log" | sed 's/^/harness findings said: /'
# (the harness's own findings name a pid too, since d921236: "pid 1322: python3, seen by ...")
grep "(pid [0-9]*:" "$OUT/run.log" | grep -vc "seen by the harness" | sed 's/^/nvidia-smi findings said: /'
mkdir -p "$OUT/baselines"
PYTHONPATH=tools python3 -m kernelwatch baseline update "$OUT/r.json" --filter '^matmul/' --baselines "$OUT/baselines" > "$OUT/update.log" 2>&1
echo "baseline update: exit $?"
build/tests/kernelwatch_harness_tests --gtest_filter='DisturbanceMonitor.*' > "$OUT/monitor_test.log" 2>&1
echo "monitor test: exit $?"
tail -4 "$OUT/monitor_test.log"
