"""ab.py's rule on real builds: a tiny CUDA program compiled by nvcc in two "worktrees" (each
with its own commit embedded, as the generated *_build_info.cpp does) is identical when nothing
changed, and different for a kernel constant, a __constant__ table, a template argument, a
launch configuration in host code, the harness (another translation unit) and a -D definition
(skipped without nvcc, failed under CI=true)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from kernelwatch import ab, sass

SOURCE = """\
#include <cstdio>
#ifdef BLOCK_REDUCE_ALGORITHM  // (CUB takes 8 s of a 12 s build: only its own test has it)
#include <cub/block/block_reduce.cuh>
#endif
#ifndef SCALE
#define SCALE 2.0f
#endif
__constant__ float table[4] = {1.0f, 2.0f, 3.0f, TABLE_LAST};
namespace {  // nvcc names it after the source's path: differs between worktrees
template <int Unroll, typename Op>
__global__ void scale(float* x, int n, Op op) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * Unroll;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < Unroll; ++k)
    if (i + k < n) sum += x[i + k] = op(x[i + k]) * table[k % 4];
#ifdef BLOCK_REDUCE_ALGORITHM
  using Reduce = cub::BlockReduce<float, BLOCK, cub::BLOCK_REDUCE_ALGORITHM>;
  __shared__ typename Reduce::TempStorage storage;
  float total = Reduce(storage).Sum(sum);
#else
  float total = sum;
#endif
  if (threadIdx.x == 0) x[blockIdx.x] = total;
}
}  // namespace
int harness_version();  // another translation unit, as the harness library is
int main() {
  float* x;
  cudaMalloc(&x, 1 << 20);
  auto op = [] __device__(float v) { return v * SCALE; };
  scale<UNROLL><<<(262144 / UNROLL + BLOCK - 1) / BLOCK, BLOCK>>>(x, 262144, op);
  cudaDeviceSynchronize();
  std::printf("%s %s %d\\n", COMMIT, __FILE__, harness_version());
  return 0;
}
"""

HARNESS = """\
#ifndef HARNESS_VERSION
#define HARNESS_VERSION 1
#endif
int harness_version() { return HARNESS_VERSION; }
"""

BASE = ("-DTABLE_LAST=4.0f", "-DUNROLL=1", "-DBLOCK=256")
ALGORITHM = "-DBLOCK_REDUCE_ALGORITHM=BLOCK_REDUCE_WARP_REDUCTIONS"
CHANGES = {
    "a kernel constant": ("-DSCALE=3.0f",),
    "a __constant__ table": ("-DTABLE_LAST=5.0f",),
    "a template argument": ("-DUNROLL=2",),
    "the launch configuration": ("-DBLOCK=128",),
    "the harness (a library linked into every binary)": ("-DHARNESS_VERSION=2",),
}
# As the project's CMakeLists.txt compiles CUDA: seeded names, an uncompressed fatbin.
PROJECT_FLAGS = ("-frandom-seed=kernelwatch", "--compress-mode=none", "--extended-lambda")


def _nvcc() -> str:
    nvcc = shutil.which("nvcc") or sass.find_tool("nvcc")
    if nvcc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvcc not found (CI=true: the real-build tests must run)")
        pytest.skip("nvcc not found: cannot build test programs")
    return nvcc


def build(root: Path, sha: str, *defines: str) -> tuple[ab.Build, Path]:
    """A worktree root/<sha> holding the source, built into its build/bench, with a
    CMakeCache.txt and the target's flags.make naming the worktree and the flags."""
    worktree = root / sha
    bench = worktree / "build" / "bench"
    target = bench / "CMakeFiles" / "kernelwatch_bench_tiny.dir"
    target.mkdir(parents=True, exist_ok=True)
    source = worktree / "tiny.cu"
    source.write_text(SOURCE)
    harness = worktree / "harness.cpp"  # (host code: a .cu took 3 s more a build)
    harness.write_text(HARNESS)
    flags = [*BASE, *defines]
    binary = bench / "kernelwatch_bench_tiny"
    # (as the project does: __FILE__ relative to the checkout)
    relative = f"-Xcompiler=-ffile-prefix-map={worktree}/="
    command = [_nvcc(), "-arch=sm_90", "-O3", *PROJECT_FLAGS, relative, "-o", str(binary)]
    command += [str(source), str(harness)]
    subprocess.run([*command, *flags, f'-DCOMMIT="{sha}"'], check=True, capture_output=True)
    return settings(sha, worktree, flags), binary


def settings(sha: str, worktree: Path, flags: list[str]) -> ab.Build:
    """The build's CMakeCache.txt and its target's flags.make, naming the worktree and flags."""
    target = worktree / "build" / "bench" / "CMakeFiles" / "kernelwatch_bench_tiny.dir"
    (worktree / "build" / "CMakeCache.txt").write_text(
        f"CMAKE_BUILD_TYPE:STRING=Release\nfake_SOURCE_DIR:STATIC={worktree}\n"
    )
    (target / "flags.make").write_text(f"CUDA_DEFINES = {' '.join(flags)}\n")
    (target / "link.txt").write_text(f"nvcc -o {worktree / 'build/bench/kernelwatch_bench_tiny'}\n")
    return ab.Build(sha, worktree, worktree / "build")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[ab.Build, Path]:
    """Side A, built once: no test changes it (a build takes 3 s of CI's 2 cores, ten
    times). B is built in each test's tmp_path: a path of another length, which the project's
    -ffile-prefix-map and the build settings' placeholder make no difference of (as a
    checkout's path against ab's longer worktree path)."""
    return build(tmp_path_factory.mktemp("reference") / "A", "a" * 40)


def test_the_same_source_in_another_worktree_is_identical(reference, tmp_path: Path) -> None:
    a, a_binary = reference
    b, b_binary = build(tmp_path / "B", "b" * 40)
    assert a_binary.read_bytes() != b_binary.read_bytes()  # the commit, the paths, tmpxft_<pid>
    assert ab.differs(a, a_binary, b, b_binary) is None
    assert ab.select(a, [a_binary], b, [b_binary]) == {b_binary.name: None}


def test_a_checkout_at_a_longer_path_is_identical(reference, tmp_path: Path) -> None:
    """The anchored run compares the checkout's build with the baseline commit's in `ab`'s
    worktree, whose path is longer: with the project's -ffile-prefix-map the binaries hold no
    path, and the build settings' paths are one placeholder whatever their length."""
    a, a_binary = reference
    b, b_binary = build(tmp_path / "B" / ".kernelwatch" / "worktrees", "b" * 40)
    assert ab.differs(a, a_binary, b, b_binary) is None


def test_a_tree_with_uncommitted_changes_is_identical_where_they_did_not_reach(
    reference, tmp_path: Path
) -> None:
    """Its build records the commit cut by six characters and `-dirty`, as long as a clean
    build's commit (write_build_info.cmake). The whole commit and `-dirty`, six characters
    longer, moved the code and data after it: no binary was ever identical to the commit's."""
    a, a_binary = reference
    assert ab.differs(a, a_binary, *build(tmp_path / "B", "b" * 34 + "-dirty")) is None
    longer = build(tmp_path / "C", "c" * 40 + "-dirty")
    assert ab.differs(a, a_binary, *longer) == "machine code or data differ"


def assert_code_tells(a: ab.Build, a_binary: Path, b: ab.Build, b_binary: Path) -> None:
    # The flag files differ too: the code alone must already tell.
    shutil.copy(
        a.build_dir / "bench/CMakeFiles/kernelwatch_bench_tiny.dir/flags.make",
        b.build_dir / "bench/CMakeFiles/kernelwatch_bench_tiny.dir/flags.make",
    )
    assert ab.differs(a, a_binary, b, b_binary) == "machine code or data differ"


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_change_is_measured(reference, tmp_path: Path, change: str) -> None:
    a, a_binary = reference
    assert_code_tells(a, a_binary, *build(tmp_path / "B", "b" * 40, *CHANGES[change]))


def test_a_header_only_librarys_algorithm_is_measured(tmp_path: Path) -> None:
    """CUB's BlockReduce, warp reductions against raking: a change in code the project does
    not hold."""
    a, a_binary = build(tmp_path / "A", "a" * 40, ALGORITHM)
    raking = ALGORITHM.replace("WARP_REDUCTIONS", "RAKING")
    assert_code_tells(a, a_binary, *build(tmp_path / "B", "b" * 40, raking))


def test_a_definition_the_code_ignores_is_still_a_change(reference, tmp_path: Path) -> None:
    a, a_binary = reference
    b, b_binary = build(tmp_path / "B", "b" * 40, "-DUNUSED=1")
    assert ab.differs(a, a_binary, b, b_binary) == "build settings differ"
    (b.build_dir / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=RelWithDebInfo\n")
    assert ab.differs(a, a_binary, b, b_binary) == "build settings differ"


def test_what_cannot_be_compared_is_measured(reference, tmp_path: Path) -> None:
    a, a_binary = reference
    # B: A's build copied to its own worktree (what differs about it is made by hand below)
    shutil.copytree(a.worktree, tmp_path / "B")
    b = settings("b" * 40, tmp_path / "B", list(BASE))
    b_binary = b.build_dir / a_binary.relative_to(a.build_dir)
    (b.build_dir / "CMakeCache.txt").unlink()
    assert "No such file" in str(ab.differs(a, a_binary, b, b_binary))
    b = settings("b" * 40, tmp_path / "B", list(BASE))
    b_binary.write_bytes(a_binary.read_bytes()[:4096])
    assert "an ELF file cut short" in str(ab.differs(a, a_binary, b, b_binary))
    b_binary.write_text("#!/bin/sh\n")
    assert "not a 64-bit little-endian ELF file" in str(ab.differs(a, a_binary, b, b_binary))
    other = b_binary.with_name("other")
    assert ab.select(a, [a_binary], b, [other]) == {"other": "new in B"}
