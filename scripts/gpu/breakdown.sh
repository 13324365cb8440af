#!/usr/bin/env bash
# On the GPU machine: where the suite's wall time goes (docs/measurement.md, "Where the time
# goes"). Runs `kernelwatch run` as `tools/kw suite` does, with the harness's timeline on, and
# prints scripts/gpu/wall_breakdown.py's table. Options go to `kernelwatch run`. Not anchored
# (--anchor never; pass --anchor auto to time that too): on a card the baseline never held, the
# run at c2e9ee4's tree went on to build and measure the baseline's commit.
#
#   OUT=DIR scripts/gpu/breakdown.sh [--processes 2 ...]     (DIR/timeline.tar.gz, result.json,
#                                                             breakdown.json, run.log, summary.txt)
set -uo pipefail
source "$(dirname "$0")/start.sh" results/breakdown
timeline=$(mktemp -d)
started=$(date +%s.%N)
KERNELWATCH_TIMELINE="$timeline" PYTHONPATH=tools python3 -m kernelwatch run --build-dir build \
  --out "$OUT/result.json" --anchor never "$@" >"$OUT/run.log" 2>&1
status=$?
wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)")
tail -5 "$OUT/run.log"
echo "== kernelwatch run: exit $status, ${wall} s"
python3 scripts/gpu/wall_breakdown.py "$timeline" --wall "$wall" --json "$OUT/breakdown.json"
tar -czf "$OUT/timeline.tar.gz" -C "$timeline" .
