#!/usr/bin/env bash
# On the GPU machine: the same-card precision of two harnesses (docs/measurement.md, "Where the
# time goes"): commit BEFORE built in a worktree and run with its own runner, then this
# checkout, then this checkout again, each over the GPU-bound families with run's defaults
# (--no-compare), one after the other on one card; scripts/precision_table.py prints the table.
#
#   BEFORE=86c2068 OUT=DIR scripts/gpu/precision.sh     (DIR/before.json, after-1.json, ...)
#   FILTER='^occupancy/' ...                             (other families than the GPU-bound ones)
#   BEFORE=. BEFORE_ARGS='--max-time 0.1' AFTER_ARGS='--max-time 0.05' ...
#                                 (this checkout both times: two settings of run, not two commits)
set -uo pipefail
source "$(dirname "$0")/start.sh" results/precision
before=${BEFORE:-86c2068}
old=$PWD
if [ "$before" != . ]; then
  old=$(mktemp -d)/before
  git worktree add -f "$old" "$before" > /dev/null || exit 1
  (cd "$old" && cmake --preset release > "$OUT/configure-before.log" 2>&1 &&
    cmake --build --preset release -j > "$OUT/build-before.log" 2>&1) || { tail -30 "$OUT/build-before.log"; exit 1; }
fi
families=${FILTER:-'^(coalescing|transpose|reduction|matmul|shared_banks|occupancy|local_memory|probe)/'}
measure() {  # NAME TREE [run options]
  local name=$1 tree=$2 started status; shift 2
  started=$(date +%s)
  PYTHONPATH="$tree/tools" python3 -m kernelwatch run --build-dir "$tree/build" --filter "$families" \
    --no-compare --out "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
  status=$?
  echo "== $name ($(git -C "$tree" rev-parse --short HEAD)): exit $status, $(( $(date +%s) - started )) s"
}
# shellcheck disable=SC2086  # the settings are words
measure after-1 "$PWD" --anchor never ${AFTER_ARGS:-}
measure before "$old" ${BEFORE_ARGS:-}
measure after-2 "$PWD" --anchor never ${AFTER_ARGS:-}
PYTHONPATH=tools python3 scripts/precision_table.py "before=$OUT/before.json" \
  "after, 1st=$OUT/after-1.json" "after, 2nd=$OUT/after-2.json"
[ "$before" = . ] || git worktree remove --force "$old"
