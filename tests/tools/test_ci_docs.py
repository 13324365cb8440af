"""The snippets of docs/ci.md (ARC values.yaml, a project's call of nvbench-gate.yml, Slurm
scripts, a model's line) are valid: YAML parses, shell passes `bash -n` (and shellcheck when
installed), kernelwatch commands parse, JSON lines are models the workflows' `plan` step takes."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, assert_valid_shell
from kernelwatch import cli

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the snippets")

DOC = (REPO / "docs" / "ci.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, flags=re.S)


def blocks(language: str) -> list[str]:
    return [text for lang, text in BLOCKS if lang == language]


def test_there_are_the_snippets() -> None:
    assert len(blocks("yaml")) >= 1 and len(blocks("bash")) >= 2


@pytest.mark.parametrize("text", blocks("yaml"), ids=lambda t: t.splitlines()[0][:40])
def test_yaml_snippets_parse(text: str, tmp_path: Path) -> None:
    values = yaml.safe_load(text)
    if "jobs" in values:  # a project's workflow calling nvbench-gate.yml
        calls_the_nvbench_gate(values, text, tmp_path)
        return
    container = values["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1  # one GPU per runner pod
    assert values["minRunners"] == 0 and values["runnerScaleSetName"]


def calls_the_nvbench_gate(values: dict[Any, Any], text: str, tmp_path: Path) -> None:
    """The example call: the workflow's inputs (every required one, no other), the tools from
    the commit of its `uses:`, the calling job's permissions what the gate's jobs ask for; and
    actionlint passes it."""
    gate = values["jobs"]["gate"]
    workflow = REPO / ".github" / "workflows" / "nvbench-gate.yml"
    document = yaml.safe_load(workflow.read_text())
    inputs = document[True]["workflow_call"]["inputs"]  # (YAML 1.1 reads `on` as True)
    assert gate["uses"] == "OWNER/kernelwatch/.github/workflows/nvbench-gate.yml@COMMIT"
    given = gate["with"]
    assert set(given) <= set(inputs), set(given) - set(inputs)
    assert {name for name, spec in inputs.items() if spec.get("required")} <= set(given)
    assert given["kernelwatch-ref"] == "COMMIT" and given["kernelwatch-repository"].endswith(
        "/kernelwatch"
    )
    assert values["permissions"] == {}
    asked: dict[str, str] = {}
    for job in document["jobs"].values():
        asked.update(job["permissions"])
    assert gate["permissions"] == asked == {"contents": "read", "pull-requests": "write"}
    assert "pull_request_target" not in values[True]
    actionlint = shutil.which("actionlint")
    if actionlint:
        (tmp_path / "benchmarks.yml").write_text(text)
        done = subprocess.run(
            [
                actionlint,
                "-config-file",
                str(REPO / ".github" / "actionlint.yaml"),
                "benchmarks.yml",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("text", blocks("bash"), ids=lambda t: t.splitlines()[1][:40])
def test_shell_snippets_are_valid(text: str, tmp_path: Path) -> None:
    script = tmp_path / "snippet.sh"
    script.write_text(text)
    assert_valid_shell(script)


def kernelwatch_commands() -> list[list[str]]:
    found = []
    for text in blocks("bash"):
        for line in text.replace("\\\n", " ").splitlines():
            if "python3 -m kernelwatch " in line:
                words = shlex.split(line.split("python3 -m kernelwatch ", 1)[1].split("||")[0])
                found.append(words)
    return found


@pytest.mark.parametrize("argv", kernelwatch_commands(), ids=lambda a: " ".join(a[:2]))
def test_kernelwatch_commands_in_snippets_parse(argv: list[str]) -> None:
    cli.build_parser().parse_args(argv)  # a usage error raises SystemExit


def slurm_script(name: str) -> str:
    return next(text for text in blocks("bash") if f"# {name}" in text)


def test_slurm_tasks_write_into_the_nights_own_folder() -> None:
    """sbatch does not make the --output folder, and a part left in a shared results/ by an
    earlier night would stand in for one whose task died."""
    array = slurm_script("nightly-h200.sbatch")
    assert "#SBATCH --output=slurm-" in array and 'mkdir -p "$night"' in array
    assert "night=results/${SLURM_ARRAY_JOB_ID}" in array
    assert 'sbatch --dependency="afterany:$id,singleton" merge-h200.sbatch "$id"' in array


@pytest.mark.parametrize("dead", [False, True], ids=["regression", "dead-task"])
def test_the_slurm_merge_runs_on_real_parts(tmp_path: Path, dead: bool) -> None:
    """A regression (status 1, its re-run beside the part) is merged, ingested and exits 1; a
    part whose task died fails the merge (2) and nothing reaches the history."""
    from test_workflow_steps import shard_artifacts, workspace

    root = workspace(tmp_path)
    shard_artifacts(root / "results" / "123", "h200", {1: 0} if dead else {1: 0, 2: 1}, 2)
    script = root / "merge-h200.sbatch"
    script.write_text(slurm_script("merge-h200.sbatch"))
    done = subprocess.run(["bash", str(script), "123"], cwd=root, capture_output=True, text=True)
    history = root / "results" / "history.sqlite"
    if dead:
        assert done.returncode == 2 and "shard(s) 2/2 not given" in done.stderr, done.stderr
        assert not history.exists()
    else:
        assert done.returncode == 1, done.stderr
        assert "ingested" in done.stdout and history.is_file()
        assert "a regression's re-run, not a shard: left out" in done.stderr


def test_the_json_lines_are_models_the_plan_takes(tmp_path: Path) -> None:
    from test_workflow_steps import plan

    models = [json.loads(line) for text in blocks("json") for line in text.splitlines()]
    assert models
    status, outputs, log = plan(tmp_path, {"models": models})
    assert status == 0, log
    assert [m["gpu"] for m in outputs["nightly"]] == [m["gpu"] for m in models]
