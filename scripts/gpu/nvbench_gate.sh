#!/usr/bin/env bash
# The nvbench example gated end to end on one GPU (issue #32; docs/ci.md, "Gating an nvbench
# project"), no network needed:
#   1. installs the cuda-bench wheel (nvbench's C++ headers, libnvbench, CMake config) from
#      .whl/ (else .kernelwatch/dev/) and builds examples/nvbench twice, Release: as it is, and
#      with -DEXAMPLE_SLOW=ON (the transpose's tile unpadded: a real change to that kernel only);
#   2. runs the unchanged build twice, in two processes, with --jsonbin, stamps each file with
#      the commit, date and card (examples/nvbench/stamp.py) and makes the baseline of both
#      (kernelwatch baseline update, into $OUT/baselines) and their history (history ingest);
#   3. runs the unchanged build a third time and compares it with the baseline: exit 0 expected;
#   4. runs the slowed build and compares it: exit 1 expected, the REGRESSION rows naming
#      `transpose` only; writes the pull-request comment body; ingests both into the history.
# Everything lands in $OUT (default: ./nvbench-gate-out); summary.txt has the GPUs, the commit,
# each exit status and the verdict. Exit 0 when the gate behaved as expected, else 1.
# Usage, from the repository root: scripts/gpu/nvbench_gate.sh   (about a minute on an H100)
#   [OUT=DIR] [KERNELWATCH_GIT_COMMIT=SHA] (the commit to stamp; default: git HEAD)
set -uo pipefail

start=$SECONDS
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/nvbench-gate-out}
SITE=${SITE:-/tmp/nvbench-gate-site}
BUILD=${BUILD:-/tmp/nvbench-gate-build}
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
RUNS=$OUT/runs
# A few samples per state: at least 20, stop at 1 % noise once 0.05 s of samples are taken,
# never more than 2 s a state (6 states: well under 10 s a run).
LIMITS=(--min-samples 20 --min-time 0.05 --max-noise 1 --timeout 2 --no-batch)
export PYTHONPATH=$REPO/tools${PYTHONPATH:+:$PYTHONPATH}
export NO_COLOR=1
kw() { python3 -m kernelwatch "$@"; }
say() { printf '\n=== [%3ds] %s\n' "$((SECONDS - start))" "$*"; }
# The commit stamped on every run: KERNELWATCH_GIT_COMMIT when set (a copy of the tree whose
# .git lags behind it), else the checkout's HEAD.
COMMIT=${KERNELWATCH_GIT_COMMIT:-$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)}
DIRTY=$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
SUMMARY=$OUT/summary.txt
{
  echo "nvbench gate: examples/nvbench, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $COMMIT"
  echo "checkout: HEAD $(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo none), $DIRTY tracked file(s) changed"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
  nvcc --version | tail -1
  cmake --version | head -1
  python3 --version
} 2>&1 | tee "$SUMMARY"

say "install the cuda-bench wheel into $SITE"
wheels=("$REPO"/.whl/*.whl)
[ -e "${wheels[0]}" ] || wheels=("$REPO"/.kernelwatch/dev/cuda_bench-*.whl)
if [ ! -e "${wheels[0]}" ]; then
  echo "no wheel in .whl/ or .kernelwatch/dev/: put cuda_bench-0.3.0-*.whl there" | tee -a "$SUMMARY"
  exit 1
fi
rm -rf "$SITE"
if ! python3 -m pip install -q --no-index --no-deps --target "$SITE" "${wheels[@]}"; then
  # (a wheel is a zip: its C++ part is all the build needs)
  echo "pip refused; unpacking the cuda-bench wheel instead"
  for wheel in "${wheels[@]}"; do
    case $(basename "$wheel") in cuda_bench-*) python3 -m zipfile -e "$wheel" "$SITE" ;; esac
  done
fi
NVBENCH=$SITE/cuda/bench/cu13/nvbench
[ -f "$NVBENCH/lib/cmake/nvbench/nvbench-config.cmake" ] || {
  echo "no nvbench CMake config in $NVBENCH" | tee -a "$SUMMARY"
  exit 1
}
export LD_LIBRARY_PATH=$NVBENCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

say "build examples/nvbench (Release) as it is and with -DEXAMPLE_SLOW=ON, side by side"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
build() {  # variant (fast, slow), EXAMPLE_SLOW value
  rm -rf "$BUILD-$1"
  cmake -S "$REPO/examples/nvbench" -B "$BUILD-$1" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -Dnvbench_DIR="$NVBENCH/lib/cmake/nvbench" -DEXAMPLE_SLOW="$2" >"$OUT/build-$1.log" 2>&1 &&
    cmake --build "$BUILD-$1" -j 8 >>"$OUT/build-$1.log" 2>&1
}
build fast OFF &
fast_pid=$!
build slow ON
built_slow=$?
wait "$fast_pid"
built_fast=$?
for variant in fast:$built_fast slow:$built_slow; do
  if [ "${variant#*:}" -ne 0 ]; then
    echo "build ${variant%:*} failed (exit ${variant#*:}); the end of $OUT/build-${variant%:*}.log:"
    tail -30 "$OUT/build-${variant%:*}.log"
    echo "build ${variant%:*}: FAILED" >>"$SUMMARY"
    exit 1
  fi
done
echo "built in $((SECONDS - start)) s"

run_bench() {  # variant, file name (in $RUNS); then the file is stamped
  local variant=$1 name=$2
  # Run from $RUNS with a relative name: nvbench names its sample files `<name>-bin/<n>.bin`.
  (cd "$RUNS" && "$BUILD-$variant/kernels_bench" "${LIMITS[@]}" --jsonbin "$name" \
    --md "${name%.json}.md" >"${name%.json}.log" 2>&1)
  local status=$?
  echo "kernels_bench ($variant) -> $name: exit $status"
  [ "$status" -eq 0 ] || { tail -20 "$RUNS/${name%.json}.log"; return "$status"; }
  local extra=()
  [ "$variant" = slow ] && extra=(--context example_slow=ON)
  python3 "$REPO/examples/nvbench/stamp.py" "$RUNS/$name" --commit "$COMMIT" "${extra[@]}"
}

say "baseline: two runs of the unchanged build, two processes"
run_bench fast base-1.json || exit 1
run_bench fast base-2.json || exit 1
mkdir -p "$OUT/baselines"
cp "$REPO/examples/nvbench/kernelwatch.toml" "$OUT/baselines/kernelwatch.toml"
CONFIG=(--config "$OUT/baselines/kernelwatch.toml")
kw baseline update "$RUNS/base-1.json" "$RUNS/base-2.json" --baselines "$OUT/baselines" --compress
baseline_status=$?
echo "baseline update: exit $baseline_status"
[ "$baseline_status" -eq 0 ] || exit 1
kw baseline list --baselines "$OUT/baselines"
manifests=("$OUT"/baselines/*/manifest.json)
slug=$(basename "$(dirname "${manifests[0]}")")
results=("$OUT/baselines/$slug"/result.json*)  # result.json.gz: --compress
BASELINE=${results[0]}
kw baseline show "$slug" --baselines "$OUT/baselines" | tee "$OUT/baseline-show.txt"
DB=$OUT/history.sqlite
for run in base-1 base-2; do
  kw history ingest "$RUNS/$run.json" --db "$DB"
done

gate() {  # name: compare $RUNS/<name>.json with the baseline; prints and records its exit status
  local name=$1
  kw compare "$BASELINE" "$RUNS/$name.json" "${CONFIG[@]}" --markdown "$OUT/$name.md" \
    --json "$OUT/$name-compare.json" --junit "$OUT/$name-junit.xml" >"$OUT/$name-compare.txt" 2>&1
  local status=$?
  cat "$OUT/$name-compare.txt"
  echo "compare baseline $name.json: exit $status"
  kw history ingest "$RUNS/$name.json" --db "$DB"
  kw comment "$OUT/$name.md" --result "$RUNS/$name.json" --commit "$COMMIT" -o "$OUT/$name-comment.md"
  return "$status"
}

say "an unchanged run against the baseline (exit 0 expected)"
run_bench fast unchanged.json || exit 1
gate unchanged
unchanged_status=$?

say "the slowed build (EXAMPLE_SLOW=ON: the transpose only) against the baseline (exit 1 expected)"
run_bench slow slow.json || exit 1
gate slow
slow_status=$?

say "history"
kw history list --db "$DB" | tee "$OUT/history-list.txt"
# The slowed benchmark's series: the two baseline runs, the unchanged one, the slowed one.
slowed=$(awk '$1 == "REGRESSION" {print $2; exit}' "$OUT/slow-compare.txt")
kw history show "${slowed:-transpose/Size:8192}" --db "$DB" | tee "$OUT/history-slowed.txt"

say "nvbench's own compare on the same pairs (for comparison; never the gate)"
for contender in unchanged slow; do
  echo "--- nvbench_compare_robust base-1.json $contender.json"
  (cd "$RUNS" && PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} timeout 20 python3 -m \
    cuda.bench.scripts.nvbench_compare_robust base-1.json "$contender.json" 2>&1 | tail -25
    echo "exit ${PIPESTATUS[0]}")
done 2>&1 | tee "$OUT/nvbench_compare_robust.txt"

say "verdict"
regressions=$(grep '^REGRESSION' "$OUT/slow-compare.txt")
others=$(grep '^REGRESSION' "$OUT/slow-compare.txt" | grep -v ' transpose/')
verdict=PASS
[ "$unchanged_status" -eq 0 ] || verdict=FAIL
[ "$slow_status" -eq 1 ] || verdict=FAIL
[ -n "$regressions" ] && [ -z "$others" ] || verdict=FAIL
{
  echo "baseline: $OUT/baselines/$slug ($(kw baseline list --baselines "$OUT/baselines" | tail -1))"
  echo "unchanged run vs baseline: exit $unchanged_status (expected 0)"
  grep -E '^(Verdict|SAME|REGRESSION|SLOWER|IMPROVEMENT|UNSURE|Geomean|note: level)' \
    "$OUT/unchanged-compare.txt" | sed 's/^/  /'
  echo "slowed run (EXAMPLE_SLOW=ON) vs baseline: exit $slow_status (expected 1, REGRESSION on transpose only)"
  grep -E '^(Verdict|SAME|REGRESSION|SLOWER|IMPROVEMENT|UNSURE|Geomean|note: level)' \
    "$OUT/slow-compare.txt" | sed 's/^/  /'
  echo "history: $(($(wc -l <"$OUT/history-list.txt") - 1)) runs in $DB"
  echo "gate: $verdict in $((SECONDS - start)) s"
} | tee -a "$SUMMARY"
[ "$verdict" = PASS ]
