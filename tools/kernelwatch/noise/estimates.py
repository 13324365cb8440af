"""What is known of a benchmark's noise: each estimate (Noise) and the spread per level that
compare uses (LevelNoise); TIME, the metric they describe unless told otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelwatch.levels import Level
from kernelwatch.results import Metric

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
            self.kind if self.kind is not None else nan.copy(),
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
    kind: np.ndarray

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
            pick(self.kind, np.nan),
        )

    def at(self, level: Level) -> np.ndarray:
        """The measured spread at `level`, at least the narrower levels'; NaN where the level
        (or, for the process level, the spread between processes) was not measured."""
        out = np.where(self.process_measured, self.process, np.nan)
        if level is Level.CARD:
            out = np.where(np.isfinite(self.card), np.fmax(self.card, self.process), np.nan)
        if level is Level.KIND:  # measured between hosts whose cards are of one kind
            out = np.where(np.isfinite(self.kind), np.fmax(self.kind, self.process), np.nan)
        if level >= Level.HOST:
            wider = np.fmax(self.host, np.fmax(self.card, self.process))
            out = np.where(np.isfinite(self.host), wider, np.nan)
        return out
