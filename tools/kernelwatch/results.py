"""Google Benchmark results as typed, columnar data (loading.py reads them from files).

A benchmark is identified by its `run_name` (its `name` in files too old to have one), which
groups its repetitions; each repetition remembers which file (process) it came from, because
the spread between processes is the noise that matters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.errors import InputError, shortened

# A row's two times (Google Benchmark's keys), in its time_unit; read in ns.
TIME_KEYS = ("real_time", "cpu_time")
# The values a time (ns) or a counter may take: beyond, no measurement, and their statistics
# (squares, ratios between the sides) overflow a float: 1e308 ns gave an infinite variance,
# and `report` an internal error drawing it.
MEASURABLE = (1e-100, 1e100)
# The harness's per-repetition counter: relative width of the 95 % confidence interval of the
# median of that repetition's samples (0.005 = 0.5 %). kernelwatch/noise.py turns it into a noise.
NOISE_COUNTER = "noise"
# The context key the harness records its noise target under: a file without it is another
# program's, and its counter named `noise` is that program's own (say, a noise level of 50,
# read as an interval 5,000 % wide, hid every slowdown behind its limit).
NOISE_TARGET_KEY = "kernelwatch_noise_target"
# The row key `kernelwatch run` adds to every row of a merged result: which of the binary's
# processes (1, 2, ...) the repetition came from. Not a counter: it groups values by process.
PROCESS_KEY = "kernelwatch_process"
# A baseline folder's result: as JSON text, or compressed (`baseline update --compress`).
BASELINE_RESULT = "result.json"
BASELINE_RESULT_PACKED = "result.json.gz"
# An nvbench file read as this schema (nvbench.py): where its statistics came from, in the
# context (sample files, or the summaries alone), the sample files it could not use, and a
# summary row's counters that the comparison judges it by (the cold GPU mean in ns, the sample
# count, the samples' relative standard deviation).
NVBENCH_SAMPLES_KEY = "nvbench_samples"
NVBENCH_SUMMARIES_ONLY = "summaries"
NVBENCH_SAMPLES_LOST_KEY = "nvbench_samples_lost"
NVBENCH_MEAN_KEY = "gpu_time_mean"
NVBENCH_SAMPLES_COUNTER = "samples"
NVBENCH_CV_COUNTER = "sample_cv"
# The harness's row counter of a host-bound benchmark (1: its time includes host work;
# hostbound.py), and the context key of a `run --gpus` result that left the host-bound
# benchmarks to another GPU of its host: its value names that GPU (the result covers a part of
# the suite: baseline.ran_a_part).
HOST_BOUND_COUNTER = "host_bound"
# The harness's row counter of a family's reference (1: kernelwatch::mark_reference), the one
# benchmark the report's trends follow for its family and its figure draws the others against.
REFERENCE_COUNTER = "reference"
HOST_BOUND_ON_KEY = "kernelwatch_host_bound_on"
# Context keys of a result that lacks what failed processes would have measured (runner/).
FAILED_KEY = "kernelwatch_failed_processes"
NO_RESULT_KEY = "kernelwatch_no_result"


def crash_list(context: Mapping[str, Any]) -> tuple[list[str], list[str]] | None:
    """The failure lines and the benchmarks without a result that a context records, where both
    are lists of non-empty strings, neither empty (as `run` and `ab` write them); else None. A
    file with no rows is a result only with these: a round of `ab` none of whose processes
    finished, kept so that the crash does not vanish from its folder (loading.py)."""
    found: list[Any] = [context.get(FAILED_KEY), context.get(NO_RESULT_KEY)]
    for value in found:
        if not isinstance(value, list) or not value:
            return None
        if not all(isinstance(v, str) and v for v in value):
            return None
    lines, names = found
    return list(lines), list(names)


# Counters where a larger value is better, recognised by name; others need a direction flag.
_HIGHER_SUFFIXES = ("_per_second", "_fraction")
_LOWER_NAMES = frozenset({"real_time", "cpu_time", "allocs_per_iter", "max_bytes_used"})


@dataclass(frozen=True)
class Metric:
    """What is compared: a time (`real_time`, `cpu_time`) or a counter, and its good direction."""

    key: str
    higher_is_better: bool

    @property
    def is_time(self) -> bool:
        return self.key in TIME_KEYS


def resolve_metric(name: str, higher_is_better: bool | None = None) -> Metric:
    """Map a --metric value to a Metric; `time` means `real_time` (the manual/GPU time)."""
    key = "real_time" if name in ("time", "") else name
    if higher_is_better is not None:
        if key in TIME_KEYS and higher_is_better:
            raise InputError(f"--metric {name}: a time is always lower-is-better")
        return Metric(key, higher_is_better)
    if key in _LOWER_NAMES:
        return Metric(key, False)
    if key.endswith(_HIGHER_SUFFIXES):
        return Metric(key, True)
    raise InputError(
        f"--metric {shortened(name)}: unknown direction for this counter; "
        "pass --higher-is-better or --lower-is-better"
    )


def harness_noise(context: Mapping[str, Any]) -> bool:
    """Whether a result's `noise` counter is the harness's (NOISE_COUNTER)."""
    return context.get(NOISE_TARGET_KEY) is not None


def gpu_model(context: Mapping[str, Any]) -> str | None:
    """The GPU model a result was measured on (name + compute capability), if recorded."""
    name = context.get("gpu_name")
    if not name:
        return None
    capability = context.get("gpu_compute_capability")
    return f"{name} (sm {capability})" if capability else str(name)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of one side, as a typed view: its values per metric key (times in ns)."""

    name: str
    values: Mapping[str, np.ndarray]
    sources: np.ndarray  # index into ResultSet.paths of each value's file
    processes: np.ndarray  # process of each value: a number per (file, kernelwatch_process)
    from_aggregates: bool = False  # values are per-file median/mean aggregates
    error: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class ResultSet:
    """One side of a comparison (a file, or a directory of files), as columns: benchmark k owns
    rows starts[k] .. starts[k] + counts[k] of every column, of `sources` and of `processes`.
    A value's process is its file's, or, in a file merged by `kernelwatch run` from several
    processes, the process named by its row's `kernelwatch_process` key."""

    label: str
    paths: tuple[Path, ...]
    context: Mapping[str, Any]
    names: tuple[str, ...]
    starts: np.ndarray
    counts: np.ndarray
    from_aggregates: np.ndarray
    sources: np.ndarray
    processes: np.ndarray
    columns: Mapping[str, np.ndarray]
    gaps: Mapping[str, np.ndarray]  # bool per row, for columns absent from some rows
    errors: Mapping[str, str]
    skipped: Mapping[str, str]
    notes: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)  # Google Benchmark's `label`
    registered: Mapping[str, int] = field(default_factory=dict)  # `family_index`: gbench.py
    index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {name: k for k, name in enumerate(self.names)})

    @classmethod
    def empty(cls, label: str, paths: tuple[Path, ...] = ()) -> ResultSet:
        """A side that measured nothing (`ab` when every binary was built identically)."""
        none = np.zeros(0, dtype=np.int64)
        return cls(label, paths, {}, (), none, none, none.astype(bool), none, none, {}, {}, {}, {})

    def host_bound(self, k: np.ndarray) -> np.ndarray:
        """Which of the benchmarks `k` (indices) have a row with HOST_BOUND_COUNTER = 1; a row
        whose value is neither 1 nor 0 is refused, as hostbound.flag refuses it (one reading for
        every command; a true or a text was refused as the file was read: gbench._check_host_bound).
        """
        column = self.columns.get(HOST_BOUND_COUNTER)
        if column is None or not len(k):
            return np.zeros(len(k), dtype=bool)
        gap = self.gaps.get(HOST_BOUND_COUNTER)
        bad = (column != 0) & (column != 1)
        if gap is not None:
            bad &= ~gap
        if bad.any():
            from kernelwatch import hostbound  # (it imports this module)

            row = int(np.argmax(bad))
            name = self.names[int(np.searchsorted(self.starts, row, side="right") - 1)]
            hostbound.flag(float(column[row]), str(self.paths[self.sources[row]]), name)
        flagged = np.nan_to_num(column) == 1
        cumulative = np.concatenate([[0], np.cumsum(flagged)])
        found: np.ndarray = (
            cumulative[self.starts[k] + self.counts[k]] - cumulative[self.starts[k]]
        ) > 0
        return found

    def check_counters(self) -> None:
        """Refuse a counter beyond ±MEASURABLE's largest (infinite, or so large its mean
        overflows: a bytes_per_second of 1.7e308 took `report` there, warnings on stderr).
        Zero, negative and NaN values are a counter's own (NaN is what a gap holds); a chosen
        metric is held to more (metric_column)."""
        high = MEASURABLE[1]
        for key, column in self.columns.items():
            if key in TIME_KEYS:
                continue
            bad = np.abs(column) > high  # (NaN is not)
            if bad.any():
                row = int(np.argmax(bad))
                name = self.names[int(np.searchsorted(self.starts, row, side="right") - 1)]
                raise InputError(
                    f"{self.paths[self.sources[row]]}: {name}: counter {key} is "
                    f"{float(column[row])!r} (a counter must lie within ±{high:g})"
                )

    def subset(self, keep: np.ndarray, context: Mapping[str, Any]) -> ResultSet:
        """The rows where `keep` (a bool per row) holds, with another context; benchmarks left
        without rows keep a count of 0 (as skipped ones have)."""
        cumulative = np.concatenate([[0], np.cumsum(keep.astype(np.int64))])
        counts = cumulative[self.starts + self.counts] - cumulative[self.starts]
        return ResultSet(
            self.label,
            self.paths,
            context,
            self.names,
            np.cumsum(counts) - counts,
            counts,
            self.from_aggregates,
            self.sources[keep],
            self.processes[keep],
            {k: v[keep] for k, v in self.columns.items()},
            {k: v[keep] for k, v in self.gaps.items()},
            self.errors,
            self.skipped,
            self.notes,
            registered=self.registered,
        )

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.index

    def benchmark(self, name: str) -> Benchmark:
        k = self.index[name]
        rows = slice(self.starts[k], self.starts[k] + self.counts[k])
        values = {}
        for key, column in self.columns.items():
            gap = self.gaps.get(key)
            if gap is None or not gap[rows].any():
                values[key] = column[rows]
        return Benchmark(
            name,
            values,
            self.sources[rows],
            self.processes[rows],
            bool(self.from_aggregates[k]),
            self.errors.get(name),
            self.skipped.get(name),
        )

    def metric_column(self, metric: Metric) -> tuple[np.ndarray, np.ndarray] | None:
        """The metric's column and a per-row "present" mask, validated (finite, positive);
        None when no row has the metric."""
        column = self.columns.get(metric.key)
        if column is None:
            return None
        gap = self.gaps.get(metric.key)
        present = ~gap if gap is not None else np.ones(len(column), dtype=bool)
        low, high = MEASURABLE
        bad = present & ~((column >= low) & (column <= high))  # (NaN is neither)
        if bad.any():
            row = int(np.argmax(bad))
            k = int(np.searchsorted(self.starts, row, side="right") - 1)
            value = column[row]
            unit = " ns" if metric.is_time else ""  # times are in ns by now
            shown = "NaN" if np.isnan(value) else repr(float(value)) + unit
            raise InputError(
                f"{self.paths[self.sources[row]]}: {self.names[k]}: {metric.key} is {shown} "
                f"(must be a positive finite number, {low:g} to {high:g}{unit})"
            )
        return column, present


def check_measured(result: ResultSet) -> None:
    """Refuse a crash-only result (crash_list, no rows) where a command keeps or exports what a
    run measured: there is nothing to keep, and kept it would be a run of no benchmark."""
    crashed = crash_list(result.context) if not len(result) else None
    if crashed is not None:
        # (a line from the file: an escape sequence in it would act on the terminal)
        line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in crashed[0][0])
        raise InputError(
            f"{result.label}: holds no benchmark results: every benchmark process of its run "
            f"failed ({FAILED_KEY}: {shortened(line, 400)}); measure it again"
        )


def check_times(result: ResultSet) -> None:
    """What compare checks of a result it compares by time, for the commands that keep one
    (history ingest, baseline update): something measured, and its times (check_time_values).
    Unchecked, the history dropped such a value with no word (it keeps finite values only)."""
    check_measured(result)
    check_time_values(result)


def check_time_values(result: ResultSet) -> None:
    """real_time MEASURABLE once in ns (1e308 us is finite in the file, inf in ns), cpu_time
    finite: as compare reads them (`merge` wrote a file every other command refused)."""
    result.metric_column(resolve_metric("time"))
    column, gap = result.columns.get("cpu_time"), result.gaps.get("cpu_time")
    if column is None:
        return
    bad = ~np.isfinite(column) if gap is None else ~np.isfinite(column) & ~gap
    if bad.any():
        row = int(np.argmax(bad))
        k = int(np.searchsorted(result.starts, row, side="right") - 1)
        raise InputError(
            f"{result.paths[result.sources[row]]}: {result.names[k]}: cpu_time is "
            f"{float(column[row])!r} ns (must be a finite number >= 0)"
        )


# What a result's context says about how it was made, where that decides what it may be used
# for: a run slowed on purpose (the harness's --kernelwatch_inject, the selftest's control and
# slowed runs) measures the selftest, not the code, and is never a baseline; a run anchored
# (`run --anchor`, anchor.py) was judged against the baseline's commit measured on its own card,
# not against the committed baseline's numbers.


# The harness records --kernelwatch_inject=REGEX:FRACTION under this key (bench/harness
# context.cpp); the selftest records its runs' roles (selftest.ROLE_KEY, LEVEL_KEY).
HARNESS_INJECT_KEY = "kernelwatch_inject"
SELFTEST_ROLE_KEY = "kernelwatch_selftest_role"
SELFTEST_LEVEL_KEY = "kernelwatch_selftest_level"
# `run --anchor` records here whether and how its verdict was anchored (one phrase).
ANCHOR_KEY = "kernelwatch_anchor"


def slowed_on_purpose(context: Mapping[str, Any]) -> str | None:
    """How the run was slowed down on purpose (one phrase), or None for an ordinary run."""
    inject = context.get(HARNESS_INJECT_KEY)
    if inject not in (None, ""):
        return f"made with --kernelwatch_inject={inject}"
    role = context.get(SELFTEST_ROLE_KEY)
    if role in ("inject", "control"):
        level = context.get(SELFTEST_LEVEL_KEY)
        what = f"a selftest {role} run" + (f" (slowed by {level})" if level else "")
        return what
    return None


def anchoring(context: Mapping[str, Any]) -> str | None:
    """How the run's verdict was anchored ("anchored on <commit> (...)"), or why it was not
    although it should have been ("not anchored: ..."); None where anchoring was not wanted."""
    phrase = context.get(ANCHOR_KEY)
    return phrase if isinstance(phrase, str) and phrase else None


# `run` names here the other processes it saw computing on its GPU (runner/occupants.py).
OCCUPANTS_KEY = "kernelwatch_other_processes"  # ["pid 1234: /usr/bin/python3", ...]


def occupied(context: Mapping[str, Any]) -> str | None:
    """What a result's context says of other processes on its GPU, in words; None: nothing."""
    found = context.get(OCCUPANTS_KEY)
    if not found:
        return None
    named = list(map(str, found if isinstance(found, list) else [found]))
    # (the harness names each benchmark it saw them during: a long run's dozens read as three)
    more = f", and {len(named) - 3} more" if len(named) > 4 else ""
    listed = ", ".join(named[:3] if more else named)
    return f"measured while other processes computed on its GPU ({listed}{more})"


# What `run` established of a result beyond its numbers, which any command that judges the result
# against a baseline of the same commit reads as run did (verdict.as_run_judged), each as
# {"commit": <the baseline's, 40 hex>, "benchmarks": [names]}: the benchmarks whose binaries its
# build made identically to that commit's (`run --anchor`, ab.py's rule), and the regressions
# its confirming re-runs did not confirm.
IDENTICAL_KEY = "kernelwatch_built_identically"
UNCONFIRMED_KEY = "kernelwatch_not_confirmed"
RECORD_KEYS = (IDENTICAL_KEY, UNCONFIRMED_KEY)


def run_record(
    context: Mapping[str, Any], key: str, label: str
) -> tuple[str, frozenset[str]] | None:
    """The commit and the benchmarks of the record `key` in the context of the result `label`;
    None where it has none. A record that is not one `run` writes is refused (one line): it
    decides verdicts."""
    record = context.get(key)
    if record is None:
        return None
    names = record.get("benchmarks") if isinstance(record, dict) else None
    commit = record.get("commit") if isinstance(record, dict) else None
    if (
        not isinstance(commit, str)
        or not isinstance(names, list)
        or not all(isinstance(name, str) for name in names)
    ):
        raise InputError(f"{label}: context {key} is not a commit and a list of benchmark names")
    return commit, frozenset(names)


def recorded_for(
    context: Mapping[str, Any], key: str, commit: object, label: str
) -> frozenset[str]:
    """The benchmarks of the record `key` made against `commit` (a baseline's
    kernelwatch_git_commit): none where it names another commit or there is none."""
    record = run_record(context, key, label)
    if record is None or not record[0] or record[0] != commit:
        return frozenset()
    return record[1]


def joined_record(
    parts: Sequence[tuple[str, Mapping[str, Any]]], key: str
) -> dict[str, Any] | None:
    """The record `key` of the parts of one run [(label, context)] as one: every part's
    benchmarks, where all that have one name the same commit (a part without one recorded none);
    None where none has one, or parts judged against two commits (no baseline is both's)."""
    records = [r for label, context in parts if (r := run_record(context, key, label))]
    commits = {commit for commit, _ in records}
    if len(commits) != 1:
        return None
    names = sorted({name for _, held in records for name in held})
    return {"commit": commits.pop(), "benchmarks": names}


# Checking that two results were measured in comparable environments (their `context`).


# Context keys that change timings without changing the GPU model: differences are warned about.
WATCHED_KEYS: Mapping[str, str] = {
    "gpu_driver_version": "driver",
    "cuda_driver_api_version": "CUDA driver API",
    "cuda_runtime_version": "CUDA runtime",
    "gpu_sm_clock_khz": "SM clock (kHz)",
    "gpu_memory_clock_khz": "memory clock (kHz)",
    "gpu_ecc": "ECC",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_build_type": "build type",
}


# The software a result was measured with: a baseline file (a partial update keeps the
# baseline's) and a merged run (its shards) each hold one. Google Benchmark's own build type is
# its `library_build_type` (a debug library adds its checks to every repetition's host time).
MEASURING_KEYS: Mapping[str, str] = {
    "gpu_driver_version": "driver",
    "cuda_runtime_version": "CUDA runtime",
    "cuda_driver_api_version": "CUDA driver API",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_build_type": "build type",
    "library_build_type": "Google Benchmark library build type",
}

# The harness measures each run's device copy ceiling (GB/s). Two cards of one model, or one
# card at another memory clock, differ there, and bandwidth-bound times with it; beyond this
# relative difference the comparison says how to compare on equal terms.
CEILING_KEY = "kernelwatch_copy_ceiling_bytes_per_second"
CEILING_METRIC = "ceiling_fraction"
CEILING_TOLERANCE = 0.01


def check_environment(
    baseline: Mapping[str, Any],
    contender: Mapping[str, Any],
    allow_gpu_mismatch: bool,
    metric_key: str | None = None,
) -> tuple[list[str], list[str]]:
    """Return (warnings, notes) for two contexts; refuse different GPU models unless allowed."""
    warnings: list[str] = []
    notes: list[str] = []
    base_gpu, cont_gpu = gpu_model(baseline), gpu_model(contender)
    if base_gpu is None and cont_gpu is None:
        notes.append("no GPU recorded in either context: environment check skipped")
        return warnings, notes
    if base_gpu is None or cont_gpu is None:
        side = "baseline" if base_gpu is None else "contender"
        warnings.append(f"the {side} records no GPU; cannot check that the GPUs match")
        return warnings, notes
    if base_gpu != cont_gpu:
        message = (
            f"different GPU models: baseline {shortened(base_gpu)}, contender {shortened(cont_gpu)}"
        )
        if not allow_gpu_mismatch:
            raise InputError(f"{message} (pass --allow-gpu-mismatch to compare anyway)")
        warnings.append(message)
    for key, label in WATCHED_KEYS.items():
        if key in baseline and key in contender and str(baseline[key]) != str(contender[key]):
            warnings.append(
                f"different {label}: baseline {shortened(str(baseline[key]))}, contender "
                f"{shortened(str(contender[key]))}"
            )
    _check_ceiling(baseline, contender, metric_key, warnings, notes)
    return warnings, notes


def _check_ceiling(
    baseline: Mapping[str, Any],
    contender: Mapping[str, Any],
    metric_key: str | None,
    warnings: list[str],
    notes: list[str],
) -> None:
    try:
        base, cont = float(baseline[CEILING_KEY]) * 1e-9, float(contender[CEILING_KEY]) * 1e-9
    except (KeyError, TypeError, ValueError):
        return
    if not (base > 0 and cont > 0):
        return
    change = cont / base - 1.0
    said = f"copy ceiling {change * 100:+.1f}% (baseline {base:g} GB/s, contender {cont:g} GB/s)"
    if metric_key == CEILING_METRIC:
        notes.append(f"{said}: bandwidth compared as a fraction of each run's own ceiling")
    elif abs(change) > CEILING_TOLERANCE:
        warnings.append(
            f"{said}: the cards differ, and bandwidth-bound times with them; "
            f"--metric {CEILING_METRIC} compares bandwidth as a fraction of each run's ceiling"
        )
