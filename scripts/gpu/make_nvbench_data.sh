#!/usr/bin/env bash
# Makes the nvbench test data of tests/data/nvbench/ on the GPU machine (no network): installs
# the cuda-bench wheel (nvbench's Python API, and for CUDA 13 its C++ headers, libnvbench and
# CMake config) and jsondiff from .whl/, then
#   (a) runs the Python benchmark tests/data/nvbench/src/kernels_bench.py (CuPy) twice, in two
#       processes (py-a.json, py-b.json: an A/A pair), and once with NVBENCH_SLOW=1 (py-slow.json:
#       the kernel `slowed` does twice the work), each with --jsonbin (JSON + sample files);
#   (b) builds tests/data/nvbench/src/axpy_bench.cu against the wheel's nvbench and runs it
#       (cpp.json);
#   (c) runs nvbench's own compare scripts on the A/A pair and on the slowed pair;
#   (d) runs kernelwatch compare on both pairs, and baseline update / history ingest on them.
# Everything lands in $OUT (default: ./nvbench-out), ready to copy to tests/data/nvbench/.
# Usage, from the repository root: scripts/gpu/make_nvbench_data.sh
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/nvbench-out}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# Few states and few samples keep the files small (a few hundred KB in all): at least 20
# samples, stop at 1 % noise once 0.05 s of samples are taken, never more than 2 s per state.
LIMITS=(--min-samples 20 --min-time 0.05 --max-noise 1 --timeout 2 --no-batch)

say() { printf '\n=== %s\n' "$*"; }

say "install cuda-bench and jsondiff from .whl/ into $SITE"
python3 -m pip install -q --no-index --no-deps --target "$SITE" "$REPO"/.whl/*.whl || exit 1
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
python3 - <<'PY' | tee "$OUT/versions.txt"
import importlib.metadata as md
for package in ("cuda-bench", "cuda-bindings", "cuda-core", "cupy-cuda13x", "cupy-cuda12x", "cupy", "numpy", "jsondiff", "tabulate", "colorama"):
    try:
        print(f"{package} {md.version(package)}")
    except md.PackageNotFoundError:
        pass
PY
{
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
  nvcc --version | tail -1
  echo "kernelwatch commit: $(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo "${KERNELWATCH_GIT_COMMIT:-unknown}")"
} | tee -a "$OUT/versions.txt"

say "(a) Python benchmark: A, B (separate processes), and slowed"
run_py() {  # name, then environment assignments
  local name=$1
  shift
  # Run from $OUT with a relative path: the JSON names its sample files as `<name>-bin/<n>.bin`.
  (cd "$OUT" && env "$@" python3 "$REPO/tests/data/nvbench/src/kernels_bench.py" \
    "${LIMITS[@]}" --jsonbin "$name" --md "${name%.json}.md") || {
    echo "--jsonbin failed for $name; trying --json" >&2
    (cd "$OUT" && env "$@" python3 "$REPO/tests/data/nvbench/src/kernels_bench.py" \
      "${LIMITS[@]}" --json "$name" --md "${name%.json}.md")
  }
  du -sh "$OUT/$name" "$OUT/$name-bin" 2>&1
}
run_py py-a.json NVBENCH_SLOW=0
run_py py-b.json NVBENCH_SLOW=0
run_py py-slow.json NVBENCH_SLOW=1

say "(b) C++ benchmark against the wheel's nvbench"
NVBENCH_DIR=$SITE/cuda/bench/cu13/nvbench/lib/cmake/nvbench
BUILD=/tmp/nvbench-example-build
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if cmake -S "$REPO/tests/data/nvbench/src" -B "$BUILD" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -Dnvbench_DIR="$NVBENCH_DIR" >"$OUT/cpp-build.log" 2>&1 &&
  cmake --build "$BUILD" -j >>"$OUT/cpp-build.log" 2>&1; then
  (cd "$OUT" && LD_LIBRARY_PATH=$SITE/cuda/bench/cu13/nvbench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$BUILD/axpy_bench" "${LIMITS[@]}" --jsonbin cpp.json --md cpp.md) ||
    echo "axpy_bench failed (exit $?)"
  du -sh "$OUT/cpp.json" "$OUT/cpp.json-bin" 2>&1
else
  echo "C++ build failed; the end of $OUT/cpp-build.log:"
  tail -30 "$OUT/cpp-build.log"
fi

say "(c) nvbench's compare scripts"
for contender in py-b.json py-slow.json; do
  for script in nvbench_compare nvbench_compare_robust; do
    echo "--- $script py-a.json $contender"
    (cd "$OUT" && python3 -m "cuda.bench.scripts.$script" py-a.json "$contender" 2>&1; echo "exit $?") |
      tee -a "$OUT/nvbench_compare.txt"
  done
done

say "(d) kernelwatch on them"
export PYTHONPATH=$REPO/tools:$PYTHONPATH
kw() { python3 -m kernelwatch "$@"; }
{
  echo "--- kernelwatch compare py-a.json py-b.json (A/A)"
  kw compare "$OUT/py-a.json" "$OUT/py-b.json"
  echo "exit $?"
  echo "--- kernelwatch compare py-a.json py-slow.json"
  kw compare "$OUT/py-a.json" "$OUT/py-slow.json"
  echo "exit $?"
  echo "--- kernelwatch compare py-a.json py-b.json --format json"
  kw compare "$OUT/py-a.json" "$OUT/py-b.json" --format json | head -60
  mkdir -p /tmp/nvbench-baselines  # (update refuses a --baselines folder that is not there)
  for f in py-a.json cpp.json; do
    echo "--- kernelwatch baseline update $f --dry-run"
    kw baseline update "$OUT/$f" --dry-run --baselines /tmp/nvbench-baselines
    echo "exit $?"
    echo "--- kernelwatch history ingest $f"
    kw history ingest "$OUT/$f" --db /tmp/nvbench-history.sqlite
    echo "exit $?"
  done
} 2>&1 | tee "$OUT/kernelwatch_compare.txt"

say "sizes"
du -sh "$OUT"
du -a "$OUT" | sort -n | tail -8
