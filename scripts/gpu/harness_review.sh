#!/usr/bin/env bash
# Edge cases of the harness's timing that only a GPU answers (docs/measurement.md, "Edge cases of
# the timing"): do back-to-back events ever read 0 ms, does cudaFreeHost wait for queued work, is
# %smid below the SM count, does an instance's first repetition run at a lower clock; and the
# harness tests (the hang watchdog's GPU death tests among them), listing without a GPU, and a
# real run ended by SIGTERM.
# About a minute with the build on an H200. Writes probe.txt, reps.txt, the result files and
# summary.txt to $OUT.
#
#   OUT=/tmp/out scripts/gpu/harness_review.sh        (on the device machine $OUT is set)
set -euo pipefail
source "$(dirname "$0")/start.sh" review-out

echo "== harness tests (GPU ones included)"
build/tests/kernelwatch_harness_tests > "$OUT/harness_tests.log" 2>&1 && tail -3 "$OUT/harness_tests.log" ||
  { grep -E "FAILED|Failure" "$OUT/harness_tests.log" | head -20; echo "harness tests FAILED"; }
echo "== hang watchdog: kernels that never finish end their child process (exit 5) in ~2 s each"
grep -E "^\[ *(OK|FAILED|SKIPPED) *\] Watchdog" "$OUT/harness_tests.log" || echo "!! no watchdog test ran"

echo "== listing needs no GPU in every spelling Google Benchmark takes (expect exit 0 each)"
for flag in --benchmark_list_tests=on --benchmark_list_tests=True; do
  status=0
  CUDA_VISIBLE_DEVICES= build/bench/kernelwatch_bench_probe "$flag" > /dev/null 2>&1 || status=$?
  echo "$flag without a visible GPU: exit $status"
done

echo "== standalone probe: zero-time events, cudaFreeHost with pending work, %smid"
nvcc -std=c++17 -arch=native -o "$OUT/probe" scripts/gpu/harness_review_probe.cu
"$OUT/probe" | tee "$OUT/probe.txt" || echo "!! probe failed"

echo "== per repetition: does the first repetition of an instance run at a lower clock?"
# Each instance is verified (host work, the GPU idles) right before its first repetition.
timeout 300 build/bench/kernelwatch_bench_reduction \
  --benchmark_filter='^reduction/sum/.*/n:1048576/' --benchmark_repetitions=10 \
  --benchmark_out="$OUT/reduction.json" --benchmark_out_format=json > "$OUT/reduction.log" 2>&1 || echo "!! reduction run failed (reduction.log)"
timeout 300 build/bench/kernelwatch_bench_probe --benchmark_repetitions=10 \
  --benchmark_out="$OUT/probe_bench.json" --benchmark_out_format=json > "$OUT/probe_bench.log" 2>&1 || echo "!! probe run failed (probe_bench.log)"
python3 - "$OUT/reduction.json" "$OUT/probe_bench.json" <<'EOF' | tee "$OUT/reps.txt"
import json, sys
for path in sys.argv[1:]:
    rows = [r for r in json.load(open(path))["benchmarks"] if r.get("run_type") == "iteration"]
    by = {}
    for r in rows:
        by.setdefault(r["run_name"], []).append(r)
    for name, reps in by.items():
        first, rest = reps[0], reps[1:]
        med = sorted(r["real_time"] for r in rest)[len(rest) // 2]
        print(f"{name}: rep0 {first['real_time']:.3f} us at {first.get('sm_clock_mhz', 0):.0f} MHz, "
              f"{first.get('samples', 0):.0f} samples, {first.get('samples_throttled', 0):.0f} set aside; "
              f"reps 1-9 median {med:.3f} us ({100 * (first['real_time'] / med - 1):+.2f} %), clocks "
              f"{min(r.get('sm_clock_mhz', 0) for r in rest):.0f}-{max(r.get('sm_clock_mhz', 0) for r in rest):.0f} MHz")
EOF

echo "== SIGTERM (a cancelled CI job) during a real run: expect exit 143 and no benchmark left"
PYTHONPATH=tools python3 -m kernelwatch run --filter '^transpose/' --no-compare \
  --out "$OUT/sigterm.json" > "$OUT/sigterm.log" 2>&1 &
run_pid=$!
sleep 20
kill -TERM "$run_pid"
status=0
wait "$run_pid" || status=$?
echo "kernelwatch run: exit $status; its last line: $(tail -1 "$OUT/sigterm.log")"
sleep 1
pgrep -fa 'bench/kernelwatch_bench_' || echo "no benchmark process left"
echo "compute processes on the GPU: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
