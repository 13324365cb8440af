"""A nightly shard that stopped before writing its report: its binary crashed or hung (exit 3),
its GPU went away (4), or its job died, timed out or lost its runner (no status file, read as
2). Nothing of its part was judged, so the night could not be judged on that GPU: the `merge`
step must still write the issue's text (`report` opens or updates the GPU's one issue with it),
saying so and naming each such shard, beside any regression another shard confirmed. Before,
the run went red and no issue was opened: a GPU that stopped measuring every night went
unnoticed by anyone watching issues rather than the Actions tab. The steps run as GitHub runs
them, with test_workflow_steps.py's helpers and its stand-in `gh`."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_workflow_steps import H200, MERGE, RUN_URL, run_step, with_gh
from test_workflows_gates import merged, two_shards
from test_workflows_input import ISSUE, writes

NOT_JUDGED = "could not be judged"


def issue_of(root: Path) -> str:
    issue = root / "results" / "h200-issue.md"
    assert issue.is_file(), "no issue text: the night's failure reaches no issue"
    return issue.read_text()


@pytest.mark.parametrize("crash", [3, 4])
def test_a_shard_that_crashed_before_its_report_opens_the_issue(tmp_path: Path, crash: int) -> None:
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: crash}
    root = merged(tmp_path, statuses, {1: None})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == crash, log  # the worst shard's
    issue = issue_of(root)
    assert issue.startswith("<!-- kernelwatch:nvidia-h200-sm90 -->")
    assert NOT_JUDGED in issue and RUN_URL in issue
    assert f"- h200-shard-1: exit {crash}, no report" in issue
    assert "- h200-shard-2: exit 0;" in issue  # every shard's status, as on a regression
    assert "h200-shard-2: exit 0, no report" not in issue
    assert "REGRESSION" not in issue  # it claims none
    assert (root / "results" / "h200.json").is_file()  # the merged result is still made
    summary = (root / ".github_step_summary").read_text()
    assert NOT_JUDGED in summary and f"- h200-shard-1: exit {crash}, no report" in summary


def test_a_shard_whose_job_died_opens_the_issue(tmp_path: Path) -> None:
    """The runner was lost (or the job timed out) before the upload: no status file, no part."""
    count = two_shards()
    root = merged(tmp_path, {k: 0 for k in range(2, count + 1)}, {})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 2 and "h200-shard-1.json: cannot read" in log, log
    issue = issue_of(root)
    assert NOT_JUDGED in issue and RUN_URL in issue
    assert "- h200-shard-1: no status file (read as exit 2), no report" in issue
    assert "- h200-shard-2: exit 0;" in issue


def test_a_status_file_alone_missing_still_names_the_shard(tmp_path: Path) -> None:
    """Its result but no status file (the job killed between the two): read as exit 2."""
    count = two_shards()
    root = merged(tmp_path, {k: 0 for k in range(1, count + 1)}, {1: None})
    (root / "shards" / "h200-shard-1.status").unlink()
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 2, log
    assert "- h200-shard-1: no status file (read as exit 2), no report" in issue_of(root)


def test_a_crash_beside_a_confirmed_regression_keeps_both(tmp_path: Path) -> None:
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: 1, 2: 3}
    root = merged(tmp_path, statuses, {2: None})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 3, log
    issue = issue_of(root)
    assert NOT_JUDGED in issue and "- h200-shard-2: exit 3, no report" in issue
    assert "shard 1: 1 REGRESSION" in issue  # the regression is not dropped
    assert issue.index(NOT_JUDGED) < issue.index("shard 1: 1 REGRESSION")
    assert "h200-shard-1: exit 1, no report" not in issue


def test_a_clean_night_writes_no_issue(tmp_path: Path) -> None:
    count = two_shards()
    root = merged(tmp_path, {k: 0 for k in range(1, count + 1)}, {})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 0, log
    assert not (root / "results" / "h200-issue.md").exists()
    assert NOT_JUDGED not in (root / ".github_step_summary").read_text()


def test_a_crash_after_its_report_is_not_called_unjudged(tmp_path: Path) -> None:
    """Exit 3 with a report: its first run's verdicts stand (test_workflows_gates.py)."""
    count = two_shards()
    root = merged(tmp_path, {k: 0 for k in range(1, count + 1)} | {1: 3}, {})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 3, log
    issue = issue_of(root)
    assert "**h200-shard-1 exited 3**" in issue and NOT_JUDGED not in issue


def test_the_unjudged_night_goes_into_the_gpus_one_issue(tmp_path: Path) -> None:
    """`report` posts it as a regression's text: a comment on the GPU's open issue, found by
    its one title, or that issue opened; never a second issue of another title."""
    count = two_shards()
    root = merged(tmp_path / "merge", {k: 0 for k in range(1, count + 1)} | {1: 4}, {1: None})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 4, log
    text = issue_of(root)
    files = {"results/h200-issue.md": text}
    title = "Nightly performance regression on h200"
    listed = {"list": [{"number": 41, "title": title}]}
    for where, fixtures, posted in [
        ("open", listed, "issue comment 41 --body-file results/h200-issue.md"),
        ("none", {"list": []}, f"issue create --title {title} --label performance-regression"),
    ]:
        _, status, _, calls = with_gh(
            tmp_path / where, fixtures, "report", ISSUE, files=files, matrix={"gpu": "h200"}
        )
        assert status == 0, calls[-1]
        [write] = writes(calls[:-1])
        assert write.startswith(posted), calls


@pytest.mark.parametrize("crash", [3, 4])
def test_a_shard_without_a_report_is_not_said_to_be_judged(tmp_path: Path, crash: int) -> None:
    """docs/ci.md: the issue of a night that "could not be judged" lists every shard's exit
    status and how each was judged. A shard that crashed in its run leaves its partial result
    (no anchor in its context) and no report: its line read `exit 3; against the committed
    baseline (it holds this card)`, a verdict's wording under the issue's own "could not be
    judged", where nothing of that part was compared."""
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: crash}
    root = merged(tmp_path, statuses, {1: None})
    assert (root / "shards" / "h200-shard-1.json").is_file()  # the partial result
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == crash, log
    issue = (root / "results" / "h200-issue.md").read_text()
    shards = (root / "results" / "h200-shards.md").read_text()
    for text in (issue, shards):
        assert f"- h200-shard-1: exit {crash}; not judged: no report\n" in text, text
        assert (
            "- h200-shard-2: exit 0; against the committed baseline (it holds this card)\n" in text
        )


def test_a_report_that_is_no_text_still_reaches_the_issue(tmp_path: Path) -> None:
    """A shard's report cut inside a character (its job killed while writing it) made
    `kernelwatch comment` refuse the night's text: no issue text, so `report` opened no issue
    and the confirmed regression reached only the Actions tab."""
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: 1}
    root = merged(tmp_path, statuses, {})
    report = root / "shards" / "h200-shard-1.md"
    report.write_bytes(report.read_bytes() + "\u00e9".encode()[:1])
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 2 and "not a UTF-8 text file" in log, log
    issue = issue_of(root)
    assert "could not be made into this text" in issue and RUN_URL in issue
    assert "h200-issue-report.md in the artifact nightly-h200" in issue  # where the text is
