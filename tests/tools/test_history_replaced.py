"""`history ingest --key`: a result that a later attempt of the same workflow run replaced stays
replaced. Ingested again (a kept file, by hand or under its key) it was a second run of the
night, or it replaced the newer attempt back (docs/history.md, "ingest")."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import document
from kernelwatch import history
from kernelwatch.history import intake
from test_history import NIGHT, _series, as_of_version

KEY = "nightly/7/h100"
FIRST = {"BM_A": [10.0, 11.0, 12.0], "BM_B": [5.0, 6.0, 7.0]}
RERUN = {"BM_A": [20.0, 21.0, 22.0], "BM_B": [5.0, 6.0, 7.0]}
THIRD = {"BM_A": [30.0, 31.0, 32.0], "BM_B": [5.0, 6.0, 7.0]}


def _attempt(spec: dict[str, list[float]], **context: Any) -> dict[str, Any]:
    return document(spec, context=dict(NIGHT, kernelwatch_git_commit="c1", **context))


def _runs(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, run_key, source FROM runs ORDER BY id").fetchall()


def _values(spec: dict[str, list[float]], run: int = 1) -> list[tuple[int, str, float]]:
    return [(run, name, 1000.0 * us) for name, times in sorted(spec.items()) for us in times]


def _replaced_once(run_cli, write_json, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A under KEY, then the re-run's B under KEY (a merged result dated as the first attempt:
    its earliest part's date), which replaces it."""
    db = tmp_path / "h.sqlite"
    first = write_json("first.json", _attempt(FIRST))
    rerun = write_json("rerun.json", _attempt(RERUN))
    assert run_cli("history", "ingest", first, "--db", db, "--key", KEY).status == 0
    done = run_cli("history", "ingest", rerun, "--db", db, "--key", KEY)
    assert done.status == 0 and "replacing" in done.out, done.out
    assert _series(db) == _values(RERUN)
    return db, first, rerun


@pytest.mark.parametrize("key", [None, KEY, "nightly/8/h100"], ids=["no key", "its key", "other"])
def test_a_replaced_result_ingested_again_stays_replaced(run_cli, write_json, tmp_path, key):
    """Without a key, A was a second run of the night (an extra point of every series); under
    its key, it replaced the re-run's result back (the older attempt won)."""
    db, first, rerun = _replaced_once(run_cli, write_json, tmp_path)
    before = db.read_bytes()
    done = run_cli("history", "ingest", first, "--db", db, *(() if key is None else ("--key", key)))
    assert (done.status, done.err) == (0, ""), done.err
    assert done.out == (
        f"{first}: replaced by a later attempt under --key {KEY} (run 1) in {db}; nothing "
        "written\n"
    )
    assert db.read_bytes() == before
    assert _runs(db) == [(1, KEY, str(rerun))] and _series(db) == _values(RERUN)


def test_every_replaced_attempt_stays_replaced(run_cli, write_json, tmp_path):
    """A third attempt replaces the second: both earlier ones point at the run kept."""
    db, first, rerun = _replaced_once(run_cli, write_json, tmp_path)
    third = write_json("third.json", _attempt(THIRD))
    assert "replacing" in run_cli("history", "ingest", third, "--db", db, "--key", KEY).out
    for path in (first, rerun):
        for extra in ((), ("--key", KEY)):
            done = run_cli("history", "ingest", path, "--db", db, *extra)
            assert done.status == 0 and "replaced by a later attempt" in done.out, done.out
    assert _runs(db) == [(1, KEY, str(third))] and _series(db) == _values(THIRD)


def test_the_api_says_which_run_replaced_it(write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    first = write_json("first.json", _attempt(FIRST))
    rerun = write_json("rerun.json", _attempt(RERUN))
    history.ingest(first, db, KEY)
    assert history.ingest(rerun, db, KEY).replaced
    done = history.ingest(first, db)
    assert (done.run_id, done.new, done.replaced_by, done.older) == (1, False, KEY, False)


def test_an_older_attempt_under_the_key_does_not_replace_a_newer_one(run_cli, write_json, tmp_path):
    """B ingested first, then A, dated before it (its own date): A is an earlier attempt of the
    workflow run, and is recorded as replaced by B, not stored."""
    db = tmp_path / "h.sqlite"
    older = write_json("older.json", _attempt(FIRST))
    newer = write_json("newer.json", _attempt(RERUN, date="2026-11-21T05:00:00+00:00"))
    assert run_cli("history", "ingest", newer, "--db", db, "--key", KEY).status == 0
    done = run_cli("history", "ingest", older, "--db", db, "--key", KEY)
    assert (done.status, done.err) == (0, ""), done.err
    assert done.out == (
        f"{older}: an earlier attempt than run 1 under --key {KEY} (dated before it): not "
        "stored; recorded as replaced by it\n"
    )
    assert _runs(db) == [(1, KEY, str(newer))]
    assert _series(db) == _values(RERUN)
    before = db.read_bytes()
    for extra in ((), ("--key", KEY)):
        done = run_cli("history", "ingest", older, "--db", db, *extra)
        assert "replaced by a later attempt" in done.out and db.read_bytes() == before, done.out


def test_the_later_ingest_wins_where_the_dates_do_not_tell(run_cli, write_json, tmp_path):
    """A merged result carries its earliest part's date: a re-run of a failed shard is dated as
    the first attempt. Dated the same (or undated), the later ingest replaces, as before."""
    db = tmp_path / "h.sqlite"
    one = write_json("one.json", _attempt(FIRST))
    two = write_json("two.json", _attempt(RERUN))
    assert run_cli("history", "ingest", two, "--db", db, "--key", KEY).status == 0
    assert "replacing" in run_cli("history", "ingest", one, "--db", db, "--key", KEY).out
    assert _series(db) == _values(FIRST)
    undated = _attempt(THIRD)
    del undated["context"]["date"]
    three = write_json("three.json", undated)
    assert "replacing" in run_cli("history", "ingest", three, "--db", db, "--key", KEY).out
    assert _series(db) == _values(THIRD)


def test_a_failed_replacement_records_nothing(run_cli, write_json, tmp_path, monkeypatch):
    """One transaction: the replaced hash is recorded with the new values, or not at all."""
    db = tmp_path / "h.sqlite"
    first = write_json("first.json", _attempt(FIRST))
    rerun = write_json("rerun.json", _attempt(RERUN))
    assert run_cli("history", "ingest", first, "--db", db, "--key", KEY).status == 0
    before = db.read_bytes()

    def boom(*args: Any, **kwargs: Any) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(intake, "_store_values", boom)
    assert run_cli("history", "ingest", rerun, "--db", db, "--key", KEY).status == 2
    assert db.read_bytes() == before
    monkeypatch.undo()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM replaced_results").fetchone() == (0,)
    done = run_cli("history", "ingest", first, "--db", db)
    assert "already in" in done.out, done.out


def test_a_version_3_database_is_read_as_it_is_then_migrated_keeping_its_runs(
    run_cli, write_json, tmp_path
):
    """The nightly's database as uploaded before version 4: the reading commands read it as it
    is; the next ingest adds the table of replaced results and keeps every run and key."""
    db = tmp_path / "h.sqlite"
    first = write_json("first.json", _attempt(FIRST))
    other = write_json("other.json", _attempt(FIRST, date="2026-11-22T03:40:00+00:00"))
    assert run_cli("history", "ingest", first, "--db", db, "--key", KEY).status == 0
    assert run_cli("history", "ingest", other, "--db", db).status == 0
    as_of_version(db, 3)
    with history.database(db) as c:
        assert not c.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'replaced_results'"
        ).fetchone()
    for action in (("list",), ("show", "BM_A")):
        done = run_cli("history", *action, "--db", db)
        assert done.status == 0 and "2026-11-22" in done.out, done.err
    with history.database(db) as c:
        assert history.schema_version(c, db) == 3  # (never written by a reading command)
    rerun = write_json("rerun.json", _attempt(RERUN))
    assert "replacing" in run_cli("history", "ingest", rerun, "--db", db, "--key", KEY).out
    with history.database(db) as c:
        assert history.schema_version(c, db) == history.SCHEMA_VERSION == 4
    assert _runs(db) == [(1, KEY, str(rerun)), (2, None, str(other))]
    done = run_cli("history", "ingest", first, "--db", db)
    assert "replaced by a later attempt under --key" in done.out, done.out
    assert len(_runs(db)) == 2
    for action in (("list",), ("show", "BM_A")):  # and version 4 is read by this kernelwatch
        assert run_cli("history", *action, "--db", db).status == 0


def test_a_damaged_record_of_a_replaced_result_is_one_line(run_cli, write_json, tmp_path):
    db, first, _ = _replaced_once(run_cli, write_json, tmp_path)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE replaced_results SET run_id = 'one'")
    done = run_cli("history", "ingest", first, "--db", db)
    assert done.status == 2 and "a damaged history database" in done.err, done.err
    assert done.err.count("\n") == 1


def test_a_run_stored_without_a_key_is_told_when_another_run_holds_it(
    run_cli, write_json, tmp_path
):
    """A stored by hand without a key, then the re-run's B under KEY, then A again under KEY:
    "already in as run 1; nothing written", and nothing said of the two runs of one workflow run
    that stay in every series. A run stored under another key kept it without a word too."""
    db = tmp_path / "h.sqlite"
    first = write_json("first.json", _attempt(FIRST))
    rerun = write_json("rerun.json", _attempt(RERUN))
    assert run_cli("history", "ingest", first, "--db", db).status == 0
    assert run_cli("history", "ingest", rerun, "--db", db, "--key", KEY).status == 0
    before = db.read_bytes()
    done = run_cli("history", "ingest", first, "--db", db, "--key", KEY)
    assert done.status == 0 and done.out == f"{first}: already in {db} as run 1; nothing written\n"
    assert done.err == (
        f"kernelwatch: warning: {first}: run 2 holds --key {KEY}, so run 1 keeps no key: both "
        "stay in the history as runs of that night (`history remove 1` takes this one out)\n"
    )
    assert db.read_bytes() == before
    other = run_cli("history", "ingest", rerun, "--db", db, "--key", "nightly/8/h100")
    assert other.status == 0 and other.err == (
        f"kernelwatch: warning: {rerun}: run 2 is stored under --key {KEY}, which it keeps\n"
    )
    again = run_cli("history", "ingest", rerun, "--db", db, "--key", KEY)
    assert (again.status, again.err) == (0, "")
