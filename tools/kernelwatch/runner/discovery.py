"""Finding this project's benchmark binaries and the benchmarks each will run (as listed by
--benchmark_list_tests, which needs no GPU)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from kernelwatch import tool
from kernelwatch.errors import InputError, shortened
from kernelwatch.runner.merging import claim
from kernelwatch.runner.settings import Job, benchmark_environment

# This project's binaries: BUILD/bench/kernelwatch_bench_<family>.
BINARY_GLOB = "kernelwatch_bench_*"
BINARY_FOLDER = "bench"
LIST_TIMEOUT_S = 300
# What is kept of a listing's (and --help's) output: its first and last this many bytes each,
# so that a binary printing gigabytes is not held in memory; a longer listing is refused.
LIST_KEEP_BYTES = 32 << 20
# A flag only the harness takes, and `run` passes to it.
HARNESS_FLAG = "--kernelwatch_max_time"


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
    # Path("./my_benchmarks") is "my_benchmarks", which exec looks up on PATH, not here.
    return path if len(path.parts) > 1 else path.absolute()


def check_binaries(paths: Iterable[Path]) -> list[Path]:
    """The binaries named with --bench (check_binary), none of them twice: one file named
    twice, by any path (relative, absolute, a link), was measured twice and its runs pooled,
    twice the processes and values of the rest."""
    seen: dict[tuple[int, int], Path] = {}
    found = []
    for path in paths:
        binary = check_binary(path)
        info = binary.stat()
        first = seen.setdefault((info.st_dev, info.st_ino), path)
        if first is not path:
            same = "" if str(first) == str(path) else f" (the same file as {first})"
            raise InputError(f"--bench {path}: given twice{same}")
        found.append(binary)
    return found


def list_benchmarks(binary: Path, filter: str | None, extra_args: Sequence[str] = ()) -> list[str]:
    """The benchmarks `binary` would run with `filter` (--benchmark_list_tests; needs no GPU)."""
    command = [str(binary), "--benchmark_list_tests=true", *filter_args(filter), *extra_args]
    try:
        done = tool.run(
            command,
            timeout=LIST_TIMEOUT_S,
            env=benchmark_environment(os.environ),
            keep=LIST_KEEP_BYTES,
        )
    except tool.ToolError as exc:
        if exc.failure == "cannot-run":
            raise InputError(f"{binary}: cannot run: {exc.reason}") from None
        if exc.failure == "timeout":
            raise InputError(
                f"{binary}: --benchmark_list_tests did not finish in {LIST_TIMEOUT_S} s"
            ) from None
        raise InputError(
            f"{binary}: listing its benchmarks failed (exit status {exc.status}): "
            f"{exc.said or 'no message'}; is it a Google Benchmark binary?"
        ) from None
    if done.stdout_left_out:
        raise InputError(
            f"{binary}: --benchmark_list_tests printed more than {2 * LIST_KEEP_BYTES >> 20} MiB; "
            "is it a Google Benchmark binary?"
        )
    refused = _REFUSED_FILTER.search(done.stderr)
    if refused:
        raise InputError(
            f"--filter {shortened(repr(filter))}: {binary.name} cannot compile it "
            f"({refused[1].strip()}); the binaries take a POSIX extended regex: no (?...), "
            "\\d, \\w or \\s"
        )
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


# What Google Benchmark (1.7, 1.8) prints for a filter its regex engine cannot compile; it
# then lists nothing and exits 0, which read alone would be "matches no benchmark".
_REFUSED_FILTER = re.compile(r"^Could not compile benchmark re: (.*)$", re.MULTILINE)


def runs_on_harness(binary: Path) -> bool:
    """Whether `binary` is built on kernelwatch's harness: its --help lists the harness's
    flags (a plain Google Benchmark binary's does not; both print help without a GPU)."""
    try:
        done = tool.run(
            [str(binary), "--help"],
            timeout=LIST_TIMEOUT_S,
            env=benchmark_environment(os.environ),
            keep=LIST_KEEP_BYTES,
        )
    except tool.ToolError:
        return False
    return HARNESS_FLAG in done.stdout


def plan(binaries: Sequence[Path], filter: str | None, extra_args: Sequence[str] = ()) -> list[Job]:
    """One job per binary that has benchmarks matching `filter`; refuses when none has."""
    jobs = []
    seen: dict[str, Path] = {}
    for binary in binaries:
        names = list_benchmarks(binary, filter, extra_args)
        for name in names:
            claim(seen, name, binary)
        if names:
            jobs.append(Job(binary, filter, tuple(names), harness=runs_on_harness(binary)))
    if not jobs:
        where = f"{len(binaries)} benchmark binar{'y' if len(binaries) == 1 else 'ies'}"
        if filter:
            raise InputError(f"--filter {shortened(repr(filter))} matches no benchmark in {where}")
        raise InputError(f"{where} list{'s' if len(binaries) == 1 else ''} no benchmarks")
    return jobs


def filter_args(filter: str | None) -> list[str]:
    return [f"--benchmark_filter={filter}"] if filter else []


# Filters and job lists: which benchmarks of which binary a run (or a rerun, a shard, the host-
# bound part) runs. Pure functions of names.


# Characters special in a POSIX extended regex (Google Benchmark's --benchmark_filter).
_ERE_SPECIAL = frozenset(".[]()*+?{}|^$\\")


def ere_escape(name: str) -> str:
    """`name` as a POSIX extended regex that matches it literally."""
    return "".join("\\" + ch if ch in _ERE_SPECIAL else ch for ch in name)


def names_filter(names: Iterable[str]) -> str:
    """A --benchmark_filter that selects exactly these benchmarks. Google Benchmark matches the
    filter against the full name (with /manual_time, /repeats:N, ... as in run_name), so each
    run_name is anchored whole."""
    return "^(" + "|".join(ere_escape(n) for n in sorted(set(names))) + ")$"


def only(job: Job, names: Sequence[str]) -> Job:
    """`job` restricted to `names` (some of its own), with an anchored filter."""
    return replace(job, filter=names_filter(names), names=tuple(names))


def rerun_jobs(jobs: Sequence[Job], names: Iterable[str]) -> list[Job]:
    """Jobs that run exactly `names` again, each in its own binary (in the jobs' order), with
    an anchored filter."""
    wanted = set(names)
    again = []
    for job in jobs:
        chosen = [name for name in job.names if name in wanted]
        if chosen:
            again.append(only(job, chosen))
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
            chosen.append(only(job, kept))
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
            alone.append(replace(job, serial=True))
        else:
            together.append(only(job, rest))
            alone.append(replace(only(job, mine), serial=True))
    return together + alone
