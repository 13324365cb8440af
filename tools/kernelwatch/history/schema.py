"""The history database's schema and opening: the migrations, and a connection that is either
read-only (the reading commands) or migrated to SCHEMA_VERSION (ingest).

Opening a database applies the missing migrations (MIGRATIONS, version -> statements) in one
transaction; a database written by a newer kernelwatch (a larger schema_version) is refused.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kernelwatch import project
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import check_input_file

SCHEMA_VERSION = 4
# The oldest schema the reading commands read as it is (they never migrate): version 2 only
# dropped an index no query reads, and versions 3 and 4 added a column and a table only ingest
# reads, so a nightly's database is readable before its next ingest.
READABLE_FROM = 1

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
    # No query reads the samples by run (every read goes by the primary key, and a replaced or
    # removed run's values are deleted by it: intake._drop_values), and the index held 38 % of
    # the file: a year of two GPUs' nightlies, 1.3 GB with it (scripts/scale_bench.py). Its
    # pages are reused by the next runs ingested.
    2: ("DROP INDEX samples_by_run",),
    # A run's identity outside its content (`ingest --key`: nightly.yml's nightly/<run id>/<gpu>):
    # a re-run job measures a shard again, and its merge is another result of the same night,
    # which the content hash takes for a new run. Null for the runs ingested without one.
    3: (
        "ALTER TABLE runs ADD COLUMN run_key TEXT",
        "CREATE UNIQUE INDEX runs_by_key ON runs (run_key) WHERE run_key IS NOT NULL",
    ),
    # The results that a later attempt under their key replaced (intake._replace; or found
    # older than the run under it): their content hash, gone from `runs`, was taken for a new
    # run when such a file was ingested again (a second run of the night), and under its key
    # it replaced the newer attempt back. Read by ingest only.
    4: (
        """CREATE TABLE replaced_results (
            content_hash TEXT PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs (id),
            run_key TEXT NOT NULL
        ) WITHOUT ROWID""",
    ),
}


DEFAULT = Path("results", "history.sqlite")
NAME_DB = "name the database with --db PATH"


def default_path() -> Path:
    """results/history.sqlite in the project being measured (kernelwatch.project); refuses
    without one, so that no database is started in whatever folder the command ran from."""
    return project.root(NAME_DB) / DEFAULT


def found_path() -> Path | None:
    """The default database's path where there is a project, else None (report reads it only
    when it is there)."""
    found = project.find()
    return None if found is None else found / DEFAULT


def _folder_for(db: Path) -> None:
    """The folder of a new database: only the default's (results/, not in git) is made; a
    mistyped --db must not grow a tree of folders (files.check_writable's rule)."""
    parent = db.parent
    if parent.is_dir():
        return
    default = found_path()
    if parent.exists() or default is None or db.resolve() != default.resolve():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise InputError(f"{db}: cannot create: the folder {parent} {what}")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{db}: cannot create: {exc.strerror or exc}") from None


# SQLite's errors of a database that is sound but cannot be used now (a full disk, a read-only
# folder): worded as such, not as "not a usable database", which sends the user to a sound file.
_CANNOT = {
    sqlite3.SQLITE_BUSY: "busy",
    sqlite3.SQLITE_LOCKED: "busy",
    sqlite3.SQLITE_READONLY: "cannot write",
    sqlite3.SQLITE_IOERR: "cannot read or write",
    sqlite3.SQLITE_FULL: "cannot write",
    sqlite3.SQLITE_CANTOPEN: "cannot open",
    sqlite3.SQLITE_PERM: "cannot open",
}


def _fail(path: Path, exc: BaseException) -> InputError:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _CANNOT:  # (extended codes: the low byte)
        return InputError(f"{path}: {_CANNOT[code & 0xFF]}: {exc}")
    return InputError(f"{path}: not a usable kernelwatch history database ({exc})")


def damaged(what: str, value: Any, kind: str) -> InputError:
    """A value of another type than its column's: SQLite stores what a hand edit wrote. A long
    one is cut (a 5,000-character text in a count column made a line of 5,000 characters)."""
    shown = shortened(repr(value), 60)
    return InputError(f"a damaged history database: {what} holds {shown}, not {kind}")


def rollback(connection: sqlite3.Connection) -> None:
    """End a failed transaction, if SQLite has not: it rolls back by itself on some errors (a
    full disk), and a ROLLBACK then fails, hiding the error that ended it."""
    if connection.in_transaction:
        connection.execute("ROLLBACK")


def open_db(path: str | Path, create: bool = False) -> sqlite3.Connection:
    """Open (with create, make) the database and bring its schema to SCHEMA_VERSION. Without
    create (the reading commands) it is opened read-only and never written: an empty file or
    an older schema is refused, not migrated. A new database goes in an existing folder, or
    in the checkout's results/ (made when missing)."""
    db = Path(path)
    mode = _mode(db)
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{db}: is a directory, not a history database")
    # (a FIFO: SQLite's open waits for a writer for ever; /dev/null: an ingest "stored" the run
    # nowhere and left null-journal beside it)
    check_input_file(db, "a history database", pipe=False)
    if not create and mode is not None:
        return _open_read_only(db)
    if mode is None:
        if not create:
            raise InputError(
                f"{db}: no history database; add a run with: kernelwatch history ingest "
                "RESULT.json"
            )
        _folder_for(db)
    try:
        # isolation_level=None: transactions are explicit (BEGIN ... COMMIT) below.
        connection = sqlite3.connect(str(db), timeout=30, isolation_level=None)
    except sqlite3.Error as exc:
        raise _fail(db, exc) from None

    def prepare() -> None:
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection, db)

    return _prepared(connection, db, prepare)


def _mode(db: Path) -> int | None:
    """The database file's mode; None where there is none. One line where it cannot be looked
    at: pathlib's is_dir() and exists() raise PermissionError (an internal error) where a folder
    on the way may not be searched."""
    try:
        return os.stat(db).st_mode
    except (FileNotFoundError, NotADirectoryError):  # (_folder_for words the latter)
        return None
    except OSError as exc:
        raise InputError(f"{db}: cannot read: {exc.strerror or exc}") from None


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
        if not READABLE_FROM <= version <= SCHEMA_VERSION:
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
    # Every object, not only tables: another program's database of views only was taken for an
    # empty one, and an ingest added the history's tables to it.
    objects: dict[str, str] = dict(connection.execute("SELECT name, type FROM sqlite_master"))
    if objects.get("meta") != "table":
        if objects:
            raise InputError(
                f"{path}: not a kernelwatch history database (it holds "
                f"{', '.join(sorted(objects))}; no meta table)"
            )
        return 0
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:  # (kernelwatch writes its meta table and the version in one transaction)
        raise InputError(
            f"{path}: not a kernelwatch history database (its meta table has no schema_version)"
        )
    try:
        version = int(row[0])
    except (TypeError, ValueError):
        version = -1
    if version < 0:
        raise InputError(f"{path}: bad schema_version {row[0]!r} in its meta table")
    return version


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
        rollback(connection)
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
