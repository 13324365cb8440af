"""Filters and job lists: which benchmarks of which binary a run (or a rerun, a shard, the
host-bound part) runs. Pure functions of names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from kernelwatch.runner.settings import Job

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
