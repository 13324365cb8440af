"""The validated columns of one result file (FileColumns), and how rows become columns: times
and counters as arrays of doubles, gaps where a row lacks a key, labels."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

from kernelwatch.files import strict_json

# Scale of each Google Benchmark time unit in nanoseconds; times are compared in ns.
TIME_UNITS: dict[str, float] = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
TIME_KEYS = ("real_time", "cpu_time")

# Row keys that are not counters (everything else numeric in a row is a counter).
RESERVED_KEYS = frozenset(
    {
        "name",
        "run_name",
        "run_type",
        "repetitions",
        "repetition_index",
        "threads",
        "iterations",
        "real_time",
        "cpu_time",
        "time_unit",
        "family_index",
        "per_family_instance_index",
        "aggregate_name",
        "aggregate_unit",
        "error_occurred",
        "error_message",
        "skipped",
        "skip_message",
        "label",
        "big_o",
        "cpu_coefficient",
        "real_coefficient",
        "rms",
    }
)


@dataclass(frozen=True)
class FileColumns:
    """One result file, validated. Value rows are grouped by benchmark, in `names` order:
    benchmark k owns the next counts[k] rows of every column."""

    path: str
    context: dict[str, Any]
    names: list[str]
    counts: list[int]  # 0 for a benchmark that only errored or was skipped
    from_aggregates: list[bool]  # its one row is a median (else mean) aggregate
    time_scales: array[float]  # per benchmark: ns per unit of its times (one unit per benchmark)
    columns: dict[
        str, array[float]
    ]  # real_time, cpu_time (in time_scales units), counters; NaN where absent
    gaps: dict[str, bytes]  # for columns absent from some rows: 1 where absent
    errors: dict[str, str]
    skipped: dict[str, str]
    notes: tuple[str, ...] = ()  # what the statistics should say about this file
    labels: dict[str, str] = field(default_factory=dict)  # Google Benchmark's `label`, if any


def show(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return repr(value) if isinstance(value, (int, float)) else strict_json(value, indent=None)


def labels(names: list[str], firsts: list[dict[str, Any]]) -> dict[str, str]:
    """Each benchmark's `label` (SetLabel), from its first value row: shown beside its name."""
    return {
        name: row["label"]
        for name, row in zip(names, firsts)
        if isinstance(row.get("label"), str) and row["label"]
    }


def to_columns(
    rows: list[dict[str, Any]],
    firsts: list[dict[str, Any]],
    taken: dict[str, list[Any]] | None = None,
) -> tuple[dict[str, array[float]], dict[str, bytes]]:
    """Times as written (in the file's units) and every numeric counter; rows are validated.
    Counter names come from the first value row of each benchmark: Google Benchmark writes the
    same counters for every repetition. `taken`: values of some keys already taken from the
    rows, in the same order (not taken twice)."""
    taken = taken or {}

    def values_of(key: str) -> list[Any]:
        return taken[key] if key in taken else [row.get(key) for row in rows]

    columns = {"real_time": array("d", values_of("real_time"))}
    gaps: dict[str, bytes] = {}
    counters = set().union(*firsts) - RESERVED_KEYS
    for key in ["cpu_time", *sorted(counters)]:
        values = values_of(key)
        found = doubles(values)
        if found is None:
            _refuse_mixed(key, values, rows)
            continue  # strings, lists, huge integers: not a counter
        columns[key], gap = found
        if gap is not None:
            gaps[key] = gap
    return columns, gaps


def doubles(values: list[Any]) -> tuple[array[float], bytes | None] | None:
    """One key's values as doubles, NaN where a row lacks it, and which rows lack it (None when
    none does); None when they are not all numbers (strings, lists, huge integers)."""
    try:
        return array("d", values), None  # as is first: most columns have no gaps
    except TypeError:
        if None in values:
            try:
                return array("d", [math.nan if v is None else v for v in values]), bytes(
                    v is None for v in values
                )
            except (TypeError, OverflowError):
                return None
    except OverflowError:
        pass
    return None


class MixedCounter(ValueError):
    """A counter that is a number in some rows and something else in another."""


def _refuse_mixed(key: str, values: list[Any], rows: list[dict[str, Any]]) -> None:
    """A column of numbers with one string (or list, ...) in it is a damaged row, not a column
    that is no counter: name that row, rather than let --metric say no benchmark has it."""
    numeric = [type(v) in (int, float) for v in values]
    if not any(numeric):
        return
    for i, (value, is_number) in enumerate(zip(values, numeric)):
        if not is_number and value is not None:
            row = rows[i]
            name = row.get("name")
            repetition = row.get("repetition_index")
            where = f" (repetition {repetition})" if repetition is not None else ""
            raise MixedCounter(
                f"{name}{where}: counter {key!r} is {show(value)}, a number in the other rows"
            )
