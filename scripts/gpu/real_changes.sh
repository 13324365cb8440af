#!/usr/bin/env bash
# Does the anchored verdict on this card match the truth for code changes a pull request makes?
# (issue #31's table; docs/measurement.md, "Anchored verdicts on real code changes"). The
# changes of scripts/real_changes.py are committed on top of HEAD (git objects only: the
# checkout is not touched); the truth is `kernelwatch ab HEAD CHANGED` over their benchmarks,
# ROUNDS rounds (default 5) on this card; then CHANGED's build (ab's worktree) runs the whole
# suite anchored on the baseline's commit, as a pull request's check would; last, the table of
# the two. Results in DIR (default results/real-changes): summary.txt, ab.json, run-report.json,
# the logs and results.
#
#   setsid scripts/gpu/real_changes.sh [DIR] &        (then read DIR/summary.txt)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
dir=${1:-results/real-changes}
rounds=${ROUNDS:-5}
mkdir -p "$dir"
exec > >(tee "$dir/summary.txt") 2>&1
export PYTHONPATH=$PWD/tools
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
base=$(git rev-parse HEAD) || exit 2
changed=$(python3 scripts/real_changes.py commit "$base") || exit 2
filter=$(python3 scripts/real_changes.py filter)
git log --oneline "$base..$changed"

start=$(date +%s)
python3 -m kernelwatch ab "$base" "$changed" --rounds "$rounds" --filter "$filter" \
  --out "$dir/ab" --json "$dir/ab.json" >"$dir/ab.log" 2>&1
echo "truth: ab ${base:0:12} ${changed:0:12}, $rounds rounds: exit $? in $(($(date +%s) - start)) s"

start=$(date +%s)
python3 -m kernelwatch run --build-dir ".kernelwatch/worktrees/$changed/build" --anchor always \
  --out "$dir/run.json" --json "$dir/run-report.json" >"$dir/run.log" 2>&1
echo "anchored run of ${changed:0:12}: exit $? in $(($(date +%s) - start)) s"
grep -h "anchored on\|runner finding" "$dir/run.log" | head -3

python3 scripts/real_changes.py table "$dir/ab.json" "$dir/run-report.json"
