"""The Python code is formatted as black formats it with tools/pyproject.toml's settings (100
columns, Python 3.11 and later; the vendored Otava kept as upstream wrote it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("black", reason="black is needed for the format check")

FORMATTED = [
    "tools/kernelwatch",
    "tools/bench_compare_speed.py",
    "tests",
    "scripts",
    "families",  # the families' figure modules (families/<family>/figure.py)
]


def test_python_is_black_formatted() -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--config", "tools/pyproject.toml", *FORMATTED],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
