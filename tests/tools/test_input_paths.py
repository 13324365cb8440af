"""Paths named by options that take one file (compare --noise-file, report --explanations):
a folder is said to be one, not "no such file", and a pipe, `<(zcat noise.json.gz)`, is read as
a file, as BASELINE and CONTENDER are. Bad input is one line, `kernelwatch: error: ...`, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, shells_pipe

H200_BASELINE = REPO / "baselines" / "nvidia-h200-sm90"
H200_RUN = REPO / "tests" / "data" / "gpu" / "h200-card-5f632982.json.gz"


def one_error_line(done: Any) -> str:
    assert done.status == 2, done.out + done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelwatch: error: "), done.err
    return lines[0]


def small_pair(write_json) -> tuple[Path, Path]:
    spec = {"BM_A": [100.0, 101.0, 99.0, 100.5, 100.2]}
    return write_json("a.json", spec), write_json("b.json", spec)


def test_a_noise_file_that_is_a_folder_is_said_to_be_one(run_cli, write_json, tmp_path) -> None:
    """compare.md: `--noise-file FILE` names another noise.json. A folder there was refused as
    "no such file", which it is not."""
    a, b = small_pair(write_json)
    folder = tmp_path / "noise"
    folder.mkdir()
    line = one_error_line(run_cli("compare", a, b, "--noise-file", folder))
    assert "no such file" not in line and "folder" in line, line


def test_a_missing_noise_file_is_still_no_such_file(run_cli, write_json, tmp_path) -> None:
    a, b = small_pair(write_json)
    line = one_error_line(run_cli("compare", a, b, "--noise-file", tmp_path / "none.json"))
    assert "no such file" in line, line


def test_an_explanations_folder_is_said_to_be_one(run_cli, tmp_path) -> None:
    """report.md: `--explanations DIR/explanations.json`; the folder itself was refused as "no
    such file"."""
    pytest.importorskip("matplotlib")
    line = one_error_line(
        run_cli("report", H200_RUN, "--explanations", tmp_path, "-o", tmp_path / "r.html")
    )
    assert "no such file" not in line and "folder" in line, line


def test_a_noise_file_may_be_a_pipe(run_cli) -> None:
    """The shell's pipe is read as a file (files.check_input_file: `<(...)`), as BASELINE is:
    the stored noise of the H200 baseline given through one gives the verdicts the file gives,
    where it was refused as "no such file"."""
    data = (H200_BASELINE / "noise.json").read_bytes()
    result = H200_BASELINE / "result.json.gz"
    with shells_pipe(data) as pipe:
        piped = run_cli("compare", result, H200_RUN, "--noise-file", pipe, "--format", "json")
    assert piped.status in (0, 1), piped.err
    named = run_cli(
        "compare",
        result,
        H200_RUN,
        "--noise-file",
        H200_BASELINE / "noise.json",
        "--format",
        "json",
    )
    assert piped.out == named.out.replace(str(H200_BASELINE / "noise.json"), str(pipe))
