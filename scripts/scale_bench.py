#!/usr/bin/env python3
"""How kernelwatch's commands behave at the scale of a real team: wall time and peak memory.

Builds, in a work folder, inputs scaled from real files, then runs each command as a user
does (`python3 -m kernelwatch ...`, a fresh process each) and prints one line per command:
wall time, CPU time (user + system: on a shared machine the wall time also waits for others),
the process's peak resident memory (os.wait4's rusage of that child, what
resource.getrusage(RUSAGE_CHILDREN) reports) and its exit status.

* history: a year of nightlies on two GPU models (2 x 365 runs of the real 356-benchmark,
  10-repetition H200 run tests/data/gpu/h200-suite-card-54f59374.json.gz, every counter), each
  night the real values times a run-to-run factor (0.5 %; 3 % for pageable transfers), with
  steps added (`--changes few`: 8 regressions and 4 improvements over the year, 3 more in the
  last nights; `many`: a step in 20 % of the series). The database is filled directly in the
  history's schema (ingesting 730 files one by one takes ~15 minutes); tonight's run is then
  timed through `history ingest`, with list, show, changes (--since, --new-since) and report.
* suite: the same run with every benchmark 10 times (3,560 benchmarks, `/copy:K/` in the name):
  8 runs pooled by `baseline update`, `baseline show`, `compare` of a 9th run against that
  baseline (run's comparison), `merge` of it in 8 shards, `report`, `comment`, `export`.

    python3 scripts/scale_bench.py [--only history|suite] [--changes few|many] [--work DIR]

`--tools /other/checkout/tools` times another version of the commands on the same inputs.
A --work folder is kept and its inputs reused by the next call (building the history takes
about two minutes here). docs/architecture.md ("Scale") has the results.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))

from kernelwatch import history, synthetic  # noqa: E402
from kernelwatch.baseline import context_slug  # noqa: E402
from kernelwatch.gbench import read_json  # noqa: E402
from kernelwatch.history.intake import load_run  # noqa: E402

NIGHT = ROOT / "tests/data/gpu/h200-suite-card-54f59374.json.gz"  # one real nightly run
GPUS = (("NVIDIA H200", "9.0", 1.0), ("NVIDIA H100 80GB HBM3", "9.0", 1.3))  # name, cc, speed
# The nights end yesterday (night N is N days after the first): tonight's `history ingest` is
# stamped with the clock, after them, as a real one is.
TONIGHT = dt.datetime.combine(dt.date.today(), dt.time(2, 0), dt.UTC)
TIME_KEYS = ("real_time", "cpu_time")


def _factor_for(key: str) -> int:
    """How a metric follows a slower run: times up (+1), rates and fractions down (-1), the
    rest (clocks, sample counts, temperatures) unchanged (0)."""
    if key in TIME_KEYS:
        return 1
    return -1 if key.endswith(("_per_second", "_fraction")) else 0


# ------------------------------------------------------------------------------ the history


def _steps(
    names: Sequence[str], nights: int, changes: str, seed: int
) -> dict[tuple[int, int], list[tuple[int, float]]]:
    """(gpu, benchmark index) -> [(first night after the step, factor on the times)]."""
    rng = np.random.default_rng(seed)
    steps: dict[tuple[int, int], list[tuple[int, float]]] = {}
    candidates = [k for k, n in enumerate(names) if "pageable" not in n]
    if changes == "few":
        picked = rng.choice(candidates, 15, replace=False)
        for k in picked[:8]:
            steps[(0, int(k))] = [(int(nights * 0.8), 1.15)]
        for k in picked[8:12]:
            steps[(1, int(k))] = [(int(nights * 0.55), 0.9)]
        for k in picked[12:]:  # found by tonight's run: --new-since lists them
            steps[(0, int(k))] = [(nights - 2, 1.2)]
    else:
        for gpu in range(len(GPUS)):
            for k in rng.choice(candidates, len(names) // 5, replace=False):
                night = int(rng.integers(30, nights - 3))
                size = float(rng.uniform(1.08, 1.25)) ** float(rng.choice([-1, 1]))
                steps[(gpu, int(k))] = [(night, size)]
    return steps


def _night_context(base: Mapping[str, Any], gpu: int, night: int, nights: int) -> dict[str, Any]:
    name, capability, _ = GPUS[gpu]
    when = (TONIGHT - dt.timedelta(days=nights - night, minutes=-20 * gpu)).isoformat()
    context = dict(base)
    context.update(
        date=when,
        kernelwatch_run_started=when,
        gpu_name=name,
        host_gpu_names=name,
        gpu_compute_capability=capability,
        kernelwatch_git_commit=hashlib.sha1(f"night {night}".encode()).hexdigest(),
    )
    return context


class NightMaker:
    """The values of any night on any GPU: the real run's, times that night's factors."""

    def __init__(self, nights: int, changes: str, seed: int = 1) -> None:
        self.document, self.result = load_run(NIGHT)
        self.nights = nights
        r = self.result
        self.steps = _steps(r.names, nights + 1, changes, seed)
        sigma = np.array([0.03 if "pageable" in n else 0.005 for n in r.names])
        rng = np.random.default_rng(seed + 1)
        # (gpu, night, benchmark) -> a time factor: run-to-run noise, the GPU's speed, steps
        shape = (len(GPUS), nights + 1, len(r.names))
        self.factor = np.exp(rng.normal(0.0, 1.0, shape) * sigma)
        for gpu, (_, _, speed) in enumerate(GPUS):
            self.factor[gpu] *= speed
        for (gpu, k), steps in self.steps.items():
            for night, size in steps:
                self.factor[gpu, night:, k] *= size
        self.owner = np.repeat(np.arange(len(r.names)), r.counts)
        self.repetition = np.arange(len(self.owner)) - np.repeat(r.starts, r.counts)
        self.kept = {}
        for key, column in r.columns.items():
            keep = np.isfinite(column)
            if key in r.gaps:
                keep &= ~r.gaps[key]
            self.kept[key] = np.flatnonzero(keep)

    def column(self, key: str, gpu: int, night: int) -> np.ndarray:
        """Every row's value of `key` that night (NaN where the real run has none)."""
        power = _factor_for(key)
        values = self.result.columns[key].copy()
        if power:
            values *= self.factor[gpu, night, self.owner] ** power
        jitter = np.random.default_rng((gpu, night, len(key))).normal(0, 5e-4, len(values))
        return values * np.exp(jitter)  # repetitions of one run differ too (~0.05 %)

    def document_for(self, gpu: int, night: int) -> dict[str, Any]:
        """The real file's rows with that night's values, as `run` writes them."""
        doc = copy.deepcopy(self.document)
        doc["context"] = _night_context(self.document["context"], gpu, night, self.nights)
        columns = {key: self.column(key, gpu, night) for key in self.result.columns}
        rows = [row for row in doc["benchmarks"] if row.get("run_type") != "aggregate"]
        assert len(rows) == len(self.owner), "the real run has one row per repetition"
        # Loading groups each benchmark's rows, in file order: row -> its position there.
        seen = {name: int(start) for name, start in zip(self.result.names, self.result.starts)}
        for row in rows:
            i = seen[row["run_name"]]
            seen[row["run_name"]] += 1
            for key, values in columns.items():
                if key in row:
                    row[key] = float(values[i]) / _unit(row.get("time_unit"), key)
        doc["benchmarks"] = rows
        return doc


def _unit(time_unit: Any, key: str) -> float:
    """Loading turns times into ns; a file writes them in its own unit."""
    if key not in TIME_KEYS:
        return 1.0
    return {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[str(time_unit or "ns")]


def build_history(db_path: Path, maker: NightMaker) -> None:
    """Every night but tonight's (`maker.nights`), both GPUs, written in the history's schema as
    `history ingest` writes it (one runs row each, run_benchmarks, every finite value)."""
    r = maker.result
    db = sqlite3.connect(str(db_path), isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    db.executemany("INSERT INTO benchmarks (name) VALUES (?)", ((n,) for n in r.names))
    db.executemany("INSERT INTO metrics (name) VALUES (?)", ((k,) for k in r.columns))
    metric_id = {k: i + 1 for i, k in enumerate(r.columns)}
    run_ids = {}
    for night in range(maker.nights):
        for gpu in range(len(GPUS)):
            context = _night_context(r.context, gpu, night, maker.nights)
            date = history.normalized_date(context["date"])
            ingested = dt.datetime.fromisoformat(context["date"]) + dt.timedelta(hours=3)
            cursor = db.execute(
                "INSERT INTO runs (content_hash, source, gpu_slug, gpu_name, git_commit, "
                "run_date, date, ingested_at, benchmarks, context) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    hashlib.sha256(f"scale {gpu} {night}".encode()).hexdigest(),
                    f"results/night-{night}-gpu{gpu}.json",
                    context_slug(context),
                    context["gpu_name"],
                    context["kernelwatch_git_commit"],
                    context["date"],
                    date,
                    ingested.isoformat(timespec="seconds"),
                    len(r.names),
                    json.dumps(context, sort_keys=True),
                ),
            )
            run_ids[(gpu, night)] = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT INTO run_benchmarks VALUES (?, ?, ?, 0, NULL, NULL)",
                ((run_ids[(gpu, night)], k + 1, int(r.counts[k])) for k in range(len(r.names))),
            )
    # The samples in the order of their key (benchmark, metric, run, repetition): one pass.
    order = sorted(run_ids.items(), key=lambda item: item[1])
    for key in r.columns:
        values = {rid: maker.column(key, gpu, night) for (gpu, night), rid in order}
        kept = maker.kept[key]
        owner = maker.owner[kept]
        for k in range(len(r.names)):
            rows = kept[owner == k]
            if not len(rows):
                continue
            reps = maker.repetition[rows].tolist()
            db.executemany(
                "INSERT INTO samples VALUES (?, ?, ?, ?, ?)",
                (
                    (k + 1, metric_id[key], rid, rep, value)
                    for _, rid in order
                    for rep, value in zip(reps, values[rid][rows].tolist())
                ),
            )
    db.execute("COMMIT")
    db.close()


# -------------------------------------------------------------------------------- the suite


def ten_times(document: Mapping[str, Any], copies: int, seed: int) -> dict[str, Any]:
    """Every benchmark `copies` times (`.../copy:K/manual_time`), each copy with its own speed."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(copies):
        for row in document["benchmarks"]:
            new = dict(row)
            for field in ("name", "run_name"):
                if field in new:
                    head, _, tail = str(new[field]).rpartition("/")
                    new[field] = f"{head}/copy:{k}/{tail}" if head else f"{tail}/copy:{k}"
            rows.append(new)
    names = sorted({r["run_name"] for r in rows})
    speed = dict(zip(names, np.exp(rng.normal(0, 0.002, len(names)))))
    for row in rows:
        for key, value in list(row.items()):
            power = _factor_for(key)
            if power and isinstance(value, float) and row.get("run_type") != "aggregate":
                row[key] = value * speed[row["run_name"]] ** power
    return {"context": dict(document["context"]), "benchmarks": rows}


def build_suite(folder: Path, maker: NightMaker, copies: int) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for i in range(9):  # 8 runs for the baseline (other cards), then the contender
        doc = ten_times(maker.document_for(0, i), copies, seed=100 + i)
        doc["context"]["kernelwatch_git_commit"] = "b9b23ab633f052c1b30e60d99327d6cc90fcc014"
        doc["context"]["gpu_uuid"] = f"GPU-{i:08d}-0000-0000-0000-000000000000"
        doc["context"]["host_gpu_uuids"] = doc["context"]["gpu_uuid"]
        if i == 8:  # the contender: 1 benchmark in 100 10 % slower
            for row in doc["benchmarks"]:
                if hash(row["run_name"]) % 100 == 0:
                    for key in TIME_KEYS:
                        row[key] *= 1.1
        files[f"run{i}"] = synthetic.write(folder / f"run{i}.json", doc)
    contender = read_json(files["run8"])
    rows = contender["benchmarks"]
    names = sorted({r["run_name"] for r in rows})
    part = {n: k % 8 for k, n in enumerate(names)}
    for k in range(8):
        context = dict(contender["context"], kernelwatch_shard=f"{k + 1}/8")
        doc = {"context": context, "benchmarks": [r for r in rows if part[r["run_name"]] == k]}
        files[f"shard{k + 1}"] = synthetic.write(folder / f"shard{k + 1}.json", doc)
    return files


# ------------------------------------------------------------------------------- measuring


_KERNELWATCH = [TOOLS]  # the checkout whose commands are timed (--tools)
_CHOSEN = [re.compile("")]  # the commands timed (--commands)


# Runs the command from a small fresh interpreter: a child forked from this script would count
# the script's own pages (the inputs it built) in its ru_maxrss until it execs.
_LAUNCHER = """
import json, os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "kernelwatch", *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump([time.perf_counter() - started, os.waitstatus_to_exitcode(status),
               usage.ru_utime + usage.ru_stime, usage.ru_maxrss], out)
"""


def measure(label: str, args: Sequence[str]) -> dict[str, Any]:
    """Run one command as a fresh process: its wall time, its CPU time and its own peak RSS
    (wait4's rusage of that child: what resource.getrusage(RUSAGE_CHILDREN) reports). It runs
    in the checkout's root, as the nightly does: the suite's baselines/kernelwatch.toml (its
    per-benchmark thresholds) applies."""
    if not _CHOSEN[0].search(label):
        return {"command": label, "skipped": True}
    env = dict(os.environ, PYTHONPATH=str(_KERNELWATCH[0]), MPLBACKEND="Agg")
    with tempfile.TemporaryDirectory() as tmp:
        measured = Path(tmp, "measured.json")
        out, err = Path(tmp, "out"), Path(tmp, "err")
        with out.open("wb") as stdout, err.open("wb") as stderr:
            subprocess.run(
                [sys.executable, "-c", _LAUNCHER, str(measured), *args],
                cwd=_KERNELWATCH[0].parent,
                env=env,
                stdout=stdout,
                stderr=stderr,
                check=True,
            )
        seconds, status, cpu, maxrss = json.loads(measured.read_text())
        tail = err.read_text(errors="replace").strip().splitlines()[-1:]
        lines = out.read_bytes().count(b"\n")
    rss = maxrss / 1024  # KiB on Linux
    note = tail[0][:110] if tail and status > 1 else ""
    print(
        f"{label:<58} {seconds:7.1f} s wall {cpu:7.1f} s CPU {rss:6.0f} MiB  exit {status}  {note}",
        flush=True,
    )
    return {
        "command": label,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mib": round(rss),
        "exit": status,
        "stdout_lines": lines,
    }


def _schema_of(tools: Path) -> int:
    """The history schema version of the checkout whose commands are timed."""
    done = subprocess.run(
        [sys.executable, "-c", "from kernelwatch import history; print(history.SCHEMA_VERSION)"],
        env=dict(os.environ, PYTHONPATH=str(tools)),
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _empty_history(path: Path, tools: Path) -> None:
    """A new database in the schema of the checkout whose commands are timed."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from kernelwatch import history; "
            "history.open_db(sys.argv[1], create=True).close()",
            str(path),
        ],
        env=dict(os.environ, PYTHONPATH=str(tools)),
        check=True,
    )


def run_history(work: Path, nights: int, changes: str) -> list[dict[str, Any]]:
    maker = NightMaker(nights, changes)
    db = work / f"history-{changes}-v{_schema_of(_KERNELWATCH[0])}.sqlite"
    tonight = work / "tonight.json"
    if not db.exists():
        started = time.perf_counter()
        partial = db.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        _empty_history(partial, _KERNELWATCH[0])
        build_history(partial, maker)
        partial.rename(db)
        print(f"built {db.name}: {2 * nights} runs in {time.perf_counter() - started:.0f} s")
    if not tonight.exists():
        synthetic.write(tonight, maker.document_for(0, nights))
    db_now = work / "history-tonight.sqlite"
    shutil.copyfile(db, db_now)  # tonight's ingest writes to a copy: the built one stays
    size = db.stat().st_size / 2**20
    print(
        f"history database: {size:.0f} MiB for {2 * nights} runs ({size / (2 * nights):.2f} MiB a run)"
    )
    last = (TONIGHT - dt.timedelta(hours=20)).isoformat()  # after last night's ingest
    month = (TONIGHT - dt.timedelta(days=30)).date().isoformat()
    name = maker.result.names[0]
    d = ["--db", str(db_now)]
    results = [
        measure("history ingest (one more night)", ["history", "ingest", str(tonight), *d]),
        measure("history list", ["history", "list", *d]),
        measure("history show (one benchmark, both GPUs)", ["history", "show", name, *d]),
        measure("history changes (whole history)", ["history", "changes", *d]),
        measure("history changes --since (30 days)", ["history", "changes", "--since", month, *d]),
        measure(
            "history changes --new-since (last night)",
            ["history", "changes", "--new-since", last, *d],
        ),
        measure(
            "report (tonight, baseline, trends from the history)",
            [
                "report",
                str(tonight),
                "--baseline",
                str(ROOT / "baselines/nvidia-h200-sm90/result.json.gz"),
                *d,
                "-o",
                str(work / "report-history.html"),
            ],
        ),
    ]
    results.append({"command": "history database on disk", "mib": round(size)})
    return results


def run_suite(work: Path, copies: int) -> list[dict[str, Any]]:
    folder = work / "suite"
    if not (folder / "shard8.json").exists():
        started = time.perf_counter()
        files = build_suite(folder, NightMaker(10, "few"), copies)
        print(f"built the suite's files in {time.perf_counter() - started:.0f} s")
    files = {p.stem: p for p in folder.glob("*.json")}
    runs = [str(files[f"run{i}"]) for i in range(8)]
    baselines = work / "baselines"
    shutil.rmtree(baselines, ignore_errors=True)
    baselines.mkdir()
    slug = "nvidia-h200-sm90"
    base = str(baselines / slug / "result.json")
    contender = str(files["run8"])
    return [
        measure(
            "baseline update (8 runs pooled)",
            ["baseline", "update", *runs, "--baselines", str(baselines)],
        ),
        measure("baseline show", ["baseline", "show", slug, "--baselines", str(baselines)]),
        measure(
            "compare (pooled baseline, noise.json; run's comparison)",
            [
                "compare",
                base,
                contender,
                "--markdown",
                str(work / "c.md"),
                "--json",
                str(work / "c.json"),
            ],
        ),
        measure("compare (one run against another)", ["compare", runs[0], contender]),
        measure(
            "merge (8 shards)",
            [
                "merge",
                *[str(files[f"shard{k}"]) for k in range(1, 9)],
                "-o",
                str(work / "merged.json"),
            ],
        ),
        measure(
            "report (baseline, no history)",
            ["report", contender, "--baseline", base, "-o", str(work / "report-suite.html")],
        ),
        measure(
            "comment",
            ["comment", str(work / "c.md"), "--result", contender, "-o", str(work / "comment.md")],
        ),
        measure(
            "export --format bmf",
            ["export", contender, "--format", "bmf", "-o", str(work / "bmf.json")],
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("history", "suite"))
    parser.add_argument("--changes", choices=("few", "many"), default="few")
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--copies", type=int, default=10, help="the suite's size, in suites")
    parser.add_argument("--work", type=Path, help="keep the inputs here, and reuse them")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--tools",
        type=Path,
        default=TOOLS,
        help="time the commands of this tools/ folder "
        "(another checkout's: before and after a change); the inputs are built with this one's",
    )
    parser.add_argument("--commands", default="", help="time only the commands this matches")
    args = parser.parse_args()
    _CHOSEN[0] = re.compile(args.commands)
    _KERNELWATCH[0] = args.tools.resolve()
    print(
        f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, numpy {np.__version__}"
    )
    work = args.work or Path(tempfile.mkdtemp(prefix="kernelwatch-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    try:
        if args.only in (None, "history"):
            results += run_history(work, args.nights, args.changes)
        if args.only in (None, "suite"):
            results += run_suite(work, args.copies)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
