"""`kernelwatch history remove`: runs deleted by id with all they stored, in one transaction;
an id not there refuses the whole command and writes nothing. Before it, a run measured on a
broken machine, or a night stored twice (a keyless ingest beside the keyed one), stayed a
point of every series for good."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml
from conftest import H100_CONTEXT
from test_workflow_steps import NIGHTLY, run_step, workspace

NIGHT = dict(H100_CONTEXT, date="2026-11-21T03:40:00+00:00")


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    return err


def _rows(db: Path, query: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute(query).fetchall()


def _three_runs(run_cli, write_json, tmp_path: Path) -> Path:
    """Runs 1-3 of three nights; BM_ONLY is in run 2 alone."""
    db = tmp_path / "h.sqlite"
    for night, times in enumerate(([10, 11, 12], [50, 51, 52], [10, 11, 13]), start=1):
        spec = {"BM_A": times} | ({"BM_ONLY": [1, 2, 3]} if night == 2 else {})
        context = dict(NIGHT, date=f"2026-11-2{night}T03:40:00+00:00")
        path = write_json(f"night{night}.json", spec, context=context)
        assert run_cli("history", "ingest", path, "--db", db).status == 0
    return db


def test_a_run_is_removed_with_all_it_stored(run_cli, write_json, tmp_path):
    db = _three_runs(run_cli, write_json, tmp_path)
    done = run_cli("history", "remove", "2", "--db", db)
    assert done.status == 0 and done.err == "", done.err
    assert done.out == (
        f"removed run 2 from {db}: 2026-11-22T03:40:00+00:00, commit unknown, "
        f"nvidia-h100-80gb-hbm3-sm90, 2 benchmark(s), ingested from {tmp_path / 'night2.json'}\n"
    )
    assert _rows(db, "SELECT id FROM runs ORDER BY id") == [(1,), (3,)]
    assert {r for (r,) in _rows(db, "SELECT DISTINCT run_id FROM samples")} == {1, 3}
    assert {r for (r,) in _rows(db, "SELECT DISTINCT run_id FROM run_benchmarks")} == {1, 3}
    shown = run_cli("history", "show", "BM_A", "--db", db)
    assert shown.status == 0 and "2026-11-22" not in shown.out and "2 run(s)" in shown.out
    # A benchmark only the removed run held is no benchmark of the history any more.
    gone = run_cli("history", "show", "BM_ONLY", "--db", db)
    assert gone.status == 2 and "no benchmark 'BM_ONLY' in the history" in one_line(gone.err)
    # Ingested again, it is a run again (under a new id).
    again = run_cli("history", "ingest", tmp_path / "night2.json", "--db", db)
    assert again.status == 0 and "as run 4" in again.out, again.out


def test_several_runs_at_once_and_an_id_twice(run_cli, write_json, tmp_path):
    db = _three_runs(run_cli, write_json, tmp_path)
    done = run_cli("history", "remove", "3", "1", "3", "--db", db)
    assert done.status == 0, done.err
    assert [line.split(":")[0] for line in done.out.splitlines()] == [
        f"removed run 3 from {db}",
        f"removed run 1 from {db}",
    ]
    assert _rows(db, "SELECT id FROM runs") == [(2,)]


def test_an_id_not_there_removes_nothing(run_cli, write_json, tmp_path):
    db = _three_runs(run_cli, write_json, tmp_path)
    before = db.read_bytes()
    done = run_cli("history", "remove", "1", "7", "9", "--db", db)
    assert done.status == 2 and done.out == ""
    assert one_line(done.err) == (
        f"kernelwatch: error: {db}: no run 7, 9 in the history (history list shows the runs)\n"
    )
    assert db.read_bytes() == before


# 2**63: past SQLite's 64-bit ids, an internal OverflowError (found by an audit)
@pytest.mark.parametrize("given", ["0", "-1", "x", "1.5", "", str(2**63)])
def test_an_id_that_is_no_run_id_is_a_usage_error(run_cli, write_json, tmp_path, given):
    db = _three_runs(run_cli, write_json, tmp_path)
    done = run_cli("history", "remove", given, "--db", db)
    assert done.status == 2
    assert f"argument ID: {given!r}: not a run id (history list)" in one_line(done.err)
    assert _rows(db, "SELECT COUNT(*) FROM runs") == [(3,)]


def test_no_database_is_made(run_cli, tmp_path):
    db = tmp_path / "none.sqlite"
    done = run_cli("history", "remove", "1", "--db", db)
    assert done.status == 2 and "no history database" in one_line(done.err)
    assert not db.exists()


def test_a_keyed_run_removed_frees_what_its_key_replaced(run_cli, write_json, tmp_path):
    """The results a removed run's key had replaced are recorded against it (replaced_results,
    which refers to the run): the removal deletes that record, so the first attempt may be
    ingested again, as a run of its own."""
    db = tmp_path / "h.sqlite"
    key = "nightly/7/h100"
    first = write_json("first.json", {"BM_A": [10, 11, 12]}, context=NIGHT)
    later = dict(NIGHT, kernelwatch_run_started="2026-11-21T05:00:00+00:00")
    rerun = write_json("rerun.json", {"BM_A": [20, 21, 22]}, context=later)
    for path in (first, rerun):
        assert run_cli("history", "ingest", path, "--db", db, "--key", key).status == 0
    assert _rows(db, "SELECT run_id FROM replaced_results") == [(1,)]
    done = run_cli("history", "remove", "1", "--db", db)
    assert done.status == 0, done.err
    assert _rows(db, "SELECT COUNT(*) FROM replaced_results") == [(0,)]
    again = run_cli("history", "ingest", first, "--db", db, "--key", key)
    # (not under run 1's id: an id names one run for good)
    assert again.status == 0 and "ingested" in again.out and "as run 2" in again.out, again.out


def test_an_id_is_never_given_twice(run_cli, write_json, tmp_path):
    """SQLite gives a new run the largest id + 1: the newest run removed, the next run took its
    id, and `history remove 3` run twice removed two runs."""
    db = _three_runs(run_cli, write_json, tmp_path)
    assert run_cli("history", "remove", "3", "2", "--db", db).status == 0
    again = run_cli("history", "ingest", tmp_path / "night3.json", "--db", db)
    assert again.status == 0 and "as run 4" in again.out, again.out
    twice = run_cli("history", "remove", "3", "--db", db)
    assert twice.status == 2 and "no run 3 in the history" in one_line(twice.err)
    assert run_cli("history", "remove", "4", "--db", db).status == 0
    latest = run_cli("history", "ingest", tmp_path / "night2.json", "--db", db)
    assert "as run 5" in latest.out, latest.out


def test_a_night_stored_twice_becomes_one(run_cli, write_json, tmp_path):
    """A result stored without a key, then another file of the night ingested under the key
    (history ingest warns that both stay): removing the keyless one leaves the night's one."""
    db = tmp_path / "h.sqlite"
    plain = write_json("plain.json", {"BM_A": [10, 11, 12]}, context=NIGHT)
    rerun = write_json("rerun.json", {"BM_A": [11, 12, 13]}, context=NIGHT)
    assert run_cli("history", "ingest", plain, "--db", db).status == 0
    assert run_cli("history", "ingest", rerun, "--db", db, "--key", "nightly/7/h100").status == 0
    assert run_cli("history", "remove", "1", "--db", db).status == 0
    assert _rows(db, "SELECT id, run_key FROM runs") == [(2, "nightly/7/h100")]


# --- the nightly's history, started by hand with history-remove ---------------------------

REMOVE_STEP = "Remove the runs named by hand (history-remove)"


def _nightly_history(run_cli, write_json, tmp_path: Path) -> Path:
    """A checkout whose results/history.sqlite holds _three_runs' runs."""
    root = workspace(tmp_path)
    (root / "results").mkdir()
    db = _three_runs(run_cli, write_json, tmp_path)
    db.rename(root / "results" / "history.sqlite")
    return root / "results" / "history.sqlite"


def test_the_nightly_removes_the_runs_given_by_hand(run_cli, write_json, tmp_path):
    db = _nightly_history(run_cli, write_json, tmp_path)
    status, _, log = run_step(
        "history", REMOVE_STEP, db.parent.parent, contexts={"inputs.history-remove": " 3  1 "}
    )
    assert status == 0, log
    assert "removed run 3 from results/history.sqlite" in log
    assert _rows(db, "SELECT id FROM runs") == [(2,)]


@pytest.mark.parametrize("given", ["2 --help", "2 --db other.sqlite", "2 *", "2 9"])
def test_a_mistyped_removal_removes_nothing(run_cli, write_json, tmp_path, given):
    db = _nightly_history(run_cli, write_json, tmp_path)
    (db.parent.parent / "other.sqlite").write_bytes(db.read_bytes())
    status, _, log = run_step(
        "history", REMOVE_STEP, db.parent.parent, contexts={"inputs.history-remove": given}
    )
    assert status == 2 and "kernelwatch: error: " in log, log
    assert _rows(db, "SELECT COUNT(*) FROM runs") == [(3,)]
    assert _rows(db.parent.parent / "other.sqlite", "SELECT COUNT(*) FROM runs") == [(3,)]


def test_a_failed_removal_fails_the_job_after_tonights_runs_are_kept() -> None:
    """The removal comes before the ingest (the change points are found without the runs
    removed), but its failure waits: a typo fails the job only after tonight's runs are
    ingested and the database uploaded."""
    jobs = yaml.safe_load(NIGHTLY.read_text())["jobs"]
    steps = jobs["history"]["steps"]
    names = [s.get("name") or s.get("uses") for s in steps]
    removal = steps[names.index(REMOVE_STEP)]
    assert removal["continue-on-error"] is True and removal["id"] == "remove"
    assert names.index(REMOVE_STEP) < names.index("Ingest tonight's runs")
    uploads = [i for i, s in enumerate(steps) if "upload-artifact" in str(s.get("uses"))]
    last = steps[-1]
    assert last["if"] == "always() && steps.remove.outcome == 'failure'"
    assert "exit 2" in last["run"] and len(steps) - 1 > max(uploads)
    dispatch = yaml.safe_load(NIGHTLY.read_text())[True]["workflow_dispatch"]
    assert dispatch["inputs"]["history-remove"]["default"] == ""
