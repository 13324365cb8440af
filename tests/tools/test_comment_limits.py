"""kernelwatch comment within GitHub's limit whatever it is given: the fixed parts (the heading's
GPU name, the run's URL) shortened, saying so; the report cut where it leaves nothing open;
refused, one line and exit 2 (bad input), only where the marker itself leaves no room."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernelwatch.comment import MAX_BODY, body, marker, utf16_length
from kernelwatch.errors import InputError

REPORT = "### kernelwatch compare: 1 regression\n\n" + "\n".join(
    f"| **SLOWER** | `BM_{i}` | +1% |" for i in range(6_000)
)


@pytest.mark.parametrize(
    "gpu_title, run_url, said",
    [
        ("G" * 70_000, None, "cut from 70,000 characters"),
        ("<&" * 20_000, None, "cut from 40,000 characters"),  # (escaped: 4 and 5 characters)
        ("\U0001f680" * 40_000, None, "cut from 80,000 characters"),  # (UTF-16: 2 units each)
        ("G", "https://github.com/o/r/actions/runs/" + "1" * 70_000, "URL is 70,036 characters"),
        ("G", "https://x/" + "\u00e9 " * 15_000, "URL is 135,010 characters"),  # %C3%A9%20
    ],
    ids=["name", "name of markup", "name of emoji", "url", "url quoted"],
)
def test_a_huge_gpu_name_or_run_url_is_shortened_saying_so(
    gpu_title: str, run_url: str | None, said: str
) -> None:
    """A GPU name or run URL longer than a comment left the report a negative room: the body
    went past the limit (the report then cut from its end), and GitHub refused it."""
    for report in (REPORT, "### kernelwatch compare: no regression"):
        text = body(report, "nvidia-h100-sm90", gpu_title, "0123456789abcdef", run_url)
        assert utf16_length(text) <= MAX_BODY, (utf16_length(text), said)
        lines = text.splitlines()
        assert lines[0] == marker("nvidia-h100-sm90") and lines[1].startswith("## kernelwatch on")
        assert said in text and "### kernelwatch compare: " in text
        assert lines[-1].startswith("<sub>Report of commit `0123456789ab`")
        text.encode("utf-8")  # (no pair split in two)


def test_a_marker_no_comment_can_hold_is_refused_in_one_line(run_cli, tmp_path: Path) -> None:
    """The marker is how the workflow finds the comment again (--marker-only): it cannot be
    shortened, so a --gpu of 70,000 characters is refused as bad input, and -o is left as it was."""
    with pytest.raises(InputError):
        body("report", "g" * 70_000, "G")
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    out = tmp_path / "body.md"
    out.write_text("the comment before\n")
    done = run_cli("comment", report, "--gpu", "g" * 70_000, "--commit", "abc", "-o", out)
    assert done.status == 2 and len(done.err.splitlines()) == 1, done.err
    assert done.err.startswith("kernelwatch: error:") and "internal error" not in done.err
    assert "--gpu" in done.err and len(done.err) < 400
    assert out.read_text() == "the comment before\n"
    assert sorted(os.listdir(tmp_path)) == ["body.md", "r.md"]  # (no temporary file left)
    # --marker-only prints the marker the workflow looks for: none that no comment can hold
    done = run_cli("comment", report, "--gpu", "g" * 70_000, "--marker-only")
    assert done.status == 2 and done.out == "" and len(done.err.splitlines()) == 1, done.err
    assert "no comment can hold it" in done.err and len(done.err) < 400
    help_text = run_cli("comment", "--help").out
    assert "no comment can hold the body" in " ".join(help_text.split())
    assert "its first 12 characters" in " ".join(help_text.split())  # (--commit: as shown)


def test_a_cut_inside_a_code_block_or_details_closes_them() -> None:
    """Cut at a line inside the SASS diff of a folded explanation (a ```diff block in
    `<details>`), the line saying it was cut and the footer were shown as diff text, folded."""
    diff = "\n".join(f"+ IMAD R{i}, R{i}, 0x{i:x}" for i in range(8_000))
    report = (
        "### kernelwatch compare: 1 regression\n\n| **REGRESSION** | `BM_a` |\n\n"
        "<details><summary>Why <code>BM_a</code> (REGRESSION)</summary>\n\n"
        f"SASS of `k`: 1→2 instructions\n\n```diff\n{diff}\n```\n\n</details>\n"
    )
    text = body(report, "g", "G", "abc")
    assert utf16_length(text) <= MAX_BODY
    lines = text.splitlines()
    assert sum(line.startswith("```") for line in lines) % 2 == 0
    assert text.count("<details>") == text.count("</details>")
    cut = next(i for i, line in enumerate(lines) if line.startswith("*(cut here"))
    assert lines.index("</details>") < cut and lines[-1].startswith("<sub>")


def test_what_is_written_is_what_was_counted(run_cli, tmp_path: Path) -> None:
    """A name that is not UTF-8 (--gpu, a lone surrogate from the command line) counted one
    unit per byte, and was written as `\\xff`, four: the file went past the limit."""
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    out = tmp_path / "body.md"
    done = run_cli("comment", report, "--gpu", "\udcff" * 190, "-o", out)
    assert done.status == 0, done.err
    written = out.read_text(encoding="utf-8")
    assert utf16_length(written) <= MAX_BODY and "\\xff" in written.splitlines()[1]


def test_a_long_gpu_that_is_no_slug_is_warned_about_in_one_short_line(run_cli, tmp_path) -> None:
    """The warning that --gpu is no baseline slug printed the value and its marker whole: two
    copies of a 60,000-character --gpu on stderr."""
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    done = run_cli("comment", report, "--gpu", "G" * 60_000, "--marker-only")
    assert done.status == 0 and done.out == marker("g" * 60_000) + "\n"
    assert len(done.err.splitlines()) == 1 and len(done.err) < 600, done.err[:300]
    assert "is not a baseline slug" in done.err and "(60,002 characters)" in done.err
