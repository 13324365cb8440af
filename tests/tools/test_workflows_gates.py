"""What decides whether a workflow's later job or step runs at all: the jobs' `needs`/`if` after a
refused `plan`, the shards' exit statuses that make the nightly's issue, and the identity the
pull-request comment is found by. The steps run as GitHub runs them, with test_workflow_steps.py's
helpers and its stand-in `gh`; the jobs' `if`s are read as GitHub reads them (below)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from test_workflow_steps import (
    COMMENTS,
    DEFAULT_BRANCH,
    H200,
    MARKER,
    MERGE,
    POST,
    WORKFLOWS,
    comment,
    posting,
    run_step,
    shard_artifacts,
    shard_count,
    workspace,
)
from test_workflows_input import PR_CONTEXTS, writes

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the workflows")

# --- the jobs' `if`s, as GitHub evaluates them ------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\)|,)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))"
)
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")


class Expression:
    """A job's `if` (`${{ }}` or bare): strings, context names, `! && || == !=`, parentheses and
    the status functions; `&&` and `||` give an operand, as GitHub's do. What it names but the
    contexts lack is '' (a skipped job's outputs)."""

    def __init__(self, text: str, values: dict[str, str], statuses: dict[str, bool]) -> None:
        text = text.strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2]
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while text[position:].strip():
            match = TOKEN.match(text, position)
            assert match, f"cannot read {text[position:]!r}"
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.values, self.statuses, self.at = values, statuses, 0

    def value(self) -> Any:
        result = self.either()
        assert self.at == len(self.tokens), self.tokens[self.at :]
        return result

    def take(self, op: str) -> bool:
        if self.at < len(self.tokens) and self.tokens[self.at] == ("op", op):
            self.at += 1
            return True
        return False

    def either(self) -> Any:
        left = self.both()
        while self.take("||"):
            right = self.both()
            left = left or right
        return left

    def both(self) -> Any:
        left = self.compared()
        while self.take("&&"):
            right = self.compared()
            left = left and right
        return left

    def compared(self) -> Any:
        left = self.unary()
        if self.take("=="):
            return left == self.unary()
        if self.take("!="):
            return left != self.unary()
        return left

    def unary(self) -> Any:
        if self.take("!"):
            return not self.unary()
        if self.take("("):
            inner = self.either()
            assert self.take(")")
            return inner
        kind, text = self.tokens[self.at]
        self.at += 1
        if kind == "string":
            return text[1:-1].replace("''", "'")
        assert kind == "name", text
        if self.take("("):
            assert self.take(")") and text in STATUS_FUNCTIONS, text
            return self.statuses[text]
        return self.values.get(text, "")


def job_results(
    workflow: str,
    results: dict[str, str],
    outputs: dict[str, dict[str, str]],
    github: dict[str, str] | None = None,
) -> dict[str, str]:
    """Which jobs of a workflow run: each job's result, `results`' where it runs (default
    success), `skipped` where its `if` is false. A job without a status function in its `if`
    runs only when every job before it succeeded (GitHub's implicit `success() &&`); `failure()`
    is any earlier job's failure, the jobs it needs through others included."""
    jobs = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"]

    def needs(name: str) -> list[str]:
        given = jobs[name].get("needs", [])
        return [given] if isinstance(given, str) else list(given)

    def ancestors(name: str) -> set[str]:
        found = set(needs(name))
        for parent in needs(name):
            found |= ancestors(parent)
        return found

    done: dict[str, str] = {}
    while len(done) < len(jobs):
        for name, job in jobs.items():
            if name in done or any(parent not in done for parent in needs(name)):
                continue
            before = [done[parent] for parent in ancestors(name)]
            statuses = {
                "success": all(result == "success" for result in before),
                "failure": "failure" in before,
                "always": True,
                "cancelled": False,
            }
            values = {f"github.{key}": value for key, value in (github or {}).items()}
            for parent in needs(name):
                values[f"needs.{parent}.result"] = done[parent]
                if done[parent] != "skipped":
                    for key, value in outputs.get(parent, {}).items():
                        values[f"needs.{parent}.outputs.{key}"] = value
            condition = str(job.get("if", "success()"))
            if not any(f"{function}()" in condition for function in STATUS_FUNCTIONS):
                condition = f"success() && ({condition})"
            runs = Expression(condition, values, statuses).value()
            done[name] = results.get(name, "success") if runs else "skipped"
    return done


MODELS = '[{"gpu":"h200","baseline":"nvidia-h200-sm90","shards":2}]'
PLANNED = {"plan": {"models": MODELS, "shards": "[...]", "pull-requests": MODELS}}
A_HAND_START = {
    "event_name": "workflow_dispatch",
    "event.repository.default_branch": "main",
    "workflow": "nightly",
}


@pytest.mark.parametrize("workflow", ["nightly", "baseline"])
def test_a_refused_hand_start_runs_no_later_job(tmp_path: Path, workflow: str) -> None:
    """nightly.yml's `history` needed only `merge` and ran on `!cancelled()`: when `plan` refused a
    hand start from another branch (exit 2), merge was skipped and history still ran, the other
    branch's code fetching the history, ingesting and uploading it. A refused run runs nothing."""
    contexts = {
        "github.ref": "refs/heads/feature",
        "github.event.repository.default_branch": "main",
        "github.workflow": workflow,
    }
    status, _, log = run_step(
        "plan", DEFAULT_BRANCH, tmp_path, contexts=contexts, workflow=WORKFLOWS / f"{workflow}.yml"
    )
    assert status == 2, log  # the refusal fails `plan`, which then has no outputs
    github = {**A_HAND_START, "ref": "refs/heads/feature"}
    done = job_results(f"{workflow}.yml", {"plan": "failure"}, {}, github)
    ran = {name: result for name, result in done.items() if result != "skipped"}
    assert ran == {"plan": "failure"}, done


@pytest.mark.parametrize("workflow", ["nightly.yml", "baseline.yml", "gpu.yml"])
def test_a_failed_plan_runs_no_later_job(workflow: str) -> None:
    """A malformed list of models fails `plan` the same way (one line, exit 2)."""
    done = job_results(workflow, {"plan": "failure"}, {}, {"event_name": "schedule"})
    assert {name for name, result in done.items() if result != "skipped"} == {"plan"}, done


@pytest.mark.parametrize(
    "suite, merge",
    [("success", "success"), ("failure", "failure"), ("failure", "success")],
    ids=["clean", "regression", "a shard failed but merged clean"],
)
def test_the_history_still_follows_every_merge(suite: str, merge: str) -> None:
    """A regression is history too: after a planned night the history job runs whatever the
    merges' verdict, and only a failed one (a regression, a crash, a dead shard) reaches the
    issue writer; a change point (history's status 1) reaches the other."""
    results = {"suite": suite, "merge": merge, "history": "failure"}
    outputs = {**PLANNED, "history": {"status": "1"}}
    done = job_results("nightly.yml", results, outputs, {"event_name": "schedule"})
    assert done["merge"] == merge and done["history"] == "failure"
    assert (done["report"] != "skipped") == ("failure" in (suite, merge)), done
    assert done["changes-report"] == "success"


def test_a_night_without_a_model_only_renews_the_history() -> None:
    """No model enabled at night: empty matrices, whose jobs skip (an empty matrix is an error
    on GitHub); the history job still runs, ingesting nothing, so that its upload renews the
    artifact, which would else expire after 90 such nights (docs/ci.md)."""
    outputs = {"plan": {"models": "[]", "shards": "[]"}}
    done = job_results("nightly.yml", {}, outputs, {"event_name": "schedule"})
    ran = {name for name, result in done.items() if result != "skipped"}
    assert ran == {"plan", "history"}, done


# --- the nightly's issue: a shard's regressions whatever else went wrong -----------------------

CRASHED_REPORT = """\
### kernelwatch run: 1 regression, 1 crashed

**Geomean change +0.4% over 178 benchmarks: 1 REGRESSION, 177 SAME**

| Verdict | Benchmark | Baseline | Contender | Change | CI | q | Catches | Why |
|:--|:--|--:|--:|--:|:-:|--:|--:|:--|
| **REGRESSION** | `transpose/naive_32/n:4096/manual_time` | 41.02 us | 47.21 us | +15.1% \
| \\[+14.2%, +16.0%\\] | 0.0001 | +1.2% | not confirmed either way: re-run 1 crashed: \
kernelwatch_bench_transpose exited 3 (CUDA context lost); first run +15.1% past +1.0% |
"""


def two_shards() -> int:
    count = shard_count()
    if count < 2:
        pytest.skip("the H200 has 1 shard: no shard beside another")
    return count


def merged(tmp_path: Path, statuses: dict[int, int], reports: dict[int, str | None]) -> Path:
    """The merge step on the H200's shards of these exit statuses, shard K's report replaced by
    `reports[K]` (None: it wrote none); the workspace."""
    root = workspace(tmp_path)
    shard_artifacts(root / "shards", "h200", statuses, two_shards())
    for k, text in reports.items():
        report = root / "shards" / f"h200-shard-{k}.md"
        if text is None:
            report.unlink()
        else:
            report.write_text(text)
    return root


@pytest.mark.parametrize("crash", [3, 4])
def test_a_shard_that_crashed_after_its_report_still_opens_the_issue(
    tmp_path: Path, crash: int
) -> None:
    """A confirming re-run that crashes (or loses the GPU) after the first run found a
    regression: `run` writes its report, the regression standing, and exits 3 (4). Only a
    shard's exit 1 made the issue's text, so the regression went into no issue at all."""
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: crash}
    root = merged(tmp_path, statuses, {1: CRASHED_REPORT})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == crash, log
    issue = (root / "results" / "h200-issue.md").read_text()
    assert "| **REGRESSION** | `transpose/naive_32/n:4096/manual_time` |" in issue
    assert f"- h200-shard-1: exit {crash};" in issue  # the crash, beside the regression
    assert f"**h200-shard-1 exited {crash}**" in issue
    assert "- h200-shard-2: exit 0;" in issue


def test_a_regression_beside_a_crashed_shard_names_the_crash(tmp_path: Path) -> None:
    """Shard 1 confirmed a regression, shard 2's binary crashed (its partial result, no report):
    the issue held shard 1's report alone, and read as if the night had run whole."""
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: 1, 2: 3}
    root = merged(tmp_path, statuses, {2: None})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 3, log
    issue = (root / "results" / "h200-issue.md").read_text()
    assert "shard 1: 1 REGRESSION" in issue
    assert "- h200-shard-2: exit 3;" in issue and "- h200-shard-1: exit 1;" in issue
    assert "h200-shard-2 exited" not in issue  # no report of its own to introduce


def test_a_crash_without_a_report_claims_no_regression(tmp_path: Path) -> None:
    """Nothing was judged (the binary crashed in the run itself): the job fails with 3, and the
    issue says the night could not be judged (test_workflows_crashed_shards.py), claiming no
    regression."""
    count = two_shards()
    statuses = {k: 0 for k in range(1, count + 1)} | {1: 3}
    root = merged(tmp_path, statuses, {1: None})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 3, log
    issue = (root / "results" / "h200-issue.md").read_text()
    assert "could not be judged" in issue and "REGRESSION" not in issue


# --- the pull-request comment: whose it is, when /user fails for a moment ----------------------

OWN_TOKEN = "GH_TOKEN: ${{ github.token }}"


def with_personal_token(tmp_path: Path, workflow: str) -> Path:
    """The workflow as an adopter changes it to post with a personal access token (another
    identity than github-actions[bot], which /user names)."""
    text = (WORKFLOWS / workflow).read_text()
    assert text.count(OWN_TOKEN) == 1, workflow  # the posting step's, alone
    copy = tmp_path / workflow
    copy.write_text(text.replace(OWN_TOKEN, "GH_TOKEN: ${{ secrets.COMMENT_TOKEN }}"))
    return copy


def user_lookups(calls: list[str]) -> int:
    return sum(call == "api user --jq .login" for call in calls)


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_a_failed_user_lookup_posts_no_second_comment(tmp_path: Path, workflow: str) -> None:
    """With a personal access token the comment is that user's; a failed `gh api user` (HTTP
    502) was taken for GITHUB_TOKEN's refusal, so the step looked for github-actions[bot]'s
    comment, found none and posted the report a second time. The lookup is retried, then the
    step fails with one line, nothing posted."""
    fixtures = {COMMENTS: [comment("mallory", 11), comment("kw-bot", 13)]}  # no "user$": 502
    status, calls = posting(
        tmp_path,
        fixtures,
        with_personal_token(tmp_path, workflow),
        {"secrets.COMMENT_TOKEN": "pat"},
    )
    log = calls.pop()
    assert status != 0 and writes(calls) == [], calls
    assert user_lookups(calls) == 3
    assert (
        log.startswith("kernelwatch: error: gh api user failed 3 times: ") and log.count("\n") == 1
    ), log


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_the_workflows_own_token_asks_once(tmp_path: Path, workflow: str) -> None:
    """GITHUB_TOKEN may never read /user: its comment is github-actions[bot]'s, at once."""
    fixtures = {COMMENTS: [comment("github-actions[bot]", 12)]}
    status, calls = posting(tmp_path, fixtures, WORKFLOWS / workflow)
    log = calls.pop()
    assert status == 0, log
    assert user_lookups(calls) == 1
    assert writes(calls) == [
        "api --method PATCH repos/o/r/issues/comments/12 -F body=@results/comment.md"
    ]


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_a_github_apps_token_posts_as_the_bot_named_by_hand(tmp_path: Path, workflow: str) -> None:
    """A GitHub App's installation token can read no /user: the step failed three lookups and
    posted nothing, on every push. With POSTER set to the App's bot it is not asked, and the
    comment of that bot is updated."""
    copy = with_personal_token(tmp_path, workflow)
    text = copy.read_text()
    assert text.count("POSTER: github-actions[bot]") == 1
    copy.write_text(text.replace("POSTER: github-actions[bot]", "POSTER: kw-app[bot]"))
    fixtures = {COMMENTS: [comment("mallory", 11), comment("kw-app[bot]", 14)]}  # /user: 403
    status, calls = posting(tmp_path, fixtures, copy, {"secrets.COMMENT_TOKEN": "app"})
    log = calls.pop()
    assert status == 0, log
    assert user_lookups(calls) == 0
    assert writes(calls) == [
        "api --method PATCH repos/o/r/issues/comments/14 -F body=@results/comment.md"
    ]


# gh whose /user fails once, then names kw-bot; the listing answers from COMMENTS_FILE with jq.
FLAKY_GH = """#!/bin/bash
echo "$*" >> "{log}"
if [ "$*" = "api user --jq .login" ]; then
  [ -e "{once}" ] && {{ echo kw-bot; exit 0; }}
  touch "{once}"; echo "gh: HTTP 502: Bad Gateway (user)" >&2; exit 1
fi
[ "$2" = --paginate ] && exec jq -r "$5" "{comments}"
exit 0
"""


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_a_user_lookup_that_fails_once_updates_the_comment(
    tmp_path: Path, workflow: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (tools/kw setup installs it): it stands in for gh's --jq")
    root = workspace(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    listed = tmp_path / "comments.json"
    listed.write_text(json.dumps([comment("mallory", 11), comment("kw-bot", 13)]))
    log = tmp_path / "gh.log"
    text = FLAKY_GH.format(log=log, once=tmp_path / "once", comments=listed)
    (bin_dir / "gh").write_text(text)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("MARKER", MARKER)
    status, _, output = run_step(
        "comment",
        POST,
        root,
        path=str(bin_dir),
        contexts={**PR_CONTEXTS, "secrets.COMMENT_TOKEN": "pat"},
        workflow=with_personal_token(tmp_path, workflow),
    )
    assert status == 0, output
    calls = log.read_text().splitlines()
    assert user_lookups(calls) == 2
    assert writes(calls) == [
        "api --method PATCH repos/o/r/issues/comments/13 -F body=@results/comment.md"
    ]


# --- the pull request's comment when the suite made no report --------------------------------


def test_a_push_without_a_report_replaces_the_earlier_comment(tmp_path: Path) -> None:
    """The suite crashed (or hung, or lost its runner) before comparing: the comment job said
    "no report" and posted nothing, so the comment of an earlier push, its verdicts and all,
    stood for this one. It now says that this push has no report, under the same marker that
    a report of this model's result gives, so the earlier comment is updated."""
    root = workspace(tmp_path)
    status, _, log = run_step(
        "comment",
        "Build the comment",
        root,
        matrix={"gpu": "h200", "baseline": "nvidia-h200-sm90"},
        contexts={"github.event.pull_request.head.sha": "c0ffee" * 6 + "c0ff"},
        workflow=WORKFLOWS / "gpu.yml",
    )
    assert status == 0, log
    assert (root / ".github_env").read_text() == f"MARKER={MARKER}\n"  # a result's (H200)
    body = (root / "results" / "comment.md").read_text()
    assert body.startswith(f"{MARKER}\n")
    assert "**No report for this push**" in body and "c0ffeec0" in body
    assert "do not hold for this one" in body
