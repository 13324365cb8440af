"""`history list --format json` and `history show --format json`: the runs, and one benchmark's
series, as JSON documents (schema in docs/history.md). The tables say the same things."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernelwatch.history.queries import Point, Run, metric_key, summary
from kernelwatch.results import Metric

# Bump on any change to these documents that could break a reader (renames, removals, meaning).
SCHEMA_VERSION = 1


def _run(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "date": run.date,
        "commit": run.git_commit,
        "gpu_slug": run.gpu_slug,
        "gpu_name": run.gpu_name,
        "benchmarks": run.benchmarks,
        "source": run.source,
        "slowed_on_purpose": run.slowed,
        "anchor": run.anchor,
    }


def runs_document(db: str | Path, runs: Sequence[Run]) -> dict[str, Any]:
    """`history list`: every run, oldest first."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "history list",
        "db": str(db),
        "runs": [_run(run) for run in runs],
    }


def series_document(
    db: str | Path, benchmark: str, metric: str, gpu: str | None, points: Sequence[Point]
) -> dict[str, Any]:
    """`history show`: one benchmark's metric per run, oldest first; values in the stored unit
    (ns for times); a median, min or max of no value is null."""
    key = metric_key(metric)
    rows = []
    for point in points:
        median, low, high, n = summary(point.values)
        rows.append(
            {
                **_run(point.run),
                "n": n,
                "median": median,
                "min": low,
                "max": high,
                "error": point.error,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "history show",
        "db": str(db),
        "benchmark": benchmark,
        "metric": key,
        "unit": "ns" if Metric(key, False).is_time else None,
        "gpu": gpu,
        "runs": rows,
    }
