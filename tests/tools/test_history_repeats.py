"""A run counted twice, and one run far off before a step: `history ingest` recognises another
file of a run it holds (its own date, GPU, commit and every value), which was a second point of
every series; `history changes` leaves one far-off run out of the t-test as out of the spread
(docs/history.md, "ingest" and "One run far off")."""

from __future__ import annotations

import copy
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import document
from kernelwatch import changes, history
from kernelwatch.gbench import read_json
from test_changes_robust import found_in, series
from test_history import NIGHT, as_of_version
from test_trends_input import build  # noqa: F401 (a fixture)

RUN = {"BM_A": [10.5, 11.25, 12.0], "BM_B": [5.5, 6.0, 7.25]}
ANCHORED = {"kernelwatch_anchor": {"commit": "abc", "anchored": True}}


def _night(**context: Any) -> dict[str, Any]:
    return document(RUN, context=dict(NIGHT, kernelwatch_git_commit="c1", **context))


def _reordered(doc: dict[str, Any]) -> dict[str, Any]:
    """The rows of another benchmark first, and each benchmark's repetitions in another order."""
    doc["benchmarks"].reverse()
    return doc


def _as_integers(doc: dict[str, Any]) -> dict[str, Any]:
    """Whole numbers written without a fraction (12 for 12.0), as another writer may."""
    for row in doc["benchmarks"]:
        for key, value in row.items():
            if isinstance(value, float) and value.is_integer():
                row[key] = int(value)
    return doc


def _anchored(doc: dict[str, Any]) -> dict[str, Any]:
    """`run --anchor` rewrites its result with the anchor's context key once it is judged."""
    doc["context"].update(ANCHORED)
    return doc


def _runs(db: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, date FROM runs ORDER BY id").fetchall()


@pytest.mark.parametrize(
    ("rewrite", "said"),
    [
        (_reordered, "written differently"),
        (_as_integers, "written differently"),
        (_anchored, "its context differs in kernelwatch_anchor"),
    ],
)
def test_another_file_of_a_run_already_there_is_not_a_second_run(
    run_cli, write_json, tmp_path, rewrite, said
):
    """Before: a new content hash, so run 2, and every series held the night twice."""
    db = tmp_path / "h.sqlite"
    first = _night()
    assert run_cli("history", "ingest", write_json("r.json", first), "--db", db).status == 0
    before = db.read_bytes()
    again = write_json("again.json", rewrite(copy.deepcopy(first)))
    assert history.content_hash(read_json(again)) != history.content_hash(first)  # another file
    done = run_cli("history", "ingest", again, "--db", db)
    assert (done.status, done.err) == (0, "")
    assert done.out == (
        f"{again}: already in {db} as run 1, the same measurement (its date, GPU, commit and "
        f"every value; {said}); nothing written\n"
    )
    assert db.read_bytes() == before and len(_runs(db)) == 1


def test_under_a_key_the_same_measurement_is_not_a_second_run(run_cli, write_json, tmp_path):
    """Ingested by hand first, then the run's rewritten file under the nightly's key."""
    db = tmp_path / "h.sqlite"
    assert run_cli("history", "ingest", write_json("r.json", _night()), "--db", db).status == 0
    again = write_json("again.json", _night(**ANCHORED))
    done = run_cli("history", "ingest", again, "--db", db, "--key", "nightly/7/h100")
    assert done.status == 0 and "already in" in done.out and "as run 1, the same" in done.out
    assert len(_runs(db)) == 1


@pytest.mark.parametrize(
    "other",
    [
        # the same values (a deterministic counter, a synthetic suite) measured again later
        {"context": dict(NIGHT, kernelwatch_git_commit="c1", date="2026-11-21T04:10:00Z")},
        # another measurement started in the same second
        {"spec": {"BM_A": [10.5, 11.25, 12.5], "BM_B": [5.5, 6.0, 7.25]}},
        # one benchmark more
        {"spec": dict(RUN, BM_C=[1.0, 2.0, 3.0])},
        # another GPU model
        {"context": dict(NIGHT, kernelwatch_git_commit="c1", gpu_name="NVIDIA H200")},
    ],
)
def test_two_runs_of_one_commit_on_one_night_both_count(run_cli, write_json, tmp_path, other):
    db = tmp_path / "h.sqlite"
    assert run_cli("history", "ingest", write_json("r.json", _night()), "--db", db).status == 0
    context = other.get("context", dict(NIGHT, kernelwatch_git_commit="c1"))
    second = write_json("second.json", document(other.get("spec", RUN), context=context))
    done = run_cli("history", "ingest", second, "--db", db)
    assert done.status == 0 and "as run 2:" in done.out, done.out
    assert len(_runs(db)) == 2


def test_a_result_without_a_date_is_known_by_its_content_only(run_cli, write_json, tmp_path):
    """Dated at ingest: no date of its own to tell two such runs apart, so only the same file
    (its content hash) is the same run."""
    db = tmp_path / "h.sqlite"
    first = _night()
    del first["context"]["date"]
    assert run_cli("history", "ingest", write_json("r.json", first), "--db", db).status == 0
    again = write_json("again.json", _reordered(copy.deepcopy(first)))
    assert "as run 2:" in run_cli("history", "ingest", again, "--db", db).out


def test_an_older_database_recognises_its_runs(run_cli, write_json, tmp_path):
    """A version 1 database, its run's naive date stored as written (as kernelwatch stored one
    then): migrated by the ingest, and its run recognised. No column is added: the identity is
    read from what every version stored (date, GPU, commit, run_benchmarks, samples)."""
    db = tmp_path / "h.sqlite"
    naive = _night(date="2026-11-21T03:40:00")
    naive["context"]["date"] = "2026-11-21T03:40:00"
    assert run_cli("history", "ingest", write_json("r.json", naive), "--db", db).status == 0
    as_of_version(db, 1)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE runs SET date = '2026-11-21T03:40:00'")
    again = write_json("again.json", _anchored(copy.deepcopy(naive)))
    done = run_cli("history", "ingest", again, "--db", db)
    assert done.status == 0 and "as run 1, the same measurement" in done.out, done.out
    with history.database(db) as c:
        assert history.schema_version(c, db) == history.SCHEMA_VERSION
    assert _runs(db) == [(1, "2026-11-21T03:40:00")]


# --- one run far off before a step: the t-test ------------------------------------------------


@pytest.mark.parametrize(
    "medians, expected",
    [
        # a 12 % regression, one run 1.5x slower (a throttled machine) before it, 8 runs
        ([100.0, 150.0] + [100.0] * 2 + [112.0] * 4, [(4, True)]),
        # a 12 % improvement, one run 1.5x faster before it
        ([112.0] * 3 + [74.7] + [112.0] * 2 + [100.0] * 6, [(6, False)]),
    ],
)
def test_one_far_off_run_before_a_step_in_its_direction_does_not_hide_it(
    build, medians, expected
) -> None:
    """Hidden before: the run pulled its side's mean across the step, and the t-test's p was
    above alpha, while run_spread had already left it out of the spread."""
    assert found_in(build(medians)) == expected


def test_the_run_out_of_the_test_is_the_one_out_of_the_spread() -> None:
    rng = np.random.default_rng(5)
    usual = rng.normal(0.0, 0.02, 10)
    assert changes.far_off_run(usual) is None
    odd = np.insert(usual, 3, math.log(1.5))
    assert changes.far_off_run(odd) == 3
    assert changes.run_spread(odd) == pytest.approx(changes.run_spread(usual))
    assert changes.far_off_run(odd[:5]) is None  # too few runs to tell (FAR_OFF_MIN_RUNS)
    # runs 0..3 of two values each, the step after run 2, run 1 left out of the test
    flat = series([100.0, 150.0, 100.0, 112.0], 0.0, seed=0)
    flat = changes.Series("gpu", "b", flat.runs[:4], np.arange(8.0), np.array([0, 2, 4, 6, 8]))
    left, right = changes.tested_sides(flat, 0, 2, 4, 1)
    assert left.tolist() == [0.0, 1.0] and right.tolist() == [4.0, 5.0, 6.0, 7.0]
    left, right = changes.tested_sides(flat, 1, 3, 4, 3)
    assert left.tolist() == [2.0, 3.0, 4.0, 5.0] and right.tolist() == []


def test_the_report_finds_a_rewritten_file_of_a_run_in_the_history(run_cli, write_json, tmp_path):
    """The report marks this run in its trend plots: found by the content hash alone, a result
    that `run --anchor` rewrote after the nightly ingested it was not there."""
    db = tmp_path / "h.sqlite"
    assert run_cli("history", "ingest", write_json("r.json", _night()), "--db", db).status == 0
    anchored = write_json("anchored.json", _anchored(_night()))
    other = write_json("other.json", _night(date="2026-11-22T03:40:00+00:00"))
    with history.database(db) as connection:
        assert history.stored_run(connection, *history.load_run(anchored)) == 1
        assert history.stored_run(connection, *history.load_run(other)) is None


@pytest.mark.parametrize("rewrite", [None, _anchored], ids=["the same file", "rewritten"])
def test_a_run_stored_without_a_key_takes_the_key_it_comes_with_later(
    run_cli, write_json, tmp_path, rewrite
):
    """Ingested first without a key (from a kept file), then by the nightly under its key: the
    run kept no key, so that workflow run's re-run was stored as a second run, not replacing it."""
    db = tmp_path / "h.sqlite"
    first = _night()
    assert run_cli("history", "ingest", write_json("r.json", first), "--db", db).status == 0
    again = write_json("again.json", first if rewrite is None else rewrite(copy.deepcopy(first)))
    done = run_cli("history", "ingest", again, "--db", db, "--key", "nightly/7/h100")
    assert done.status == 0 and "--key nightly/7/h100 recorded on it" in done.out, done.out
    rerun = write_json("rerun.json", _night(date="2026-11-21T05:00:00+00:00"))
    done = run_cli("history", "ingest", rerun, "--db", db, "--key", "nightly/7/h100")
    assert done.status == 0 and "replacing" in done.out, done.out
    assert len(_runs(db)) == 1
