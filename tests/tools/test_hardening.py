"""Bad input, hostile output targets and kills, over every command that reads or writes files.

The matrix: every command that reads files x every kind of bad input. Each case must end in
one line on stderr, `kernelwatch: error: ...`, exit 2 (or, where the input is valid for that
command, a clean run), never an internal error or a traceback, and change no file it was not
asked to write. The last test prints the counts (kinds x commands tried, clean errors,
internal errors, data-loss cases).

The kill test: `baseline update` killed at every file operation in turn leaves its folder
exactly old or exactly new, and the next update leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fakebench
import pytest
from conftest import H100_CONTEXT, REPO, TOOLS, document, run_module
from kernelwatch import cli, files, synthetic
from kernelwatch.gbench import failed_row

SLUG = "nvidia-h100-80gb-hbm3-sm90"
CONTEXT = {
    **H100_CONTEXT,
    "date": "2026-11-21T05:40:57+00:00",
    "kernelwatch_git_commit": "a" * 40,
}


def steady(median: float, n: int = 10) -> list[float]:
    return [median * (1 + 0.001 * ((k * 7) % 5)) for k in range(n)]


GOOD_SPEC = {f"fam/bench/{i}/manual_time": steady(100.0 + i) for i in range(4)}


def good(context: dict[str, Any] | None = None) -> dict[str, Any]:
    return document(GOOD_SPEC, context=CONTEXT if context is None else context)


def rows(**change: Any) -> list[dict[str, Any]]:
    """The good document's rows with one value row changed."""
    out = good()["benchmarks"]
    first = next(r for r in out if r.get("run_type") == "iteration")
    first.update(change)
    return out


def doc_with(rows_: list[dict[str, Any]], context: dict[str, Any] | None = None) -> str:
    return json.dumps({"context": CONTEXT if context is None else context, "benchmarks": rows_})


def duplicated() -> list[dict[str, Any]]:
    out = good()["benchmarks"]
    return out + [r for r in out if r.get("run_type") == "iteration"][:1]


def mixed_units() -> list[dict[str, Any]]:
    out = good()["benchmarks"]
    [r for r in out if r.get("run_type") == "iteration"][1]["time_unit"] = "ms"
    return out


def string_counter() -> list[dict[str, Any]]:
    out = good()["benchmarks"]
    values = [r for r in out if r.get("run_type") == "iteration"]
    for row in values:
        row["bytes_per_second"] = 1e9
    values[3]["bytes_per_second"] = "fast"
    return out


def renamed(name: str) -> str:
    out = good()["benchmarks"]
    for row in out:
        for key in ("name", "run_name"):
            if isinstance(row.get(key), str) and row[key].startswith("fam/bench/0/"):
                row[key] = row[key].replace("fam/bench/0/", name + "/")
    return doc_with(out)


def before_1_5(rows_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in Google Benchmark's layout before 1.5: none of its keys, statistics named
    `<name>_<statistic>` (tests/data/gbench-1.4/README.md)."""
    out = []
    for row in rows_:
        old = {k: v for k, v in row.items() if k not in ("run_name", "run_type", "repetitions")}
        for key in ("repetition_index", "aggregate_name", "aggregate_unit", "threads"):
            old.pop(key, None)
        for key in ("family_index", "per_family_instance_index"):
            old.pop(key, None)
        out.append(old)
    return out


def old_name_twice() -> list[dict[str, Any]]:
    out = before_1_5(good()["benchmarks"])
    return out + [r for r in out if r["name"] == out[0]["name"]][:1]


NVBENCH_REF = REPO / "tests" / "data" / "nvbench" / "test_ref.json"


def nvbench_doc(filename: str | None = None, **device: Any) -> dict[str, Any]:
    """nvbench's test file, one device, one benchmark; its first state's `--jsonbin` sample
    file named `filename`, its device description changed by `device`."""
    document = json.loads(NVBENCH_REF.read_text())
    document["devices"] = [d for d in document["devices"] if d["id"] == 0]
    document["devices"][0].update(device)
    document["benchmarks"] = document["benchmarks"][:1]
    states = [s for s in document["benchmarks"][0]["states"] if s["device"] == 0]
    document["benchmarks"][0]["states"] = states
    if filename is not None:
        states[0]["summaries"].append(
            {
                "tag": "nv/json/bin:nv/cold/sample_times",
                "data": [{"name": "filename", "type": "string", "value": filename}],
            }
        )
    return document


def nvbench_text(filename: str | None = None, **device: Any) -> bytes:
    return json.dumps(nvbench_doc(filename, **device)).encode()


def deep(text: str, levels: int = 990) -> bytes:
    """`text` with its string "DEEP" as lists `levels` deep (orjson and json read 990 levels;
    json.dumps, which wrote the history's content hash, fails there)."""
    return text.replace('"DEEP"', "[" * levels + "]" * levels).encode()


def nvbench_with_sample(make: Callable[[Path], None]) -> Callable[[Path], None]:
    """A case of several files: bad.json naming `bad.json-bin/0.bin`, which `make` makes."""

    def place_in(path: Path) -> None:
        path.write_bytes(nvbench_text("bad.json-bin/0.bin"))
        folder = path.parent / "bad.json-bin"
        folder.mkdir()
        make(folder / "0.bin")

    return place_in


GOOD_TEXT = json.dumps(good())
NAN_TEXT = doc_with(rows(real_time=math.nan)).replace("NaN", "NaN")
ERROR_ROWS = doc_with(good()["benchmarks"] + [failed_row("fam/broken", "boom")])

# kind -> the file's bytes (None: no file at all; "DIR": a folder; a function: makes bad.json
# and what it names beside it)
KINDS: dict[str, bytes | str | None | Callable[[Path], None]] = {
    "missing": None,
    "directory": "DIR",
    "empty": b"",
    "whitespace": b"  \n\t\n",
    "truncated": GOOD_TEXT[: len(GOOD_TEXT) // 2].encode(),
    "binary": bytes(range(256)) * 4,
    "invalid utf-8": b'{"benchmarks": ["\xff\xfe"]}',
    "foreign JSON": b'{"name": "not a result", "version": 3}',
    "JSON list": b"[1, 2, 3]",
    "JSON string": b'"benchmarks"',
    "TOML": b'[compare]\nthreshold = "1%"\n',
    "CSV": b"name,real_time\nBM_a,1.0\n",
    "HTML": b"<!DOCTYPE html><html></html>",
    "NaN time": NAN_TEXT.encode(),
    "negative time": doc_with(rows(real_time=-1.0)).encode(),
    "zero time": doc_with(rows(real_time=0)).encode(),
    "infinite time": doc_with(rows(real_time=1e400)).encode(),
    "time infinite in ns": doc_with(rows(real_time=1e308)).encode(),  # 1e308 us: finite as read
    "filtered run": doc_with(
        good()["benchmarks"], {**CONTEXT, "kernelwatch_filter": "^fam/"}
    ).encode(),
    "one shard": doc_with(good()["benchmarks"], {**CONTEXT, "kernelwatch_shard": "1/2"}).encode(),
    "empty shard": json.dumps(
        {"context": {**CONTEXT, "kernelwatch_shard": "1/1"}, "benchmarks": []}
    ).encode(),
    "full-width shard": doc_with(
        good()["benchmarks"], {**CONTEXT, "kernelwatch_shard": "１/１"}
    ).encode(),
    # a whole split (1/1) whose plan key (merge compares it between parts) is not a string
    "shard plan not a string": doc_with(
        good()["benchmarks"],
        {**CONTEXT, "kernelwatch_shard": "1/1", "kernelwatch_shard_plan": ["sha256:00", 1]},
    ).encode(),
    "fewer benchmarks": json.dumps(
        document(dict(list(GOOD_SPEC.items())[:2]), context=CONTEXT)
    ).encode(),
    "string time": doc_with(rows(real_time="fast")).encode(),
    "boolean time": doc_with(rows(real_time=True)).encode(),
    "duplicates": doc_with(duplicated()).encode(),
    "mixed units": doc_with(mixed_units()).encode(),
    "unknown unit": doc_with(rows(time_unit="fortnights")).encode(),
    "string counter": doc_with(string_counter()).encode(),
    "error rows": ERROR_ROWS.encode(),
    "no benchmarks list": json.dumps({"context": CONTEXT, "benchmarks": 4}).encode(),
    "context not an object": json.dumps({"context": [1], "benchmarks": []}).encode(),
    "row not an object": doc_with([1, 2]).encode(),
    "lone surrogate": renamed("BM_\ud800").encode(),
    "nested too deeply": b"[" * 100000 + b"]" * 100000,
    # more digits than Python's int() reads (sys.get_int_max_str_digits, 4300)
    "huge integer": doc_with(rows(iterations=7777777))
    .replace("7777777", "1" + "0" * 5000)
    .encode(),
    "malformed date": doc_with(good()["benchmarks"], {**CONTEXT, "date": "yesterday"}).encode(),
    "date not a string": doc_with(good()["benchmarks"], {**CONTEXT, "date": 1700000000}).encode(),
    # in UTC past the year 9999: an OverflowError in history, report and --since
    "date past 9999 in UTC": doc_with(
        good()["benchmarks"], {**CONTEXT, "date": "9999-12-31T23:59:59-14:00"}
    ).encode(),
    # Python reads the string "false" as true: an ERROR or skipped row, and exit 1
    "error flag as text": doc_with(rows(error_occurred="false")).encode(),
    "skipped flag as text": doc_with(rows(skipped="false")).encode(),
    "commands not a list": doc_with(
        good()["benchmarks"], {**CONTEXT, "kernelwatch_benchmark_commands": 5}
    ).encode(),
    "GPU name a number": doc_with(good()["benchmarks"], {**CONTEXT, "gpu_name": 5}).encode(),
    "Google Benchmark before 1.5": doc_with(before_1_5(good()["benchmarks"])).encode(),
    "before 1.5, a name twice": doc_with(old_name_twice()).encode(),
    "deep context": deep(doc_with(good()["benchmarks"], {**CONTEXT, "x": "DEEP"})),
    "nvbench deep meta": deep(
        json.dumps({**nvbench_doc(), "meta": {**nvbench_doc()["meta"], "argv": "DEEP"}})
    ),
    "nvbench sample file absolute": nvbench_text(str(REPO / "LICENSE")),
    "nvbench sample file ..": nvbench_text("../bad.json-bin/0.bin"),
    "nvbench sample file a link out": nvbench_with_sample(
        lambda sample: sample.symlink_to(REPO / "LICENSE")
    ),
    "nvbench sample file a FIFO": nvbench_with_sample(os.mkfifo),
    "nvbench sample file a folder": nvbench_with_sample(Path.mkdir),
    "nvbench sample file name too long": nvbench_text("a" * 5000),
    "nvbench NaN clock": nvbench_text(sm_default_clock_rate=math.nan),
    "nvbench infinite clock": nvbench_text(global_memory_bus_peak_clock_rate=math.inf),
    "nvbench device name a list": nvbench_text(name=["Quadro GV100"]),
    "slowed on purpose": doc_with(
        good()["benchmarks"], {**CONTEXT, "kernelwatch_inject": "fam:0.05"}
    ).encode(),
    "selftest bad level": doc_with(
        good()["benchmarks"],
        {
            **CONTEXT,
            "kernelwatch_selftest_role": "inject",
            "kernelwatch_selftest_index": "1",
            "kernelwatch_selftest_level": "nan",
        },
    ).encode(),
}

# Inputs that are valid for a command: it must run cleanly (exit 0 or 1), still without an
# internal error, and change nothing but what it writes.
# Whole results of a part of the suite: what compare, report and the history take, and what
# `baseline update` refuses without --filter (or --drop-missing): it would drop the others.
PARTS = (
    "filtered run",
    "one shard",
    "fewer benchmarks",
    "full-width shard",
    "shard plan not a string",
)
# Google Benchmark's layout before 1.5 is a result like any other (its rows are repetitions)
OLD = "Google Benchmark before 1.5"

# Context keys a command does not read (the run's date shown as written; the benchmark
# commands that only merge joins).
UNREAD = ("date past 9999 in UTC", "commands not a list")

ACCEPTED: dict[str, set[str]] = {
    "compare": {
        OLD,
        "error rows",
        "malformed date",
        "date not a string",
        "slowed on purpose",
        "selftest bad level",
        *UNREAD,
        *PARTS,
    },
    "report": {
        OLD,
        "error rows",
        "malformed date",
        "date not a string",
        "slowed on purpose",
        "selftest bad level",
        *UNREAD,
        *PARTS,
    },
    # (the history keeps every run; a part of the suite is a run like any other)
    "history ingest": {
        OLD,
        "error rows",
        "slowed on purpose",
        "selftest bad level",
        "commands not a list",
        *PARTS,
    },
    # (a date that is not text would make a manifest that no later command reads)
    "baseline update": {OLD, "malformed date", *UNREAD},
    # show reads only the context of a result file, to find its GPU's baseline
    "baseline show": {
        OLD,
        "before 1.5, a name twice",
        "malformed date",
        "date not a string",
        "error flag as text",
        "skipped flag as text",
        *UNREAD,
        "slowed on purpose",
        "selftest bad level",
        "error rows",
        "NaN time",
        "negative time",
        "zero time",
        "infinite time",
        "time infinite in ns",
        "string time",
        "boolean time",
        "duplicates",
        "mixed units",
        "unknown unit",
        "string counter",
        "no benchmarks list",
        "row not an object",
        "empty shard",
        *PARTS,
    },
}
# export reads a result as compare does; merge too, but a lone shard is a missing part
ACCEPTED["export"] = set(ACCEPTED["compare"])
# (a shard key merge would not write: "１/１" is no K/N; a date that is no time would not date the
# merged result by its earliest part: merge compares the parts' dates as times)
ACCEPTED["merge"] = (
    ACCEPTED["compare"]
    - {"one shard", "full-width shard", "commands not a list"}
    - {"malformed date", "date not a string", "date past 9999 in UTC"}
)


@dataclass
class Tally:
    tried: int = 0
    clean_errors: int = 0
    accepted: int = 0
    internal_errors: list[str] = field(default_factory=list)
    data_loss: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    commands: set[str] = field(default_factory=set)


TALLY = Tally()


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under root with its content's hash (what a command may not change)."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink() or not path.is_file():
            found[key] = "dir" if path.is_dir() else "other"
        else:
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def place(tmp: Path, kind: str, name: str = "bad.json") -> Path:
    content = KINDS[kind]
    path = tmp / name
    if content == "DIR":
        path.mkdir()
        (path / "inner.txt").write_text("x")
    elif callable(content):
        content(path)
    elif content is not None:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    return path


def prepared(tmp: Path) -> dict[str, Path]:
    """A good result, a baseline folder made from it, a history database holding it, and a
    selftest folder; what the commands read besides the bad file."""
    good_path = tmp / "good.json"
    good_path.write_text(GOOD_TEXT)
    root = tmp / "baselines"
    root.mkdir()  # (update refuses a --baselines folder that is not there)
    db = tmp / "history.sqlite"
    assert cli.main(["baseline", "update", str(good_path), "--baselines", str(root)]) == 0
    assert cli.main(["history", "ingest", str(good_path), "--db", str(db)]) == 0
    return {"good": good_path, "root": root, "db": db, "out": tmp / "outputs"}


# command -> (argv from the bad file and the prepared paths, what it may write)
COMMANDS: dict[str, Callable[[Path, dict[str, Path]], list[str]]] = {
    "compare (baseline side)": lambda bad, p: ["compare", str(bad), str(p["good"])],
    "compare (contender side)": lambda bad, p: ["compare", str(p["good"]), str(bad)],
    "compare --junit --markdown": lambda bad, p: [
        "compare",
        str(p["good"]),
        str(bad),
        "--junit",
        str(p["out"] / "j.xml"),
        "--markdown",
        str(p["out"] / "m.md"),
    ],
    "baseline update": lambda bad, p: [
        "baseline",
        "update",
        str(bad),
        "--baselines",
        str(p["root"]),
    ],
    "baseline show": lambda bad, p: [
        "baseline",
        "show",
        str(bad),
        "--baselines",
        str(p["root"]),
    ],
    "history ingest": lambda bad, p: [
        "history",
        "ingest",
        str(bad),
        "--db",
        str(p["db"]),
    ],
    "history list": lambda bad, p: ["history", "list", "--db", str(bad)],
    "history changes": lambda bad, p: [
        "history",
        "changes",
        "--db",
        str(bad),
        "--json",
        str(p["out"] / "c.json"),
    ],
    "report": lambda bad, p: [
        "report",
        str(bad),
        "--baseline",
        str(p["good"]),
        "-o",
        str(p["out"] / "r.html"),
    ],
    "selftest --from": lambda bad, p: ["selftest", "--from", str(bad.parent / "st")],
    "export": lambda bad, p: ["export", str(bad), "--format", "bmf"],
    "merge": lambda bad, p: ["merge", str(bad), "-o", str(p["out"] / "m.json")],
}
# What each command may change when it accepts its input.
WRITES = {
    "baseline update": {
        f"baselines/{SLUG}/{name}" for name in ("result.json", "noise.json", "manifest.json")
    }
    | {f"baselines/{SLUG}"},
    "history ingest": {"history.sqlite", "history.sqlite-journal"},
    "report": {"outputs/r.html"},
    "compare --junit --markdown": {"outputs/j.xml", "outputs/m.md"},
    "merge": {"outputs/m.json"},
}


def family(command: str) -> str:
    return command.split(" (")[0].split(" --")[0]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_bad_input_is_one_line_and_changes_nothing(
    command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == "report":
        pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    paths = prepared(tmp_path)
    paths["out"].mkdir()
    bad = place(tmp_path, kind)
    if command == "selftest --from":  # the bad file is one of the saved runs
        (tmp_path / "st").mkdir()
        if bad.exists() and bad.is_file():
            bad.rename(tmp_path / "st" / "aa-1.json")
        elif bad.is_dir():
            bad.rename(tmp_path / "st" / "aa-1.json")
    capsys.readouterr()
    before = snapshot(tmp_path)
    status = cli.main(COMMANDS[command](tmp_path / "bad.json", paths))
    captured = capsys.readouterr()
    after = snapshot(tmp_path)
    TALLY.tried += 1
    TALLY.kinds.add(kind)
    TALLY.commands.add(command)
    case = f"{command} x {kind}"
    if "internal error" in captured.err or "Traceback" in captured.err:
        TALLY.internal_errors.append(f"{case}: {captured.err.strip()}")
    accepted = kind in ACCEPTED.get(family(command), set())
    allowed = WRITES.get(command, set()) if accepted else set()
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    if changed - allowed:
        TALLY.data_loss.append(f"{case}: changed {sorted(changed - allowed)}")
    assert "internal error" not in captured.err and "Traceback" not in captured.err, captured.err
    assert not changed - allowed, f"{case} changed {sorted(changed - allowed)}"
    if accepted:
        assert status in (0, 1), f"{case}: {status} {captured.err}"
        TALLY.accepted += 1
        return
    lines = captured.err.splitlines()
    errors = [line for line in lines if line.startswith("kernelwatch: error: ")]
    assert status == 2, f"{case}: exit {status}: {captured.err}"
    assert len(errors) == 1 and lines[-1] == errors[0], f"{case}: {captured.err}"
    TALLY.clean_errors += 1


# --- output targets -------------------------------------------------------------------------


def _target(tmp: Path, kind: str) -> tuple[Path, Path | None]:
    """An output path of a kind that must not be replaced; and what must survive."""
    victim = tmp / "victim.txt"
    victim.write_text("keep")
    if kind == "symlink":
        (tmp / "out").symlink_to(victim)
        return tmp / "out", victim
    if kind == "fifo":
        os.mkfifo(tmp / "out")
        return tmp / "out", None
    if kind == "device":
        return Path("/dev/null"), None
    if kind == "folder":
        (tmp / "out").mkdir()
        return tmp / "out", None
    if kind == "inside a file":  # (`--out /etc/passwd/x`)
        return victim / "out", victim
    return tmp / "absent" / "out", None  # a missing folder


def measuring(paths: dict[str, Path], command: str, *argv: object) -> list[str]:
    """`run` or `selftest` of the fake binary (it counts its measuring runs)."""
    return [
        command,
        "--bench",
        str(paths["bench"]),
        "--repetitions",
        "3",
        *map(str, argv),
    ]


def ab_runs(*argv: object) -> list[str]:
    """`ab` of the last two commits, built already (--no-build)."""
    return ["ab", "HEAD~1", "HEAD", "--no-build", *map(str, argv)]


WRITERS: dict[str, Callable[[Path, dict[str, Path]], list[str]]] = {
    "report -o": lambda out, p: [
        "report",
        str(p["good"]),
        "--baseline",
        str(p["good"]),
        "-o",
        str(out),
    ],
    "compare --junit": lambda out, p: [
        "compare",
        str(p["good"]),
        str(p["good"]),
        "--junit",
        str(out),
    ],
    "compare --markdown": lambda out, p: [
        "compare",
        str(p["good"]),
        str(p["good"]),
        "--markdown",
        str(out),
    ],
    "history changes --json": lambda out, p: [
        "history",
        "changes",
        "--db",
        str(p["db"]),
        "--json",
        str(out),
    ],
    "selftest --json": lambda out, p: [
        "selftest",
        "--from",
        str(p["st"]),
        "--json",
        str(out),
    ],
    "selftest --markdown": lambda out, p: [
        "selftest",
        "--from",
        str(p["st"]),
        "--markdown",
        str(out),
    ],
    # The measuring commands check their paths before building or measuring anything: a bad
    # one would otherwise lose the run at its end.
    "run --out": lambda out, p: measuring(p, "run", "--out", out),
    "run --json": lambda out, p: measuring(p, "run", "--json", out),
    "run --junit": lambda out, p: measuring(p, "run", "--junit", out),
    "run --markdown": lambda out, p: measuring(p, "run", "--markdown", out),
    "selftest --out": lambda out, p: measuring(p, "selftest", "--out", out),
    "selftest --json (measuring)": lambda out, p: measuring(p, "selftest", "--json", out),
    "ab --json": lambda out, p: ab_runs("--json", out),
    "ab --out": lambda out, p: ab_runs("--out", out),
}
# Folders a command owns, made when missing (results/ by default), and the folders it fills.
OWNED = {
    "run --out": {"missing folder"},
    "selftest --out": {"missing folder", "folder"},
}
OWNED["ab --out"] = OWNED["selftest --out"]
TARGETS = ["symlink", "fifo", "device", "folder", "missing folder", "inside a file"]


def writer_paths(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """prepared(), a selftest folder, and a fake benchmark binary; cwd = tmp (results/)."""
    paths = prepared(tmp)
    paths["st"] = tmp / "st"
    paths["st"].mkdir()
    paths["bench"] = fakebench.make(tmp / "build", "kernelwatch_bench_fam", {"fam/a": 1e5})
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp)
    return paths


@pytest.mark.parametrize(
    ("writer", "kind"),
    [(w, k) for w in WRITERS for k in TARGETS if k not in OWNED.get(w, ())],
)
def test_writers_replace_only_regular_files(
    writer: str,
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if writer.startswith("report"):
        pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    paths = writer_paths(tmp_path, monkeypatch)
    out, victim = _target(tmp_path, kind)
    capsys.readouterr()
    before = snapshot(tmp_path)
    status = cli.main(WRITERS[writer](out, paths))
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    reasons = ("refusing to replace it", "refusing to write there", "does not exist")
    assert any(w in err for w in (*reasons, "is a directory", "is not a folder")), err
    assert snapshot(tmp_path) == before and fakebench.runs(paths["bench"]) == 0
    assert Path("/dev/null").is_char_device() and not (tmp_path / "absent").exists()
    if victim is not None:
        assert victim.read_text() == "keep" and (kind != "symlink" or out.is_symlink())


# command -> argv that names one of its inputs (or one output twice) as an output
OVERWRITERS: dict[str, Callable[[dict[str, Path]], list[str]]] = {
    "compare --json CONTENDER": lambda p: ["compare", p["a"], p["b"], "--json", p["b"]],
    "compare --junit BASELINE": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--junit",
        p["a"],
    ],
    "compare --markdown BASELINE (a link to it)": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--markdown",
        p["link"],
    ],
    "compare --json CONTENDER (a hard link)": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--json",
        p["hard"],
    ],
    "compare --json in a CONTENDER folder": lambda p: [
        "compare",
        p["a"],
        p["results"],
        "--json",
        p["results"] / "report.json",
    ],
    "compare --json X --markdown X": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--json",
        p["tmp"] / "x",
        "--markdown",
        p["tmp"] / "x",
    ],
    "export -o RESULT": lambda p: ["export", p["a"], "--format", "bmf", "-o", p["a"]],
    "merge -o SHARD": lambda p: ["merge", p["a"], p["b"], "-o", p["a"]],
    "report -o RESULT": lambda p: ["report", p["a"], "-o", p["a"]],
    "report -o DB": lambda p: ["report", p["a"], "-o", p["db"], "--db", p["db"]],
    "report -o in the baselines": lambda p: [
        "report",
        p["a"],
        "-o",
        p["root"] / SLUG / "r.html",
        "--baselines",
        p["root"],
    ],
    "history changes --json DB": lambda p: [
        "history",
        "changes",
        "--db",
        p["db"],
        "--json",
        p["db"],
    ],
    "selftest --from DIR --json DIR/run": lambda p: [
        "selftest",
        "--from",
        p["st"],
        "--json",
        p["st"] / "aa-1.json",
    ],
    "comment -o RESULT": lambda p: [
        "comment",
        p["md"],
        "--result",
        p["a"],
        "-o",
        p["a"],
    ],
    "comment -o REPORT": lambda p: ["comment", p["md"], "--gpu", "H100", "-o", p["md"]],
    "run --out X --json X": lambda p: measuring(p, "run", "--out", p["x"], "--json", p["x"]),
    "run --out BASELINE": lambda p: measuring(p, "run", "--baseline", p["a"], "--out", p["a"]),
    "run --out in the baselines": lambda p: measuring(
        p, "run", "--baselines", p["root"], "--out", p["root"] / SLUG / "result.json"
    ),
    "run --out BENCH": lambda p: measuring(p, "run", "--out", p["bench"]),
    "run --json its re-run": lambda p: measuring(
        p, "run", "--out", p["x"], "--json", p["tmp"] / "x.confirm-1.json"
    ),
    "selftest --out DIR --json DIR/run": lambda p: measuring(
        p, "selftest", "--out", p["st"], "--json", p["st"] / "aa-1.json"
    ),
    "ab --json in A's runs": lambda p: ab_runs(
        "--out", p["tmp"] / "ab", "--json", p["tmp"] / "ab" / "A" / "round-1.json"
    ),
    # The settings file is read too: a report written over it replaced the suite's thresholds.
    "compare --json CONFIG": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--config",
        p["config"],
        "--json",
        p["config"],
    ],
    "compare --json the suite's kernelwatch.toml": lambda p: [
        "compare",
        p["a"],
        p["b"],
        "--json",
        p["root"] / "kernelwatch.toml",
    ],
    "report -o CONFIG": lambda p: [
        "report",
        p["a"],
        "--config",
        p["config"],
        "-o",
        p["config"],
    ],
    "history changes --json CONFIG": lambda p: [
        "history",
        "changes",
        "--db",
        p["db"],
        "--config",
        p["config"],
        "--json",
        p["config"],
    ],
    "run --out CONFIG": lambda p: measuring(
        p, "run", "--config", p["config"], "--out", p["config"]
    ),
    "selftest --json CONFIG": lambda p: measuring(
        p, "selftest", "--out", p["st"], "--config", p["config"], "--json", p["config"]
    ),
    "ab --json CONFIG": lambda p: ab_runs(
        "--out", p["tmp"] / "ab", "--config", p["config"], "--json", p["config"]
    ),
}


@pytest.mark.parametrize("command", list(OVERWRITERS))
def test_an_output_that_is_an_input_is_refused_before_any_work(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = writer_paths(tmp_path, monkeypatch)
    paths.update(tmp=tmp_path, a=paths["good"], x=tmp_path / "x.json", md=tmp_path / "rep.md")
    paths["b"] = tmp_path / "b.json"
    paths["b"].write_text(GOOD_TEXT)
    paths["md"].write_text("| report |\n")
    paths["config"] = tmp_path / "settings.toml"
    paths["config"].write_text('[compare]\nthreshold = "5%"\n')
    (paths["root"] / "kernelwatch.toml").write_text('[compare]\nthreshold = "5%"\n')
    paths["link"] = tmp_path / "link.json"
    paths["link"].symlink_to(paths["a"])
    paths["hard"] = tmp_path / "hard.json"
    os.link(paths["b"], paths["hard"])
    paths["results"] = tmp_path / "results-b"
    paths["results"].mkdir()
    (paths["results"] / "run.json").write_text(GOOD_TEXT)
    (paths["st"] / "aa-1.json").write_text(GOOD_TEXT)
    capsys.readouterr()
    before = snapshot(tmp_path)
    status = cli.main([str(arg) for arg in OVERWRITERS[command](paths)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    reasons = (
        "is an input of this command",
        "lies inside an input folder",
        "is also written as",
    )
    assert any(reason in err for reason in reasons), err
    assert snapshot(tmp_path) == before and fakebench.runs(paths["bench"]) == 0


def test_output_to_a_full_device_is_one_line(tmp_path: Path) -> None:
    paths = tmp_path / "a.json"
    paths.write_text(GOOD_TEXT)
    env = dict(os.environ, PYTHONPATH=str(TOOLS))
    for argv in (
        ["compare", paths, paths],
        ["baseline", "list", "--baselines", tmp_path],
    ):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "kernelwatch", *map(str, argv)],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        assert done.returncode == 2
        assert (
            done.stderr
            == "kernelwatch: error: could not write the output: No space left on device\n"
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--threshold", "-5%", "a", "b"],
        ["compare", "a"],
        ["nonsense"],
        ["baseline", "update"],
        ["history", "changes", "--since"],
        ["selftest", "--min-time-us", "x"],
        ["report", "r.json"],
        ["run", "--shard", "-1/2"],
        ["run", "--shard", ""],
    ],
)
def test_every_usage_error_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    assert "usage:" not in err


@pytest.mark.parametrize(
    "argv, stream",
    [
        (["compare", "BAD", "BAD"], "2>/dev/full"),  # an input error: 2
        (["compare", "--bogus"], "2>&-"),  # a usage error: 2
        (["export", "GOOD", "--format", "bmf"], ">&-"),  # output to a closed stdout: 2
    ],
)
def test_an_unwritable_stream_keeps_the_exit_status(
    tmp_path: Path, argv: list[str], stream: str
) -> None:
    """Where stderr cannot take the error line, the status still says what happened: the
    failed write ended with Python's status 1, a regression's (CLI audit of 2026-11-30)."""
    (tmp_path / "GOOD").write_text(GOOD_TEXT)
    (tmp_path / "BAD").write_text("{")
    done = subprocess.run(
        f"{sys.executable} -m kernelwatch {' '.join(argv)} {stream}",
        shell=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(TOOLS)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["history", "show", "\udcff"], "'\\udcff': not UTF-8 text"),
        (["history", "changes", "--since", "9999-12-31T23:59:59-14:00"], "outside the years"),
    ],
)
def test_arguments_a_history_cannot_hold_are_one_line(
    tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name that is not UTF-8 (a lone surrogate) and a date past year 9999 in UTC were
    internal errors (UnicodeEncodeError, OverflowError)."""
    good = tmp_path / "good.json"
    good.write_text(GOOD_TEXT)
    db = tmp_path / "h.sqlite"
    assert cli.main(["history", "ingest", str(good), "--db", str(db)]) == 0
    capsys.readouterr()
    status = cli.main([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize(
    "option, commands",
    [
        ("--noise-multiplier", ["compare", "report", "selftest --from", "run"]),
        ("--threshold", ["compare", "report", "history changes"]),
        ("--alpha", ["compare", "report", "history changes", "selftest --from"]),
        ("--max-time", ["run", "selftest", "ab"]),
        ("--precision", ["run"]),
        ("--min-time-us", ["selftest"]),
        ("--time-budget", ["selftest"]),
        ("--explain-budget", ["ab"]),
    ],
)
def test_non_finite_float_options_are_refused(
    option: str, commands: list[str], value: str, tmp_path: Path, capsys
) -> None:
    # --noise-multiplier inf made every change SAME: a 50 % regression passed
    paths = prepared(tmp_path)
    (tmp_path / "st").mkdir()
    good, db, out = str(paths["good"]), str(paths["db"]), str(tmp_path / "out.html")
    argvs = {
        "compare": ["compare", good, good],
        "report": ["report", good, "--baseline", good, "-o", out],
        "history changes": ["history", "changes", "--db", db],
        "selftest --from": ["selftest", "--from", str(tmp_path / "st")],
        "selftest": [
            "selftest",
            "--bench",
            str(tmp_path / "absent"),
            "--out",
            str(tmp_path),
        ],
        "run": ["run", "--bench", str(tmp_path / "absent")],
        "ab": ["ab", "HEAD~1", "HEAD", "--repo", str(tmp_path)],
    }
    capsys.readouterr()
    for command in commands:
        before = snapshot(tmp_path)
        status = cli.main([*argvs[command], f"{option}={value}"])
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1, f"{command}: {err}"
        shown = ("nan",) if value == "nan" else ("inf", value)  # 1e400 is read as inf
        assert err.startswith("kernelwatch: error: "), f"{command}: {err}"
        assert any(v in err for v in shown), f"{command}: {err}"
        assert snapshot(tmp_path) == before


def unreadable_run(argv: list[Any]) -> subprocess.CompletedProcess[str]:
    """kernelwatch without the right to read what chmod 000 closed: as root (this project's
    machines), with the capabilities that bypass file modes dropped."""
    command = [sys.executable, "-m", "kernelwatch", *map(str, argv)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root without setpriv: file modes cannot be enforced")
        caps = "-dac_override,-dac_read_search"
        command = [
            setpriv,
            f"--inh-caps={caps}",
            f"--bounding-set={caps}",
            "--",
            *command,
        ]
    env = dict(os.environ, PYTHONPATH=str(TOOLS))
    return subprocess.run(command, capture_output=True, text=True, env=env)


def refused_while_closed(closed: Path, mode: int, argv: list[Any]) -> str:
    """unreadable_run(argv) with `closed` chmod `mode` meanwhile: exit 2 and one error line,
    returned."""
    closed.chmod(mode)
    try:
        done = unreadable_run(argv)
    finally:
        closed.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kernelwatch: error: ")
    return done.stderr


@pytest.mark.parametrize(
    "case",
    [
        "compare folder",
        "compare root",
        "baseline list",
        "report --baselines",
        "nvbench",
        # a database or result in a folder that may not be searched (pathlib's is_dir() raised
        # PermissionError: an internal error)
        "history list --db",
        "history ingest --db",
        "history ingest",
        "report --db",
        "report",
    ],
)
def test_unreadable_files_and_folders_are_one_line(tmp_path: Path, case: str) -> None:
    paths = prepared(tmp_path)
    good, root = paths["good"], paths["root"]
    closed = root / SLUG
    if case == "compare root":
        closed = root
    shut = tmp_path / "shut"  # holds a database and a result; closed for the history's cases
    shut.mkdir()
    shutil.copy(paths["db"], shut / "h.sqlite")
    shutil.copy(good, shut / "good.json")
    out = tmp_path / "r.html"
    argv: list[Any] = {
        "compare folder": ["compare", closed, good],
        "compare root": ["compare", root / SLUG, good],
        "baseline list": ["baseline", "list", "--baselines", root / SLUG],
        "report --baselines": [
            "report",
            good,
            "--baselines",
            root,
            "-o",
            tmp_path / "r.html",
        ],
        "nvbench": [],
        "history list --db": ["history", "list", "--db", shut / "h.sqlite"],
        "history ingest --db": ["history", "ingest", good, "--db", shut / "h.sqlite"],
        "history ingest": ["history", "ingest", shut / "good.json", "--db", tmp_path / "n.db"],
        "report --db": ["report", good, "--db", shut / "h.sqlite", "-o", out],
        "report": ["report", shut / "good.json", "-o", out],
    }[case]
    if case.startswith("history") or case in ("report --db", "report"):
        closed = shut
    if case == "baseline list":
        closed = root / SLUG
    if case == "nvbench":  # a sample file of nvbench's --jsonbin
        source = REPO / "tests" / "data" / "nvbench"
        for name in ("py-a.json", "py-a.json-bin"):
            copy = shutil.copy2 if name.endswith(".json") else shutil.copytree
            copy(source / name, tmp_path / name)
        closed = sorted((tmp_path / "py-a.json-bin").iterdir())[0]
        argv = ["export", tmp_path / "py-a.json", "--format", "bmf"]
    err = refused_while_closed(closed, 0, argv)
    assert "cannot read: Permission denied" in err and str(closed) in err


@pytest.mark.parametrize(
    "case", ["compare --json", "export -o", "merge -o", "report -o", "baseline update"]
)
def test_paths_in_a_folder_that_cannot_be_searched_are_one_line(tmp_path: Path, case: str) -> None:
    # pathlib's is_dir() raised PermissionError there: an internal error
    paths = prepared(tmp_path)
    good = paths["good"]
    shut = tmp_path / "shut"
    shut.mkdir()
    shutil.copy(good, shut / "run.json")
    out = shut / "out"
    argv: list[Any] = {
        "compare --json": ["compare", good, good, "--json", out],
        "export -o": ["export", good, "--format", "bmf", "-o", out],
        "merge -o": ["merge", good, "-o", out, "--allow-partial"],
        "report -o": ["report", good, "--baseline", good, "-o", out],
        "baseline update": ["baseline", "update", shut / "run.json", "--baselines", paths["root"]],
    }[case]
    if case == "report -o":
        pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    before = snapshot(tmp_path)
    err = refused_while_closed(shut, 0o600, argv)  # readable names, not searchable
    assert "Permission denied" in err and str(shut) in err, err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "broken, content",
    [
        ("result.json", b"[1]"),
        ("result.json", b'{"context": [1], "benchmarks": []}'),
        ("noise.json", b'{"x": '),
        ("noise.json", b"[1]"),
    ],
)
def test_report_stops_on_a_broken_baseline_as_compare_does(
    tmp_path: Path, capsys, broken: str, content: bytes
) -> None:
    # report said "no baseline" and exited 0 (a corrupt noise.json), or raised AttributeError
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    paths = prepared(tmp_path)
    folder = paths["root"] / SLUG
    (folder / broken).write_bytes(content)
    out = tmp_path / "r.html"
    capsys.readouterr()
    for argv in (
        [
            "report",
            str(paths["good"]),
            "--baselines",
            str(paths["root"]),
            "-o",
            str(out),
        ],
        ["compare", str(folder), str(paths["good"])],
    ):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"kernelwatch: error: {folder / broken}")
    assert not out.exists()


def test_report_without_a_baseline_for_its_gpu_still_makes_the_page(
    tmp_path: Path,
) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    paths = prepared(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "nvidia-a100-sxm4-80gb-sm80").mkdir()
    (other / "nvidia-a100-sxm4-80gb-sm80" / "result.json").write_text("[1]")  # not its GPU's
    out = tmp_path / "r.html"
    argv = ["report", str(paths["good"]), "--baselines", str(other), "-o", str(out)]
    assert cli.main(argv) == 0 and out.is_file()


def test_selftest_from_refuses_run_options_and_nothing_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "st"
    folder.mkdir()
    context = {
        **CONTEXT,
        "kernelwatch_selftest_role": "aa",
        "kernelwatch_selftest_index": "1",
    }
    (folder / "aa-1.json").write_text(json.dumps(good(context)))
    assert cli.main(["selftest", "--from", str(folder), "--repetitions", "3"]) == 2
    assert "--repetitions does not apply" in capsys.readouterr().err
    assert cli.main(["selftest", "--from", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "nothing was compared" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "key, other, said",
    [("gpu_name", "NVIDIA H200", "GPU model"), ("kernelwatch_git_commit", "b" * 40, "commit")],
)
def test_selftest_from_runs_of_two_models_or_commits_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, other: str, said: str
) -> None:
    # two commits were taken as one A/A pair: their difference counted as false alarms; two
    # models suggested --allow-gpu-mismatch, which selftest does not have
    folder = tmp_path / "st"
    folder.mkdir()
    for index, value in ((1, CONTEXT.get(key, "a" * 40)), (2, other)):
        context = {
            **CONTEXT,
            key: value,
            "kernelwatch_selftest_role": "aa",
            "kernelwatch_selftest_index": str(index),
        }
        (folder / f"aa-{index}.json").write_text(json.dumps(good(context)))
    assert cli.main(["selftest", "--from", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"measured on {said} {other}" in err, err
    assert "a selftest's runs are of one build on one GPU model" in err
    assert "--allow-gpu-mismatch" not in err


@pytest.mark.parametrize(
    "argv, node",
    [
        (["comment", "{node}", "--gpu", "x"], "/dev/zero"),
        (["compare", "{good}", "{good}", "--config", "{node}"], "/dev/zero"),
        (["history", "list", "--db", "{node}"], "fifo"),
        (["history", "ingest", "{good}", "--db", "{node}"], "/dev/null"),
        # A named FIFO no one writes: each of these waited for ever (a pipe of the shell's,
        # `<(...)`, is read: test_gbench.py).
        (["compare", "{node}", "{good}"], "fifo"),
        (["export", "{node}", "--format", "bmf"], "fifo"),
        (["merge", "{node}", "-o", "{good}.merged"], "fifo"),
        (["history", "ingest", "{node}", "--db", "{good}.db"], "fifo"),
        (["compare", "{good}", "{good}", "--config", "{node}"], "fifo"),
        (["compare", "{good}", "{good}", "--noise-file", "{node}"], "fifo"),
        (["comment", "{node}", "--gpu", "x"], "fifo"),
    ],
)
def test_an_input_that_is_no_file_is_one_line(tmp_path: Path, argv: list[str], node: str) -> None:
    # `comment /dev/zero` and `--config /dev/zero` read until the memory ran out (an internal
    # MemoryError, or the kernel's kill); `history list --db FIFO` waited for ever; `history
    # ingest --db /dev/null` stored the run nowhere and left null-journal beside the link.
    good = tmp_path / "good.json"
    good.write_text(GOOD_TEXT)
    path = tmp_path / "node"
    if node == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(node)  # (a device of one's own needs root)
    before = snapshot(tmp_path)
    journal = Path(f"{node}-journal")  # (SQLite follows the link: /dev/null-journal)
    journal_before = journal.exists()
    words = [a.format(node=path, good=good) for a in argv]
    done = run_module(*words, timeout=120, preexec_fn=memory_limit(4 << 30))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"kernelwatch: error: {path}: ")
    assert snapshot(tmp_path) == before and journal.exists() == journal_before


def memory_limit(size: int) -> Callable[[], None]:
    """A preexec_fn: the child may map at most `size` bytes (a runaway read fails, not the
    machine)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return limit


def test_a_baseline_folder_is_a_compare_input(tmp_path: Path, capsys) -> None:
    paths = prepared(tmp_path)
    folder = paths["root"] / SLUG
    assert cli.main(["compare", str(folder), str(paths["good"])]) == 0
    out = capsys.readouterr().out
    assert "stored noise" in out or "noise" in out


def test_history_list_of_an_empty_file_writes_nothing(tmp_path: Path, capsys) -> None:
    db = tmp_path / "h.sqlite"
    db.write_bytes(b"")
    assert cli.main(["history", "list", "--db", str(db)]) == 2
    assert db.read_bytes() == b"" and "empty file" in capsys.readouterr().err


def test_slowed_runs_are_marked_in_the_history(tmp_path: Path, capsys) -> None:
    slowed = tmp_path / "slowed.json"
    slowed.write_bytes(KINDS["slowed on purpose"])  # type: ignore[arg-type]
    db = tmp_path / "h.sqlite"
    assert cli.main(["history", "ingest", str(slowed), "--db", str(db)]) == 0
    assert "slowed down on purpose" in capsys.readouterr().err
    assert cli.main(["history", "list", "--db", str(db)]) == 0
    assert "SLOWED ON PURPOSE: made with --kernelwatch_inject=fam:0.05" in capsys.readouterr().out


def test_a_result_whose_name_is_not_utf8_damages_no_baseline(tmp_path: Path) -> None:
    # Its name went into the manifest's command line as "\\udcff", which the reader refuses:
    # the baseline could not be listed or updated again. compare --markdown, report and
    # history ingest failed with an internal error (UnicodeEncodeError).
    name = tmp_path / os.fsdecode(b"r\xffx.json")
    try:
        name.write_text(GOOD_TEXT)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    root = tmp_path / "baselines"
    root.mkdir()
    good = tmp_path / "good.json"
    good.write_text(GOOD_TEXT)
    markdown = tmp_path / "r.md"
    commands = [
        ["baseline", "update", name, "--baselines", root],
        ["baseline", "update", good, "--baselines", root],
        ["baseline", "list", "--baselines", root],
        ["compare", name, good, "--markdown", markdown],
        ["history", "ingest", name, "--db", tmp_path / "h.sqlite"],
    ]
    # A strict stdout, as the H200 machine's Python has (under LANG=C.UTF-8, where this machine's
    # uses surrogateescape): this test passed here and failed there.
    env = dict(os.environ, PYTHONPATH=str(TOOLS), PYTHONIOENCODING="utf-8:strict")
    for argv in commands:  # (a process's stderr words the name; pytest's capture refuses it)
        command = [
            sys.executable,
            "-m",
            "kernelwatch",
            *map(os.fsencode, map(str, argv)),
        ]
        done = subprocess.run(command, capture_output=True, env=env)
        err = done.stderr.decode()
        assert done.returncode == 0 and "error" not in err, f"{argv[:2]}: {err}"
    manifest = json.loads((root / SLUG / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["history"][0]["source"].endswith("r\\xffx.json")
    assert "r\\xffx.json" in markdown.read_text()


# --- empty paths ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "ingest", "{good}", "--db", ""],
        ["history", "list", "--db", ""],
        ["history", "show", "fam/bench/0/manual_time", "--db", ""],
        ["history", "changes", "--db", ""],
        ["history", "ingest", "", "--db", "{db}"],
        ["report", "{good}", "--baseline", "", "-o", "{out}"],
        ["report", "{good}", "--db", "", "-o", "{out}"],
        ["report", "{good}", "--explanations", "", "-o", "{out}"],
        ["report", "", "-o", "{out}"],
        ["export", "", "--format", "bmf"],
        ["comment", "", "--gpu", SLUG],
        ["comment", "rep.md", "--result", ""],
        ["compare", "", "{good}"],
        ["compare", "{good}", ""],
        ["merge", "", "-o", "{out}"],
        ["baseline", "update", ""],
        ["baseline", "show", ""],
        ["selftest", "--from", ""],  # measured: "" was taken as not given
        ["run", "--baseline", ""],
        ["run", "--build-dir", ""],
        ["ab", "HEAD", "HEAD", "--repo", ""],
    ],
)
def test_an_empty_path_is_refused_not_taken_as_not_given(
    tmp_path: Path, argv: list[str], capsys, monkeypatch
) -> None:
    # `history ingest R --db "$UNSET"` wrote into the project's default database (and made
    # results/ for it); `report --baseline ""` compared with the project's baseline, `export ""`
    # exported the current folder's results: files no one named.
    project = tmp_path / "checkout"
    project.mkdir()
    paths = prepared(project)
    (project / ".git").mkdir()
    (project / "results").mkdir()
    shutil.copy(paths["db"], project / "results" / "history.sqlite")
    (project / "rep.md").write_text("| report |\n")
    monkeypatch.chdir(project)
    words = [a.format(good="good.json", db="history.sqlite", out="r.html") for a in argv]
    capsys.readouterr()
    before = snapshot(project)
    status = cli.main(words)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("kernelwatch: error: "), err
    assert "an empty value" in err, err
    assert snapshot(project) == before


# --- kills ----------------------------------------------------------------------------------

KILLER = textwrap.dedent("""
    import builtins, os, shutil, sys
    sys.path.insert(0, sys.argv[1])
    from kernelwatch import cli, files

    kill_at, calls = int(sys.argv[2]), [0]
    exchange = sys.argv[3] == "exchange"

    def counted(function):
        def call(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os._exit(9)  # as a kill: no cleanup, no flush
            return function(*args, **kwargs)
        return call

    for name in ("rename", "replace", "mkdir", "fsync", "unlink", "rmdir", "open", "scandir"):
        setattr(os, name, counted(getattr(os, name)))
    builtins.open = counted(builtins.open)
    shutil.copy2 = counted(shutil.copy2)
    files._exchange = counted(files._exchange if exchange else (lambda a, b: False))
    status = cli.main(["baseline", "update", sys.argv[4], "--baselines", sys.argv[5]])
    print("operations", calls[0])
    sys.exit(status)
    """)


def state(folder: Path) -> tuple[str, ...] | None:
    """What a reader sees: result, noise (less its time stamp) and the manifest's commit."""
    if not folder.is_dir():
        return None
    result = hashlib.sha256((folder / "result.json").read_bytes()).hexdigest()
    noise = json.loads((folder / "noise.json").read_text())
    noise.pop("updated", None)
    manifest = json.loads((folder / "manifest.json").read_text())
    return (
        result,
        hashlib.sha256(json.dumps(noise, sort_keys=True).encode()).hexdigest(),
        str(manifest.get("commit")),
    )


@pytest.mark.parametrize("swap", ["exchange", "two renames"])
def test_a_killed_baseline_update_leaves_old_or_new(tmp_path: Path, swap: str) -> None:
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    old.write_text(GOOD_TEXT)
    slower = {n: [t * 1.2 for t in ts] for n, ts in GOOD_SPEC.items()}
    new.write_text(
        json.dumps(document(slower, context={**CONTEXT, "kernelwatch_git_commit": "b" * 40}))
    )
    reference = tmp_path / "reference"
    reference.mkdir()
    assert cli.main(["baseline", "update", str(old), "--baselines", str(reference)]) == 0
    old_state = state(reference / SLUG)
    assert cli.main(["baseline", "update", str(new), "--baselines", str(reference)]) == 0
    new_state = state(reference / SLUG)
    assert old_state != new_state

    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    seen = {"old": 0, "new": 0, "mixed": 0, "missing": 0, "orphans": 0}
    kill_at = 1
    while True:
        root = tmp_path / f"root-{kill_at}"
        root.mkdir()
        assert cli.main(["baseline", "update", str(old), "--baselines", str(root)]) == 0
        done = subprocess.run(
            [
                sys.executable,
                str(script),
                str(TOOLS),
                str(kill_at),
                swap,
                str(new),
                str(root),
            ],
            capture_output=True,
            text=True,
        )
        now = state(root / SLUG)
        if now == old_state:
            seen["old"] += 1
        elif now == new_state:
            seen["new"] += 1
        elif now is None:
            seen["missing"] += 1
        else:
            seen["mixed"] += 1
        # The next update completes: exactly new, nothing left beside or inside the folder.
        assert cli.main(["baseline", "update", str(new), "--baselines", str(root)]) == 0
        assert state(root / SLUG) == new_state
        leftovers = sorted(set(os.listdir(root)) - {SLUG})
        leftovers += sorted(
            set(os.listdir(root / SLUG)) - {"result.json", "noise.json", "manifest.json"}
        )
        seen["orphans"] += len(leftovers)
        if done.returncode != 9:
            assert done.returncode == 0, done.stderr
            break
        kill_at += 1
    print(f"kill test ({swap}): {kill_at - 1} kill points: {seen}")
    assert kill_at > 5
    assert seen["mixed"] == 0 and seen["orphans"] == 0
    if swap == "exchange":
        assert seen["missing"] == 0  # a reader always finds a whole folder
    assert seen["old"] and seen["new"]


def test_two_baseline_updates_at_once_both_land(tmp_path: Path) -> None:
    # Each built on the old baseline and the later one dropped the other's benchmarks, both
    # exiting 0; or one removed the other's staging folder as a leftover and failed.
    root = tmp_path / "baselines"
    root.mkdir()
    (tmp_path / "good.json").write_text(GOOD_TEXT)
    assert (
        cli.main(
            [
                "baseline",
                "update",
                str(tmp_path / "good.json"),
                "--baselines",
                str(root),
            ]
        )
        == 0
    )
    env = dict(os.environ, PYTHONPATH=str(TOOLS))
    updates = []
    with files.one_writer(root):  # both start while a third writer holds the folder
        for index in (0, 1):
            spec = {
                n: [t * 1.5 for t in ts] if n.startswith(f"fam/bench/{index}/") else ts
                for n, ts in GOOD_SPEC.items()
            }
            result = tmp_path / f"slower-{index}.json"
            result.write_text(json.dumps(document(spec, context=CONTEXT)))
            argv = ["baseline", "update", result, "--baselines", root, "--filter"]
            argv.append(f"^fam/bench/{index}/")
            err = open(tmp_path / f"err-{index}", "w+")
            command = [sys.executable, "-m", "kernelwatch", *map(str, argv)]
            updates.append(
                (
                    subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env),
                    err,
                )
            )
        for _, err in updates:
            for _ in range(600):
                if "waiting for another kernelwatch command" in Path(err.name).read_text():
                    break
                time.sleep(0.1)
            else:
                pytest.fail(f"an update did not wait: {Path(err.name).read_text()}")
    for update, err in updates:
        assert update.wait(timeout=120) == 0, Path(err.name).read_text()
        err.close()
    stored = json.loads((root / SLUG / "result.json").read_text())
    for index in (0, 1):
        times = [
            row["real_time"]
            for row in stored["benchmarks"]
            if row["run_name"] == f"fam/bench/{index}/manual_time"
            and row.get("run_type") == "iteration"
        ]
        assert min(times) > 1.4 * (100.0 + index), f"fam/bench/{index}: the update was lost"
    assert sorted(os.listdir(root)) == [SLUG]


# --- the counts, last -----------------------------------------------------------------------


def test_matrix_counts(request: pytest.FixtureRequest) -> None:
    if not TALLY.tried:
        pytest.skip("the matrix did not run (deselected)")
    line = (
        f"hardening matrix: {len(TALLY.kinds)} kinds x {len(TALLY.commands)} commands = "
        f"{TALLY.tried} cases; {TALLY.clean_errors} clean one-line errors, {TALLY.accepted} "
        f"valid inputs run cleanly, {len(TALLY.internal_errors)} internal errors, "
        f"{len(TALLY.data_loss)} data-loss cases"
    )
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)
    target = os.environ.get("KW_HARDENING_COUNTS")
    if target:
        Path(target).write_text(line + "\n")
    assert not TALLY.internal_errors and not TALLY.data_loss, line


def test_a_missing_test_dependency_in_ci_is_one_line() -> None:
    import dependencies

    script = (
        "import sys, dependencies; dependencies.MODULES['no_such_module_kw'] = 'nosuch-package'; "
        "sys.exit(dependencies.main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=Path(dependencies.__file__).parent,
        env=dict(os.environ, PYTHONPATH=str(Path(dependencies.__file__).parent)),
    )
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stderr
    assert "missing test dependenc" in done.stderr and "nosuch-package" in done.stderr
