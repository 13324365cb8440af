#!/usr/bin/env bash
# Issue 12 on the GPU machine, in one go: Release build, the C++ tests, the fingerprint of one
# result file, and short kernels timed without and with the blocking kernel, each in two
# processes, alternated so that drift does not favour one mode. About 2-3 minutes after the
# build. Writes every result file, the test log and summary.txt to $OUT.
#
#   OUT=/tmp/out scripts/gpu/verify_harness.sh        (on the device machine $OUT is set)
set -euo pipefail
source "$(dirname "$0")/start.sh" verify-out
rm -f "$OUT/wall.txt"
git rev-parse HEAD 2>/dev/null || true

echo "== C++ tests (the external-consumer builds left out: minutes of CPU, no GPU)"
if ctest --test-dir build -E external_consumer -j 8 --output-on-failure > "$OUT/ctest.log" 2>&1; then
  tail -3 "$OUT/ctest.log"
else
  grep -E "Failed|\*\*\*|tests passed" "$OUT/ctest.log" | tail -40
  echo "ctest FAILED (full log: ctest.log)"
fi

bench() {  # bench LABEL MODE PROCESS BINARY FILTER [flags...]
  local label=$1 mode=$2 process=$3 binary=$4 filter=$5
  shift 5
  local start
  start=$(date +%s.%N)
  timeout 180 "build/bench/kernelwatch_bench_$binary" --benchmark_filter="$filter" \
    --benchmark_repetitions=5 --kernelwatch_blocking_kernel="$mode" "$@" \
    --benchmark_out="$OUT/${label}_${mode}_p${process}.json" --benchmark_out_format=json \
    > "$OUT/${label}_${mode}_p${process}.log" 2>&1 ||
    { echo "!! $label $mode p$process failed:"; tail -5 "$OUT/${label}_${mode}_p${process}.log"; }
  echo "$label $mode $process $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" >> "$OUT/wall.txt"
}

echo "== short kernels, blocking kernel off (false) and on (true), 2 processes each"
for process in 1 2; do
  for mode in false true; do
    bench reduction "$mode" "$process" reduction 'n:1048576/'
    bench transpose "$mode" "$process" transpose '^transpose/(best|tiled|copy_rows)/rows:2048/cols:2048/'
    bench memcpy "$mode" "$process" coalescing '^coalescing/memcpy_d2d/'
    bench cublas "$mode" "$process" matmul '^matmul/cublas_sgemm/size:1024/'
    bench probe_cold "$mode" "$process" probe '^probe/empty_kernel/'
    bench probe_hot "$mode" "$process" probe '^probe/empty_kernel/' --kernelwatch_cache=hot
  done
done
echo "== host-bound transfers with the blocking kernel on (must not hang; rows carry host_bound)"
bench transfers true 1 transfers '^transfers/(h2d/pageable|d2h/pinned)/bytes:(4096|1048576)/'

python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def load(path):
    with open(path) as f:
        return json.load(f)
files = sorted(glob.glob(os.path.join(out, "*_p[12].json")))
if not files:
    sys.exit("no result files")
ctx = load(files[0])["context"]
print("\n== fingerprint (context of %s)" % os.path.basename(files[0]))
for key in sorted(ctx):
    if key.startswith(("host_", "gpu_")) or key == "kernelwatch_blocking_kernel":
        print("  %-36s %s" % (key, ctx[key]))
medians, busy, errors = {}, [], []
for path in files:
    label, mode, process = os.path.basename(path)[:-5].rsplit("_", 2)
    process = process[1:]
    for row in load(path)["benchmarks"]:
        if row.get("error_occurred") or row.get("skipped") is True:
            errors.append((os.path.basename(path), row["name"], row.get("error_message") or row.get("skip_message")))
            continue
        if row.get("run_type") != "iteration":
            continue
        name = row["run_name"] + ("" if label != "probe_hot" else " [hot]")
        medians.setdefault((name, mode, process), []).append(row["real_time"])
        if "other_gpus_max_utilization_percent" in row:
            busy.append(row["other_gpus_max_utilization_percent"])
        if label == "transfers" and row.get("host_bound") != 1:
            errors.append((os.path.basename(path), row["name"], "no host_bound counter"))
print("\n== medians of 5 repetitions (us); on/off: median over both processes")
print("%-62s %9s %9s %9s %9s %8s" % ("benchmark", "off p1", "off p2", "on p1", "on p2", "on/off"))
for name in sorted({k[0] for k in medians}):
    cells = [medians.get((name, m, p)) for m in ("false", "true") for p in ("1", "2")]
    meds = [statistics.median(c) if c else float("nan") for c in cells]
    off = [x for c in cells[:2] if c for x in c]
    on = [x for c in cells[2:] if c for x in c]
    ratio = (statistics.median(on) / statistics.median(off) - 1) * 100 if on and off else float("nan")
    print("%-62s %9.3f %9.3f %9.3f %9.3f %+7.2f%%" % (name[:62], *meds, ratio))
walls = {}
with open(os.path.join(out, "wall.txt")) as f:
    for line in f:
        label, mode, process, seconds = line.split()
        walls.setdefault((label, mode), []).append(float(seconds))
print("\n== wall time per process (s, whole binary: start-up, copy ceiling, sampling)")
for (label, mode), seconds in sorted(walls.items()):
    print("  %-12s %-6s %s" % (label, mode, " ".join("%.2f" % s for s in seconds)))
print("\nother GPUs' max utilization over all rows: %s %%" % (max(busy) if busy else "absent (no NVML?)"))
for e in errors:
    print("!! error row:", *e)
print("error rows: %d" % len(errors))
PY
