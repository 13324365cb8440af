"""Ingesting a run into the history: one transaction, all of a run or nothing. A run is
identified by the sha256 of its canonical JSON (context + benchmarks), so ingesting the same
file twice is a no-op; by its measurement (its own date, GPU and commit, and every value it
would store), so that the same run written differently (rows in another order, a context key
added since) is a no-op too; and, where the caller gives one, by a key naming the result outside
its content (one workflow run's result of one GPU), so that a re-run's result replaces it. A
result so replaced stays replaced (the replaced_results table): ingested again, with its key or
without, it is a no-op.

Removing runs (`history remove`), the one other write: a run measured on a broken machine, or
a night stored twice, would otherwise stay a point of every series for good."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.baseline import context_slug
from kernelwatch.errors import InputError
from kernelwatch.files import printable, strict_json
from kernelwatch.gbench import read_json
from kernelwatch.history.queries import Run, runs
from kernelwatch.history.schema import damaged, database, rollback
from kernelwatch.levels import RUNS_KEY
from kernelwatch.loading import from_documents
from kernelwatch.results import ResultSet, check_times, slowed_on_purpose


@dataclass(frozen=True)
class Ingested:
    run_id: int
    new: bool  # False: the same run was already there; nothing written
    benchmarks: int
    samples: int
    slowed: str | None = None  # slowed down on purpose (results.slowed_on_purpose)
    replaced: bool = False  # it replaced the run stored before under its key
    keyed: bool = False  # not new, but its key was recorded on the run stored without one
    # Not new, its key not recorded: the run stored under another key (`stored_key`), or
    # stored without one while run `key_held_by` holds the key.
    stored_key: str | None = None
    key_held_by: int | None = None
    # Not new, and not the same file: the same measurement as run_id (_same_measurement),
    # written differently; the context keys in which the two differ (none: the rows only).
    differs: tuple[str, ...] | None = None
    # Not stored: another attempt's result under this key replaced it (run run_id), or
    # (older) it is dated before the run under its key, and is recorded as replaced by it now.
    replaced_by: str | None = None
    older: bool = False


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


def moment(value: Any) -> dt.datetime | None:
    """An ISO 8601 date or time as an aware datetime in UTC; None when it is not one (or the
    zone moves it past year 1 or 9999). A naive one is taken in UTC: the machine that wrote it
    is not known, and --since and --new-since take a naive time in UTC too, so one instant is
    one moment however it was written (docs/history.md)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=dt.UTC)
        return parsed.astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None


def normalized_date(value: Any) -> str | None:
    """An ISO 8601 date as UTC `YYYY-MM-DDTHH:MM:SS+00:00` (one format: sorts as text), a
    naive one taken in UTC (moment); None when it is not a date."""
    found = moment(value)
    return None if found is None else found.isoformat(timespec="seconds")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def load_run(path: str | Path) -> tuple[dict[str, Any], ResultSet]:
    """Read and validate one result file, as `compare` does (same checks and messages)."""
    file = Path(path)
    try:
        mode: int | None = os.stat(file).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError:  # a folder on the way that may not be searched: read_json says so, in one line
        mode = stat.S_IFREG
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{file}: is a directory; give one result file")  # ingest and report
    if mode is None:
        raise InputError(f"{file}: no such file or directory")
    document = read_json(file)
    result = from_documents(str(file), [document])  # validates: not a result, bad values, ...
    check_times(result)
    return document, result


def ingest(path: str | Path, db_path: str | Path, key: str | None = None) -> Ingested:
    """Store one result file in the history (one transaction); a run already there is a no-op.
    `key`: the result's identity outside its content, one workflow run's result of one GPU
    (nightly.yml: nightly/<run id>/<gpu>); a run stored under it before is another attempt's
    result of that run, and this one replaces it, keeping its id (_replace), unless this one is
    dated before it (an earlier attempt, _older). A result once replaced is never stored again
    (_replaced_by)."""
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
    pooled = context.get(RUNS_KEY)
    if isinstance(pooled, list) and len(pooled) > 1:
        # One point of a series is one run at one commit; a pool's rows come from several.
        raise InputError(
            f"{path}: a baseline pooled from {len(pooled)} runs (baseline update RUN1 RUN2 ...), "
            "not one run: ingest the runs it was made from"
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
                if not isinstance(found[1], int):
                    raise damaged(f"run {found[0]}'s benchmarks", found[1], "a count")
                keyed = _record_key(db, found[0], key)
                held = {} if keyed else _key_elsewhere(db, found[0], key)
                db.execute("COMMIT" if keyed else "ROLLBACK")
                return Ingested(int(found[0]), False, found[1], 0, slowed, keyed=keyed, **held)
            replacing = _replaced_by(db, digest)
            if replacing is not None:
                db.execute("ROLLBACK")
                return Ingested(
                    replacing[0], False, len(result.names), 0, slowed, replaced_by=replacing[1]
                )
            columns = {
                "content_hash": digest,
                "source": printable(str(path)),  # (a name that is not UTF-8)
                "gpu_slug": _slug(context),
                "gpu_name": _text(context.get("gpu_name")),
                "git_commit": _text(context.get("kernelwatch_git_commit")),
                "run_date": _text(run_date),
                "date": date,
                "ingested_at": ingested_at,
                "benchmarks": len(result.names),
                "context": strict_json(context, indent=None, sort_keys=True),
                **({} if key is None else {"run_key": key}),
            }
            earlier = None if key is None else _under_key(db, path, key, columns)
            if earlier is not None and key is not None and _older(db, earlier, columns):
                _record_replaced(db, digest, earlier, key)
                db.execute("COMMIT")
                return Ingested(
                    earlier, False, len(result.names), 0, slowed, replaced_by=key, older=True
                )
            same = None if run_date is None else _same_measurement(db, result, columns, earlier)
            if same is not None:
                keyed = earlier is None and _record_key(db, same[0], key)
                held = {} if keyed else _key_elsewhere(db, same[0], key)
                db.execute("COMMIT" if keyed else "ROLLBACK")
                return Ingested(
                    same[0],
                    False,
                    len(result.names),
                    0,
                    slowed,
                    differs=same[1],
                    keyed=keyed,
                    **held,
                )
            if earlier is None:
                given = _id_after_removed(db)
                row = columns if given is None else {"id": given, **columns}
                cursor = db.execute(
                    f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
                run_id = int(cursor.lastrowid or 0)
            else:
                run_id = earlier
                _replace(db, run_id, columns)
            samples = _store_values(db, run_id, result)
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            raise
    return Ingested(run_id, True, len(result.names), samples, slowed, earlier is not None)


def stored_run(
    db: sqlite3.Connection, document: Mapping[str, Any], result: ResultSet
) -> int | None:
    """The id of a run already in the history as ingest knows it: the same file (its content
    hash), or the same measurement written otherwise (_same_measurement); None. The report
    finds "this run" in its trends so: by the hash alone, a result that `run --anchor`
    rewrote after it was ingested was not found there."""
    found = db.execute(
        "SELECT id FROM runs WHERE content_hash = ?", (content_hash(document),)
    ).fetchone()
    if found:
        return int(found[0])
    context = dict(result.context)
    date = normalized_date(context.get("date") or context.get("kernelwatch_run_started"))
    if date is None:
        return None
    columns = {
        "date": date,
        "gpu_slug": _slug(context),
        "git_commit": _text(context.get("kernelwatch_git_commit")),
        "context": strict_json(context, indent=None, sort_keys=True),
    }
    same = _same_measurement(db, result, columns, None)
    return None if same is None else same[0]


def _same_measurement(
    db: sqlite3.Connection, result: ResultSet, columns: Mapping[str, Any], earlier: int | None
) -> tuple[int, tuple[str, ...]] | None:
    """The run already stored with the same measurement as `result`: its own date (to the
    second), GPU and commit, and the same benchmarks with every value it would store, to the
    bit; with the context keys in which the two differ. Another file of the same run (its rows
    in another order, numbers written otherwise, `kernelwatch_anchor` added when `run` rewrote
    it) hashes differently, and was a second point of every series, which narrows the spread.
    Two runs of one commit on one night differ in their start and in their values: both stay.
    `earlier`, the run under the caller's --key, is left out: the key replaces it. None: none."""
    date = columns["date"]
    found = db.execute(
        # (an older kernelwatch stored a naive date as written: the same moment taken in UTC)
        "SELECT id, benchmarks, context FROM runs WHERE gpu_slug IS ? AND date IN (?, ?) "
        "AND git_commit IS ? AND run_date IS NOT NULL AND id IS NOT ? ORDER BY id",
        (columns["gpu_slug"], date, date[:19], columns["git_commit"], earlier),
    ).fetchall()
    if not found:
        return None
    entries = {
        (name, int(result.counts[k]), int(bool(result.from_aggregates[k]))): (
            result.errors.get(name),
            result.skipped.get(name),
        )
        for k, name in enumerate(result.names)
    }
    values: dict[tuple[str, str], list[float]] | None = None
    for run_id, benchmarks, stored_context in found:
        if benchmarks != len(result.names) or _entries(db, run_id) != entries:
            continue
        if values is None:
            values = {}
            for key, owner, _, value in _kept(result):
                for k, v in zip(owner.tolist(), value.tolist()):
                    values.setdefault((result.names[k], key), []).append(v)
            for found_values in values.values():
                found_values.sort()
        if _stored_values(db, run_id) == values:
            return int(run_id), _context_keys(stored_context, columns["context"])
    return None


def _entries(
    db: sqlite3.Connection, run_id: int
) -> dict[tuple[str, int, int], tuple[str | None, str | None]]:
    rows = db.execute(
        "SELECT b.name, rb.repetitions, rb.from_aggregates, rb.error, rb.skipped "
        "FROM run_benchmarks rb JOIN benchmarks b ON b.id = rb.benchmark_id WHERE rb.run_id = ?",
        (run_id,),
    )
    return {(name, n, aggregates): (error, skipped) for name, n, aggregates, error, skipped in rows}


def _stored_values(db: sqlite3.Connection, run_id: int) -> dict[tuple[str, str], list[float]]:
    """Every value of run `run_id`, sorted, per benchmark and metric (in any order of its
    repetitions: a file with its rows in another order numbers them otherwise). Found by the
    samples' primary key, each benchmark's and metric's (no index by run since schema version
    2; _replace deletes them so)."""
    rows = db.execute(
        "SELECT b.name, m.name, s.value FROM run_benchmarks rb "
        "JOIN benchmarks b ON b.id = rb.benchmark_id CROSS JOIN metrics m "
        "JOIN samples s ON s.benchmark_id = rb.benchmark_id AND s.metric_id = m.id "
        "AND s.run_id = rb.run_id WHERE rb.run_id = ?",
        (run_id,),
    )
    values: dict[tuple[str, str], list[float]] = {}
    for name, metric, value in rows:
        values.setdefault((name, metric), []).append(value)
    for found in values.values():
        found.sort()
    return values


def _context_keys(stored: Any, context: str) -> tuple[str, ...]:
    """The keys whose values differ between a stored context and this one (both as stored)."""
    try:
        before = json.loads(stored)
    except (TypeError, ValueError, RecursionError):
        before = None
    after = json.loads(context)
    if not isinstance(before, dict):
        return ("(the stored context is damaged)",)
    return tuple(sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)))


def _record_key(db: sqlite3.Connection, run_id: int, key: str | None) -> bool:
    """Give `key` to run `run_id`, stored before without one, where no run holds it: ingested
    first without a key (by hand, from a kept file) and then by the nightly under one, the run
    kept no key, and that workflow run's re-run was stored as a second run. True: recorded."""
    if key is None:
        return False
    cursor = db.execute(
        "UPDATE runs SET run_key = ? WHERE id = ? AND run_key IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM runs WHERE run_key = ?)",
        (key, run_id, key),
    )
    return cursor.rowcount == 1


def _key_elsewhere(db: sqlite3.Connection, run_id: int, key: str | None) -> dict[str, Any]:
    """Why `key` could not be recorded on run `run_id`, stored before (Ingested's fields): the
    run is stored under another key, or another run holds this one. Both runs stay; unsaid, a
    result stored by hand and its workflow run's re-run under the key stayed two runs of one
    night in every series. Nothing without a key, or where the run holds `key` itself."""
    if key is None:
        return {}
    (stored,) = db.execute("SELECT run_key FROM runs WHERE id = ?", (run_id,)).fetchone()
    if stored is not None:
        return {} if stored == key else {"stored_key": str(stored)}
    holder = db.execute("SELECT id FROM runs WHERE run_key = ?", (key,)).fetchone()
    return {} if holder is None else {"key_held_by": int(holder[0])}


def _under_key(
    db: sqlite3.Connection, path: str | Path, key: str, columns: Mapping[str, Any]
) -> int | None:
    """The id of the run stored under `key`, checked to be of the same GPU and commit: one
    workflow run's attempts measure one commit on one model, so another is a key given twice
    (a fixed one, a run id missing), and replacing would lose a night."""
    found = db.execute(
        "SELECT id, gpu_slug, git_commit FROM runs WHERE run_key = ?", (key,)
    ).fetchone()
    if found is None:
        return None
    run_id, slug, commit = found
    if not isinstance(run_id, int):
        raise damaged(f"the run id under key {key!r}", run_id, "an integer")
    for what, stored, given in (
        ("of", slug, columns["gpu_slug"]),
        ("of commit", commit, columns["git_commit"]),
    ):
        if stored != given:
            raise InputError(
                f"{path}: --key {key}: this result is {what} {given}, the run under it {what} "
                f"{stored} (run {run_id}); a key names one result of one workflow run, which a "
                "re-run replaces"
            )
    return run_id


def _replaced_by(db: sqlite3.Connection, digest: str) -> tuple[int, str] | None:
    """The run, and its key, that replaced the result of content hash `digest` (another
    attempt's under that key); None where none did."""
    found = db.execute(
        "SELECT run_id, run_key FROM replaced_results WHERE content_hash = ?", (digest,)
    ).fetchone()
    if found is None:
        return None
    run_id, key = found
    if not isinstance(run_id, int):
        raise damaged("a replaced result's run id", run_id, "an integer")
    return run_id, str(key)


def _record_replaced(db: sqlite3.Connection, digest: str, run_id: int, key: str) -> None:
    """Record the result of content hash `digest` as replaced by run `run_id` under `key`."""
    db.execute(
        "INSERT OR REPLACE INTO replaced_results (content_hash, run_id, run_key) VALUES (?, ?, ?)",
        (digest, run_id, key),
    )


def _older(db: sqlite3.Connection, run_id: int, columns: Mapping[str, Any]) -> bool:
    """Whether this result is dated before run `run_id`, stored under its key: an earlier
    attempt of the workflow run, ingested after a later one's (kept files ingested again out
    of order), which must not replace it. Only a strictly earlier date of its own tells: a
    merged result carries its earliest part's date, so a re-run of a failed shard is mostly
    dated as the first attempt, and then (or undated) the later ingest replaces."""
    if columns["run_date"] is None:
        return False
    found = db.execute(
        "SELECT date FROM runs WHERE id = ? AND run_date IS NOT NULL", (run_id,)
    ).fetchone()
    if found is None:
        return False
    stored, given = moment(found[0]), moment(columns["date"])
    return stored is not None and given is not None and given < stored


def _replace(db: sqlite3.Connection, run_id: int, columns: Mapping[str, Any]) -> None:
    """Drop run `run_id`'s values and give its row `columns`, in the caller's transaction; the
    new values are then stored under the same id. Its row is updated, not deleted: the samples
    have no index by run (schema version 2), so the cascade of a deleted run would scan them
    all; here they are found by their primary key, each benchmark's and metric's. The result
    it held is recorded as replaced (replaced_results): ingested again, it is not stored."""
    (held,) = db.execute("SELECT content_hash FROM runs WHERE id = ?", (run_id,)).fetchone()
    _record_replaced(db, held, run_id, columns["run_key"])
    _drop_values(db, run_id)
    db.execute(
        f"UPDATE runs SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
        (*columns.values(), run_id),
    )


def _drop_values(db: sqlite3.Connection, run_id: int) -> None:
    """Delete run `run_id`'s values, found by their primary key, each benchmark's and metric's:
    the samples have no index by run (schema version 2), so a cascade would scan them all."""
    db.execute(
        "DELETE FROM samples WHERE run_id = ? AND (benchmark_id, metric_id) IN "
        "(SELECT rb.benchmark_id, m.id FROM run_benchmarks rb CROSS JOIN metrics m "
        "WHERE rb.run_id = ?)",
        (run_id, run_id),
    )
    db.execute("DELETE FROM run_benchmarks WHERE run_id = ?", (run_id,))


# The meta key of the largest id a removed run held. SQLite gives a new run the largest id + 1,
# so removing the newest run gave its id to the next one: `history remove 5` run twice removed
# two runs. An id names one run for good.
_REMOVED_UP_TO = "removed_run_ids_up_to"


def _removed_up_to(db: sqlite3.Connection) -> int | None:
    found = db.execute("SELECT value FROM meta WHERE key = ?", (_REMOVED_UP_TO,)).fetchone()
    if found is None:
        return None
    try:
        return int(found[0])
    except (TypeError, ValueError):
        raise damaged(f"meta {_REMOVED_UP_TO}", found[0], "an integer") from None


def _id_after_removed(db: sqlite3.Connection) -> int | None:
    """A new run's id where runs were removed (past every id ever given); else None: SQLite's."""
    removed = _removed_up_to(db)
    if removed is None:
        return None
    (largest,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()
    return max(int(largest), removed) + 1


def remove(db_path: str | Path, run_ids: Sequence[int]) -> list[Run]:
    """Delete the runs `run_ids` (history list's ids) and all they stored, in one transaction:
    all of them or none (an id not in the history is refused). The results their keys replaced
    may be ingested again; a benchmark no run holds any more leaves the history. The runs as
    they were, in the order given."""
    with database(db_path):  # (one line where there is none, or not a history: none is made)
        pass
    with database(db_path, create=True) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            found = {run.id: run for run in runs(db, run_ids)}
            missing = [i for i in run_ids if i not in found]
            if missing:
                raise InputError(
                    f"{db_path}: no run {', '.join(map(str, missing))} in the history "
                    "(history list shows the runs)"
                )
            held = sorted(
                {
                    int(b)
                    for run_id in found
                    for (b,) in db.execute(
                        "SELECT benchmark_id FROM run_benchmarks WHERE run_id = ?", (run_id,)
                    )
                }
            )
            for run_id in found:
                _drop_values(db, run_id)
                db.execute("DELETE FROM replaced_results WHERE run_id = ?", (run_id,))
                db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_REMOVED_UP_TO, str(max(*found, _removed_up_to(db) or 0))),
            )
            # One statement: its NOT IN reads run_benchmarks once, not once per name.
            db.execute(
                "DELETE FROM benchmarks WHERE id IN (SELECT value FROM json_each(?)) AND id NOT "
                "IN (SELECT benchmark_id FROM run_benchmarks)",
                (json.dumps(held),),
            )
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            raise
    return [found[i] for i in dict.fromkeys(run_ids)]


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


def _kept(result: ResultSet) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per metric, the values stored (finite, no gap): each one's benchmark index (in
    result.names), repetition and value."""
    counts = np.asarray(result.counts, dtype=np.int64)
    starts = np.asarray(result.starts, dtype=np.int64)
    rows = int(counts.sum())
    owner = np.repeat(np.arange(len(counts)), counts)  # benchmark index of each row
    repetition = np.arange(rows) - np.repeat(starts, counts)
    for key, column in result.columns.items():
        keep = np.isfinite(column)  # absent values are NaN (gaps); non-finite are not stored
        gap = result.gaps.get(key)
        if gap is not None:
            keep &= ~gap
        chosen = np.flatnonzero(keep)
        yield key, owner[chosen], repetition[chosen], column[chosen]


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
    ids = np.asarray([benchmark_ids[n] for n in result.names], dtype=np.int64)
    stored = 0
    for key, owner, repetition, value in _kept(result):
        metric_id = metric_ids[key]
        db.executemany(
            "INSERT INTO samples (benchmark_id, metric_id, run_id, repetition, value) "
            "VALUES (?, ?, ?, ?, ?)",
            zip(
                ids[owner].tolist(),
                [metric_id] * len(value),
                [run_id] * len(value),
                repetition.tolist(),
                value.tolist(),
            ),
        )
        stored += len(value)
    return stored
