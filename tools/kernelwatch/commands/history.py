"""`kernelwatch history ingest|list|show`: the results history (an SQLite database)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from kernelwatch.commands._parsers import add_parser
from kernelwatch import history
from kernelwatch.render import format_value
from kernelwatch.results import Metric

DESCRIPTION = """\
The results history: every ingested run (its context, commit, date, and every repetition of
every benchmark and counter) in one SQLite database, by default results/history.sqlite in the
checkout (--db PATH for another). Ingesting the same run twice is a no-op. The database schema
is versioned and migrated when opened. See docs/history.md."""

EPILOG = """\
exit status:
  0  done (also: the run was already in the history, nothing written)
  2  bad input or usage (an invalid result file, no such benchmark or metric, no or a
     damaged database, a database from a newer kernelwatch): one line on stderr,
     "kernelwatch: error: ..."
"""

INGEST_DESCRIPTION = """\
Store one result file (as written by kernelwatch run, or any Google Benchmark JSON) in the
history, in one transaction: all of it or nothing. The file is checked as compare checks it.
A run already in the history (same context and benchmarks, however formatted) is not stored
again."""

LIST_DESCRIPTION = "One line per run, oldest first: id, date, commit, GPU, benchmarks."

SHOW_DESCRIPTION = """\
One benchmark's series over the runs, oldest first (by the date in each run's context): date,
commit, GPU, repetitions (n), and the median, min and max of the metric in that run. Times are
shown with a readable unit (stored in ns)."""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "history",
        help="store runs in the results history database; list and show it",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.set_defaults(handler=_no_action, parser=parser)
    actions = parser.add_subparsers(title="actions", metavar="ACTION")

    ingest = add_parser(
        actions,
        "ingest",
        help="store a result file in the history",
        description=INGEST_DESCRIPTION,
        epilog=EPILOG,
    )
    ingest.add_argument(
        "result", metavar="RESULT.json", help="a Google Benchmark result file"
    )
    _add_db(ingest)
    ingest.set_defaults(handler=run_ingest)

    listing = add_parser(
        actions,
        "list",
        help="the runs in the history",
        description=LIST_DESCRIPTION,
        epilog=EPILOG,
    )
    _add_db(listing)
    listing.set_defaults(handler=run_list)

    show = add_parser(
        actions,
        "show",
        help="one benchmark's values over the runs",
        description=SHOW_DESCRIPTION,
        epilog=EPILOG,
    )
    show.add_argument(
        "benchmark", metavar="BENCHMARK", help="the benchmark's full name"
    )
    show.add_argument(
        "--metric",
        default="time",
        help="time (= real_time, the manual/GPU time; default), cpu_time, or a counter such as "
        "bytes_per_second",
    )
    show.add_argument(
        "--gpu", metavar="SLUG", help="only runs on this GPU (a baseline slug)"
    )
    _add_db(show)
    show.set_defaults(handler=run_show)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the history database (default: results/history.sqlite, in the checkout)",
    )


def _db(args: argparse.Namespace) -> Any:
    return args.db if args.db else history.default_path()


def _no_action(args: argparse.Namespace) -> int:
    args.parser.print_help(sys.stderr)
    return 2


def run_ingest(args: argparse.Namespace) -> int:
    db = _db(args)
    done = history.ingest(args.result, db)
    if done.new:
        print(
            f"ingested {args.result} as run {done.run_id}: {done.benchmarks} benchmark(s), "
            f"{done.samples} value(s), into {db}"
        )
    else:
        print(f"{args.result}: already in {db} as run {done.run_id}; nothing written")
    return 0


def _short(commit: Any) -> str:
    return str(commit)[:12] if commit else "unknown"


def _table(rows: Sequence[Sequence[str]], right: frozenset[int] = frozenset()) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ]
        print("  ".join(cells).rstrip())


def run_list(args: argparse.Namespace) -> int:
    db_path = _db(args)
    with history.database(db_path) as db:
        found = history.runs(db)
    if not found:
        print(
            f"no runs in {db_path}; add one with: kernelwatch history ingest RESULT.json"
        )
        return 0
    rows = [("ID", "DATE", "COMMIT", "GPU", "BENCHMARKS")]
    for run in found:
        rows.append(
            (
                str(run.id),
                run.date,
                _short(run.git_commit),
                run.gpu_slug or run.gpu_name or "(no GPU)",
                str(run.benchmarks),
            )
        )
    _table(rows, right=frozenset({0, 4}))
    return 0


def run_show(args: argparse.Namespace) -> int:
    with history.database(_db(args)) as db:
        points = history.series(db, args.benchmark, args.metric, args.gpu)
    key = history.metric_key(args.metric)
    metric = Metric(key, False)
    print(f"{args.benchmark}  ({key}, {len(points)} run(s))")
    rows = [("DATE", "COMMIT", "GPU", "N", "MEDIAN", "MIN", "MAX")]
    for point in points:
        median, low, high, n = history.summary(point.values)
        rows.append(
            (
                point.run.date,
                _short(point.run.git_commit),
                point.run.gpu_slug or "(no GPU)",
                str(n),
                format_value(median, metric),
                format_value(low, metric),
                format_value(high, metric),
            )
        )
    _table(rows, right=frozenset({3, 4, 5, 6}))
    return 0
