"""The selftest's figures from saved runs: false alarms of the A/A pairs, detections of the
injected slowdowns, the runs' own figures, and the targets they are held to. First what it
finds, as data (the Analysis and its parts, which views.py shows), then how (analyse)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch import defaults
from kernelwatch.baseline import restrict
from kernelwatch.compare import Comparison, Settings, Verdict, compare
from kernelwatch.config import ThresholdRule, threshold_for
from kernelwatch.errors import InputError, compile_regex, shortened
from kernelwatch.loading import from_documents
from kernelwatch.names import family as family_of
from kernelwatch.names import instance_key, row_name
from kernelwatch.results import Metric, ResultSet
from kernelwatch.selftest.runs import (
    DEFAULT_INJECT,
    DEFAULT_MIN_TIME_US,
    SavedRun,
    level_text,
    one_build_and_model,
)

# --- what the selftest finds, as data -------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    hits: int = 0
    total: int = 0

    @property
    def rate(self) -> float | None:
        return self.hits / self.total if self.total else None

    def __add__(self, other: Rate) -> Rate:
        return Rate(self.hits + other.hits, self.total + other.total)


@dataclass(frozen=True)
class Example:
    """A false alarm, or a miss: which comparison, which benchmark, what compare said."""

    where: str  # "aa-1.json vs aa-2.json"
    name: str
    verdict: str
    reason: str
    median_us: float | None


@dataclass(frozen=True)
class Detection:
    level: float
    trials: int
    all: Rate  # every injected benchmark held to a threshold below the level
    long: Rate  # those of them at or above the minimum time
    excluded: int  # injected benchmarks that a threshold rule holds above the level
    by_family: Mapping[str, Rate]  # long ones
    misses: tuple[Example, ...]


@dataclass(frozen=True)
class FamilyFigures:
    family: str
    benchmarks: int
    median_time_us: float | None
    median_cv: float | None  # of the repetitions of one run (its processes pooled)
    median_noise: float | None  # the harness's counter
    median_samples: float | None
    median_sample_cv: float | None
    throttled_fraction: float | None  # samples_throttled / (samples + samples_throttled)
    median_timed_ms: float | None  # samples x time: GPU time timed per repetition
    median_clock_mhz: float | None
    max_temperature_c: float | None


@dataclass(frozen=True)
class RunTime:
    file: str
    role: str
    seconds: float | None
    benchmarks: int
    processes: int

    @property
    def per_benchmark(self) -> float | None:
        return self.seconds / self.benchmarks if self.seconds and self.benchmarks else None


@dataclass(frozen=True)
class TargetCheck:
    name: str
    value: float | None  # None: not measured
    limit: float
    at_most: bool  # value <= limit (else >=)
    detail: str = ""

    @property
    def measured(self) -> bool:
        return self.value is not None

    @property
    def met(self) -> bool:
        if self.value is None:
            return True  # not measured is not missed; shown as such
        return self.value <= self.limit if self.at_most else self.value >= self.limit


@dataclass(frozen=True)
class Analysis:
    settings: Settings
    min_time_us: float
    min_time_us_left_out: bool  # at its default, which no measurement derived (not typed)
    runs: int
    aa_runs: int
    aa_pairs: int
    false_alarms: Rate
    false_alarms_long: Rate
    false_alarms_by_family: Mapping[str, Rate]
    unsure: Rate  # UNSURE among the A/A comparisons: not alarms, but not answers either
    false_alarm_examples: tuple[Example, ...]
    detections: tuple[Detection, ...]
    figures: tuple[FamilyFigures, ...]
    median_cv: float | None
    median_cv_long: float | None
    times: tuple[RunTime, ...]
    targets: tuple[TargetCheck, ...]
    notes: tuple[str, ...] = field(default=())
    # Where each compared benchmark's noise floor came from, per level the comparisons crossed
    # ("process" for runs of one card): hits = its spread measured there, the rest the prior.
    # A false-alarm rate against prior limits says nothing of the measured ones, so it is said.
    limits: Mapping[str, Rate] = field(default_factory=dict)
    # Planned runs not made yet (a --time-budget ran out): part of the runs cannot show that
    # the targets hold, so it is not a pass, whatever the runs made say.
    missing: int = 0

    @property
    def unmeasured_defaults(self) -> list[str]:
        """The settings left at a default that no measurement derived, said where the settings
        are: --min-time-us, the targets' bound (defaults.SELFTEST_MIN_TIME_US), where it was
        not typed (50 typed is a choice)."""
        return ["min_time_us"] if self.min_time_us_left_out else []

    @property
    def missed(self) -> list[TargetCheck]:
        return [t for t in self.targets if not t.met]

    @property
    def passed(self) -> bool:
        return not self.missed and not self.missing

    @property
    def exit_status(self) -> int:
        return 0 if self.passed else 1


# --- how: analyse ---------------------------------------------------------------------------------

# The targets of issue 6 (docs/measurement.md).
TARGET_FALSE_ALARMS = defaults.TARGET_FALSE_ALARMS  # at most, of all A/A benchmark comparisons
TARGET_DETECTION: Mapping[float, float] = {0.05: 0.99, 0.02: 0.90}  # at least, >= min time
TARGET_MEDIAN_CV = 0.005  # at most

TIME = Metric("real_time", higher_is_better=False)
# False alarm: any change claimed between identical runs; detection: a failing REGRESSION.
FLAGGED = frozenset({Verdict.REGRESSION, Verdict.SLOWER, Verdict.IMPROVEMENT})
MEASURED = FLAGGED | {Verdict.SAME, Verdict.UNSURE}
EXAMPLES = 10  # false alarms and misses listed by name


def analyse(
    runs: Sequence[SavedRun],
    settings: Settings,
    *,
    min_time_us: float | None = None,
    only: re.Pattern[str] | None = None,
    progress: Callable[[str], None] | None = None,
    missing: int = 0,
) -> Analysis:
    """The selftest's figures from saved runs; `only` restricts every comparison to the
    benchmarks whose names it matches (as if only those had run); `missing`: the planned runs
    still to make (Analysis.missing); `min_time_us` None: the default."""
    one_build_and_model(runs)
    notes: list[str] = []
    judge = _Judge(settings, only, progress, notes)
    left_out = min_time_us is None
    min_time_us = DEFAULT_MIN_TIME_US if min_time_us is None else min_time_us
    min_ns = min_time_us * 1e3
    aa = sorted((r for r in runs if r.role == "aa"), key=lambda r: r.index)
    alarms = _false_alarms(aa, judge.judged, min_ns)
    detections = _detections(runs, judge.judged, min_ns, settings.rules, notes)
    figure_runs = aa or [r for r in runs if r.role == "control"]
    figures, cvs, cvs_long = _figures([judge.side(r) for r in figure_runs], min_ns)
    median_cv = float(np.median(cvs)) if cvs else None
    median_cv_long = float(np.median(cvs_long)) if cvs_long else None
    return Analysis(
        settings=settings,
        min_time_us=min_time_us,
        min_time_us_left_out=left_out,
        runs=len(runs),
        aa_runs=len(aa),
        aa_pairs=alarms.pairs,
        false_alarms=alarms.every,
        false_alarms_long=alarms.long,
        false_alarms_by_family=dict(sorted(alarms.families.items())),
        unsure=alarms.unsure,
        false_alarm_examples=alarms.examples,
        detections=detections,
        figures=figures,
        median_cv=median_cv,
        median_cv_long=median_cv_long,
        times=_run_times(runs),
        targets=_targets(alarms.every, alarms.pairs, detections, median_cv, min_time_us),
        notes=tuple(notes),
        limits=dict(sorted(judge.limits.items())),
        missing=missing,
    )


@dataclass
class _Judge:
    """Compares saved runs by time: each run is read (and restricted to `only`) once, and the
    benchmarks of a pair not measured on both sides are left out with a note."""

    settings: Settings
    only: re.Pattern[str] | None
    progress: Callable[[str], None] | None
    notes: list[str]
    sides: dict[Path, ResultSet] = field(default_factory=dict)
    limits: dict[str, Rate] = field(default_factory=dict)  # Analysis.limits
    warned: set[str] = field(default_factory=set)  # compare's warnings already in notes

    def side(self, run: SavedRun) -> ResultSet:
        found = self.sides.get(run.path)
        if found is None:
            document = run.document
            if self.only is not None:
                names = {row_name(r) for r in document.get("benchmarks", [])}
                document = restrict(document, {n for n in names if self.only.search(n)})
                if not document["benchmarks"]:
                    raise InputError(
                        f"{run.path}: --filter {shortened(repr(self.only.pattern))} matches "
                        "none of it"
                    )
            found = self.sides[run.path] = from_documents(str(run.path), [document])
        return found

    def judged(self, base: SavedRun, cont: SavedRun) -> list[Comparison]:
        if self.progress:
            self.progress(f"comparing {base.path.name} with {cont.path.name}")
        report = compare(self.side(base), self.side(cont), TIME, self.settings)
        for warning in report.warnings:
            # compare's warnings (another driver, clock, ...): said once, as compare says them
            if warning not in self.warned:
                self.warned.add(warning)
                self.notes.append(f"{base.path.name} vs {cont.path.name}: warning: {warning}")
        skipped = [c for c in report.comparisons if c.verdict not in MEASURED]
        if skipped:
            self.notes.append(
                f"{base.path.name} vs {cont.path.name}: {len(skipped)} benchmark(s) not "
                f"measured on both sides (first: {skipped[0].name}, {skipped[0].verdict.value})"
            )
        measured = [c for c in report.comparisons if c.verdict in MEASURED]
        for c in measured:
            if c.level is not None:
                self.limits[c.level] = self.limits.get(c.level, Rate()) + Rate(
                    int(bool(c.level_measured)), 1
                )
        if any(c.level_measured is False for c in measured):
            # compare's own words for the prior it took (which level, which constants)
            for note in report.notes:
                if note.startswith("level:") and note not in self.notes:
                    self.notes.append(note)
        return measured


@dataclass(frozen=True)
class _FalseAlarms:
    pairs: int
    every: Rate
    long: Rate  # of the benchmarks at or above the minimum time
    unsure: Rate
    families: dict[str, Rate]
    examples: tuple[Example, ...]


def _false_alarms(
    aa: Sequence[SavedRun],
    judged: Callable[[SavedRun, SavedRun], list[Comparison]],
    min_ns: float,
) -> _FalseAlarms:
    """Every pair of A/A runs compared: any REGRESSION or IMPROVEMENT between them is false."""
    every, long, unsure = Rate(), Rate(), Rate()
    by_family: dict[str, Rate] = defaultdict(Rate)
    examples: list[Example] = []
    pairs = 0
    for i, base in enumerate(aa):
        for cont in aa[i + 1 :]:
            pairs += 1
            where = f"{base.path.name} vs {cont.path.name}"
            for c in judged(base, cont):
                flagged = c.verdict in FLAGGED
                one = Rate(int(flagged), 1)
                every += one
                unsure += Rate(int(c.verdict is Verdict.UNSURE), 1)
                median = c.baseline.median if c.baseline else None
                if median is not None and median >= min_ns:
                    long += one
                by_family[family_of(c.name)] += one
                if flagged and len(examples) < EXAMPLES:
                    examples.append(_example(where, c))
    return _FalseAlarms(pairs, every, long, unsure, by_family, tuple(examples))


def _run_times(runs: Sequence[SavedRun]) -> tuple[RunTime, ...]:
    return tuple(
        RunTime(
            r.path.name,
            r.role,
            r.seconds,
            r.benchmarks,
            _int((r.document.get("context") or {}).get("kernelwatch_processes"), 1),
        )
        for r in sorted(runs, key=lambda r: r.path.name)
    )


def _example(where: str, c: Comparison) -> Example:
    median = c.baseline.median if c.baseline else None
    return Example(
        where, c.name, c.verdict.value, c.reason, None if median is None else median / 1e3
    )


def _detections(
    runs: Sequence[SavedRun],
    judged: Callable[[SavedRun, SavedRun], list[Comparison]],
    min_ns: float,
    rules: tuple[ThresholdRule, ...],
    notes: list[str],
) -> tuple[Detection, ...]:
    """Per level: how many injected benchmarks were called REGRESSION. A benchmark that a
    threshold rule (kernelwatch.toml) holds above the level is left out and counted: the suite
    says on purpose that such a change is not to be flagged there (pageable transfers, 40%).
    The default threshold leaves nothing out: a default too high for a level is a miss."""
    controls = {r.index: r for r in runs if r.role == "control"}
    slowed = sorted((r for r in runs if r.role == "inject"), key=lambda r: (r.level, r.index))
    by_level: dict[float, list[SavedRun]] = defaultdict(list)
    for run in slowed:
        if run.index not in controls:
            notes.append(f"{run.path.name}: no control run of trial {run.index}: not analysed")
            continue
        by_level[run.level or 0.0].append(run)
    out = []
    for level, trials in sorted(by_level.items()):
        every, long, excluded = Rate(), Rate(), 0
        families: dict[str, Rate] = defaultdict(Rate)
        misses: list[Example] = []
        for run in trials:
            control = controls[run.index]
            pattern = _inject_pattern(run)
            where = f"{control.path.name} vs {run.path.name}"
            for c in judged(control, run):
                if not pattern.search(instance_key(c.name)):
                    continue
                if threshold_for(c.name, rules, 0.0) > level + 1e-12:
                    excluded += 1  # a rule holds it to a looser threshold on purpose
                    continue
                hit = Rate(int(c.verdict is Verdict.REGRESSION), 1)
                every += hit
                median = c.baseline.median if c.baseline else None
                if median is not None and median >= min_ns:
                    long += hit
                    families[family_of(c.name)] += hit
                    if not hit.hits and len(misses) < EXAMPLES:
                        misses.append(_example(where, c))
        out.append(
            Detection(
                level,
                len(trials),
                every,
                long,
                excluded,
                dict(sorted(families.items())),
                tuple(misses),
            )
        )
    return tuple(out)


def _inject_pattern(run: SavedRun) -> re.Pattern[str]:
    """Which benchmarks the run slowed: the harness matches the regex against each one's
    instance key (names.instance_key: local_memory/local_array/16777216/8), not its full name
    (.../n:16777216/rounds:8/manual_time). Matched against the full names, `rounds:8` counted
    benchmarks the harness never slowed as misses, and `/8$` slowed ones never counted."""
    return compile_regex(run.inject or DEFAULT_INJECT, f"{run.path}: injection")


def _figures(
    sides: Sequence[ResultSet], min_ns: float
) -> tuple[tuple[FamilyFigures, ...], list[float], list[float]]:
    """Per family, over every benchmark of every run given; and every benchmark's CV (all, and
    those at or above the minimum time)."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    names: dict[str, set[str]] = defaultdict(set)
    cvs: list[float] = []
    cvs_long: list[float] = []
    for result in sides:
        times = result.columns.get("real_time")
        if times is None:
            continue
        for k, name in enumerate(result.names):
            count = int(result.counts[k])
            if not count or result.from_aggregates[k]:
                continue
            rows = slice(int(result.starts[k]), int(result.starts[k]) + count)
            values = times[rows]
            family = family_of(name)
            figures = per[family]
            names[family].add(name)
            median = float(np.median(values))
            figures["time"].append(median)
            if count >= 2:
                cv = float(np.std(values, ddof=1) / np.mean(values))
                figures["cv"].append(cv)
                cvs.append(cv)
                if median >= min_ns:
                    cvs_long.append(cv)
            counter = _counters(result, rows)
            for key in ("noise", "samples", "sample_cv", "sm_clock_mhz"):
                if key in counter:
                    figures[key].append(float(np.median(counter[key])))
            if "gpu_temperature_c" in counter:
                figures["temperature"].append(float(np.max(counter["gpu_temperature_c"])))
            if "samples" in counter:
                kept = float(np.sum(counter["samples"]))
                thrown = float(np.sum(counter.get("samples_throttled", np.zeros(1))))
                figures["kept"].append(kept)
                figures["throttled"].append(thrown)
                figures["timed_ms"].append(float(np.median(counter["samples"] * values)) / 1e6)
    out = []
    for family in sorted(per):
        f = per[family]
        kept, thrown = sum(f["kept"]), sum(f["throttled"])
        out.append(
            FamilyFigures(
                family=family,
                benchmarks=len(names[family]),
                median_time_us=_median(f["time"], 1e-3),
                median_cv=_median(f["cv"]),
                median_noise=_median(f["noise"]),
                median_samples=_median(f["samples"]),
                median_sample_cv=_median(f["sample_cv"]),
                throttled_fraction=thrown / (kept + thrown) if kept + thrown else None,
                median_timed_ms=_median(f["timed_ms"]),
                median_clock_mhz=_median(f["sm_clock_mhz"]),
                max_temperature_c=max(f["temperature"]) if f["temperature"] else None,
            )
        )
    return tuple(out), cvs, cvs_long


def _counters(result: ResultSet, rows: slice) -> dict[str, np.ndarray]:
    """The harness's counters of these rows, where every row has them."""
    found = {}
    for key in (
        "noise",
        "samples",
        "samples_throttled",
        "sample_cv",
        "sm_clock_mhz",
        "gpu_temperature_c",
    ):
        column = result.columns.get(key)
        if column is None:
            continue
        gap = result.gaps.get(key)
        if gap is not None and gap[rows].any():
            continue
        found[key] = column[rows]
    return found


def _median(values: Iterable[float], scale: float = 1.0) -> float | None:
    kept = [v for v in values if math.isfinite(v)]
    return float(np.median(kept)) * scale if kept else None


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # (Infinity: JSON as Python reads it)
        return default


def _targets(
    false_alarms: Rate,
    pairs: int,
    detections: Sequence[Detection],
    median_cv: float | None,
    min_time_us: float,
) -> tuple[TargetCheck, ...]:
    checks = [
        TargetCheck(
            "A/A false alarms",
            false_alarms.rate if pairs else None,
            TARGET_FALSE_ALARMS,
            at_most=True,
            detail=f"{false_alarms.hits} of {false_alarms.total}" if pairs else "no A/A pair",
        )
    ]
    for level, needed in sorted(TARGET_DETECTION.items(), reverse=True):
        found = next((d for d in detections if abs(d.level - level) < 1e-9), None)
        rate = found.long.rate if found else None
        checks.append(
            TargetCheck(
                f"{level_text(level, percent=True)} slowdown detected (>= {min_time_us:g} us)",
                rate,
                needed,
                at_most=False,
                detail=(
                    f"{found.long.hits} of {found.long.total}"
                    if found and found.long.total
                    else "not injected" if not found else "no injected benchmark that long"
                ),
            )
        )
    checks.append(
        TargetCheck(
            "median CV of repetitions",
            median_cv,
            TARGET_MEDIAN_CV,
            at_most=True,
            detail="" if median_cv is not None else "no runs with repetitions",
        )
    )
    return tuple(checks)
