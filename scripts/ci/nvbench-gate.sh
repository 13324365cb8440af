#!/usr/bin/env bash
# The nvbench gate of .github/workflows/nvbench-gate.yml (docs/ci.md, "Gating an nvbench
# project"): one GPU job's work, in two phases that the workflow runs with the history's cache
# restored between them (its key needs the GPU, which only the run names):
#
#   nvbench-gate.sh measure   find nvbench, build the project (Release), run its benchmark with
#                             --jsonbin from $OUT/runs (nvbench names its sample files relative
#                             to the folder it runs in), stamp each file (examples/nvbench/
#                             stamp.py: commit, date, card); write the GPU's baseline slug to
#                             $OUT/slug (and `slug=` to $GITHUB_OUTPUT). check: one run;
#                             baseline: GATE_BASELINE_RUNS runs (2), each a process of its own.
#   nvbench-gate.sh judge     check: compare the run with $GATE_BASELINES/<slug>/ (result.json
#                             or result.json.gz) and the project's kernelwatch.toml (Markdown,
#                             JUnit, JSON), write the pull-request comment's body
#                             ($OUT/comment.md, first line its marker), ingest the run into the
#                             history; exit with compare's status.
#                             baseline: pool the runs with `baseline update --compress` into
#                             $OUT/baselines/<slug>/ (started from the committed folder, so its
#                             manifest's history goes on), ingest them; commit nothing.
#   nvbench-gate.sh           both, one after the other (by hand, on a GPU machine).
#
# Run from the project's checkout (the repository root). Settings, from the workflow's inputs
# (every one optional but GATE_BENCHMARK):
#   GATE_MODE=check|baseline    GATE_SOURCE=.   GATE_BUILD=$RUNNER_TEMP/nvbench-gate-build
#   GATE_CMAKE_ARGS="..."       more CMake configure arguments (split at whitespace)
#   GATE_BENCHMARK=PATH         the nvbench executable, relative to the build folder
#   GATE_BENCHMARK_ARGS="..."   more arguments to it (split at whitespace)
#   GATE_BASELINES=baselines    the committed baselines folder
#   GATE_CONFIG=FILE            kernelwatch.toml (default: $GATE_BASELINES/kernelwatch.toml if any)
#   GATE_NVBENCH_DIR=DIR        nvbench's CMake config folder on the runner: nothing installed;
#                               else GATE_NVBENCH_PIP (pip arguments, default cuda-bench==0.3.0)
#                               is installed with --no-deps --target $GATE_SITE, whose nvbench is
#                               cuda/bench/cu13/nvbench/lib/cmake/nvbench
#   GATE_OUT=nvbench-gate       what the job uploads; the history is $GATE_OUT/history.sqlite
#   GATE_HISTORY_KEY            names this job of this workflow run (the workflow's: nvbench-gate/
#                               <name>/<run id>): each run file is ingested under
#                               <key>/<slug>/<file name>, so a re-run attempt's results replace
#                               the first attempt's, not add a second point (unset: each is new)
#   GATE_COMMIT                 the commit of the comment (default: the one runs are stamped with)
#   KERNELWATCH_GIT_COMMIT      the commit every run is stamped with (default: the checkout's
#                               HEAD), as kernelwatch's own builds take it: for a copy of the
#                               tree whose .git lags behind it (scripts/gpu/nvbench_gate.sh)
#   GATE_RUN_URL                the workflow run, linked from the comment
#   KW_ROOT                     the kernelwatch checkout (default: this script's)
#
# Exit status: 0 no regression (baseline: written); 1 a regression, or a state of the baseline
# MISSING from the run (compare's); 2 bad input (no baseline for this GPU, a setting wrong);
# 3 nvbench could not be installed, the build or the benchmark failed.
set -uo pipefail

KW_ROOT=$(cd "${KW_ROOT:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd) || exit 2
MODE=${GATE_MODE:-check}
SOURCE=${GATE_SOURCE:-.}
BUILD=${GATE_BUILD:-${RUNNER_TEMP:-/tmp}/nvbench-gate-build}
BASELINES=${GATE_BASELINES:-baselines}
OUT=${GATE_OUT:-nvbench-gate}
SITE=${GATE_SITE:-${RUNNER_TEMP:-/tmp}/nvbench-gate-site}
RUNS_WANTED=${GATE_BASELINE_RUNS:-2}
read -r -a CMAKE_ARGS <<<"${GATE_CMAKE_ARGS:-}"
read -r -a BENCHMARK_ARGS <<<"${GATE_BENCHMARK_ARGS:-}"
read -r -a NVBENCH_PIP <<<"${GATE_NVBENCH_PIP:-cuda-bench==0.3.0}"
export PYTHONPATH=$KW_ROOT/tools${PYTHONPATH:+:$PYTHONPATH}
export NO_COLOR=1
STAMP_COMMIT=${KERNELWATCH_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

say() { printf 'nvbench-gate: %s\n' "$*" >&2; }
fail() {  # fail STATUS MESSAGE: one line, in the log and the job summary
  say "error: $2"
  [ -z "${GITHUB_STEP_SUMMARY:-}" ] || printf 'nvbench gate: %s\n' "$2" >>"$GITHUB_STEP_SUMMARY"
  exit "$1"
}
kw() { python3 -m kernelwatch "$@"; }
summary() { [ -z "${GITHUB_STEP_SUMMARY:-}" ] || cat >>"$GITHUB_STEP_SUMMARY"; }

case $MODE in check | baseline) ;; *) fail 2 "mode must be check or baseline, not '$MODE'" ;; esac
case $RUNS_WANTED in [2-9]) ;; *) fail 2 "baseline runs must be 2 to 9, not '$RUNS_WANTED'" ;; esac
mkdir -p "$OUT/runs" || fail 2 "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
RUNS=$OUT/runs
# check: one run; baseline: one process per run, pooled (the spread between them is stored)
if [ "$MODE" = check ]; then NAMES=(pr.json); else
  NAMES=()
  for n in $(seq 1 "$RUNS_WANTED"); do NAMES+=("base-$n.json"); done
fi

nvbench() {  # sets NVBENCH_DIR and LD_LIBRARY_PATH
  if [ -n "${GATE_NVBENCH_DIR:-}" ]; then
    NVBENCH_DIR=$GATE_NVBENCH_DIR
  else
    say "installing nvbench: pip install --no-deps --target $SITE ${NVBENCH_PIP[*]}"
    rm -rf "$SITE"
    python3 -m pip install -q --no-deps --target "$SITE" "${NVBENCH_PIP[@]}" ||
      fail 3 "pip could not install ${NVBENCH_PIP[*]} (set nvbench-dir to an nvbench the runner has)"
    NVBENCH_DIR=$SITE/cuda/bench/cu13/nvbench/lib/cmake/nvbench
  fi
  [ -f "$NVBENCH_DIR/nvbench-config.cmake" ] ||
    fail 3 "no nvbench CMake config (nvbench-config.cmake) in $NVBENCH_DIR"
  NVBENCH_DIR=$(cd "$NVBENCH_DIR" && pwd)
  # the config is <prefix>/lib/cmake/nvbench; libnvbench is in <prefix>/lib
  export LD_LIBRARY_PATH=${NVBENCH_DIR%/cmake/nvbench}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

measure() {
  [ -n "${GATE_BENCHMARK:-}" ] || fail 2 "no benchmark executable given (GATE_BENCHMARK)"
  [ -d "$SOURCE" ] || fail 2 "no project source folder $SOURCE"
  nvbench
  "$KW_ROOT/tools/kw" setup-python || fail 3 "the Python packages kernelwatch needs are missing"
  say "build $SOURCE in $BUILD (Release, nvbench from $NVBENCH_DIR)"
  cmake -S "$SOURCE" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -Dnvbench_DIR="$NVBENCH_DIR" \
    "${CMAKE_ARGS[@]}" || fail 3 "the CMake configure failed (above)"
  cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" || fail 3 "the build failed (above)"
  local binary
  binary=$(cd "$BUILD" && pwd)/$GATE_BENCHMARK
  [ -x "$binary" ] || fail 2 "no executable $GATE_BENCHMARK in the build folder $BUILD"
  rm -rf "${RUNS:?}"/*
  for name in "${NAMES[@]}"; do
    say "run $GATE_BENCHMARK ${BENCHMARK_ARGS[*]} --jsonbin $name (in $RUNS)"
    # a relative name, from the folder the file goes to: nvbench writes <name>-bin/<n>.bin
    (cd "$RUNS" && "$binary" "${BENCHMARK_ARGS[@]}" --jsonbin "$name") ||
      fail 3 "$GATE_BENCHMARK failed (exit $?) writing $name"
    python3 "$KW_ROOT/examples/nvbench/stamp.py" "$RUNS/$name" --commit "$STAMP_COMMIT" ||
      fail 2 "$name could not be stamped"
  done
  # The GPU's baseline slug, as `kernelwatch baseline list` prints it: the comment's marker
  # names it (`<!-- kernelwatch:<slug> -->`), from the run's context as `run` finds its baseline.
  local marker slug
  marker=$(kw comment /dev/null --result "$RUNS/${NAMES[0]}" --marker-only) ||
    fail 2 "${NAMES[0]} names no GPU"
  slug=${marker#<!-- kernelwatch:}
  slug=${slug% -->}
  echo "$slug" >"$OUT/slug"
  [ -z "${GITHUB_OUTPUT:-}" ] || echo "slug=$slug" >>"$GITHUB_OUTPUT"
  say "measured on $slug"
}

judge() {
  [ -s "$OUT/slug" ] || fail 2 "nothing measured: run the measure phase first"
  local slug db status=0
  slug=$(cat "$OUT/slug")
  db=$OUT/history.sqlite
  local config=()
  if [ -n "${GATE_CONFIG:-}" ]; then
    [ -f "$GATE_CONFIG" ] || fail 2 "no config file $GATE_CONFIG"
    config=(--config "$GATE_CONFIG")
  elif [ -f "$BASELINES/kernelwatch.toml" ]; then
    config=(--config "$BASELINES/kernelwatch.toml")
  fi
  if [ "$MODE" = baseline ]; then
    mkdir -p "$OUT/baselines"
    rm -rf "${OUT:?}/baselines/$slug"
    # the committed folder, when there is one: the update extends its manifest's history
    [ ! -d "$BASELINES/$slug" ] || cp -R "$BASELINES/$slug" "$OUT/baselines/$slug"
    local files=()
    for name in "${NAMES[@]}"; do files+=("$RUNS/$name"); done
    kw baseline update --compress --drop-missing "${files[@]}" --baselines "$OUT/baselines" ||
      status=$?
    for file in "${files[@]}"; do ingest "$file" "$db"; done
    if [ "$status" -eq 0 ]; then
      {
        echo "### nvbench baseline for $slug"
        echo
        echo "Pooled from ${#files[@]} runs of commit \`$STAMP_COMMIT\`."
        echo "To adopt it, replace \`$BASELINES/$slug/\` with the folder of the artifact and"
        echo "commit it (nothing was committed by the workflow)."
        echo
        echo '```'
        kw baseline show "$slug" --baselines "$OUT/baselines"
        echo '```'
      } | summary
    fi
    return "$status"
  fi
  local baseline=$BASELINES/$slug/result.json.gz
  [ -f "$baseline" ] || baseline=$BASELINES/$slug/result.json
  [ -f "$baseline" ] || fail 2 "no baseline for this GPU ($slug) in $BASELINES/: run the \
workflow with mode: baseline on this GPU model and commit the folder it uploads"
  local run=$RUNS/pr.json
  kw compare "$baseline" "$run" "${config[@]}" --markdown "$OUT/report.md" \
    --junit "$OUT/report.xml" --json "$OUT/compare.json" >"$OUT/compare.txt" 2>&1 || status=$?
  cat "$OUT/compare.txt"
  say "compare $baseline $run: exit $status"
  if [ -f "$OUT/report.md" ]; then
    local url=()
    [ -z "${GATE_RUN_URL:-}" ] || url=(--run-url "$GATE_RUN_URL")
    kw comment "$OUT/report.md" --result "$run" \
      --commit "${GATE_COMMIT:-$STAMP_COMMIT}" \
      "${url[@]}" -o "$OUT/comment.md" || say "warning: no comment body"
    summary <"$OUT/report.md"
  else
    tail -5 "$OUT/compare.txt" | summary
  fi
  ingest "$run" "$db"
  return "$status"
}

ingest() {  # a run into the history; a failure is a warning, never the gate's status
  local key=()
  [ -z "${GATE_HISTORY_KEY:-}" ] || key=(--key "$GATE_HISTORY_KEY/$(cat "$OUT/slug")/${1##*/}")
  kw history ingest "$1" --db "$2" "${key[@]}" ||
    say "warning: $1 could not be ingested into $2 (the verdict stands)"
}

case ${1:-all} in
  measure) measure ;;
  judge) judge ;;
  all) measure && judge ;;
  *) fail 2 "usage: nvbench-gate.sh [measure|judge]" ;;
esac
