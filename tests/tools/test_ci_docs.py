"""The snippets of docs/ci.md (ARC values.yaml, Slurm scripts) are valid: YAML parses, shell
passes `bash -n` (and shellcheck when installed), kernelwatch commands parse."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from kernelwatch import cli

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the snippets")

DOC = (REPO / "docs" / "ci.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, flags=re.S)


def blocks(language: str) -> list[str]:
    return [text for lang, text in BLOCKS if lang == language]


def test_there_are_the_snippets() -> None:
    assert len(blocks("yaml")) >= 1 and len(blocks("bash")) >= 2


@pytest.mark.parametrize("text", blocks("yaml"), ids=lambda t: t.splitlines()[0][:40])
def test_yaml_snippets_parse(text: str) -> None:
    values = yaml.safe_load(text)
    container = values["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1  # one GPU per runner pod
    assert values["minRunners"] == 0 and values["runnerScaleSetName"]


@pytest.mark.parametrize("text", blocks("bash"), ids=lambda t: t.splitlines()[1][:40])
def test_shell_snippets_are_valid(text: str, tmp_path: Path) -> None:
    script = tmp_path / "snippet.sh"
    script.write_text(text)
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shellcheck = shutil.which("shellcheck")
    if shellcheck:
        done = subprocess.run([shellcheck, str(script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


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
