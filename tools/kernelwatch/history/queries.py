"""Reading the history: the runs, and one benchmark's series of one metric (per run, oldest
first), with the messages that say what the history holds instead."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.errors import InputError, shortened
from kernelwatch.history.schema import damaged
from kernelwatch.results import (
    ANCHOR_KEY,
    HARNESS_INJECT_KEY,
    SELFTEST_LEVEL_KEY,
    SELFTEST_ROLE_KEY,
    OCCUPANTS_KEY,
    Metric,
    anchoring,
    occupied,
    slowed_on_purpose,
)


@dataclass(frozen=True)
class Run:
    id: int
    date: str
    git_commit: str | None
    gpu_slug: str | None
    gpu_name: str | None
    benchmarks: int
    source: str
    slowed: str | None = None  # slowed down on purpose (results.slowed_on_purpose)
    anchor: str | None = None  # how its verdict was anchored (results.anchoring)
    occupied: str | None = None  # beside other processes on its GPU (results.occupied)

    @property
    def marks(self) -> str:
        """What `history list` says of how the run was made (its last column)."""
        said = [f"SLOWED ON PURPOSE: {self.slowed}"] if self.slowed else []
        said += [f"SHARED GPU: {self.occupied}"] if self.occupied else []
        return "; ".join(said + ([self.shown_anchor] if self.shown_anchor else []))

    @property
    def shown_anchor(self) -> str | None:
        """The anchoring phrase as a line shows it: a hand-edited one of 5,000 characters was
        printed whole; a merged run of 8 parts writes about 2,000 (merge.merged_anchoring)."""
        return None if self.anchor is None else shortened(self.anchor, 2400)


@dataclass(frozen=True)
class Point:
    """One run's values of one benchmark's metric. `error`: a repetition of it failed in that run
    (compare's ERROR); the values are the repetitions that did not."""

    run: Run
    values: np.ndarray
    error: str | None = None

    @property
    def median(self) -> float:
        return float(np.median(self.values))


_RUN_COLUMNS = "r.id, r.date, r.git_commit, r.gpu_slug, r.gpu_name, r.benchmarks, r.source"
_TEXT_COLUMNS = ("date", "git_commit", "gpu_slug", "gpu_name", "source")


def _run(row: Sequence[Any]) -> Run:
    count = row[5]
    if not isinstance(count, int):  # SQLite keeps whatever a hand edit wrote in a column
        raise damaged(f"run {row[0]}'s benchmarks", count, "a count")
    # A BLOB stays bytes in a TEXT column, which the table and the JSON writer cannot print.
    for column, value in zip(_TEXT_COLUMNS, (row[1], *row[2:5], row[6])):
        if value is not None and not isinstance(value, str):
            raise damaged(f"run {row[0]}'s {column}", value, "text")
    return Run(int(row[0]), row[1], row[2], row[3], row[4], count, row[6])


def runs(db: sqlite3.Connection, ids: Sequence[int] | None = None) -> list[Run]:
    """Every run (or those of `ids` that are there), oldest first (by the date in its context,
    then by ingest order)."""
    query = f"SELECT {_RUN_COLUMNS}, r.context FROM runs r"
    if ids is not None:
        query += f" WHERE r.id IN ({', '.join('?' * len(ids))})"
    return [
        _provenance(_run(row), row[-1])
        for row in db.execute(query + " ORDER BY r.date, r.id", tuple(ids or ()))
    ]


def _provenance(run: Run, context_json: Any) -> Run:
    """The run with what its context says of how it was made (results.py)."""
    try:
        context = json.loads(context_json)
    except (TypeError, ValueError, RecursionError):  # (a damaged one: `list` stopped on it)
        return run
    if not isinstance(context, dict):
        return run
    return dataclasses.replace(
        run,
        slowed=slowed_on_purpose(context),
        anchor=anchoring(context),
        occupied=occupied(context),
    )


def texts(rows: Iterable[Sequence[Any]], what: str) -> list[str]:
    """The names of (id, name) rows, for a line that lists them: a BLOB a hand edit wrote stays
    bytes, which no message joins (an internal TypeError), so it is refused in one line."""
    names = []
    for identity, name in rows:
        if not isinstance(name, str):
            raise damaged(f"{what} {identity}'s name", name, "text")
        names.append(name)
    return names


def metric_key(name: str) -> str:
    """--metric as stored: `time` is real_time (the manual/GPU time), as in compare."""
    return "real_time" if name in ("time", "") else name


def series(
    db: sqlite3.Connection, benchmark: str, metric: str, gpu: str | None = None
) -> list[Point]:
    """The benchmark's values of `metric` per run (runs that have them), oldest first."""
    path = _db_path(db)
    found = db.execute("SELECT id FROM benchmarks WHERE name = ?", (benchmark,)).fetchone()
    if found is None:
        raise InputError(
            f"{path}: no benchmark {benchmark!r} in the history{_close(db, benchmark)}"
        )
    key = metric_key(metric)
    metric_row = db.execute("SELECT id FROM metrics WHERE name = ?", (key,)).fetchone()
    query = (
        f"SELECT {_RUN_COLUMNS}, s.value FROM samples s JOIN runs r ON r.id = s.run_id "
        "WHERE s.benchmark_id = ? AND s.metric_id = ?"
    )
    parameters: list[Any] = [found[0], metric_row[0] if metric_row else -1]
    if gpu is not None:
        query += " AND r.gpu_slug = ?"
        parameters.append(gpu)
    query += " ORDER BY r.date, r.id, s.repetition"
    errors = {run: e for (run, benchmark), e in failed_runs(db).items() if benchmark == found[0]}
    points: list[Point] = []
    current: tuple[Any, ...] | None = None
    values: list[float] = []
    for row in db.execute(query, parameters):
        if current is None or row[0] != current[0]:
            if current is not None:
                points.append(Point(_run(current), np.asarray(values), errors.get(current[0])))
            current, values = row[:7], []
        if not isinstance(row[7], (int, float)):
            raise damaged(f"a sample of {benchmark} in run {row[0]}", row[7], "a number")
        values.append(row[7])
    if current is not None:
        points.append(Point(_run(current), np.asarray(values), errors.get(current[0])))
    if not points:
        has = texts(
            db.execute(
                "SELECT DISTINCT m.id, m.name FROM samples s JOIN metrics m ON m.id = s.metric_id "
                "WHERE s.benchmark_id = ? ORDER BY m.name",
                (found[0],),
            ),
            "metric",
        )
        gpus = [
            slug or "(no GPU)"
            for slug in gpu_slugs(
                db,
                "SELECT r.id, r.gpu_slug FROM run_benchmarks b JOIN runs r ON r.id = b.run_id "
                "WHERE b.benchmark_id = ?",
                (found[0],),
            )
        ]
        if gpu is not None and gpu not in gpus:
            raise InputError(
                f"--gpu {gpu}: no run of {benchmark} on that GPU; it was measured on "
                f"{', '.join(gpus)}"
            )
        if not has:  # every run of it failed or was skipped: say so, not "--metric time"
            why = db.execute(
                "SELECT b.error, b.skipped FROM run_benchmarks b JOIN runs r ON r.id = b.run_id "
                "WHERE b.benchmark_id = ? ORDER BY r.date DESC, r.id DESC LIMIT 1",
                (found[0],),
            ).fetchone()
            error, skipped = why if why is not None else (None, None)
            said = f"error: {error}" if error else f"skipped: {skipped}" if skipped else "none"
            raise InputError(f"{benchmark} has no values in any run (the latest: {said})")
        raise InputError(
            f"--metric {metric}: {benchmark} has no {key} values"
            + (f" on {gpu}" if gpu else "")
            + f"; it has {', '.join(has)}"
        )
    # Only the anchoring phrase and the keys of a slowdown on purpose of each run's context: a
    # year of nightlies' whole contexts (with their kernel records) would be parsed for one line
    # each.
    marks = {
        int(row[0]): dict(zip(_MARK_KEYS, row[1:]))
        for row in db.execute(
            f"SELECT id, {_MARK_COLUMNS} FROM runs WHERE id IN "
            "(SELECT DISTINCT run_id FROM samples WHERE benchmark_id = ? AND metric_id = ?)",
            parameters[:2],
        )
    }
    return [
        dataclasses.replace(
            point,
            run=dataclasses.replace(
                point.run,
                anchor=anchoring(marks.get(point.run.id, {})),
                slowed=slowed_on_purpose(marks.get(point.run.id, {})),
                occupied=occupied(marks.get(point.run.id, {})),
            ),
        )
        for point in points
    ]


# What `show`, `changes` and the trends read of a run's context: its anchoring, whether it was
# slowed down on purpose (a run made with --kernelwatch_inject is no point of a series), and the
# other processes on its GPU (a list, read joined as a run's line shows it).
_MARK_KEYS = (ANCHOR_KEY, HARNESS_INJECT_KEY, SELFTEST_ROLE_KEY, SELFTEST_LEVEL_KEY, OCCUPANTS_KEY)
_MARK_COLUMNS = ", ".join(
    f"CASE WHEN json_valid(context) THEN json_extract(context, '$.{key}') END"
    for key in _MARK_KEYS[:-1]
) + (
    ", CASE WHEN json_valid(context) THEN (SELECT group_concat(value, ', ') FROM "
    f"json_each(context, '$.{OCCUPANTS_KEY}')) END"
)


def slowed_runs(db: sqlite3.Connection) -> set[int]:
    """The runs slowed down on purpose (results.slowed_on_purpose): `changes` and the report's
    trends leave them out of every series (`history list` marks them)."""
    return {
        int(row[0])
        for row in db.execute(f"SELECT id, {_MARK_COLUMNS} FROM runs")
        if slowed_on_purpose(dict(zip(_MARK_KEYS, row[1:])))
    }


def gpu_slugs(
    db: sqlite3.Connection, query: str, parameters: Sequence[Any] = ()
) -> list[str | None]:
    """The distinct GPU slugs of the runs `query` selects (id, gpu_slug), in order, None among
    them where a run records no GPU; a BLOB one is refused, as `texts` says."""
    slugs: set[str | None] = set()
    for run_id, slug in db.execute(query, parameters):
        if slug is not None and not isinstance(slug, str):
            raise damaged(f"run {run_id}'s gpu_slug", slug, "text")
        slugs.add(slug)
    return sorted(slugs, key=lambda slug: (slug is not None, slug or ""))


def failed_runs(db: sqlite3.Connection) -> dict[tuple[int, int], str]:
    """(run id, benchmark id) -> the error, where a benchmark failed in a run (in any repetition:
    compare's ERROR). Few: read whole."""
    rows = db.execute(
        "SELECT run_id, benchmark_id, error FROM run_benchmarks WHERE error IS NOT NULL"
    )
    return {(int(run), int(benchmark)): str(error) for run, benchmark, error in rows}


def runs_without_gpu(db: sqlite3.Connection) -> int:
    """How many runs record no GPU (no slug): they are in no series."""
    return int(db.execute("SELECT COUNT(*) FROM runs WHERE gpu_slug IS NULL").fetchone()[0])


def _close(db: sqlite3.Connection, name: str) -> str:
    import difflib

    names = [r[0] for r in db.execute("SELECT name FROM benchmarks")]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _db_path(db: sqlite3.Connection) -> str:
    row = db.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else "history"


def summary(values: np.ndarray) -> tuple[float, float, float, int]:
    """median, min, max, n of one run's values."""
    if not len(values):
        return math.nan, math.nan, math.nan, 0
    return (
        float(np.median(values)),
        float(values.min()),
        float(values.max()),
        len(values),
    )


# `history list --format json` and `history show --format json`: the runs, and one benchmark's
# series, as JSON documents (schema in docs/history.md). The tables say the same things.


# Bump on any change to these documents that could break a reader (renames, removals, meaning).
SCHEMA_VERSION = 1


def _run_document(run: Run) -> dict[str, Any]:
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
        "shared_gpu": run.occupied,
    }


def runs_document(db: str | Path, runs: Sequence[Run]) -> dict[str, Any]:
    """`history list`: every run, oldest first."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "history list",
        "db": str(db),
        "runs": [_run_document(run) for run in runs],
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
                **_run_document(point.run),
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
