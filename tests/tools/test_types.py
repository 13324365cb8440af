"""The package's type annotations hold, and the families' figure modules' (families/*/figure.py):
mypy --strict, configured in tools/pyproject.toml."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import TOOLS

pytest.importorskip("mypy", reason="mypy is needed for the type check")


def test_package_passes_mypy_strict() -> None:
    # In tools/, where mypy finds its [tool.mypy]; with no cache, which the checkout would
    # otherwise gain and a stale one of which could hide an error (7 s on CI's machine).
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", "/dev/null"],
        cwd=TOOLS,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
