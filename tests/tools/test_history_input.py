"""Bad input to the `history` commands: each is one line and exit 2, and no history is damaged
or written where nobody asked for one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import H100_CONTEXT
from kernelwatch import changes
from kernelwatch.errors import InputError


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    return err


def edited_history(run_cli, write_json, tmp_path: Path, *edits: str, params: tuple = ()) -> Path:
    """A history of one ingested H100 run, then `edits` (SQL) made by hand, as another tool
    or a hand edit would: SQLite keeps a value of any type in any column."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1.0, 2.0, 3.0]}, context=H100_CONTEXT)
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        for edit in edits:
            c.execute(edit, params)
    c.close()
    return db


def test_a_db_named_as_a_folder_is_refused(run_cli, write_json, tmp_path):
    """`--db results/` where results/ does not exist yet: Path drops the slash, and an ingest
    made a database file named `results`, which then blocks the folder."""
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    for args in (("ingest", path), ("list",), ("show", "BM_A"), ("changes",)):
        done = run_cli("history", *args, "--db", f"{tmp_path / 'results'}/")
        assert done.status == 2 and "argument --db" in one_line(done.err), (args, done.err)
        assert "a folder (it ends with /)" in done.err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("key", [" ", "   "])
def test_a_blank_key_is_refused(run_cli, write_json, tmp_path, key):
    """A blank key is no key, as an empty one (`--key "$RUN_ID $GPU"` with both unset)."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    done = run_cli("history", "ingest", path, "--db", db, "--key", key)
    assert done.status == 2 and "argument --key: an empty value" in one_line(done.err)
    assert not db.exists()


@pytest.mark.parametrize("column", ["date", "git_commit", "gpu_slug", "gpu_name", "source"])
def test_a_blob_in_a_runs_text_column_is_one_line(run_cli, write_json, tmp_path, column):
    """SQLite keeps a BLOB in a TEXT column (a hand edit, another tool): it reached the table
    and the JSON writer as bytes, an internal error."""
    db = edited_history(run_cli, write_json, tmp_path, f"UPDATE runs SET {column} = X'00ff'")
    content = db.read_bytes()
    for args in (("list",), ("list", "--format", "json"), ("show", "BM_A")):
        for format_args in ((), ("--format", "json")) if args[0] == "show" else ((),):
            done = run_cli("history", *args, *format_args, "--db", db)
            assert done.status == 2, (args, done)
            assert f"run 1's {column} holds b'\\x00\\xff'" in one_line(done.err), done.err
            assert "a damaged history database" in done.err
    assert db.read_bytes() == content


def test_a_context_nested_past_the_parsers_depth_reads_as_a_damaged_one(
    run_cli, write_json, tmp_path
):
    """Read as no context (what a damaged one reads as), not an internal RecursionError of
    `list` (found by an audit)."""
    deep = "[" * 5000 + "]" * 5000
    db = edited_history(
        run_cli, write_json, tmp_path, "UPDATE runs SET context = ?", params=(deep,)
    )
    for format_args in ((), ("--format", "json")):
        done = run_cli("history", "list", *format_args, "--db", db)
        assert done.status == 0 and done.err == "", done.err


def test_a_blob_as_a_benchmarks_name_is_one_line(run_cli, write_json, tmp_path):
    """A BLOB name reached the --filter regex and the series as bytes: an internal TypeError."""
    db = edited_history(run_cli, write_json, tmp_path, "UPDATE benchmarks SET name = X'00ff'")
    for filter_args in ((), ("--filter", "BM_")):
        done = run_cli("history", "changes", *filter_args, "--db", db)
        assert done.status == 2, done
        assert "benchmark 1's name holds b'\\x00\\xff'" in one_line(done.err)


def test_a_metric_of_unknown_direction_names_what_changes_takes(run_cli, write_json, tmp_path):
    """`history changes` has no --higher-is-better: the line told the user to pass it."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    done = run_cli("history", "changes", "--metric", "noise", "--db", db)
    assert done.status == 2
    assert "--higher-is-better" not in one_line(done.err)
    assert "--metric noise: " in done.err and "*_per_second" in done.err
    with pytest.raises(InputError, match=r"\*_per_second") as raised:
        with sqlite3.connect(db) as c:
            changes.find_changes(c, metric="items")
    c.close()
    assert "--higher-is-better" not in str(raised.value)


def test_a_blob_as_a_metrics_name_is_one_line(run_cli, write_json, tmp_path):
    """A BLOB metric name reached the line that lists the metrics the history has (show,
    changes and report's trends, when the asked metric is not found): an internal TypeError.
    report, whose trends say on the page why change points were not found, now says this."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1.0, 2.0, 3.0]}, context=H100_CONTEXT)
    other = write_json("r2.json", {"BM_A": [1.5, 2.5, 3.5]}, context=H100_CONTEXT)
    for result in (path, other):
        assert run_cli("history", "ingest", result, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        c.execute("UPDATE metrics SET name = X'00ff' WHERE name = 'real_time'")
    c.close()
    content = db.read_bytes()
    for args in (("show", "BM_A"), ("show", "BM_A", "--format", "json"), ("changes",)):
        done = run_cli("history", *args, "--db", db)
        assert done.status == 2, (args, done)
        assert "metric 1's name holds b'\\x00\\xff', not text" in one_line(done.err), done.err
    out = tmp_path / "report.html"
    done = run_cli("report", path, "--baseline", other, "--db", db, "-o", out)
    assert done.status == 0 and done.err == "", done
    assert "metric 1&#x27;s name holds b&#x27;" in out.read_text()
    assert db.read_bytes() == content


def test_a_blob_as_a_runs_gpu_is_one_line_where_the_gpus_are_listed(run_cli, write_json, tmp_path):
    """A BLOB gpu_slug reached the line that lists the history's GPUs (`--gpu` naming none of
    them) as bytes: an internal TypeError."""
    db = edited_history(run_cli, write_json, tmp_path, "UPDATE runs SET gpu_slug = X'00ff'")
    for args in (("show", "BM_A"), ("changes",)):
        done = run_cli("history", *args, "--gpu", "other", "--db", db)
        assert done.status == 2, (args, done)
        assert "gpu_slug holds b'\\x00\\xff', not text" in one_line(done.err), (args, done.err)


def test_a_long_damaged_value_is_cut_in_the_line(run_cli, write_json, tmp_path):
    """The whole value was quoted: a 5,000-character text in a count column made a line of
    5,000 characters."""
    db = edited_history(
        run_cli, write_json, tmp_path, "UPDATE runs SET benchmarks = ?", params=("y" * 5000,)
    )
    done = run_cli("history", "list", "--db", db)
    assert done.status == 2
    assert "run 1's benchmarks holds 'yyyy" in one_line(done.err) and len(done.err) < 200
