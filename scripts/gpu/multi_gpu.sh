#!/usr/bin/env bash
# Issue 15 on a host with two or more GPUs (nvidia-h200-x2): is `run --gpus all` faster than
# one GPU, does it agree with one GPU (A/A), and which benchmarks does concurrency disturb?
#
#   scripts/gpu/multi_gpu.sh [DIR]    (DIR default: results/multi-gpu; copied to $OUT if set)
#
# Each phase is skipped when its results are in DIR already, and no phase starts that would
# likely end past BUDGET seconds (default 480): then it exits 75 and the same command, run
# again on the same machine, goes on where it stopped.
#
# 1. the suite on every GPU at once with everything concurrent (no host-bound scheduling:
#    the disturbance to measure), 2. each GPU alone, one after the other, 3. the suite with
#    --gpus all as shipped (host-bound benchmarks one GPU at a time), compared per GPU with
#    that GPU's alone run (A/A: exit 0 expected). Prints wall times and a table of the
#    benchmarks whose median moved between alone and concurrent. Short runs (REPS
#    repetitions, default 4 in 2 processes). ALONE=0 measures only GPU 0 alone (to fit a short
#    device budget; ALONE="0 1" is the default on two GPUs): GPUs not run alone are compared only
#    concurrently, and "one after the other" is estimated from the alone times measured.
#    FILTER=REGEX runs only those benchmarks (issue 12's short-kernel question fits in
#    minutes: FILTER='^(probe/|reduction/sum/.*/n:1048576/|transpose/.*/rows:2048/)'); the
#    wall times are then those of the part, not of the suite.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-results/multi-gpu}
reps=${REPS:-4}
budget=${BUDGET:-480}
longest=0
# shellcheck disable=SC2317 # called by the EXIT trap
finish() { [ -z "${OUT:-}" ] || cp -r "$out" "$OUT/" 2>/dev/null || true; }
trap finish EXIT
mkdir -p "$out"
export PYTHONPATH="$root/tools"
kw() { python3 -m kernelwatch "$@"; }
started=$(date +%s)
say() { printf '[%4ds] %s\n' "$(($(date +%s) - started))" "$*"; }

if ! ls build/bench/kernelwatch_bench_* >/dev/null 2>&1; then
  say "building (release)"
  cmake --preset release >/dev/null && cmake --build --preset release -j >"$out/build.log" 2>&1
fi
nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader | tee "$out/gpus.csv"
mapfile -t indices < <(nvidia-smi --query-gpu=index --format=csv,noheader)
((${#indices[@]} >= 2)) || { echo "multi_gpu.sh: needs two GPUs, found ${#indices[@]}" >&2; exit 4; }

common=(--build-dir build --no-compare --repetitions "$reps" --processes 2)
[ -z "${FILTER:-}" ] || common+=(--filter "$FILTER")
# No host-bound list and no baselines' counters: everything concurrent.
empty="$out/no-serial"
mkdir -p "$empty"
: >"$empty/kernelwatch.toml"
export KERNELWATCH_LOCK_DIR="$out/locks"

# phase NAME GPUS [run options]: one timed `run`, its wall seconds kept in DIR/NAME.seconds
phase() {
  local name=$1 gpus=$2
  shift 2
  if [ -f "$out/$name.seconds" ]; then
    say "$name: done before ($(cat "$out/$name.seconds") s)"
    return
  fi
  if (($(date +%s) - started + longest > budget)); then
    say "$name: would end past ${budget} s: run the same command again to go on"
    exit 75
  fi
  local t0
  t0=$(date +%s)
  kw run "${common[@]}" --gpus "$gpus" "$@" --out "$out/$name.json" 2>"$out/$name.log"
  echo $(($(date +%s) - t0)) >"$out/$name.seconds"
  longest=$(( $(cat "$out/$name.seconds") > longest ? $(cat "$out/$name.seconds") : longest ))
  say "$name: $(cat "$out/$name.seconds") s"
}

phase together all --baselines "$empty"  # every GPU at once, everything concurrent
read -r -a alone_indices <<<"${ALONE:-${indices[*]}}"
for i in "${alone_indices[@]}"; do
  phase "alone-$i" "$i" --baselines "$empty"  # one GPU, the host otherwise idle
  cp "$out/alone-$i-gpu$i.json" "$out/alone-gpu$i.json"
done
phase shipped all  # every GPU at once, host-bound benchmarks one GPU at a time
grep -h "host-bound" "$out/shipped.log" || true
together=$(cat "$out/together.seconds")
shipped=$(cat "$out/shipped.seconds")
declare -A alone
for i in "${alone_indices[@]}"; do alone[$i]=$(cat "$out/alone-$i.seconds"); done

status=0
for i in "${alone_indices[@]}"; do
  kw compare "$out/alone-gpu$i.json" "$out/together-gpu$i.json" --format json \
    --config baselines/kernelwatch.toml >"$out/disturbed-gpu$i.json" || true
  kw compare "$out/alone-gpu$i.json" "$out/shipped-gpu$i.json" --format json \
    --config baselines/kernelwatch.toml >"$out/aa-gpu$i.json" || status=1
done

python3 - "$out" "$together" "$shipped" "${#indices[@]}" "${alone[@]}" <<'PY'
import json, sys
from pathlib import Path
out, together, shipped, gpu_count, *alone = sys.argv[1:]
alone_total = sum(int(a) for a in alone) * int(gpu_count) // len(alone)
estimated = "" if len(alone) == int(gpu_count) else f" (estimated from {len(alone)} GPU(s) alone)"
print(f"\nwall time: one GPU alone {int(alone[0])} s; {gpu_count} GPUs one after the other "
      f"{alone_total} s{estimated}; at once, all concurrent {together} s "
      f"({int(together) / alone_total:.2f}x); at once as shipped {shipped} s "
      f"({int(shipped) / alone_total:.2f}x; target <= 0.55x)")
gpus = sorted(Path(out).glob("disturbed-gpu*.json"))
tables = {p.stem[-4:]: {b["name"]: b for b in json.loads(p.read_text())["benchmarks"]} for p in gpus}
names = sorted({n for t in tables.values() for n in t})
rows = []
for name in names:
    cells = [tables[g].get(name, {}) for g in tables]
    changes = [c.get("change") for c in cells]
    if any(c.get("verdict") in ("REGRESSION", "SLOWER", "IMPROVEMENT") for c in cells) or any(
        x is not None and abs(x) >= 0.02 for x in changes
    ):
        rows.append((name, cells))
print(f"\nbenchmarks disturbed by concurrency (alone -> all GPUs at once; verdict or >= 2%): "
      f"{len(rows)} of {len(names)}")
head = "".join(f" {g + ' change':>14} {'verdict':>11}" for g in tables)
print(f"{'benchmark':<70}{head}")
for name, cells in sorted(rows, key=lambda r: -max(abs(c.get('change') or 0) for c in r[1])):
    line = "".join(
        f" {(c.get('change') or 0) * 100:>+13.1f}% {c.get('verdict', '-'):>11}" for c in cells
    )
    print(f"{name[:70]:<70}{line}")
for p in sorted(Path(out).glob("aa-gpu*.json")):
    s = json.loads(p.read_text())["summary"]
    print(f"\nA/A {p.stem[3:]}: shipped --gpus all vs alone: {s['counts']}, exit {s['exit_status']}")
PY
say "done"
exit "$status"
