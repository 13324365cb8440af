"""Gathering what the report shows: the run, its comparison with a baseline, the trends from the
history, the lesson figures. Everything here is data (a Page); page/ turns it into HTML."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwatch import baseline as baselines
from kernelwatch import changes, completeness, explain, history, verdict
from kernelwatch.compare import SLOWDOWNS, Report
from kernelwatch.files import check_input_dir
from kernelwatch.report import lessons, svg, trends
from kernelwatch.report.lessons.rundata import RunData
from kernelwatch.results import ResultSet


@dataclass(frozen=True)
class Options:
    result: Path
    judging: verdict.Judging  # as `run` judges: the metric and compare's settings
    baseline: Path | None = None  # a result file or a folder of them
    baselines: Path | None = None  # the baselines root (default: baselines/ in the checkout)
    db: Path | None = None  # the history database; None: the default, if it exists
    max_trends: int = trends.DEFAULT_LIMIT
    explanations: Path | None = None  # explanations.json of `kernelwatch ab`
    # The suite config's [compare] threshold (None: unset), which widens change detection's
    # own 5 % as in `history changes` (changes.threshold_of): the change points of the same
    # history and config are the same.
    changes_threshold: float | None = None


@dataclass(frozen=True)
class BaselineInfo:
    label: str  # what was compared with (a path)
    how: str  # "given with --baseline" or "this GPU's baseline (SLUG)"
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    result: Path
    context: Mapping[str, Any]
    benchmarks: int
    errors: Mapping[str, str]
    skipped: Mapping[str, str]
    comparison: Report | None
    baseline: BaselineInfo | None
    no_baseline: str | None  # why there is no comparison
    trends: trends.Trends
    lessons: tuple[lessons.Lesson, ...]
    database: str | None  # the history database read, if any


def _baseline(
    options: Options, run: ResultSet
) -> tuple[ResultSet | None, BaselineInfo | None, baselines.Against | None, str | None]:
    """The baseline side, what it is, where it was found (with its stored noise), or why there
    is none (only when it was not named): found and restricted as `kernelwatch run` does
    (verdict.find_baseline)."""
    if options.baselines is not None:
        check_input_dir(options.baselines, "--baselines")
    root = options.baselines if options.baselines is not None else baselines.found_root()
    if root is None and options.baseline is None:
        return (
            None,
            None,
            None,
            (
                "no project found here, so no baselines: name them with --baselines DIR, or a "
                "baseline with --baseline FILE"
            ),
        )
    try:
        found = verdict.find_baseline(
            root,
            run.context,
            str(options.result),
            set(run.names) | {name for c in completeness.from_context(run) for name in c.names},
            given=options.baseline,
        )
    except baselines.NoBaseline as exc:  # a broken baseline is exit 2, as in compare
        if options.baseline is not None:
            raise
        return None, None, None, str(exc)
    if found.whole is None and not found.documents and options.baseline is not None:
        # A named baseline is compared whatever it holds, as `compare` compares it: whole, the
        # rest outside this run's part (judge_result), its GPU checked.
        found = baselines.against(root, run.context, str(options.result), given=options.baseline)
    elif found.whole is None and not found.documents:
        return (
            None,
            None,
            None,
            f"the baseline {found.label} holds none of the {len(run.names)} benchmarks of this "
            f"filtered run (--filter {run.context.get('kernelwatch_filter')})",
        )
    side = verdict.baseline_side(found)
    if options.baseline is None and not set(side.names) & set(run.names):
        # Another project's run on a GPU the suite has a baseline of (an nvbench file): every
        # benchmark NEW, the suite's MISSING, and a page in red about nothing it measured.
        return (
            None,
            None,
            None,
            f"{found.how}, {found.label}, holds none of the {len(run.names)} benchmarks of "
            "this run: nothing to compare (name a baseline with --baseline)",
        )
    return side, BaselineInfo(found.label, found.how, dict(side.context)), found, None


def _database(options: Options) -> tuple[Path | None, str | None]:
    """The history database to read, or why there is none. A named one must exist."""
    if options.db is not None:
        return options.db, None  # open_db refuses a missing or foreign file (exit 2)
    default = history.found_path()
    if default is not None and default.is_file():
        return default, None
    return None, (
        f"no history database ({default or 'no project found'}; name one with --db): add "
        "runs with kernelwatch history ingest RESULT.json"
    )


def build_page(
    options: Options,
    *,
    find_changes: trends.ChangeFinder | None = changes.find_changes,
) -> Page:
    """Everything the report shows; tests and library users replace `find_changes` (`None`:
    the trends without change points)."""
    document, run = history.load_run(options.result)
    svg.require_matplotlib()
    base, info, against, no_baseline = _baseline(options, run)
    judging = options.judging
    report = None
    if base is not None:  # as `run` judged it, and what crashed in a partial result
        report = verdict.judge_result(base, run, judging, against)
        report = explain.explain(report)  # kernel changes, from the results' kernel records
        if options.explanations is not None:
            found = {**report.explanations, **explain.read_explanations(options.explanations)}
            report = dataclasses.replace(report, explanations=found)

    data = RunData.from_result(run)
    regressed = [c.name for c in (report.comparisons if report else ()) if c.verdict in SLOWDOWNS]
    db_path, no_db = _database(options)
    slug = baselines.context_slug(run.context)
    if db_path is None:
        section = trends.Trends(unavailable=no_db)
    elif slug is None:
        with history.database(db_path):
            pass  # a named database must still be one (exit 2 otherwise)
        section = trends.Trends(
            unavailable=f"{baselines.NO_GPU}: a trend is a series of one GPU model"
        )
    else:
        with history.database(db_path) as db:
            section = trends.build(
                db,
                gpu=slug,
                metric=judging.metric,
                run_names=run.names,
                regressed=regressed,
                references=lessons.references(data),
                this_run=history.stored_run(db, document, run),
                medians={
                    n: m[judging.metric.key]
                    for n, m in data.medians.items()
                    if judging.metric.key in m
                },
                find_changes=find_changes,
                settings=judging.settings,
                limit=options.max_trends,
                threshold=changes.threshold_of(None, options.changes_threshold),
            )
    drawn = tuple(lessons.draw_all(data))
    return Page(
        result=options.result,
        context=dict(run.context),
        benchmarks=len(run.names),
        errors=dict(run.errors),
        skipped=dict(run.skipped),
        comparison=report,
        baseline=info,
        no_baseline=no_baseline,
        trends=section,
        lessons=drawn,
        database=str(db_path) if db_path is not None else None,
    )
