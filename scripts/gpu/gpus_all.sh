#!/usr/bin/env bash
# On a host with several GPUs: is `run --gpus all` at most 0.55x the GPUs measured one after
# the other, and does it agree with one GPU alone (A/A)? The whole suite with run's defaults,
# GPU 0 alone (with the harness's timeline: scripts/gpu/wall_breakdown.py), then every GPU at
# once; each GPU's result compared with GPU 0 alone (the GPUs after the first of their model
# leave the host-bound benchmarks to it: --allow-missing). Results in DIR (default
# results/gpus-all).
#
#   setsid scripts/gpu/gpus_all.sh [DIR] &        (then read DIR/summary.txt)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=${1:-results/gpus-all}
mkdir -p "$dir/timeline"
exec > >(tee "$dir/summary.txt") 2>&1
export PYTHONPATH=$PWD/tools KERNELWATCH_LOCK_DIR=$dir/locks
now() { date +%s.%N; }
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$@"; }

cmake --preset release >/dev/null && cmake --build --preset release -j >"$dir/build.log" 2>&1 ||
  { tail -30 "$dir/build.log"; exit 1; }
nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader
count=$(nvidia-smi -L | wc -l)

start=$(now)
KERNELWATCH_TIMELINE=$dir/timeline python3 -m kernelwatch run --build-dir build --gpus 0 \
  --no-compare --out "$dir/alone.json" >"$dir/alone.log" 2>&1
status=$?
alone=$(seconds "$start" "$(now)")
echo "GPU 0 alone: exit $status, ${alone} s"
python3 scripts/gpu/wall_breakdown.py "$dir/timeline" --wall "$alone" --json "$dir/breakdown.json"

start=$(now)
python3 -m kernelwatch run --build-dir build --gpus all --no-compare --out "$dir/all.json" \
  >"$dir/all.log" 2>&1
all=$(seconds "$start" "$(now)")
echo "--gpus all ($count GPUs): ${all} s; one after the other (${count} x alone): $(
  python3 -c "print(f'{$count * $alone:.1f} s; ratio {$all / ($count * $alone):.3f}')")"
grep -h "measured in" "$dir/all.log"
for ((i = 0; i < count; i++)); do
  python3 -m kernelwatch compare "$dir/alone-gpu0.json" "$dir/all-gpu$i.json" \
    $( ((i > 0)) && echo --allow-missing) >"$dir/aa-gpu$i.txt" 2>&1
  status=$?
  echo "A/A GPU $i (all) against GPU 0 alone: exit $status; $(tail -1 "$dir/aa-gpu$i.txt")"
done
(cd "$dir" && tar -czf results.tar.gz alone-gpu0.json all-gpu*.json breakdown.json alone.log \
  all.log aa-gpu*.txt)
