# Sourced by the GPU scripts: from the repository root, everything they print also goes to
# $OUT/summary.txt, and a Release build is made (its logs in $OUT; the tail of a failed one is
# printed and the script stops).
#
#   source "$(dirname "$0")/start.sh" DEFAULT_OUT     (sets OUT to DEFAULT_OUT when unset)
#   BUILD_TARGET=kernelwatch_bench_transpose source ...   (that target only: the whole suite
#                                                          is minutes of the GPU machine's time)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/$1}"
mkdir -p "$OUT"
exec > >(tee "$OUT/summary.txt") 2>&1

echo "== build (Release${BUILD_TARGET:+, $BUILD_TARGET only})"
cmake --preset release > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build --preset release -j ${BUILD_TARGET:+--target "$BUILD_TARGET"} > "$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
nvidia-smi -L || true
