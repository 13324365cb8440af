"""The workflows' steps on the inputs that go wrong in practice: a GitHub API error in the middle
of a step, and the like. Each step is run as GitHub runs it (`bash -e`, no pipefail: a `run:`
without `shell:`), with test_workflow_steps.py's helpers and its stand-in `gh`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from test_workflow_steps import MARKER, WORKFLOWS, run_step, with_gh

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the workflows")


def gh_step(
    tmp_path: Path,
    workflow: str,
    job: str,
    step: str,
    fixtures: dict[str, Any],
    files: dict[str, str] | None = None,
    matrix: dict[str, str] | None = None,
    contexts: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, list[str], str]:
    """Run one step with the stand-in gh answering from `fixtures` (a path it lacks: HTTP 502)
    in a workspace holding `files`: (exit status, gh's calls, the step's log)."""
    _, status, _, calls = with_gh(
        tmp_path, fixtures, job, step, WORKFLOWS / workflow, contexts, env, files, matrix
    )
    return status, calls[:-1], calls[-1]


def writes(calls: list[str]) -> list[str]:
    """gh's calls that change something on GitHub."""
    return [
        c
        for c in calls
        if "--method" in c or c.startswith(("issue create", "issue comment", "pr create"))
    ]


# --- an API error while looking for what was posted before -----------------------------------

POST = "Post it, or update the one posted before"
COMMENTS = "repos/o/r/issues/5/comments"
PR_CONTEXTS = {"github.token": "t", "github.event.pull_request.number": "5"}


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_an_api_error_listing_the_comments_posts_no_second_comment(
    tmp_path: Path, workflow: str
) -> None:
    """The step looks up the comment it posted before with `gh api ... | head -n 1`. A `run:`
    without `shell:` is `bash -e` without pipefail, so an HTTP error of the listing left the
    number empty and the step POSTed a second comment (and passed): every failed lookup added
    one more copy of the report to the pull request. The lookup's error must fail the step
    before anything is written."""
    status, calls, log = gh_step(
        tmp_path, workflow, "comment", POST, {}, contexts=PR_CONTEXTS, env={"MARKER": MARKER}
    )
    assert status != 0, log
    assert writes(calls) == [], calls


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_the_comment_posted_before_is_still_updated(tmp_path: Path, workflow: str) -> None:
    """Two comments of the bot with the marker (the second from a race of two runs): the first
    is updated, as before."""
    ours = [
        {"id": n, "user": {"login": "github-actions[bot]"}, "body": MARKER + "\nold"}
        for n in (12, 14)
    ]
    status, calls, log = gh_step(
        tmp_path,
        workflow,
        "comment",
        POST,
        {COMMENTS: ours},
        contexts=PR_CONTEXTS,
        env={"MARKER": MARKER},
    )
    assert status == 0, log
    assert writes(calls) == [
        "api --method PATCH repos/o/r/issues/comments/12 -F body=@results/comment.md"
    ]


ISSUE = "Open or update the issue for this GPU"
CHANGES_ISSUE = "Open or update the change-point issue"
RUN_URL = {"github.server_url": "https://github.com", "github.repository": "o/r"}


def issue_step(tmp_path: Path, step: str, fixtures: dict[str, Any]) -> tuple[int, list[str], str]:
    """nightly.yml's `report` (for the H200, a regression confirmed) or `changes-report` step."""
    if step == ISSUE:
        return gh_step(
            tmp_path,
            "nightly.yml",
            "report",
            ISSUE,
            fixtures,
            files={"results/h200-issue.md": "<!-- kernelwatch:nvidia-h200-sm90 -->\n# slower\n"},
            matrix={"gpu": "h200"},
        )
    return gh_step(
        tmp_path,
        "nightly.yml",
        "changes-report",
        CHANGES_ISSUE,
        fixtures,
        files={"results/changes.txt": "REGRESSION ...\n"},
        contexts=RUN_URL,
    )


@pytest.mark.parametrize("step", [ISSUE, CHANGES_ISSUE])
def test_an_api_error_listing_the_issues_opens_no_second_issue(tmp_path: Path, step: str) -> None:
    """`gh issue list ... | head -n 1`: an HTTP error of the listing opened a new issue beside
    the open one, each night the API failed (the step passed)."""
    status, calls, log = issue_step(tmp_path, step, {})
    assert status != 0, log
    assert writes(calls) == [], calls


@pytest.mark.parametrize("step", [ISSUE, CHANGES_ISSUE])
def test_the_open_issue_is_still_commented_on(tmp_path: Path, step: str) -> None:
    title = (
        "Nightly performance regression on h200"
        if step == ISSUE
        else "Nightly history: performance change points"
    )
    listed = [{"number": 41, "title": title}, {"number": 40, "title": title}]
    status, calls, log = issue_step(tmp_path, step, {"list": listed})
    assert status == 0, log
    [write] = writes(calls)
    assert write.startswith("issue comment 41 --body-file"), calls


# --- the baseline pull request holds the folder the pool wrote, and nothing else ----------------

PROPOSE = "Open a pull request with the new baseline"
GH_CREATES = """#!/bin/sh
[ "$2" = view ] && exit 1
printf '%s\\n' "$@"
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def test_the_baseline_pull_request_drops_what_the_update_dropped(tmp_path: Path) -> None:
    """A model whose committed baseline is uncompressed (made by hand with `baseline update`,
    whose default is result.json): the pool's `baseline update --compress` writes result.json.gz
    and removes result.json, but `propose` downloaded the pool's folder over its own checkout,
    so the old result.json stayed and went into the pull request beside the new one: a baseline
    folder that no run wrote (the stale, uncompressed result committed again). The pull
    request's folder must be exactly the pool's."""
    document = yaml.safe_load((WORKFLOWS / "baseline.yml").read_text())
    steps = document["jobs"]["propose"]["steps"]
    folder = "nvidia-b200-sm100"
    origin, root, bin_dir = tmp_path / "origin.git", tmp_path / "checkout", tmp_path / "bin"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(root)], check=True, capture_output=True)
    committed = root / "baselines" / folder
    committed.mkdir(parents=True)
    for name in ("result.json", "manifest.json", "noise.json"):
        (committed / name).write_text(f"{name} as committed\n")
    (root / "baselines" / "README.md").write_text("the baselines\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "committed")
    git(root, "push", "-q", "origin", "HEAD:main")
    # What the pool uploaded (baseline-<gpu>: its whole baselines/ folder).
    pooled = tmp_path / "artifact"
    (pooled / folder).mkdir(parents=True)
    (pooled / folder / "result.json.gz").write_text("pooled result\n")
    (pooled / folder / "manifest.json").write_text("{}\n")
    (pooled / folder / "noise.json").write_text('{"cards": 3, "hosts": 2}\n')
    (pooled / "README.md").write_text("the baselines\n")
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_CREATES)
    (bin_dir / "gh").chmod(0o755)
    contexts = {
        "inputs.gpu": "b200",
        "inputs.runs": "3",
        "github.event.repository.default_branch": "main",
        "needs.pool.outputs.folder": folder,
        "needs.plan.outputs.baseline": folder,
    }
    # The job's steps in order: checkout (done above), each run step, the download as
    # download-artifact does it (files written over the path, nothing removed).
    for step in steps:
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/download-artifact@"):
            assert step["with"]["path"] == "baselines/"
            shutil.copytree(pooled, root / "baselines", dirs_exist_ok=True)
        elif "run" in step:
            status, _, log = run_step(
                "propose",
                step["name"],
                root,
                contexts=contexts,
                path=str(bin_dir),
                workflow=WORKFLOWS / "baseline.yml",
            )
            assert status == 0, log
    branch = "baseline/b200-7"
    listed = git(root, "ls-tree", "-r", "--name-only", f"origin/{branch}", "baselines/")
    assert listed.split() == [
        "baselines/README.md",
        f"baselines/{folder}/manifest.json",
        f"baselines/{folder}/noise.json",
        f"baselines/{folder}/result.json.gz",
    ]
    shown = git(root, "show", f"origin/{branch}:baselines/{folder}/result.json.gz")
    assert shown == "pooled result\n"


def test_no_folder_from_the_pool_touches_no_baseline(tmp_path: Path) -> None:
    """The step that clears the model's folder before the download must never clear baselines/
    itself (an empty folder output)."""
    steps = yaml.safe_load((WORKFLOWS / "baseline.yml").read_text())["jobs"]["propose"]["steps"]
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "baselines", root / "baselines")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "committed")
    ran = 0
    for step in steps:
        if "run" in step and step["name"] != PROPOSE:
            ran += 1
            status, _, log = run_step(
                "propose",
                step["name"],
                root,
                contexts={"needs.pool.outputs.folder": ""},
                workflow=WORKFLOWS / "baseline.yml",
            )
            assert status != 0, log
    assert ran == 1
    assert git(root, "status", "--porcelain", "--", "baselines") == ""
