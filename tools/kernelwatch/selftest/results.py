"""What the selftest found: the Analysis and its parts. Data only: deciding is analysis.py's,
showing it render.py's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kernelwatch.compare import Settings


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
