"""Change points in the history: where a benchmark's series on one GPU stepped, and to what.

A series is one benchmark's metric on one GPU slug: its runs in date order, every run
contributing all of its repetitions (5 runs x 10 repetitions = 50 points). Candidates come
from Apache Otava (`otava.analysis.compute_change_points`: E-Divisive in sliding windows,
Student's t-test, then a merge of weak points; Fleming et al. 2023). On real GPUs the
repetitions of one run agree far better (~0.05 %) than separate runs do (up to a few %), so a
point-level test calls almost every run boundary significant; a change is therefore kept only
when, snapped to the run boundary nearest to it, it also passes run-level rules:

* at least MIN_RUNS runs on each side (up to the neighbouring change or the series' end);
* t-test p-value (Otava's tester, on the repetitions of both sides, less those of the one run
  far off that run_spread leaves out) below alpha;
* |log(after / before)| at least log(1 + threshold), the medians of both sides' values;
* larger than NOISE_MULTIPLIER x the run-to-run spread (pooled relative standard deviation
  of the run medians around their side's median, less one run far off: run_spread), as
  compare's noise floor;
* it holds for every run: each run's median lies on its own side of the midpoint between
  the two medians (so one odd run, or a drift, is not a step).

A candidate that fails is removed, the neighbouring ones are judged again over the merged
sides, until every remaining one passes. docs/history.md explains the choices. With
`new_since`, only the changes that the history as it was then never showed (the last part).

One path from the database to a series' changes (reading the series, the flat-series check,
Otava's candidates, the run-level rules, the worker processes), sharing the Series and Change
types; then which of them are new since a moment (--new-since).
"""

from __future__ import annotations

import datetime as dt
import math
import multiprocessing
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import numpy as np

from kernelwatch import defaults
from kernelwatch.baseline import GPU_KEYS
from kernelwatch.compare import Settings
from kernelwatch.config import ThresholdRule, threshold_for
from kernelwatch.errors import InputError, compile_regex, missing_extra, shortened
from kernelwatch.history import (
    damaged,
    failed_runs,
    gpu_slugs,
    moment,
    normalized_date,
    slowed_runs,
    texts,
)
from kernelwatch.results import Metric, resolve_metric

DEFAULT_THRESHOLD = defaults.CHANGES_THRESHOLD  # larger than compare's: why, defaults.py
DEFAULT_ALPHA = defaults.CHANGES_ALPHA  # as compare: 0.05
NOISE_MULTIPLIER = Settings().noise_multiplier  # as compare's noise floor
MIN_RUNS = 2  # runs on each side of a change: one run alone may be an odd process
# One run far off (run_spread): beyond FAR_OFF_RATIO x the others' spread, with at least
# FAR_OFF_MIN_RUNS runs on the two sides together.
FAR_OFF_RATIO = 5.0
FAR_OFF_MIN_RUNS = 6
WINDOW_POINTS = 50  # Otava's default sliding window ...
WINDOW_RUNS = 5  # ... widened to hold at least this many runs
PARALLEL_SERIES = 8  # series to analyse per worker process, at least: fewer are done here


# Where DEFAULT_THRESHOLD comes from, in the words printed beside it (defaults.py has the
# measurement).
MEASURED_ACROSS_NIGHTS = (
    "medians of one build differed by up to 4.74 % across three H200 cards and hosts, "
    "docs/history.md"
)


@dataclass(frozen=True)
class Threshold:
    """Change detection's threshold, with where it comes from in words (printed beside it)."""

    value: float
    source: str


def threshold_of(given: float | None, configured: float | None) -> Threshold:
    """The threshold of `history changes` and the report's change points: `given` (the command
    line's --threshold, which may narrow it), else the larger of DEFAULT_THRESHOLD and the
    suite config's [compare] threshold (`configured`).

    The config's threshold is compare's, held there beside each benchmark's measured noise
    floor, which a history has none of: taken as it was, `threshold = "3%"` found change points
    in a flat series with 1.5 % run-to-run noise (tests/tools/test_changes.py). So it widens the
    threshold and never narrows it, as the per-benchmark rules do (find_changes)."""
    own = _percent(DEFAULT_THRESHOLD)
    why = f"detection's own: {MEASURED_ACROSS_NIGHTS}"
    if given is not None:
        if given >= DEFAULT_THRESHOLD:
            return Threshold(given, "--threshold")
        return Threshold(
            given, f"--threshold, narrower than {why}: a step this small may be that spread"
        )
    if configured is not None and configured > DEFAULT_THRESHOLD:
        return Threshold(configured, f"the suite config's [compare] threshold, wider than {own}")
    if configured is not None:
        return Threshold(
            DEFAULT_THRESHOLD,
            f"{why}; the config's [compare] threshold {_percent(configured)} is compare's and "
            "only widens it",
        )
    return Threshold(DEFAULT_THRESHOLD, why)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g}%"


@dataclass(frozen=True)
class Change:
    gpu_slug: str
    benchmark: str
    metric: str
    run_id: int  # first run after the change
    commit: str | None  # that run's kernelwatch_git_commit
    date: str  # that run's date (ISO)
    index: int  # position of that run in the benchmark's run series (0-based)
    before: float  # median of the values before (ns for times)
    after: float  # median of the values after
    ratio: float  # after / before
    p_value: float
    regression: bool  # slower (time up, or a higher-is-better counter down) beyond the threshold


@dataclass(frozen=True)
class SeriesRun:
    id: int
    date: str
    commit: str | None
    ingested_at: str = ""  # when it entered the history (UTC ISO 8601): as_of


@dataclass(frozen=True)
class Series:
    """One benchmark's values on one GPU: all repetitions of all runs, runs in date order."""

    gpu_slug: str
    benchmark: str
    runs: tuple[SeriesRun, ...]
    values: np.ndarray
    offsets: np.ndarray  # run k's values are values[offsets[k]:offsets[k + 1]]


def otava_analysis() -> ModuleType:
    """Otava's analysis module (vendored: kernelwatch/_vendor/README.md says why); it needs
    scipy, the `history` extra. Missing: a one-line InputError (exit 2) saying what to install."""
    try:
        from kernelwatch._vendor.otava import analysis
    except ImportError as exc:
        raise missing_extra("history changes", "history", exc) from None
    return analysis


def series_metric(name: str, higher_is_better: bool | None = None) -> Metric:
    """--metric with its good direction: given (report's --lower-is-better), else from its name
    (`history changes` takes no --higher-is-better, and resolve_metric's line sent the user to
    pass it)."""
    try:
        return resolve_metric(name, higher_is_better)
    except InputError:
        if higher_is_better is not None:
            raise
        raise InputError(
            f"--metric {shortened(name)}: unknown direction for this counter; change detection "
            "knows it from the name: time, cpu_time, allocs_per_iter, max_bytes_used (lower is "
            "better), or a counter named *_per_second or *_fraction (higher is better)"
        ) from None


def parse_since(value: str | None, flag: str = "--since") -> str | None:
    """--since (or `flag`) as the history stores dates (UTC ISO 8601); a date without a zone is
    UTC, as a run's date without one is (history.moment)."""
    if value is None:
        return None
    try:
        dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(
            f"{flag} {value!r}: not a date; write 2026-11-21 or 2026-11-21T06:00:00+00:00"
        ) from None
    normalized = normalized_date(value)
    if normalized is None:
        raise InputError(f"{flag} {value!r}: outside the years 1 to 9999 in UTC")
    return normalized


def find_changes(
    db: sqlite3.Connection,
    *,
    gpu: str | None = None,
    benchmark_filter: str | None = None,
    metric: str = "real_time",
    since: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
    rules: Sequence[ThresholdRule] = (),
    new_since: str | None = None,
    higher_is_better: bool | None = None,
) -> list[Change]:
    """Every change in every (GPU, benchmark) series of `metric`, newest first; its good
    direction is `higher_is_better` where given, else its name's (series_metric).

    `since` keeps the changes whose first run is at or after it, as times (the whole history
    is still analysed: runs before it are the "before"). `rules` are compare's per-benchmark
    thresholds (the first regex found in the name): they widen `threshold` for the benchmarks
    they match, never narrow it. `new_since` keeps
    the changes that the history as it was at that moment (the runs ingested by then) had not
    shown: unseen says how a change is recognised."""
    if not (0 <= threshold < 10):
        raise InputError(f"--threshold {threshold}: must be between 0 and 10")
    if not (0 < alpha < 1):
        raise InputError(f"--alpha {alpha}: must be between 0 and 1")
    measured = series_metric(metric, higher_is_better)
    pattern = _pattern(benchmark_filter)
    cutoff = parse_since(since)
    known = parse_since(new_since, "--new-since")
    otava_analysis()  # (missing: one line, before anything is read)
    jobs = []
    for series in load_series(db, measured.key, gpu=gpu, pattern=pattern):
        # A rule is written for compare (one comparison, with the benchmark's own noise floor):
        # one below the threshold would put change points inside the run-to-run spread of
        # nights on other processes and cards, which the threshold is there to stay above
        # (the suite's 3 % for pinned transfers found a step in 7 of 200 flat series with
        # 1.5 % noise, none at 5 %: docs/history.md).
        limit = max(threshold, threshold_for(series.benchmark, tuple(rules), threshold))
        if not too_flat(series, limit):  # (detect finds nothing in these: no job)
            jobs.append(_Job(series, measured, limit, alpha, known))
    changes = [change for found in _run(jobs) for change in found]
    # As times: a database of an older kernelwatch holds naive dates as written, which sort
    # before the same moment in UTC as text (the run at --since exactly was left out).
    when = {c.run_id: _moment_of(c) for c in changes}
    start = moment(cutoff)
    if start is not None:
        changes = [c for c in changes if when[c.run_id] >= start]
    changes.sort(key=lambda c: (c.gpu_slug, c.benchmark))
    changes.sort(key=lambda c: (when[c.run_id], c.run_id), reverse=True)  # stable: newest first
    return changes


def _moment_of(change: Change) -> dt.datetime:
    found = moment(change.date)
    if found is None:  # ingest writes only dates: a hand edit
        raise damaged(f"run {change.run_id}'s date", change.date, "an ISO 8601 date")
    return found


@dataclass(frozen=True)
class _Job:
    """The detection of one series: what a worker process is given."""

    series: Series
    metric: Metric
    threshold: float
    alpha: float
    known: str | None  # --new-since


def _changes_of(job: _Job) -> list[Change]:
    analysis = otava_analysis()
    # The states of the series that --new-since analyses again share most of its windows.
    windows: dict[Any, Any] = {}
    found = detect(job.series, job.metric, job.threshold, job.alpha, analysis, windows)
    if job.known is not None and found:
        found = unseen(
            job.series,
            found,
            job.known,
            lambda s: detect(s, job.metric, job.threshold, job.alpha, analysis, windows),
        )
    return found


def _run(jobs: Sequence[_Job]) -> list[list[Change]]:
    """Each job's changes, in order: in worker processes, one per CPU, when there are enough
    series for it to pay. Otava takes ~0.13 s of CPU for a series of 365 nightly runs
    (docs/architecture.md, "Scale"; ~0.7 s before its merge step was sped up); a year of two
    GPUs' nightlies with a step in one series of five holds ~190 series that are not flat
    (scripts/scale_bench.py). The result is the same list, in the same order."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = min(cpus or 1, len(jobs) // PARALLEL_SERIES)
    if workers < 2:
        return [_changes_of(job) for job in jobs]
    # fork: the workers start at once, with Otava imported (elsewhere they import it first)
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_changes_of, jobs))


def _pattern(benchmark_filter: str | None) -> re.Pattern[str] | None:
    if benchmark_filter is None:
        return None
    if not benchmark_filter.strip():
        raise InputError("--filter: empty regex")
    return compile_regex(benchmark_filter, "--filter")


# ---------------------------------------------------------------------------------- loading


def load_series(
    db: sqlite3.Connection,
    metric_key: str,
    *,
    gpu: str | None = None,
    pattern: re.Pattern[str] | None = None,
) -> Iterator[Series]:
    """The series of `metric_key`, per GPU and benchmark (runs without a GPU slug belong to
    none: values of unknown GPUs are no series). Bad names are one-line InputErrors."""
    if db.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is None:
        return
    slugs = [s for s in gpu_slugs(db, "SELECT id, gpu_slug FROM runs") if s]
    if not slugs:
        raise InputError(
            f"no run of the history records its GPU ({GPU_KEYS}), and a series is one GPU "
            "model's: there is nothing to analyse"
        )
    if gpu is not None and gpu not in slugs:
        raise InputError(
            f"--gpu {gpu}: no run on that GPU in the history; it has "
            f"{', '.join(slugs) or 'no run with a known GPU'}"
        )
    found = db.execute("SELECT id FROM metrics WHERE name = ?", (metric_key,)).fetchone()
    if found is None:
        known = texts(db.execute("SELECT id, name FROM metrics ORDER BY name"), "metric")
        raise InputError(
            f"--metric {metric_key}: no such values in the history; it has {', '.join(known)}"
        )
    names: dict[int, str] = {}
    for benchmark_id, name in db.execute("SELECT id, name FROM benchmarks"):
        if not isinstance(name, str):  # (a BLOB a hand edit wrote: bytes, which no regex reads)
            raise damaged(f"benchmark {benchmark_id}'s name", name, "text")
        if pattern is None or pattern.search(name):
            names[int(benchmark_id)] = name
    if not names and pattern is not None:
        raise InputError(
            f"--filter {shortened(repr(pattern.pattern))} matches no benchmark in the history"
        )
    # One range of the samples' key (benchmark, metric, run, repetition) per series: a query
    # over the metric alone scans and sorts the whole table (a year of two GPUs' nightlies,
    # 33 M values: 24 s before the first series; this way 2 s for all of them).
    ordered: dict[str, list[SeriesRun]] = {}
    # A run slowed down on purpose (--kernelwatch_inject, a selftest's) measured the injection,
    # not a commit: two of them in a flat series were a regression and an improvement.
    slowed = slowed_runs(db)
    for run_id, slug, date, commit, ingested_at in db.execute(
        "SELECT id, gpu_slug, date, git_commit, ingested_at FROM runs "
        "WHERE gpu_slug IS NOT NULL ORDER BY gpu_slug, date, id"
    ):
        if (gpu is None or slug == gpu) and int(run_id) not in slowed:
            ordered.setdefault(slug, []).append(SeriesRun(int(run_id), date, commit, ingested_at))
    failed: dict[int, set[int]] = {}  # a run where the benchmark failed is compare's ERROR
    for run_id, benchmark_id in failed_runs(db):
        failed.setdefault(benchmark_id, set()).add(run_id)
    emitted = 0
    for slug, runs in ordered.items():
        # run id -> date order, by a search of the sorted ids: an id is any 64-bit integer
        # (a hand edit's 10**12 made a table of that size, a negative one indexed from its end)
        ids = np.array([run.id for run in runs], np.int64)
        by_id = np.argsort(ids, kind="stable")
        sorted_ids = ids[by_id]
        for benchmark_id in sorted(names):
            rows = db.execute(
                "SELECT s.run_id, s.value FROM samples s WHERE s.benchmark_id = ? AND "
                "s.metric_id = ? AND s.run_id IN (SELECT id FROM runs WHERE gpu_slug = ?) "
                "ORDER BY s.run_id, s.repetition",
                (benchmark_id, found[0], slug),
            ).fetchall()
            if not rows:
                continue
            run_ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            try:
                values = np.fromiter((r[1] for r in rows), np.float64, len(rows))
            except (TypeError, ValueError):
                bad = next((v for _, v in rows if not isinstance(v, (int, float))), None)
                raise damaged(f"a sample of benchmark {benchmark_id}", bad, "a number") from None
            left_out = failed.get(benchmark_id, set()) | slowed
            if left_out:
                keep = ~np.isin(run_ids, list(left_out))
                run_ids, values = run_ids[keep], values[keep]
                if not len(values):
                    continue
            places = by_id[np.searchsorted(sorted_ids, run_ids)]
            order = np.argsort(places, kind="stable")  # (stable: repetitions stay in order)
            present, counts = np.unique(places, return_counts=True)
            emitted += 1
            yield Series(
                slug,
                names[benchmark_id],
                tuple(runs[k] for k in present),
                values[order],
                np.concatenate([np.zeros(1, np.int64), np.cumsum(counts)]),
            )
    if not emitted and pattern is not None:
        raise InputError(
            f"--filter {shortened(repr(pattern.pattern))}: no {metric_key} values of the "
            "benchmarks it matches" + (f" on {gpu}" if gpu else "")
        )


# -------------------------------------------------------------------------------- detection


@dataclass(frozen=True)
class _Verdict:
    boundary: int  # the first run after the change
    before: float
    after: float
    p_value: float
    passes: bool


def detect(
    series: Series,
    metric: Metric,
    threshold: float,
    alpha: float,
    analysis: ModuleType | None = None,
    windows: dict[Any, Any] | None = None,
) -> list[Change]:
    """The changes of one series (oldest first). `windows`: what Otava found in each window of
    values, kept between the calls for one series (a few states of it share all but their last
    windows: unseen)."""
    analysis = analysis or otava_analysis()
    count = len(series.runs)
    if count < 2 * MIN_RUNS or len(series.values) < 4 or too_flat(series, threshold):
        return []
    # Otava's t-test and E-Divisive square the values: at 1e300 they overflow, at 1e-300 they
    # underflow, and a +50 % step went unseen. Detection is on values brought near 1 by a power
    # of two: exact, so every result is bitwise that of the series as given, at any scale.
    exponent = _exponent(series.values)
    series = replace(series, values=np.ldexp(series.values, -exponent))
    sizes = np.diff(series.offsets)
    window = max(WINDOW_POINTS, WINDOW_RUNS * int(np.max(sizes)))
    # Otava's split step ignores its window for an ndarray (it slices only sequences): a list.
    candidates, _ = analysis.compute_change_points(
        series.values.tolist(),
        window_len=window,
        max_pvalue=alpha,
        min_magnitude=threshold,
        windows=windows,
    )
    boundaries = sorted({_snap(series.offsets, int(c.index)) for c in candidates} - {0, count})
    tester = analysis.TTestSignificanceTester(alpha)
    while True:
        edges = [0, *boundaries, count]
        verdicts = [
            _judge(series, edges[i - 1], edges[i], edges[i + 1], threshold, alpha, tester)
            for i in range(1, len(edges) - 1)
        ]
        failed = [v for v in verdicts if not v.passes]
        if not failed:
            break
        # Drop the weakest (least significant, then smallest) and judge the rest again.
        weakest = max(failed, key=lambda v: (v.p_value, -abs(math.log(v.after / v.before))))
        boundaries.remove(weakest.boundary)
    changes = []
    for verdict in verdicts:
        run = series.runs[verdict.boundary]
        ratio = verdict.after / verdict.before
        changes.append(
            Change(
                gpu_slug=series.gpu_slug,
                benchmark=series.benchmark,
                metric=metric.key,
                run_id=run.id,
                commit=run.commit,
                date=run.date,
                index=verdict.boundary,
                before=math.ldexp(verdict.before, exponent),
                after=math.ldexp(verdict.after, exponent),
                ratio=ratio,
                p_value=verdict.p_value,
                regression=ratio < 1 if metric.higher_is_better else ratio > 1,
            )
        )
    return changes


def _exponent(values: np.ndarray) -> int:
    """The power of two of the series' first non-zero value (the first: the same for every
    earlier state of the series, so unseen's windows of values still match)."""
    nonzero = np.flatnonzero(values)
    return math.frexp(float(values[nonzero[0]]))[1] if len(nonzero) else 0


def too_flat(series: Series, threshold: float) -> bool:
    """No change of this series can reach the threshold, so detection can only find none.

    A change's before and after are medians of whole runs (its sides), and the median of a
    union of runs lies between the smallest lower median and the largest upper median of its
    runs: fewer than half of each run's values lie below its lower median. So no change is
    larger than highest / lowest of those. Most series of a year of nightlies are flat to
    well within 5 %; Otava costs ~0.13 s of CPU for each one of 365 runs (docs/history.md)."""
    if threshold <= 0:
        return False
    sizes = np.diff(series.offsets)
    if len(sizes) and np.all(sizes == sizes[0]):  # the usual series: one reshape, one sort
        runs = np.sort(series.values.reshape(len(sizes), int(sizes[0])), axis=1)
        lows, highs = runs[:, (sizes[0] - 1) // 2], runs[:, sizes[0] // 2]
    else:
        o = series.offsets
        ordered = [np.sort(series.values[o[k] : o[k + 1]]) for k in range(len(sizes))]
        lows = np.array([run[(len(run) - 1) // 2] for run in ordered])
        highs = np.array([run[len(run) // 2] for run in ordered])
    low, high = float(np.min(lows)), float(np.max(highs))
    # (a margin of 1e-9 for the rounding of log and division: flat means clearly flat)
    return low > 0 and math.log(high / low) < math.log1p(threshold) - 1e-9


def _snap(offsets: np.ndarray, index: int) -> int:
    """The run boundary (index of the first run after it) nearest to a point index."""
    return int(np.argmin(np.abs(offsets - index)))


def _judge(
    series: Series,
    low: int,
    boundary: int,
    high: int,
    threshold: float,
    alpha: float,
    tester: Any,
) -> _Verdict:
    """Runs [low, boundary) before, [boundary, high) after: does the change count?"""
    o = series.offsets
    left = series.values[o[low] : o[boundary]]
    right = series.values[o[boundary] : o[high]]
    before, after = float(np.median(left)), float(np.median(right))
    if not (before > 0 and after > 0) or before == after:
        return _Verdict(boundary, before or math.nan, after or math.nan, 1.0, False)
    size = abs(math.log(after / before))
    medians = np.array(
        [np.median(series.values[o[k] : o[k + 1]]) for k in range(low, high)], dtype=np.float64
    )
    side_before, side_after = medians[: boundary - low], medians[boundary - low :]
    # Run-to-run spread: relative deviation of each run's median from its side's median. A run
    # whose median is 0 (a counter it did not count) has no place on that log scale: log 0 printed
    # numpy's warning and made the spread infinite. It still counts in the sides' medians.
    levels = np.where(np.arange(low, high) < boundary, before, after)
    counted = np.flatnonzero(medians > 0)  # (runs low + counted[i]: deviations[i])
    deviations = np.log(medians[counted] / levels[counted])
    noise = run_spread(deviations)
    far = far_off_run(deviations)
    if far is not None:
        left, right = tested_sides(series, low, boundary, high, low + int(counted[far]))
    p_value = float(tester.compare(left, right).pvalue)
    if not math.isfinite(p_value):  # no spread on either side: nothing to test with
        p_value = 1.0
    # It holds: the MIN_RUNS runs on each side next to it are on their side of the midpoint
    # (one odd run is no step). Runs further away are held to the noise rule only: over a long
    # side, one run in twenty beyond two standard deviations is expected.
    midpoint = math.sqrt(before * after)
    near_before, near_after = side_before[-MIN_RUNS:], side_after[:MIN_RUNS]
    if after < before:
        near_before, near_after, midpoint = -near_before, -near_after, -midpoint
    holds = bool(np.all(near_after > midpoint) and np.all(near_before < midpoint))
    passes = (
        boundary - low >= MIN_RUNS
        and high - boundary >= MIN_RUNS
        and p_value < alpha
        and size >= math.log1p(threshold)
        and size > NOISE_MULTIPLIER * noise
        and holds
    )
    return _Verdict(boundary, before, after, p_value, passes)


def far_off_run(deviations: np.ndarray) -> int | None:
    """The index of the one run far off, as run_spread leaves it out of the spread (beyond
    FAR_OFF_RATIO x the others' RMS, with at least FAR_OFF_MIN_RUNS runs); None: none."""
    count = len(deviations)
    if count < FAR_OFF_MIN_RUNS:
        return None
    squares = deviations**2
    others = math.sqrt(float(np.sum(np.sort(squares)[:-1])) / (count - 3))
    largest = int(np.argmax(squares))
    return largest if math.sqrt(float(squares[largest])) > FAR_OFF_RATIO * others else None


def tested_sides(
    series: Series, low: int, boundary: int, high: int, far: int
) -> tuple[np.ndarray, np.ndarray]:
    """The repetitions of the two sides that the t-test compares: all but those of run `far`,
    the run far off (far_off_run). Its values in the step's direction before it pulled that
    side's mean across the step: a 12 % step with one run 1.5x slower before it was found in 0
    of 50 simulated series of 8 runs and 5 of 50 of 12; without its values in the test, in 50
    and 50, and flat series gave no more false changes (docs/history.md, "One run far off")."""
    o = series.offsets
    kept = np.ones(o[high] - o[low], dtype=bool)
    kept[o[far] - o[low] : o[far + 1] - o[low]] = False
    cut = o[boundary] - o[low]
    values = series.values[o[low] : o[high]]
    return values[:cut][kept[:cut]], values[cut:][kept[cut:]]


def run_spread(deviations: np.ndarray) -> float:
    """The run-to-run spread of a change's two sides, from each run median's log deviation
    from its side's median: their RMS (one freedom less per side), less the single largest
    when there are at least FAR_OFF_MIN_RUNS and it lies beyond FAR_OFF_RATIO x the RMS of
    the others (one run far off, a throttled machine: with it a 12 % step stayed hidden for as
    long as that run was in the series). Without such a run it is the RMS: a median absolute
    deviation, or any estimate that is always below the RMS, gave more false changes in flat
    series with 3 % run-to-run noise (docs/history.md)."""
    count = len(deviations)
    if count <= 2:
        return 0.0
    far = far_off_run(deviations)
    if far is None:
        return math.sqrt(float(np.sum(deviations**2)) / (count - 2))
    return math.sqrt(float(np.sum(np.delete(deviations, far) ** 2)) / (count - 3))


# --- which changes are new: --new-since -------------------------------------------------------
#
# Which of a series' changes are new: found in the history now, never found in the history as
# it was at any moment up to a given one. Stateless: the history's own ingest times say what it
# held then, so the nightly reports each change once, the night it is first found.
#
# The history as it was at a moment T is its runs ingested at or before T (`ingested_at`, the
# clock of the ingest; not the run's own date: a run measured before T but ingested after it was
# not there to be seen). A change found now counts as already found when the same detection, on
# the series as it was at some moment up to T, found the same change:
#
# * in the same series (GPU slug, benchmark, metric: one Series is one of them);
# * in the same direction (both regressions or both improvements);
# * at the same first run after it, or at one of its MOVE_RUNS neighbours in the series as it is
#   now: runs added after a step can move where its estimate snaps to.
#
# Each earlier change stands for one change now (the nearest; ties: the older), so a second
# step that grows beside a known one is still reported. Every moment up to T counts, not T
# alone: a change that was found, lost when the next run widened the spread, and found again is
# still one change. docs/history.md gives the measurements behind both rules.

# How far (in runs) a change found again may have moved and still be the same change. In 120
# simulated series growing a night at a time (a 10 % step, 3 % run-to-run noise), the step's
# estimate moved 5 times: 4 times by one run, once by two; with 1.5 % noise, never.
MOVE_RUNS = 1


def unseen(
    series: Series,
    found: Sequence[Change],
    moment: str,
    detect: Callable[[Series], list[Change]],
) -> list[Change]:
    """The changes of `found` (the series' changes now) that `detect` never found in the series
    as it was at `moment` (UTC ISO 8601, as the history stores times) or at any moment before."""
    position = {run.id: k for k, run in enumerate(series.runs)}
    left = list(found)  # not found in any state so far
    # Each ingest of one of its runs up to `moment` made a state of the series: newest first.
    moments = sorted({r.ingested_at for r in series.runs if r.ingested_at <= moment}, reverse=True)
    for then in moments:
        past = as_of(series, then)
        # A state can only have found a change at a run it holds, no earlier than MOVE_RUNS
        # before it; the states before this one hold fewer runs still.
        newest = max((position[run.id] for run in past.runs), default=-1)
        asked = [c for c in left if newest >= position[c.run_id] - MOVE_RUNS]
        if not asked:
            break
        still = unmatched(asked, detect(past), position)
        left = [c for c in left if c not in asked or c in still]
    return left


def as_of(series: Series, moment: str) -> Series:
    """The series as it was at `moment`: its runs ingested at or before it, in the same order."""
    kept = [k for k, run in enumerate(series.runs) if run.ingested_at <= moment]
    o = series.offsets
    parts = [series.values[o[k] : o[k + 1]] for k in kept]
    sizes = np.asarray([len(part) for part in parts], dtype=np.int64)
    return replace(
        series,
        runs=tuple(series.runs[k] for k in kept),
        values=np.concatenate(parts) if parts else series.values[:0],
        offsets=np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes)]),
    )


def unmatched(
    now: Sequence[Change], before: Sequence[Change], position: dict[int, int]
) -> list[Change]:
    """The changes of `now` that are not the same change as one of `before` (one each, the
    nearest first); `position` is each run's index in the series as it is now."""
    pairs = sorted(
        (distance, i, j)
        for i, change in enumerate(now)
        for j, earlier in enumerate(before)
        if earlier.regression == change.regression
        and (distance := abs(position[earlier.run_id] - position[change.run_id])) <= MOVE_RUNS
    )
    taken_now: set[int] = set()
    taken_before: set[int] = set()
    for _, i, j in pairs:
        if i not in taken_now and j not in taken_before:
            taken_now.add(i)
            taken_before.add(j)
    return [change for i, change in enumerate(now) if i not in taken_now]
