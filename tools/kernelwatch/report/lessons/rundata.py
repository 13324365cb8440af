"""One run's medians, addressed the way the suite names its benchmarks: what a family's figure
draws from.

Suite names are `family/variant/.../key:value/.../manual_time`: the parts without a colon are
the benchmark's path (`coalescing/offset/float`), the `key:value` parts its parameters
(`offset: 6`). The figures ask for a value (`value(path, metric, **params)`) or a sweep over one
parameter (`sweep(path, param, metric, **fixed)`); an absent benchmark is simply not there.
Google Benchmark's arguments are integers, so a parameter is read as a whole number
(`Entry.integer`): one whose text is not (`m:abc`, `m:1.5`, `m:1e400`: another build's results,
a renamed benchmark) is read as absent, and no figure reads a name's text as a number itself.
A family's reference is the benchmark its binary marked (`kernelwatch::mark_reference`: its rows
carry the counter `reference` = 1), so no figure restates its name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernelwatch.names import path_and_parameters as parse_name
from kernelwatch.results import REFERENCE_COUNTER, ResultSet


def number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Entry:
    name: str
    path: str
    params: Mapping[str, str]

    def integer(self, key: str) -> int | None:
        """The parameter `key` as the whole number it writes (`streams:08` -> 8); None where
        the name has no such parameter or its text is no number Google Benchmark writes (an
        int64)."""
        value = number(self.params.get(key, ""))
        if value is None or not value.is_integer() or abs(value) >= 2**63:
            return None
        return int(value)

    def has(self, params: Mapping[str, Any]) -> bool:
        """Whether the parameters include `params`: a number is compared with the number the
        name writes (`streams=8` is `streams:08`), text as written (an entry's own params)."""
        for key, wanted in params.items():
            if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
                if self.integer(key) != wanted:
                    return False
            elif self.params.get(key) != str(wanted):
                return False
        return True


@dataclass(frozen=True)
class RunData:
    """Median of every metric of every benchmark measured in a run (times in ns)."""

    medians: Mapping[str, Mapping[str, float]]
    context: Mapping[str, Any] = field(default_factory=dict)
    # Benchmarks of the run without a value: failed (an error) or skipped, with which.
    unmeasured: Mapping[str, str] = field(default_factory=dict)
    # Each benchmark's family_index (ResultSet.registered): the order its binary registered it.
    registered: Mapping[str, int] = field(default_factory=dict)
    _by_path: Mapping[str, tuple[Entry, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_path: dict[str, list[Entry]] = {}
        for name in self.medians:
            path, params = parse_name(name)
            by_path.setdefault(path, []).append(Entry(name, path, params))
        object.__setattr__(self, "_by_path", {p: tuple(e) for p, e in by_path.items()})

    @classmethod
    def from_result(cls, result: ResultSet) -> RunData:
        medians: dict[str, dict[str, float]] = {}
        for k, name in enumerate(result.names):
            if name in result.errors or name in result.skipped or result.counts[k] == 0:
                continue
            start, count = int(result.starts[k]), int(result.counts[k])
            own: dict[str, float] = {}
            for key, column in result.columns.items():
                values = column[start : start + count]
                gap = result.gaps.get(key)
                if gap is not None:
                    values = values[~gap[start : start + count]]
                values = values[np.isfinite(values)]
                if len(values):
                    own[key] = float(np.median(values))
            if own:
                medians[name] = own
        unmeasured = {n: "skipped" for n in result.skipped}
        unmeasured.update({n: "failed" for n in result.errors})
        return cls(medians, dict(result.context), unmeasured, dict(result.registered))

    def __len__(self) -> int:
        return len(self.medians)

    def entries(self, path: str) -> tuple[Entry, ...]:
        return self._by_path.get(path, ())

    def paths(self, prefix: str) -> list[str]:
        """The benchmark paths that start with `prefix`, sorted."""
        return sorted(p for p in self._by_path if p.startswith(prefix))

    def variants(self, *prefixes: str) -> list[str]:
        """What follows a prefix in the run's benchmark paths, up to the next `/`
        (`reduction/sum/` -> naive, interleaved, ...), in the order the benchmarks were
        registered (family_index): a figure reads a family's variants from the results instead
        of restating the C++'s list. Several prefixes: the variants of all, each once
        (`coalescing/offset/`, `coalescing/stride/` -> float, double). By name where the run
        has no family_index."""
        first: dict[str, tuple[int, str]] = {}
        for path, entries in self._by_path.items():
            prefix = next((p for p in prefixes if path.startswith(p)), None)
            if prefix is None:
                continue
            variant = path.removeprefix(prefix).split("/", 1)[0]
            indices = [self.registered[e.name] for e in entries if e.name in self.registered]
            key = (min(indices) if indices else -1, variant)
            first[variant] = min(first.get(variant, key), key)
        return sorted(first, key=lambda v: first[v])

    def references(self) -> list[str]:
        """The benchmarks marked as their family's reference, by name."""
        return sorted(n for n, m in self.medians.items() if m.get(REFERENCE_COUNTER) == 1)

    def reference(self, family: str) -> Entry | None:
        """The benchmark `family` marked as its reference; None where the run has none (a
        filter left it out, or a harness from before the mark wrote the result)."""
        for name in self.references():
            path, params = parse_name(name)
            if path.split("/", 1)[0] == family:
                return Entry(name, path, params)
        return None

    def value(self, path: str, metric: str, **params: Any) -> float | None:
        """The median of `metric` of the benchmark at `path` whose parameters include
        `params` (Entry.has; the first such, by name); None when there is none."""
        for entry in sorted(self.entries(path), key=lambda e: e.name):
            if entry.has(params):
                found = self.medians[entry.name].get(metric)
                if found is not None:
                    return found
        return None

    def name(self, path: str, **params: Any) -> str | None:
        for entry in sorted(self.entries(path), key=lambda e: e.name):
            if entry.has(params):
                return entry.name
        return None

    def sweep(self, path: str, param: str, metric: str, **fixed: Any) -> list[tuple[float, float]]:
        """(parameter value, median of metric) over the benchmarks at `path` that have the
        parameter (a whole number, Entry.integer) and the `fixed` ones, by parameter value."""
        points: dict[float, float] = {}
        for entry in sorted(self.entries(path), key=lambda e: e.name):
            x = entry.integer(param)
            if x is None or x in points or not entry.has(fixed):
                continue
            y = self.medians[entry.name].get(metric)
            if y is not None:
                points[float(x)] = y
        return sorted(points.items())

    def context_number(self, key: str) -> float | None:
        value = self.context.get(key)
        return number(str(value)) if value is not None else None
