#!/usr/bin/env bash
# Issue 17 (C++ surface) on the GPU machine: Release build, the C++ tests (GPU ones included, and
# the installed-package consumer), then one short run of three families whose rows declare
# different work, checked for the counters each kind of row must carry now that every rate is
# computed by detail::compute_counters. About 1 minute after the build; files land in $OUT.
#
#   OUT=/tmp/out scripts/gpu/verify_counters.sh        (on the device machine $OUT is set)
set -euo pipefail
source "$(dirname "$0")/start.sh" verify-out

echo "== C++ tests (harness on the GPU, and the consumer of the installed package)"
if ctest --test-dir build -E "external_consumer[.](subdirectory|fetchcontent)" -j 8 \
     --output-on-failure > "$OUT/ctest.log" 2>&1; then
  tail -3 "$OUT/ctest.log"
else
  grep -E "Failed|\*\*\*|tests passed" "$OUT/ctest.log" | tail -40
  echo "ctest FAILED (full log: ctest.log)"
fi

echo "== counters of one short run per family"
while read -r family filter; do
  build/bench/kernelwatch_bench_$family --benchmark_filter="$filter" --benchmark_repetitions=2 \
    --kernelwatch_max_time=0.02 --benchmark_out="$OUT/$family.json" \
    --benchmark_out_format=json > "$OUT/$family.console.txt" 2>&1 || echo "$family: exit $?"
done <<'RUNS'
coalescing memcpy_d2d|offset/float/offset:(0|1)/|stride/double/stride:2/
transfers bytes:(65536|16777216)/|overlap/streams:1/
shared_banks read/u32/stride:(1|2|32)/
RUNS
python3 - "$OUT" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
problems = 0
for family, must, never in [
    ("coalescing", {"bytes_per_second", "peak_fraction", "ceiling_fraction"}, set()),
    ("transfers", {"bytes_per_second"}, {"peak_fraction", "ceiling_fraction"}),
    ("shared_banks", {"shared_bytes_per_second", "shared_bytes_per_second_per_sm"}, set()),
]:
    data = json.loads((out / f"{family}.json").read_text())
    ceiling = float(data["context"]["kernelwatch_copy_ceiling_bytes_per_second"])
    rows = [r for r in data["benchmarks"] if r.get("run_type") == "iteration"]
    for row in rows:
        keys = set(row)
        bad = (must - keys) | (never & keys)
        values = [row[k] for k in must & keys]
        if bad or not all(math.isfinite(v) and v > 0 for v in values):
            problems += 1
            print(f"BAD {row['name']}: missing/unexpected {sorted(bad)}")
        if "ceiling_fraction" in row:
            expect = row["bytes_per_second"] / ceiling
            if abs(row["ceiling_fraction"] / expect - 1) > 1e-6:  # the context rounds the ceiling
                problems += 1
                print(f"BAD {row['name']}: ceiling_fraction {row['ceiling_fraction']} vs {expect}")
    print(f"{family}: {len(rows)} rows checked")
print("counters OK" if problems == 0 else f"counters: {problems} problems")
PY
