"""The runs of a result pooled from several (levels.RUNS_KEY): which run each process belongs
to, the contender card's kind among them, and the result cut down to some of its runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from kernelwatch import kinds, levels
from kernelwatch.results import ResultSet


def row_units(
    result: ResultSet,
) -> tuple[np.ndarray, list[str | None], list[str | None]] | None:
    """For a result pooled from several runs (levels.RUNS_KEY): the run of each process id,
    and each run's card and host (None where its context did not name them); None for a result
    of one run (or a list that does not match the result's processes)."""
    runs = result.context.get(levels.RUNS_KEY)
    if not isinstance(runs, list) or len(runs) < 2:
        return None
    keys: list[tuple[int, int]] = []
    for u, run in enumerate(runs):
        listed = run.get("processes") if isinstance(run, Mapping) else None
        if not isinstance(listed, list):
            return None
        keys += [(int(p), u) for p in listed if isinstance(p, int)]
    keys.sort()
    # A pooled file numbers its processes 1..P and a process id is the rank of its number.
    if len(result.processes) and int(result.processes.max()) + 1 != len(keys):
        return None
    units = levels.units_of(result.context)
    unit_of_process = np.array([u for _, u in keys], dtype=np.int64)
    return (
        unit_of_process,
        [u.card for u in units],
        [u.host for u in units],
    )


def kind_of(baseline: ResultSet, contender: ResultSet) -> kinds.Match | None:
    """The contender card's kind among a pooled baseline's runs (kinds.py); None for a result
    of one run, or too few shared benchmarks."""
    units = row_units(baseline)
    if units is None:
        return None
    return kinds.match(kinds.of_runs(baseline, units[0]), contender)


def runs_of(result: ResultSet, runs: Sequence[int]) -> ResultSet | None:
    """A pooled result cut down to the runs `runs` (indices into levels.RUNS_KEY): their
    processes' rows, and only those runs in its context; None when that is all of them."""
    units = row_units(result)
    listed = result.context.get(levels.RUNS_KEY)
    if units is None or not isinstance(listed, list) or len(set(runs)) == len(listed):
        return None
    keep = np.isin(units[0][result.processes], list(runs))
    context = {**result.context, levels.RUNS_KEY: [listed[u] for u in sorted(set(runs))]}
    return result.subset(keep, context)


def runs_of_card(result: ResultSet, card: str | None) -> ResultSet | None:
    """A pooled result cut down to its runs on `card` (the rows of their processes, and only
    those runs listed in its context); None when it holds no run on that card, or only such
    runs (nothing to cut)."""
    units = row_units(result)
    if card is None or units is None:
        return None
    mine = [u for u, c in enumerate(units[1]) if c == card]
    return runs_of(result, mine) if mine else None
