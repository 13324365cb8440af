"""One benchmark process: its command line, running it, and reading what it wrote (its exit
status mapped to this project's errors, its JSON output validated)."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelwatch import tool
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError
from kernelwatch.gbench import read_document, read_json
from kernelwatch.runner.discovery import HARNESS_FLAG, filter_args
from kernelwatch.runner.probe import no_gpu_reason
from kernelwatch.runner.progress import Progress
from kernelwatch.runner.settings import (
    EXIT_BAD_ARGUMENTS,
    EXIT_CONTEXT_LOST,
    EXIT_HANG,
    EXIT_NO_GPU,
    Job,
    RunSettings,
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


def run_one(
    binary: Path,
    command: list[str],
    out: Path,
    settings: RunSettings,
    progress: Progress,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run one benchmark process to its end (the progress line ticking) and return its
    validated output; its exit status as this project's error otherwise."""
    timeout = settings.process_timeout
    try:
        done = tool.run(
            command,
            check=False,
            env={**(env or os.environ), **dict(settings.environment)},
            log=sys.stderr if settings.verbose else None,
            discard_stdout=not settings.verbose,
            tick=progress.tick if progress.enabled else None,
            timeout=timeout,
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
    read_document(f"{binary} output", document)  # validates; raises one line
    return document
