"""Finding the project being measured (kernelwatch/project.py): the installed command from a
subfolder of a checkout, another project's subfolder, and no project at all (issue 29)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import H100_CONTEXT, REPO, TOOLS, document
from kernelwatch import baseline as baselines
from kernelwatch import history, project


def installed(tmp_path: Path) -> Path:
    """A copy of the package outside any checkout, as `pip install ./tools` leaves it."""
    site = tmp_path / "site-packages"
    shutil.copytree(TOOLS / "kernelwatch", site / "kernelwatch")
    return site


def kernelwatch(site: Path, cwd: Path, *argv: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run(
        [sys.executable, "-m", "kernelwatch", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_the_installed_command_finds_the_checkout_from_its_docs(tmp_path: Path) -> None:
    """`baseline list` from docs/ said `baselines: no such folder` (it looked in ./baselines)."""
    done = kernelwatch(installed(tmp_path), REPO / "docs", "baseline", "list")
    assert done.returncode == 0, done.stderr
    assert "nvidia-h200-sm90" in done.stdout


def test_outside_any_project_nothing_is_started_and_the_line_says_where(tmp_path: Path) -> None:
    """`history ingest` outside a checkout silently started ./results/history.sqlite."""
    site, away = installed(tmp_path), tmp_path / "away"
    away.mkdir()
    result = away / "r.json"
    result.write_text(json.dumps(document({"BM_A": [1.0, 2.0, 3.0]}, context=H100_CONTEXT)))
    cases = {
        ("history", "ingest", result): "name the database with --db PATH",
        ("history", "list"): "name the database with --db PATH",
        ("baseline", "list"): "name the baselines folder with --baselines DIR",
        ("baseline", "update", result): "name the baselines folder with --baselines DIR",
        ("run", "--no-compare"): "name the build folder with --build-dir DIR",
    }
    for argv, point in cases.items():
        done = kernelwatch(site, away, *argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.count("\n") == 1 and point in done.stderr, (argv, done.stderr)
        assert f"looked for a folder holding baselines/ or .git in {away}" in done.stderr
        assert sorted(os.listdir(away)) == ["r.json"], argv  # no results/, no baselines/
    # Named explicitly, the database is made where it was named.
    db = away / "h.sqlite"
    done = kernelwatch(site, away, "history", "ingest", result, "--db", db)
    assert done.returncode == 0, done.stderr
    assert db.is_file()


def test_another_project_is_found_from_its_subfolders(tmp_path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()  # its repository, before its first baseline
    (tmp_path / "build" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "build" / "deep")
    assert project.find() == tmp_path
    assert baselines.default_root() == tmp_path / "baselines"
    assert history.default_path() == tmp_path / "results" / "history.sqlite"


def test_without_a_project_here_a_checkouts_package_uses_its_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (no baselines/ or .git above the test's temporary folder)
    assert project.find() == REPO
    monkeypatch.setattr(project, "package_checkout", lambda: None)  # an installed package
    assert project.find() is None
    with pytest.raises(project.NoProject, match="--baselines DIR"):
        baselines.default_root()
    assert baselines.found_root() is None and history.found_path() is None


def test_the_package_names_no_address_the_project_does_not_have() -> None:
    """pyproject's [project.urls] pointed at github.com/kernelwatch/kernelwatch, a placeholder:
    the repository has no remote and README, LICENSE and docs name no address."""
    import tomllib

    metadata = tomllib.loads((TOOLS / "pyproject.toml").read_text())["project"]
    assert "urls" not in metadata
