#!/usr/bin/env bash
# On the GPU machine: do the processes of `run --no-interleave` sit closer together than
# interleaved ones? (docs/measurement.md, "An anchor's two processes": the +2 % slow mode of the
# 64 Mi sums came with random interleaving.) The reduction family (or FILTER's benchmarks),
# ROUNDS rounds of four runs,
# interleaved, not, not, interleaved (a drift of the card over time falls on both alike), each
# PROCESSES processes of 5 repetitions without top-ups; scripts/process_levels.py prints the
# spread and steps of the processes' levels per setting, scripts/precision_table.py the A/A.
#
#   OUT=DIR ROUNDS=1 PROCESSES=4 scripts/gpu/interleaving_aa.sh
#   FILTER='^(coalescing|transpose|reduction|matmul|shared_banks|occupancy|local_memory|probe)/' ...
set -uo pipefail
[ -n "${FILTER:-}" ] || BUILD_TARGET=kernelwatch_bench_reduction
source "$(dirname "$0")/start.sh" results/interleaving
processes=${PROCESSES:-4}
measure() {  # NAME [run options]
  local name=$1 started status; shift
  started=$(date +%s)
  PYTHONPATH=tools python3 -m kernelwatch run --build-dir build --filter "${FILTER:-^reduction/}" \
    --no-compare --top-ups 0 --processes "$processes" --repetitions $((5 * processes)) \
    --out "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
  status=$?
  echo "== $name: exit $status, $(( $(date +%s) - started )) s"
}
for round in $(seq 1 "${ROUNDS:-1}"); do
  measure "interleaved-$round-a"
  measure "ordered-$round-a" --no-interleave
  measure "ordered-$round-b" --no-interleave
  measure "interleaved-$round-b"
done
PYTHONPATH=tools python3 scripts/process_levels.py "$OUT"/*.json
PYTHONPATH=tools python3 scripts/precision_table.py "interleaved, 1st=$OUT/interleaved-1-a.json" \
  "interleaved, 2nd=$OUT/interleaved-1-b.json" "ordered, 1st=$OUT/ordered-1-a.json" \
  "ordered, 2nd=$OUT/ordered-1-b.json"
