#!/usr/bin/env bash
# nvbench and kernelwatch on one H200, one after the other, three processes each: a 256 MiB
# device-to-device cudaMemcpy (nvbench's cold measurement; kernelwatch's coalescing/memcpy_d2d,
# default settings). Needs the cuda-bench wheel in .whl/ and a Release build in build/.
# Arguments go to nvbench, e.g. --axis 'spacer_mib=[0,1,64,1024]' (nvbench_memcpy.py's axes).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/side-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
elapsed() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$1"; }
for k in 1 2 3; do
  start=$(date +%s.%N)
  PYTHONPATH=/tmp/site python3 scripts/gpu/nvbench_memcpy.py --json "$OUT/nvbench-$k.json" "$@" \
    > "$OUT/nvbench-$k.log" 2>&1 || tail -5 "$OUT/nvbench-$k.log"
  echo "nvbench $k wall $(elapsed "$start") s"
  start=$(date +%s.%N)
  build/bench/kernelwatch_bench_coalescing --benchmark_filter='^coalescing/memcpy_d2d/' \
    --benchmark_repetitions=5 --benchmark_out="$OUT/kernelwatch-$k.json" \
    --benchmark_out_format=json > "$OUT/kernelwatch-$k.log" 2>&1 || tail -5 "$OUT/kernelwatch-$k.log"
  echo "kernelwatch $k wall $(elapsed "$start") s"
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def summaries(state):
    return {s["tag"]: {d["name"]: d["value"] for d in s["data"]} for s in state["summaries"]}
print("\nnvbench (cold GPU time)            mean       samples")
for path in sorted(glob.glob(os.path.join(out, "nvbench-*.json"))):
    for state in json.load(open(path))["benchmarks"][0]["states"]:
        s = summaries(state)
        mean = float(s["nv/cold/time/gpu/mean"]["value"]) * 1e6
        n = s.get("nv/cold/sample_size", {}).get("value")
        noise = s.get("nv/cold/time/gpu/stdev/relative", {}).get("value")
        axes = " ".join(f"{a['name']}={a['value']}" for a in state.get("axis_values", []))
        print(f"  {os.path.basename(path):24s} {mean:9.3f} us  {n} (rel. stdev {noise})  {axes}")
print("kernelwatch (median of 5 repetitions, each a median of its samples)")
for path in sorted(glob.glob(os.path.join(out, "kernelwatch-*.json"))):
    rows = [r for r in json.load(open(path))["benchmarks"] if r.get("run_type") == "iteration"]
    times = [r["real_time"] for r in rows]
    print(f"  {os.path.basename(path):24s} {statistics.median(times):9.3f} us  "
          f"samples {[int(r['samples']) for r in rows]}")
PY
