"""The workflows' steps run as GitHub runs them (`bash -e`, the step's env, $GITHUB_OUTPUT), on real
result files, in a scratch workspace: what actionlint cannot see (which files a step reads and
writes, its exit status, what a re-run does). `gh` is a stand-in that answers from fixtures."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import GPU_DATA, REPO
from kernelwatch import history
from kernelwatch import merge as shards
from kernelwatch.gbench import read_json

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the workflows")

WORKFLOWS = REPO / ".github" / "workflows"
NIGHTLY = WORKFLOWS / "nightly.yml"
GPUS = REPO / ".github" / "kernelwatch-gpus.json"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
RUN_URL = "https://github.com/o/r/actions/runs/7"
CONTEXTS = {
    "github.server_url": "https://github.com",
    "github.repository": "o/r",
    "github.run_id": "7",
    "secrets.GITHUB_TOKEN": "token",
}


def workspace(tmp_path: Path) -> Path:
    """A checkout, as far as the hosted jobs read it: tools/ and baselines/ (read-only use)."""
    root = tmp_path / "checkout"
    root.mkdir(parents=True)
    for name in ("tools", "baselines"):
        (root / name).symlink_to(REPO / name)
    return root


def run_step(
    job: str,
    name: str,
    cwd: Path,
    matrix: dict[str, str] | None = None,
    path: str | None = None,
    contexts: dict[str, str] | None = None,
    workflow: Path = NIGHTLY,
) -> tuple[int, str, str]:
    """Run one step of a workflow (nightly.yml unless told): (exit status, $GITHUB_OUTPUT,
    stdout + stderr); `contexts` gives more ${{ }} values (an earlier step's outputs)."""
    document = yaml.safe_load(workflow.read_text())
    step = next(s for s in document["jobs"][job]["steps"] if s.get("name") == name)
    values = {
        **CONTEXTS,
        **{f"matrix.{k}": v for k, v in (matrix or {}).items()},
        **(contexts or {}),
    }

    def expand(text: Any) -> str:
        return EXPRESSION.sub(lambda m: values[m.group(1)], str(text))  # unknown: KeyError

    env = dict(os.environ, GITHUB_SHA="0" * 40, GITHUB_RUN_ID=values["github.run_id"])
    for scope in (document.get("env"), document["jobs"][job].get("env"), step.get("env")):
        env.update({k: expand(v) for k, v in (scope or {}).items()})
    for key in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV"):
        env[key] = str(cwd / f".{key.lower()}")
        Path(env[key]).write_text("")
    if path:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    script = cwd / ".step.sh"
    script.write_text(expand(step["run"]))
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode, Path(env["GITHUB_OUTPUT"]).read_text(), done.stdout + done.stderr


# --- merge ----------------------------------------------------------------------------------


def shard_artifacts(
    folder: Path,
    gpu: str,
    statuses: dict[int, int],
    count: int,
    anchors: dict[int, str] | None = None,
) -> None:
    """What the suite jobs upload: results/<gpu>-shard-K.{json,md,status} for each K given,
    cut from a real H200 run as `run --shard K/count` would, its context's anchor phrase from
    `anchors` (none: the baseline holds the card); a shard that regressed also has its
    confirming re-run beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    document = read_json(GPU_DATA / "h200-suite-rep10.json.gz")
    names = list(dict.fromkeys(r["run_name"] for r in document["benchmarks"]))
    parts = shards.split(names, count, shards.durations([document]))
    for k, status in statuses.items():
        chosen = set(parts[k - 1])
        rows = [r for r in document["benchmarks"] if r["run_name"] in chosen]
        context = {**document["context"], "kernelwatch_shard": f"{k}/{count}"}
        if k in (anchors or {}):
            context["kernelwatch_anchor"] = (anchors or {})[k]
        stem = folder / f"{gpu}-shard-{k}"
        stem.with_suffix(".json").write_text(json.dumps({"context": context, "benchmarks": rows}))
        stem.with_suffix(".status").write_text(f"{status}\n")
        # a full suite's report is about 70,000 characters: more than an issue may hold
        table = "".join(f"| SAME | `{name}` |\n" for name in sorted(chosen) * 4)
        verdict = "1 REGRESSION" if status == 1 else "no regression"
        stem.with_suffix(".md").write_text(f"### shard {k}: {verdict}\n\n{table}")
        if status == 1:
            rerun = {k: v for k, v in context.items() if k != "kernelwatch_shard"}
            rerun["kernelwatch_filter"] = f"^({parts[k - 1][0]})$"
            rerun["kernelwatch_run_purpose"] = f"confirm 1 of 1 for {stem.name}.json"
            first = [r for r in rows if r["run_name"] == parts[k - 1][0]]
            (folder / f"{stem.name}.confirm-1.json").write_text(
                json.dumps({"context": rerun, "benchmarks": first})
            )


def shard_count() -> int:
    """The H200's shards in the list of GPU models."""
    models = json.loads(GPUS.read_text())["models"]
    count: int = next(model["shards"] for model in models if model["gpu"] == "h200")
    return count


MERGE = "Merge the shards, compare with this GPU's baseline"
H200 = {"gpu": "h200", "baseline": "nvidia-h200-sm90", "shards": str(shard_count())}


def test_merge_joins_the_shards_and_keeps_the_confirmed_regression(tmp_path: Path) -> None:
    """A shard that confirmed a regression fails the job (1) and gives the issue its text,
    cut to what GitHub takes; its re-run beside it is no part of the merge."""
    count = shard_count()
    root = workspace(tmp_path)
    shard_artifacts(
        root / "shards", "h200", {k: int(k == count) for k in range(1, count + 1)}, count
    )
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 1, log
    merged = read_json(root / "results" / "h200.json")
    source = read_json(GPU_DATA / "h200-suite-rep10.json.gz")
    assert len(merged["benchmarks"]) == len(source["benchmarks"])  # the re-run's rows left out
    assert (root / "results" / "h200.md").is_file() and (root / "results" / "h200.xml").is_file()
    issue = (root / "results" / "h200-issue.md").read_text()
    assert issue.startswith("<!-- kernelwatch:nvidia-h200-sm90 -->")
    assert f"shard {count}: 1 REGRESSION" in issue and RUN_URL in issue
    assert len(issue) <= 65536  # GitHub refuses a longer issue body


def test_a_dead_shard_fails_the_merge_but_a_regression_still_opens_the_issue(
    tmp_path: Path,
) -> None:
    count = max(shard_count(), 2)
    if count != shard_count():
        pytest.skip("the H200 has 1 shard: no shard can die beside another")
    root = workspace(tmp_path)
    shard_artifacts(root / "shards", "h200", {1: 1}, count)  # shard 2's runner died
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 2 and "h200-shard-2.json: cannot read" in log, log
    assert not (root / "results" / "h200.json").exists()  # no partial result passes on
    assert "shard 1: 1 REGRESSION" in (root / "results" / "h200-issue.md").read_text()


def test_a_clean_night_passes_and_opens_no_issue(tmp_path: Path) -> None:
    count = shard_count()
    root = workspace(tmp_path)
    shard_artifacts(root / "shards", "h200", {k: 0 for k in range(1, count + 1)}, count)
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 0, log
    assert (root / "results" / "h200.json").is_file()
    assert not (root / "results" / "h200-issue.md").exists()


ANCHORED = (
    "anchored on 61b6fec6efa2 (measured by this run; "
    "/w/.kernelwatch/anchors/e449eb41ce52c081.json)"
)


def test_the_merge_summary_says_how_each_shard_was_judged(tmp_path: Path) -> None:
    """The verdict of record is the shards' (their exit status), each anchored on its own card
    where the baseline lacks it; the merged result carries no anchor and is compared with the
    committed baseline only for the history. The job summary says which shard was anchored and
    that the merged comparison is not the verdict (docs/ci.md, "What the outputs say")."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (tools/kw setup installs it): the step reads the parts")
    count = max(shard_count(), 2)
    if count != shard_count():
        pytest.skip("the H200 has 1 shard: no unanchored shard beside an anchored one")
    root = workspace(tmp_path)
    statuses = {k: 0 for k in range(1, count + 1)}
    shard_artifacts(root / "shards", "h200", statuses, count, anchors={1: ANCHORED})
    status, _, log = run_step("merge", MERGE, root, H200)
    assert status == 0, log
    summary = (root / ".github_step_summary").read_text()
    assert f"- h200-shard-1: exit 0; {ANCHORED}\n" in summary
    assert (
        "- h200-shard-2: exit 0; against the committed baseline (it holds this card)\n" in summary
    )
    merged = summary.index("The merged result against the committed baseline")
    assert summary.index("h200-shard-1: exit 0") < merged  # the verdict before the report
    assert summary[merged:].index("not anchored, not the verdict") < 200
    # the artifact keeps it too
    assert (root / "results" / "h200-shards.md").read_text() in summary


# --- history --------------------------------------------------------------------------------


def nightly_artifact(root: Path) -> None:
    """What history downloads: nightly/nightly-<gpu>/<gpu>.json, the merge job's result."""
    folder = root / "nightly" / "nightly-h200"
    folder.mkdir(parents=True)
    shutil.copy(GPU_DATA / "h200-suite-rep10.json.gz", folder / "h200.json")


def test_ingest_twice_a_re_run_stores_the_night_once(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    nightly_artifact(root)
    for _ in range(2):  # the job, then a re-run of it on the database it uploaded
        status, _, log = run_step("history", "Ingest tonight's runs", root)
        assert status == 0 and "could not be ingested" not in log, log
    with sqlite3.connect(root / "results" / "history.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (1,)


def test_a_re_run_shard_replaces_its_nights_run_in_the_history(tmp_path: Path) -> None:
    """A "re-run failed jobs" after a shard confirmed a regression measures that shard again:
    its merge makes another result of the same night (other values, another content hash),
    which the re-run history job ingests into the database its first attempt uploaded. One
    workflow run is one night: the re-run's result replaces the first attempt's (the
    `nightly-<gpu>` artifact, which the report reads, is the re-run's too)."""
    root = workspace(tmp_path)
    nightly_artifact(root)
    result = root / "nightly" / "nightly-h200" / "h200.json"
    first = read_json(result)
    assert run_step("history", "Ingest tonight's runs", root)[0] == 0
    again = read_json(result)  # shard 2 measured again: its benchmarks' values moved
    for row in again["benchmarks"][len(again["benchmarks"]) // 2 :]:
        row["real_time"] *= 1.001
    again["context"]["kernelwatch_run_started"] = "2026-11-21T08:00:00+00:00"
    result.write_text(json.dumps(again))
    status, _, log = run_step("history", "Ingest tonight's runs", root)
    assert status == 0 and "could not be ingested" not in log, log
    database = root / "results" / "history.sqlite"
    with sqlite3.connect(database) as db:
        stored = db.execute("SELECT content_hash FROM runs").fetchall()
    assert stored == [(history.content_hash(again),)], "the night is in the history twice"
    # The next night (another workflow run) is another run: another measurement (the first
    # attempt's own file, which the re-run replaced, stays replaced under any key).
    first["context"]["date"] = first["context"]["kernelwatch_run_started"] = (
        "2026-11-22T03:17:00+00:00"
    )
    for row in first["benchmarks"]:
        row["real_time"] *= 0.999
    result.write_text(json.dumps(first))
    status, _, log = run_step("history", "Ingest tonight's runs", root, contexts=NEXT_NIGHT)
    assert status == 0, log
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (2,)


NEXT_NIGHT = {"github.run_id": "8"}


def test_the_report_step_writes_one_report_per_gpu(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="kernelwatch report draws with matplotlib")
    root = workspace(tmp_path)
    nightly_artifact(root)
    assert run_step("history", "Ingest tonight's runs", root)[0] == 0
    name = "One HTML report per GPU (comparison, trends with change points, lesson figures)"
    status, _, log = run_step("history", name, root)
    assert status == 0 and "warning" not in log, log
    assert (root / "reports" / "h200.html").stat().st_size > 0


FAKE_GH = """\
#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
fixtures = json.load(open(os.environ["GH_FIXTURES"]))
with open(os.environ["GH_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if args[:2] == ["run", "download"]:
    folder = args[args.index("--dir") + 1]
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, "history.sqlite"), "w").write("database of run " + args[2])
    sys.exit(0)
if "--jq" not in args:  # a write (POST, PATCH): logged, done
    sys.exit(0)
path = next(a for a in args[1:] if not a.startswith("-") and a != args[args.index("--jq") + 1])
# "KEY$": this path only; else every path that starts with KEY
answer = next((v for k, v in fixtures.items() if path == k[:-1] or path.startswith(k) and not k.endswith("$")), None)
if answer is None:
    print("gh: HTTP 502: Bad Gateway (" + path + ")", file=sys.stderr)
    sys.exit(1)
jq = args[args.index("--jq") + 1]
sys.exit(subprocess.run(["jq", "-r", jq], input=json.dumps(answer), text=True).returncode)
"""
FETCH = "Fetch the history database of the latest nightly run that kept one"
WORKFLOW = ".github/workflows/nightly.yml"


def nightly_run(run_id: int, event: str, repo: str = "o/r") -> dict[str, Any]:
    return {
        "id": run_id,
        "event": event,
        "head_branch": "main",
        "path": WORKFLOW,
        "head_repository": {"full_name": repo},
    }


def history_artifact(run_id: int, created: str) -> dict[str, Any]:
    return {
        "artifacts": [{"created_at": created, "expired": False, "workflow_run": {"id": run_id}}]
    }


# This workflow run (github.run_id 7), as the API describes it: made at 03:17:42 and the same for
# every re-run attempt of it (run_started_at is the attempt's).
THIS_RUN = {"repos/o/r/actions/runs/7$": {"created_at": "2026-11-24T03:17:42Z", "run_attempt": 2}}


def with_gh(
    tmp_path: Path,
    fixtures: dict[str, Any],
    job: str,
    step: str,
    workflow: Path = NIGHTLY,
    contexts: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    files: dict[str, str] | None = None,
    matrix: dict[str, str] | None = None,
) -> tuple[Path, int, str, list[str]]:
    """Run a step that calls gh, with the stand-in answering from `fixtures` (a path it lacks:
    HTTP 502) in a workspace holding `files`: (the workspace, its status, its $GITHUB_OUTPUT,
    gh's calls then the step's log)."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (tools/kw setup installs it): it stands in for gh's --jq")
    root = workspace(tmp_path)
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()  # (workspace made tmp_path)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.replace("{python}", sys.executable))
    gh.chmod(0o755)
    (tmp_path / "fixtures.json").write_text(json.dumps({**THIS_RUN, **fixtures}))
    (tmp_path / "gh.log").write_text("")
    added = {"GH_FIXTURES": str(tmp_path / "fixtures.json"), "GH_LOG": str(tmp_path / "gh.log")}
    added.update(env or {})
    os.environ.update(added)
    try:
        status, output, log = run_step(
            job, step, root, matrix, path=str(bin_dir), contexts=contexts, workflow=workflow
        )
    finally:
        for key in added:
            del os.environ[key]
    calls = (tmp_path / "gh.log").read_text().splitlines()
    return root, status, output, calls + [log]


def fetch(tmp_path: Path, fixtures: dict[str, Any]) -> tuple[int, str, list[str]]:
    root, status, output, calls = with_gh(tmp_path, fixtures, "history", FETCH)
    database = root / "results" / "history.sqlite"
    found = database.read_text() if database.exists() else ""
    return status, found, [*calls[:-1], output, calls[-1]]


RUNS = "repos/o/r/actions/workflows/nightly.yml/runs?branch=main"


def test_history_comes_from_the_newest_upload_of_the_nightly_itself(tmp_path: Path) -> None:
    """Run 30 is the newest night; run 10's history job was re-run after it and uploaded
    last (its database holds run 30's nights too); run 20, a pull request's, is never read."""
    fixtures = {
        "repos/o/r/actions/runs/30/": history_artifact(30, "2026-11-22T03:40:00Z"),
        "repos/o/r/actions/runs/20/": history_artifact(20, "2026-11-23T09:00:00Z"),
        "repos/o/r/actions/runs/10/": history_artifact(10, "2026-11-22T11:00:00Z"),
        RUNS: {
            "workflow_runs": [
                nightly_run(31, "schedule"),  # tonight: nothing uploaded yet
                nightly_run(30, "schedule"),
                nightly_run(20, "pull_request"),
                nightly_run(15, "workflow_dispatch", repo="fork/r"),
                nightly_run(10, "workflow_dispatch"),
            ]
        },
        "repos/o/r/actions/runs/31/": {"artifacts": []},
        "repos/o/r$": {"default_branch": "main"},
    }
    status, database, calls = fetch(tmp_path, fixtures)
    assert status == 0, calls
    assert database == "database of run 10"
    assert not any("runs/20/" in call or "runs/15/" in call for call in calls)


def test_an_api_error_fails_the_job_instead_of_starting_a_new_history(tmp_path: Path) -> None:
    fixtures = {
        "repos/o/r/actions/runs/30/": history_artifact(30, "2026-11-22T03:40:00Z"),
        RUNS: {"workflow_runs": [nightly_run(31, "schedule"), nightly_run(30, "schedule")]},
        "repos/o/r$": {"default_branch": "main"},
    }  # runs/31/artifacts: HTTP 502
    status, database, calls = fetch(tmp_path, fixtures)
    assert status != 0 and database == "", calls
    assert "starting a new history database" not in calls[-1]
    del fixtures[RUNS]
    status, database, calls = fetch(tmp_path / "again", fixtures)
    assert status != 0 and database == "", calls


def test_the_first_night_starts_a_new_history(tmp_path: Path) -> None:
    fixtures = {
        RUNS: {"workflow_runs": [nightly_run(31, "schedule")]},
        "repos/o/r/actions/runs/31/": {"artifacts": []},
        "repos/o/r$": {"default_branch": "main"},
    }
    status, database, calls = fetch(tmp_path, fixtures)
    assert status == 0 and database == "", calls
    assert "::warning::no kernelwatch-history artifact" in calls[-1]
    assert "created=2026-11-24T03:17:42Z\n" == calls[-2]  # when this run was made: the changes'


# --- the change points: each once, the night it is first found --------------------------------

CHANGES = "Change points found for the first time tonight"
NAIVE = "transpose/naive_"


def suite_night(root: Path, k: int, slower_from: int) -> None:
    """Night k of the real H200 suite's transposes (43 benchmarks; each run 0.3 % off the
    measured one, as separate processes are): the naive ones 15 % slower from `slower_from`.
    Measured at 03:40 (the workflow run was made at 03:17), ingested at 05:00."""
    document = read_json(GPU_DATA / "h200-suite-rep10.json.gz")
    rng = np.random.default_rng(k)
    rows = [row for row in document["benchmarks"] if row["run_name"].startswith("transpose/")]
    factors = {r["run_name"]: math.exp(rng.normal(0, 0.003)) for r in rows}
    for name in factors:
        factors[name] *= 1.15 if name.startswith(NAIVE) and k >= slower_from else 1.0
    for row in rows:
        for key in ("real_time", "cpu_time"):
            row[key] *= factors[row["run_name"]]
    day = f"2026-11-{k + 1:02d}"
    context = dict(document["context"], date=f"{day}T03:40:00+00:00")
    context["kernelwatch_git_commit"] = f"{k:040x}"
    path = root / f"night-{k}.json"
    path.write_text(json.dumps({"context": context, "benchmarks": rows}))
    database = root / "results" / "history.sqlite"
    history.ingest(path, database)
    with sqlite3.connect(database) as db:
        db.execute(
            "UPDATE runs SET ingested_at = ? WHERE date LIKE ?",
            (f"{day}T05:00:00+00:00", f"{day}%"),
        )


def changes_of_night(root: Path, k: int) -> tuple[int, str, str]:
    """The step on night k: (exit status, $GITHUB_OUTPUT, results/changes.txt)."""
    created = {"steps.fetch.outputs.created": f"2026-11-{k + 1:02d}T03:17:42Z"}
    status, output, log = run_step("history", CHANGES, root, contexts=created)
    assert status in (0, 1), log
    return status, output, (root / "results" / "changes.txt").read_text()


def test_the_nightly_reports_each_change_once_the_night_it_is_first_found(tmp_path: Path) -> None:
    pytest.importorskip("scipy", reason="history changes needs scipy (the history extra)")
    root = workspace(tmp_path)
    (root / "results").mkdir()
    for k in range(6):  # the naive transposes are slower from night 5: not yet confirmed
        suite_night(root, k, slower_from=5)
    assert changes_of_night(root, 5)[:2] == (0, "status=0\n")
    suite_night(root, 6, slower_from=5)
    status, output, text = changes_of_night(root, 6)
    assert (status, output) == (1, "status=1\n"), text
    rows = [line.split() for line in text.splitlines()[2:]]
    assert len(rows) == 8 and all(r[0] == "REGRESSION" and r[3].startswith(NAIVE) for r in rows)
    assert all(r[1] == "2026-11-06T03:40:00+00:00" for r in rows), text  # night 5's run
    summary = (root / ".github_step_summary").read_text()
    assert "### Change points new since 2026-11-07T03:17:42Z" in summary
    document = json.loads((root / "results" / "changes.json").read_text())
    assert document["new_since"] == "2026-11-07T03:17:42+00:00"
    # A re-run of night 6 (the same workflow run: made at the same moment) reports it again.
    assert changes_of_night(root, 6) == (status, output, text)
    # Night 7 and night 9 (night 8 skipped) do not.
    suite_night(root, 7, slower_from=5)
    assert changes_of_night(root, 7)[:2] == (0, "status=0\n")
    suite_night(root, 9, slower_from=5)
    status, output, text = changes_of_night(root, 9)
    assert (status, output) == (0, "status=0\n") and "no change new since" in text


# --- plan: the GPU models of .github/kernelwatch-gpus.json as matrices -------------------------

PLAN = "The GPU models (.github/kernelwatch-gpus.json)"
H100_LINE = {
    "gpu": "h100",
    "runs-on": ["h100"],
    "baseline": "nvidia-h100-80gb-hbm3-sm90",
    "shards": 2,
    "pull-requests": True,
    "nightly": True,
}
H200_LINE = dict(H100_LINE, gpu="h200", **{"runs-on": ["h200"]}, baseline="nvidia-h200-sm90")
# A third model on its way in: first only in the list (its baseline workflow can run), then at
# night too, on three shards of the runners that carry both of its labels.
B200_NEW = {
    "gpu": "b200",
    "runs-on": ["b200", "sxm"],
    "baseline": None,
    "shards": 3,
    "pull-requests": False,
    "nightly": False,
}
B200_NIGHTLY = dict(B200_NEW, baseline="nvidia-b200-sm100", nightly=True)


def plan(
    tmp_path: Path, models: Any, workflow: str = "nightly", gpu: str = ""
) -> tuple[int, dict[str, Any], str]:
    """The plan step of a workflow on this list (JSON text, or what to write as JSON):
    (exit status, its outputs read as JSON where they are, stdout + stderr)."""
    root = tmp_path / "checkout"
    (root / ".github").mkdir(parents=True)
    text = models if isinstance(models, str) else json.dumps(models)
    (root / ".github" / "kernelwatch-gpus.json").write_text(text)
    shutil.copy(GPUS.with_suffix(".jq"), root / ".github")
    status, output, log = run_step(
        "plan", PLAN, root, contexts={"inputs.gpu": gpu}, workflow=WORKFLOWS / f"{workflow}.yml"
    )
    outputs: dict[str, Any] = {}
    for line in output.splitlines():
        key, value = line.split("=", 1)
        outputs[key] = value if key in ("gpu", "baseline") else json.loads(value)
    return status, outputs, log


@pytest.mark.parametrize("workflow", ["gpu", "nightly", "baseline"])
def test_the_plan_of_the_committed_list(tmp_path: Path, workflow: str) -> None:
    status, outputs, log = plan(tmp_path, GPUS.read_text(), workflow)
    assert status == 0 and log == "", log
    models = json.loads(GPUS.read_text())["models"]
    assert outputs["pull-requests"] == [
        {"gpu": m["gpu"], "labels": m["runs-on"], "baseline": m["baseline"]}
        for m in models
        if m["pull-requests"]
    ]
    nightly = [m for m in models if m["nightly"]]
    assert outputs["nightly"] == [
        {"gpu": m["gpu"], "baseline": m["baseline"], "shards": m["shards"]} for m in nightly
    ]
    assert [(s["gpu"], s["shard"], s["shards"]) for s in outputs["shards"]] == [
        (m["gpu"], k, m["shards"]) for m in nightly for k in range(1, m["shards"] + 1)
    ]
    assert {"h100", "h200"} <= {m["gpu"] for m in outputs["pull-requests"]}


def test_a_third_model_is_one_line(tmp_path: Path) -> None:
    """Added disabled, it is planned nowhere but the baseline workflow takes it; enabled for
    the nightly with its baseline, it gets its three shards, a merge and a report job."""
    status, outputs, log = plan(tmp_path / "new", {"models": [H100_LINE, H200_LINE, B200_NEW]})
    assert status == 0, log
    assert [m["gpu"] for m in outputs["pull-requests"]] == ["h100", "h200"]
    assert [m["gpu"] for m in outputs["nightly"]] == ["h100", "h200"]
    status, outputs, log = plan(
        tmp_path / "baseline", {"models": [H100_LINE, H200_LINE, B200_NEW]}, "baseline", "b200"
    )
    assert status == 0, log
    assert outputs["gpu"] == "b200" and outputs["labels"] == ["b200", "sxm"]
    assert outputs["baseline"] == ""  # none yet: the baseline pull request names the folder
    status, outputs, log = plan(tmp_path / "on", {"models": [H100_LINE, H200_LINE, B200_NIGHTLY]})
    assert status == 0, log
    assert [m["gpu"] for m in outputs["pull-requests"]] == ["h100", "h200"]
    assert outputs["nightly"][2] == {"gpu": "b200", "baseline": "nvidia-b200-sm100", "shards": 3}
    assert outputs["shards"][4:] == [
        {"gpu": "b200", "labels": ["b200", "sxm"], "shard": k, "shards": 3} for k in (1, 2, 3)
    ]
    assert len(outputs["shards"]) == 2 + 2 + 3


def test_no_model_enabled_plans_empty_matrices(tmp_path: Path) -> None:
    """The jobs skip on `[]` (an empty matrix is an error on GitHub): an adopter's first model
    runs only its baseline workflow until it is enabled."""
    status, outputs, log = plan(tmp_path, {"models": [B200_NEW]}, "gpu")
    assert status == 0, log
    assert outputs == {"pull-requests": [], "nightly": [], "shards": []}


def test_the_baseline_workflow_refuses_a_model_the_list_lacks(tmp_path: Path) -> None:
    status, outputs, log = plan(
        tmp_path, {"models": [H100_LINE, H200_LINE, B200_NEW]}, "baseline", "h300"
    )
    assert status == 2 and outputs == {}, log
    assert log == (
        'kernelwatch: error: .github/kernelwatch-gpus.json: no GPU model "h300"; its models: '
        'h100, h200, b200 (docs/ci.md, "GPU runners")\n'
    )


DEFAULT_BRANCH = "Only the default branch's code"


@pytest.mark.parametrize("workflow", ["nightly", "baseline"])
@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/heads/feature", "refs/tags/v1"])
def test_a_hand_start_runs_only_the_default_branch(tmp_path: Path, workflow: str, ref: str) -> None:
    """Both run on persistent runners and publish: an issue, a baseline pull request whose
    branch starts at the measured commit. Started by hand from another branch, the baseline's
    pull request carried that branch's commits into the default branch, and its manifest named
    a commit that squash-merging and deleting the branch took out of every clone (no anchor)."""
    contexts = {
        "github.ref": ref,
        "github.event.repository.default_branch": "main",
        "github.workflow": workflow,
    }
    status, output, log = run_step(
        "plan", DEFAULT_BRANCH, tmp_path, contexts=contexts, workflow=WORKFLOWS / f"{workflow}.yml"
    )
    if ref == "refs/heads/main":
        assert (status, output, log) == (0, "", "")
        return
    assert status == 2 and output == "", log
    assert log == (
        f"kernelwatch: error: {workflow} runs the default branch's code (main), not {ref}: "
        "start it from main\n"
    )
    step = next(
        s
        for s in yaml.safe_load((WORKFLOWS / f"{workflow}.yml").read_text())["jobs"]["plan"][
            "steps"
        ]
        if s.get("name") == DEFAULT_BRANCH
    )
    assert step["if"] == "github.event_name == 'workflow_dispatch'"  # a schedule runs main


POOLED = "The runs are of the model's cards"


def pooled(tmp_path: Path, written: str, listed: str) -> tuple[int, str, str]:
    """The pool job's check after `baseline update` wrote baselines/<written>/ in a checkout
    of the committed baselines, the list giving the model the folder `listed` ("" for none)."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "baselines", root / "baselines")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "baselines"], check=True)
    subprocess.run([*git, "commit", "-qm", "checkout"], check=True)
    folder = root / "baselines" / written
    folder.mkdir(exist_ok=True)
    (folder / "manifest.json").write_text("{}\n")
    return run_step(
        "pool",
        POOLED,
        root,
        contexts={"inputs.gpu": "h200", "needs.plan.outputs.baseline": listed},
        workflow=WORKFLOWS / "baseline.yml",
    )


def test_the_baseline_is_pooled_into_the_models_folder(tmp_path: Path) -> None:
    status, output, log = pooled(tmp_path, "nvidia-h200-sm90", "nvidia-h200-sm90")
    assert (status, output, log) == (0, "folder=nvidia-h200-sm90\n", "")


def test_a_new_model_gets_the_folder_its_runs_wrote(tmp_path: Path) -> None:
    status, output, log = pooled(tmp_path, "nvidia-b200-sm100", "")
    assert (status, output, log) == (0, "folder=nvidia-b200-sm100\n", "")


def test_runs_of_another_models_cards_fail_the_pool(tmp_path: Path) -> None:
    """A label that also reaches H100 runners: their runs re-measured the H100's baseline."""
    status, output, log = pooled(tmp_path, "nvidia-h100-80gb-hbm3-sm90", "nvidia-h200-sm90")
    assert status == 2 and output == "", log
    assert log == (
        "kernelwatch: error: the runs for h200 are of nvidia-h100-80gb-hbm3-sm90, but "
        ".github/kernelwatch-gpus.json gives h200 the baseline nvidia-h200-sm90: do its runner "
        "labels reach another model's cards?\n"
    )


@pytest.mark.parametrize(
    ("interleave", "flag"),
    [("as the baseline", []), ("on", ["--interleave"]), ("off", ["--no-interleave"])],
)
def test_the_baseline_runs_interleave_as_the_workflow_is_told(
    tmp_path: Path, interleave: str, flag: list[str]
) -> None:
    """The `interleave` input reaches `tools/kw suite` as run's flag, or none (run then
    follows the model's present baseline)."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "kw").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (tmp_path / "tools" / "kw").chmod(0o755)
    status, _, log = run_step(
        "measure",
        "Build and run the suite without comparing",
        tmp_path,
        matrix={"run": "2"},
        contexts={"inputs.interleave": interleave},
        workflow=WORKFLOWS / "baseline.yml",
    )
    assert status == 0, log
    assert log.splitlines() == ["suite", "--no-compare", *flag, "--out", "results/run-2.json"]


PROPOSE = "Open a pull request with the new baseline"
# gh pr view finds no pull request; gh pr create prints its arguments, one a line.
GH_CREATES = """#!/bin/sh
[ "$2" = view ] && exit 1
printf '%s\\n' "$@"
"""


def proposed(tmp_path: Path, gpu: str, folder: str, listed: str) -> str:
    """The arguments of `gh pr create` when the pool wrote baselines/<folder>/ for `gpu`."""
    origin, root, bin_dir = tmp_path / "origin.git", tmp_path / "checkout", tmp_path / "bin"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(root)], check=True, capture_output=True)
    (root / "baselines" / folder).mkdir(parents=True)
    (root / "baselines" / folder / "manifest.json").write_text("{}\n")
    # noise.json's count of the distinct cards and hosts the pooled runs were measured on
    (root / "baselines" / folder / "noise.json").write_text('{"cards": 3, "hosts": 2}\n')
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_CREATES)
    (bin_dir / "gh").chmod(0o755)
    inputs = {
        "inputs.gpu": gpu,
        "inputs.runs": "3",
        "github.event.repository.default_branch": "main",
    }
    status, _, log = run_step(
        "propose",
        PROPOSE,
        root,
        contexts={
            **inputs,
            "needs.pool.outputs.folder": folder,
            "needs.plan.outputs.baseline": listed,
        },
        path=str(bin_dir),
        workflow=WORKFLOWS / "baseline.yml",
    )
    assert status == 0, log
    return log


def test_the_baseline_pull_request_names_its_folder(tmp_path: Path) -> None:
    log = proposed(tmp_path, "h200", "nvidia-h200-sm90", "nvidia-h200-sm90")
    assert (
        "Measured by the baseline workflow, run 7 (3 runs pooled, on 3 cards of 2 hosts), into "
        "`baselines/nvidia-h200-sm90`." in log
    )
    assert "To turn" not in log


def test_a_new_models_baseline_pull_request_says_how_to_turn_it_on(tmp_path: Path) -> None:
    log = proposed(tmp_path, "b200", "nvidia-b200-sm100", "")
    assert (
        'To turn b200 on, set its `"baseline": "nvidia-b200-sm100"`, `pull-requests` and '
        "`nightly` in .github/kernelwatch-gpus.json in this pull request." in log
    )


MALFORMED = {
    "not JSON": ('{"models": [', "not one JSON document: "),
    "empty": ("", "not one JSON document: 0 JSON documents"),
    "two documents": ('{"models": []} {"models": []}', "not one JSON document: 2 JSON documents"),
    "no models": ({"gpus": [H200_LINE]}, 'no list "models"'),
    "a list": ([H200_LINE], 'no list "models"'),
    "a key missing": ({"models": [{k: v for k, v in H200_LINE.items() if k != "shards"}]}, ""),
    "a key misspelt": (
        {"models": [{**B200_NEW, "pull_requests": False}]},
        '"pull_requests":false}; a model is {"gpu": NAME',
    ),
    "a label with a quote": ({"models": [dict(H200_LINE, **{"runs-on": ['h200"']})]}, ""),
    "no label": ({"models": [dict(H200_LINE, **{"runs-on": []})]}, ""),
    "labels as a string": ({"models": [dict(H200_LINE, **{"runs-on": "h200"})]}, ""),
    "a name with a space": ({"models": [dict(H200_LINE, gpu="h 200")]}, ""),
    "no shard": ({"models": [dict(H200_LINE, shards=0)]}, ""),
    "half a shard": ({"models": [dict(H200_LINE, shards=1.5)]}, ""),
    "shards as a string": ({"models": [dict(H200_LINE, shards="2")]}, ""),
    "a flag as a string": ({"models": [dict(H200_LINE, nightly="yes")]}, ""),
    "a baseline out of the folder": ({"models": [dict(H200_LINE, baseline="../x")]}, ""),
    "enabled without a baseline": (
        {"models": [dict(B200_NEW, nightly=True)]},
        "b200 is enabled without a baseline: run the baseline workflow first",
    ),
    "a model twice": ({"models": [H200_LINE, H100_LINE, H200_LINE]}, "more than one model is h200"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
@pytest.mark.parametrize("workflow", ["gpu", "nightly", "baseline"])
def test_a_malformed_list_fails_the_plan_with_one_line(
    tmp_path: Path, case: str, workflow: str
) -> None:
    models, says = MALFORMED[case]
    status, outputs, log = plan(
        tmp_path, models, workflow, "h200" if workflow == "baseline" else ""
    )
    assert status == 2 and outputs == {}, log
    assert log.startswith("kernelwatch: error: .github/kernelwatch-gpus.json: ") and says in log
    assert log.endswith("\n") and log.count("\n") == 1, log
    if not says:
        assert "not a model: " in log


# --- the pull-request comment ---------------------------------------------------------------

MARKER = "<!-- kernelwatch:nvidia-h200-sm90 -->"
COMMENTS = "repos/o/r/issues/5/comments"
POST = "Post it, or update the one posted before"


def comment(login: str, number: int) -> dict[str, Any]:
    return {"id": number, "user": {"login": login}, "body": MARKER + "\n### report"}


def posting(
    tmp_path: Path,
    fixtures: dict[str, Any],
    workflow: Path,
    contexts: dict[str, str] | None = None,
) -> tuple[int, list[str]]:
    """The comment job's posting step of `workflow` (gpu.yml's, or nvbench-gate.yml's, the
    same) with the pull request's comments in `fixtures`: its status and gh's calls, the
    step's output last."""
    _, status, _, calls = with_gh(
        tmp_path,
        fixtures,
        "comment",
        POST,
        workflow=workflow,
        contexts={"github.token": "t", "github.event.pull_request.number": "5", **(contexts or {})},
        env={"MARKER": MARKER},
    )
    return status, calls


def post(tmp_path: Path, fixtures: dict[str, Any], workflow: str = "gpu.yml") -> list[str]:
    """The posting step (`posting`) that succeeded: gh's writes."""
    status, calls = posting(tmp_path, fixtures, WORKFLOWS / workflow)
    assert status == 0, calls
    return [call for call in calls[:-1] if "--method" in call]


@pytest.mark.parametrize("workflow", ["gpu.yml", "nvbench-gate.yml"])
def test_the_comment_is_found_by_its_author_too(tmp_path: Path, workflow: str) -> None:
    """Anyone who may comment could plant the marker first: the report went into their comment
    (or, where it may not be edited, was never posted)."""
    planted = [comment("mallory", 11), comment("github-actions[bot]", 12)]
    assert post(tmp_path / "a", {COMMENTS: planted}, workflow) == [
        "api --method PATCH repos/o/r/issues/comments/12 -F body=@results/comment.md"
    ]
    writes = post(tmp_path / "b", {COMMENTS: planted[:1]}, workflow)  # only theirs: a new one
    assert writes == ["api --method POST repos/o/r/issues/5/comments -F body=@results/comment.md"]
    # Posted with another token (a PAT), the comment is that token's user's.
    fixtures = {"user$": {"login": "kw-bot"}, COMMENTS: [*planted, comment("kw-bot", 13)]}
    assert post(tmp_path / "c", fixtures, workflow) == [
        "api --method PATCH repos/o/r/issues/comments/13 -F body=@results/comment.md"
    ]


@pytest.mark.parametrize(
    "first_line, marker",
    [
        (MARKER, MARKER),
        ("<!-- kernelwatch:nvidia-h200-sm90 --> trailing", ""),
        ("# a report without its marker", ""),
        (None, ""),  # no artifact: the measure job stopped before comparing
    ],
)
def test_the_nvbench_gate_posts_only_a_body_that_starts_with_a_marker(
    tmp_path: Path, first_line: str | None, marker: str
) -> None:
    """nvbench-gate.yml's comment job takes the marker from the body the GPU job wrote (the
    first line of results/comment.md) and posts nothing when there is none."""
    root = workspace(tmp_path)
    if first_line is not None:
        (root / "results").mkdir()
        (root / "results" / "comment.md").write_text(first_line + "\n## kernelwatch on H200\n")
    status, _, log = run_step(
        "comment", "The comment's marker", root, workflow=WORKFLOWS / "nvbench-gate.yml"
    )
    assert status == 0, log
    assert (root / ".github_env").read_text() == (f"MARKER={marker}\n" if marker else "")


# --- gpu.yml: the comment of a push without a report, on the plan's real matrix --------------------


def matrix_of(entry: dict[str, Any], *names: str) -> dict[str, str]:
    """A plan entry as the matrix context a job reads: a key the entry lacks is '' (GitHub's
    value for a property that is not there), lists as JSON."""
    return {
        name: (
            (json.dumps(entry[name]) if isinstance(entry.get(name), list) else str(entry[name]))
            if entry.get(name) is not None
            else ""
        )
        for name in names
    }


def test_a_push_without_a_report_gets_its_comment_from_the_real_matrix(tmp_path: Path) -> None:
    """docs/ci.md, "Pull-request comment": where the suite left no report, the body says so
    "under the same marker (`--gpu <baseline slug>`)". The comment job's matrix is the plan's
    `pull-requests` output, whose entries were {gpu, labels}: `matrix.baseline` was '', so
    `kernelwatch comment --gpu ''` refused (exit 2) and nothing was posted; an earlier push's
    comment, its verdicts with it, stood for the new head. The entries now name the baseline."""
    status, outputs, log = plan(tmp_path / "plan", GPUS.read_text(), "gpu")
    assert status == 0, log
    entry = next(m for m in outputs["pull-requests"] if m["gpu"] == "h200")
    root = workspace(tmp_path)
    status, _, log = run_step(
        "comment",
        "Build the comment",
        root,
        matrix=matrix_of(entry, "gpu", "baseline"),
        contexts={"github.event.pull_request.head.sha": "c0ffee" * 6 + "c0ff"},
        workflow=WORKFLOWS / "gpu.yml",
    )
    assert status == 0, log
    assert (root / ".github_env").read_text() == f"MARKER={MARKER}\n"  # a result's (H200)
    body = (root / "results" / "comment.md").read_text()
    assert body.startswith(f"{MARKER}\n") and "**No report for this push**" in body
