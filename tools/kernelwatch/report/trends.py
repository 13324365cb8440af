"""Per-benchmark trend plots from the results history, with the change points marked.

Which benchmarks get a plot (a page of 355 plots is unreadable): first those with a change
point in the history (regressions first, then by size of the change), then those that
regressed against the baseline in this run, then each family's speed-of-light reference (their
trends show drift of the machine itself: driver, clocks; the run's marked ones,
lessons.references). At most `limit` plots in all; the
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
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kernelwatch import defaults, history
from kernelwatch.compare import Settings
from kernelwatch.errors import InputError
from kernelwatch.names import short_commit
from kernelwatch.render import change as signed_change
from kernelwatch.render import format_value
from kernelwatch.report import svg
from kernelwatch.results import Metric

if TYPE_CHECKING:  # a type only: the finder is a parameter, kernelwatch.changes one of them
    from kernelwatch.changes import Threshold

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
    caption: str = ""  # the plot in words, with its numbers (summary, below)


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
    detection: str = ""  # the threshold and alpha change points were found with, and whence


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


def runs_of(db: sqlite3.Connection, gpu: str) -> int:
    (count,) = db.execute("SELECT count(*) FROM runs WHERE gpu_slug = ?", (gpu,)).fetchone()
    return int(count)


def _finder_arguments(
    finder: ChangeFinder,
    gpu: str,
    metric: Metric,
    settings: Settings | None,
    threshold: Threshold | None = None,
) -> dict[str, Any]:
    arguments: dict[str, Any] = {"gpu": gpu, "metric": metric.key}
    if settings is None:
        return arguments
    # The threshold is change detection's (widened by the suite config's, as `history changes`
    # takes it), not compare's: steps between nights are judged against a wider limit than one
    # comparison (kernelwatch.changes.threshold_of says why).
    arguments.update(alpha=settings.alpha)
    try:
        parameters = inspect.signature(finder).parameters
    except (TypeError, ValueError):
        return arguments
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if settings.rules and ("rules" in parameters or takes_any):
        arguments["rules"] = settings.rules
    if threshold is not None and ("threshold" in parameters or takes_any):
        arguments["threshold"] = threshold.value
    # A counter's direction given with --higher/--lower-is-better: its name alone gives none.
    if "higher_is_better" in parameters or takes_any:
        arguments["higher_is_better"] = metric.higher_is_better
    return arguments


def detection(arguments: Mapping[str, Any], threshold: Threshold | None) -> str:
    """The settings the change points were found with, each with where it comes from."""
    if "threshold" in arguments and threshold is not None:
        limit = f"threshold {threshold.value * 100:g}% ({threshold.source})"
    else:
        limit = "the change finder's own threshold"
    alpha = f", alpha {arguments['alpha']:g}" if "alpha" in arguments else ""
    rules = "; the config's per-benchmark rules widen it" if "rules" in arguments else ""
    return f"Change points found with {limit}{alpha}{rules}."


def build(
    db: sqlite3.Connection,
    *,
    gpu: str,
    metric: Metric,
    run_names: Sequence[str],
    regressed: Sequence[str],
    references: Sequence[str],
    this_run: int | None,
    medians: Mapping[str, float],
    find_changes: ChangeFinder | None,
    settings: Settings | None = None,
    limit: int = DEFAULT_LIMIT,
    threshold: Threshold | None = None,
) -> Trends:
    """The trends section for this run's GPU: change points, the choice, and the plots.

    Change points are found as `history changes` finds them, with the comparison's alpha (and
    its per-benchmark threshold rules, where the finder takes `rules`), and `threshold`
    (changes.threshold_of; None: the finder's own); `detection` says which. No finder (`None`), or
    one that refuses (InputError: say, its analysis package is not installed), leaves the
    trends without change points and says why on the page: the report is still written.
    `this_run`: the run's id in the history (history.stored_run), marked in the plots."""
    total = runs_of(db, gpu)
    if total == 0:
        return Trends(unavailable=f"the history holds no run of this GPU ({gpu})")
    available = benchmarks_in_history(db, gpu)
    if not available & set(run_names):  # (else: "0 change points" over runs of other benchmarks)
        return Trends(
            runs=total,
            unavailable=f"none of this run's {len(run_names)} benchmarks is in the history's "
            f"{total} run(s) of this GPU ({gpu})",
        )
    notes: list[str] = []
    found: Sequence[ChangeLike] = ()
    detected = ""
    if find_changes is None:
        notes.append("change points were not computed: none asked for (find_changes=None)")
    else:
        try:
            arguments = _finder_arguments(find_changes, gpu, metric, settings, threshold)
            found = list(find_changes(db, **arguments))
            detected = detection(arguments, threshold)
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
        # Failed runs and runs slowed on purpose are no points of the series, as in `history
        # changes`; this run, when slowed, is drawn after the last as a run not in the history.
        points = [p for p in points if p.error is None and p.run.slowed is None]
        if not points:
            continue
        own = tuple(c for c in changes if c.benchmark == name)
        key = f"trend-{len(plots) + 1}"
        current = medians.get(name)
        shown = this_run if any(p.run.id == this_run for p in points) else None
        caption = summary(points, own, metric, this_run=shown, current=current)
        with svg.style(key):
            drawn = plot(
                name, points, own, metric, key, this_run=shown, current=current, caption=caption
            )
        plots.append(Trend(name, reasons, key, drawn, len(points), own, caption))
        kept.append((name, reasons))
    choice = replace(choice, chosen=tuple(kept), limit=limit)
    return Trends(tuple(plots), changes, choice, total, this_run, None, tuple(notes), detected)


# One benchmark's trend plot (SVG): the median of each run of the history with its min-max
# range, the change points with the levels before and after, and this run marked; and the same in
# words (summary: the plot's caption and its SVG description). The data a plot shows is computed
# first (_levels, _place_changes), then drawn.


class ChangeLike(Protocol):
    """What the report reads of a kernelwatch.changes.Change."""

    gpu_slug: str
    benchmark: str
    metric: str
    run_id: int
    commit: str | None
    date: str
    index: int  # position of the first run after the change in the benchmark's series
    before: float
    after: float
    ratio: float
    p_value: float
    regression: bool


def axis_unit(metric: Metric, values: Sequence[float]) -> tuple[float, str]:
    """(divide by, axis label) for a metric's values (times are in ns)."""
    largest = max((abs(v) for v in values), default=1.0)
    if metric.is_time:
        for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
            if largest >= scale:
                return scale, (
                    f"GPU time ({unit})" if metric.key == "real_time" else f"{metric.key} ({unit})"
                )
        return 1.0, "GPU time (ns)" if metric.key == "real_time" else f"{metric.key} (ns)"
    unit = ""
    if metric.key.endswith("bytes_per_second"):
        unit = "B/s"
    elif metric.key.endswith("flop_per_second"):
        unit = "FLOP/s"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if largest >= scale:
            return scale, f"{metric.key} ({prefix}{unit})" if unit else f"{metric.key} (×{scale:g})"
    return 1.0, f"{metric.key} ({unit})" if unit else metric.key


def direction_word(metric: Metric, regression: bool) -> str:
    """How a change reads: slower/faster for times, worse/better for counters."""
    if metric.is_time:
        return "slower" if regression else "faster"
    return "worse" if regression else "better"


def _tick_label(point: history.Point) -> str:
    date = (point.run.date or "")[:10]
    commit = (point.run.git_commit or "")[:7]
    return f"{date[5:]}\n{commit}" if commit else date[5:]


@dataclass(frozen=True)
class _Levels:
    """What a trend plot shows, before anything is drawn (values in the metric's own unit)."""

    medians: list[float]  # of each run
    lows: list[float]
    highs: list[float]
    extra: float | None  # this run's median when it is not in the history: drawn after the last
    every: list[float]  # all of the above: what the y axis must hold
    scale: float  # divide by this for the axis unit
    label: str  # the y axis label

    @property
    def count(self) -> int:
        """Positions on the x axis: the runs, and this run after them when it is not one."""
        return len(self.medians) + (1 if self.extra is not None else 0)


@dataclass(frozen=True)
class _Step:
    """A change point placed on the x axis: its line at `x`, the level before it drawn from
    `start` and the level after it to `stop` (the neighbouring change points or the ends)."""

    x: float
    start: float
    stop: float
    change: ChangeLike


def _levels(points: Sequence[history.Point], metric: Metric, extra: float | None) -> _Levels:
    medians = [float(np.median(p.values)) for p in points]
    lows = [float(np.min(p.values)) for p in points]
    highs = [float(np.max(p.values)) for p in points]
    every = medians + lows + highs + ([extra] if extra is not None else [])
    scale, label = axis_unit(metric, every)
    return _Levels(medians, lows, highs, extra, every, scale, label)


def _place_changes(
    changes: Sequence[ChangeLike], points: Sequence[history.Point], count: int
) -> list[_Step]:
    # Where each one falls in this series (by run id; else its index).
    positions = {p.run.id: i for i, p in enumerate(points)}
    located = sorted(
        ((positions.get(c.run_id, c.index), c) for c in changes), key=lambda item: item[0]
    )
    located = [(i, c) for i, c in located if 0 < i < count]
    bounds = [-0.5] + [i - 0.5 for i, _ in located] + [count - 0.5]
    return [_Step(i - 0.5, bounds[k], bounds[k + 2], c) for k, (i, c) in enumerate(located)]


def _y_limits(levels: _Levels) -> tuple[float, float]:
    # A y range of at least ±2 % of the level: noise of 0.05 % must not look like a cliff.
    low, high = min(levels.every) / levels.scale, max(levels.every) / levels.scale
    middle = float(np.median(levels.medians)) / levels.scale
    if high - low < 0.04 * abs(middle):
        low, high = min(low, middle * 0.98), max(high, middle * 1.02)
    pad = (high - low) * 0.12  # (the change labels are above the axes, not in this margin)
    return low - pad, high + pad


def _tick_positions(count: int) -> list[int]:
    step = max(1, math.ceil((count - 1) / 5))  # at most 6 evenly spaced labels, the last run's too
    ticks = sorted(set(range(0, count, step)) | {count - 1})
    if len(ticks) > 1 and ticks[-1] - ticks[-2] < step:  # no two labels side by side
        ticks.pop(-2)
    return ticks


def _draw_runs(ax: Any, levels: _Levels) -> None:
    x = np.arange(len(levels.medians))
    ax.vlines(
        x,
        np.array(levels.lows) / levels.scale,
        np.array(levels.highs) / levels.scale,
        color=svg.LIGHT,
        linewidth=2.2,
        label="min–max of a run",
    )
    ax.plot(
        x,
        np.array(levels.medians) / levels.scale,
        color=svg.BLUE,
        marker="o",
        markersize=3.5,
        linewidth=1.2,
        label="median of a run",
    )


def _mark_this_run(
    ax: Any, levels: _Levels, points: Sequence[history.Point], this_run: int | None
) -> None:
    for i, p in enumerate(points):
        if p.run.id == this_run:
            ax.plot(
                [i],
                [levels.medians[i] / levels.scale],
                linestyle="none",
                marker="o",
                markersize=9,
                markerfacecolor="none",
                markeredgecolor=svg.REFERENCE,
                markeredgewidth=1.4,
                label="this run",
            )
    if levels.extra is not None:
        ax.plot(
            [len(points)],
            [levels.extra / levels.scale],
            linestyle="none",
            marker="D",
            markersize=6,
            markerfacecolor="white",
            markeredgecolor=svg.REFERENCE,
            markeredgewidth=1.4,
            label="this run (not in history)",
        )


def _draw_changes(ax: Any, steps: Sequence[_Step], scale: float, metric: Metric) -> list[Any]:
    """The change lines and levels, and their labels above the axes (returned: stacked in rows
    once the figure is laid out, so that close change points do not write over each other)."""
    labels = []
    for step in steps:
        change = step.change
        color = svg.RED if change.regression else svg.GREEN
        ax.axvline(
            step.x,
            color=color,
            linestyle="--",
            linewidth=1.3,
            label=f"change: {direction_word(metric, change.regression)}",
        )
        ax.hlines(change.before / scale, step.start, step.x, color=color, linewidth=1.0, alpha=0.8)
        ax.hlines(change.after / scale, step.x, step.stop, color=color, linewidth=1.0, alpha=0.8)
        label = ax.annotate(
            signed_change(change.ratio),
            (step.x, 1.0),
            xycoords=ax.get_xaxis_transform(),
            xytext=(1, 3),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=8,
            fontweight="bold",
            color=color,
            annotation_clip=False,
        )
        labels.append(label)
    return labels


def _draw_axes(ax: Any, levels: _Levels, points: Sequence[history.Point]) -> None:
    from matplotlib.ticker import FixedLocator

    ax.set_ylim(*_y_limits(levels))
    ticks = _tick_positions(levels.count)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    labels = [_tick_label(points[t]) if t < len(points) else "this run" for t in ticks]
    ax.set_xticklabels(labels)
    ax.set_xlim(-0.6, levels.count - 0.4)
    ax.set_ylabel(levels.label)
    ax.set_xlabel("runs, oldest first (date, commit)")


def plot(
    name: str,
    points: Sequence[history.Point],
    changes: Sequence[ChangeLike],
    metric: Metric,
    key: str,
    *,
    this_run: int | None = None,
    current: float | None = None,
    caption: str = "",
) -> str:
    """One benchmark's series: the median of each run with its min-max range, change points
    as vertical lines with the levels before and after, and this run marked. `caption` (see
    summary) describes the SVG for a screen reader."""
    figure = draw(points, changes, metric, this_run=this_run, current=current)
    try:
        return svg.to_svg(figure, key, name, caption)
    finally:
        svg.close(figure)


def draw(
    points: Sequence[history.Point],
    changes: Sequence[ChangeLike],
    metric: Metric,
    *,
    this_run: int | None = None,
    current: float | None = None,
) -> Any:
    """The plot as a matplotlib Figure (plot() saves it as SVG)."""
    levels = _levels(points, metric, current if this_run is None else None)
    steps = _place_changes(changes, points, levels.count)
    figure, ax = svg.new_figure(5.8, 2.7)
    _draw_runs(ax, levels)
    _mark_this_run(ax, levels, points, this_run)
    labels = _draw_changes(ax, steps, levels.scale, metric)
    _draw_axes(ax, levels, points)
    svg.legend_below(figure, ax, ncol=3)
    svg.stack_labels(figure, labels, row=10.0)  # 8-point bold text and 2 points between rows
    return figure


def _run_words(point: history.Point) -> str:
    commit = f" ({short_commit(point.run.git_commit)[:7]})" if point.run.git_commit else ""
    return f"{(point.run.date or '?')[:10]}{commit}"


def summary(
    points: Sequence[history.Point],
    changes: Sequence[ChangeLike],
    metric: Metric,
    *,
    this_run: int | None = None,
    current: float | None = None,
) -> str:
    """The plot in words, with its numbers: the runs, the level of the first and the last, each
    change point with its levels, and this run."""
    if not points:
        return ""
    medians = [p.median for p in points]
    first, last = points[0], points[-1]
    words = [
        f"{len(points)} run(s), {_run_words(first)} to {_run_words(last)}: median "
        f"{format_value(medians[0], metric)} first, {format_value(medians[-1], metric)} last, "
        f"{format_value(min(medians), metric)} to {format_value(max(medians), metric)} in all."
    ]
    by_run = {p.run.id: p for p in points}
    for c in sorted(changes, key=lambda c: c.index):
        at = by_run.get(c.run_id)
        where = _run_words(at) if at else f"run {c.index + 1}"
        words.append(
            f"Change point at {where}: {signed_change(c.ratio)} "
            f"({direction_word(metric, c.regression)}), {format_value(c.before, metric)} → "
            f"{format_value(c.after, metric)}."
        )
    mine = by_run.get(this_run) if this_run is not None else None
    if mine is not None:
        words.append(f"This run: {format_value(mine.median, metric)}, circled.")
    elif current is not None:
        words.append(
            f"This run (not in the history): {format_value(current, metric)}, drawn as ◇ last."
        )
    return " ".join(words)
