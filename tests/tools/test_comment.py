"""kernelwatch comment (kernelwatch.comment): the pull-request comment's body and marker."""

from __future__ import annotations

from pathlib import Path

from conftest import GPU_DATA, H100_CONTEXT, REPO
from kernelwatch.comment import MAX_BODY, body, marker, utf16_length


def test_marker_is_one_hidden_line_per_gpu_model() -> None:
    assert marker("nvidia-h200-sm90") == "<!-- kernelwatch:nvidia-h200-sm90 -->"
    assert marker("NVIDIA H200") == "<!-- kernelwatch:nvidia-h200 -->"
    assert marker("a -- b") == "<!-- kernelwatch:a-b -->"  # no `--` inside an HTML comment


def test_body_from_a_real_compare_report(run_cli, write_json, tmp_path: Path) -> None:
    base = write_json("base.json", {"BM_a": [1.0, 1.0, 1.01, 0.99, 1.0]}, context=H100_CONTEXT)
    new = write_json("new.json", {"BM_a": [2.0, 2.0, 2.02, 1.98, 2.0]}, context=H100_CONTEXT)
    report = tmp_path / "h100.md"
    assert run_cli("compare", base, new, "--markdown", report).status == 1
    done = run_cli(
        "comment",
        report,
        "--result",
        new,
        "--commit",
        "0123456789abcdef0123",
        "--run-url",
        "https://github.com/kernelwatch/kernelwatch/actions/runs/1",
    )
    assert done.status == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "<!-- kernelwatch:nvidia-h100-80gb-hbm3-sm90 -->"
    assert lines[1] == "## kernelwatch on NVIDIA H100 80GB HBM3 (sm 9.0)"
    assert "### kernelwatch compare: 1 regression" in done.out and "BM_a" in done.out
    assert "commit `0123456789ab`" in lines[-1] and "actions/runs/1" in lines[-1]
    marker_only = run_cli("comment", report, "--result", new, "--marker-only").out
    assert marker_only == lines[0] + "\n"


def test_a_long_report_is_cut_to_fit_a_comment() -> None:
    text = body("\n".join(f"| row {i} |" for i in range(20_000)), "g", "G", "abc")
    assert len(text) <= MAX_BODY and "the job summary has all of it" in text
    assert text.startswith("<!-- kernelwatch:g -->\n")


def test_a_long_report_leaves_out_unchanged_rows_and_keeps_its_notes(
    run_cli, tmp_path: Path
) -> None:
    """The H200 suite's report (356 rows, 80 KB) was cut inside its folded SAME table: the
    comment lost the notes (the level and the priors a limit stands on, the MISSING benchmark
    to drop from the baseline) and left `<details>` open. The unchanged rows go first."""
    report = tmp_path / "h200.md"
    run = GPU_DATA / "h200-suite-rep10.json.gz"
    compared = run_cli(
        "compare", REPO / "baselines" / "nvidia-h200-sm90", run, "--markdown", report
    )
    assert compared.status == 1  # (its MISSING probe)
    markdown = report.read_text()
    assert utf16_length(markdown) > MAX_BODY
    text = body(markdown, "nvidia-h200-sm90", "NVIDIA H200", "abc")
    assert utf16_length(text) <= MAX_BODY
    lines = markdown.splitlines()
    notes = [line for line in lines if line.startswith("- ")]
    notable = [line for line in lines if line.startswith("| **") and "| **SAME** |" not in line]
    assert notes and notable
    assert all(line in text for line in [lines[0], *notable, *notes])
    assert text.count("<details>") == text.count("</details>")
    same = sum("| **SAME** |" in line for line in lines)
    left = same - text.count("| **SAME** |")
    assert left > 0 and f"{left} more row(s) left out" in text
    assert text.rstrip().endswith("</sub>")  # the footer too


def test_the_limit_is_counted_in_utf16_units_as_github_counts() -> None:
    """Rows of emoji (two UTF-16 units each) fit in 65,536 code points but not in 65,536 units:
    GitHub refused the body."""
    rows = "\n".join(f"| row {i} | \U0001f680\U0001f680\U0001f680 |" for i in range(6_000))
    text = body(rows, "g", "G", "abc")
    assert len(text.encode("utf-16-le")) // 2 == utf16_length(text) <= MAX_BODY
    assert "the job summary has all of it" in text and "\ufffd" not in text
    one_line = body("\U0001f680" * 40_000, "g", "G")  # no line to cut at: no pair split in two
    assert utf16_length(one_line) <= MAX_BODY and "\U0001f680" * 100 in one_line
    one_line.encode("utf-8")  # (a lone surrogate would not encode)


def test_the_commit_cannot_break_out_of_the_footer() -> None:
    """--commit went into `...` as given: a backtick, </sub> or a line break ended the code
    span and the footer, and Markdown or HTML of the commit's text was rendered."""
    for commit, shown in [
        ("ab`c</sub>", "``ab`c</sub>``"),
        ("`x", "`` `x ``"),
        ("a\n\n# b", "`a # b`"),
        ("0123456789abcdef", "`0123456789ab`"),
    ]:
        footer = body("report", "g", "G", commit).splitlines()[-1]
        assert footer == f"<sub>Report of commit {shown}</sub>", commit
    url = "https://x/runs/1) [evil](https://e"
    footer = body("report", "g", "G", None, url).splitlines()[-1]
    assert "(<https://x/runs/1)%20[evil](https://e>)" in footer


def test_the_gpu_name_cannot_break_out_of_the_heading(run_cli, write_json, tmp_path) -> None:
    """The GPU name (a result's context, or --gpu) went into the heading as written: a line break
    ended it, and a line `<!--` after it opened an HTML comment that hid the whole report."""
    context = {**H100_CONTEXT, "gpu_name": "NVIDIA H100\n<!--"}
    new = write_json("new.json", {"BM_a": [1.0, 1.0, 1.0]}, context=context)
    report = tmp_path / "h100.md"
    report.write_text("### kernelwatch compare: no regression\n")
    done = run_cli("comment", report, "--result", new)
    assert done.status == 0, done.err
    lines = done.out.splitlines()
    assert lines[1] == "## kernelwatch on NVIDIA H100 &lt;!-- (sm 9.0)", lines
    assert lines[3] == "### kernelwatch compare: no regression"
    heading = body("report", "g", "x --> <b>y</b>").splitlines()[1]
    assert heading == "## kernelwatch on x --&gt; &lt;b&gt;y&lt;/b&gt;"


def test_bad_input_is_one_line(run_cli, tmp_path: Path) -> None:
    done = run_cli("comment", tmp_path / "none.md", "--gpu", "x")
    assert done.status == 2 and done.err.startswith("kernelwatch: error:")
    done = run_cli("comment", tmp_path / "none.md")
    assert done.status == 2 and "--gpu" in done.err


def test_gpu_names_the_marker_that_result_gives(run_cli, write_json, tmp_path: Path) -> None:
    """--help's example was `--gpu "NVIDIA H200" --marker-only`: nvidia-h200, a marker no comment
    made with --result carries (nvidia-h200-sm90), so the workflow would never find it."""
    new = write_json("new.json", {"BM_a": [1.0, 1.0, 1.0]}, context=H100_CONTEXT)
    report = tmp_path / "h100.md"
    report.write_text("### kernelwatch compare: no regression\n")
    from_result = run_cli("comment", report, "--result", new, "--marker-only").out
    slug = run_cli("comment", report, "--gpu", "nvidia-h100-80gb-hbm3-sm90", "--marker-only")
    assert slug.status == 0 and slug.out == from_result and slug.err == ""
    name = run_cli("comment", report, "--gpu", "NVIDIA H100 80GB HBM3", "--marker-only")
    assert name.status == 0 and name.out != from_result
    assert "not a baseline slug" in name.err and "kernelwatch baseline list" in name.err
    both = run_cli("comment", report, "--gpu", "x", "--result", new)
    assert both.status == 2 and both.err.startswith("kernelwatch: error:") and "--gpu" in both.err


def test_markdown_in_the_gpu_name_is_shown_as_written() -> None:
    """The heading escaped HTML only: a GPU name's `*`, `_`, backticks or `[...](...)` were
    rendered as emphasis, code or a link, and a closing ` #` was dropped as the heading's end."""
    heading = body("report", "g", "A *b* _c_ `d` [e](https://f) \\ ~g~ #").splitlines()[1]
    assert (
        heading == "## kernelwatch on A \\*b\\* \\_c\\_ \\`d\\` \\[e\\](https://f) \\\\ \\~g\\~ \\#"
    )


def test_an_empty_report_is_refused(run_cli, tmp_path: Path) -> None:
    """An empty REPORT.md (a report that was never written) made a comment of a heading alone,
    posted over the last real report of the pull request."""
    out = tmp_path / "body.md"
    for text in ("", " \n\n\t\n"):
        report = tmp_path / "r.md"
        report.write_text(text)
        done = run_cli("comment", report, "--gpu", "g", "-o", out)
        assert done.status == 2 and len(done.err.splitlines()) == 1, done.err
        assert done.err.startswith(f"kernelwatch: error: {report}: empty") and not out.exists()
    marker_only = run_cli("comment", report, "--gpu", "g", "--marker-only")  # (not read)
    assert marker_only.status == 0 and marker_only.out == "<!-- kernelwatch:g -->\n"


def test_a_blank_commit_is_no_empty_code_span() -> None:
    """--commit was cut to 12 characters before its blanks were folded: a blank one, or one
    after 12 line breaks, showed as ``, an empty code span GitHub shows as two backticks."""
    assert "commit" not in body("report", "g", "G", " \n ").splitlines()[-1]
    footer = body("report", "g", "G", "\n" * 12 + "0123456789abcdef").splitlines()[-1]
    assert footer == "<sub>Report of commit `0123456789ab`</sub>"


def test_json_nested_past_the_parsers_depth_is_refused_as_json(run_cli, tmp_path: Path) -> None:
    """Given as REPORT.md, it stopped `comment` with an internal RecursionError (an audit)."""
    deep = tmp_path / "deep.md"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    done = run_cli("comment", deep, "--gpu", "nvidia-h200-sm90")
    assert done.status == 2 and done.out == ""
    assert done.err == (
        f"kernelwatch: error: {deep}: a JSON file, not the Markdown report: give the file that "
        "compare or run wrote with --markdown\n"
    )
