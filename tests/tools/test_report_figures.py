"""The report's figures as a reader sees them: no text drawn over another or cut at the figure's
edge, no legend over the data, on the trend plots of awkward histories (change points side by
side, at the first and the last run, many runs, this run not in the history) and on every lesson
figure of the real H200 run; and every SVG described in words (svg.describe)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import GPU_DATA
from kernelwatch import history
from kernelwatch.changes import Change
from kernelwatch.loading import load
from kernelwatch.report import lessons, svg, trends
from kernelwatch.report.lessons.rundata import RunData
from kernelwatch.results import resolve_metric

matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed")

TIME = resolve_metric("time")
# A run whose binaries mark the families' references, which the figures draw against.
MARKED = GPU_DATA / "h200-x4-card-d501b18d-marked" / "suite.json.gz"


def legend_over_data(figure: Any) -> list[str]:
    """Legend entries of a panel's legend whose box holds a line, bar or label of the panel."""
    found = []
    svg.drawn_texts(figure)  # (lays the figure out)
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        shapes = [line.get_transform().transform_path(line.get_path()) for line in ax.lines]
        shapes += [
            c.get_transform().transform_path(p) for c in ax.collections for p in c.get_paths()
        ]
        hit = any(s.intersects_bbox(box, filled=False) for s in shapes)
        hit |= any(p.get_window_extent(renderer).overlaps(box) for p in ax.patches)
        hit |= any(t.get_window_extent(renderer).overlaps(box) for t in ax.texts)
        if hit:
            found.append(", ".join(t.get_text() for t in legend.get_texts()))
    return found


def outside(figure: Any) -> list[str]:
    """Texts drawn (partly) beyond the figure's edge: cut off in the SVG."""
    edge = figure.bbox
    return [
        t.get_text()
        for t, box in svg.drawn_texts(figure)
        if box.x0 < edge.x0 - 0.5
        or box.y0 < edge.y0 - 0.5
        or box.x1 > edge.x1 + 0.5
        or box.y1 > edge.y1 + 0.5
    ]


def problems(figure: Any) -> dict[str, list[Any]]:
    found = {
        "overlapping texts": svg.overlapping(figure),
        "cut at the edge": outside(figure),
        "legend over data": legend_over_data(figure),
    }
    return {what: items for what, items in found.items() if items}


# ------------------------------------------------------------------------------ trend plots


def series(levels: list[float]) -> list[history.Point]:
    """A benchmark's history: one run a day, ten repetitions each, ±0.4 % noise."""
    rng = np.random.default_rng(7)
    start = dt.datetime(2027, 1, 1, 6, tzinfo=dt.UTC)
    points = []
    for i, level in enumerate(levels):
        date = (start + dt.timedelta(days=i)).isoformat()
        run = history.Run(i + 1, date, f"{i + 1:07x}" * 6, "gpu", "GPU", 1, "run.json")
        points.append(history.Point(run, level * (1 + 0.004 * rng.standard_normal(10))))
    return points


def changes_at(points: list[history.Point], indices: list[int]) -> list[Change]:
    found = []
    for at in indices:
        before, after = points[at - 1].median, points[at].median
        run = points[at].run
        found.append(
            Change("gpu", "b", "real_time", run.id, run.git_commit, run.date, at, before, after,
                   after / before, 1e-5, after > before)  # fmt: skip
        )
    return found


# name: (levels, indices of the change points, this run in the history, else its value)
AWKWARD = {
    "two changes side by side in 30 runs": ([1e6] * 14 + [1.3e6] + [1e6] * 15, [14, 15], 30),
    "three changes one apart": ([2e5] * 3 + [2.4e5, 2e5, 1.7e5] + [1.7e5] * 4, [3, 4, 5], 10),
    "four changes in a row in 40 runs": (
        [5e4] * 20 + [6e4, 4e4, 7e4] + [5e4] * 17,
        [20, 21, 22, 23],
        40,
    ),
    "a change at the last of 60 runs": ([5e4] * 59 + [6.5e4], [59], 60),
    "a change at the first run": ([1e3] + [1.5e3] * 5, [1], 6),
    "this run not in the history, at the top": ([1e7] * 10 + [9e6] * 10, [10], None),
    "two runs, no change": ([3e3, 3.1e3], [], 2),
}


@pytest.mark.parametrize("case", AWKWARD)
def test_trend_plot_labels_never_collide(case: str) -> None:
    levels, indices, this_run = AWKWARD[case]
    points = series(levels)
    current = None if this_run else max(levels) * 1.12
    changes = changes_at(points, indices)
    figure = trends.draw(points, changes, TIME, this_run=this_run, current=current)
    try:
        assert problems(figure) == {}
        drawn = {t.get_text() for t, _ in svg.drawn_texts(figure)}
        # Every change point is labelled (the labels are stacked, not dropped).
        assert {f"{(c.ratio - 1) * 100:+.1f}%" for c in changes} <= drawn
    finally:
        svg.close(figure)


def test_close_change_points_are_stacked_and_the_axes_make_room() -> None:
    levels, indices, this_run = AWKWARD["four changes in a row in 40 runs"]
    points = series(levels)
    figure = trends.draw(points, changes_at(points, indices), TIME, this_run=this_run)
    try:
        labels = figure.axes[0].texts
        renderer = figure.canvas.get_renderer()
        rows = {round(t.get_window_extent(renderer).y0) for t in labels}
        axes_top = figure.axes[0].get_window_extent(renderer).y1
        assert len(rows) > 1 and min(rows) >= axes_top  # stacked, all above the data
    finally:
        svg.close(figure)


def test_trend_summary_says_what_the_plot_shows() -> None:
    levels, indices, _ = AWKWARD["two changes side by side in 30 runs"]
    points = series(levels)
    text = trends.summary(points, changes_at(points, indices), TIME, this_run=30)
    assert text.startswith("30 run(s), 2027-01-01 (0000001) to 2027-01-30 (000001e): median ")
    assert "Change point at 2027-01-15 (000000f): +30." in text and "(slower)" in text
    assert "(faster), 1.299 ms → 998.1 us" in text and "This run: 1.001 ms, circled." in text
    absent = trends.summary(points, [], TIME, current=2e6)
    assert "This run (not in the history): 2.000 ms, drawn as ◇ last." in absent


# ------------------------------------------------------------------------ lesson figures


@pytest.fixture(scope="module")
def lesson_figures() -> Iterator[list[tuple[str, dict[str, list[Any]], str]]]:
    """Every lesson figure of the real run: (key, its problems, its SVG description), checked
    as it is saved."""
    if not MARKED.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    seen: list[tuple[str, dict[str, list[Any]], str]] = []
    original = svg.to_svg

    def checked(figure: Any, prefix: str, title: str, caption: str = "") -> str:
        seen.append((prefix, problems(figure), svg.describe(figure)))
        return original(figure, prefix, title, caption)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(svg, "to_svg", checked)
        lessons.draw_all(RunData.from_result(load(MARKED)))
    yield seen


def test_lesson_figures_read_cleanly(lesson_figures) -> None:
    assert len(lesson_figures) >= 8
    assert {key: found for key, found, _ in lesson_figures if found} == {}


def test_lesson_figures_are_described_with_their_numbers(lesson_figures) -> None:
    described = {key: text for key, _, text in lesson_figures}
    # The words and numbers drawn: titles, axes, value labels, legend entries.
    assert "TFLOP/s (FP32)" in described["lesson-matmul"]
    assert "6.26" in described["lesson-matmul"] and "36%" in described["lesson-matmul"]
    assert "cublasSgemm (reference)" in described["lesson-matmul"]  # the marked reference
    assert "copy_rows, copy_columns, naive_rows" in described["lesson-transpose"]
    assert "labels: 4,010 (100%); 2,036 (51%)" in described["lesson-transpose"]
    assert "legend: " in described["lesson-local-memory"]


def test_describe_gives_axis_ranges_and_categories() -> None:
    with svg.style("t"):
        figure, ax = svg.new_figure(3, 2)
        ax.bar(["a", "b"], [1.0, 2.0], label="bars")
        ax.set_ylabel("speed (GB/s)")
        ax.set_ylim(0, 3)
        ax.text(1, 2, "2.0×")
        ax.legend()
        text = svg.describe(figure)
    svg.close(figure)
    assert text == "x axis: a, b. speed (GB/s): 0.0 to 3.0. labels: 2.0×. legend: bars."
