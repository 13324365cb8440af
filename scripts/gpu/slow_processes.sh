#!/usr/bin/env bash
# Which processes of the reduction binary run its latency-bound 64 Mi float sums slow, by what
# else the process runs and how (docs/measurement.md, "An anchor's two processes"). Each round
# runs one process of each MODE given, in turn, so that the modes share the card and its time;
# a process runs its instances' 5 repetitions interleaved at random, as `run` does, unless the
# mode says otherwise, and prints its medians (µs) of the naive, sequential and warp_shuffle
# float sums of 64 Mi elements and of the sequential dot:
#   alone      those three sums alone
#   whole      the whole binary
#   big        the three sums and the 1 Gi-element instances
#   small      the whole binary but the 1 Gi-element instances
#   all64      every instance of 64 Mi elements
#   with1mi    the three sums, the dot, and the 1 Mi-element instances
#   with1mi-ordered, whole-ordered   without random interleaving
#   with1mi-kept                     every set-up kept (--kernelwatch_keep_set_ups=all)
# Usage: ROUNDS=12 scripts/gpu/slow_processes.sh BUILD_DIR/bench/kernelwatch_bench_reduction MODE...
# (CUDA_MODULE_LOADING=EAGER in the environment reaches the processes: the modules loaded in
# one order.)
set -euo pipefail
binary=${1:?usage: slow_processes.sh PATH/TO/kernelwatch_bench_reduction MODE...}
shift
(($#)) || { echo "slow_processes.sh: name at least one MODE" >&2; exit 2; }
sums='sum/(naive|sequential|warp_shuffle)/float/n:67108864/'
with1mi="($sums|dot/sequential/float/n:67108864/|n:1048576/)"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
one() {  # $1: label, $2: filter, $3...: further flags
  local label=$1 filter=$2
  shift 2
  timeout 150 "$binary" --benchmark_filter="$filter" --benchmark_repetitions=5 \
    --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
    --kernelwatch_max_time=0.25 "$@" 2> /dev/null |
    awk -v l="$label" '/_median/ && /float\/n:67108864/ && /(naive|sequential|warp_shuffle)\// {
      printf "%s %s %s\n", l, $1, $2 }'
}
for round in $(seq 1 "${ROUNDS:-12}"); do
  for mode in "$@"; do
    label="$mode-$round"
    case $mode in
      alone) one "$label" "$sums" ;;
      whole) one "$label" '.' ;;
      big) one "$label" "(n:1073741824|$sums)" ;;
      small) one "$label" '-n:1073741824' ;;
      all64) one "$label" 'n:67108864/' ;;
      with1mi) one "$label" "$with1mi" ;;
      with1mi-ordered) one "$label" "$with1mi" --benchmark_enable_random_interleaving=false ;;
      whole-ordered) one "$label" '.' --benchmark_enable_random_interleaving=false ;;
      with1mi-kept) one "$label" "$with1mi" --kernelwatch_keep_set_ups=all ;;
      *) echo "slow_processes.sh: unknown MODE $mode" >&2; exit 2 ;;
    esac
  done
done
