"""Per-benchmark trend plots from the results history, with the change points marked.

Which benchmarks get a plot (a page of 355 plots is unreadable): first those with a change
point in the history (regressions first, then by size of the change), then those that
regressed against the baseline in this run, then each family's speed-of-light reference (their
trends show drift of the machine itself: driver, clocks). At most `limit` plots in all; the
page says how many of each were drawn and lists every change point in a table.

Change points come from kernelwatch.changes.find_changes (a separate module); the report takes
the function as a parameter, so it can be given another one, or none.
"""

from __future__ import annotations

import inspect
import math
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kernelwatch import defaults, history
from kernelwatch.compare import Settings
from kernelwatch.errors import InputError
from kernelwatch.report import svg
from kernelwatch.report.trend_plot import ChangeLike, plot, summary
from kernelwatch.results import Metric

DEFAULT_LIMIT = defaults.TREND_PLOTS


ChangeFinder = Callable[..., Sequence[Any]]

REASON_CHANGE = "change point"
REASON_REGRESSION = "regressed in this run"
REASON_REFERENCE = "family reference"


@dataclass(frozen=True)
class Choice:
    """The benchmarks to plot, each with why, and what was left out."""

    chosen: tuple[tuple[str, tuple[str, ...]], ...]
    changed: int  # benchmarks of the run with at least one change point
    regressed: int  # benchmarks that regressed against the baseline in this run
    references: int  # family references available
    limit: int

    def count(self, reason: str) -> int:
        return sum(reason in reasons for _, reasons in self.chosen)


def _change_order(change: ChangeLike) -> tuple[int, float]:
    size = abs(math.log(change.ratio)) if change.ratio and change.ratio > 0 else 0.0
    return (0 if change.regression else 1, -size)


def choose(
    run_names: Sequence[str],
    changes: Sequence[ChangeLike],
    regressed: Sequence[str],
    references: Sequence[str],
    available: set[str],
    limit: int = DEFAULT_LIMIT,
) -> Choice:
    """Pick the benchmarks to plot (see the module docstring). Only benchmarks of this run
    with a series in the history (`available`) are candidates."""
    in_run = set(run_names) & available
    reasons: dict[str, list[str]] = {}
    order: list[str] = []

    def add(name: str, reason: str) -> None:
        if name not in in_run:
            return
        if name not in reasons:
            reasons[name] = []
            order.append(name)
        if reason not in reasons[name]:
            reasons[name].append(reason)

    changed = {c.benchmark for c in changes if c.benchmark in in_run}
    for change in sorted(changes, key=_change_order):
        add(change.benchmark, REASON_CHANGE)
    for name in regressed:
        add(name, REASON_REGRESSION)
    present_references = [r for r in references if r in in_run]
    for name in present_references:
        add(name, REASON_REFERENCE)
    kept = order[: max(limit, 0)]
    return Choice(
        tuple((name, tuple(reasons[name])) for name in kept),
        changed=len(changed),
        regressed=len([n for n in set(regressed) if n in set(run_names)]),
        references=len(present_references),
        limit=limit,
    )


@dataclass(frozen=True)
class Trend:
    benchmark: str
    reasons: tuple[str, ...]
    key: str  # HTML id
    svg: str
    runs: int
    changes: tuple[ChangeLike, ...] = ()
    caption: str = ""  # the plot in words, with its numbers (trend_plot.summary)


@dataclass(frozen=True)
class Trends:
    """What the trends section shows; `unavailable` says why there are none."""

    plots: tuple[Trend, ...] = ()
    changes: tuple[ChangeLike, ...] = ()  # every change point of the run's benchmarks
    choice: Choice | None = None
    runs: int = 0  # runs of this GPU in the history
    run_in_history: int | None = None  # the id of this run in the history, when it is there
    unavailable: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def benchmarks_in_history(db: sqlite3.Connection, gpu: str) -> set[str]:
    """Names of the benchmarks measured in runs of this GPU (from the small per-run table, not
    the samples; a benchmark without the metric is skipped when its series is read)."""
    rows = db.execute(
        "SELECT DISTINCT b.name FROM run_benchmarks rb JOIN runs r ON r.id = rb.run_id "
        "JOIN benchmarks b ON b.id = rb.benchmark_id "
        "WHERE r.gpu_slug = ? AND rb.error IS NULL AND rb.repetitions > 0",
        (gpu,),
    )
    return {row[0] for row in rows}


def run_id_of(db: sqlite3.Connection, document: Mapping[str, Any]) -> int | None:
    """This run's id in the history (the same content hash as `history ingest`), if there."""
    row = db.execute(
        "SELECT id FROM runs WHERE content_hash = ?", (history.content_hash(document),)
    ).fetchone()
    return int(row[0]) if row else None


def runs_of(db: sqlite3.Connection, gpu: str) -> int:
    (count,) = db.execute("SELECT count(*) FROM runs WHERE gpu_slug = ?", (gpu,)).fetchone()
    return int(count)


def _finder_arguments(
    finder: ChangeFinder, gpu: str, metric: Metric, settings: Settings | None
) -> dict[str, Any]:
    arguments: dict[str, Any] = {"gpu": gpu, "metric": metric.key}
    if settings is None:
        return arguments
    # The threshold stays the finder's own: steps between nights are judged against a wider
    # limit than one comparison (kernelwatch.changes.DEFAULT_THRESHOLD says why).
    arguments.update(alpha=settings.alpha)
    try:
        parameters = inspect.signature(finder).parameters
    except (TypeError, ValueError):
        return arguments
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if settings.rules and ("rules" in parameters or takes_any):
        arguments["rules"] = settings.rules
    return arguments


def build(
    db: sqlite3.Connection,
    *,
    gpu: str,
    metric: Metric,
    run_names: Sequence[str],
    regressed: Sequence[str],
    references: Sequence[str],
    document: Mapping[str, Any],
    medians: Mapping[str, float],
    find_changes: ChangeFinder,
    settings: Settings | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Trends:
    """The trends section for this run's GPU: change points, the choice, and the plots.

    Change points are found as `history changes` finds them, with the comparison's alpha (and
    its per-benchmark threshold rules, where the finder takes `rules`). A finder that refuses (InputError: say,
    its analysis package is not installed) leaves the trends without change points and its
    message on the page: the report is still written."""
    total = runs_of(db, gpu)
    if total == 0:
        return Trends(unavailable=f"the history holds no run of this GPU ({gpu})")
    this_run = run_id_of(db, document)
    available = benchmarks_in_history(db, gpu)
    if not available & set(run_names):  # (else: "0 change points" over runs of other benchmarks)
        return Trends(
            runs=total,
            unavailable=f"none of this run's {len(run_names)} benchmarks is in the history's "
            f"{total} run(s) of this GPU ({gpu})",
        )
    notes: list[str] = []
    found: Sequence[ChangeLike] = ()
    try:
        found = list(find_changes(db, **_finder_arguments(find_changes, gpu, metric, settings)))
    except InputError as exc:
        notes.append(f"change points were not computed: {exc}")
    names = set(run_names)
    changes = tuple(c for c in found if c.benchmark in names)
    # Every candidate in order, then the first `limit` with values of the metric: a family
    # reference without it (transfers have no flop_per_second) neither takes a plot's place
    # nor is counted on the page as drawn.
    choice = choose(run_names, changes, regressed, references, available, len(available))
    plots: list[Trend] = []
    kept: list[tuple[str, tuple[str, ...]]] = []
    for name, reasons in choice.chosen:
        if len(plots) >= max(limit, 0):
            break
        try:
            points = history.series(db, name, metric.key, gpu)
        except InputError:
            continue  # no values of this metric on this GPU after all
        points = [p for p in points if p.error is None]  # failed runs: as history changes
        if not points:
            continue
        own = tuple(c for c in changes if c.benchmark == name)
        key = f"trend-{len(plots) + 1}"
        current = medians.get(name)
        caption = summary(points, own, metric, this_run=this_run, current=current)
        with svg.style(key):
            drawn = plot(
                name, points, own, metric, key, this_run=this_run, current=current, caption=caption
            )
        plots.append(Trend(name, reasons, key, drawn, len(points), own, caption))
        kept.append((name, reasons))
    choice = replace(choice, chosen=tuple(kept), limit=limit)
    return Trends(tuple(plots), changes, choice, total, this_run, None, tuple(notes))
