"""The nvbench example (examples/nvbench) and its gate (scripts/gpu/nvbench_gate.sh, which drives
the reusable workflow's scripts/ci/nvbench-gate.sh; docs/ci.md, "Gating an nvbench project").

- The example's wiring, read statically: nvbench from its CMake config, EXAMPLE_SLOW a CMake
  option that only defines the macro, and the macro reaching the transpose's tile alone.
- With nvcc and the cuda-bench wheel at hand (.whl/ or .kernelwatch/dev/): both builds' PTX,
  which differ in the transpose kernel only.
- The GPU machine's gate script itself, with stand-ins for what needs a GPU (cmake, nvidia-smi
  and the benchmark binary, which writes the committed nvbench runs of tests/data/nvbench):
  the workflow script's three gates it drives (baseline, unchanged, slowed), the wheel through
  pip, the two builds, exit statuses, stamps, the carried history and verdict, passing and
  failing.
- The gate's output from the GPU machine, once committed (tests/data/nvbench/gate/).
- The reusable workflow's GPU job (.github/workflows/nvbench-gate.yml, whose steps run
  scripts/ci/nvbench-gate.sh) on the example as a calling project, with the same stand-ins:
  baseline mode, then check mode unchanged and slowed, the history carried between jobs.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, TOOLS, assert_valid_shell

EXAMPLE = REPO / "examples" / "nvbench"
GATE = REPO / "scripts" / "gpu" / "nvbench_gate.sh"
GATE_JOB = REPO / "scripts" / "ci" / "nvbench-gate.sh"  # the reusable workflow's, which it drives
DATA = REPO / "tests" / "data" / "nvbench"
GATE_OUTPUT = DATA / "gate"
UUID = "GPU-54f59374-68c2-fa1d-22b8-e4ffc323f366"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_the_example_finds_nvbench_and_has_the_slow_switch() -> None:
    cmake = (EXAMPLE / "CMakeLists.txt").read_text()
    assert "find_package(nvbench CONFIG REQUIRED)" in cmake
    assert "target_link_libraries(kernels_bench PRIVATE nvbench::main)" in cmake
    assert re.search(r'option\(EXAMPLE_SLOW "[^"]*" OFF\)', cmake), cmake
    # ON defines the macro, OFF nothing: the unchanged build is the plain one
    switch = re.search(r"if\(EXAMPLE_SLOW\)(.*?)endif\(\)", cmake, flags=re.S)
    assert switch and "EXAMPLE_SLOW=1" in switch.group(1), cmake
    # the wheel's CMake package needs 3.30.4 (an older CMake fails in its config file)
    assert "cmake_minimum_required(VERSION 3.30.4)" in cmake


def test_the_slow_switch_changes_the_transpose_alone() -> None:
    source = (EXAMPLE / "kernels_bench.cu").read_text()
    benchmarks = re.findall(r'NVBENCH_BENCH\((\w+)\)\s*\.set_name\("(\w+)"\)', source)
    assert benchmarks == [
        ("copy_bench", "copy"),
        ("transpose_bench", "transpose"),
        ("reduce_bench", "reduce"),
    ]
    assert source.count("EXAMPLE_SLOW") == 3  # the comments' two and one #ifdef
    switched = re.search(r"#ifdef EXAMPLE_SLOW\n(.*?)#endif", source, flags=re.S)
    assert switched and "kTilePad = 0" in switched.group(1) and "kTilePad = 1" in switched.group(1)
    kernels = dict(re.findall(r"__global__ void (\w+)\((.*?)\n}\n", source, flags=re.S))
    assert set(kernels) == {"copy_kernel", "transpose_kernel", "reduce_kernel"}
    assert [k for k, body in kernels.items() if "kTilePad" in body] == ["transpose_kernel"]
    assert source.count("kTilePad") == 3  # its two definitions and the tile


def _wheel() -> Path | None:
    for folder in (REPO / ".whl", REPO / ".kernelwatch" / "dev"):
        found = sorted(folder.glob("cuda_bench-*.whl"))
        if found:
            return found[0]
    return None


def _ptx_entries(ptx: str) -> dict[str, str]:
    """Each kernel's PTX by its mangled name."""
    parts = re.split(r"^(?:\.visible )?\.entry (\S+)\(", ptx, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_both_builds_differ_in_the_transpose_kernel_only(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    wheel = _wheel()
    if not nvcc or wheel is None:
        pytest.skip("needs nvcc and the cuda-bench wheel in .whl/ or .kernelwatch/dev/")
    with zipfile.ZipFile(wheel) as archive:
        headers = [
            n for n in archive.namelist() if n.startswith("cuda/bench/cu13/nvbench/include/")
        ]
        archive.extractall(tmp_path, members=headers)
    include = tmp_path / "cuda" / "bench" / "cu13" / "nvbench" / "include"
    ptx = {}
    for variant, defines in (("fast", []), ("slow", ["-DEXAMPLE_SLOW=1"])):
        out = tmp_path / f"{variant}.ptx"
        subprocess.run(
            [nvcc, "-std=c++17", "-arch=sm_90", "-O3", "-ptx", f"-I{include}", *defines]
            + [str(EXAMPLE / "kernels_bench.cu"), "-o", str(out)],
            check=True,
            capture_output=True,
        )
        ptx[variant] = _ptx_entries(out.read_text())
    assert ptx["fast"].keys() == ptx["slow"].keys()
    changed = [name for name in ptx["fast"] if ptx["fast"][name] != ptx["slow"][name]]
    assert len(changed) == 1 and "transpose_kernel" in changed[0], changed
    ours = [n for n in ptx["fast"] if "kernels_bench" in n]  # (nvbench's noop_kernel aside)
    assert len(ours) == 3, list(ptx["fast"])


FAKE_CMAKE = r"""#!/bin/bash
# stand-in: configure notes EXAMPLE_SLOW; build writes a kernels_bench that replays runs
[ "$1" = --version ] && { echo "cmake version (stand-in)"; exit 0; }
if [ "$1" = --build ]; then
  printf '#!/bin/bash\nexec "%s" "%s" %s "$@"\n' "$KW_PYTHON" "$KW_FAKE_BENCH" "$(cat "$2/slow")" \
    > "$2/kernels_bench"
  chmod +x "$2/kernels_bench"
  exit 0
fi
build="" slow=OFF
while [ $# -gt 0 ]; do
  case $1 in
    -B) build=$2; shift ;;
    -DEXAMPLE_SLOW=*) slow=${1#*=} ;;
    -Dnvbench_DIR=*) [ -f "${1#*=}/nvbench-config.cmake" ] || { echo "no nvbench config"; exit 1; } ;;
  esac
  shift
done
mkdir -p "$build" && echo "$slow" > "$build/slow"
"""

FAKE_SMI = f"""#!/bin/bash
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: {UUID})" ;;
  *) echo "{UUID}, 580.159.04" ;;
esac
"""

# The benchmark binary's stand-in: writes one of the committed GPU runs (py-a, py-b: unchanged;
# py-slow: `slowed` twice the work) under the --jsonbin name, as nvbench names its sample files,
# its kernel `slowed` renamed `transpose`.
FAKE_BENCH = r"""
import json, os, shutil, sys
slow, args = sys.argv[1] == "ON", sys.argv[2:]
name = args[args.index("--jsonbin") + 1]
counter = os.environ["KW_FAKE_COUNTER"]
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
source = os.environ.get("KW_FAKE_SLOW", "py-slow") if slow else ("py-a", "py-b")[n % 2]
data = os.environ["KW_FAKE_DATA"]
document = json.load(open(f"{data}/{source}.json"))
os.makedirs(f"{name}-bin", exist_ok=True)
for benchmark in document["benchmarks"]:
    benchmark["name"] = {"slowed": "transpose"}.get(benchmark["name"], benchmark["name"])
    for state in benchmark["states"]:
        for summary in state["summaries"]:
            if summary["tag"] == "nv/json/bin:nv/cold/sample_times":
                for item in summary["data"]:
                    if item["name"] == "filename":
                        base = os.path.basename(item["value"])
                        shutil.copy(f"{data}/{source}.json-bin/{base}", f"{name}-bin/{base}")
                        item["value"] = f"{name}-bin/{base}"
json.dump(document, open(name, "w"), indent=2)
"""


def _stand_ins(tmp_path: Path, slow_source: str = "py-slow") -> dict[str, str]:
    """The stand-ins (cmake and nvidia-smi first on PATH, the fake benchmark) written into
    tmp_path, and the environment the gate scripts find them by."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("cmake", FAKE_CMAKE), ("nvidia-smi", FAKE_SMI)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "fake_bench.py").write_text(FAKE_BENCH)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "KW_PYTHON": sys.executable,
        "KW_FAKE_BENCH": str(tmp_path / "fake_bench.py"),
        "KW_FAKE_COUNTER": str(tmp_path / "count"),
        "KW_FAKE_DATA": str(DATA),
        "KW_FAKE_SLOW": slow_source,
    }


def _gate(tmp_path: Path, slow_source: str = "py-slow") -> tuple[int, str, Path]:
    """scripts/gpu/nvbench_gate.sh in a copy of the tree it needs (no checkout: the commit from
    the environment), with the stand-ins and a wheel pip installs (nvbench's CMake config
    alone)."""
    repo = tmp_path / "repo"
    for script in (GATE, GATE_JOB):
        (repo / script.parent.relative_to(REPO)).mkdir(parents=True, exist_ok=True)
        shutil.copy(script, repo / script.relative_to(REPO))
    shutil.copytree(EXAMPLE, repo / "examples" / "nvbench")
    (repo / "tools").symlink_to(TOOLS)
    (repo / ".whl").mkdir()
    with zipfile.ZipFile(repo / ".whl" / "cuda_bench-0.3.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("cuda/bench/cu13/nvbench/lib/cmake/nvbench/nvbench-config.cmake", "")
        info = "cuda_bench-0.3.0.dist-info"
        wheel.writestr(
            f"{info}/METADATA", "Metadata-Version: 2.1\nName: cuda-bench\nVersion: 0.3.0\n"
        )
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    out = tmp_path / "out"
    outside = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env = dict(
        outside,
        **_stand_ins(tmp_path, slow_source),
        PYTHONPATH=str(TOOLS),
        OUT=str(out),
        SITE=str(tmp_path / "site"),
        BUILD=str(tmp_path / "build"),
        KERNELWATCH_GIT_COMMIT=COMMIT,
        GIT_CEILING_DIRECTORIES=str(tmp_path),  # (no checkout: the commit from the environment)
    )
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "gpu" / "nvbench_gate.sh")],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr, out


needs_runs = pytest.mark.skipif(
    not (DATA / "py-slow.json").is_file(), reason="no nvbench runs in tests/data/nvbench"
)


@needs_runs
def test_the_gate_passes_when_the_unchanged_run_passes_and_the_slowed_one_fails(
    tmp_path: Path,
) -> None:
    status, output, out = _gate(tmp_path)
    assert status == 0, output
    summary = (out / "summary.txt").read_text()
    assert f"commit: {COMMIT}" in summary and UUID in summary
    assert "unchanged run vs baseline: exit 0 (expected 0)" in summary
    assert "vs baseline: exit 1 (expected 1, REGRESSION on transpose only)" in summary
    assert re.search(r"^  REGRESSION +transpose/", summary, flags=re.M), summary
    assert summary.rstrip().splitlines()[-1].startswith("gate: PASS")
    # the baseline: two stamped processes of one card, with the commit
    folder = out / "baselines" / "nvidia-h200-sm90"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["commit"] == COMMIT and manifest["processes"] == 2
    with gzip.open(folder / "result.json.gz", "rt") as packed:  # the script's --compress
        runs = json.load(packed)["context"]["kernelwatch_baseline_runs"]
    assert [r["card"] for r in runs] == [UUID, UUID]
    assert (out / "baselines" / "kernelwatch.toml").is_file()
    # made by the workflow's script in baseline mode (its job summary), from the commit given
    made = (out / "base" / "job-summary.md").read_text()
    assert made.startswith("### nvbench baseline for nvidia-h200-sm90\n"), made
    assert f"Pooled from 2 runs of commit `{COMMIT}`." in made
    assert (out / "base" / "baselines" / "nvidia-h200-sm90" / "manifest.json").is_file()
    # nvbench from the wheel through pip (GATE_NVBENCH_PIP); the slowed build apart (EXAMPLE_SLOW)
    assert (tmp_path / "site" / "cuda_bench-0.3.0.dist-info").is_dir()
    assert (tmp_path / "build-fast" / "slow").read_text() == "OFF\n"
    assert (tmp_path / "build-slow" / "slow").read_text() == "ON\n"
    # compared at the process level (the same card), as the stamp makes it
    assert "note: level: process (same card" in (out / "unchanged" / "compare.txt").read_text()
    # the history, carried from gate to gate: both baseline runs, the unchanged one and the
    # slowed one (the slowed build's: the stand-in replays py-slow), with the commit
    with sqlite3.connect(out / "history.sqlite") as connection:
        rows = connection.execute("SELECT git_commit, source, context FROM runs ORDER BY id")
        runs = rows.fetchall()
    assert [r[0] for r in runs] == [COMMIT] * 4
    assert [Path(r[1]).relative_to(out).as_posix() for r in runs] == [
        "base/runs/base-1.json",
        "base/runs/base-2.json",
        "unchanged/runs/pr.json",
        "slow/runs/pr.json",
    ]
    assert "py-slow.json" in json.loads(runs[-1][2])["nvbench_argv"]
    # the pull-request comments, and the reports
    for gate in ("unchanged", "slow"):
        comment = (out / gate / "comment.md").read_text()
        assert comment.startswith("<!-- kernelwatch:nvidia-h200-sm90 -->\n"), comment
        assert COMMIT[:12] in comment
    assert "transpose/" in comment
    report = json.loads((out / "slow" / "compare.json").read_text())
    assert report and (out / "slow" / "report.xml").is_file()
    assert "REGRESSION" in (out / "slow" / "job-summary.md").read_text()


@needs_runs
def test_the_gate_fails_when_the_slowed_build_is_not_caught(tmp_path: Path) -> None:
    status, output, out = _gate(tmp_path, slow_source="py-b")
    assert status == 1, output
    summary = (out / "summary.txt").read_text()
    assert "vs baseline: exit 0 (expected 1" in summary
    assert summary.rstrip().splitlines()[-1].startswith("gate: FAIL")


@pytest.mark.parametrize("script", [GATE, GATE_JOB], ids=["gpu-gate", "workflow-script"])
def test_the_gate_scripts_are_valid_shell(script: Path) -> None:
    assert_valid_shell(script)


@pytest.mark.skipif(
    not (GATE_OUTPUT / "summary.txt").is_file(),
    reason="no nvbench gate output committed yet: run scripts/gpu/nvbench_gate.sh on the "
    "GPU machine and copy its summary.txt and baselines/ to tests/data/nvbench/gate/",
)
def test_the_gate_on_the_gpu_machine_passed() -> None:
    summary = (GATE_OUTPUT / "summary.txt").read_text()
    assert re.search(r"^gate: PASS", summary, flags=re.M), summary
    assert re.search(r"^commit: [0-9a-f]{40}$", summary, flags=re.M), summary
    assert re.search(r"UUID: GPU-[0-9a-f-]+", summary), summary


@pytest.mark.skipif(
    not (GATE_OUTPUT / "runs").is_dir(), reason="no nvbench gate runs committed yet"
)
@pytest.mark.parametrize("run, expected", [("unchanged", 0), ("slow", 1)])
def test_the_gpu_machines_runs_get_the_same_verdicts_from_todays_code(
    run: str, expected: int, tmp_path: Path
) -> None:
    """The baseline and the runs the gate made there, judged again here: the verdicts the
    GPU machine printed (summary.txt) are what the committed files give, so a change to the
    reading of nvbench's files or to the statistics shows up without a GPU."""
    baselines = GATE_OUTPUT / "baselines"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelwatch",
            "compare",
            str(baselines / "nvidia-h200-sm90" / "result.json.gz"),
            str(GATE_OUTPUT / "runs" / f"{run}.json"),
            "--config",
            str(baselines / "kernelwatch.toml"),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(TOOLS)},
    )
    assert done.returncode == expected, done.stderr
    verdicts = {row["name"]: row["verdict"] for row in json.loads(done.stdout)["benchmarks"]}
    regressions = sorted(name for name, verdict in verdicts.items() if verdict == "REGRESSION")
    summary = (GATE_OUTPUT / "summary.txt").read_text()
    assert regressions == (
        [] if run == "unchanged" else ["transpose/Size:4096", "transpose/Size:8192"]
    )
    for name in regressions:
        assert re.search(rf"^  REGRESSION +{re.escape(name)} ", summary, flags=re.M)


# --- the reusable workflow (.github/workflows/nvbench-gate.yml, scripts/ci/nvbench-gate.sh) ---

GATE_WORKFLOW = REPO / ".github" / "workflows" / "nvbench-gate.yml"
MEASURE = "Build, run with --jsonbin, stamp"
JUDGE = "Compare with this GPU's baseline (baseline mode - pool the runs into it)"
HISTORY = Path("nvbench-gate") / "history.sqlite"


def _caller(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A calling project's checkout (the example, committed; kernelwatch's checkout beside it
    as the workflow makes it, _kernelwatch/) and the stand-ins' environment."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    (project / "_kernelwatch").symlink_to(REPO)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(project)]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([*git, "add", "CMakeLists.txt", "kernels_bench.cu"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "example"], check=True)
    nvbench = tmp_path / "nvbench" / "lib" / "cmake" / "nvbench"
    nvbench.mkdir(parents=True)
    (nvbench / "nvbench-config.cmake").write_text("")
    env = {
        **_stand_ins(tmp_path),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "KW_NVBENCH_DIR": str(nvbench),
    }
    (tmp_path / "runner-temp").mkdir()
    return project, env


def _gate_job(
    project: Path, env: dict[str, str], mode: str, run_id: int, cmake_args: str = ""
) -> tuple[int, str, str]:
    """The measure job's two steps in workflow run `run_id`, as Actions runs them
    (test_workflow_steps.run_step: bash -e, the job's env from the inputs), the history carried
    between calls as the cache carries it: restored before `judge` from the last save, saved
    after it. (status, slug, log)"""
    from test_workflow_steps import run_step

    inputs = {
        "name": "nvbench",
        "mode": mode,
        "source-dir": ".",
        "cmake-args": cmake_args,
        "benchmark": "kernels_bench",
        "benchmark-args": "--min-samples 20",
        "baselines": "baselines",
        "config": "",
        "nvbench-dir": env["KW_NVBENCH_DIR"],
        "nvbench-pip": "",
        "baseline-runs": "2",
    }
    contexts = {f"inputs.{k}": v for k, v in inputs.items()}
    contexts["github.event.pull_request.head.sha || github.sha"] = COMMIT
    contexts["github.run_id"] = str(run_id)
    saved = project.parent / "cache" / "history.sqlite"
    shutil.rmtree(project / "nvbench-gate", ignore_errors=True)  # every job starts clean
    old = dict(os.environ)
    os.environ.update(env)
    os.environ.pop("KERNELWATCH_GIT_COMMIT", None)  # (the runs stamped with the checkout's HEAD)
    try:
        status, output, log = run_step(
            "measure", MEASURE, project, contexts=contexts, workflow=GATE_WORKFLOW
        )
        slug = output.removeprefix("slug=").strip()
        if status != 0:
            return status, slug, log
        if saved.is_file():  # actions/cache/restore
            shutil.copy(saved, project / HISTORY)
        status, _, judged = run_step(
            "measure", JUDGE, project, contexts=contexts, workflow=GATE_WORKFLOW
        )
        if (project / HISTORY).is_file():  # actions/cache/save
            saved.parent.mkdir(exist_ok=True)
            shutil.copy(project / HISTORY, saved)
        return status, slug, log + judged
    finally:
        os.environ.clear()
        os.environ.update(old)


def _history_runs(project: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(project / HISTORY) as connection:
        return connection.execute("SELECT git_commit, context FROM runs ORDER BY id").fetchall()


@needs_runs
def test_the_reusable_workflow_gates_an_nvbench_project(tmp_path: Path) -> None:
    """baseline mode (two runs, pooled, uploaded: committed here by hand as a maintainer
    would), then check mode: an unchanged run passes, the slowed build fails naming the
    transpose, each with the comment's body; every run goes into the carried history."""
    project, env = _caller(tmp_path)
    head = subprocess.run(
        ["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    # No baseline committed yet: check stops with 2 and says what to do.
    status, slug, log = _gate_job(project, env, "check", 5)
    assert status == 2 and slug == "nvidia-h200-sm90", log
    assert "no baseline for this GPU (nvidia-h200-sm90) in baselines/" in log
    assert not (project / "nvbench-gate" / "comment.md").exists()

    status, slug, log = _gate_job(project, env, "baseline", 6)
    assert status == 0, log
    made = project / "nvbench-gate" / "baselines" / slug
    assert sorted(p.name for p in made.iterdir()) == [
        "manifest.json",
        "noise.json",
        "result.json.gz",
    ]
    manifest = json.loads((made / "manifest.json").read_text())
    assert manifest["commit"] == head and manifest["processes"] == 2
    assert (
        (project / ".github_step_summary")
        .read_text()
        .startswith(f"### nvbench baseline for {slug}")
    )
    # the maintainer commits the artifact, with the project's settings
    shutil.copytree(made, project / "baselines" / slug)
    shutil.copy(EXAMPLE / "kernelwatch.toml", project / "baselines" / "kernelwatch.toml")

    status, _, log = _gate_job(project, env, "check", 7)
    assert status == 0, log
    out = project / "nvbench-gate"
    assert "note: level: process (same card" in (out / "compare.txt").read_text()
    comment = (out / "comment.md").read_text()
    assert comment.startswith(f"<!-- kernelwatch:{slug} -->\n")
    assert "actions/runs/7" in comment and COMMIT[:12] in comment  # the run and the PR's head
    assert (out / "report.xml").is_file() and json.loads((out / "compare.json").read_text())

    status, _, log = _gate_job(project, env, "check", 8, cmake_args="-DEXAMPLE_SLOW=ON")
    assert status == 1, log
    rows = (out / "compare.txt").read_text().splitlines()
    regressions = [line.split()[1] for line in rows if line.startswith("REGRESSION")]
    assert regressions and all(name.startswith("transpose/") for name in regressions), rows
    comment = (out / "comment.md").read_text()
    assert comment.startswith(f"<!-- kernelwatch:{slug} -->\n") and "transpose/" in comment
    assert "REGRESSION" in (project / ".github_step_summary").read_text()
    # the history, carried from job to job: the baseline's two runs, the unchanged, the slowed
    runs = _history_runs(project)
    assert [commit for commit, _ in runs] == [head] * 4
    assert all(json.loads(context).get("gpu_name") for _, context in runs)
    # A re-run of the slowed job (the same workflow run, measured again) replaces its run: one
    # point per workflow run; each under its job's key.
    before = _history_runs(project)
    status, _, log = _gate_job(project, env, "check", 8, cmake_args="-DEXAMPLE_SLOW=ON")
    assert status == 1, log
    runs = _history_runs(project)
    assert len(runs) == 4 and runs[:3] == before[:3] and runs[3] != before[3]
    with sqlite3.connect(project / HISTORY) as connection:
        keys = [k for (k,) in connection.execute("SELECT run_key FROM runs ORDER BY id")]
    prefix = f"nvbench-gate/nvbench/{{}}/{slug}/"
    assert keys == [
        prefix.format(6) + "base-1.json",
        prefix.format(6) + "base-2.json",
        prefix.format(7) + "pr.json",
        prefix.format(8) + "pr.json",
    ]


@needs_runs
def test_the_reusable_workflow_stops_with_3_when_the_build_fails(tmp_path: Path) -> None:
    project, env = _caller(tmp_path)
    env["KW_NVBENCH_DIR"] = str(tmp_path / "nowhere")
    status, slug, log = _gate_job(project, env, "check", 7)
    assert status == 3 and slug == "", log
    assert "no nvbench CMake config" in log
