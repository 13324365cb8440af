"""`kernelwatch history ingest|list|show|changes|remove`: the results history (an SQLite
database)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_actions, add_parser
from kernelwatch.config import Config, ThresholdRule, parse_fraction
from kernelwatch.errors import shortened
from kernelwatch.files import Input, Output, check_outputs, write_json_atomic
from kernelwatch.names import short_commit

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import baseline as baselines
    from kernelwatch import changes as change_points
    from kernelwatch import history, verdict
    from kernelwatch.render import aligned, format_value
    from kernelwatch.results import Metric

DESCRIPTION = """\
The results history: every ingested run (its context, commit, date, and every repetition of
every benchmark and counter) in one SQLite database, by default results/history.sqlite in the
project, the nearest folder up holding baselines/ or .git (else name it: --db PATH).
Ingesting the same run twice (the same file, or another file of the same measurement) is a
no-op. The schema is versioned and migrated when opened.
`changes` finds the steps in every benchmark's series. See docs/history.md."""

EPILOG = """\
exit status:
  0  done
  2  bad input or usage (an invalid result file, no such benchmark or metric, no or a
     damaged database, a database from a newer kernelwatch): one line on stderr,
     "kernelwatch: error: ..."
"""

INGEST_EPILOG = EPILOG.replace(
    "  0  done\n",
    "  0  done (also: the run was already in the history, or a later attempt under its key\n"
    "     replaced it: nothing written)\n",
)
# The command's own help names every action's statuses; `changes` adds exit 1.
HISTORY_EPILOG = INGEST_EPILOG.replace(
    "nothing written)\n",
    "nothing written)\n  1  changes: a regression among those listed (history changes --help)\n",
)

INGEST_DESCRIPTION = """\
Store one result file (as written by kernelwatch run, any Google Benchmark JSON, or nvbench's
JSON) in the history, in one transaction: all of it or nothing. The file is checked as compare
checks it. A run already in the history (same context and benchmarks, however formatted; or the
same measurement: its own date, GPU, commit and every value) is not stored again. With --key, a
run stored before under the same key (of the same GPU model and commit, else refused) is
replaced by this one: a workflow's re-run job measures again, and its result is another of the
same workflow run (nightly.yml: --key nightly/<run id>/<gpu>); a run already stored without a
key takes the one given. A result so replaced stays replaced: ingested again, with or without
its key, nothing is written; one dated before the run under its key (an earlier attempt) does
not replace it."""

LIST_DESCRIPTION = "One line per run, oldest first: id, date, commit, GPU, benchmarks."

REMOVE_DESCRIPTION = """\
Delete runs from the history, by the ids `history list` shows, and every value they stored, in
one transaction: all of them, or none when an id is not there. For a run that is no point of
any series: measured on a broken or throttled machine, or a night stored twice. A result whose
run was removed may be ingested again, as may those its key had replaced."""

CHANGES_DESCRIPTION = """\
Find the steps in every benchmark's series, per GPU: the runs in date order, all repetitions
of every run. Candidates come from Apache Otava (E-Divisive in sliding windows with Student's
t-test); a change is snapped to the run boundary nearest to it and kept only when it is
significant (p < --alpha), at least --threshold (the suite kernelwatch.toml's [compare]
threshold and per-benchmark thresholds widen it, never narrow it), larger than twice the
run-to-run spread of the run medians, has at least two runs on each side, and the two runs on
each side of it are on their own side of the step. So a step needs the run after it to confirm
it. Each change is printed with the first run after it (date and commit), newest first; the
first line says where the threshold came from. --new-since lists only the changes that the
history as it was then (the runs ingested by then) never showed: the nightly reports each
change once, the night it is first found. See docs/history.md.

Uses Apache Otava's change-point analysis (kept inside kernelwatch), which needs scipy:
  pip install 'kernelwatch[history]'"""

CHANGES_EPILOG = """\
exit status:
  0  no regression among the changes found (improvements are listed, and pass)
  1  a regression among the changes listed: its first run at or after --since, and not
     already found at --new-since (any, without either)
  2  bad input or usage (no database, a bad date, regex, metric or GPU; scipy not
     installed): one line on stderr, "kernelwatch: error: ..."

examples:
  kernelwatch history changes
  kernelwatch history changes --since 2026-11-01 --gpu nvidia-h200-sm90 --filter '^transpose/'
  kernelwatch history changes --metric bytes_per_second --json changes.json
  kernelwatch history changes --new-since 2026-11-22T03:17:42Z
"""

DATE_FORMAT = "ISO 8601: 2026-11-21, or with a time and zone; without a zone: UTC"

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
        epilog=HISTORY_EPILOG,
    )
    actions = add_actions(parser)

    ingest = add_parser(
        actions,
        "ingest",
        help="store a result file in the history",
        description=INGEST_DESCRIPTION,
        epilog=INGEST_EPILOG,
    )
    ingest.add_argument(
        "result",
        metavar="RESULT.json",
        type=options.non_empty,  # ("" is the current folder)
        help="Google Benchmark or nvbench JSON",
    )
    _add_db(ingest)
    ingest.add_argument(
        "--key",
        metavar="KEY",
        type=_key,
        help="the result's identity outside its content: one workflow run's result of one GPU "
        "(e.g. nightly/<run id>/<gpu>); a run ingested under the same key before is replaced "
        "(a re-run job's result), unless this one is dated before it; refused when that run is "
        "of another GPU model or commit",
    )
    ingest.set_defaults(handler=lambda args: run_ingest(args.result, _db(args), args.key))

    listing = add_parser(
        actions,
        "list",
        help="the runs in the history",
        description=LIST_DESCRIPTION,
        epilog=EPILOG,
    )
    options.add_list_format_option(listing, "docs/history.md")
    _add_db(listing)
    listing.set_defaults(handler=lambda args: run_list(_db(args), args.format))

    show = add_parser(
        actions,
        "show",
        help="one benchmark's values over the runs",
        description=SHOW_DESCRIPTION,
        epilog=EPILOG,
    )
    show.add_argument("benchmark", metavar="BENCHMARK", help="the benchmark's full name")
    options.add_metric_option(
        show,
        "time (= real_time, the manual/GPU time; default), cpu_time, or a counter such as "
        "bytes_per_second",
    )
    show.add_argument("--gpu", metavar="SLUG", help="only runs on this GPU (a baseline slug)")
    options.add_list_format_option(show, "docs/history.md")
    _add_db(show)
    show.set_defaults(
        handler=lambda args: run_show(args.benchmark, args.metric, args.gpu, _db(args), args.format)
    )

    found = add_parser(
        actions,
        "changes",
        help="find the steps (change points) in every benchmark's series",
        description=CHANGES_DESCRIPTION,
        epilog=CHANGES_EPILOG,
    )
    found.add_argument(
        "--since",
        metavar="DATE",
        help=f"only changes whose first run is at or after DATE ({DATE_FORMAT}); the runs "
        "before still count as history",
    )
    found.add_argument(
        "--new-since",
        metavar="WHEN",
        help="only changes not already found in the history as it was at WHEN (the runs "
        f"ingested by then; {DATE_FORMAT}): the nightly's, each change once",
    )
    found.add_argument("--gpu", metavar="SLUG", help="only this GPU's series (a baseline slug)")
    found.add_argument("--filter", metavar="REGEX", help="only benchmarks whose full name matches")
    options.add_metric_option(
        found,
        "time (= real_time, the manual/GPU time; default), cpu_time, or a counter such as "
        "bytes_per_second (lower or higher is better as compare decides from the name)",
    )
    options.add_threshold_options(
        found,
        threshold_help="smallest change that counts, as 0.05 or 5%% (default "
        f"{defaults.CHANGES_THRESHOLD * 100:g}%%: wider than compare's, nights run on other "
        "processes and cards; the config's [compare] threshold and per-benchmark thresholds "
        "widen it, never narrow it; this option may, and the output says so)",
        alpha_help="significance level of a change (default 0.05)",
    )
    options.add_config_option(
        found,
        "compare's TOML settings file, for its thresholds (default: baselines/kernelwatch.toml, "
        "when there is one)",
    )
    found.add_argument(
        "--json",
        metavar="FILE",
        type=options.output_file,
        help="also write the changes as JSON to FILE",
    )
    _add_db(found)
    found.set_defaults(handler=changes_main)

    removal = add_parser(
        actions,
        "remove",
        help="delete runs from the history",
        description=REMOVE_DESCRIPTION,
        epilog=EPILOG,
    )
    removal.add_argument(
        "run_ids", metavar="ID", nargs="+", type=_run_id, help="a run's id (history list)"
    )
    _add_db(removal)
    removal.set_defaults(handler=lambda args: run_remove(args.run_ids, _db(args)))


def _add_db(parser: argparse.ArgumentParser) -> None:
    # Not empty: `--db "$UNSET"` was taken as not given, and an ingest wrote into the project's
    # default database (making results/ for it). Not a folder: Path drops the slash of
    # `--db results/`, and an ingest made a database file named results.
    parser.add_argument(
        "--db",
        metavar="PATH",
        type=options.output_file,
        help=f"the history database (default: results/history.sqlite, {options.IN_PROJECT})",
    )


def _db(args: argparse.Namespace) -> str | Path:
    from kernelwatch import history

    return args.db if args.db else history.default_path()


def _key(value: str) -> str:
    """argparse's type of --key: not blank (`--key "$UNSET"` would be no key), one line."""
    options.non_empty(value.strip())
    if not value.isprintable():
        raise argparse.ArgumentTypeError("not printable (one line of text)")
    return value


def _run_id(value: str) -> int:
    """argparse's type of a run id: a positive integer, as history list prints it (SQLite's
    ids are 64-bit: a larger one stopped `remove` with an internal OverflowError)."""
    if not value.isdecimal() or not 1 <= int(value) < 2**63:
        raise argparse.ArgumentTypeError(f"{shortened(repr(value))}: not a run id (history list)")
    return int(value)


def run_ingest(result: str, db: str | Path, key: str | None = None) -> int:
    from kernelwatch import history

    done = history.ingest(result, db, key)
    if done.replaced:
        print(
            f"ingested {result} as run {done.run_id} under --key {key}, replacing the result "
            f"ingested under it before (a re-run's): {done.benchmarks} benchmark(s), "
            f"{done.samples} value(s), into {db}"
        )
    elif done.older:
        print(
            f"{result}: an earlier attempt than run {done.run_id} under --key {done.replaced_by} "
            "(dated before it): not stored; recorded as replaced by it"
        )
    elif done.replaced_by is not None:
        print(
            f"{result}: replaced by a later attempt under --key {done.replaced_by} "
            f"(run {done.run_id}) in {db}; nothing written"
        )
    elif done.new:
        print(
            f"ingested {result} as run {done.run_id}: {done.benchmarks} benchmark(s), "
            f"{done.samples} value(s), into {db}"
        )
    else:
        written = "nothing written"
        if done.keyed:
            written = f"--key {key} recorded on it, nothing else written"
        if done.differs is None:
            print(f"{result}: already in {db} as run {done.run_id}; {written}")
        else:
            differs = (
                f"its context differs in {shortened(', '.join(done.differs))}"
                if done.differs
                else "written differently"
            )
            print(
                f"{result}: already in {db} as run {done.run_id}, the same measurement (its "
                f"date, GPU, commit and every value; {differs}); {written}"
            )
    if done.stored_key is not None:
        print(
            f"kernelwatch: warning: {result}: run {done.run_id} is stored under --key "
            f"{done.stored_key}, which it keeps",
            file=sys.stderr,
        )
    if done.key_held_by is not None:
        print(
            f"kernelwatch: warning: {result}: run {done.key_held_by} holds --key {key}, so run "
            f"{done.run_id} keeps no key: both stay in the history as runs of that night "
            f"(`history remove {done.run_id}` takes this one out)",
            file=sys.stderr,
        )
    if done.slowed:
        print(
            f"kernelwatch: warning: {result}: {done.slowed}: slowed down on purpose; "
            "`history list` marks it",
            file=sys.stderr,
        )
    return 0


def run_remove(run_ids: list[int], db: str | Path) -> int:
    from kernelwatch import history

    for run in history.remove(db, run_ids):
        print(
            f"removed run {run.id} from {db}: {run.date}, commit {short_commit(run.git_commit)}, "
            f"{run.gpu_slug or run.gpu_name or '(no GPU)'}, {run.benchmarks} benchmark(s), "
            f"ingested from {run.source}"
        )
    return 0


def run_list(db_path: str | Path, format: str = "table") -> int:
    from kernelwatch import history
    from kernelwatch.render import aligned

    with history.database(db_path) as db:
        found = history.runs(db)
    if format == "json":
        return options.print_document(history.runs_document(db_path, found))
    if not found:
        print(f"no runs in {db_path}; add one with: kernelwatch history ingest RESULT.json")
        return 0
    rows = [("ID", "DATE", "COMMIT", "GPU", "BENCHMARKS", "")]
    for run in found:
        rows.append(
            (
                str(run.id),
                run.date,
                short_commit(run.git_commit),
                run.gpu_slug or run.gpu_name or "(no GPU)",
                str(run.benchmarks),
                run.marks,
            )
        )
    print("\n".join(aligned(rows, frozenset({0, 4}))))
    return 0


def run_show(
    benchmark: str, metric_name: str, gpu: str | None, db_path: str | Path, format: str = "table"
) -> int:
    from kernelwatch import history
    from kernelwatch.render import aligned, format_value
    from kernelwatch.results import Metric

    with history.database(db_path) as db:
        points = history.series(db, benchmark, metric_name, gpu)
    if format == "json":
        document = history.series_document(db_path, benchmark, metric_name, gpu, points)
        return options.print_document(document)
    key = history.metric_key(metric_name)
    metric = Metric(key, False)
    print(f"{benchmark}  ({key}, {len(points)} run(s))")
    rows = [("DATE", "COMMIT", "GPU", "N", "MEDIAN", "MIN", "MAX")]
    for point in points:
        median, low, high, n = history.summary(point.values)
        rows.append(
            (
                point.run.date,
                short_commit(point.run.git_commit),
                point.run.gpu_slug or "(no GPU)",
                str(n),
                format_value(median, metric),
                format_value(low, metric),
                format_value(high, metric),
            )
        )
    print("\n".join(aligned(rows, frozenset({3, 4, 5, 6}))))
    for point in points:
        if point.error is not None:
            print(
                f"note: {point.run.date}: a repetition failed ({point.error}); N counts the "
                "others. compare calls such a run ERROR; history changes and report's trends "
                "leave it out"
            )
        if point.run.slowed is not None:
            print(
                f"note: {point.run.date}: {point.run.slowed}: history changes and report's "
                "trends leave it out"
            )
        if point.run.occupied is not None:
            print(f"note: {point.run.date}: {point.run.occupied}: its times may be slowed by them")
        if point.run.shown_anchor is not None:
            print(f"note: {point.run.date}: its verdict was {point.run.shown_anchor}")
    return 0


CHANGES_FORMAT = "kernelwatch-history-changes"


@dataclass(frozen=True)
class ChangesCommand:
    """What `kernelwatch history changes` was asked to do."""

    db: str | Path
    since: str | None  # normalised (changes.parse_since)
    new_since: str | None  # normalised too
    gpu: str | None
    filter: str | None
    metric: Metric
    # --threshold, else the larger of its own 5 % and the config's (changes.threshold_of),
    # with where it comes from; checked as find_changes words it, after the database is found.
    threshold: float
    alpha: float  # as compare reads it (Config.over), with its own default
    rules: tuple[ThresholdRule, ...]  # the suite config's per-benchmark thresholds
    json: str | None
    config: Config  # --config, else the suite's kernelwatch.toml: read, so never written
    threshold_source: str = "--threshold"  # printed beside it: changes.Threshold.source


def changes_main(args: argparse.Namespace) -> int:
    # The options, the suite's config and their precedence as compare reads them.
    from kernelwatch import changes as change_points
    from kernelwatch import verdict

    config = verdict.suite_config(args.config)
    # The defaults of `history changes` (defaults.py); alpha's precedence is compare's, the
    # config's threshold only widens detection's own (changes.threshold_of says why).
    given = parse_fraction(args.threshold, "--threshold") if args.threshold else None
    threshold = change_points.threshold_of(given, config.threshold)
    alpha = config.over("alpha", args.alpha, defaults.CHANGES_ALPHA)
    metric = change_points.series_metric(args.metric)
    return run_changes(
        ChangesCommand(
            db=_db(args),
            since=change_points.parse_since(args.since),
            new_since=change_points.parse_since(args.new_since, "--new-since"),
            gpu=args.gpu,
            filter=args.filter,
            metric=metric,
            threshold=threshold.value,
            alpha=alpha,
            rules=config.rules,
            json=args.json,
            config=config,
            threshold_source=threshold.source,
        )
    )


def run_changes(command: ChangesCommand) -> int:
    from kernelwatch import baseline as baselines
    from kernelwatch import changes as change_points
    from kernelwatch import history
    from kernelwatch.render import aligned, format_value

    metric, since, new_since = command.metric, command.since, command.new_since
    threshold, alpha = command.threshold, command.alpha
    check_outputs(
        [Output("--json", command.json)], [Input("--db", command.db), command.config.read()]
    )
    change_points.otava_analysis()  # missing: say what to install before opening anything
    with history.database(command.db) as db:
        without_gpu = history.runs_without_gpu(db) if command.gpu is None else 0
        slowed = len(history.slowed_runs(db))
        found = change_points.find_changes(
            db,
            gpu=command.gpu,
            benchmark_filter=command.filter,
            metric=metric.key,
            since=since,
            threshold=threshold,
            alpha=alpha,
            rules=command.rules,
            new_since=new_since,
        )
    if command.json:
        write_json_atomic(
            Path(command.json),
            {
                "format": CHANGES_FORMAT,
                "version": 1,
                "metric": metric.key,
                "higher_is_better": metric.higher_is_better,
                "since": since,
                "new_since": new_since,
                "gpu": command.gpu,
                "filter": command.filter,
                "threshold": threshold,
                "threshold_source": command.threshold_source,
                "alpha": alpha,
                "changes": [dataclasses.asdict(change) for change in found],
            },
        )
    regressions = sum(change.regression for change in found)
    dates = (("since", since), ("new since", new_since))
    scope = ", ".join(f"{w} {d}" for w, d in dates if d) or "in the whole history"
    settings = (
        f"threshold {threshold * 100:g}% ({command.threshold_source}; config rules per "
        f"benchmark widen it), alpha {alpha:g}"
    )
    notes = []
    if without_gpu:
        notes.append(
            f"note: {without_gpu} run(s) record no GPU ({baselines.GPU_KEYS}): they are in no "
            "series and were not analysed"
        )
    if slowed:
        notes.append(
            f"note: {slowed} run(s) slowed down on purpose (--kernelwatch_inject, selftest): "
            "they measured the slowdown, not a commit, and are in no series"
        )
    if not found:
        print(f"kernelwatch history changes: {metric.key}: no change {scope} ({settings})")
        for line in notes:
            print(line)
        return 0
    print(
        f"kernelwatch history changes: {metric.key}: {len(found)} change(s), "
        f"{regressions} regression(s), {scope}, newest first ({settings})"
    )
    rows = [("", "DATE", "GPU", "BENCHMARK", "CHANGE", "BEFORE", "AFTER", "P", "FIRST COMMIT")]
    for change in found:
        rows.append(
            (
                "REGRESSION" if change.regression else "IMPROVEMENT",
                change.date,
                change.gpu_slug,
                change.benchmark,
                f"{(change.ratio - 1) * 100:+.1f}%",
                format_value(change.before, metric),
                format_value(change.after, metric),
                f"{change.p_value:.2g}",
                short_commit(change.commit),
            )
        )
    print("\n".join(aligned(rows, frozenset({4, 5, 6, 7}))))
    for line in notes:
        print(line)
    return 1 if regressions else 0
