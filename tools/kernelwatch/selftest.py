"""`kernelwatch selftest`: does the measurement meet its targets on this GPU?

Three measurements, from runs made exactly as `kernelwatch run` makes them (several processes
per binary, the same compare settings):

* A/A: the same build run N times; every pair compared. A REGRESSION or IMPROVEMENT between
  two runs of the same code is a false alarm.
* Injected slowdowns: the harness's --kernelwatch_inject=REGEX:FRACTION adds a spin kernel to
  the timed region of the matching benchmarks, lasting FRACTION of the benchmark's own median,
  so they run exactly FRACTION slower. Each trial is a control run (FRACTION 0: the same extra
  launch, empty) and one run per level; a REGRESSION of an injected benchmark is a detection.
* Figures of the runs: the CV of the repetitions, the harness's `noise` and `samples`
  counters, wall time.

Every run is saved (one result file each, named by its role) and carries its role in its
context, so a saved folder can be analysed again without a GPU (`--from`), with other compare
settings: thresholds are tuned offline from GPU data. Rendering is in selftest_render.py.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch import runner
from kernelwatch.baseline import restrict
from kernelwatch.compare import Comparison, Settings, Verdict, compare
from kernelwatch.config import ThresholdRule, threshold_for
from kernelwatch.errors import InputError
from kernelwatch.files import write_json_atomic
from kernelwatch.gbench import read_json
from kernelwatch.results import Metric, ResultSet, from_documents

DEFAULT_AA_RUNS = 4
DEFAULT_TRIALS = 2
DEFAULT_LEVELS = (0.01, 0.02, 0.05)
DEFAULT_MIN_TIME_US = 50.0
DEFAULT_INJECT = "."  # every benchmark that runs

# The targets of issue 6 (docs/measurement.md).
TARGET_FALSE_ALARMS = 0.01  # at most, of all A/A benchmark comparisons
TARGET_DETECTION: Mapping[float, float] = {0.05: 0.99, 0.02: 0.90}  # at least, >= min time
TARGET_MEDIAN_CV = 0.005  # at most

# Context keys that say what a saved run was for.
ROLE_KEY = "kernelwatch_selftest_role"  # "aa", "control" or "inject"
INDEX_KEY = "kernelwatch_selftest_index"  # the A/A run's number, or the trial's
LEVEL_KEY = "kernelwatch_selftest_level"  # "0.02" (inject runs)
INJECT_KEY = "kernelwatch_selftest_inject"  # the regex (control and inject runs)
ROLES = ("aa", "control", "inject")

TIME = Metric("real_time", higher_is_better=False)
MEASURED = frozenset({Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.SAME, Verdict.UNSURE})
FLAGGED = frozenset({Verdict.REGRESSION, Verdict.IMPROVEMENT})
EXAMPLES = 10  # false alarms and misses listed by name


# --- planning and running ---------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedRun:
    """One collection of the selftest: an A/A run, a control, or a slowed run."""

    role: str
    index: int  # A/A: the run's number; control and inject: the trial's
    level: float | None = None  # inject: the slowdown

    @property
    def file_name(self) -> str:
        if self.role == "inject":
            return f"inject-{level_text(self.level or 0.0)}-{self.index}.json"
        return f"{self.role}-{self.index}.json"

    def inject_arg(self, regex: str) -> str | None:
        """The harness flag of this run (None for A/A: a run exactly as `run` makes it)."""
        if self.role == "aa":
            return None
        fraction = "0" if self.role == "control" else level_text(self.level or 0.0)
        return f"--kernelwatch_inject={regex}:{fraction}"

    def context(self, regex: str) -> dict[str, str]:
        keys = {ROLE_KEY: self.role, INDEX_KEY: str(self.index)}
        if self.role != "aa":
            keys[INJECT_KEY] = regex
        if self.role == "inject":
            keys[LEVEL_KEY] = level_text(self.level or 0.0)
        return keys

    @property
    def label(self) -> str:
        if self.role == "aa":
            return f"A/A run {self.index}"
        if self.role == "control":
            return f"trial {self.index}: control"
        return f"trial {self.index}: {level_text(self.level or 0.0, percent=True)} slower"


def level_text(level: float, percent: bool = False) -> str:
    """0.02 -> "0.02" (or "2%"): short and exact enough for file names and flags."""
    return f"{level * 100:g}%" if percent else f"{level:g}"


def plan(aa_runs: int, trials: int, levels: Sequence[float]) -> list[PlannedRun]:
    """The runs, interleaved (A/A run k, then trial k's control and slowed runs) so that drift
    of the machine falls on all of them alike."""
    runs: list[PlannedRun] = []
    for k in range(1, max(aa_runs, trials) + 1):
        if k <= aa_runs:
            runs.append(PlannedRun("aa", k))
        if k <= trials:
            runs.append(PlannedRun("control", k))
            runs += [PlannedRun("inject", k, level) for level in levels]
    return runs


@dataclass(frozen=True)
class SavedRun:
    """A run of the selftest as saved: its role and its result document."""

    role: str
    index: int
    level: float | None
    inject: str | None
    path: Path
    document: Mapping[str, Any]

    @property
    def seconds(self) -> float | None:
        text = (self.document.get("context") or {}).get("kernelwatch_run_seconds")
        try:
            return float(str(text))
        except ValueError:
            return None

    @property
    def benchmarks(self) -> int:
        return len({_row_name(r) for r in self.document.get("benchmarks", [])})


def _row_name(row: Any) -> str:
    if not isinstance(row, dict):
        return ""
    return str(row.get("run_name") or row.get("name"))


def classify(path: Path, document: Any) -> SavedRun | None:
    """The selftest run a result document is, from its context; None for any other file."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        return None
    context = document.get("context")
    if not isinstance(context, dict) or context.get(ROLE_KEY) is None:
        return None
    role = context.get(ROLE_KEY)
    try:
        index = int(context.get(INDEX_KEY, ""))
        level = float(context[LEVEL_KEY]) if role == "inject" else None
    except (KeyError, TypeError, ValueError):
        raise InputError(
            f"{path}: a selftest run with a damaged {INDEX_KEY} or {LEVEL_KEY}"
        ) from None
    if role not in ROLES:
        raise InputError(f"{path}: unknown selftest role {role!r} ({ROLE_KEY})")
    if index < 1:
        raise InputError(f"{path}: bad selftest index {index} ({INDEX_KEY}; must be 1 or more)")
    if level is not None and not 0 < level < 10:
        raise InputError(
            f"{path}: bad slowdown level {context[LEVEL_KEY]!r} ({LEVEL_KEY}; must be a "
            "fraction above 0 and below 10)"
        )
    inject = context.get(INJECT_KEY)
    return SavedRun(role, index, level, str(inject) if inject else None, path, document)


def load_runs(folder: Path) -> list[SavedRun]:
    """Every selftest run saved in `folder` (its *.json files; others are passed over)."""
    if not folder.is_dir():
        raise InputError(f"--from {folder}: no such directory")
    runs: list[SavedRun] = []
    seen: dict[tuple[str, int, float | None], Path] = {}
    for path in sorted(folder.glob("*.json")):
        found = classify(path, read_json(path))
        if found is None:
            continue
        key = (found.role, found.index, found.level)
        if key in seen:
            raise InputError(f"{path}: the same selftest run as {seen[key]}")
        seen[key] = path
        runs.append(found)
    if not runs:
        raise InputError(
            f"--from {folder}: holds no selftest runs (result files whose context has "
            f"{ROLE_KEY}); make them with kernelwatch selftest --out {folder}"
        )
    return runs


@dataclass(frozen=True)
class Collected:
    """What run_all left in the folder: the saved runs, and how many planned runs are still
    to be made (a --time-budget ran out)."""

    runs: list[SavedRun]
    missing: int = 0


def run_all(
    planned: Sequence[PlannedRun],
    jobs: Sequence[runner.Job],
    settings: runner.RunSettings,
    out_dir: Path,
    *,
    inject: str,
    resume: bool,
    progress: runner.Progress,
    context: Mapping[str, str],
    time_budget: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Collected:
    """Make the planned runs, each saved to out_dir as soon as it is done (a run interrupted
    later loses nothing); with `resume`, runs already saved there are kept. With a
    `time_budget` (seconds), no run is started that would likely end past it (judged by the
    longest run so far); at least one is always made."""
    earlier = {p.name for p in out_dir.glob("*.json")} if out_dir.is_dir() else set()
    ours = {p.file_name for p in planned}
    if earlier & ours and not resume:
        raise InputError(
            f"--out {out_dir}: already holds selftest runs ({min(earlier & ours)}, ...): "
            "pass --resume to finish that selftest, or name another --out"
        )
    started = clock()
    longest = 0.0
    made = 0
    saved: list[SavedRun] = []
    for number, run in enumerate(planned, 1):
        path = out_dir / run.file_name
        if path.name in earlier:
            saved.append(_resumed(path, run, inject, context))
            progress.say(f"kernelwatch: selftest: kept {path} ({run.label})")
            continue
        if time_budget is not None and made and clock() - started + longest > time_budget:
            missing = sum(1 for p in planned[number - 1 :] if p.file_name not in earlier)
            progress.say(
                f"kernelwatch: selftest: --time-budget {time_budget:g} s: {missing} run(s) "
                f"left (about {longest:.0f} s each); run again with --resume"
            )
            return Collected(saved, missing)
        flag = run.inject_arg(inject)
        run_settings = settings
        if flag is not None:
            run_settings = _with_args(settings, flag)
        before = clock()
        suite = runner.run_suite(
            jobs,
            run_settings,
            progress=progress,
            label=f"selftest {number}/{len(planned)}, {run.label}",
            context={
                **context,
                "kernelwatch_run_purpose": f"selftest {run.label}",
                **run.context(inject),
            },
        )
        write_json_atomic(path, suite.document, make_parents=True)
        made += 1
        longest = max(longest, clock() - before)
        progress.say(
            f"kernelwatch: selftest {number}/{len(planned)}: wrote {path} ({run.label}, "
            f"{suite.seconds:.0f} s)"
        )
        saved.append(classify(path, suite.document) or _impossible(path))
    return Collected(saved)


def _with_args(settings: runner.RunSettings, flag: str) -> runner.RunSettings:
    return dataclasses.replace(settings, extra_args=(*settings.extra_args, flag))


def _resumed(path: Path, run: PlannedRun, inject: str, context: Mapping[str, str]) -> SavedRun:
    found = classify(path, read_json(path))
    if found is None or (found.role, found.index, found.level) != (run.role, run.index, run.level):
        raise InputError(
            f"{path}: not the selftest run {run.label}; remove it or use another --out"
        )
    theirs = found.document.get("context") or {}
    if run.role != "aa" and found.inject != inject:
        raise InputError(f"{path}: made with --inject {found.inject!r}, not {inject!r}")
    if theirs.get("kernelwatch_filter", "") != context.get("kernelwatch_filter", ""):
        raise InputError(
            f"{path}: made with --filter {theirs.get('kernelwatch_filter')!r}, not "
            f"{context.get('kernelwatch_filter')!r}"
        )
    return found


def _impossible(path: Path) -> SavedRun:
    raise InputError(f"{path}: the run just written carries no selftest role")


# --- analysis -----------------------------------------------------------------------------------


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

    @property
    def missed(self) -> list[TargetCheck]:
        return [t for t in self.targets if not t.met]

    @property
    def exit_status(self) -> int:
        return 1 if self.missed else 0


def family_of(name: str) -> str:
    return name.split("/", 1)[0]


def analyse(
    runs: Sequence[SavedRun],
    settings: Settings,
    *,
    min_time_us: float = DEFAULT_MIN_TIME_US,
    only: re.Pattern[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Analysis:
    """The selftest's figures from saved runs; `only` restricts every comparison to the
    benchmarks whose names it matches (as if only those had run)."""
    notes: list[str] = []
    sides: dict[Path, ResultSet] = {}

    def side(run: SavedRun) -> ResultSet:
        found = sides.get(run.path)
        if found is None:
            document = run.document
            if only is not None:
                names = {_row_name(r) for r in document.get("benchmarks", [])}
                document = restrict(document, {n for n in names if only.search(n)})
                if not document["benchmarks"]:
                    raise InputError(f"{run.path}: --filter {only.pattern!r} matches none of it")
            found = sides[run.path] = from_documents(str(run.path), [document])
        return found

    def judged(base: SavedRun, cont: SavedRun) -> list[Comparison]:
        if progress:
            progress(f"comparing {base.path.name} with {cont.path.name}")
        report = compare(side(base), side(cont), TIME, settings)
        skipped = [c for c in report.comparisons if c.verdict not in MEASURED]
        if skipped:
            notes.append(
                f"{base.path.name} vs {cont.path.name}: {len(skipped)} benchmark(s) not "
                f"measured on both sides (first: {skipped[0].name}, {skipped[0].verdict.value})"
            )
        return [c for c in report.comparisons if c.verdict in MEASURED]

    min_ns = min_time_us * 1e3
    aa = sorted((r for r in runs if r.role == "aa"), key=lambda r: r.index)
    false_all, false_long, unsure = Rate(), Rate(), Rate()
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
                false_all += one
                unsure += Rate(int(c.verdict is Verdict.UNSURE), 1)
                median = c.baseline.median if c.baseline else None
                if median is not None and median >= min_ns:
                    false_long += one
                by_family[family_of(c.name)] += one
                if flagged and len(examples) < EXAMPLES:
                    examples.append(_example(where, c))

    detections = _detections(runs, judged, min_ns, settings.rules, notes)
    figure_runs = aa or [r for r in runs if r.role == "control"]
    figures, cvs, cvs_long = _figures([side(r) for r in figure_runs], min_ns)
    times = tuple(
        RunTime(
            r.path.name,
            r.role,
            r.seconds,
            r.benchmarks,
            _int((r.document.get("context") or {}).get("kernelwatch_processes"), 1),
        )
        for r in sorted(runs, key=lambda r: r.path.name)
    )
    median_cv = float(np.median(cvs)) if cvs else None
    median_cv_long = float(np.median(cvs_long)) if cvs_long else None
    targets = _targets(false_all, pairs, detections, median_cv, min_time_us)
    return Analysis(
        settings=settings,
        min_time_us=min_time_us,
        runs=len(runs),
        aa_runs=len(aa),
        aa_pairs=pairs,
        false_alarms=false_all,
        false_alarms_long=false_long,
        false_alarms_by_family=dict(sorted(by_family.items())),
        unsure=unsure,
        false_alarm_examples=tuple(examples),
        detections=detections,
        figures=figures,
        median_cv=median_cv,
        median_cv_long=median_cv_long,
        times=times,
        targets=targets,
        notes=tuple(notes),
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
                if not pattern.search(c.name):
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
    """Which benchmarks the run slowed: the harness matched the regex against the names."""
    regex = run.inject or DEFAULT_INJECT
    try:
        return re.compile(regex)
    except re.error as exc:
        raise InputError(
            f"{run.path}: injection regex {regex!r} is not a Python regex: {exc}"
        ) from None


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
    except (TypeError, ValueError):
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
                    else "not injected"
                    if not found
                    else "no injected benchmark that long"
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
