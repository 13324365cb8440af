"""Bad input to the `history` commands: each is one line and exit 2, and no history is damaged
or written where nobody asked for one."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import H100_CONTEXT
from kernelwatch import changes
from kernelwatch.errors import InputError


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    return err


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
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1.0, 2.0, 3.0]}, context=H100_CONTEXT)
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        c.execute(f"UPDATE runs SET {column} = X'00ff'")
    c.close()
    content = db.read_bytes()
    for args in (("list",), ("list", "--format", "json"), ("show", "BM_A")):
        for format_args in ((), ("--format", "json")) if args[0] == "show" else ((),):
            done = run_cli("history", *args, *format_args, "--db", db)
            assert done.status == 2, (args, done)
            assert f"run 1's {column} holds b'\\x00\\xff'" in one_line(done.err), done.err
            assert "a damaged history database" in done.err
    assert db.read_bytes() == content


def test_a_blob_as_a_benchmarks_name_is_one_line(run_cli, write_json, tmp_path):
    """A BLOB name reached the --filter regex and the series as bytes: an internal TypeError."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1.0, 2.0, 3.0]}, context=H100_CONTEXT)
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        c.execute("UPDATE benchmarks SET name = X'00ff'")
    c.close()
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
