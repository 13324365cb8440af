"""`kernelwatch bisect`: a temporary git repository of six commits whose CMake "build" makes a
fake benchmark binary (fakebench.py) from a behaviour file in the commit; commit 3 slows one
benchmark down. The bisection must name commit 3 and leave the user's checkout as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import fakebench
import pytest
from kernelwatch import ab, bisect
from test_ab import BENCHMARKS, CMAKE_LISTS, SLOWED, git, one_error

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed"),
]


class History:
    """Commits 1..6; from commit `slow_from` on, SLOWED is 25% slower. `behaviour` maps a
    commit number to extra keys of its fake binary (e.g. {"exit": 3}); `broken` commits fail
    to configure."""

    def __init__(
        self,
        root: Path,
        slow_from: int = 3,
        behaviour: dict[int, dict[str, Any]] | None = None,
        broken: frozenset[int] = frozenset(),
    ) -> None:
        self.root = root
        self.shas: dict[int, str] = {}
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        fakebench.make(root / "bench", "fake.py", BENCHMARKS)
        (root / ".gitignore").write_text(".kernelwatch/\n")
        for k in range(1, 7):
            config: dict[str, Any] = {
                "benchmarks": BENCHMARKS,
                "context": {"kernelwatch_git_commit": "@KW_COMMIT@"},
            }
            if k >= slow_from:
                config["slow"] = {SLOWED: 1.25}
            config.update((behaviour or {}).get(k, {}))
            (root / "bench" / "fake.json.in").write_text(json.dumps(config))
            cmake = CMAKE_LISTS + ("message(FATAL_ERROR broken)\n" if k in broken else "")
            (root / "CMakeLists.txt").write_text(cmake)
            (root / "notes.txt").write_text(f"change {k}\n")
            git(root, "add", ".")
            git(root, "commit", "-q", "-m", f"commit {k}")
            self.shas[k] = git(root, "rev-parse", "HEAD")

    def checkout_state(self) -> tuple[str, str, str, str]:
        return (
            git(self.root, "symbolic-ref", "HEAD"),
            git(self.root, "rev-parse", "HEAD"),
            git(self.root, "status", "--porcelain"),
            git(self.root, "for-each-ref", "refs/bisect"),
        )


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch) -> Path:
    """Where the bisection worktree goes: empty again after each bisection."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def history(tmp_path: Path, monkeypatch, temporary: Path) -> History:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    return History(tmp_path / "repo")


def run_bisect(run_cli, repo: History, good: str, bad: str, *argv: object):
    return run_cli(
        "bisect",
        good,
        bad,
        "--filter",
        "^fake/",
        "--repo",
        repo.root,
        "--rounds",
        2,
        "--out",
        repo.root.parent / "out",
        *argv,
    )


def assert_left_alone(repo: History, before: tuple[str, ...], temporary: Path) -> None:
    assert repo.checkout_state() == before
    worktrees = git(repo.root, "worktree", "list", "--porcelain")
    assert "kernelwatch-bisect-" not in worktrees
    assert not (repo.root / ".git" / "BISECT_LOG").exists()
    assert list(temporary.iterdir()) == []


def test_bisect_names_commit_3_and_leaves_the_checkout_alone(history, run_cli, temporary) -> None:
    before = history.checkout_state()
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6])
    assert done.status == 0, done.out + done.err
    first = done.out.splitlines()[0]
    assert first == f"first bad commit: {history.shas[3]} commit 3"
    assert "kernelwatch bisect: measuring BAD" in done.err and "Bisecting:" in done.err
    # --rounds 2 given, --repetitions left at ab's default, which no measurement derived
    assert (
        "against GOOD, 2 rounds x 4 repetitions a side (repetitions: the default, not derived "
        "from a measurement: docs/running.md, `ab`)\n" in done.err
    )
    assert_left_alone(history, before, temporary)
    # The candidates were built in ab's worktree cache, which stays for the next ab or bisect.
    cached = {p.name for p in (history.root / ".kernelwatch" / "worktrees").iterdir()}
    assert {history.shas[1], history.shas[3], history.shas[6]} <= cached
    log = (history.root.parent / "out" / "bisect.log").read_text()
    assert f"{history.shas[3]} is the first bad commit" in log
    report = history.root.parent / "out" / history.shas[3][:12] / "compare.txt"
    assert f"REGRESSION  {SLOWED}" in report.read_text()
    assert str(report) in done.out
    # As `ab` judges: the regression measured in four more rounds of each side, only it.
    bad = history.root.parent / "out" / history.shas[3][:12] / "B"
    assert sorted(p.name for p in bad.iterdir()) == [f"round-{k}.json" for k in range(1, 7)]
    assert {
        r["run_name"] for r in json.loads((bad / "round-6.json").read_text())["benchmarks"]
    } == {SLOWED}


def test_a_commit_that_does_not_build_is_skipped(tmp_path, monkeypatch, temporary, run_cli) -> None:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    # git tries commit 3 first (the middle of 2..5): it does not configure, so it is skipped,
    # and the neighbours decide.
    repo = History(tmp_path / "repo", slow_from=5, broken=frozenset({3}))
    before = repo.checkout_state()
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 0, done.out + done.err
    assert done.out.startswith(f"first bad commit: {repo.shas[5]} commit 5")
    assert f"{repo.shas[3][:12]} commit 3: skip (building B" in done.err
    assert_left_alone(repo, before, temporary)


def test_only_skipped_commits_left(tmp_path, monkeypatch, temporary, run_cli) -> None:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    repo = History(tmp_path / "repo", slow_from=3, broken=frozenset({2, 3, 4, 5}))
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 1, done.out + done.err
    assert "only commits that could not be measured are left" in done.out
    assert sorted(done.out.splitlines()[1:]) == sorted(
        [f"  {repo.shas[k]} commit {k}: could not be measured" for k in (2, 3, 4, 5)]
        + [f"  {repo.shas[6]} commit 6: bad"]
    )
    assert list(temporary.iterdir()) == []


def test_an_unmeasured_commit_before_the_first_bad_one_names_both(
    tmp_path, monkeypatch, temporary, run_cli
) -> None:
    """Commit 4 does not build, commit 5 is slow: git cannot tell which of the two made it
    slower. It said "the first bad commit is one of them", the commits not measured, naming
    none, where it may well be commit 5, measured bad."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    repo = History(tmp_path / "repo", slow_from=5, broken=frozenset({4}))
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 1, done.out + done.err
    lines = done.out.splitlines()
    assert lines[0].startswith(
        "kernelwatch bisect: only commits that could not be measured are left to test; the "
        "first bad commit is one of these 2 (see "
    )
    assert sorted(lines[1:]) == sorted(
        [f"  {repo.shas[4]} commit 4: could not be measured", f"  {repo.shas[5]} commit 5: bad"]
    )
    assert list(temporary.iterdir()) == []


def test_a_commit_that_crashes_is_skipped_when_bad_does_not(
    tmp_path, monkeypatch, temporary, run_cli
) -> None:
    """Commit 3 loses its CUDA context; BAD only regresses (from commit 5): commit 3 cannot be
    tested, so it is skipped (git's 125) and its neighbours decide."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    repo = History(tmp_path / "repo", slow_from=5, behaviour={3: {"exit": 3}})
    before = repo.checkout_state()
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 0, done.out + done.err
    assert done.out.startswith(f"first bad commit: {repo.shas[5]} commit 5")
    assert f"{repo.shas[3][:12]} commit 3: skip ({len(BENCHMARKS)} crashed: " in done.err
    assert "(BAD does not crash: cannot test)" in done.err
    assert_left_alone(repo, before, temporary)


def test_a_regression_undone_before_bad_is_not_the_one_hunted(
    tmp_path, monkeypatch, temporary, run_cli
) -> None:
    """Commit 3 slows another benchmark, commit 4 undoes it; SLOWED regresses from commit 5.
    BAD regresses SLOWED only, so commit 3 (git's first candidate) is good for this hunt: it
    was named, a commit that did not make BAD slower."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    other = "fake/kernel/1/manual_time"
    repo = History(tmp_path / "repo", slow_from=5, behaviour={3: {"slow": {other: 1.25}}})
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 0, done.out + done.err
    assert done.out.splitlines()[0] == f"first bad commit: {repo.shas[5]} commit 5"
    assert (
        f"{repo.shas[3][:12]} commit 3: good (no regression of those BAD shows; "
        f"1 not regressing at BAD: {other})" in done.err
    )
    assert list(temporary.iterdir()) == []


def test_a_crash_is_hunted_when_bad_crashes(tmp_path, monkeypatch, temporary, run_cli) -> None:
    """From commit 4 on the benchmarks crash (no slowdown anywhere): BAD crashes against GOOD,
    so a crash is what is hunted, and commit 4 is named."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    crash = {k: {"signal": "SIGSEGV"} for k in (4, 5, 6)}
    repo = History(tmp_path / "repo", slow_from=99, behaviour=crash)
    before = repo.checkout_state()
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 0, done.out + done.err
    assert done.out.splitlines()[0] == f"first bad commit: {repo.shas[4]} commit 4"
    assert "BAD regresses (5 crashed: " in done.err
    report = repo.root.parent / "out" / repo.shas[4][:12] / "compare.txt"
    assert "crashed: B round 1 of 2, B round 2 of 2: " in report.read_text()
    assert_left_alone(repo, before, temporary)


def test_bad_that_does_not_regress(history, run_cli) -> None:
    done = run_bisect(run_cli, history, history.shas[1], history.shas[2])
    assert done.status == 1, done.out + done.err
    assert "shows no regression" in done.out and "nothing to bisect" in done.out


def test_adjacent_commits_need_no_bisection(history, run_cli, temporary) -> None:
    done = run_bisect(run_cli, history, history.shas[2], history.shas[3])
    assert done.status == 0, done.out + done.err
    assert done.out.startswith(f"first bad commit: {history.shas[3]} commit 3")
    assert "Bisecting:" not in done.err


def test_no_gpu(history, run_cli, monkeypatch) -> None:
    real_build = ab.cmake_build

    def gpu_less(side: ab.Side, log: Path, **options: Any) -> None:
        real_build(side, log, **options)
        fakebench.configure(side.build_dir / "bench" / "kernelwatch_bench_fake", exit=4)

    monkeypatch.setattr(ab, "cmake_build", gpu_less)
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6])
    assert done.status == 4
    assert one_error(done.err, "kernelwatch: no CUDA GPU").endswith("; nothing to measure")


@pytest.mark.parametrize(
    ("revisions", "message"),
    [
        ((6, 1), "is not an ancestor of"),
        ((1, "no-such-commit"), "no-such-commit: not a commit in"),
        ((3, 3), "are the same commit"),
    ],
)
def test_bad_revisions(history, run_cli, revisions, message) -> None:
    good, bad = (history.shas[r] if isinstance(r, int) else r for r in revisions)
    before = history.checkout_state()
    done = run_bisect(run_cli, history, good, bad)
    assert done.status == 2 and message in one_error(done.err)
    assert history.checkout_state() == before


def test_filter_is_required_and_checked(history, run_cli) -> None:
    done = run_cli("bisect", history.shas[1], history.shas[6], "--repo", history.root)
    assert done.status == 2 and "--filter REGEX is required" in one_error(done.err)
    done = run_cli(
        "bisect", history.shas[1], history.shas[6], "--repo", history.root, "--filter", "^nope$"
    )
    assert done.status == 2 and "matches no benchmark" in one_error(done.err)


def test_interrupted_bisection_removes_its_worktree(history, temporary) -> None:
    before = history.checkout_state()
    step = [
        sys.executable,
        "-c",
        "import time; print('kernelwatch step', flush=True); time.sleep(60)",
    ]

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bisect.run_bisect(
            history.root,
            history.shas[1],
            history.shas[6],
            lambda worktree: step,
            temporary / "no-error.json",
            interrupt,
        )
    assert_left_alone(history, before, temporary)


@pytest.mark.parametrize(
    "option",
    [["--json", "r.json"], ["--junit", "r.xml"], ["--markdown", "r.md"], ["--format", "json"]],
)
def test_report_options_it_never_writes_are_refused(run_cli, tmp_path, option) -> None:
    # bisect took compare's report options and wrote none of them: `--json r.json` ended
    # with exit 0 and no r.json (each step's comparison is in DIR/<sha>/compare.txt).
    done = run_cli("bisect", "a", "b", "--filter", "x", "--repo", tmp_path, *option)
    assert done.status == 2 and f"unrecognized arguments: {option[0]}" in one_error(done.err)
    assert list(tmp_path.iterdir()) == []


def test_no_gpu_is_said_before_building(history, run_cli, monkeypatch) -> None:
    fakebench.no_nvidia_smi(monkeypatch, devices=False)
    built: list[str] = []
    monkeypatch.setattr(ab, "cmake_build", lambda side, log, **options: built.append(side.sha))
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6])
    assert done.status == 4
    assert one_error(done.err, "kernelwatch: no CUDA GPU").endswith("; nothing to measure")
    assert built == []


def test_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kernelwatch", "bisect", "--help"],
        check=False,
        capture_output=True,
        text=True,
        env=bisect.step_environment(),
    )
    assert done.returncode == 0, done.stderr
    for text in ("GOOD", "--filter REGEX", "--rounds", "first bad commit", "4  no CUDA GPU"):
        assert text in done.stdout
    assert "--oracle" not in done.stdout


def test_an_earlier_bisections_folder_is_refused(history, run_cli, temporary) -> None:
    """Each commit's comparison reads every round in its folder: a re-run there with fewer
    --rounds judged the earlier run's later rounds too."""
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6], "--rounds", 3)
    assert done.status == 0, done.out + done.err
    before = history.checkout_state()
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6])
    assert done.status == 2
    assert "already holds an earlier bisection's runs" in one_error(done.err)
    assert "measuring BAD" not in done.err  # refused before anything was built or run
    assert_left_alone(history, before, temporary)
