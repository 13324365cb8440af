"""Each benchmark's noise: how much its median moves from one run to the next, as a fraction.

The noise of a benchmark is the largest of

* between processes: the standard deviation of its per-process medians over their median
  (a result of `kernelwatch run --processes K`, or a folder of runs). Repetitions inside one
  process understate the variation between runs (0.01-0.04 % within a process, up to 3.2 %
  between processes: docs/measurement.md, "Where the noise comes from"), so this is the
  estimate that matters;
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

Read top to bottom: what is known of a noise (Noise, LevelNoise, TIME); the runs of a pooled
result (which run a process belongs to, the kind of a card among them); measuring the noise
from a result's values (measure; widest_steps, the widest gap between two processes of a card,
and the floor it gives a side of a few processes: process_floor, floored); the stored noise,
noise.json (written, read, found beside a baseline's result).
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from kernelwatch import kinds, levels
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import check_input_file
from kernelwatch.gbench import read_json
from kernelwatch.levels import Level
from kernelwatch.names import variant as group_of  # a benchmark's group: its variant
from kernelwatch.results import NOISE_COUNTER, Metric, ResultSet, gpu_model, harness_noise
from kernelwatch.stats import MAD_TO_SIGMA

# --- what is known of a noise -----------------------------------------------------------------
#
# What is known of a benchmark's noise: each estimate (Noise) and the spread per level that
# compare uses (LevelNoise); TIME, the metric they describe unless told otherwise.


TIME = Metric("real_time", higher_is_better=False)


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
    # Wider levels (NaN where not measured): the spread of run medians between cards of one
    # host and between hosts, for a result pooled from several runs (levels.RUNS_KEY).
    card: np.ndarray | None = None
    host: np.ndarray | None = None
    cards: int = 1  # runs on distinct cards / hosts the pooled result holds
    hosts: int = 1
    # Within kinds of card (kinds.py): the spread of the run medians around their kind's mean,
    # pooled over kinds; `kind_units`: 1 + its degrees of freedom (runs - kinds).
    kind: np.ndarray | None = None
    kind_units: int = 0

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.noise.tolist()))

    def levels(self) -> LevelNoise:
        """Per level, aligned with `names`; NaN where a level was not measured."""
        nan = np.full(len(self.names), np.nan)
        return LevelNoise(
            self.names,
            self.noise,
            np.isfinite(self.between),
            self.card if self.card is not None else nan,
            self.host if self.host is not None else nan.copy(),
        )


@dataclass(frozen=True)
class LevelNoise:
    """Each benchmark's spread at each level, as relative standard deviations of a run's median.
    `process`: the noise above (always a number); `process_measured`: it includes a spread
    between processes (without one, the within-process spread understates it). `card`, `host`:
    NaN where not measured."""

    names: tuple[str, ...]
    process: np.ndarray
    process_measured: np.ndarray
    card: np.ndarray
    host: np.ndarray
    source: str = "the baseline's stored noise"  # what a report's note calls it

    def take(self, names: Sequence[str]) -> LevelNoise:
        """Aligned with `names`; NaN (not measured) for a name it does not hold."""
        index = {name: i for i, name in enumerate(self.names)}
        k = np.array([index.get(n, -1) for n in names], dtype=np.int64)
        found = k >= 0

        def pick(values: np.ndarray, missing: float) -> np.ndarray:
            out = np.full(len(names), missing, dtype=values.dtype)
            out[found] = values[k[found]]
            return out

        return LevelNoise(
            tuple(names),
            pick(self.process, np.nan),
            pick(self.process_measured, False),
            pick(self.card, np.nan),
            pick(self.host, np.nan),
            self.source,
        )

    def at(self, level: Level) -> np.ndarray:
        """The measured spread at `level`, at least the narrower levels'; NaN where the level
        (or, for the process level, the spread between processes) was not measured."""
        out = np.where(self.process_measured, self.process, np.nan)
        if level is Level.CARD:
            out = np.where(np.isfinite(self.card), np.fmax(self.card, self.process), np.nan)
        if level >= Level.HOST:
            wider = np.fmax(self.host, np.fmax(self.card, self.process))
            out = np.where(np.isfinite(self.host), wider, np.nan)
        return out


# --- the runs of a pooled result --------------------------------------------------------------
#
# The runs of a result pooled from several (levels.RUNS_KEY): which run each process belongs to,
# the contender card's kind among them, and the result cut down to some of its runs.


def row_units(
    result: ResultSet,
) -> tuple[np.ndarray, list[str | None], list[str | None]] | None:
    """For a result pooled from several runs (levels.RUNS_KEY): the run of each process id,
    and each run's card and host (None where its context did not name them); None for a result
    of one run. A process id is the rank of its number among every number the list holds
    (levels.pooled_process_ids, where the file was read; runs_of numbers a cut's so), so id k
    is the process the list names k-th. An id beyond the list is refused in one line: read as
    one run, the spreads between cards and hosts went unmeasured without a word."""
    runs = levels.pooled_runs(result.context, result.label)
    if runs is None or len(runs) < 2:
        return None
    keys = sorted((p, u) for u, run in enumerate(runs) for p in run["processes"])
    if len(result.processes) and int(result.processes.max()) >= len(keys):
        raise InputError(
            f"{result.label}: {levels.RUNS_KEY} does not match its rows: the runs list "
            f"{len(keys)} process(es), its rows carry process id {int(result.processes.max())}"
        )
    units = levels.units_of(result.context)
    unit_of_process = np.array([u for _, u in keys], dtype=np.int64)
    return (
        unit_of_process,
        [u.card for u in units],
        [u.host for u in units],
    )


def units_holding(result: ResultSet, which: np.ndarray, level: Level) -> np.ndarray | None:
    """Per benchmark `which` (indices into `result`): the distinct cards (hosts at the host
    level) among the runs of a pooled result that hold it, an unnamed one counted as one; None
    for a result of one run. Its spread at that level was measured over those alone: a pool
    may hold a benchmark from fewer runs than it lists (runs of other suites, a `run --gpus`
    part that left the host-bound benchmarks to a GPU not pooled, a partial update)."""
    units = row_units(result)
    if units is None:
        return None
    run_of_process, cards, hosts = units
    named = hosts if level is Level.HOST else cards
    seen: dict[str | None, int] = {}
    unit_id = np.array([seen.setdefault(n, len(seen)) for n in named], dtype=np.int64)
    which = np.asarray(which, dtype=np.int64)
    rows, owner = _rows(result.starts[which], result.counts[which])
    pairs = np.unique(owner * len(seen) + unit_id[run_of_process[result.processes[rows]]])
    return np.bincount(pairs // len(seen), minlength=len(which))


def kind_of(baseline: ResultSet, contender: ResultSet) -> kinds.Match | None:
    """The contender card's kind among a pooled baseline's runs (kinds.py); None for a result
    of one run."""
    units = row_units(baseline)
    if units is None:
        return None
    return kinds.match(kinds.of_runs(baseline, units[0]), contender)


def kind_of_one_run(baseline: ResultSet, contender: ResultSet) -> kinds.Match:
    """The contender card's kind against a baseline of one run, which holds one kind: `kind`
    None when the two cards are of different kinds, or it cannot be told (kinds.py)."""
    count = int(baseline.processes.max()) + 1 if len(baseline.processes) else 0
    return kinds.match(kinds.of_runs(baseline, np.zeros(count, dtype=np.int64)), contender)


def runs_of(result: ResultSet, runs: Sequence[int]) -> ResultSet | None:
    """A pooled result cut down to the runs `runs` (indices into levels.RUNS_KEY): their
    processes' rows, and only those runs in its context; None when that is all of them. Its
    processes are numbered anew, ranks among the numbers its list holds, as a pool of those
    runs alone is read, so that row_units reads it as it reads that pool: the pool's ids matched
    the cut's list only where its runs stood first in the pool's, and the cut was read as one
    run otherwise."""
    units = row_units(result)
    listed = result.context.get(levels.RUNS_KEY)
    if units is None or not isinstance(listed, list) or len(set(runs)) == len(listed):
        return None
    keep = np.isin(units[0][result.processes], list(runs))
    context = {**result.context, levels.RUNS_KEY: [listed[u] for u in sorted(set(runs))]}
    cut = result.subset(keep, context)
    numbers = levels.listed_processes(listed)
    kept = levels.listed_processes([listed[u] for u in set(runs)])
    ids = np.searchsorted(kept, numbers[cut.processes])
    return replace(cut, processes=ids.astype(np.int64))


def runs_of_card(result: ResultSet, card: str | None) -> ResultSet | None:
    """A pooled result cut down to its runs on `card` (the rows of their processes, and only
    those runs listed in its context); None when it holds no run on that card, or only such
    runs (nothing to cut)."""
    units = row_units(result)
    if card is None or units is None:
        return None
    mine = [u for u, c in enumerate(units[1]) if c == card]
    return runs_of(result, mine) if mine else None


def to_host_class(result: ResultSet, metric: Metric, wanted: levels.HostClass) -> ResultSet | None:
    """A pooled result as if all its hosts were of the class `wanted` (levels.HostClass): per
    benchmark, the `metric` values of the runs on hosts of the other class scaled by the ratio
    of the two classes' means (geometric, of each host's mean run median), so that its centre
    is the class's and the spread between its hosts is the spread within a class, measured over
    every host. None where that cannot be told: a result of one run, a run whose host's class
    was not recorded, no host of one of the classes, or a benchmark that no host of `wanted`
    holds (a pool of its runs of part of the suite). One host of `wanted` is enough: compare
    widens the spread for a centre that is the mean of few (docs/measurement.md, "Classes of
    host")."""
    units = row_units(result)
    runs = levels.pooled_runs(result.context, result.label)
    column = result.metric_column(metric)
    if units is None or runs is None or column is None:
        return None
    classes = [levels.host_class(run.get("host_gpu_count")) for run in runs]
    hosts = units[2]
    if None in classes or None in hosts or len(set(classes)) < 2:
        return None
    values, present = column
    rows, owner = _rows(result.starts, result.counts)
    rows, owner = rows[present[rows]], owner[present[rows]]
    run = units[0][result.processes[rows]]
    other_class = np.array([c is not wanted for c in classes])
    # Per (benchmark, run): the run's median (log); per (benchmark, host): the mean of its runs'
    # (a host's runs are all of its class); per (benchmark, class): the mean of its hosts'.
    host_of_run = _ids(hosts)
    stride = len(runs)
    keys, cell = np.unique(owner * stride + run, return_inverse=True)
    run_log = np.log(_grouped_median(values[rows], cell.reshape(-1), len(keys)))
    bench, of_run = keys // stride, keys % stride
    host_keys, host_cell = np.unique(bench * stride + host_of_run[of_run], return_inverse=True)
    host_cell = host_cell.reshape(-1)
    host_log = np.bincount(host_cell, weights=run_log) / np.bincount(host_cell)
    host_bench = host_keys // stride
    a_run = np.zeros(len(host_keys), dtype=np.int64)
    a_run[host_cell] = of_run
    other = other_class[a_run]
    size = len(result.names)

    def class_mean(mask: np.ndarray) -> np.ndarray:
        count = np.bincount(host_bench[mask], minlength=size)
        total = np.bincount(host_bench[mask], weights=host_log[mask], minlength=size)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    mine, theirs_mean = class_mean(~other), class_mean(other)
    if np.any(np.isnan(mine) & np.isfinite(theirs_mean)):
        return None  # a benchmark no host of `wanted` holds: its centre cannot be told there
    shift = np.nan_to_num(mine - theirs_mean)  # 0 where the other class lacks it
    scaled = values.copy()
    theirs = other_class[run]
    scaled[rows[theirs]] *= np.exp(shift[owner[theirs]])
    return replace(result, columns={**result.columns, metric.key: scaled})


# --- measuring the noise ----------------------------------------------------------------------
#
# Measuring each benchmark's noise from a result's values: between processes, within the run,
# the harness's counter, its group's median; and, for a result pooled from several runs, the
# spread between cards, hosts and within kinds of card.


# A group's median guards its members only when there are enough of them to have a median.
MIN_GROUP = 3
# The counter is a 95 % interval's width; a standard deviation is that over 2 x 1.96.
COUNTER_TO_SIGMA = 1.0 / (2.0 * NormalDist().inv_cdf(0.975))


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
    if metric.key == TIME.key and NOISE_COUNTER in result.columns and harness_noise(result.context):
        widths = result.columns[NOISE_COUNTER][rows]
        good = np.isfinite(widths) & (widths >= 0)
        if good.any():
            counter = COUNTER_TO_SIGMA * _grouped_median(widths[good], owner[good], len(which))

    own = np.nan_to_num(np.fmax(np.fmax(between, within), counter), nan=0.0)
    group = _group_medians(names, own) if pool else nan.copy()
    noise = np.fmax(own, group)
    units = row_units(result)
    if units is None:
        return Noise(names, noise, between, within, counter, group, process_count, counts)
    row_unit = units[0][processes]
    grouped = kinds.of_runs(result, units[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        between, within, card, host, kind = _level_spreads(
            own_values, owner, processes, row_unit, units, median, grouped.of_run
        )
    own = np.nan_to_num(np.fmax(np.fmax(between, within), counter), nan=0.0)
    group = _group_medians(names, own) if pool else nan.copy()
    noise = np.fmax(own, group)
    if pool:  # siblings guard the wider levels too: two cards give each estimate one degree
        card = np.where(np.isfinite(card), np.fmax(card, _group_medians(names, card)), np.nan)
        host = np.where(np.isfinite(host), np.fmax(host, _group_medians(names, host)), np.nan)
        kind = np.where(np.isfinite(kind), np.fmax(kind, _group_medians(names, kind)), np.nan)
    _, unit_cards, unit_hosts = units
    return Noise(
        names,
        noise,
        between,
        within,
        counter,
        group,
        process_count,
        counts,
        card,
        host,
        len(set(unit_cards) - {None}),
        len(set(unit_hosts) - {None}),
        kind,
        len(unit_hosts) - grouped.count + 1,
    )


def _level_spreads(
    values: np.ndarray,
    owner: np.ndarray,
    processes: np.ndarray,
    row_unit: np.ndarray,
    units: tuple[np.ndarray, list[str | None], list[str | None]],
    median: np.ndarray,
    kind_of_unit: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per benchmark, relative to its median: the spread between processes of one run pooled
    over the runs; the robust CV of the repetitions inside a run (the median over runs); the
    spread between the cards of one host (of each card's mean run median, pooled over hosts);
    between hosts (of each host's mean run median; at least that of a pool drawing each kind
    of card alike: within kinds, and between the kinds' means); between the runs of one kind of
    card (kinds.py), pooled over kinds. NaN where the pooled result has no such pairs. Runs whose
    context does not name their card (host) measure no card (host) spread: two of them may be
    one card run twice, whose spread is the process level's."""
    size = len(median)
    _, cards, hosts = units
    host_ids = _ids(hosts)
    card_ids = _ids(
        [(h, c) if h is not None and c is not None else None for h, c in zip(hosts, cards)]
    )
    stride = int(max(processes.max(initial=0), row_unit.max(initial=0), len(hosts))) + 1

    def pooled_sd(cell_values: np.ndarray, cell_group: np.ndarray) -> np.ndarray:
        """sqrt(pooled variance) of values around their group's mean, per benchmark; the
        group id encodes the benchmark as group // stride."""
        keys, inverse = np.unique(cell_group, return_inverse=True)
        inverse = inverse.reshape(-1)
        count = np.bincount(inverse)
        mean = np.bincount(inverse, weights=cell_values) / count
        squares = np.bincount(inverse, weights=(cell_values - mean[inverse]) ** 2)
        bench = keys // stride
        dof = np.bincount(bench, weights=count - 1, minlength=size)
        total = np.bincount(bench, weights=squares, minlength=size)
        return np.where(dof > 0, np.sqrt(total / np.maximum(dof, 1)), np.nan)

    # Per (benchmark, process): the process's median; its run; the run's host.
    cell_keys, cell = np.unique(owner * stride + processes, return_inverse=True)
    cell = cell.reshape(-1)
    process_median = _grouped_median(values, cell, len(cell_keys))
    cell_owner = cell_keys // stride
    first_row = np.zeros(len(cell_keys), dtype=np.int64)
    first_row[cell[::-1]] = np.arange(len(cell))[::-1]
    cell_unit = row_unit[first_row]
    between = pooled_sd(process_median, cell_owner * stride + cell_unit) / median

    # Per (benchmark, run): the run's median over its rows.
    run_keys, run_cell = np.unique(owner * stride + row_unit, return_inverse=True)
    run_cell = run_cell.reshape(-1)
    run_median = _grouped_median(values, run_cell, len(run_keys))
    run_owner, run_unit = run_keys // stride, run_keys % stride
    deviation = np.abs(values - run_median[run_cell])
    run_cv = MAD_TO_SIGMA * _grouped_median(deviation, run_cell, len(run_keys)) / run_median
    run_cv = np.where(np.bincount(run_cell, minlength=len(run_keys)) >= 3, run_cv, np.nan)
    has_cv = np.isfinite(run_cv)
    within = _grouped_median(run_cv[has_cv], run_owner[has_cv], size)

    def means(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (benchmark, id >= 0): the mean of its runs' medians; the benchmark; a run of it."""
        known = ids[run_unit] >= 0
        keys, cell = np.unique(
            run_owner[known] * stride + ids[run_unit][known], return_inverse=True
        )
        cell = cell.reshape(-1)
        mean = np.bincount(cell, weights=run_median[known]) / np.bincount(cell)
        first = np.zeros(len(keys), dtype=np.int64)
        first[cell[::-1]] = np.flatnonzero(known)[::-1]
        return mean, keys // stride, run_unit[first]

    card_mean, card_owner, card_unit = means(card_ids)
    card = pooled_sd(card_mean, card_owner * stride + host_ids[card_unit]) / median
    host_mean, host_owner, _ = means(host_ids)
    host = pooled_sd(host_mean, host_owner * stride) / median
    # At least as if every kind of card were drawn alike: a pool of few cards of one kind
    # measured the spread of the others, which then failed a fresh card of the rare kind. H200,
    # 22 runs, 5 of the slower kind: leaving each host out, 40 of 7,568 comparisons failed
    # unchanged code, 33 on GPU-dc1b78b6 (+2.1 % against limits of 2.0 %); 6 with this
    # (scripts/leave_one_host_out.py; docs/measurement.md, "Kinds of card").
    host_kind = _ids(
        [(h, k) if h >= 0 else None for h, k in zip(host_ids.tolist(), kind_of_unit.tolist())]
    )
    unit_mean, unit_owner, unit_run = means(host_kind)
    unit_kind = kind_of_unit[unit_run]
    within_kinds = np.nan_to_num(pooled_sd(unit_mean, unit_owner * stride + unit_kind))
    kind_keys, kind_cell = np.unique(unit_owner * stride + unit_kind, return_inverse=True)
    kind_cell = kind_cell.reshape(-1)
    kind_mean = np.bincount(kind_cell, weights=unit_mean) / np.bincount(kind_cell)
    kind_owner = kind_keys // stride
    held = np.maximum(np.bincount(kind_owner, minlength=size), 1)
    centre = np.bincount(kind_owner, weights=kind_mean, minlength=size) / held
    squares = np.bincount(kind_owner, weights=(kind_mean - centre[kind_owner]) ** 2, minlength=size)
    alike = np.sqrt(within_kinds**2 + squares / held)
    host = np.fmax(host, np.where(np.isfinite(host), alike, np.nan) / median)
    kind = pooled_sd(run_median, run_owner * stride + kind_of_unit[run_unit]) / median
    return between, within, card, host, kind


def _ids(names: Sequence[object]) -> np.ndarray:
    """0, 1, ... per distinct name (in first-seen order); -1 for None."""
    seen: dict[object, int] = {}
    return np.array(
        [-1 if n is None else seen.setdefault(n, len(seen)) for n in names], dtype=np.int64
    )


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


def widest_steps(result: ResultSet, metric: Metric = TIME) -> np.ndarray:
    """Per benchmark of `result` (aligned with its names): the widest gap between the medians of
    two processes of one run (one card), over the benchmark's median; NaN where no run holds two
    of its processes. A slow mode that comes one process in several is a step, not a spread: on
    one H200 card 3 of 16 processes ran the latency-bound reductions 2.1 % slower, while the
    standard deviation of processes pooled over nine cards was 0.75 % (docs/measurement.md, "An
    anchor's two processes")."""
    size = len(result.names)
    column = result.metric_column(metric)
    which = np.flatnonzero(result.counts > 0)
    out = np.full(size, np.nan)
    if column is None or not len(which):
        return out
    rows, owner = _rows(result.starts[which], result.counts[which])
    values, processes = column[0][rows], result.processes[rows]
    units = row_units(result)
    run = units[0][processes] if units is not None else np.zeros(len(rows), dtype=np.int64)
    cells, cell = np.unique(np.stack([owner, run, processes]), axis=1, return_inverse=True)
    medians = _grouped_median(values, cell.reshape(-1), cells.shape[1])
    runs, in_run = np.unique(cells[:2], axis=1, return_inverse=True)  # (benchmark, run)
    in_run = in_run.reshape(-1)
    high = np.full(runs.shape[1], -np.inf)
    np.maximum.at(high, in_run, medians)
    low = np.full(runs.shape[1], np.inf)
    np.minimum.at(low, in_run, medians)
    two = np.bincount(in_run, minlength=runs.shape[1]) >= 2
    widest = np.full(len(which), np.nan)
    np.fmax.at(widest, runs[0], np.where(two, high - low, np.nan))  # (fmax: NaN loses)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[which] = widest / _grouped_median(values, owner, len(which))
    return out


def process_floor(committed: ResultSet, stored: LevelNoise | None) -> LevelNoise:
    """What a committed baseline (`committed`, `stored`: its stored noise) measured between the
    processes of one card, as the least process-level spread of a side of a few processes on
    one card (an anchor: floored): its stored noise, and half its widest step between
    two processes of one card (widest_steps), so that a limit of twice the spread (compare's
    default noise multiplier) holds the step."""
    half_step = widest_steps(committed) / 2.0
    names = committed.names
    process = half_step if stored is None else np.fmax(stored.take(names).process, half_step)
    nan = np.full(len(names), np.nan)
    return LevelNoise(names, process, np.isfinite(process), nan, nan.copy())


def floored(side: ResultSet, floor: LevelNoise, whose: str) -> LevelNoise:
    """The spread between `side`'s processes (as compare computes it from its values), at least
    `floor` (process_floor) where that holds the benchmark; `whose` names the side in the
    report's note ("the anchor's own")."""
    own = measure(side).levels()
    least = floor.take(own.names)
    nan = np.full(len(own.names), np.nan)
    return LevelNoise(
        own.names,
        np.fmax(own.process, least.process),
        own.process_measured | least.process_measured,
        nan,
        nan.copy(),
        f"{whose} spread between processes, at least the committed baseline's",
    )


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
        # Of the members that have the spread: one without it (run on fewer cards or hosts)
        # made np.median NaN, and the whole group lost its guard.
        finite = [i for i in indices if math.isfinite(own[i])]
        if len(finite) >= MIN_GROUP:
            out[indices] = float(np.median(own[finite]))
    return out


# --- the stored noise, noise.json -------------------------------------------------------------
#
# The stored noise, baselines/<slug>/noise.json: written by `baseline update`, read and checked
# for compare; found beside a baseline's result.json.


NOISE_FILE = "noise.json"
# 2: each benchmark's spread per level (process, card, host); 1 (read still): process only.
NOISE_SCHEMA = 2
READABLE_SCHEMAS = (1, 2)


def noise_document(
    noise: Noise, context: Mapping[str, Any], *, keep: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """noise.json's content for a baseline result; `keep`: entries of benchmarks not measured
    again (a partial update), kept as they were."""
    card = noise.card if noise.card is not None else np.full(len(noise.names), np.nan)
    host = noise.host if noise.host is not None else np.full(len(noise.names), np.nan)
    kind = noise.kind if noise.kind is not None else np.full(len(noise.names), np.nan)
    benchmarks: dict[str, Any] = {}
    for i, name in enumerate(noise.names):
        benchmarks[name] = {
            "noise": _round(noise.noise[i]),
            "between_processes": _round(noise.between[i]),
            "within_run": _round(noise.within[i]),
            "counter": _round(noise.counter[i]),
            "group": _round(noise.group[i]),
            "card": _round(card[i]),
            "host": _round(host[i]),
            "kind": _round(kind[i]),
            "processes": int(noise.processes[i]),
            "repetitions": int(noise.repetitions[i]),
        }
    benchmarks.update(keep or {})
    return {
        "schema_version": NOISE_SCHEMA,
        "metric": TIME.key,
        "commit": context.get("kernelwatch_git_commit"),
        "gpu_model": gpu_model(context),
        "updated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cards": noise.cards,
        "hosts": noise.hosts,
        "kind_units": noise.kind_units,
        "method": "noise (process level): largest of: standard deviation of per-process medians "
        "/ median (pooled over the runs); robust CV of the repetitions; noise counter / 3.92; "
        "median of its group. card: standard deviation of the cards' mean run medians within "
        "one host; host: of the hosts' mean run medians; kind: of the run medians around their "
        "kind of card's mean (kinds.py), pooled over kinds; each at least its group's median; "
        "null where not measured or where the runs do not name their card or host "
        "(docs/measurement.md)",
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
    schema = data.get("schema_version") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or not isinstance(entries, dict)
        or isinstance(schema, bool)  # (true == 1: read as schema 1)
        or schema not in READABLE_SCHEMAS
    ):
        raise InputError(f"{path}: not a kernelwatch noise file (schema {NOISE_SCHEMA})")
    # `baseline show` prints these counts: "many" was shown as "card: measured (many cards)"
    for key in _FILE_COUNTS:
        _check_number(path, "", key, data.get(key), count=True)
    if not isinstance(data.get("gpu_model", ""), (str, type(None))):
        raise InputError(f"{path}: gpu_model must be a string")
    for name, entry in entries.items():
        # A name or value from the file is cut in the line: a 200,000-character name was
        # written whole into it.
        said = shortened(name)
        if not isinstance(entry, dict):
            raise InputError(f"{path}: {said}: not an object")
        # Every key that is read, not only those compare reads: `baseline show` prints the
        # others, and text in one of them was an internal error there.
        for key in ("noise", *_SPREADS, *_COUNTS):
            value = entry.get(key)
            if key != "noise" and value is None:
                continue
            _check_number(path, f"{said}: ", key, value, count=key in _COUNTS)
    return data


def _check_number(path: Path, where: str, key: str, value: Any, *, count: bool) -> None:
    """A noise file's spread (0 <= value < 10) or count (None: not given, for a count)."""
    if count and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{path}: {where}{key} must be a number")
    if count and not (value >= 0 and float(value).is_integer()):
        raise InputError(f"{path}: {where}{key} {shortened(str(value))} is not a count")
    if not count and not (0 <= value < 10):
        raise InputError(f"{path}: {where}{key} {shortened(str(value))} out of range")


# A noise entry's optional keys (noise_document): spreads as fractions, and counts.
_SPREADS = ("between_processes", "within_run", "counter", "group", "card", "host", "kind")
_COUNTS = ("processes", "repetitions")
# The file's own counts (noise_document): the cards, hosts and kinds its spreads came from.
_FILE_COUNTS = ("cards", "hosts", "kind_units")


def levels_from_file(data: Mapping[str, Any]) -> LevelNoise:
    """The per-level spreads a checked noise file holds (schema 1: the process level only)."""
    entries = data["benchmarks"]
    names = tuple(entries)

    def column(key: str) -> np.ndarray:
        values = [entries[n].get(key) for n in names]
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    # A file that does not say how many processes its noise came from (written by hand, or by
    # an older tool) is taken at its word: measured.
    processes = np.array([entries[n].get("processes") or 0 for n in names])
    measured = (processes != 1) | np.isfinite(column("between_processes"))
    return LevelNoise(names, column("noise"), measured, column("card"), column("host"))


def stored(path: Path, context: Mapping[str, Any]) -> tuple[LevelNoise | None, str | None]:
    """The stored noise per benchmark from `path`, and a warning when it was not written with
    the result whose context is given (then nothing is used)."""
    data = read_noise_file(path)
    commit, theirs = data.get("commit"), context.get("kernelwatch_git_commit")
    if commit and theirs and commit != theirs:
        return None, (
            f"{path} was written for commit {str(commit)[:12]}, the baseline is "
            f"{str(theirs)[:12]}: its noise is not used"
        )
    # (files written before it was recorded name no model: their commit is all that is checked)
    model, ours = data.get("gpu_model"), gpu_model(context)
    if model and ours and model != ours:
        return None, (
            f"{path} was written for {shortened(model)}, the baseline is {shortened(ours)}: its "
            "noise is not used"
        )
    return levels_from_file(data), None


def stored_beside(
    baseline: Path, context: Mapping[str, Any], path: Path | None = None
) -> tuple[LevelNoise | None, str | None]:
    """The stored noise of a baseline (`path`, else the noise.json beside it), None when there
    is none; and a warning when the file does not belong to that result."""
    path = path or beside(baseline)
    if path is None:
        return None, None
    found, warning = stored(path, context)
    return (found if found is not None and found.names else None), warning


def beside(result_path: Path) -> Path | None:
    """The noise.json of a baseline: beside its result.json, or in the folder given. Anything
    there is it: a folder or a dangling link of that name was taken as no noise file, and the
    verdict fell back to the priors with no word; reading it says what it is, in one line."""
    try:
        folder = result_path if result_path.is_dir() else result_path.parent
        candidate = folder / NOISE_FILE
        if not os.path.lexists(candidate):
            return None
    except OSError:  # a folder that may not be searched: reading its result says so, in one line
        return None
    check_input_file(candidate, "a noise file", pipe=False)  # (a FIFO is waited on for ever)
    return candidate
