"""`kernelwatch history`: ingest (idempotent, atomic), list, show, schema migration."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import GPU_DATA, H100_CONTEXT, document, run_module
from kernelwatch import history
from kernelwatch.errors import InputError
from kernelwatch.history import intake, schema
from kernelwatch.gbench import failed_row, read_json

SUITE = GPU_DATA / "h200-suite-rep10.json.gz"
COALESCING = GPU_DATA / "h200-coalescing-rep5.json.gz"
needs_gpu_data = pytest.mark.skipif(
    not (SUITE.is_file() and COALESCING.is_file()),
    reason="no H200 result files in tests/data/gpu",
)
NAME = "coalescing/stride/double/stride:16/manual_time"


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    return err


@needs_gpu_data
def test_ingest_real_file_stores_every_repetition(run_cli, tmp_path):
    db = tmp_path / "h.sqlite"
    r = run_cli("history", "ingest", SUITE, "--db", db)
    assert r.status == 0, r.err
    assert "as run 1" in r.out and "355 benchmark(s)" in r.out
    document = read_json(SUITE)
    rows = [b for b in document["benchmarks"] if b.get("run_type") == "iteration"]
    with sqlite3.connect(db) as c:
        (n,) = c.execute(
            "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id "
            "WHERE m.name = 'real_time'"
        ).fetchone()
        commit, slug, date = c.execute("SELECT git_commit, gpu_slug, date FROM runs").fetchone()
        context = json.loads(c.execute("SELECT context FROM runs").fetchone()[0])
        (counters,) = c.execute(
            "SELECT count(*) FROM samples s JOIN metrics m ON m.id = s.metric_id "
            "WHERE m.name = 'bytes_per_second'"
        ).fetchone()
    assert n == len(rows)
    assert counters == sum("bytes_per_second" in b for b in rows)
    assert commit == document["context"]["kernelwatch_git_commit"]
    assert slug == "nvidia-h200-sm90"
    assert date == "2026-11-21T06:25:51+00:00"
    assert context == document["context"]
    # Times are stored in ns: the first row is 106.87 us.
    first = rows[0]
    with sqlite3.connect(db) as c:
        (value,) = c.execute(
            "SELECT value FROM samples s JOIN benchmarks b ON b.id = s.benchmark_id "
            "JOIN metrics m ON m.id = s.metric_id "
            "WHERE b.name = ? AND m.name = 'real_time' AND s.repetition = ?",
            (first["run_name"], first["repetition_index"]),
        ).fetchone()
    assert value == pytest.approx(first["real_time"] * 1e3)


@needs_gpu_data
def test_a_pooled_baseline_is_not_one_run(run_cli, tmp_path):
    pooled = GPU_DATA.parents[2] / "baselines" / "nvidia-h200-sm90" / "result.json.gz"
    db = tmp_path / "h.sqlite"
    done = run_cli("history", "ingest", pooled, "--db", db)
    assert done.status == 2 and done.err.count("\n") == 1
    assert "a baseline pooled from " in done.err and "ingest the runs it was made from" in done.err
    assert not db.exists()


def test_second_ingest_is_a_no_op(run_cli, tmp_path):
    db = tmp_path / "h.sqlite"
    assert run_cli("history", "ingest", SUITE, "--db", db).status == 0
    before = db.read_bytes()
    # The same run reformatted (other indentation) is still the same run.
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(read_json(SUITE)))
    for path in (SUITE, copy):
        r = run_cli("history", "ingest", path, "--db", db)
        assert r.status == 0, r.err
        assert "already in" in r.out and "as run 1; nothing written" in r.out
    assert db.read_bytes() == before
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM runs").fetchone() == (1,)


@needs_gpu_data
def test_list_and_show_two_runs_in_date_order(run_cli, tmp_path):
    db = tmp_path / "h.sqlite"
    # Ingested newest first: list and show still order by the run's own date.
    assert run_cli("history", "ingest", SUITE, "--db", db).status == 0
    assert run_cli("history", "ingest", COALESCING, "--db", db).status == 0
    r = run_cli("history", "list", "--db", db)
    assert r.status == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["ID", "DATE", "COMMIT", "GPU", "BENCHMARKS"]
    assert lines[1].split() == [
        "2",
        "2026-11-21T05:40:57+00:00",
        "ea8ec0eeea5a",
        "nvidia-h200-sm90",
        "132",
    ]
    assert lines[2].split() == [
        "1",
        "2026-11-21T06:25:51+00:00",
        "a5f7603cb105",
        "nvidia-h200-sm90",
        "355",
    ]

    r = run_cli("history", "show", NAME, "--db", db)
    assert r.status == 0, r.err
    lines = r.out.splitlines()
    assert lines[1].split() == ["DATE", "COMMIT", "GPU", "N", "MEDIAN", "MIN", "MAX"]
    assert lines[2].split()[:4] == [
        "2026-11-21T05:40:57+00:00",
        "ea8ec0eeea5a",
        "nvidia-h200-sm90",
        "5",
    ]
    assert lines[3].split()[:4] == [
        "2026-11-21T06:25:51+00:00",
        "a5f7603cb105",
        "nvidia-h200-sm90",
        "10",
    ]
    assert lines[3].split()[4:] == ["106.9", "us", "106.8", "us", "107.0", "us"]

    r = run_cli(
        "history",
        "show",
        NAME,
        "--db",
        db,
        "--metric",
        "bytes_per_second",
        "--gpu",
        "nvidia-h200-sm90",
    )
    assert r.status == 0, r.err
    assert "bytes_per_second, 2 run(s)" in r.out and "G" in r.out


def _two_runs(run_cli, write_json, tmp_path: Path, zone: str) -> Path:
    """A history of two runs of BM_A (commits c1 and c2, a day apart, in time zone `zone`)."""
    db = tmp_path / "h.sqlite"
    for day, (commit, times) in enumerate([("c1", [10, 11, 12]), ("c2", [20, 30, 40])]):
        context = dict(
            H100_CONTEXT,
            date=f"2026-01-0{day + 1}T00:00:00{zone}",
            kernelwatch_git_commit=commit,
        )
        path = write_json(f"r{day}.json", {"BM_A": times}, context=context, time_unit="ns")
        assert run_cli("history", "ingest", path, "--db", db).status == 0
    return db


def test_show_series_from_synthetic_runs(run_cli, write_json, tmp_path):
    db = _two_runs(run_cli, write_json, tmp_path, "+01:00")
    r = run_cli("history", "show", "BM_A", "--db", db)
    assert r.status == 0, r.err
    rows = [line.split() for line in r.out.splitlines()[2:]]
    assert [row[:4] for row in rows] == [
        ["2025-12-31T23:00:00+00:00", "c1", "nvidia-h100-80gb-hbm3-sm90", "3"],
        ["2026-01-01T23:00:00+00:00", "c2", "nvidia-h100-80gb-hbm3-sm90", "3"],
    ]
    assert rows[1][4:] == ["30.00", "ns", "20.00", "ns", "40.00", "ns"]


@pytest.mark.parametrize(
    "written, stored",
    [
        ("2026-01-01T00:00:00+01:00", "2025-12-31T23:00:00+00:00"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00"),
        # no zone: UTC, as --since takes one (it was stored as written, and sorted before the
        # same moment written with its zone)
        ("2026-01-01T00:00:00", "2026-01-01T00:00:00+00:00"),
        ("2026-01-01 00:00:00.750", "2026-01-01T00:00:00+00:00"),
        ("0001-01-01T00:30:00+01:00", None),  # before year 1 in UTC
        ("yesterday", None),
    ],
)
def test_a_runs_date_is_stored_in_utc(written: str, stored: str | None) -> None:
    assert history.normalized_date(written) == stored


def test_bad_result_file_is_one_line_like_compare(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    bad = write_json("bad.json", '{"benchmarks": [')
    r = run_cli("history", "ingest", bad, "--db", db)
    assert r.status == 2
    one_line(r.err)
    compared = run_cli("compare", bad, bad)
    assert compared.err == r.err
    assert not db.exists()  # nothing created for a file that was refused
    missing = run_cli("history", "ingest", tmp_path / "nope.json", "--db", db)
    assert missing.status == 2 and "no such file" in one_line(missing.err)


def test_failed_ingest_writes_nothing(run_cli, write_json, tmp_path, monkeypatch):
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3], "BM_B": [4, 5, 6]})

    def boom(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(intake, "_store_values", boom)
    r = run_cli("history", "ingest", path, "--db", db)
    assert r.status == 2 and "disk I/O error" in one_line(r.err)
    monkeypatch.undo()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert run_cli("history", "ingest", path, "--db", db).out.startswith("ingested")


def test_a_full_disk_is_worded_as_such_and_keeps_the_database(
    run_cli, write_json, tmp_path, monkeypatch
):
    # SQLite rolls back by itself on a full disk; our ROLLBACK then failed, and the line read
    # "not a usable kernelwatch history database (cannot rollback - no transaction is
    # active)": the user was sent to a sound database. max_page_count is a real SQLITE_FULL.
    db = tmp_path / "h.sqlite"
    first = write_json("a.json", {"BM_A": [1, 2, 3]})
    assert run_cli("history", "ingest", first, "--db", db).status == 0
    before = db.read_bytes()
    opened = schema.open_db

    def full(path, create=False):
        connection = opened(path, create)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")
        return connection

    monkeypatch.setattr(schema, "open_db", full)
    many = {f"BM_{k}": [float(v) for v in range(1, 51)] for k in range(200)}
    r = run_cli("history", "ingest", write_json("b.json", many), "--db", db)
    assert r.status == 2
    assert one_line(r.err).endswith("h.sqlite: cannot write: database or disk is full\n"), r.err
    monkeypatch.undo()
    assert db.read_bytes() == before
    assert run_cli("history", "list", "--db", db).out.count("\n") == 2  # header + the first run


def test_migration_from_an_empty_database(run_cli, write_json, tmp_path):
    db = tmp_path / "empty.sqlite"
    sqlite3.connect(db).close()  # an empty (0-byte) SQLite file: version 0
    assert db.stat().st_size == 0
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        version = c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert version == (str(history.SCHEMA_VERSION),)
    assert {
        "meta",
        "runs",
        "samples",
        "benchmarks",
        "metrics",
        "run_benchmarks",
    } <= tables


# What each migration added, taken away again (newest first): a database as an older kernelwatch
# left it, its runs ingested by today's code, which writes the newest schema only.
UNDONE = {
    4: ("DROP TABLE replaced_results",),
    3: ("DROP INDEX runs_by_key", "ALTER TABLE runs DROP COLUMN run_key"),
    2: ("CREATE INDEX samples_by_run ON samples (run_id)",),
}


def as_of_version(db: Path, version: int) -> None:
    """Make database `db` one of schema `version`, as that version's migrations left it."""
    with sqlite3.connect(db) as c:
        for undone in range(history.SCHEMA_VERSION, version, -1):
            for statement in UNDONE[undone]:
                c.execute(statement)
        c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    with history.database(db) as c:
        assert history.schema_version(c, db) == version


def test_undone_migrations_leave_each_older_schema() -> None:
    """as_of_version's statements undo exactly what each migration did."""
    assert set(UNDONE) == set(range(2, history.SCHEMA_VERSION + 1))


def test_migrations_run_in_order_in_one_transaction(tmp_path, monkeypatch):
    db = tmp_path / "h.sqlite"
    history.open_db(db, create=True).close()
    now, future, further = (
        history.SCHEMA_VERSION,
        history.SCHEMA_VERSION + 1,
        history.SCHEMA_VERSION + 2,
    )
    # A future version migrates a database of this version on open.
    monkeypatch.setitem(history.MIGRATIONS, future, ("ALTER TABLE runs ADD COLUMN note TEXT",))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", future)
    monkeypatch.setattr(schema, "READABLE_FROM", future)
    with pytest.raises(InputError, match="older: `kernelwatch history ingest` brings"):
        history.open_db(db)  # a reading command never writes, not even a migration
    with history.database(db, create=True) as c:
        columns = {r[1] for r in c.execute("PRAGMA table_info(runs)")}
        assert "note" in columns
        assert history.schema_version(c, db) == future
    # A failing migration leaves the database as it was.
    monkeypatch.setitem(history.MIGRATIONS, further, ("CREATE TABLE x (a)", "NOT SQL"))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", further)
    with pytest.raises(InputError):
        history.open_db(db, create=True)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", future)
    with history.database(db) as c:
        assert history.schema_version(c, db) == future
        assert not c.execute("SELECT 1 FROM sqlite_master WHERE name = 'x'").fetchone()
    assert now == 4


def test_a_version_1_database_loses_the_unused_index_and_keeps_its_runs(run_cli, tmp_path):
    db = tmp_path / "h.sqlite"
    assert run_cli("history", "ingest", str(SUITE), "--db", db).status == 0
    as_of_version(db, 1)
    with history.database(db) as c:
        assert c.execute("SELECT 1 FROM sqlite_master WHERE name = 'samples_by_run'").fetchone()
    # Read as it is before the next ingest: the nightly's database, fetched by a newer kernelwatch.
    assert run_cli("history", "list", "--db", db).status == 0
    with history.database(db) as c:
        assert history.schema_version(c, db) == 1
    again = run_cli(
        "history", "ingest", str(GPU_DATA / "h200-suite-card-54f59374.json.gz"), "--db", db
    )
    assert again.status == 0
    with history.database(db) as c:
        assert history.schema_version(c, db) == history.SCHEMA_VERSION
        assert not c.execute("SELECT 1 FROM sqlite_master WHERE name = 'samples_by_run'").fetchone()
        assert [r[0] for r in c.execute("SELECT id FROM runs ORDER BY id")] == [1, 2]
        assert (
            c.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 18070 + 45900
        )  # as ingested


NIGHT = dict(H100_CONTEXT, date="2026-11-21T03:40:00+00:00")


def _series(db: Path) -> list[tuple[int, str, float]]:
    with sqlite3.connect(db) as c:
        return c.execute(
            "SELECT s.run_id, b.name, s.value FROM samples s JOIN benchmarks b "
            "ON b.id = s.benchmark_id JOIN metrics m ON m.id = s.metric_id "
            "WHERE m.name = 'real_time' ORDER BY s.run_id, b.name, s.repetition"
        ).fetchall()


def test_a_key_names_a_workflow_runs_result_and_its_re_run_replaces_it(
    run_cli, write_json, tmp_path, monkeypatch
):
    """nightly.yml ingests each GPU's result under --key nightly/<run id>/<gpu>: a re-run job's
    result (a shard measured again: other values, another content hash) replaces the first
    attempt's, so one workflow run stays one point of each series. The row takes the re-run's
    ingest time: the history as it was before then never held these values (changes.as_of)."""
    clock = iter(f"2026-11-21T0{h}:00:00+00:00" for h in (6, 7, 8, 9))
    monkeypatch.setattr(intake, "_now", lambda: next(clock))
    db = tmp_path / "h.sqlite"
    key = "nightly/7/h100"
    first = write_json("first.json", {"BM_A": [10, 11, 12], "BM_B": [5, 6, 7]}, context=NIGHT)
    other = write_json("other.json", {"BM_A": [10, 11, 12]}, context=dict(NIGHT, date="2026-11-22"))
    later = dict(NIGHT, kernelwatch_run_started="2026-11-21T05:00:00+00:00")
    rerun = write_json("rerun.json", {"BM_A": [20, 21, 22], "BM_B": [5, 6, 7]}, context=later)
    assert run_cli("history", "ingest", first, "--db", db, "--key", key).status == 0
    done = run_cli("history", "ingest", other, "--db", db, "--key", "nightly/8/h100")
    assert done.status == 0 and "as run 2" in done.out, done.err
    done = run_cli("history", "ingest", rerun, "--db", db, "--key", key)
    assert done.status == 0 and done.err == "", done.err
    assert done.out == (
        f"ingested {rerun} as run 1 under --key {key}, replacing the result ingested under it "
        f"before (a re-run's): 2 benchmark(s), 12 value(s), into {db}\n"
    )
    assert _series(db) == [
        (run, name, 1000.0 * us)  # (stored in ns)
        for run, name, times in (
            (1, "BM_A", (20, 21, 22)),
            (1, "BM_B", (5, 6, 7)),
            (2, "BM_A", (10, 11, 12)),
        )
        for us in times
    ]
    with sqlite3.connect(db) as c:
        stored = c.execute(
            "SELECT id, content_hash, source, ingested_at, run_date FROM runs ORDER BY id"
        ).fetchall()
    assert stored[0] == (
        1,
        history.content_hash(read_json(rerun)),
        str(rerun),
        "2026-11-21T08:00:00+00:00",  # the third ingest's
        NIGHT["date"],
    )
    assert stored[1][3] == "2026-11-21T07:00:00+00:00"
    # The same result again: nothing written.
    before = db.read_bytes()
    again = run_cli("history", "ingest", rerun, "--db", db, "--key", key)
    assert again.status == 0 and "nothing written" in again.out and db.read_bytes() == before


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"kernelwatch_git_commit": "c2"}, "of commit c2, the run under it of commit c1"),
        (
            {"gpu_name": "NVIDIA H200"},
            "of nvidia-h200-sm90, the run under it of nvidia-h100-80gb-hbm3-sm90",
        ),
    ],
)
def test_a_key_never_replaces_another_commits_or_gpus_run(
    run_cli, write_json, tmp_path, changes, said
):
    """A key is one workflow run's result of one GPU: the same key on another commit or GPU is
    a mistake in the workflow (a fixed key, a missing run id), which would replace a night."""
    db = tmp_path / "h.sqlite"
    night = dict(NIGHT, kernelwatch_git_commit="c1")
    first = write_json("first.json", {"BM_A": [10, 11, 12]}, context=night)
    assert run_cli("history", "ingest", first, "--db", db, "--key", "k").status == 0
    before = db.read_bytes()
    wrong = write_json("wrong.json", {"BM_A": [20, 21, 22]}, context=dict(night, **changes))
    done = run_cli("history", "ingest", wrong, "--db", db, "--key", "k")
    assert done.status == 2 and done.out == ""
    assert one_line(done.err) == (
        f"kernelwatch: error: {wrong}: --key k: this result is {said} (run 1); a key names "
        "one result of one workflow run, which a re-run replaces\n"
    )
    assert db.read_bytes() == before


def test_an_empty_key_is_refused(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    for key, said in (("", "an empty value"), ("a\nb", "not printable")):
        done = run_cli("history", "ingest", path, "--db", db, "--key", key)
        assert done.status == 2 and f"argument --key: {said}" in one_line(done.err)
        assert not db.exists()


def test_a_version_2_database_takes_keys_and_keeps_its_runs(run_cli, write_json, tmp_path):
    """The nightly's database as uploaded before keys: its runs have none, and stay."""
    db = tmp_path / "h.sqlite"
    old = write_json("old.json", {"BM_A": [1, 2, 3]}, context=NIGHT)
    assert run_cli("history", "ingest", old, "--db", db).status == 0
    as_of_version(db, 2)
    assert run_cli("history", "list", "--db", db).status == 0  # read as it is
    new = write_json("new.json", {"BM_A": [4, 5, 6]}, context=dict(NIGHT, date="2026-11-22"))
    assert run_cli("history", "ingest", new, "--db", db, "--key", "nightly/8/h100").status == 0
    with history.database(db) as c:
        assert history.schema_version(c, db) == history.SCHEMA_VERSION
        assert c.execute("SELECT id, run_key FROM runs ORDER BY id").fetchall() == [
            (1, None),
            (2, "nightly/8/h100"),
        ]


def test_newer_schema_is_refused(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    history.open_db(db, create=True).close()
    with sqlite3.connect(db) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    for args in (("ingest", path), ("list",), ("show", "BM_A")):
        r = run_cli("history", *args, "--db", db)
        assert r.status == 2
        assert "schema version 99 is newer" in one_line(r.err)


@pytest.mark.parametrize(
    ("edit", "message", "commands"),
    [
        (
            "UPDATE meta SET value = '-1' WHERE key = 'schema_version'",
            "bad schema_version '-1' in its meta table",
            ("ingest", "list", "show", "changes"),
        ),
        (
            "UPDATE runs SET benchmarks = 'many'",
            "a damaged history database: run 1's benchmarks holds 'many', not a count",
            ("ingest", "list", "show"),
        ),
        (
            "UPDATE samples SET value = 'abc'",
            "holds 'abc', not a number",
            ("show", "changes"),
        ),
    ],
)
def test_a_hand_edited_database_is_one_line(run_cli, write_json, tmp_path, edit, message, commands):
    """SQLite keeps a value of any type in any column: what a hand edit wrote is refused where
    it is read, not an internal error."""
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1.0, 2.0, 3.0]})
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as c:
        c.execute(edit)
    argv = {"ingest": ("ingest", path), "list": ("list",), "show": ("show", "BM_A")}
    argv["changes"] = ("changes",)
    for command in commands:
        r = run_cli("history", *argv[command], "--db", db)
        assert r.status == 2 and message in one_line(r.err), (command, r.err)


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 200],
)
def test_corrupt_database_is_one_line(run_cli, write_json, tmp_path, content):
    db = tmp_path / "h.sqlite"
    db.write_bytes(content)
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    for args in (("ingest", path), ("list",), ("show", "BM_A")):
        r = run_cli("history", *args, "--db", db)
        assert r.status == 2, r
        assert "not a usable kernelwatch history database" in one_line(r.err)
    assert db.read_bytes() == content


def test_foreign_sqlite_database_is_refused(run_cli, tmp_path):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE users (name)")
    r = run_cli("history", "list", "--db", db)
    assert r.status == 2 and "not a kernelwatch history database" in one_line(r.err)


@pytest.mark.parametrize(
    "statements",
    [
        # another program's key-value meta table: read as "an empty file" (an empty database)
        [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
            "INSERT INTO meta VALUES ('version', '7')",
            "CREATE TABLE users (name)",
        ],
        # views only (no table): taken for an empty database, and an ingest added its tables
        ["CREATE VIEW answer AS SELECT 42"],
    ],
)
def test_another_programs_database_is_refused_and_kept(run_cli, write_json, tmp_path, statements):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as c:
        for statement in statements:
            c.execute(statement)
    c.close()
    content = db.read_bytes()
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    for args in (("list",), ("ingest", path)):
        r = run_cli("history", *args, "--db", db)
        assert r.status == 2 and "not a kernelwatch history database" in one_line(r.err), r.err
    assert db.read_bytes() == content


def test_list_and_show_without_a_database(run_cli, tmp_path):
    db = tmp_path / "none.sqlite"
    for args in (("list",), ("show", "BM_A")):
        r = run_cli("history", *args, "--db", db)
        assert r.status == 2 and "no history database" in one_line(r.err)
    assert not db.exists()


def test_a_db_in_a_missing_folder_is_refused(run_cli, write_json, tmp_path):
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    db = tmp_path / "typo" / "dir" / "h.sqlite"
    r = run_cli("history", "ingest", path, "--db", db)
    assert r.status == 2
    assert f"the folder {db.parent} does not exist" in one_line(r.err)
    assert not (tmp_path / "typo").exists()  # no tree grown from a mistyped path
    r = run_cli("history", "ingest", path, "--db", path / "h.sqlite")
    assert r.status == 2 and "is not a folder" in one_line(r.err)


def test_the_default_databases_folder_is_made(run_cli, write_json, tmp_path, monkeypatch):
    (tmp_path / "checkout" / ".git").mkdir(parents=True)  # a project, found from below
    (tmp_path / "checkout" / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "checkout" / "docs")
    default = tmp_path / "checkout" / "results" / "history.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3]})
    r = run_cli("history", "ingest", path, "--db", default)  # (given or not: the same path)
    assert r.status == 0, r.err
    assert default.is_file()
    default.unlink()
    default.parent.rmdir()
    r = run_cli("history", "ingest", path)
    assert r.status == 0 and f"into {default}" in r.out, r.err


def test_a_time_infinite_in_ns_is_refused_as_compare_refuses_it(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    good = write_json("good.json", {"BM_A": [1.0, 2.0, 3.0]})
    document = json.loads(good.read_text())
    next(r for r in document["benchmarks"] if r["run_type"] == "iteration")["real_time"] = 1e308
    huge = write_json("huge.json", json.dumps(document))  # 1e308 us: finite as read, inf in ns
    r = run_cli("history", "ingest", huge, "--db", db)
    assert r.status == 2
    assert (
        "real_time is inf ns (must be a positive finite number, 1e-100 to 1e+100 ns)"
        in one_line(r.err)
    )
    assert run_cli("compare", good, huge).err == r.err  # the same check, the same line
    # merge wrote it, for every other command to refuse
    assert run_cli("merge", huge, "-o", tmp_path / "m.json").err == r.err
    assert not db.exists() and not (tmp_path / "m.json").exists()


def test_a_time_whose_statistics_overflow_is_refused(run_cli, write_json, tmp_path):
    """1e308 ns is finite, but its variance is not: history ingest kept it, and `report --db`
    stopped with an internal error drawing it."""
    good = write_json("good.json", {"BM_A": [1.0, 2.0, 3.0]})
    document = json.loads(good.read_text())
    for row in document["benchmarks"]:
        row.update(real_time=1e308, time_unit="ns")
    huge = write_json("huge.json", json.dumps(document))
    line = "BM_A: real_time is 1e+308 ns (must be a positive finite number, 1e-100 to 1e+100 ns)"
    for argv in (
        ["history", "ingest", huge, "--db", tmp_path / "h.sqlite"],
        ["compare", good, huge],
        ["export", huge, "--format", "bmf"],
        ["merge", huge, "-o", tmp_path / "m.json"],
    ):
        done = run_cli(*argv)
        assert done.status == 2 and line in one_line(done.err), (argv, done.err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.json", "huge.json"]


def test_empty_history_and_unknown_names(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    history.open_db(db, create=True).close()
    r = run_cli("history", "list", "--db", db)
    assert r.status == 0 and r.out.startswith("no runs in")
    path = write_json("r.json", {"BM_Alpha": [1, 2, 3]})
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    r = run_cli("history", "show", "BM_Alpah", "--db", db)
    assert r.status == 2 and "did you mean BM_Alpha" in one_line(r.err)
    r = run_cli("history", "show", "BM_Alpha", "--metric", "bytes_per_second", "--db", db)
    assert r.status == 2 and "has no bytes_per_second" in one_line(r.err)
    r = run_cli("history", "show", "BM_Alpha", "--gpu", "nvidia-b200-sm100", "--db", db)
    assert r.status == 2 and "no run of BM_Alpha on that GPU" in one_line(r.err)


def test_show_of_a_benchmark_that_always_failed_says_so(run_cli, write_json, tmp_path):
    """Not "--metric time: ... has no real_time values" when no --metric was given: the
    benchmark has no value of any metric, and its error says why."""
    db = tmp_path / "h.sqlite"
    failed = document({"BM_A": [1.0, 2.0, 3.0]}, rows=[failed_row("BM_E", "boom")])
    path = write_json("r.json", json.dumps(failed))
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    r = run_cli("history", "show", "BM_E", "--db", db)
    assert r.status == 2
    assert one_line(r.err) == (
        "kernelwatch: error: BM_E has no values in any run (the latest: error: boom)\n"
    )


def test_default_database_is_in_the_checkout():
    assert history.default_path() == Path(__file__).resolve().parents[2] / "results" / (
        "history.sqlite"
    )


@pytest.mark.parametrize("action", [None, "ingest", "list", "show"])
def test_help(action):
    args = ["history"] + ([action] if action else []) + ["--help"]
    done = run_module(*args)
    assert done.returncode == 0, done.stderr
    assert "exit status:" in done.stdout and "--db" in done.stdout or action is None
    assert "2  bad input" in done.stdout


def test_history_without_action_prints_help(run_cli):
    r = run_cli("history")
    assert r.status == 2 and "ingest" in r.err


def test_list_and_show_as_json_hold_what_the_tables_say(run_cli, write_json, tmp_path):
    db = _two_runs(run_cli, write_json, tmp_path, "+00:00")

    table = run_cli("history", "list", "--db", db)
    assert run_cli("history", "list", "--db", db, "--format", "table").out == table.out
    done = run_cli("history", "list", "--db", db, "--format", "json")
    assert done.status == 0 and done.err == "", done.err
    listed = json.loads(done.out)  # one document, nothing else on stdout
    assert listed["schema_version"] == 1 and listed["command"] == "history list"
    assert listed["db"] == str(db)
    rows = [line.split() for line in table.out.splitlines()[1:]]
    assert [
        [str(r["id"]), r["date"], r["commit"], r["gpu_slug"], str(r["benchmarks"])]
        for r in listed["runs"]
    ] == rows
    assert {r["gpu_name"] for r in listed["runs"]} == {H100_CONTEXT["gpu_name"]}
    assert all(r["slowed_on_purpose"] is None for r in listed["runs"])

    table = run_cli("history", "show", "BM_A", "--db", db)
    assert run_cli("history", "show", "BM_A", "--db", db, "--format", "table").out == table.out
    done = run_cli("history", "show", "BM_A", "--db", db, "--format", "json")
    assert done.status == 0 and done.err == "", done.err
    shown = json.loads(done.out)
    assert shown["schema_version"] == 1 and shown["command"] == "history show"
    assert (shown["benchmark"], shown["metric"], shown["unit"], shown["gpu"]) == (
        "BM_A",
        "real_time",
        "ns",
        None,
    )
    assert [(r["date"], r["commit"], r["n"]) for r in shown["runs"]] == [
        (row[0], row[1], int(row[3]))
        for row in (line.split() for line in table.out.splitlines()[2:])
    ]
    assert [(r["median"], r["min"], r["max"]) for r in shown["runs"]] == [
        (11.0, 10.0, 12.0),
        (30.0, 20.0, 40.0),
    ]
    assert [r["id"] for r in shown["runs"]] == [r["id"] for r in listed["runs"]]
    assert all(r["error"] is None for r in shown["runs"])


def test_json_of_an_empty_history_and_bad_format(run_cli, write_json, tmp_path):
    db = tmp_path / "h.sqlite"
    path = write_json("r.json", {"BM_A": [1, 2, 3]}, context=H100_CONTEXT)
    assert run_cli("history", "ingest", path, "--db", db).status == 0
    with sqlite3.connect(db) as connection:  # no runs left: a listing of none, still JSON
        connection.execute("DELETE FROM samples")
        connection.execute("DELETE FROM runs")
    done = run_cli("history", "list", "--db", db, "--format", "json")
    assert done.status == 0 and json.loads(done.out)["runs"] == []
    for args in (("list",), ("show", "BM_A")):
        done = run_cli("history", *args, "--db", db, "--format", "markdown")
        assert done.status == 2 and done.out == ""
        one_line(done.err)
    missing = run_cli("history", "show", "BM_B", "--db", db, "--format", "json")
    assert (
        missing.status == 2 and missing.out == "" and "no benchmark 'BM_B'" in one_line(missing.err)
    )
