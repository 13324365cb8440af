"""A baseline's result rows by benchmark: which benchmark a row belongs to, grouped, and the
result restricted to some benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernelwatch.names import without_aggregate


def row_identity(row: Mapping[str, Any]) -> str:
    """The benchmark a row belongs to (its run_name; older files: name without aggregate)."""
    run_name = row.get("run_name")
    if isinstance(run_name, str) and run_name:
        return run_name
    name = str(row.get("name"))
    aggregate = row.get("aggregate_name")
    return without_aggregate(name, aggregate) if aggregate else name


def groups(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row_identity(row), []).append(row)
    return groups


def restrict(document: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """The same result with only the rows of `names`."""
    rows = [r for r in document.get("benchmarks", []) if row_identity(r) in names]
    return {**document, "benchmarks": rows}
