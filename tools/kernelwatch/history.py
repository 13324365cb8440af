"""The results history: every ingested run in one SQLite database (standard library only).

Layout (schema version 1; docs/history.md says why it is shaped so):

    meta(key PRIMARY KEY, value)                 schema_version lives here
    runs(id, content_hash UNIQUE, source, gpu_slug, gpu_name, git_commit, run_date, date,
         ingested_at, benchmarks, context)       one row per ingested result file
    benchmarks(id, name UNIQUE)                  names, stored once
    metrics(id, name UNIQUE)                     real_time, cpu_time, counters
    run_benchmarks(run_id, benchmark_id, repetitions, from_aggregates, error, skipped)
    samples(benchmark_id, metric_id, run_id, repetition, value)   one value per row, times in ns

Opening a database applies the missing migrations (MIGRATIONS, version -> statements) in one
transaction; a database written by a newer kernelwatch (a larger schema_version) is refused.
An ingest is one transaction too: all of a run or nothing. A run is identified by the sha256
of its canonical JSON (context + benchmarks), so ingesting the same file twice is a no-op.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.baseline import context_slug, project_root
from kernelwatch.errors import InputError
from kernelwatch.files import strict_json
from kernelwatch.gbench import read_json
from kernelwatch.provenance import slowed_on_purpose
from kernelwatch.results import ResultSet, from_documents

SCHEMA_VERSION = 1

# version -> the statements that take a database from version - 1 to version. Append only:
# a released migration is never edited, a change of schema is a new version.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            content_hash TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            gpu_slug TEXT,
            gpu_name TEXT,
            git_commit TEXT,
            run_date TEXT,
            date TEXT NOT NULL,
            ingested_at TEXT NOT NULL,
            benchmarks INTEGER NOT NULL,
            context TEXT NOT NULL
        )""",
        "CREATE INDEX runs_by_gpu_date ON runs (gpu_slug, date)",
        "CREATE TABLE benchmarks (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        "CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        """CREATE TABLE run_benchmarks (
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            benchmark_id INTEGER NOT NULL REFERENCES benchmarks (id),
            repetitions INTEGER NOT NULL,
            from_aggregates INTEGER NOT NULL,
            error TEXT,
            skipped TEXT,
            PRIMARY KEY (run_id, benchmark_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE samples (
            benchmark_id INTEGER NOT NULL,
            metric_id INTEGER NOT NULL,
            run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            repetition INTEGER NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (benchmark_id, metric_id, run_id, repetition)
        ) WITHOUT ROWID""",
        "CREATE INDEX samples_by_run ON samples (run_id)",
    ),
}

_KNOWN_TABLES = frozenset({"meta", "runs", "benchmarks", "metrics", "run_benchmarks", "samples"})


def default_path() -> Path:
    """results/history.sqlite in the checkout (the current folder for an installed package)."""
    return project_root() / "results" / "history.sqlite"


@dataclass(frozen=True)
class Run:
    id: int
    date: str
    git_commit: str | None
    gpu_slug: str | None
    gpu_name: str | None
    benchmarks: int
    source: str
    slowed: str | None = None  # slowed down on purpose (provenance.slowed_on_purpose)


@dataclass(frozen=True)
class Point:
    """One run's values of one benchmark's metric."""

    run: Run
    values: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.values))


@dataclass(frozen=True)
class Ingested:
    run_id: int
    new: bool  # False: the same run was already there; nothing written
    benchmarks: int
    samples: int
    slowed: str | None = None  # slowed down on purpose (provenance.slowed_on_purpose)


# ---------------------------------------------------------------------------------- opening


def _fail(path: Path, exc: BaseException) -> InputError:
    return InputError(f"{path}: not a usable kernelwatch history database ({exc})")


def open_db(path: str | Path, create: bool = False) -> sqlite3.Connection:
    """Open (with create, make) the database and bring its schema to SCHEMA_VERSION. Without
    create (the reading commands) it is opened read-only and never written: an empty file or
    an older schema is refused, not migrated."""
    db = Path(path)
    if db.is_dir():
        raise InputError(f"{db}: is a directory, not a history database")
    if not create and db.exists():
        return _open_read_only(db)
    if not db.exists():
        if not create:
            raise InputError(
                f"{db}: no history database; add a run with: kernelwatch history ingest "
                "RESULT.json"
            )
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{db}: cannot create: {exc.strerror or exc}") from None
    try:
        # isolation_level=None: transactions are explicit (BEGIN ... COMMIT) below.
        connection = sqlite3.connect(str(db), timeout=30, isolation_level=None)
    except sqlite3.Error as exc:
        raise _fail(db, exc) from None

    def prepare() -> None:
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection, db)

    return _prepared(connection, db, prepare)


def _prepared(
    connection: sqlite3.Connection, db: Path, prepare: Callable[[], None]
) -> sqlite3.Connection:
    """`connection` once `prepare` has run on it; closed, and one InputError line, if it fails."""
    try:
        prepare()
    except InputError:
        connection.close()
        raise
    except sqlite3.Error as exc:
        connection.close()
        raise _fail(db, exc) from None
    return connection


def _open_read_only(db: Path) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    except (sqlite3.Error, ValueError) as exc:
        raise _fail(db, exc) from None

    def check() -> None:
        version = schema_version(connection, db)
        if version == 0:
            raise InputError(
                f"{db}: an empty file, not a history database yet; add a run with: kernelwatch "
                "history ingest RESULT.json"
            )
        if version != SCHEMA_VERSION:
            raise InputError(
                f"{db}: history schema version {version} is "
                + (
                    f"newer than this kernelwatch understands ({SCHEMA_VERSION}); use a newer "
                    "kernelwatch"
                    if version > SCHEMA_VERSION
                    else "older: `kernelwatch history ingest` brings it up to date"
                )
            )

    return _prepared(connection, db, check)


def schema_version(connection: sqlite3.Connection, path: Path) -> int:
    """The database's schema version: 0 for an empty database."""
    tables = {
        row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if "meta" not in tables:
        if tables:
            raise InputError(
                f"{path}: not a kernelwatch history database (tables "
                f"{', '.join(sorted(tables))}; no meta table)"
            )
        return 0
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    try:
        return int(row[0]) if row else 0
    except (TypeError, ValueError):
        raise InputError(f"{path}: bad schema_version {row[0]!r} in its meta table") from None


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    connection.execute("BEGIN IMMEDIATE")  # one writer migrates; the others wait, then see it
    try:
        version = schema_version(connection, path)
        if version > SCHEMA_VERSION:
            raise InputError(
                f"{path}: history schema version {version} is newer than this kernelwatch "
                f"understands ({SCHEMA_VERSION}); use a newer kernelwatch"
            )
        if version < SCHEMA_VERSION:
            if version == 0:
                connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[step]:
                    connection.execute(statement)
            connection.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


@contextmanager
def database(path: str | Path, create: bool = False) -> Iterator[sqlite3.Connection]:
    connection = open_db(path, create=create)
    try:
        yield connection
    except sqlite3.Error as exc:
        raise _fail(Path(path), exc) from None
    finally:
        connection.close()


# ---------------------------------------------------------------------------------- ingest


def content_hash(document: Mapping[str, Any]) -> str:
    """sha256 of the run's canonical JSON: context and benchmarks, keys sorted, no spaces.
    The same run reformatted (indentation, key order) hashes the same. Not written anywhere:
    plain json.dumps, so that the hashes of runs already stored (NaN and all) stay the same."""
    canonical = json.dumps(
        {"context": document.get("context", {}), "benchmarks": document["benchmarks"]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def normalized_date(value: Any) -> str | None:
    """An ISO 8601 date as UTC `YYYY-MM-DDTHH:MM:SS+00:00` (sorts as text); naive dates are
    kept as written (no zone to convert from); None when it is not a date."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.isoformat(timespec="seconds")
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def load_run(path: str | Path) -> tuple[dict[str, Any], ResultSet]:
    """Read and validate one result file, as `compare` does (same checks and messages)."""
    file = Path(path)
    if file.is_dir():
        raise InputError(f"{file}: is a directory; ingest one result file at a time")
    if not file.exists():
        raise InputError(f"{file}: no such file or directory")
    document = read_json(file)
    result = from_documents(str(file), [document])  # validates: not a result, bad values, ...
    return document, result


def ingest(path: str | Path, db_path: str | Path) -> Ingested:
    """Store one result file in the history (one transaction); a run already there is a no-op."""
    document, result = load_run(path)
    digest = content_hash(document)
    context = dict(result.context)
    run_date = context.get("date") or context.get("kernelwatch_run_started")
    if run_date is not None and normalized_date(run_date) is None:
        key = "date" if context.get("date") else "kernelwatch_run_started"
        raise InputError(
            f"{path}: the context's {key} is {json.dumps(run_date)[:60]}, not an ISO 8601 date "
            "(as Google Benchmark writes it: 2025-01-31T12:00:00+00:00); a run is stored at "
            "the date it was measured"
        )
    ingested_at = _now()
    date = normalized_date(run_date) or ingested_at
    slowed = slowed_on_purpose(context)
    with database(db_path, create=True) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            found = db.execute(
                "SELECT id, benchmarks FROM runs WHERE content_hash = ?", (digest,)
            ).fetchone()
            if found:
                db.execute("ROLLBACK")
                return Ingested(int(found[0]), False, int(found[1]), 0, slowed)
            cursor = db.execute(
                "INSERT INTO runs (content_hash, source, gpu_slug, gpu_name, git_commit, "
                "run_date, date, ingested_at, benchmarks, context) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    digest,
                    str(path),
                    _slug(context),
                    _text(context.get("gpu_name")),
                    _text(context.get("kernelwatch_git_commit")),
                    _text(run_date),
                    date,
                    ingested_at,
                    len(result.names),
                    strict_json(context, indent=None, sort_keys=True),
                ),
            )
            run_id = int(cursor.lastrowid or 0)
            samples = _store_values(db, run_id, result)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return Ingested(run_id, True, len(result.names), samples, slowed)


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _slug(context: Mapping[str, Any]) -> str | None:
    try:
        return context_slug(context)
    except InputError:  # a GPU name that makes no slug: keep the run, without one
        return None


def _ids(db: sqlite3.Connection, table: str, names: Sequence[str]) -> dict[str, int]:
    db.executemany(f"INSERT OR IGNORE INTO {table} (name) VALUES (?)", ((n,) for n in names))
    ids: dict[str, int] = {}
    wanted = list(dict.fromkeys(names))
    for start in range(0, len(wanted), 500):  # stay under SQLite's bound-variable limit
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row_id, name in db.execute(
            f"SELECT id, name FROM {table} WHERE name IN ({marks})", chunk
        ):
            ids[name] = int(row_id)
    return ids


def _store_values(db: sqlite3.Connection, run_id: int, result: ResultSet) -> int:
    benchmark_ids = _ids(db, "benchmarks", result.names)
    metric_ids = _ids(db, "metrics", list(result.columns))
    db.executemany(
        "INSERT INTO run_benchmarks (run_id, benchmark_id, repetitions, from_aggregates, "
        "error, skipped) VALUES (?, ?, ?, ?, ?, ?)",
        (
            (
                run_id,
                benchmark_ids[name],
                int(result.counts[k]),
                int(bool(result.from_aggregates[k])),
                result.errors.get(name),
                result.skipped.get(name),
            )
            for k, name in enumerate(result.names)
        ),
    )
    counts = np.asarray(result.counts, dtype=np.int64)
    starts = np.asarray(result.starts, dtype=np.int64)
    rows = int(counts.sum())
    owner = np.repeat(np.arange(len(counts)), counts)  # benchmark index of each row
    repetition = np.arange(rows) - np.repeat(starts, counts)
    bench_id = np.asarray([benchmark_ids[n] for n in result.names], dtype=np.int64)[owner]
    stored = 0
    for key, column in result.columns.items():
        keep = np.isfinite(column)  # absent values are NaN (gaps); non-finite are not stored
        gap = result.gaps.get(key)
        if gap is not None:
            keep &= ~gap
        chosen = np.flatnonzero(keep)
        metric_id = metric_ids[key]
        db.executemany(
            "INSERT INTO samples (benchmark_id, metric_id, run_id, repetition, value) "
            "VALUES (?, ?, ?, ?, ?)",
            zip(
                bench_id[chosen].tolist(),
                [metric_id] * len(chosen),
                [run_id] * len(chosen),
                repetition[chosen].tolist(),
                column[chosen].tolist(),
            ),
        )
        stored += len(chosen)
    return stored


# ---------------------------------------------------------------------------------- queries

_RUN_COLUMNS = "r.id, r.date, r.git_commit, r.gpu_slug, r.gpu_name, r.benchmarks, r.source"


def _run(row: Sequence[Any]) -> Run:
    return Run(int(row[0]), row[1], row[2], row[3], row[4], int(row[5]), row[6])


def runs(db: sqlite3.Connection) -> list[Run]:
    """Every run, oldest first (by the date in its context, then by ingest order)."""
    return [
        dataclasses.replace(_run(row), slowed=_slowed(row[-1]))
        for row in db.execute(f"SELECT {_RUN_COLUMNS}, r.context FROM runs r ORDER BY r.date, r.id")
    ]


def _slowed(context_json: Any) -> str | None:
    try:
        context = json.loads(context_json)
    except (TypeError, ValueError):
        return None
    return slowed_on_purpose(context) if isinstance(context, dict) else None


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
    points: list[Point] = []
    current: tuple[Any, ...] | None = None
    values: list[float] = []
    for row in db.execute(query, parameters):
        if current is None or row[0] != current[0]:
            if current is not None:
                points.append(Point(_run(current), np.asarray(values)))
            current, values = row[:7], []
        values.append(row[7])
    if current is not None:
        points.append(Point(_run(current), np.asarray(values)))
    if not points:
        has = [
            r[0]
            for r in db.execute(
                "SELECT DISTINCT m.name FROM samples s JOIN metrics m ON m.id = s.metric_id "
                "WHERE s.benchmark_id = ? ORDER BY m.name",
                (found[0],),
            )
        ]
        gpus = [
            r[0] or "(no GPU)"
            for r in db.execute(
                "SELECT DISTINCT r.gpu_slug FROM run_benchmarks b JOIN runs r ON r.id = b.run_id "
                "WHERE b.benchmark_id = ? ORDER BY 1",
                (found[0],),
            )
        ]
        if gpu is not None and gpu not in gpus:
            raise InputError(
                f"--gpu {gpu}: no run of {benchmark} on that GPU; it was measured on "
                f"{', '.join(gpus)}"
            )
        raise InputError(
            f"--metric {metric}: {benchmark} has no {key} values"
            + (f" on {gpu}" if gpu else "")
            + (f"; it has {', '.join(has)}" if has else "")
        )
    return points


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
