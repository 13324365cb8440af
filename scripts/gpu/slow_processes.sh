#!/usr/bin/env bash
# Which processes of the reduction binary run its 64 Mi float sums slow, by what else the
# process runs (docs/measurement.md, "An anchor's two processes"). Each process interleaves
# its instances' 5 repetitions at random, as `run` does, and prints its medians (µs) of the
# naive, sequential and warp_shuffle float sums of 64 Mi elements (and the sequential dot):
#   ALONE processes  run only those three sums;
#   WHOLE processes  run the whole binary;
#   BIG processes    run the three sums and the 1 Gi-element instances.
# Usage: ALONE=12 WHOLE=6 BIG=0 scripts/gpu/slow_processes.sh BUILD_DIR/bench/kernelwatch_bench_reduction
set -euo pipefail
binary=${1:?usage: slow_processes.sh PATH/TO/kernelwatch_bench_reduction}
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
sums='reduction/sum/(naive|sequential|warp_shuffle)/float/n:67108864/'
one() {  # $1: label, $2: filter
  timeout 150 "$binary" --benchmark_filter="$2" --benchmark_repetitions=5 \
    --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
    --kernelwatch_max_time=0.25 2> /dev/null |
    awk -v l="$1" '/_median/ && /float\/n:67108864/ && /(naive|sequential|warp_shuffle)\// {
      printf "%s %s %s\n", l, $1, $2 }'
}
for i in $(seq 1 "${ALONE:-12}"); do one "alone-$i" "$sums"; done
for i in $(seq 1 "${WHOLE:-6}"); do one "whole-$i" '.'; done
for i in $(seq 1 "${BIG:-0}"); do one "big-$i" "(n:1073741824|$sums)"; done
