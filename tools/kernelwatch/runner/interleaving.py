"""Running a suite: every job's binary in several processes, interleaved across binaries, under
the host and GPU locks, and the outputs merged into one result."""

from __future__ import annotations

import contextlib
import datetime
import os
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwatch import kernels, locks
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError
from kernelwatch.runner import occupants, precision
from kernelwatch.runner.discovery import rerun_jobs
from kernelwatch.runner.merging import join_processes, merge
from kernelwatch.runner.process import benchmark_command, run_one
from kernelwatch.runner.process import Progress
from kernelwatch.results import FAILED_KEY, NO_RESULT_KEY, OCCUPANTS_KEY
from kernelwatch.runner.settings import Job, RunSettings, benchmark_environment


@dataclass
class SuiteRun:
    """What run_suite produced: the merged document and how it was made."""

    document: dict[str, Any]
    jobs: tuple[Job, ...]  # what it measured (a shared suite's: the parts it took)
    commands: list[list[str]] = field(default_factory=list)
    seconds: float = 0.0


class IncompleteRun(BenchmarkCrashed):
    """A run (`keep_going`) in which benchmark processes crashed, hung or lost the GPU: the
    first failure's message and exit status (4 for a GPU gone, else 3), the result of every
    process that finished (`partial`: None when none did), the benchmarks no finished
    process measured (`no_result`), each failure's line with the benchmarks of its binary
    (`lost`), and whether the GPU went away (`gpu_lost`)."""

    def __init__(
        self,
        failures: Sequence[InputError],
        partial: SuiteRun | None,
        no_result: Sequence[str],
        lost: Sequence[tuple[str, tuple[str, ...]]] = (),
    ) -> None:
        more = f" (and {len(failures) - 1} more failed process(es))" if len(failures) > 1 else ""
        super().__init__(f"{failures[0]}{more}")
        self.exit_status = failures[0].exit_status
        self.prefix = failures[0].prefix
        self.failures = tuple(str(failure) for failure in failures)
        self.partial = partial
        self.no_result = tuple(no_result)
        self.lost = tuple(lost)
        # The line of the GPU gone (a NoGpuError), if one failure was that.
        self.gpu_lost = next((str(f) for f in failures if isinstance(f, NoGpuError)), None)


def run_suite(
    jobs: Sequence[Job],
    settings: RunSettings,
    *,
    progress: Progress | None = None,
    label: str = "",
    context: Mapping[str, Any] | None = None,
    keep_going: bool = False,
) -> SuiteRun:
    """Run every job's binary in `settings.processes` processes, one after the other (all
    binaries' first process, then all binaries' second, ...), top up the imprecise benchmarks
    (precision.py) the same way, and merge the outputs into one result (context of the first,
    plus `context` and the run's settings).

    A process that crashes or hangs ends the run (BenchmarkCrashed); with `keep_going`, its
    binary's other processes are skipped, the other binaries still run, and IncompleteRun is
    raised at the end, holding the merged result of the processes that finished."""
    with Measuring(
        jobs, settings, progress=progress, label=label, context=context, keep_going=keep_going
    ) as measuring:
        for k in range(measuring.rounds):
            measuring.round(k)
        return measuring.finish()


class Measuring:
    """run_suite one process round at a time, so that another build's rounds can run between
    this one's on the same GPU (an anchored run, anchor.py): the K-th round runs every binary's
    K-th process. Its seconds are its own rounds' and top-ups', not the other build's.

    With `claim` (a shared suite, sharing.py), the first round measures the parts `claim`
    hands out, one after another until it returns none, and the later rounds those parts:
    `jobs` is known once the first round has run. Or, where no other build's rounds come
    between (by_part), each part is measured whole, processes and top-ups, before the next is
    claimed."""

    def __init__(
        self,
        jobs: Sequence[Job],
        settings: RunSettings,
        *,
        progress: Progress | None = None,
        label: str = "",
        context: Mapping[str, Any] | None = None,
        keep_going: bool = False,
        lock: bool = True,  # False: the caller already holds this GPU's lock
        claim: Callable[[], Sequence[Job]] | None = None,
    ) -> None:
        self._jobs = list(jobs)
        self._claim = claim
        self._settings = settings
        self._progress = progress or Progress(enabled=False)
        self._prefix = f"{label}: " if label else ""
        self._context = context
        self._keep_going = keep_going
        self._lock = lock
        self._held = contextlib.ExitStack()
        self._seconds = 0.0
        self._started_at = datetime.datetime.now(datetime.UTC)
        self._processes: _Processes | None = None
        self._topped_up: set[str] = set()
        self._whole: set[int] = set()  # the jobs (indices) measured whole (by_part)

    def __enter__(self) -> Measuring:
        settings, progress = self._settings, self._progress
        with self._held as held:
            if settings.gpu_uuid and self._lock:
                held.enter_context(
                    locks.gpu_lock(settings.gpu_uuid, _waiting(progress, self._prefix))
                )
            tmp = held.enter_context(tempfile.TemporaryDirectory(prefix="kernelwatch-run-"))
            self._processes = _Processes(
                self._jobs,
                settings,
                settings.split(),
                progress,
                self._prefix,
                Path(tmp),
                self._keep_going,
            )
            self._started_at = datetime.datetime.now(datetime.UTC)
            self._held = held.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._held.close()

    @property
    def rounds(self) -> int:
        return len(self._settings.split())

    def _timed(self, work: Callable[[], Any]) -> Any:
        started = time.monotonic()
        try:
            return work()
        finally:
            self._seconds += time.monotonic() - started

    @property
    def jobs(self) -> list[Job]:
        return list(self._running().jobs)

    def round(self, k: int) -> None:
        """Every binary's process k (0-based); in the first, each part `claim` hands out (after
        first_part: each one more)."""
        processes = self._running()
        if k == 0 and self._claim is not None:
            while self.first_part():
                pass
            return
        self._timed(lambda: processes.run_round(dict(enumerate(processes.jobs)), "", only=k))

    def first_part(self) -> bool:
        """With `claim`: the first process of the next part it hands out; False when none is
        left. After the first, first_context says which card and host this is."""
        processes = self._running()
        if self._claim is None:
            raise RuntimeError("first_part needs a claim")
        taken = self._claim()
        if taken:
            self._timed(lambda: processes.run_round(processes.add(taken), "", only=0))
        return bool(taken)

    def by_part(self) -> None:
        """With `claim`, after first_part: the parts taken so far, then each part `claim` hands
        out, measured whole (their later processes, then their top-ups) before the next is
        claimed. A GPU then claims only what it will measure: sharing the first round only,
        the card that did not measure the host-bound part took every part that needed top-ups
        and finished 13 s after the other (two H200s, b0d77b3). A part's processes run back
        to back instead of between other binaries'."""
        processes = self._running()
        more = True
        while more:
            chosen = {i: job for i, job in enumerate(processes.jobs) if i not in self._whole}
            for k in range(1, self.rounds):
                self._timed(lambda: processes.run_round(chosen, "", only=k))
            self._topped_up |= self._timed(lambda: _top_up(processes, chosen))
            self._whole.update(chosen)
            more = self.first_part()

    def first_context(self) -> dict[str, Any]:
        """The context of the first process that finished, with the caller's: what this run's
        result will say of its GPU and host, known after the first round."""
        found = next((runs[0] for runs in self._running().runs.values() if runs), {})
        return {**(found.get("context") or {}), **(self._context or {})}

    def finish(self) -> SuiteRun:
        """The top-ups, then the merged result (IncompleteRun: see run_suite)."""
        processes = self._running()
        rest = {i: job for i, job in enumerate(processes.jobs) if i not in self._whole}
        topped_up = self._topped_up | self._timed(lambda: _top_up(processes, rest))
        self._progress.clear()
        seconds = self._seconds
        extra = _run_context(processes, self._started_at, seconds, topped_up, self._context)
        jobs = tuple(processes.jobs)
        if not processes.failures:
            return SuiteRun(_merged(processes, extra), jobs, processes.commands, seconds)
        no_result = processes.no_result()
        partial = None
        if any(processes.runs.values()):
            extra = {
                **extra,
                FAILED_KEY: [str(failure) for _, failure in processes.failures],
                NO_RESULT_KEY: no_result,
            }
            partial = SuiteRun(_merged(processes, extra), jobs, processes.commands, seconds)
        lost = [(str(failure), jobs[index].names) for index, failure in processes.failures]
        raise IncompleteRun(
            [failure for _, failure in processes.failures], partial, no_result, lost
        )

    def _running(self) -> _Processes:
        if self._processes is None:
            raise RuntimeError("Measuring used outside its with block")
        return self._processes


@dataclass
class _Processes:
    """A suite's processes as they run: each job's outputs (in order), the kernels each binary
    recorded, and every command line."""

    jobs: list[Job]
    settings: RunSettings
    shares: list[int]  # each process's repetitions
    progress: Progress
    prefix: str
    tmp: Path
    keep_going: bool = False
    runs: dict[int, list[dict[str, Any]]] = field(init=False)
    failures: list[tuple[int, InputError]] = field(default_factory=list)  # (job index, error)
    records: dict[Path, list[dict[str, Any]]] = field(default_factory=dict)
    commands: list[list[str]] = field(default_factory=list)
    others: dict[str, None] = field(default_factory=dict)  # occupants.on_gpu's, as seen

    def __post_init__(self) -> None:
        self.runs = {index: [] for index in range(len(self.jobs))}

    def add(self, jobs: Sequence[Job]) -> dict[int, Job]:
        """More jobs (a part of a shared suite), by their indices."""
        added = {len(self.jobs) + i: job for i, job in enumerate(jobs)}
        self.jobs.extend(jobs)
        self.runs.update((index, []) for index in added)
        return added

    def run_round(self, chosen: Mapping[int, Job], what: str, only: int | None = None) -> None:
        """Every chosen job's processes, interleaved across binaries; with `only`, that one
        process (0-based) of each."""
        shares = self.shares
        per_process = sum(len(job.names) for job in chosen.values())
        total, done = per_process * len(shares), per_process * (only or 0)
        for process, share in enumerate(shares, 1):
            if only is not None and process != only + 1:
                continue
            which = f"process {process}/{len(shares)}, " if len(shares) > 1 else ""
            for index, job in chosen.items():
                if self.failed(index):
                    done += len(job.names)
                    continue
                out = self.tmp / f"{len(self.runs[index]) + 1}-{index:03d}-{job.binary.name}.json"
                command = benchmark_command(job, self.settings, out, share)
                self.commands.append(command)
                self.progress.status(
                    f"{self.prefix}{what}[{which}{index + 1}/{len(self.jobs)}] "
                    f"{job.binary.name}: {len(job.names)} benchmark(s); {done} of {total} done, "
                    f"{total - done} left"
                )
                self._run_process(index, job, command, out)
                done += len(job.names)
        self._look_for_others()

    def _look_for_others(self) -> None:
        """Other processes computing on this GPU now, between rounds (occupants.py)."""
        firsts = (runs[0].get("context") or {} for runs in self.runs.values() if runs)
        uuid = self.settings.gpu_uuid or next((c.get("gpu_uuid") for c in firsts), None)
        if not isinstance(uuid, str) or not uuid:
            return
        self._note_others(occupants.on_gpu(uuid))

    def _note_others(self, seen: Sequence[str]) -> None:
        """Other processes on this GPU (occupants.py): kept for the result's context, and
        those not seen before said in one line (a process of the harness's saw them during
        12 benchmarks on an H200)."""
        new = [found for found in dict.fromkeys(seen) if found not in self.others]
        if not new:
            return
        self.others.update(dict.fromkeys(new))
        more = f", and {len(new) - 1} more" if len(new) > 1 else ""
        self.progress.say(
            f"kernelwatch: warning: {self.prefix}another process computes on this GPU "
            f"({new[0]}{more}): it shares the GPU's time with the samples, which may be slowed "
            "(a regression is re-run before it fails; `baseline update` refuses the result)"
        )

    def _run_process(self, index: int, job: Job, command: list[str], out: Path) -> None:
        """One process of one job's binary; a serial (host-bound) job's under the host lock,
        exclusive (locks.py: the others take none)."""
        # The first process of each binary records its kernels (the others would write the same).
        record = self.tmp / f"{index:03d}.kernels" if not self.runs[index] else None
        env = None
        if record is not None and self.settings.record_kernels:
            env = dict(benchmark_environment(os.environ), **{kernels.ENV: str(record)})
        try:
            with (
                locks.host_exclusive(_waiting(self.progress, self.prefix))
                if job.serial
                else contextlib.nullcontext()
            ):
                ran = run_one(
                    job.binary, command, out, self.settings, self.progress, job.names, env
                )
        except (BenchmarkCrashed, NoGpuError) as exc:
            # No GPU before anything was measured is exit 4; a GPU lost mid-run is a crash.
            measured = any(self.runs.values())
            if not self.keep_going or (isinstance(exc, NoGpuError) and not measured):
                raise
            # Its binary would most likely fail the same way again: its other processes and
            # top-ups are skipped, the other binaries run.
            self.failures.append((index, exc))
            self.progress.say(
                f"kernelwatch: {self.prefix}{job.binary.name}: a process failed, the run goes "
                f"on without this binary: {exc}"
            )
            return
        self.runs[index].append(ran.document)
        self._note_others(occupants.seen_by_harness(ran.document, ran.stderr))
        if env is not None and record is not None:
            self.records[job.binary] = kernels.read_records(record)

    def failed(self, index: int) -> bool:
        return any(index == failed for failed, _ in self.failures)

    def no_result(self) -> list[str]:
        """The benchmarks of failed binaries that no finished process measured."""
        return [
            name
            for index, job in enumerate(self.jobs)
            if self.failed(index) and not self.runs[index]
            for name in job.names
        ]


def _top_up(processes: _Processes, chosen: Mapping[int, Job]) -> set[str]:
    """Run the imprecise benchmarks (precision.py) of the chosen jobs that are not serial
    again, round after round, until none is left or `settings.top_ups` rounds have run;
    returns the names topped up."""
    settings = processes.settings
    topped_up: set[str] = set()
    for top_up in range(1, settings.top_ups + 1):
        again = {
            index: rerun_jobs([job], names)[0]
            for index, job in chosen.items()
            if not job.serial
            and not processes.failed(index)
            and (names := precision.imprecise(processes.runs[index], settings))
        }
        if not again:
            break
        topped_up.update(name for job in again.values() for name in job.names)
        count = sum(len(job.names) for job in again.values())
        processes.run_round(again, f"top-up {top_up}/{settings.top_ups}, {count} imprecise: ")
    return topped_up


def _run_context(
    processes: _Processes,
    started_at: datetime.datetime,
    seconds: float,
    topped_up: set[str],
    context: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The context keys the run adds to the merged result: its settings, when it ran and how
    long, its commands, then the caller's `context` (which wins)."""
    jobs, settings = processes.jobs, processes.settings
    return {
        "kernelwatch_repetitions": str(settings.repetitions),
        "kernelwatch_processes": str(settings.processes),
        "kernelwatch_random_interleaving": "true" if settings.interleave else "false",
        "kernelwatch_run_started": started_at.isoformat(timespec="seconds"),
        "kernelwatch_run_seconds": f"{seconds:.1f}",
        "kernelwatch_benchmark_commands": [shlex.join(c) for c in processes.commands],
        # Passed only to binaries on the harness (a plain Google Benchmark binary has no such flag).
        **(
            {"kernelwatch_max_time": f"{settings.max_time:g}"}
            if any(j.harness for j in jobs)
            else {}
        ),
        **(
            {
                "kernelwatch_precision": f"{settings.precision:g}",
                "kernelwatch_top_ups": str(settings.top_ups),
                precision.TOPPED_UP_KEY: sorted(topped_up),
            }
            if settings.top_ups
            else {}
        ),
        **(
            {"kernelwatch_serial": sorted({n for job in jobs if job.serial for n in job.names})}
            if any(job.serial for job in jobs)
            else {}
        ),
        **({OCCUPANTS_KEY: list(processes.others)} if processes.others else {}),
        **(context or {}),
    }


def _merged(processes: _Processes, extra: Mapping[str, Any]) -> dict[str, Any]:
    """One result from each binary's processes joined, with the kernels they recorded."""
    jobs, runs, records = processes.jobs, processes.runs, processes.records
    outputs = [
        (job.binary, join_processes(job.binary, runs[i])) for i, job in enumerate(jobs) if runs[i]
    ]
    document = merge(outputs, extra)
    if any(records.values()):
        capability = document["context"].get("gpu_compute_capability")
        document["context"][kernels.CONTEXT_KEY] = kernels.context_entry(records, capability)
    return document


def _waiting(progress: Progress, prefix: str) -> locks.Waiting:
    return lambda why: progress.say(f"kernelwatch: {prefix}{why}")


def timestamp() -> str:
    """UTC, for file names: 20261121T054057Z."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
