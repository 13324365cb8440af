"""`kernelwatch report` on inputs written by hand or by other projects: text from the inputs in
the figures, other projects' benchmarks under a suite family's name."""

from __future__ import annotations

import html
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import synthetic
from kernelwatch import history
from kernelwatch.report import lessons
from kernelwatch.report.lessons.rundata import RunData

pytest.importorskip("matplotlib", reason="matplotlib is not installed (tools/kw setup installs it)")

CONTEXT = {"gpu_name": "NVIDIA H100 80GB HBM3", "gpu_compute_capability": "9.0"}
# "$...$" is matplotlib's mathtext, and \q none of its commands: drawn as such, it raised.
MATH = "$\\q{$"


@pytest.fixture(autouse=True)
def no_default_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout's own results/history.sqlite must not leak into the tests."""
    monkeypatch.setattr(history, "found_path", lambda: tmp_path / "no-history.sqlite")


def one_error_free_run(run: Any) -> None:
    assert run.status == 0, run.err
    assert "error" not in run.err, run.err


def rows(name: str, times: list[float], **counters: list[float]) -> list[dict[str, Any]]:
    return synthetic.benchmark_rows(name, times, time_unit="us", counters=counters)


def test_a_commit_or_name_with_dollars_is_drawn_as_text(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """A history whose commits hold "$...$" (KERNELWATCH_GIT_COMMIT is the user's): the trend
    plot's tick labels were parsed as mathtext, and the report ended in an internal error."""
    db = tmp_path / "history.sqlite"
    for i in range(5):
        context = {**CONTEXT, "kernelwatch_git_commit": MATH, "date": f"2026-01-0{i + 1}T06:00Z"}
        level = 1.0 if i < 3 else 1.3
        path = tmp_path / f"run-{i}.json"
        synthetic.write(path, synthetic.document(rows("BM_x", [level, level * 1.01]), context))
        history.ingest(path, db)
    out = tmp_path / "r.html"
    run = run_cli("report", tmp_path / "run-4.json", "--db", db, "-o", out)
    one_error_free_run(run)
    text = out.read_text(encoding="utf-8")
    assert 'class="kw-figure trend"' in text
    assert f"01-05 {html.escape(MATH)}" in text  # the tick label, in the plot's description

    # A variant's name in a lesson figure's labels: drawn as it is written.
    reduction = "reduction/sum/{}/float/n:67108864/manual_time"
    run_rows = rows(reduction.format(MATH), [2.0, 2.1], bytes_per_second=[1e11, 1e11])
    run_rows += rows(reduction.format("naive"), [1.0, 1.1], bytes_per_second=[2e11, 2e11])
    data = RunData.from_result(synthetic_result(tmp_path / "reduction.json", run_rows, CONTEXT))
    drawn = {lesson.key: lesson for lesson in lessons.draw_all(data)}
    figure = drawn["lesson-reduction"]
    assert isinstance(figure, lessons.Drawn), figure
    assert html.escape(MATH) in figure.svg


def synthetic_result(path: Path, all_rows: list[dict[str, Any]], context: dict[str, str]) -> Any:
    synthetic.write(path, synthetic.document(all_rows, context))
    return history.load_run(path)[1]


def test_other_benchmarks_under_a_family_name_lose_the_figure_not_the_page(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Another project's `matmul/naive/m:1k`: the matmul figure read m as an integer, and the
    report ended in an internal error instead of a page. A name the figure cannot read is now
    an absent benchmark (test_lesson_parameters), so the figure is left out as for a run
    without the family."""
    path = tmp_path / "other.json"
    other = rows("matmul/naive/m:1k/manual_time", [1.0, 1.1], flop_per_second=[1e12, 1e12])
    other += rows("local_memory/spill/rounds:many/manual_time", [1.0, 1.1])
    synthetic.write(path, synthetic.document(other, {}))
    out = tmp_path / "r.html"
    run = run_cli("report", path, "-o", out)
    one_error_free_run(run)
    text = out.read_text(encoding="utf-8")
    assert "left out, the run has no matmul benchmarks." in text
    assert "left out, the run has no local_memory benchmarks." in text


def test_a_named_baseline_without_the_filtered_runs_part_is_compared_as_compare_does(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """A --filter run and a named baseline holding none of its benchmarks: compare shows them
    NEW (and refuses another GPU model); the page said "no baseline", and took a baseline of
    another GPU without a word."""
    filtered = {**CONTEXT, "kernelwatch_filter": "^BM_new"}
    run_path, base_path = tmp_path / "run.json", tmp_path / "base.json"
    synthetic.write(run_path, synthetic.document(rows("BM_new", [1.0, 1.1, 1.2]), filtered))
    synthetic.write(base_path, synthetic.document(rows("BM_old", [1.0, 1.1, 1.2]), CONTEXT))
    out = tmp_path / "r.html"
    compared = run_cli("compare", base_path, run_path)
    assert compared.status == 0 and "NEW      BM_new" in compared.out, compared.out
    run = run_cli("report", run_path, "--baseline", base_path, "-o", out)
    one_error_free_run(run)
    assert "1 NEW" in run.out and "no baseline" not in run.out
    assert "No baseline" not in out.read_text(encoding="utf-8")

    other_gpu = {**CONTEXT, "gpu_name": "NVIDIA H200"}
    synthetic.write(base_path, synthetic.document(rows("BM_old", [1.0, 1.1, 1.2]), other_gpu))
    assert run_cli("compare", base_path, run_path).status == 2
    run = run_cli("report", run_path, "--baseline", base_path, "-o", out)
    assert run.status == 2 and "different GPU models" in run.err


def test_a_named_baseline_without_rows_is_refused_as_compare_refuses_it(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """A baseline file that holds no rows: compare said "holds no benchmark results"; report
    (as run --baseline), "holds none of these benchmarks; update it with kernelwatch baseline
    update", which no update of a file named by hand does."""
    run_path, base_path = tmp_path / "run.json", tmp_path / "base.json"
    synthetic.write(run_path, synthetic.document(rows("BM_a", [1.0, 1.1, 1.2]), CONTEXT))
    synthetic.write(base_path, synthetic.document([], CONTEXT))
    compared = run_cli("compare", base_path, run_path)
    assert (compared.status, compared.err) == (
        2,
        f"kernelwatch: error: {base_path}: holds no benchmark results\n",
    )
    done = run_cli("report", run_path, "--baseline", base_path, "-o", tmp_path / "r.html")
    assert (done.status, done.err) == (
        2,
        f"kernelwatch: error: --baseline {base_path}: holds no benchmark results\n",
    )


@pytest.mark.parametrize("instructions", [["<script>alert(1)</script>", 7], [5]])
def test_sass_instruction_counts_that_are_not_two_numbers_are_refused_in_one_line(
    run_cli: Callable[..., Any], tmp_path: Path, instructions: list[Any]
) -> None:
    """The counts were written into the page as they were in the file, unescaped (a script
    in a page promised to hold none), and a single one was an internal error (IndexError)."""
    for name, level in (("base.json", 1.0), ("run.json", 1.5)):
        times = [level * (1 + 0.001 * i) for i in range(10)]
        synthetic.write(tmp_path / name, synthetic.document(rows("BM_x", times), CONTEXT))
    explanations = tmp_path / "explanations.json"
    sass = {"kernel": "k", "instructions": instructions}
    kernel = {"change": "kernel code changed", "details": ["d"]}
    benchmarks = {"BM_x": {"kernel": kernel, "sass_diff": [sass]}}
    explanations.write_text(json.dumps({"kernelwatch_explanations": 1, "benchmarks": benchmarks}))
    out = tmp_path / "r.html"
    run = run_cli(
        "report",
        tmp_path / "run.json",
        "--baseline",
        tmp_path / "base.json",
        "--explanations",
        explanations,
        "-o",
        out,
    )
    assert run.status == 2 and not out.exists()
    assert run.err.startswith(f"kernelwatch: error: --explanations {explanations}: not a ")
    assert len(run.err.splitlines()) == 1


def test_sizes_that_no_log_axis_holds_are_drawn_without_a_warning(
    run_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Transfers all named bytes:0: the figure's log axis made matplotlib warn on stderr that
    it cannot log-scale them, under a page written with exit 0 (found by an audit)."""
    path = tmp_path / "zero.json"
    measured: list[dict[str, Any]] = []
    for way in ("h2d/pageable", "h2d/pinned", "d2h/pageable", "d2h/pinned"):
        name = f"transfers/{way}/bytes:0/manual_time"
        measured += rows(name, [1.0, 1.1], bytes_per_second=[1e9, 1e9])
    synthetic.write(path, synthetic.document(measured, {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_cli("report", path, "-o", tmp_path / "r.html")
    one_error_free_run(run)
    assert [str(w.message) for w in caught] == []
