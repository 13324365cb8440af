"""Running Google Benchmark binaries and merging their outputs into one result.

Used by `kernelwatch run`, `ab` and `selftest`. Nothing here parses terminal output: each
binary writes its result with --benchmark_out (JSON), and the benchmarks it will run are
known beforehand from --benchmark_list_tests.

A binary may run as several processes (RunSettings.processes), its repetitions split between
them: repetitions inside one process understate the variation between runs, and the spread
of the per-process medians measures it. The processes are interleaved across binaries (every
binary's first process, then every binary's second, ...) so that they are minutes apart.
Every row of the merged result names its process (`kernelwatch_process`, 1-based).
"""

from __future__ import annotations

import contextlib
import datetime
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kernelwatch import kernels
from kernelwatch import locks
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError
from kernelwatch.gbench import read_document, read_json
from kernelwatch.results import PROCESS_KEY, gpu_model

# This project's binaries: BUILD/bench/kernelwatch_bench_<family>.
BINARY_GLOB = "kernelwatch_bench_*"
BINARY_FOLDER = "bench"

# Why these defaults: docs/running.md.
DEFAULT_REPETITIONS = 10
DEFAULT_MAX_TIME = 0.25  # the harness's own default
DEFAULT_PROCESSES = 2  # `kernelwatch run`: 2 processes of 5 repetitions each

# Exit codes of this project's benchmark binaries (docs/results.md).
EXIT_BAD_ARGUMENTS = 2
EXIT_CONTEXT_LOST = 3
EXIT_NO_GPU = 4

# How the GPU is looked for before anything runs (tests replace these).
NVIDIA_SMI = "nvidia-smi"
GPU_DEVICE_GLOBS: tuple[str, ...] = ("/dev/nvidia[0-9]*", "/dev/dxg")

_NO_GPU_LINE = re.compile(r"no CUDA GPU is visible \((.*)\); nothing to measure")
# Characters special in a POSIX extended regex (Google Benchmark's --benchmark_filter).
_ERE_SPECIAL = frozenset(".[]()*+?{}|^$\\")


@dataclass(frozen=True)
class RunSettings:
    """How each benchmark binary is run."""

    repetitions: int = DEFAULT_REPETITIONS
    max_time: float = DEFAULT_MAX_TIME  # seconds of sampling per repetition (--kernelwatch_max_time)
    interleave: bool = True  # --benchmark_enable_random_interleaving
    extra_args: tuple[str, ...] = ()  # appended to every command (--kernelwatch_device=1, ...)
    verbose: bool = False  # show the binaries' own output on stderr
    processes: int = 1  # processes per binary; `repetitions` is split between them
    record_kernels: bool = True  # kernel records in the context (kernels.py)
    # `run --gpus`: the one GPU this run measures on (its UUID, for the per-GPU lock and
    # CUDA_VISIBLE_DEVICES, which `environment` sets for every benchmark process)
    gpu_uuid: str | None = None
    environment: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.repetitions < 1:
            raise InputError(f"--repetitions {self.repetitions}: must be at least 1")
        if not (self.max_time > 0 and self.max_time <= 3600):
            raise InputError(
                f"--max-time {self.max_time:g}: must be a positive number of seconds (at most 3600)"
            )
        if self.processes < 1:
            raise InputError(f"--processes {self.processes}: must be at least 1")
        if self.processes > self.repetitions:
            raise InputError(
                f"--processes {self.processes}: more processes than --repetitions "
                f"{self.repetitions}; each process needs at least one repetition"
            )

    def split(self) -> list[int]:
        """Repetitions of each process: as even as possible, the first ones get the rest."""
        share, rest = divmod(self.repetitions, self.processes)
        return [share + (1 if k < rest else 0) for k in range(self.processes)]


@dataclass(frozen=True)
class Job:
    """One binary and the benchmarks it will run (as listed with the same filter)."""

    binary: Path
    filter: str | None
    names: tuple[str, ...]
    serial: bool = False  # host-bound: runs with the host to itself (locks.host_exclusive)


# --- finding binaries and the GPU ------------------------------------------------------------


def find_binaries(build_dir: Path) -> list[Path]:
    """This project's benchmark binaries in BUILD/bench, in name order."""
    folder = build_dir / BINARY_FOLDER
    found = []
    for path in sorted(folder.glob(BINARY_GLOB)):
        if path.is_file() and os.access(path, os.X_OK) and "." not in path.name:
            found.append(path)
    return found


def check_binary(path: Path) -> Path:
    """A binary named with --bench: must be an executable file."""
    if not path.exists():
        raise InputError(f"--bench {path}: no such file")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise InputError(f"--bench {path}: not an executable file")
    return path


def gpu_absent_reason(probe: Path | None, extra_args: Sequence[str] = ()) -> str | None:
    """Why no CUDA GPU can be used, or None when one seems usable. Asks `nvidia-smi -L` when
    there is one; else runs `probe` (a benchmark binary) with a filter that matches nothing, so
    that it only opens the GPU (this project's binaries exit 4 without one); else looks for
    NVIDIA device files."""
    smi = shutil.which(NVIDIA_SMI)
    if smi:
        try:
            done = subprocess.run(
                [smi, "-L"],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"nvidia-smi -L failed: {exc}"
        if done.returncode == 0 and any(
            line.startswith("GPU ") for line in done.stdout.splitlines()
        ):
            return None
        said = _last_line(done.stdout + "\n" + done.stderr)
        return f"nvidia-smi -L: {said or f'exit status {done.returncode}, no GPU listed'}"
    if probe is not None:
        command = [str(probe), "--benchmark_filter=^$", *extra_args]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None  # the real run will say what is wrong with the binary
        if done.returncode == EXIT_NO_GPU:
            return f"no nvidia-smi; {probe.name}: {_no_gpu_reason(done.stderr)}"
        return None
    if not any(glob.glob(pattern) for pattern in GPU_DEVICE_GLOBS):
        return "no nvidia-smi, no /dev/nvidia* device files"
    return None


def require_gpu(probe: Path | None, extra_args: Sequence[str] = ()) -> None:
    reason = gpu_absent_reason(probe, extra_args)
    if reason is not None:
        raise NoGpuError(f"no CUDA GPU is visible ({reason}); nothing to measure")


def _no_gpu_reason(stderr: str) -> str:
    match = _NO_GPU_LINE.search(stderr)
    if match:
        return match.group(1)
    return _last_line(stderr) or "exit status 4 (no usable GPU)"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- filters --------------------------------------------------------------------------------


def ere_escape(name: str) -> str:
    """`name` as a POSIX extended regex that matches it literally."""
    return "".join("\\" + ch if ch in _ERE_SPECIAL else ch for ch in name)


def names_filter(names: Iterable[str]) -> str:
    """A --benchmark_filter that selects exactly these benchmarks. Google Benchmark matches the
    filter against the full name (with /manual_time, /repeats:N, ... as in run_name), so each
    run_name is anchored whole."""
    return "^(" + "|".join(ere_escape(n) for n in sorted(set(names))) + ")$"


# --- listing and running -----------------------------------------------------------------------


def list_benchmarks(binary: Path, filter: str | None, extra_args: Sequence[str] = ()) -> list[str]:
    """The benchmarks `binary` would run with `filter` (--benchmark_list_tests; needs no GPU)."""
    command = [str(binary), "--benchmark_list_tests=true", *_filter_args(filter), *extra_args]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except OSError as exc:
        raise InputError(f"{binary}: cannot run: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{binary}: --benchmark_list_tests did not finish in 300 s") from None
    if done.returncode != 0:
        said = _last_line(done.stderr) or _last_line(done.stdout)
        raise InputError(
            f"{binary}: listing its benchmarks failed (exit status {done.returncode}): "
            f"{said or 'no message'}; is it a Google Benchmark binary?"
        )
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def plan(binaries: Sequence[Path], filter: str | None, extra_args: Sequence[str] = ()) -> list[Job]:
    """One job per binary that has benchmarks matching `filter`; refuses when none has."""
    jobs = []
    seen: dict[str, Path] = {}
    for binary in binaries:
        names = list_benchmarks(binary, filter, extra_args)
        for name in names:
            other = seen.setdefault(name, binary)
            if other != binary:
                raise InputError(
                    f"benchmark {name!r} is in both {other} and {binary}: "
                    "one result needs unique names"
                )
        if names:
            jobs.append(Job(binary, filter, tuple(names)))
    if not jobs:
        where = f"{len(binaries)} benchmark binar{'y' if len(binaries) == 1 else 'ies'}"
        if filter:
            raise InputError(f"--filter {filter!r} matches no benchmark in {where}")
        raise InputError(f"{where} list no benchmarks")
    return jobs


def benchmark_command(
    binary: Path,
    filter: str | None,
    settings: RunSettings,
    out: Path,
    repetitions: int | None = None,
) -> list[str]:
    """The exact command line of one benchmark process (`repetitions`: this process's share,
    default all of them)."""
    return [
        str(binary),
        *_filter_args(filter),
        f"--benchmark_repetitions={repetitions or settings.repetitions}",
        f"--kernelwatch_max_time={settings.max_time:g}",
        f"--benchmark_enable_random_interleaving={'true' if settings.interleave else 'false'}",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
        *settings.extra_args,
    ]


def _filter_args(filter: str | None) -> list[str]:
    return [f"--benchmark_filter={filter}"] if filter else []


class Progress:
    """One self-rewriting status line on stderr, only when stderr is a terminal: which binary,
    how many benchmarks are done and left, elapsed time."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.started = time.monotonic()
        self._status = ""
        self._shown = False

    def status(self, text: str) -> None:
        self._status = text
        self.tick()

    def tick(self) -> None:
        if not self.enabled:
            return
        elapsed = _duration(time.monotonic() - self.started)
        self.stream.write(f"\r\033[K{self._status}; {elapsed} elapsed")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False

    def say(self, line: str) -> None:
        """A line that stays (shown whether or not stderr is a terminal)."""
        self.clear()
        self.stream.write(line + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass
class SuiteRun:
    """What run_suite produced: the merged document and how it was made."""

    document: dict[str, Any]
    commands: list[list[str]] = field(default_factory=list)
    seconds: float = 0.0


def run_suite(
    jobs: Sequence[Job],
    settings: RunSettings,
    *,
    progress: Progress | None = None,
    label: str = "",
    context: Mapping[str, Any] | None = None,
) -> SuiteRun:
    """Run every job's binary in `settings.processes` processes, one after the other (all
    binaries' first process, then all binaries' second, ...), and merge the outputs into one
    result (context of the first, plus `context` and the run's settings)."""
    progress = progress or Progress(enabled=False)
    shares = settings.split()
    per_process = sum(len(job.names) for job in jobs)
    total = per_process * len(shares)
    started = time.monotonic()
    started_at = datetime.datetime.now(datetime.UTC)
    runs: dict[int, list[dict[str, Any]]] = {index: [] for index in range(len(jobs))}
    records: dict[Path, list[dict[str, Any]]] = {}
    commands: list[list[str]] = []
    done = 0
    prefix = f"{label}: " if label else ""
    with contextlib.ExitStack() as held, tempfile.TemporaryDirectory(
        prefix="kernelwatch-run-"
    ) as tmp:
        if settings.gpu_uuid:
            held.enter_context(locks.gpu_lock(settings.gpu_uuid, _waiting(progress, prefix)))
        for process, share in enumerate(shares, 1):
            which = f"process {process}/{len(shares)}, " if len(shares) > 1 else ""
            for index, job in enumerate(jobs):
                out = Path(tmp, f"{process}-{index:03d}-{job.binary.name}.json")
                # The first process of each binary records its kernels (the others would
                # write the same).
                record = Path(tmp, f"{index:03d}.kernels") if process == 1 else None
                command = benchmark_command(job.binary, job.filter, settings, out, share)
                commands.append(command)
                progress.status(
                    f"{prefix}[{which}{index + 1}/{len(jobs)}] {job.binary.name}: "
                    f"{len(job.names)} benchmark(s); {done} of {total} done, {total - done} left"
                )
                env = None
                if record is not None and settings.record_kernels:
                    env = dict(os.environ, **{kernels.ENV: str(record)})
                host = locks.host_exclusive if job.serial else locks.host_shared
                with host(_waiting(progress, prefix)):
                    runs[index].append(
                        _run_one(job.binary, command, out, settings, progress, env)
                    )
                if env is not None and record is not None:
                    records[job.binary] = kernels.read_records(record)
                done += len(job.names)
    progress.clear()
    seconds = time.monotonic() - started
    extra = {
        "kernelwatch_repetitions": str(settings.repetitions),
        "kernelwatch_processes": str(settings.processes),
        "kernelwatch_max_time": f"{settings.max_time:g}",
        "kernelwatch_random_interleaving": "true" if settings.interleave else "false",
        "kernelwatch_run_started": started_at.isoformat(timespec="seconds"),
        "kernelwatch_run_seconds": f"{seconds:.1f}",
        "kernelwatch_benchmark_commands": [shlex.join(c) for c in commands],
        **(
            {"kernelwatch_serial": sorted({n for job in jobs if job.serial for n in job.names})}
            if any(job.serial for job in jobs)
            else {}
        ),
        **(context or {}),
    }
    outputs = [(job.binary, join_processes(job.binary, runs[i])) for i, job in enumerate(jobs)]
    document = merge(outputs, extra)
    if any(records.values()):
        capability = document["context"].get("gpu_compute_capability")
        document["context"][kernels.CONTEXT_KEY] = kernels.context_entry(records, capability)
    return SuiteRun(document, commands, seconds)


def _waiting(progress: Progress, prefix: str) -> locks.Waiting:
    return lambda why: progress.say(f"kernelwatch: {prefix}{why}")


def join_processes(binary: Path, documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One binary's outputs from several processes as one document: the first one's context,
    every repetition row marked with its process (`kernelwatch_process`, 1-based), and, with
    several processes, its repetition_index moved past the earlier processes' repetitions (so
    that each stays unique) and `repetitions` the total. With several processes the aggregate
    rows are dropped: each describes one process only, and compare computes its own statistics
    from the repetitions."""
    first = documents[0]
    uuid = (first.get("context") or {}).get("gpu_uuid")
    several = len(documents) > 1
    counted = [Counter(_repetition_names(d)) for d in documents]
    totals = sum(counted, Counter())
    offsets: Counter[str] = Counter()
    rows: list[Any] = []
    for process, document in enumerate(documents, 1):
        other = document.get("context") or {}
        if other.get("gpu_uuid") != uuid:
            raise InputError(
                f"{binary}: process {process} ran on {other.get('gpu_uuid') or 'an unnamed GPU'},"
                f" process 1 on {uuid or 'an unnamed GPU'}: one result must come from one GPU"
            )
        for row in document.get("benchmarks", []):
            if not isinstance(row, dict):
                rows.append(row)  # the reader refuses it with its message
                continue
            if row.get("run_type") == "aggregate":
                if not several:
                    rows.append(row)
                continue
            marked = {**row, PROCESS_KEY: process}
            name = _row_name(row)
            if several:
                if isinstance(row.get("repetition_index"), int):
                    marked["repetition_index"] = offsets[name] + row["repetition_index"]
                if isinstance(row.get("repetitions"), int):
                    marked["repetitions"] = totals[name]
            rows.append(marked)
        offsets.update(counted[process - 1])
    return {**first, "benchmarks": rows}


def _row_name(row: Mapping[str, Any]) -> str:
    return str(row.get("run_name") or row.get("name"))


def _repetition_names(document: Mapping[str, Any]) -> Iterable[str]:
    for row in document.get("benchmarks", []):
        if isinstance(row, dict) and row.get("run_type") != "aggregate":
            yield _row_name(row)


def _run_one(
    binary: Path,
    command: list[str],
    out: Path,
    settings: RunSettings,
    progress: Progress,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryFile() as errors:
        stdout: Any = subprocess.DEVNULL
        stderr: Any = errors
        if settings.verbose:
            stdout = stderr = sys.stderr
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env={**(env or os.environ), **dict(settings.environment)},
            )
        except OSError as exc:
            raise InputError(f"{binary}: cannot run: {exc.strerror or exc}") from None
        try:
            while True:
                try:
                    status = process.wait(timeout=1.0 if progress.enabled else None)
                    break
                except subprocess.TimeoutExpired:
                    progress.tick()
        finally:
            if process.poll() is None:  # interrupted: take the binary down too
                process.kill()
                process.wait()
        errors.seek(0)
        message = _last_line(errors.read().decode("utf-8", "replace"))

    if status == EXIT_NO_GPU:
        raise NoGpuError(
            f"no CUDA GPU is visible ({binary.name}: {_no_gpu_reason(message)}); nothing to measure"
        )
    if status == EXIT_CONTEXT_LOST:
        raise BenchmarkCrashed(
            f"{binary}: lost its CUDA context (exit status 3): {message or 'no message'}"
        )
    if status == EXIT_BAD_ARGUMENTS:
        raise InputError(
            f"{binary}: refused the arguments (exit status 2): {message or 'no message'}; "
            f"command: {shlex.join(command)}"
        )
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        raise BenchmarkCrashed(f"{binary}: crashed ({name}): {message or 'no message'}")
    if status != 0:
        raise BenchmarkCrashed(
            f"{binary}: failed (exit status {status}): {message or 'no message'}"
        )
    if not out.is_file():
        raise BenchmarkCrashed(f"{binary}: exited 0 but wrote no result file")
    try:
        document: dict[str, Any] = read_json(out)
    except InputError as exc:
        raise BenchmarkCrashed(f"{binary}: wrote an unreadable result: {exc}") from None
    read_document(f"{binary} output", document)  # validates; raises one line
    return document


def merge(
    outputs: Sequence[tuple[Path, Mapping[str, Any]]],
    extra_context: Mapping[str, Any],
    *,
    several_cards: bool = False,
) -> dict[str, Any]:
    """One result from several binaries' outputs (or shards' results, merge.py): the first
    one's context (plus `extra_context`), every benchmark row, each benchmark from one output
    only. All must come from the same GPU (`several_cards`: from one GPU model)."""
    if not outputs:
        raise InputError("nothing to merge: no benchmark binary ran")
    first_binary, first = outputs[0]
    context = dict(first.get("context") or {})
    model, uuid = gpu_model(context), context.get("gpu_uuid")
    rows: list[Any] = []
    owner: dict[str, Path] = {}
    for binary, document in outputs:
        other = document.get("context") or {}
        if gpu_model(other) != model or (not several_cards and other.get("gpu_uuid") != uuid):
            raise InputError(
                f"{binary} ran on {other.get('gpu_uuid') or gpu_model(other) or 'an unnamed GPU'}"
                f", {first_binary} on {uuid or model or 'an unnamed GPU'}: one result must come "
                "from one GPU (set CUDA_VISIBLE_DEVICES, or --bench-arg=--kernelwatch_device=N)"
            )
        names = set()
        for row in document.get("benchmarks", []):
            names.add(str(row.get("run_name") or row.get("name")))
            rows.append(row)
        for name in names:
            previous = owner.setdefault(name, binary)
            if previous != binary:
                raise InputError(
                    f"benchmark {name!r} is in both {previous} and {binary}: "
                    "one result needs unique names"
                )
    context.update(extra_context)
    return {"context": context, "benchmarks": rows}


def rerun_jobs(jobs: Sequence[Job], names: Iterable[str]) -> list[Job]:
    """Jobs that run exactly `names` again, each in its own binary (in the jobs' order), with
    an anchored filter."""
    wanted = set(names)
    again = []
    for job in jobs:
        chosen = [name for name in job.names if name in wanted]
        if chosen:
            again.append(Job(job.binary, names_filter(chosen), tuple(chosen), job.serial))
    return again


def select_jobs(jobs: Sequence[Job], names: Iterable[str]) -> list[Job]:
    """The jobs restricted to `names` (a shard): a job keeps its filter when all its
    benchmarks are chosen, else gets an anchored filter of the chosen ones."""
    wanted = set(names)
    chosen = []
    for job in jobs:
        kept = [name for name in job.names if name in wanted]
        if len(kept) == len(job.names):
            chosen.append(job)
        elif kept:
            chosen.append(Job(job.binary, names_filter(kept), tuple(kept), job.serial))
    return chosen


def split_serial(jobs: Sequence[Job], serial: Iterable[str]) -> list[Job]:
    """The jobs with their host-bound benchmarks (`serial`) in jobs of their own, marked
    serial and placed last, so that the other GPUs' concurrent work overlaps as much as it
    can before the host is taken for them."""
    host_bound = set(serial)
    together: list[Job] = []
    alone: list[Job] = []
    for job in jobs:
        mine = [name for name in job.names if name in host_bound]
        rest = [name for name in job.names if name not in host_bound]
        if not mine:
            together.append(job)
        elif not rest:
            alone.append(Job(job.binary, job.filter, job.names, serial=True))
        else:
            together.append(Job(job.binary, names_filter(rest), tuple(rest)))
            alone.append(Job(job.binary, names_filter(mine), tuple(mine), serial=True))
    return together + alone


def timestamp() -> str:
    """UTC, for file names: 20261121T054057Z."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
