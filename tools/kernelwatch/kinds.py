"""Kinds of card: cards of one GPU model that time alike, told apart by their measurements.

H200 cards come in kinds that no context key tells apart (same name, clocks, memory, driver,
link). Measured over the suite's 312 benchmarks that do not touch the host, on five cards
and two more slowed by injection (docs/measurement.md, "Kinds of card"): within a kind two cards differ by a median 0.04-0.10 %
per benchmark; across kinds by 0.6-1.0 %, up to 4.9 % on some benchmarks (double strides
faster, offset copies slower), the same pattern on every card of the other kind. So a
baseline of one kind says nothing of a card of another (compare holds it to at least the
unseen-kind prior), and noise.json keeps the spread within kinds, 5-10x narrower than between
all cards: a description, which does not bound a card the baseline never held
(compare.judged_against).

The distance between two runs is their *shape* distance: the median over benchmarks of
|r - median(r)| with r = log(time ratio). Removing the median makes it blind to a change
that moves every benchmark alike (an injected 2 % everywhere, a new driver), and the median
makes it blind to a change of fewer than half of the benchmarks: a regression does not move a
card to another kind. A change of about half of them can: then no kind matches and the
comparison falls back to the spread between all hosts, which is wider, never narrower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelwatch.results import ResultSet

# Within a kind the largest shape distance measured was 0.10 % (GPU-5d8b3240 against
# GPU-e6875044), 0.24 % for a run slowed 2 % by injection; across kinds the smallest was
# 0.58 %. The boundary sits between them.
KIND_DISTANCE = 0.0035
# Fewer shared benchmarks say too little about a card's pattern: over random subsets of the
# H200 baseline's 19 runs, 20 benchmarks read two kinds as one in 3.6 % of pairs, one as two
# in 0.8 % (scripts/kind_subsets.py; docs/measurement.md, "Kinds of card").
MIN_SHARED = 20


def shape_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The median of |r - median(r)|, r = log(a / b) over the benchmarks both have; NaN with
    fewer than MIN_SHARED of them."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(np.asarray(a, dtype=float) / np.asarray(b, dtype=float))
    r = r[np.isfinite(r)]
    if len(r) < MIN_SHARED:
        return float("nan")
    return float(np.median(np.abs(r - np.median(r))))


def group(medians: np.ndarray) -> np.ndarray:
    """A kind id per run (rows of `medians`: runs x benchmarks): runs closer than
    KIND_DISTANCE are of one kind, and so is whatever is close to either (single linkage)."""
    count = len(medians)
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(count):
        for j in range(i + 1, count):
            if shape_distance(medians[i], medians[j]) <= KIND_DISTANCE:
                parent[root(j)] = root(i)
    roots = [root(i) for i in range(count)]
    return np.unique(roots, return_inverse=True)[1].reshape(-1)


def _medians(result: ResultSet, names: list[str], processes: np.ndarray | None) -> np.ndarray:
    """Each name's median time over the rows of `processes` (all rows when None); NaN where
    there is none. One sort for all names (a loop of np.median per name took 3 s of a 6.5 s
    compare of 3,560 benchmarks against a baseline pooled from 8 runs); the same values as
    np.median: the middle value, or the mean of the two middle ones."""
    column = result.columns.get("real_time")
    out = np.full(len(names), np.nan)
    if column is None:
        return out
    found = np.array([result.index.get(name, -1) for name in names], dtype=np.int64)
    ks = found[found >= 0]
    counts = np.asarray(result.counts, dtype=np.int64)[ks]
    first = np.asarray(result.starts, dtype=np.int64)[ks]
    owner = np.repeat(np.flatnonzero(found >= 0), counts)  # index into names of each row
    rows = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
    values = column[rows]
    keep = np.isfinite(values)
    if processes is not None:
        keep &= np.isin(result.processes[rows], processes)
    owner, values = owner[keep], values[keep]
    order = np.lexsort((values, owner))  # by name, then by value
    ordered = values[order]
    sizes = np.bincount(owner, minlength=len(names))
    starts = np.cumsum(sizes) - sizes
    has = sizes > 0
    low = ordered[(starts + (sizes - 1) // 2)[has]]
    high = ordered[(starts + sizes // 2)[has]]
    out[has] = np.where(sizes[has] % 2 == 1, low, (low + high) / 2)
    return out


@dataclass(frozen=True)
class Kinds:
    """The kinds of a pooled result's runs: `of_run[u]` for run u (levels.RUNS_KEY order)."""

    of_run: np.ndarray
    medians: np.ndarray  # runs x names
    names: list[str]

    @property
    def count(self) -> int:
        """The groups of runs: a run that cannot be told of any kind is a group of its own (the
        spread within kinds pools nothing of it)."""
        return int(self.of_run.max()) + 1 if len(self.of_run) else 0

    @property
    def told(self) -> int:
        """The kinds told apart: those with a run whose shape distance from a run of another
        kind was measured (MIN_SHARED benchmarks shared). A run holding fewer (one that measured
        only the host-bound benchmarks, a run of another suite) is of no kind known, not a kind
        of its own: counted so, a baseline of one kind said it held two, and a card of another
        kind was held to the spread between the hosts of one (no unseen-kind prior). Where no
        two runs can be compared at all (a suite of fewer benchmarks), how many kinds there are
        is not known either: each run is counted a kind, as before, and the spread measured
        between its hosts judges (tests/tools/test_levels.py)."""
        if self.count < 2:
            return self.count
        apart: set[int] = set()
        compared = False
        for i in range(len(self.of_run)):
            for j in range(i + 1, len(self.of_run)):
                if np.isfinite(shape_distance(self.medians[i], self.medians[j])):
                    compared = True
                    if self.of_run[i] != self.of_run[j]:
                        apart |= {int(self.of_run[i]), int(self.of_run[j])}
        return max(len(apart), 1) if compared else self.count


def of_runs(result: ResultSet, unit_of_process: np.ndarray) -> Kinds:
    """Group a pooled result's runs into kinds from their medians of the benchmarks that do
    not touch the host (a host-bound time says as much about the host as about the card)."""
    host_bound = result.host_bound(np.arange(len(result.names)))
    names = [n for n, bound in zip(result.names, host_bound.tolist()) if not bound]
    runs = int(unit_of_process.max()) + 1 if len(unit_of_process) else 0
    medians = np.array(
        [_medians(result, names, np.flatnonzero(unit_of_process == u)) for u in range(runs)]
    ).reshape(runs, len(names))
    return Kinds(group(medians), medians, names)


@dataclass(frozen=True)
class Match:
    """The kind of the baseline's runs a contender's card is of, `distance` its shape distance
    from their mean; `kind` None when no kind is within KIND_DISTANCE (`distance`: the nearest
    one's), or when the two share too few benchmarks to tell (`distance` NaN); `kinds` the
    baseline's kinds told apart (Kinds.told)."""

    kind: int | None
    distance: float
    kinds: int


def match(kinds: Kinds, contender: ResultSet) -> Match:
    """The contender's kind among the baseline's; of none, with a NaN distance, where they
    share fewer than MIN_SHARED benchmarks: nothing says it is of a kind the baseline holds."""
    mine = _medians(contender, kinds.names, None)
    best: tuple[float, int] | None = None
    for kind in range(kinds.count):
        # The geometric mean of each benchmark over the kind's runs that have it; NaN where none
        # has (nvbench summaries: np.nanmean warned on stderr, "Mean of empty slice").
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(kinds.medians[kinds.of_run == kind])
            found = np.isfinite(logs)
            mean = np.exp(np.where(found, logs, 0.0).sum(axis=0) / found.sum(axis=0))
        distance = shape_distance(mine, mean)
        if np.isfinite(distance) and (best is None or distance < best[0]):
            best = (distance, kind)
    told = kinds.told
    if best is None:
        return Match(None, float("nan"), told)
    distance, kind = best
    if distance > KIND_DISTANCE:
        return Match(None, distance, told)
    return Match(kind, distance, told)
