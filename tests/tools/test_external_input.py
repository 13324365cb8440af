"""kernelwatch as another project uses it (its CMake package, kernelwatch_add_benchmark, the
build info): a build tree as the package, a checkout at a path with spaces, a project with its
own Google Benchmark, a CUDA-only project, a commit named with quotes. Real CMake runs, each a
configure or one object's build (skipped without cmake or nvcc, failed under CI=true)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, git
from dependencies import in_ci
from kernelwatch import sass

# Only sm_90: nvidia-smi's answer (native) must not change what these tests configure.
ARCH = "-DCMAKE_CUDA_ARCHITECTURES=90"
SAXPY = (REPO / "examples" / "external" / "saxpy_bench.cu").read_text()


def _tools() -> tuple[str, str]:
    """cmake and nvcc; the test skips without them (fails with CI=true)."""
    cmake = shutil.which("cmake")
    nvcc = shutil.which("nvcc") or sass.find_tool("nvcc")
    if cmake is None or nvcc is None:
        if in_ci():
            pytest.fail("cmake or nvcc not found (CI=true: the CMake package tests must run)")
        pytest.skip("cmake or nvcc not found")
    return cmake, nvcc


def cmake(*argv: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmake, nvcc = _tools()
    environment = dict(os.environ if env is None else env, CUDACXX=nvcc)
    environment.pop("CMAKE_GENERATOR", None)  # (the object build below is make's)
    return subprocess.run(
        [cmake, *map(str, argv)], capture_output=True, text=True, env=environment, timeout=600
    )


def words(text: str) -> str:
    """CMake's messages, unwrapped."""
    return " ".join(text.split())


def project(folder: Path, body: str, languages: str = "CXX CUDA") -> Path:
    """A consumer project: its CMakeLists.txt (`body` after project()) and saxpy_bench.cu."""
    folder.mkdir(parents=True)
    (folder / "saxpy_bench.cu").write_text(SAXPY)
    (folder / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.24)\nproject(consumer LANGUAGES {languages})\n{body}\n"
    )
    return folder


@pytest.fixture(scope="module")
def spaced_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kernelwatch's libraries configured from a copy of the checkout at a path with spaces,
    as a team's `git clone` into "~/GPU work/kernelwatch" would be (no tests, no suite)."""
    _tools()
    root = tmp_path_factory.mktemp("external") / "GPU work"
    source = root / "kernel watch"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("cmake", "bench", "families"):
        shutil.copytree(REPO / folder, source / folder, ignore=skip)
    for name in ("CMakeLists.txt", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    build = root / "kw build"
    done = cmake(
        "-S", source, "-B", build, "-G", "Unix Makefiles", ARCH, "-DCMAKE_BUILD_TYPE=Release",
        "-DKERNELWATCH_BUILD_TESTS=OFF", "-DKERNELWATCH_BUILD_BENCHMARKS=OFF",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return build


def test_a_checkout_at_a_path_with_spaces_compiles_its_cuda(spaced_build: Path) -> None:
    """nvcc split `-Xcompiler=-ffile-prefix-map=<checkout>/=` at the space: gcc got two
    arguments ("cannot specify -o with -c ... with multiple files") and no .cu compiled."""
    if shutil.which("make") is None:
        pytest.fail("make not found") if in_ci() else pytest.skip("make not found")
    done = subprocess.run(
        ["make", "-C", str(spaced_build / "bench" / "harness"), "src/blocking_kernel.cu.o"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_build_tree_is_a_package(spaced_build: Path, tmp_path: Path) -> None:
    """The build tree holds a kernelwatchConfig.cmake, which find_package finds from
    CMAKE_PREFIX_PATH or kernelwatch_DIR, but not kernelwatchTargets.cmake or
    kernelwatch_benchmark.cmake, which it includes: "include could not find requested file"."""
    body = (
        "find_package(kernelwatch 0.1 REQUIRED)\n"
        "kernelwatch_add_benchmark(saxpy_bench SOURCES saxpy_bench.cu)\n"
        "get_target_property(links kernelwatch::main INTERFACE_LINK_LIBRARIES)\n"
        'message(STATUS "main links: ${links}")'
    )
    consumer = project(tmp_path / "consumer", body)
    for how in (f"-Dkernelwatch_DIR={spaced_build}", f"-DCMAKE_PREFIX_PATH={spaced_build}"):
        build = tmp_path / how.partition("=")[0].lstrip("-D")
        done = cmake("-S", consumer, "-B", build, how, ARCH)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "main links: kernelwatch::harness" in done.stdout


def test_a_cuda_only_project_is_told_to_enable_cxx(spaced_build: Path, tmp_path: Path) -> None:
    """project(... LANGUAGES CUDA) failed in FindThreads (package) or at generate time with "No
    known features for CXX compiler" (subdirectory): neither named kernelwatch or the fix."""
    package = project(tmp_path / "package", "find_package(kernelwatch REQUIRED)", languages="CUDA")
    done = cmake("-S", package, "-B", tmp_path / "b1", f"-Dkernelwatch_DIR={spaced_build}", ARCH)
    assert done.returncode != 0
    assert "kernelwatch needs the CXX language enabled" in words(done.stderr), done.stderr
    body = (
        f'add_subdirectory("{REPO.as_posix()}" kernelwatch)\n'
        "kernelwatch_add_benchmark(saxpy_bench SOURCES saxpy_bench.cu)"
    )
    subdirectory = project(tmp_path / "subdirectory", body, languages="CUDA")
    done = cmake("-S", subdirectory, "-B", tmp_path / "b2", ARCH)
    assert done.returncode != 0
    expected = "kernelwatch_add_benchmark(saxpy_bench): the CXX language is not enabled here"
    assert expected in words(done.stderr), done.stderr


# A stand-in for the project's own Google Benchmark (built from source by add_subdirectory or
# FetchContent): only its targets and version matter to configuration.
OWN_BENCHMARK = """\
cmake_minimum_required(VERSION 3.24)
project(benchmark VERSION {version} LANGUAGES CXX)
add_library(benchmark STATIC benchmark.cc)
add_library(benchmark::benchmark ALIAS benchmark)
add_library(benchmark_main STATIC benchmark.cc)
add_library(benchmark::benchmark_main ALIAS benchmark_main)
"""


@pytest.mark.parametrize(("version", "flag"), [("1.8.3", "1e-9s"), ("1.7.1", "1e-9")])
def test_a_projects_own_google_benchmark_is_the_one_used(
    tmp_path: Path, version: str, flag: str
) -> None:
    """kernelwatch looked Google Benchmark up with find_package even where the project had
    built its own: with none installed configuration stopped ("benchmark not found"), and with
    another version installed the harness took that one's --benchmark_min_time spelling (1.7's
    "1e-9" against 1.8 headers: a warning per benchmark; 1.8's "1e-9s" against 1.7: exit 2)."""
    body = (
        "add_subdirectory(gbench)\n"
        f'add_subdirectory("{REPO.as_posix()}" kernelwatch)\n'
        "kernelwatch_add_benchmark(saxpy_bench SOURCES saxpy_bench.cu)\n"
        "get_target_property(definitions kernelwatch_harness COMPILE_DEFINITIONS)\n"
        'message(STATUS "harness: ${definitions}")'
    )
    consumer = project(tmp_path / "consumer", body)
    (consumer / "gbench").mkdir()
    (consumer / "gbench" / "CMakeLists.txt").write_text(OWN_BENCHMARK.format(version=version))
    (consumer / "gbench" / "benchmark.cc").write_text("")
    # As a machine without Google Benchmark installed: only the project's own is there.
    done = cmake(
        "-S", consumer, "-B", tmp_path / "build", ARCH, "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f'KERNELWATCH_MINIMAL_MIN_TIME_FLAG="--benchmark_min_time={flag}"' in done.stdout


def test_a_commit_named_with_quotes_still_builds(tmp_path: Path) -> None:
    """KERNELWATCH_GIT_COMMIT went into a C++ string literal as it was: a quote ended it, and
    the benchmark's build failed in its generated *_build_info.cpp."""
    _, nvcc = _tools()
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("no C++ compiler") if in_ci() else pytest.skip("no C++ compiler")
    commit = 'release "v2" C:\\builds\\7\nsecond line'
    output = tmp_path / "build_info.cpp"
    done = cmake(
        f"-DSOURCE_DIR={tmp_path}", f"-DOUTPUT={output}", "-DBUILD_TYPE=Release",
        "-DVERSION=0.1.0", "-P", REPO / "cmake" / "write_build_info.cmake",
        env=dict(os.environ, KERNELWATCH_GIT_COMMIT=commit),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    main = tmp_path / "main.cpp"
    main.write_text(
        "#include <kernelwatch/detail/context.hpp>\n#include <cstdio>\n"
        "int main() { std::fputs(kernelwatch::detail::this_build().git_commit.c_str(), stdout); }\n"
    )
    cuda_include = Path(nvcc).resolve().parent.parent / "include"
    binary = tmp_path / "commit"
    built = subprocess.run(
        [compiler, "-std=c++17", f"-I{REPO / 'bench' / 'harness' / 'include'}",
         f"-I{cuda_include}", str(main), str(output), "-o", str(binary)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert subprocess.run([binary], capture_output=True, text=True).stdout == commit


def test_a_tree_with_uncommitted_changes_records_a_commit_as_long_as_a_clean_one(
    tmp_path: Path,
) -> None:
    """`-dirty` replaces the commit's last six characters: binaries the changes did not touch
    stay identical to the commit's, for the anchor to leave out (test_identical.py)."""
    if shutil.which("git") is None:
        pytest.fail("git not found") if in_ci() else pytest.skip("git not found")
    tracked = tmp_path / "kernel.cu"
    tracked.write_text("// one\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "kernel.cu")
    git(tmp_path, "commit", "-q", "-m", "one")
    head = git(tmp_path, "rev-parse", "HEAD")
    env = {k: v for k, v in os.environ.items() if k != "KERNELWATCH_GIT_COMMIT"}
    output = tmp_path / "build_info.cpp"
    recorded = []
    for text in ("// one\n", "// two\n"):
        tracked.write_text(text)
        done = cmake(
            f"-DSOURCE_DIR={tmp_path}", f"-DOUTPUT={output}", "-DBUILD_TYPE=Release",
            "-DVERSION=0.1.0", "-P", REPO / "cmake" / "write_build_info.cmake", env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        recorded.append(output.read_text().split('info{"')[1].split('"')[0])
    assert recorded == [head, f"{head[:-6]}-dirty"]


def test_two_registrations_on_one_line_compile(tmp_path: Path) -> None:
    """KW_GPU_BENCHMARK named its variable by __LINE__: an author's macro registering two
    benchmarks, or a header's registration at the line number of one in the file including
    it, defined one variable twice ("has already been defined") and the file did not compile."""
    _, nvcc = _tools()
    (tmp_path / "shared.hpp").write_text(
        "#include <kernelwatch/kernelwatch.hpp>\n"
        "static void shared_bench(benchmark::State&) {}\n"
        'KW_GPU_BENCHMARK("shared/one", shared_bench);\n'
    )
    (tmp_path / "mine.cu").write_text(
        '#include "shared.hpp"\n'
        "static void mine(benchmark::State&) {}\n"
        'KW_GPU_BENCHMARK("mine/one", mine);\n'
        "#define BOTH(name, fn) \\\n"
        '  KW_GPU_BENCHMARK(name "/a", fn); KW_GPU_BENCHMARK_VARIANTS(name, {{"b", fn}})\n'
        'BOTH("pair", mine); BOTH("other", mine);\n'
    )
    done = subprocess.run(
        [nvcc, "-std=c++17", "-arch=sm_90", f"-I{REPO / 'bench' / 'harness' / 'include'}",
         "-c", "mine.cu", "-o", "mine.o"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


# A Google Benchmark package of another version than the one kernelwatch was built with.
OTHER_BENCHMARK_CONFIG = """\
add_library(benchmark::benchmark INTERFACE IMPORTED)
add_library(benchmark::benchmark_main INTERFACE IMPORTED)
"""
OTHER_BENCHMARK_VERSION = """\
set(PACKAGE_VERSION "0.9.0")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
"""


def test_a_package_used_with_another_google_benchmark_says_so(
    spaced_build: Path, tmp_path: Path
) -> None:
    """The harness is compiled against one Google Benchmark (its State, and its
    --benchmark_min_time spelling chosen by version: 1.7's "1e-9" against 1.8 is a warning per
    benchmark, 1.8's "1e-9s" against 1.7 exit 2). A project that found another version linked
    the two without a word."""
    other = tmp_path / "other-benchmark"
    other.mkdir()
    (other / "benchmarkConfig.cmake").write_text(OTHER_BENCHMARK_CONFIG)
    (other / "benchmarkConfigVersion.cmake").write_text(OTHER_BENCHMARK_VERSION)
    consumer = project(tmp_path / "consumer", "find_package(kernelwatch REQUIRED)")
    done = cmake(
        "-S", consumer, "-B", tmp_path / "build", ARCH,
        f"-Dkernelwatch_DIR={spaced_build}", f"-Dbenchmark_DIR={other}",
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    said = words(done.stderr)
    assert "kernelwatch was built with Google Benchmark 1." in said, said
    assert "this project finds 0.9.0" in said, said
