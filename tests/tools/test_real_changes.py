"""scripts/real_changes.py, the code changes behind the anchored-verdict table (issue #31), and
scripts/gpu/real_changes.sh, which measures them: the changes still apply to this tree, each
one line of one file; their benchmarks are named; the table reads the two reports as `ab` and
`run` write them; bad input is one line."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, TOOLS, assert_valid_shell, git, merged, run_module

SCRIPT = REPO / "scripts" / "real_changes.py"
_spec = importlib.util.spec_from_file_location("real_changes", SCRIPT)
assert _spec is not None and _spec.loader is not None
real_changes = importlib.util.module_from_spec(_spec)
sys.modules["real_changes"] = real_changes
_spec.loader.exec_module(real_changes)


def script(*args: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(TOOLS))
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def one_line_error(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr, done.stderr


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """This repository's HEAD in a clone that borrows its objects (the commits go there)."""
    path = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--shared", "--no-checkout", str(REPO), str(path)], check=True
    )
    return path


def test_the_changes_apply_to_this_tree_one_line_each(clone: Path) -> None:
    """What CI guards: a family that moved on makes this fail, and the change must be written
    again before the table can be measured."""
    before = [git(clone, "for-each-ref"), git(clone, "status", "--porcelain")]
    done = script("commit", "HEAD", "--repo", clone)
    assert done.returncode == 0, done.stderr
    assert [git(clone, "for-each-ref"), git(clone, "status", "--porcelain")] == before
    changed = done.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", changed)
    subjects = git(clone, "log", "--format=%s", f"HEAD..{changed}").splitlines()
    assert subjects == [c.title for c in reversed(real_changes.CHANGES)]
    for change in real_changes.CHANGES:
        diff = git(clone, "diff", "--numstat", "HEAD", changed, "--", change.path)
        assert diff.split()[:2] == ["1", "1"], change.path
        assert change.new in git(clone, "show", f"{changed}:{change.path}").splitlines()
    # Fixed author and dates: one base gives the same commits on every machine.
    assert script("commit", "HEAD", "--repo", clone).stdout.strip() == changed


def test_each_change_names_benchmarks_of_the_suite_and_no_other_changes() -> None:
    with gzip.open(REPO / "baselines" / "nvidia-h200-sm90" / "result.json.gz") as f:
        names = {row["run_name"] for row in json.load(f)["benchmarks"]}
    matched = [{n for n in names if re.match(c.benchmarks, n)} for c in real_changes.CHANGES]
    assert all(matched), [c.title for c, m in zip(real_changes.CHANGES, matched) if not m]
    assert sum(map(len, matched)) == len(set().union(*matched))  # disjoint
    whole = script("filter").stdout.strip()
    assert {n for n in names if re.search(whole, n)} == set().union(*matched)


def test_a_line_found_other_than_once_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    first = real_changes.CHANGES[0]
    (repo / first.path).parent.mkdir(parents=True)
    (repo / first.path).write_text("// the line is gone\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    one_line_error(script("commit", "HEAD", "--repo", repo), "found 0 times")
    one_line_error(script("commit", "no-such-rev", "--repo", repo), "git rev-parse")


def report(tmp_path: Path, name: str, a: dict[str, float], b: dict[str, float]) -> Path:
    """`kernelwatch compare A B --json` of two 2-process results: {benchmark: median us}."""

    def side(label: str, medians: dict[str, float]) -> Path:
        spec = {
            n: [[m * (1 + 0.001 * (p + k % 3)) for k in range(5)] for p in range(2)]
            for n, m in medians.items()
        }
        path = tmp_path / f"{name}-{label}.json"
        path.write_text(json.dumps(merged(spec)))
        return path

    out = tmp_path / f"{name}.json"
    done = run_module("compare", side("a", a), side("b", b), "--json", out)
    assert done.returncode in (0, 1), done.stderr
    return out


def test_the_table_reads_ab_and_run_reports(tmp_path: Path) -> None:
    slow, short, sgemm, copy, other = (
        "reduction/sum/naive/float/n:67108864/manual_time",
        "transpose/unrolled_rows/rows:2048/cols:2048/block_rows:8/manual_time",
        "matmul/sgemm_tiled/m:4096/manual_time",
        "coalescing/vectorized_copy/manual_time",
        "occupancy/copy/block:256/manual_time",
    )
    a = {slow: 400.0, short: 20.0, sgemm: 900.0, copy: 130.0}
    truth = report(tmp_path, "ab", a, {slow: 440.0, short: 21.0, sgemm: 850.0, copy: 130.0})
    # The anchored run misses the short kernel's +5 % and cries wolf on an unchanged one.
    anchored = report(
        tmp_path,
        "run",
        {**a, other: 100.0},
        {slow: 440.0, short: 20.0, sgemm: 850.0, copy: 130.0, other: 110.0},
    )
    done = script("table", truth, anchored)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert f"| {real_changes.CHANGES[0].title} | 1 | 1, 0, 0 | 1, 0, 0 | 1 of 1 |" in text
    assert f"| {real_changes.CHANGES[1].title} | 1 | 1, 0, 0 | 0, 0, 1 | 0 of 1 |" in text
    assert f"| {real_changes.CHANGES[2].title} | 1 | 0, 1, 0 | 0, 1, 0 | 1 of 1 |" in text
    assert f"| {real_changes.CHANGES[3].title} | 1 | 0, 0, 1 | 0, 0, 1 | 1 of 1 |" in text
    assert "50 us or more caught: 1 of 1" in text
    assert "5-50 us caught: 0 of 1" in text
    assert (
        f"false alarms (REGRESSION where the truth is not slower): 1 of 5 comparisons ({other})"
        in text
    )
    assert f"| {short} | 20.0 us | +5.0 % REGRESSION | +0.0 % SAME | NO |" in text


def test_the_table_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    result.write_text(json.dumps(merged({"a/b": [[1.0] * 3]})))
    one_line_error(script("table", tmp_path / "missing.json", result), "missing.json")
    one_line_error(script("table", result, result), "not a kernelwatch JSON report")


def test_the_gpu_script_is_valid_shell() -> None:
    assert_valid_shell(REPO / "scripts" / "gpu" / "real_changes.sh")


def test_the_committed_table_is_what_its_reports_give(tmp_path: Path) -> None:
    """tests/data/gpu/h200-card-7e29d515-real-changes-f820e80: summary.txt, as the GPU machine
    printed it, ends with the table that `table` makes of the two reports beside it."""
    data = REPO / "tests" / "data" / "gpu" / "h200-card-7e29d515-real-changes-f820e80"
    paths = []
    for name in ("ab.json", "run-report.json"):
        path = tmp_path / name
        path.write_bytes(gzip.decompress((data / f"{name}.gz").read_bytes()))
        paths.append(path)
    done = script("table", *paths)
    assert done.returncode == 0, done.stderr
    assert (data / "summary.txt").read_text().endswith(done.stdout)
    assert "| 34 | 6, 5, 23 | 6, 5, 23 | 34 of 34 |" in done.stdout
