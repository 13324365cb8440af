"""Which of a series' changes are new: found in the history now, never found in the history as
it was at any moment up to a given one. Stateless: the history's own ingest times say what it
held then, so the nightly reports each change once, the night it is first found.

The history as it was at a moment T is its runs ingested at or before T (`ingested_at`, the
clock of the ingest; not the run's own date: a run measured before T but ingested after it was
not there to be seen). A change found now counts as already found when the same detection, on
the series as it was at some moment up to T, found the same change:

* in the same series (GPU slug, benchmark, metric: one Series is one of them);
* in the same direction (both regressions or both improvements);
* at the same first run after it, or at one of its MOVE_RUNS neighbours in the series as it is
  now: runs added after a step can move where its estimate snaps to.

Each earlier change stands for one change now (the nearest; ties: the older), so a second
step that grows beside a known one is still reported. Every moment up to T counts, not T
alone: a change that was found, lost when the next run widened the spread, and found again is
still one change. docs/history.md gives the measurements behind both rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (changes imports this module: no import cycle at run time)
    from kernelwatch.changes import Change, Series

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
    return dataclasses.replace(
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
