#!/usr/bin/env bash
# On the GPU machine: does `run` interleave as its baseline was measured (docs/running.md)?
# FILTER's benchmarks (default: the reductions whose medians the setting moves, and short
# ones), measured once with --no-interleave as a baseline, in a --baseline file and in a
# baselines folder of its own; then run without a flag against each (off, saying so), with
# --gpus all (one line per GPU), against the project's baseline (as it was measured: the
# committed ones are interleaved, no line) and with --interleave (on, and the verdict warns
# that the settings differ). Each run's exit status, its line and its context's setting are
# printed.
#
#   OUT=DIR scripts/gpu/follow_baseline.sh
set -uo pipefail
[ -n "${BUILD_TARGET:-}" ] || BUILD_TARGET=kernelwatch_bench_reduction
source "$(dirname "$0")/start.sh" results/follow-baseline
export PYTHONPATH=$PWD/tools KERNELWATCH_LOCK_DIR=$OUT/locks
filter=${FILTER:-^reduction/sum/(warp_shuffle|vectorized)/}
measure() {  # NAME [run options]
  local name=$1 status; shift
  python3 -m kernelwatch run --build-dir build --filter "$filter" --processes 2 \
    --repetitions 10 --top-ups 0 --anchor never --out "$OUT/$name.json" "$@" \
    > "$OUT/$name.log" 2>&1
  status=$?
  echo "== $name ($*): exit $status"
  grep -h "random interleaving" "$OUT/$name.log"
  for f in "$OUT/$name".json "$OUT/$name"-gpu*.json; do
    [ -f "$f" ] && python3 -c "import json, sys
print(sys.argv[1].rsplit('/', 1)[-1] + ': context says random interleaving',
      json.load(open(sys.argv[1]))['context'].get('kernelwatch_random_interleaving'))" "$f"
  done
  tail -4 "$OUT/$name.log"
}
measure base --no-compare --no-interleave
mkdir -p "$OUT/baselines"
python3 -m kernelwatch baseline update --baselines "$OUT/baselines" --filter "$filter" \
  "$OUT/base.json" > "$OUT/update.log" 2>&1
echo "== baseline update: exit $?"
measure as-file --baseline "$OUT/base.json"
measure as-folder --baselines "$OUT/baselines"
measure gpus-all --baseline "$OUT/base.json" --gpus all
measure project
measure chosen --baseline "$OUT/base.json" --interleave
