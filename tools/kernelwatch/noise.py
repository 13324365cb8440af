"""Each benchmark's noise: how much its median moves from one run to the next, as a fraction.

The noise of a benchmark is the largest of

* between processes: the standard deviation of its per-process medians over their median
  (a result of `kernelwatch run --processes K`, or a folder of runs). Repetitions inside one
  process understate the variation between runs (shared/README.md: 0.01-0.04 % within a
  process, up to 3.2 % between processes), so this is the estimate that matters;
* within the run: the robust coefficient of variation of its repetitions (1.4826 MAD / median);
* the harness's `noise` counter (the relative width of the 95 % confidence interval of one
  repetition's median) converted to a standard deviation: width / (2 x 1.96);
* its group's: the median noise of the benchmarks of its group (its name without the
  parameters, `transpose/diagonal_rows` for `transpose/diagonal_rows/rows:8192/...`) when the
  group has at least MIN_GROUP of them. Two processes give the spread between processes one
  degree of freedom, so one benchmark's estimate can come out far too small by chance; its
  siblings, measured alike, guard against that.

`kernelwatch baseline update` stores the result in baselines/<slug>/noise.json; `compare` uses
the stored value (else computes it the same way) as the floor of each benchmark's limit.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json
from kernelwatch.results import NOISE_COUNTER, Metric, ResultSet
from kernelwatch.stats import MAD_TO_SIGMA

NOISE_FILE = "noise.json"
NOISE_SCHEMA = 1
# A group's median guards its members only when there are enough of them to have a median.
MIN_GROUP = 3
# The counter is a 95 % interval's width; a standard deviation is that over 2 x 1.96.
COUNTER_TO_SIGMA = 1.0 / (2.0 * NormalDist().inv_cdf(0.975))
TIME = Metric("real_time", higher_is_better=False)

# Name components that are parameters or Google Benchmark's suffixes, not the kernel variant.
_PARAMETER = re.compile(r"^(\d+(\.\d+)?|[^/]*:[^/]*|manual_time|real_time|process_time)$")


@dataclass(frozen=True)
class Noise:
    """Noise estimates per benchmark, aligned with `names`; NaN where a source is missing."""

    names: tuple[str, ...]
    noise: np.ndarray  # the largest of the others (0 when none is known)
    between: np.ndarray  # spread of per-process medians (NaN with one process)
    within: np.ndarray  # robust CV of the repetitions (NaN with fewer than 3)
    counter: np.ndarray  # the `noise` counter as a standard deviation (NaN without it)
    group: np.ndarray  # median noise of the benchmark's group (NaN for small groups)
    processes: np.ndarray  # processes the values came from
    repetitions: np.ndarray  # values

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.noise.tolist()))


def group_of(name: str) -> str:
    """The benchmark's variant: its name without parameters (`key:value`, numbers) and without
    Google Benchmark's time suffixes."""
    kept = [part for part in name.split("/") if not _PARAMETER.match(part)]
    return "/".join(kept) or name


def measure(
    result: ResultSet,
    metric: Metric = TIME,
    which: np.ndarray | None = None,
    *,
    pool: bool = True,
) -> Noise:
    """The noise of the benchmarks `which` (indices into result; default all with values)."""
    if which is None:
        which = np.flatnonzero(result.counts > 0)
    which = np.asarray(which, dtype=np.int64)
    names = tuple(result.names[k] for k in which.tolist())
    column = result.metric_column(metric)
    nan = np.full(len(which), np.nan)
    if column is None or not len(which):
        zeros = np.zeros(len(which))
        return Noise(names, zeros, nan, nan.copy(), nan.copy(), nan.copy(), zeros, zeros)
    values = column[0]
    rows, owner = _rows(result.starts[which], result.counts[which])
    own_values = values[rows]
    processes = result.processes[rows]

    median = _grouped_median(own_values, owner, len(which))
    with np.errstate(invalid="ignore", divide="ignore"):
        mad = _grouped_median(np.abs(own_values - median[owner]), owner, len(which))
        counts = np.bincount(owner, minlength=len(which))
        within = np.where(counts >= 3, MAD_TO_SIGMA * mad / median, np.nan)
        between, process_count = _between(own_values, owner, processes, median, len(which))

    counter = nan.copy()
    if metric.key == TIME.key and NOISE_COUNTER in result.columns:
        widths = result.columns[NOISE_COUNTER][rows]
        good = np.isfinite(widths) & (widths >= 0)
        if good.any():
            counter = COUNTER_TO_SIGMA * _grouped_median(widths[good], owner[good], len(which))

    own = np.nan_to_num(np.fmax(np.fmax(between, within), counter), nan=0.0)
    group = _group_medians(names, own) if pool else nan.copy()
    noise = np.fmax(own, group)
    return Noise(names, noise, between, within, counter, group, process_count, counts)


def between_processes(
    result: ResultSet, metric: Metric, which: np.ndarray, values: np.ndarray | None = None
) -> np.ndarray:
    """Only the spread of per-process medians (0 where there is one process)."""
    which = np.asarray(which, dtype=np.int64)
    if not len(which):
        return np.zeros(0)
    if values is None:
        column = result.metric_column(metric)
        if column is None:
            return np.zeros(len(which))
        values = column[0]
    rows, owner = _rows(result.starts[which], result.counts[which])
    own_values = values[rows]
    median = _grouped_median(own_values, owner, len(which))
    with np.errstate(invalid="ignore", divide="ignore"):
        between, _ = _between(own_values, owner, result.processes[rows], median, len(which))
    return np.where(np.isfinite(between), between, 0.0)


def _rows(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row numbers of benchmarks given by (start, count), and the benchmark (0..B-1) of
    each row."""
    owner = np.repeat(np.arange(len(counts)), counts)
    offsets = np.cumsum(counts) - counts
    rows = np.repeat(starts, counts) + (np.arange(int(counts.sum())) - np.repeat(offsets, counts))
    return rows.astype(np.int64), owner


def _grouped_median(values: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
    """The median of `values` per group (0..size-1); NaN for an empty group."""
    out = np.full(size, np.nan)
    if not len(values):
        return out
    order = np.lexsort((values, groups))
    ordered = values[order]
    counts = np.bincount(groups, minlength=size)
    starts = np.cumsum(counts) - counts
    has = counts > 0
    low = starts + (counts - 1) // 2
    high = starts + counts // 2
    out[has] = (ordered[low[has]] + ordered[high[has]]) / 2.0
    return out


def _between(
    values: np.ndarray, owner: np.ndarray, processes: np.ndarray, median: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per benchmark: standard deviation of its per-process medians over its median (NaN with
    one process), and its number of processes."""
    pairs = owner.astype(np.int64) * (int(processes.max(initial=0)) + 1) + processes
    keys, cell = np.unique(pairs, return_inverse=True)
    cell = cell.reshape(-1)
    cell_median = _grouped_median(values, cell, len(keys))
    cell_owner = keys // (int(processes.max(initial=0)) + 1)
    count = np.bincount(cell_owner, minlength=size)
    mean = np.bincount(cell_owner, weights=cell_median, minlength=size) / np.maximum(count, 1)
    squares = np.bincount(cell_owner, weights=(cell_median - mean[cell_owner]) ** 2, minlength=size)
    sd = np.sqrt(squares / np.maximum(count - 1, 1))
    return np.where(count >= 2, sd / median, np.nan), count


def _group_medians(names: Sequence[str], own: np.ndarray) -> np.ndarray:
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        members.setdefault(group_of(name), []).append(i)
    out = np.full(len(names), np.nan)
    for indices in members.values():
        if len(indices) >= MIN_GROUP:
            out[indices] = float(np.median(own[indices]))
    return out


# --- the stored noise (baselines/<slug>/noise.json) ------------------------------------------


def noise_document(
    noise: Noise, context: Mapping[str, Any], *, keep: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """noise.json's content for a baseline result; `keep`: entries of benchmarks not measured
    again (a partial update), kept as they were."""
    benchmarks: dict[str, Any] = {}
    for i, name in enumerate(noise.names):
        benchmarks[name] = {
            "noise": _round(noise.noise[i]),
            "between_processes": _round(noise.between[i]),
            "within_run": _round(noise.within[i]),
            "counter": _round(noise.counter[i]),
            "group": _round(noise.group[i]),
            "processes": int(noise.processes[i]),
            "repetitions": int(noise.repetitions[i]),
        }
    benchmarks.update(keep or {})
    return {
        "schema_version": NOISE_SCHEMA,
        "metric": TIME.key,
        "commit": context.get("kernelwatch_git_commit"),
        "updated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "method": "largest of: standard deviation of per-process medians / median; robust CV "
        "of the repetitions; noise counter / 3.92; median of its group (docs/measurement.md)",
        "benchmarks": dict(sorted(benchmarks.items())),
    }


def _round(value: float) -> float | None:
    if not math.isfinite(value):
        return None
    return float(f"{value:.4g}")


def read_noise_file(path: Path) -> dict[str, Any]:
    """A noise.json, checked; one InputError line when it is not one."""
    data = read_json(path)
    entries = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or data.get("schema_version") != NOISE_SCHEMA:
        raise InputError(f"{path}: not a kernelwatch noise file (schema {NOISE_SCHEMA})")
    for name, entry in entries.items():
        value = entry.get("noise") if isinstance(entry, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{path}: {name}: noise must be a number")
        if not (0 <= value < 10):
            raise InputError(f"{path}: {name}: noise {value} out of range")
    return data


def stored(path: Path, context: Mapping[str, Any]) -> tuple[dict[str, float], str | None]:
    """The stored noise per benchmark from `path`, and a warning when it was not written with
    the result whose context is given (then nothing is used)."""
    data = read_noise_file(path)
    commit, theirs = data.get("commit"), context.get("kernelwatch_git_commit")
    if commit and theirs and commit != theirs:
        return {}, (
            f"{path} was written for commit {str(commit)[:12]}, the baseline is "
            f"{str(theirs)[:12]}: its noise is not used"
        )
    return {name: float(e["noise"]) for name, e in data["benchmarks"].items()}, None


def stored_beside(
    baseline: Path, context: Mapping[str, Any], path: Path | None = None
) -> tuple[dict[str, float] | None, str | None]:
    """The stored noise of a baseline (`path`, else the noise.json beside it), None when there
    is none; and a warning when the file does not belong to that result."""
    path = path or beside(baseline)
    if path is None:
        return None, None
    found, warning = stored(path, context)
    return found or None, warning


def beside(result_path: Path) -> Path | None:
    """The noise.json of a baseline: beside its result.json, or in the folder given."""
    folder = result_path if result_path.is_dir() else result_path.parent
    candidate = folder / NOISE_FILE
    return candidate if candidate.is_file() else None
