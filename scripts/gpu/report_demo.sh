#!/usr/bin/env bash
# The real result files behind the two report screenshots in docs/ (docs/report.md,
# docs/running.md); scripts/report_screenshots.py draws the pages and takes the screenshots on
# any machine from what this leaves in $OUT. About 5 minutes on an H200 with the builds.
#
#   report-demo.tgz, holding:
#   history-demo/run-{1..5}.json
#       five runs of 11 transpose benchmarks (8192 x 8192), the binary rebuilt before each with
#       KERNELWATCH_GIT_COMMIT=demo-N so that each run names its own "commit". The code is the
#       same in all five: runs 3-5 slow transpose/best down by 20 % on purpose
#       (--kernelwatch_inject, recorded in their context), which gives the history a change
#       point at demo-3 without pretending to be a code change.
#   explain/padding/{A,B}/round-*.json, explain/padding.explanations.json
#       scripts/gpu/explain_demo.sh's first case on the same benchmarks: transpose/best
#       without its shared-memory padding (a scratch commit), ab with ncu and the SASS diff.
#
#   OUT=/tmp/out scripts/gpu/report_demo.sh       (on the device machine $OUT is set)
set -euo pipefail
BUILD_TARGET=kernelwatch_bench_transpose source "$(dirname "$0")/start.sh" report-demo-out
FILTER='^transpose/(copy_rows|naive_rows|naive_columns|tiled|tiled_padded|best)/rows:8192/cols:8192/'
kw() { PYTHONPATH=tools python3 -m kernelwatch "$@"; }

echo "== history demo: 5 runs of $FILTER, transpose/best slowed 20 % on purpose in runs 3-5"
mkdir -p "$OUT/history-demo"
rm -f "$OUT/history.sqlite"
for i in 1 2 3 4 5; do
  KERNELWATCH_GIT_COMMIT=demo-$i cmake --build --preset release --target kernelwatch_bench_transpose \
    > "$OUT/history-demo/build-$i.log" 2>&1 || { tail -30 "$OUT/history-demo/build-$i.log"; exit 1; }
  inject=()
  ((i >= 3)) && inject=(--bench-arg=--kernelwatch_inject=^transpose/best/:0.2)
  start=$(date +%s)
  kw run --bench build/bench/kernelwatch_bench_transpose --filter "$FILTER" --max-time 0.1 \
    "${inject[@]}" --no-compare --out "$OUT/history-demo/run-$i.json" > "$OUT/history-demo/run-$i.log" 2>&1 ||
    { echo "run $i failed:"; tail -20 "$OUT/history-demo/run-$i.log"; exit 1; }
  echo "run $i (demo-$i${inject:+, slowed}): $(( $(date +%s) - start )) s"
  kw history ingest "$OUT/history-demo/run-$i.json" --db "$OUT/history.sqlite"
done
kw history changes --db "$OUT/history.sqlite" || true  # exit 1 when it finds a change: wanted here
kw report "$OUT/history-demo/run-5.json" --db "$OUT/history.sqlite" -o "$OUT/history-demo.html"

echo "== explain demo: transpose/best without its padding, on the same benchmarks"
start=$(date +%s)
OUT="$OUT/explain" DEMOS=padding PADDING_FILTER="$FILTER" scripts/gpu/explain_demo.sh
echo "explain demo: $(( $(date +%s) - start )) s"
# One file back (the device returns a few files only): what report_screenshots.py --import takes.
tar czf "$OUT/report-demo.tgz" -C "$OUT" history-demo/run-1.json history-demo/run-2.json \
  history-demo/run-3.json history-demo/run-4.json history-demo/run-5.json explain/padding/A \
  explain/padding/B explain/padding.explanations.json
rm -rf "$OUT/history-demo" "$OUT/explain"
ls -la "$OUT/report-demo.tgz"
