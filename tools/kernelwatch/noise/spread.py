"""Measuring each benchmark's noise from a result's values: between processes, within the run,
the harness's counter, its group's median; and, for a result pooled from several runs, the
spread between cards, hosts and within kinds of card."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from kernelwatch import kinds
from kernelwatch.names import variant as group_of  # a benchmark's group: its variant
from kernelwatch.noise.estimates import TIME, Noise
from kernelwatch.noise.runs import row_units
from kernelwatch.results import NOISE_COUNTER, Metric, ResultSet
from kernelwatch.stats import MAD_TO_SIGMA

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
    if metric.key == TIME.key and NOISE_COUNTER in result.columns:
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
    between hosts (of each host's mean run median); between the runs of one kind of card
    (kinds.py), pooled over kinds. NaN where the pooled result has no such pairs. Runs whose
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
