"""Odd and hostile input to the commands that write output for others to read: `export`
(Bencher, github-action-benchmark), `comment` and compare's Markdown, and the explanations
file `report` reads. Each output must stay readable by its consumer, each error one short line.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from conftest import result_set
from kernelwatch import render
from kernelwatch.comment import body
from kernelwatch.compare import Settings, compare
from kernelwatch.errors import InputError
from kernelwatch.explain import read_explanations
from kernelwatch.explanation import Change, Explanation, KernelChange, Moved, SassDiff
from kernelwatch.results import resolve_metric
from test_export import check_bmf, strict
from test_render import steady

LONG = "x" * 5_000


def one_short_line(err: str) -> bool:
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("kernelwatch: error:") and len(err) < 400


@pytest.mark.parametrize("form", ["bmf", "github-action-benchmark"])
def test_a_long_metric_is_shortened_in_the_error_line(run_cli, write_json, form: str) -> None:
    """`--metric <5,000 characters> --higher-is-better` was written whole into the line."""
    path = write_json("r.json", {"BM_a": [1.0, 2.0, 3.0]})
    done = run_cli("export", path, "--format", form, "--metric", LONG, "--higher-is-better")
    assert done.status == 2 and one_short_line(done.err), done.err


def test_a_long_metric_is_shortened_in_the_note(run_cli, write_json) -> None:
    name = "c" * 5_000
    path = write_json(
        "r.json",
        {"BM_a": [1.0, 2.0, 3.0], "BM_b": [1.0, 2.0, 3.0]},
        counters={"BM_a": {name: [1.0, 2.0, 3.0]}},
    )
    done = run_cli(
        "export", path, "--format", "github-action-benchmark", "--metric", name, "--lower-is-better"
    )
    assert done.status == 0 and "note: 1 of 2" in done.err
    assert len(done.err) < 600, done.err


def test_bmf_leaves_out_a_name_bencher_refuses_saying_so(run_cli, write_json) -> None:
    """Bencher takes benchmark names of 1 to 1,024 bytes (UTF-8) and refuses a whole report
    with a longer one: a 5,000-character nvbench state name lost the dashboard every benchmark."""
    long_name = "BM_" + "é" * 600  # 603 characters, 1,203 bytes
    path = write_json("r.json", {long_name: [1.0, 2.0, 3.0], "BM_ok": [1.0, 2.0, 3.0]})
    done = run_cli("export", path, "--format", "bmf")
    assert done.status == 0, done.err
    document = strict(done.out)
    check_bmf(document)
    assert list(document) == ["BM_ok"]
    assert all(len(name.encode()) <= 1024 for name in document)
    assert "1 of 2 benchmark(s) have names longer than Bencher takes" in done.err
    assert len(done.err) < 600, done.err
    # github-action-benchmark has no such limit: the benchmark is kept
    done = run_cli("export", path, "--format", "github-action-benchmark")
    assert done.status == 0 and len(strict(done.out)) == 2


@pytest.mark.parametrize("counter", ["latency", "Throughput"])
def test_bmf_keeps_a_counter_off_a_built_in_measure(run_cli, write_json, counter: str) -> None:
    """Every Bencher project has the measures latency (ns) and throughput (ops/s), found by
    slug or name: a counter so named was drawn on their axes, in their units."""
    path = write_json("r.json", {"BM_a": [1.0, 2.0, 3.0]}, counters={"BM_a": {counter: [5.0] * 3}})
    done = run_cli("export", path, "--format", "bmf", "--metric", counter, "--higher-is-better")
    assert done.status == 0, done.err
    document = strict(done.out)
    check_bmf(document)
    assert list(document["BM_a"]) == [f"{counter} (counter)"]
    assert f"the counter {counter} goes to the measure '{counter} (counter)'" in done.err
    # times still go to the built-in latency measure, without a note
    done = run_cli("export", path, "--format", "bmf")
    assert list(strict(done.out)["BM_a"]) == ["latency"] and not done.err


def test_bmf_refuses_a_measure_bencher_refuses(run_cli, write_json) -> None:
    """A counter named with more than 64 bytes went under a measure of that name, which Bencher
    refuses (its measures: 1 to 64 bytes), with the whole report."""
    counter = "m" * 65
    path = write_json("r.json", {"BM_a": [1.0, 2.0, 3.0]}, counters={"BM_a": {counter: [1.0] * 3}})
    done = run_cli("export", path, "--format", "bmf", "--metric", counter, "--higher-is-better")
    assert done.status == 2 and one_short_line(done.err), done.err
    assert "64" in done.err
    done = run_cli(
        "export",
        path,
        "--format",
        "github-action-benchmark",
        "--metric",
        counter,
        "--higher-is-better",
    )
    assert done.status == 0, done.err


HOSTILE_NAME = "<img src=https://e.x/t.png> </summary></details> `x` a|b"


@pytest.fixture(scope="module")
def explained() -> str:
    """Compare's Markdown of a benchmark explained by ncu counters and a SASS diff."""
    base = result_set({HOSTILE_NAME: steady(1000.0)})
    cont = result_set({HOSTILE_NAME: steady(1300.0, 2)})
    report = compare(base, cont, resolve_metric("time"), Settings())
    explanation = Explanation(
        KernelChange(Change.CODE, ("<b>k</b> @user",)),
        {"m|x": 1.0},
        {"m|x": 2.0},
        (Moved("m|x", 1.0, 2.0),),
        (SassDiff("k`n<i>", "a", "b", (1, 2), (("LDS", 1, 2),), (), ("-a", "+b"), 0),),
    )
    return render.render_markdown(
        dataclasses.replace(report, explanations={HOSTILE_NAME: explanation})
    )


def test_the_details_summary_shows_html_as_text(explained: str) -> None:
    """The `<details><summary>` line is raw HTML, where Markdown's backslash escapes are not
    read: `\\<img src=...\\>` was an image tag, `\\</summary\\>` a tag, on GitHub."""
    summary = next(
        line for line in explained.splitlines() if line.startswith("<details><summary>Why")
    )
    inner = summary.removeprefix("<details><summary>").removesuffix("</summary>")
    assert "<" not in inner.replace("<code>", "").replace("</code>", ""), summary
    shown = inner.replace("\u2060", "")  # (the word joiner that stops a link)
    assert "&lt;img src=https://e.x/t.png&gt;" in shown and "&lt;b&gt;k&lt;/b&gt;" in shown


def test_an_ncu_metric_cannot_break_its_table(explained: str) -> None:
    rows = [line for line in explained.splitlines() if line.startswith("| ") and "m" in line]
    row = next(line for line in rows if "x" in line and "| 1 | 2 |" in line)
    assert re.sub(r"\\\|", "", row).count("|") == 4, row  # three cells


def test_a_sass_kernel_name_is_one_code_span(explained: str) -> None:
    line = next(line for line in explained.splitlines() if line.startswith("SASS of"))
    assert line.startswith("SASS of ``k`n<i>``:"), line


@pytest.mark.parametrize("text", ["ping @octocat", "see #123", "at https://e.x/a", "www.e.x"])
def test_markdown_text_makes_no_mention_reference_or_link(text: str) -> None:
    """An error message of a benchmark is shown as text: `@octocat` in it mentioned (notified)
    that user from the bot's comment, `#123` linked an issue, a URL became a link."""
    from kernelwatch.gbench import failed_row
    from kernelwatch.loading import from_documents
    from conftest import document

    base = result_set({"BM_a": steady(1000.0)})
    cont = from_documents("c", [document(rows=[failed_row("BM_a", text)])])
    markdown = render.render_markdown(compare(base, cont, resolve_metric("time"), Settings()))
    row = next(line for line in markdown.splitlines() if line.startswith("| **ERROR**"))
    for pattern in (r"@\w", r"#\d", r"https?://\w", r"www\.\w"):
        assert not re.search(pattern, row), row
    assert text.split()[-1] in row.replace("\u2060", "").replace("\\", "")  # still shown


def test_the_heading_makes_no_mention_or_link() -> None:
    heading = body("report", "g", "GPU @octocat https://e.x/a www.e.x #5").splitlines()[1]
    for pattern in (r"@\w", r"#\d", r"https?://\w", r"www\.\w"):
        assert not re.search(pattern, heading), heading


def test_a_long_value_in_an_explanations_file_is_shortened(tmp_path: Path) -> None:
    """`report --explanations`: a counter of 5,000 characters was written whole into the line."""
    path = tmp_path / "explanations.json"
    moved = [{"metric": "m", "baseline": LONG, "contender": 1.0}]
    path.write_text(
        json.dumps(
            {"kernelwatch_explanations": 1, "benchmarks": {"a": {"counters": {"moved": moved}}}}
        )
    )
    with pytest.raises(InputError) as caught:
        read_explanations(path)
    assert len(str(caught.value)) < 400, str(caught.value)


def test_a_warning_from_a_context_value_stays_one_visible_line(run_cli, write_json) -> None:
    """compare's warnings quote context values (another driver, CUDA runtime): an escape
    sequence or a line break in a result file reached the terminal as such."""
    import conftest

    spec = {"BM_a": [1.0, 1.0, 1.0]}
    base = write_json("base.json", spec)
    odd = {**conftest.H100_CONTEXT, "gpu_driver_version": "\x1b[2J580\nforged line"}
    contender = write_json("run.json", spec, context=odd)
    done = run_cli("compare", base, contender)
    [warning] = [line for line in done.err.splitlines() if "different driver" in line]
    assert "\x1b" not in done.err and "\\x1b[2J580\\nforged line" in warning, done.err


def test_a_baseline_update_warning_stays_one_visible_line(
    run_cli, write_json, tmp_path: Path
) -> None:
    import conftest

    odd = {**conftest.H100_CONTEXT, "kernelwatch_build_type": "\x1b[2JDebug\nforged"}
    result = write_json("run.json", {"BM_a": [1.0] * 10}, context=odd)
    (tmp_path / "b").mkdir()
    done = run_cli("baseline", "update", result, "--baselines", tmp_path / "b", "--dry-run")
    [warning] = [line for line in done.err.splitlines() if "not Release" in line]
    assert "\x1b" not in done.err and "\\x1b[2JDebug\\nforged build" in warning, done.err
