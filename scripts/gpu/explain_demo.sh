#!/usr/bin/env bash
# Issue 16's demonstration on a GPU machine: `kernelwatch ab` explains two scratch changes.
#   (a) transpose/best without its shared-memory padding  -> "kernel code changed", bank conflicts
#   (b) coalescing's block size 256 -> 32 (launch only)     -> "launch changed", occupancy
# Both scratch commits live in a temporary clone, never on the branch of this checkout.
# Writes Markdown, JSON and HTML reports to $OUT (default ./explain-demo-out). About 6-8 min.
#   usage: scripts/gpu/explain_demo.sh            (from the repository root)
#   DEMOS="padding" PADDING_FILTER=REGEX scripts/gpu/explain_demo.sh   (some cases; a smaller
#   transpose filter): scripts/gpu/report_demo.sh runs it so for the report's screenshot.
# Each case's result files (A/, B/) are kept in $OUT/<case>/ with its explanations.json.
set -euo pipefail
REPO=$(git rev-parse --show-toplevel)
OUT=${OUT:-$PWD/explain-demo-out}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/kernelwatch-explain-demo.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CLONE=$WORK/clone
git clone -q "$REPO" "$CLONE"
git -C "$CLONE" checkout -q --detach "$(git -C "$REPO" rev-parse HEAD)"
# The working tree's uncommitted changes count too (the lead's copy may not be committed).
(cd "$REPO" && git diff HEAD --binary) | git -C "$CLONE" apply --allow-empty 2>/dev/null || true
(cd "$REPO" && git ls-files --others --exclude-standard -z | xargs -0 -r cp --parents -t "$CLONE")
commit() { git -C "$CLONE" -c user.name=demo -c user.email=demo@localhost commit -qam "$1"; git -C "$CLONE" rev-parse HEAD; }
git -C "$CLONE" add -A
BASE=$(git -C "$CLONE" -c user.name=demo -c user.email=demo@localhost commit -qm "demo base" --allow-empty && git -C "$CLONE" rev-parse HEAD)

sed -i 's/launch_tiled<T, transpose_best_tile_dim, transpose_best_block_rows, 1>/launch_tiled<T, transpose_best_tile_dim, transpose_best_block_rows, 0>/' \
  "$CLONE/families/transpose/transpose.cu"
grep -q 'transpose_best_block_rows, 0>' "$CLONE/families/transpose/transpose.cu" || { echo "demo: padding edit did not apply" >&2; exit 2; }
UNPADDED=$(commit "scratch: transpose/best without shared-memory padding")
git -C "$CLONE" checkout -q "$BASE"
sed -i 's/^constexpr int block_size = 256;/constexpr int block_size = 32;/' "$CLONE/families/coalescing/coalescing_bench.cu"
grep -q '^constexpr int block_size = 32;' "$CLONE/families/coalescing/coalescing_bench.cu" || { echo "demo: block-size edit did not apply" >&2; exit 2; }
SMALLBLOCK=$(commit "scratch: coalescing launched with 32-thread blocks")

NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
echo "demo: GPU $(nvidia-smi --query-gpu=name,uuid --format=csv,noheader 2>/dev/null || echo unknown)"
echo "demo: ncu ${NCU:-not found}; base $BASE, unpadded $UNPADDED, small-block $SMALLBLOCK"
kw() { (cd "$CLONE" && PYTHONPATH="$CLONE/tools" python3 -m kernelwatch "$@"); }
# 6 repetitions a round: the report below judges one round of B (6 values) against A's two
# rounds (12); with 3 a round the smallest possible q over 43 benchmarks stayed above 0.05
# (seen on the H200 on 2026-11-24: +119 % shown UNSURE).
COMMON=(--rounds 2 --repetitions 6 --max-time 0.1 --explain-budget 120
        --cmake-arg=-DCMAKE_CUDA_ARCHITECTURES=90 --cmake-arg=-DKERNELWATCH_BUILD_TESTS=OFF)

demo() {  # name target filter rev
  local name=$1 target=$2 filter=$3 rev=$4 start status=0
  start=$(date +%s)
  kw ab "$BASE" "$rev" --filter "$filter" --target "$target" "${COMMON[@]}" \
     --out "$WORK/$name" --markdown "$OUT/$name.md" --json "$OUT/$name.json" > "$OUT/$name.txt" \
     2> >(tee "$OUT/$name.stderr" >&2) || status=$?
  echo "demo: $name: ab exited $status in $(( $(date +%s) - start )) s"
  cp "$WORK/$name/explanations.json" "$OUT/$name.explanations.json" 2>/dev/null || true
  mkdir -p "$OUT/$name" && cp -r "$WORK/$name/A" "$WORK/$name/B" "$OUT/$name/" 2>/dev/null || true
  kw report "$WORK/$name/B/round-1.json" --baseline "$WORK/$name/A" \
     --explanations "$WORK/$name/explanations.json" -o "$OUT/$name.html" || true
  echo "----- $name: the explained lines -----"
  grep -E -- '^(REGRESSION|SLOWER|IMPROVEMENT|UNSURE) |^    -> |^kernels: |^note: (explaining|nothing to explain|ncu|--explain)' \
    "$OUT/$name.txt" | cut -c1-400 | head -40 || true
  grep -E 'explaining|nothing to explain|ncu' "$OUT/$name.stderr" | tail -5 || true
}
DEMOS=" ${DEMOS:-padding blocksize same} "
[[ $DEMOS == *" padding "* ]] &&
  demo padding kernelwatch_bench_transpose "${PADDING_FILTER:-^transpose/}" "$UNPADDED"
# A few offsets and strides: with all 132, ncu profiled regression after regression and the
# demo ran past its 520 s (H200, 2026-11-24).
[[ $DEMOS == *" blocksize "* ]] && demo blocksize kernelwatch_bench_coalescing \
  '^coalescing/(offset/float/offset:(0|1|16)|stride/float/stride:(1|2|32))/' "$SMALLBLOCK"
# The same build on both sides: every kernel identical, nothing explained, 0 s added.
[[ $DEMOS == *" same "* ]] && demo same kernelwatch_bench_transpose '^transpose/' "$BASE"
echo "demo: reports in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
