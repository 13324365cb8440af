"""One benchmark process: its command line, running it, and reading what it wrote (its exit
status mapped to this project's errors, its JSON output validated)."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from kernelwatch import tool
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError, shortened
from kernelwatch.gbench import read_document, read_json
from kernelwatch.names import row_name
from kernelwatch.runner.discovery import HARNESS_FLAG, filter_args
from kernelwatch.runner.settings import (
    EXIT_BAD_ARGUMENTS,
    EXIT_CONTEXT_LOST,
    EXIT_HANG,
    EXIT_NO_GPU,
    Job,
    RunSettings,
    benchmark_environment,
)


def benchmark_command(
    job: Job, settings: RunSettings, out: Path, repetitions: int | None = None
) -> list[str]:
    """The exact command line of one benchmark process (`repetitions`: this process's share,
    default all of them)."""
    harness = [f"{HARNESS_FLAG}={settings.max_time:g}"] if job.harness else []
    return [
        str(job.binary),
        *filter_args(job.filter),
        f"--benchmark_repetitions={repetitions or settings.repetitions}",
        *harness,
        f"--benchmark_enable_random_interleaving={'true' if settings.interleave else 'false'}",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
        *settings.extra_args,
    ]


class Ran(NamedTuple):
    """What one benchmark process left."""

    document: dict[str, Any]  # its output, validated
    # What it said on stderr: the first and last 64 KiB; nothing with --verbose, which shows it.
    stderr: str


def run_one(
    binary: Path,
    command: list[str],
    out: Path,
    settings: RunSettings,
    progress: Progress,
    listed: Collection[str],
    env: Mapping[str, str] | None = None,
) -> Ran:
    """Run one benchmark process to its end (the progress line ticking) and return its
    validated output, of benchmarks among those the binary `listed`, and its stderr; its exit
    status as this project's error otherwise."""
    timeout = settings.process_timeout
    try:
        done = tool.run(
            command,
            check=False,
            env={**(env or benchmark_environment(os.environ)), **dict(settings.environment)},
            log=sys.stderr if settings.verbose else None,
            discard_stdout=not settings.verbose,
            tick=progress.tick if progress.enabled else None,
            timeout=timeout,
            keep=tool.TAIL_BYTES,  # (its stderr is read for its last line only)
        )
    except tool.ToolError as exc:
        if exc.failure == "timeout" and timeout is not None:
            raise BenchmarkCrashed(
                f"{binary}: hung: did not finish in {timeout:g} s (--process-timeout), so its "
                "process group was killed (a kernel that never finishes?)"
            ) from None
        raise InputError(f"{binary}: cannot run: {exc.reason}") from None
    status, message = done.status, tool.last_line(done.stderr)

    if status == EXIT_NO_GPU:
        raise NoGpuError(
            f"no CUDA GPU is visible ({binary.name}: {no_gpu_reason(message)}); nothing to measure"
        )
    if status == EXIT_CONTEXT_LOST:
        raise BenchmarkCrashed(
            f"{binary}: lost its CUDA context (exit status 3): {message or 'no message'}"
        )
    if status == EXIT_HANG:  # the harness's watchdog: its line names the benchmark
        said = message.removeprefix("kernelwatch: error: ") or "no message"
        raise BenchmarkCrashed(f"{binary}: hung (exit status {EXIT_HANG}): {said}")
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
    try:  # (a broken binary: the other binaries' results are kept, as for a crash)
        read_document(f"{binary} output", document)  # validates; raises one line
    except InputError as exc:
        said = str(exc).removeprefix(f"{binary} output: ")
        raise BenchmarkCrashed(f"{binary}: wrote an invalid result: {said}") from None
    written = {row_name(row) for row in document["benchmarks"]}
    unlisted = sorted(written - set(listed))
    if unlisted:  # (its top-ups, filtered by the listed names, would run nothing)
        raise BenchmarkCrashed(
            f"{binary}: wrote {len(unlisted)} benchmark(s) that its --benchmark_list_tests did "
            f"not list, {unlisted[0]} among them"
        )
    # Google Benchmark writes a row for each benchmark it runs, one that errors or skips too:
    # one listed without a row would read as removed from the build (MISSING, not failing).
    measured = {
        row_name(row) for row in document["benchmarks"] if row.get("run_type") != "aggregate"
    }
    # A line its listing printed that names no benchmark (a banner on stdout) gets no row
    # either; it cannot be told from a benchmark that vanished, so it fails the same way, but
    # the lines are named for the user to see which.
    unwritten = [name for name in listed if name not in measured]
    if unwritten:
        shown = ", ".join(shortened(name) for name in unwritten[:_SHOWN])
        more = f" and {len(unwritten) - _SHOWN} more" if len(unwritten) > _SHOWN else ""
        raise BenchmarkCrashed(
            f"{binary}: exited 0 but wrote no row for {len(unwritten)} benchmark(s) it listed, "
            f"{shown}{more}; its --benchmark_list_tests must print benchmark names only (a "
            "banner there is taken for a benchmark)"
        )
    return Ran(document, done.stderr)


_SHOWN = 3  # the listed lines without a row that the error names


# Is there a CUDA GPU to measure on? Asked before anything runs, so that a machine without one is
# told in one line (exit 4) instead of by the first binary's crash.


# How the GPU is looked for (tests replace these).
NVIDIA_SMI = "nvidia-smi"
GPU_DEVICE_GLOBS: tuple[str, ...] = ("/dev/nvidia[0-9]*", "/dev/dxg")

_NO_GPU_LINE = re.compile(r"no CUDA GPU is visible \((.*)\); nothing to measure")


def gpu_absent_reason(probe: Path | None, extra_args: Sequence[str] = ()) -> str | None:
    """Why no CUDA GPU can be used, or None when one seems usable. Asks `nvidia-smi -L` when
    there is one; else runs `probe` (a benchmark binary) with a filter that matches nothing, so
    that it only opens the GPU (this project's binaries exit 4 without one); else looks for
    NVIDIA device files."""
    smi = shutil.which(NVIDIA_SMI)
    if smi:
        try:
            done = tool.run([smi, "-L"], timeout=60, check=False, keep=tool.TAIL_BYTES)
        except tool.ToolError as exc:
            return f"nvidia-smi -L failed: {exc.exception}"
        if done.status == 0 and any(line.startswith("GPU ") for line in done.stdout.splitlines()):
            return None
        said = tool.last_line(done.stdout + "\n" + done.stderr)
        return f"nvidia-smi -L: {said or f'exit status {done.status}, no GPU listed'}"
    if probe is not None:
        command = [str(probe), "--benchmark_filter=^$", *extra_args]
        try:
            done = tool.run(
                command,
                timeout=120,
                check=False,
                env=benchmark_environment(os.environ),
                keep=tool.TAIL_BYTES,
            )
        except tool.ToolError:
            return None  # the real run will say what is wrong with the binary
        if done.status == EXIT_NO_GPU:
            return f"no nvidia-smi; {probe.name}: {no_gpu_reason(done.stderr)}"
        return None
    if not any(glob.glob(pattern) for pattern in GPU_DEVICE_GLOBS):
        return "no nvidia-smi, no /dev/nvidia* device files"
    return None


def require_gpu(probe: Path | None, extra_args: Sequence[str] = ()) -> None:
    reason = gpu_absent_reason(probe, extra_args)
    if reason is not None:
        raise NoGpuError(f"no CUDA GPU is visible ({reason}); nothing to measure")


def no_gpu_reason(stderr: str) -> str:
    """The reason a binary that exited 4 gave (its stderr), without the sentence around it."""
    match = _NO_GPU_LINE.search(stderr)
    if match:
        return match.group(1)
    return tool.last_line(stderr) or "exit status 4 (no usable GPU)"


# The status line of a run on a terminal.


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
        elapsed = format_duration(time.monotonic() - self.started)
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


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
