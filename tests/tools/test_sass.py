"""sass.py and kernels.py on real machine code: tiny transpose kernels built with nvcc for
sm_90 and read back with cuobjdump (skipped without them, failed under CI=true)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelwatch import explain, explanation, kernels, sass

SOURCE = r"""
#define TILE 32
template <typename T>
__global__ void transpose(T* out, const T* in, int n) {
  __shared__ T tile[TILE][TILE + PAD];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < n && y + j < n)
      out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j] TWICE;
}
__global__ void scale(float* p) { p[threadIdx.x] *= 2; }
int main() {
  float *a = nullptr, *b = nullptr;
  transpose<float><<<dim3(4, 4), dim3(32, ROWS)>>>(a, b, 128);
  scale<<<1, 32>>>(a);
}
"""
NAME = "_Z9transposeIfEvPT_PKS0_i"
VARIANTS = {
    "padded": ["-DPAD=1", "-DROWS=8", "-DTWICE="],
    "padded_again": ["-DPAD=1", "-DROWS=8", "-DTWICE="],
    "unpadded": ["-DPAD=0", "-DROWS=8", "-DTWICE="],
    "rows16": ["-DPAD=1", "-DROWS=16", "-DTWICE="],
    "twice": ["-DPAD=1", "-DROWS=8", "-DTWICE=+tile[threadIdx.y+j][threadIdx.x]"],
}


def _nvcc() -> str | None:
    return shutil.which("nvcc") or sass.find_tool("nvcc")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    nvcc, cuobjdump = _nvcc(), sass.find_tool("cuobjdump")
    if nvcc is None or cuobjdump is None:
        missing = "nvcc" if nvcc is None else "cuobjdump"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} not found (CI=true: the SASS tests must run)")
        pytest.skip(f"{missing} not found: cannot build and disassemble test kernels")
    folder = tmp_path_factory.mktemp("sass")
    source = folder / "transpose.cu"
    source.write_text(SOURCE)
    binaries = {}
    for name, defines in VARIANTS.items():
        out = folder / name
        subprocess.run(
            [nvcc, "-arch=sm_90", "-O3", "-o", str(out), str(source), *defines],
            check=True,
            capture_output=True,
        )
        binaries[name] = out
    return binaries


def _kernel(binary: Path) -> sass.Kernel:
    arch, found = sass.kernels_for_gpu(binary, "9.0")
    assert arch == "sm_90"
    return found[NAME]


def test_identical_code_has_identical_fingerprint(built: dict[str, Path]) -> None:
    a, b = _kernel(built["padded"]), _kernel(built["padded_again"])
    assert a.fingerprint == b.fingerprint


def test_removed_padding_changes_the_code(built: dict[str, Path]) -> None:
    a, b = _kernel(built["padded"]), _kernel(built["unpadded"])
    assert a.fingerprint != b.fingerprint
    # One padding column of 32 floats (cuobjdump's SHARED includes 1 KiB the system reserves).
    assert a.resources["SHARED"] - b.resources["SHARED"] == 32 * 4
    diff = sass.diff(a, b)
    assert diff.diff and diff.diff[0].startswith("---")
    ops = {op for op, _, _ in diff.shared}
    assert {"LDS", "STS"} <= ops  # the shared-memory op counts are shown, moved or not


def test_launch_only_change_keeps_the_code(built: dict[str, Path]) -> None:
    assert _kernel(built["padded"]).fingerprint == _kernel(built["rows16"]).fingerprint


def test_instruction_mix_shows_doubled_shared_loads(built: dict[str, Path]) -> None:
    diff = sass.diff(_kernel(built["padded"]), _kernel(built["twice"]))
    lds = {op: (a, b) for op, a, b in diff.shared}["LDS"]
    assert lds[1] > lds[0]
    assert f"LDS {lds[0]}→{lds[1]}" in diff.mix_text(20)


def _records(block_rows: int) -> list[dict[str, object]]:
    return [
        {
            "benchmark": "transpose/best/float/128",
            "kernels": [
                {
                    "name": NAME,
                    "grid": [4, 4, 1],
                    "block": [32, block_rows, 1],
                    "dynamic_shared_bytes": 0,
                    "registers": 18,
                    "static_shared_bytes": 4224,
                    "local_bytes": 0,
                    "blocks_per_sm": 64 // block_rows,
                }
            ],
            "other_nodes": {},
        }
    ]


def _classify(binary_a: Path, rows_a: int, binary_b: Path, rows_b: int) -> explanation.KernelChange:
    # The binaries get one name, as the same benchmark binary of two builds does.
    entry_a = kernels.context_entry({binary_a: _records(rows_a)}, "9.0")
    entry_b = kernels.context_entry({binary_b: _records(rows_b)}, "9.0")
    entry_b["benchmarks"]["transpose/best/float/128"]["binary"] = binary_a.name
    entry_b["code"] = {binary_a.name: entry_b["code"][binary_b.name]}
    return kernels.classify(entry_a, entry_b, "transpose/best/float/n:128/manual_time")


def test_classification_from_fingerprints_and_launches(built: dict[str, Path]) -> None:
    same = _classify(built["padded"], 8, built["padded_again"], 8)
    assert same.change is explanation.Change.IDENTICAL
    assert "came from elsewhere" in same.text()
    code = _classify(built["padded"], 8, built["unpadded"], 8)
    assert code.change is explanation.Change.CODE
    assert "SASS" in code.text() and code.changed_code
    launch = _classify(built["padded"], 8, built["rows16"], 16)
    assert launch.change is explanation.Change.LAUNCH
    assert "block 32x8x1→32x16x1" in launch.text() and "blocks/SM 8→4" in launch.text()


def test_explanation_carries_the_sass_diff(built: dict[str, Path]) -> None:
    change = _classify(built["padded"], 8, built["twice"], 8)
    builds = {
        "A": explain.Build({built["padded"].name: built["padded"]}),
        "B": explain.Build({built["padded"].name: built["twice"]}),
    }

    class _Report:
        class baseline:
            context = {"gpu_compute_capability": "9.0"}

        contender = baseline

    diffs, note = explain._sass_diffs(change, builds, _Report)  # type: ignore[arg-type]
    assert note == "" and diffs and "LDS" in diffs[0].mix_text()
