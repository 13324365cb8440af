#!/usr/bin/env bash
# The nvbench example gated end to end on one GPU (issue #32; docs/ci.md, "Gating an nvbench
# project") by the reusable workflow's own script, scripts/ci/nvbench-gate.sh, no network needed.
# Each gate below is the workflow's GPU job (nvbench-gate.yml): `measure` (build Release, run
# with --jsonbin, stamp), the history restored as its cache step restores it, `judge`, the
# history saved; each in a folder of its own, $OUT/<gate> (the job's nvbench-gate/):
#   base       baseline mode on the unchanged build: two runs, two processes, pooled into
#              $OUT/base/baselines/<slug>/, ingested into the history; then adopted as the
#              maintainer adopts the artifact: $OUT/baselines/, with the example's
#              kernelwatch.toml beside it (the folder every check gate reads);
#   unchanged  check mode, the same build: exit 0 expected;
#   slow       check mode, built apart with GATE_CMAKE_ARGS=-DEXAMPLE_SLOW=ON (the transpose's
#              tile unpadded: a real change to that kernel only): exit 1 expected, its
#              REGRESSION rows naming `transpose` only.
# This script adds only what the workflow does not do: nvbench from the cuda-bench wheel in
# .whl/ (else .kernelwatch/dev/) through the workflow's GATE_NVBENCH_PIP, the slowed build,
# nvbench's own nvbench_compare_robust on the same pairs, the expectations and summary.txt (the
# GPUs, the commit, each exit status and the verdict). The history, carried from gate to gate,
# is $OUT/history.sqlite; each gate's log $OUT/<gate>.log, its job summary
# $OUT/<gate>/job-summary.md. Exit 0 when the gate behaved as expected, else 1.
# Usage, from the repository root: scripts/gpu/nvbench_gate.sh   (about a minute on an H100)
#   [OUT=DIR] (default ./nvbench-gate-out) [KERNELWATCH_GIT_COMMIT=SHA] (the commit to stamp;
#   default: git HEAD) [SITE=DIR] [BUILD=PREFIX] (nvbench's install, the builds' folders)
set -uo pipefail

start=$SECONDS
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/nvbench-gate-out}
SITE=${SITE:-/tmp/nvbench-gate-site}
BUILD=${BUILD:-/tmp/nvbench-gate-build}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# every gate from scratch: no baseline, history or build of an earlier run goes on
rm -rf "$OUT/base" "$OUT/unchanged" "$OUT/slow" "$OUT/baselines" "$OUT/history.sqlite" \
  "$BUILD-fast" "$BUILD-slow"
DB=$OUT/history.sqlite
export PYTHONPATH=$REPO/tools${PYTHONPATH:+:$PYTHONPATH}
export NO_COLOR=1
kw() { python3 -m kernelwatch "$@"; }
say() { printf '\n=== [%3ds] %s\n' "$((SECONDS - start))" "$*"; }
# The commit stamped on every run: KERNELWATCH_GIT_COMMIT when set (a copy of the tree whose
# .git lags behind it), else the checkout's HEAD.
COMMIT=${KERNELWATCH_GIT_COMMIT:-$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)}
export KERNELWATCH_GIT_COMMIT=$COMMIT
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

for wheel in "$REPO"/.whl/cuda_bench-*.whl "$REPO"/.kernelwatch/dev/cuda_bench-*.whl; do
  [ -e "$wheel" ] && break
done
if [ ! -e "$wheel" ]; then
  echo "no wheel in .whl/ or .kernelwatch/dev/: put cuda_bench-0.3.0-*.whl there" | tee -a "$SUMMARY"
  exit 1
fi

# The workflow's inputs, as its GPU job's env passes them (examples/nvbench as the project).
# A few samples per state: at least 20, stop at 1 % noise once 0.05 s of samples are taken,
# never more than 2 s a state (6 states: well under 10 s a run).
export GATE_SOURCE=examples/nvbench GATE_BENCHMARK=kernels_bench GATE_BASELINES=$OUT/baselines \
  GATE_BENCHMARK_ARGS="--min-samples 20 --min-time 0.05 --max-noise 1 --timeout 2 --no-batch" \
  GATE_NVBENCH_PIP="--no-index $wheel" GATE_SITE=$SITE
unset GITHUB_OUTPUT # (not a workflow step: the slug is $OUT/<gate>/slug)
cd "$REPO" || exit 1

gate() {  # NAME MODE VARIANT [CMAKE ARGS]: the workflow's GPU job in $OUT/NAME; its exit status
  local name=$1
  export GATE_OUT=$OUT/$name GATE_MODE=$2 GATE_BUILD=$BUILD-$3 GATE_CMAKE_ARGS=${4:-}
  export GITHUB_STEP_SUMMARY=$GATE_OUT/job-summary.md
  mkdir -p "$GATE_OUT"
  (
    bash scripts/ci/nvbench-gate.sh measure || exit
    [ ! -f "$DB" ] || cp "$DB" "$GATE_OUT/history.sqlite" # actions/cache/restore
    bash scripts/ci/nvbench-gate.sh judge
  ) 2>&1 | tee "$OUT/$name.log"
  local status=${PIPESTATUS[0]}
  [ ! -f "$GATE_OUT/history.sqlite" ] || cp "$GATE_OUT/history.sqlite" "$DB" # actions/cache/save
  echo "gate $name ($2, build $GATE_BUILD${4:+, $4}): exit $status"
  return "$status"
}

say "baseline mode: two runs of the unchanged build, pooled (the wheel: $wheel)"
gate base baseline fast || {
  echo "baseline mode: exit $? (expected 0; its log: $OUT/base.log)" | tee -a "$SUMMARY"
  exit 1
}
slug=$(cat "$OUT/base/slug")
cp -R "$OUT/base/baselines" "$OUT/baselines"
cp examples/nvbench/kernelwatch.toml "$OUT/baselines/kernelwatch.toml"
kw baseline list --baselines "$OUT/baselines"

say "check mode: an unchanged run against the baseline (exit 0 expected)"
gate unchanged check fast
unchanged_status=$?

say "check mode: the slowed build (EXAMPLE_SLOW=ON: the transpose only; exit 1 expected)"
gate slow check slow -DEXAMPLE_SLOW=ON
slow_status=$?

say "history"
kw history list --db "$DB" | tee "$OUT/history-list.txt"
# The slowed benchmark's series: the two baseline runs, the unchanged one, the slowed one.
slowed=$(awk '$1 == "REGRESSION" {print $2; exit}' "$OUT/slow/compare.txt" 2>/dev/null)
kw history show "${slowed:-transpose/Size:8192}" --db "$DB" | tee "$OUT/history-slowed.txt"

say "nvbench's own compare on the same pairs (for comparison; never the gate)"
for contender in unchanged slow; do
  echo "--- nvbench_compare_robust base/runs/base-1.json $contender/runs/pr.json"
  (cd "$OUT" && PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} timeout 20 python3 -m \
    cuda.bench.scripts.nvbench_compare_robust base/runs/base-1.json "$contender/runs/pr.json" \
    2>&1 | tail -25
    echo "exit ${PIPESTATUS[0]}")
done 2>&1 | tee "$OUT/nvbench_compare_robust.txt"

say "verdict"
rows() { grep -sE '^(Verdict|SAME|REGRESSION|SLOWER|IMPROVEMENT|UNSURE|Geomean|note: level)' "$1"; }
regressions=$(grep -s '^REGRESSION' "$OUT/slow/compare.txt")
others=$(grep -s '^REGRESSION' "$OUT/slow/compare.txt" | grep -v ' transpose/')
verdict=PASS
[ "$unchanged_status" -eq 0 ] || verdict=FAIL
[ "$slow_status" -eq 1 ] || verdict=FAIL
[ -n "$regressions" ] && [ -z "$others" ] || verdict=FAIL
{
  echo "baseline: $OUT/baselines/$slug ($(kw baseline list --baselines "$OUT/baselines" | tail -1))"
  echo "unchanged run vs baseline: exit $unchanged_status (expected 0)"
  rows "$OUT/unchanged/compare.txt" | sed 's/^/  /'
  echo "slowed run (EXAMPLE_SLOW=ON) vs baseline: exit $slow_status (expected 1, REGRESSION on transpose only)"
  rows "$OUT/slow/compare.txt" | sed 's/^/  /'
  echo "history: $(($(wc -l <"$OUT/history-list.txt") - 1)) runs in $DB"
  echo "gate: $verdict in $((SECONDS - start)) s"
} | tee -a "$SUMMARY"
[ "$verdict" = PASS ]
