"""Shared helpers for the kernelwatch tests.

The package is imported from tools/ (no install needed). Tests that must see the installed
console script use `installed_kernelwatch()` and skip when it is absent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
GPU_DATA = REPO / "tests" / "data" / "gpu"
sys.path.insert(0, str(TOOLS))

import dependencies  # noqa: E402  (tests/tools/dependencies.py)
from kernelwatch import cli, synthetic  # noqa: E402
from kernelwatch.loading import from_documents  # noqa: E402
from kernelwatch.results import PROCESS_KEY, ResultSet  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skips without one)")


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI a test dependency that did not install fails the run, in one line; on a
    developer's machine its tests skip with the reason (dependencies.py)."""
    if dependencies.in_ci():
        gone = dependencies.missing()
        if gone:
            pytest.exit(dependencies.message(gone), returncode=3)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """With KW_REQUIRE_GPU=1 (`tools/kw test --gpu`, the GPU runner) a GPU test that skips
    fails: there a skip means the GPU was not usable, and a skipped test proves nothing."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("KW_REQUIRE_GPU") != "1" or not report.skipped:
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
    if item.get_closest_marker("gpu") is not None or "GPU" in reason.split(":")[0]:
        report.outcome = "failed"
        report.longrepr = f"a GPU test skipped where a GPU is required (KW_REQUIRE_GPU=1): {reason}"


# Property tests must not flake: derandomized (fixed seed), no example database in the repo.
settings.register_profile(
    "kernelwatch",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=60,
)
settings.load_profile("kernelwatch")

H100_CONTEXT = {
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_compute_capability": "9.0",
    "gpu_driver_version": "580.159.04",
    "cuda_runtime_version": "13.0",
    "gpu_sm_clock_khz": "1980000",
    # One card of one host: synthetic results compare at the process level (levels.py).
    "gpu_uuid": "GPU-00000000-test-card",
    "host_gpu_uuids": "GPU-00000000-test-card",
    # The harness's: its `noise` counter is read as the harness's (results.harness_noise).
    "kernelwatch_noise_target": "0.005",
}


def git(repo: Path, *args: str) -> str:
    """git in a test repository, as a fixed author; its output, stripped."""
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=kw", "-c", "user.email=kw@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@contextlib.contextmanager
def shells_pipe(data: bytes) -> Iterator[Path]:
    """A pipe without a name holding `data`, as the shell's `<(...)` gives one (/dev/fd/N), its
    writer a thread."""
    read, write = os.pipe()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield Path(f"/dev/fd/{read}")
    finally:
        os.close(read)  # (a writer still waiting for a reader gets EPIPE and ends)
        writer.join(timeout=10)


def gpu_files() -> list[Path]:
    """Real result files from the GPU machines (checked in unedited, most of them gzipped)."""
    return sorted([*GPU_DATA.glob("*.json"), *GPU_DATA.glob("*.json.gz")])


def gpu_file_params() -> list[Any]:
    files = gpu_files()
    if files:
        return [pytest.param(f, id=f.name) for f in files]
    return [
        pytest.param(
            None,
            marks=pytest.mark.skip(
                reason=f"no real GPU result files yet under {GPU_DATA.relative_to(REPO)}/*.json[.gz]"
            ),
        )
    ]


def rows_for(
    spec: Mapping[str, Sequence[float]],
    *,
    # Microseconds: GPU kernels last microseconds, and compare's prior for an unmeasured
    # level has a launch-jitter term in ns (levels.prior) that would swamp 100 ns "kernels".
    time_unit: str = "us",
    aggregates: bool = True,
    counters: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
    version: str = "1.8",
) -> list[dict[str, Any]]:
    """Google Benchmark rows for {name: repetition times}."""
    rows: list[dict[str, Any]] = []
    for index, (name, times) in enumerate(spec.items()):
        rows += synthetic.benchmark_rows(
            name,
            list(times),
            time_unit=time_unit,
            aggregates=aggregates,
            family_index=index,
            counters=(counters or {}).get(name),
            version=version,
        )
    return rows


def document(
    spec: Mapping[str, Sequence[float]] | None = None,
    *,
    rows: Iterable[dict[str, Any]] = (),
    context: Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    all_rows = (rows_for(spec, **options) if spec else []) + list(rows)
    return synthetic.document(all_rows, H100_CONTEXT if context is None else context)


def merged(
    spec: Mapping[str, Sequence[Sequence[float]]],
    counters: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One result file as `kernelwatch run --processes K` writes it, from {name: [times of
    process 1, times of process 2, ...]} (us): every row marked with its process."""
    rows: list[dict[str, Any]] = []
    for index, (name, processes) in enumerate(spec.items()):
        times = [t for chunk in processes for t in chunk]
        marks = [p for p, chunk in enumerate(processes, 1) for _ in chunk]
        extra = {PROCESS_KEY: [float(p) for p in marks], **((counters or {}).get(name, {}))}
        rows += synthetic.benchmark_rows(
            name, times, family_index=index, counters=extra, aggregates=False, time_unit="us"
        )
    for row in rows:
        row[PROCESS_KEY] = int(row[PROCESS_KEY])
    return synthetic.document(rows, H100_CONTEXT if context is None else context)


def result_set(
    spec: Mapping[str, Sequence[float]], label: str = "side", **options: Any
) -> ResultSet:
    """A ResultSet straight from {name: times}, without files."""
    return from_documents(label, [document(spec, **options)])


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[..., Path]:
    """write_json(name, spec_or_document, **options) -> path of a result file in tmp_path."""

    def write(name: str, content: Any = None, **options: Any) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, (str, bytes)):
            path.write_bytes(content.encode() if isinstance(content, str) else content)
        elif isinstance(content, dict) and "benchmarks" in content:
            synthetic.write(path, content)
        else:
            synthetic.write(path, document(content, **options))
        return path

    return write


@dataclass
class Run:
    status: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """Run the CLI in this process: run_cli("compare", a, b, ...) -> Run."""

    def run(*args: Any) -> Run:
        status = cli.main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(status, captured.out, captured.err)

    return run


def run_module(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`python3 -m kernelwatch ARGS` in a fresh interpreter, importing the package from tools/."""
    env = dict(os.environ, PYTHONPATH=str(TOOLS), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "kernelwatch", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        **kwargs,
    )


def assert_valid_shell(script: Path) -> None:
    """`script` passes `bash -n`, and shellcheck where it is installed."""
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shellcheck = shutil.which("shellcheck")
    if shellcheck:
        done = subprocess.run([shellcheck, str(script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


def installed_kernelwatch() -> str | None:
    """The `kernelwatch` console script on PATH, if `pip install ./tools` put one there."""
    return shutil.which("kernelwatch")


def process_gone(pid: int, within: float = 5.0) -> bool:
    """Whether process `pid` ends within `within` seconds (a killed grandchild is a zombie until
    init reaps it: not running any more)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        state = Path(f"/proc/{pid}/stat")
        if state.is_file() and state.read_text().split(") ")[-1].startswith("Z"):
            return True
        time.sleep(0.05)
    return False
