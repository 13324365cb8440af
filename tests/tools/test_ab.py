"""`kernelwatch ab`: a tiny git repository whose "benchmark binary" is a fake (fakebench.py),
built by an injected build step (and once by real CMake)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import fakebench
import pytest
from conftest import git
from kernelwatch import ab, cli, tool
from kernelwatch.commands import _options as options
from kernelwatch.errors import InputError

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BENCHMARKS = {f"fake/kernel/{n}/manual_time": 100.0 + 10 * n for n in range(5)}
SLOWED = "fake/kernel/3/manual_time"


def one_error(err: str, prefix: str = "kernelwatch: error: ") -> str:
    lines = err.splitlines()
    assert lines and lines[-1].startswith(prefix) and "Traceback" not in err, err
    assert sum(line.startswith("kernelwatch: error") for line in lines) <= 1, err
    return lines[-1]


class Repo:
    """Commit A: the fake benchmarks. Commit B: one of them 20% slower."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.trace = root.parent / "trace.log"
        self.builds: list[str] = []
        root.mkdir()
        git(root, "init", "-q")
        fake = fakebench.make(root / "bench", "fake.py", BENCHMARKS, trace=str(self.trace))
        assert fake.with_name("fake.py.json").is_file()
        (root / "CMakeLists.txt").write_text(CMAKE_LISTS)
        (root / "bench" / "fake.json.in").write_text(
            json.dumps(
                {
                    "benchmarks": BENCHMARKS,
                    "trace": str(self.trace),
                    "context": {"kernelwatch_git_commit": "@KW_COMMIT@"},
                }
            )
        )
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "A")
        self.a = git(root, "rev-parse", "HEAD")
        fakebench.configure(fake, slow={SLOWED: 1.2})
        (root / "bench" / "fake.json.in").write_text(
            json.dumps(
                {
                    "benchmarks": BENCHMARKS,
                    "slow": {SLOWED: 1.2},
                    "trace": str(self.trace),
                    "context": {"kernelwatch_git_commit": "@KW_COMMIT@"},
                }
            )
        )
        git(root, "commit", "-q", "-am", "B: kernel 3 slower")
        self.b = git(root, "rev-parse", "HEAD")
        self.extra: dict = {}

    def build(self, side: ab.Side, log: Path, **options: object) -> None:
        """The injected build step: 'compiles' bench/fake.py into build/bench."""
        self.builds.append(side.sha)
        self.options = options
        assert log.parent == side.worktree
        folder = side.build_dir / "bench"
        folder.mkdir(parents=True, exist_ok=True)
        binary = folder / "kernelwatch_bench_fake"
        shutil.copy2(side.worktree / "bench" / "fake.py", binary)
        config = json.loads((side.worktree / "bench" / "fake.py.json").read_text())
        config["context"] = {"kernelwatch_git_commit": side.sha}
        config.update(self.extra)
        Path(f"{binary}.json").write_text(json.dumps(config))

    def traced(self) -> list[str]:
        """Which side ran, in order: "A" or "B" per measuring run."""
        if not self.trace.exists():
            return []
        sides = []
        for line in self.trace.read_text().splitlines():
            sides.append("A" if f"/{self.a}/" in line else "B" if f"/{self.b}/" in line else "?")
        return sides


CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.16)
project(fake NONE)
set(KW_COMMIT "$ENV{KERNELWATCH_GIT_COMMIT}")
configure_file(bench/fake.json.in ${CMAKE_BINARY_DIR}/bench/kernelwatch_bench_fake.json @ONLY)
file(COPY bench/fake.py DESTINATION ${CMAKE_BINARY_DIR}/stage FILE_PERMISSIONS
     OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
file(RENAME ${CMAKE_BINARY_DIR}/stage/fake.py ${CMAKE_BINARY_DIR}/bench/kernelwatch_bench_fake)
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Repo:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    made = Repo(tmp_path / "repo")
    monkeypatch.setattr(ab, "cmake_build", made.build)
    return made


def run_ab(run_cli, repo: Repo, *argv: object, rounds: int = 3, out: str = "out"):
    return run_cli(
        "ab", *argv, "--repo", repo.root, "--rounds", rounds, "--out", repo.root.parent / out
    )


def test_help(run_cli) -> None:
    out = run_cli("ab", "--help").out
    assert "usage: kernelwatch ab" in out and "exit status" in out
    assert "default 3" in out and "default 4" in out and "4  no CUDA GPU" in out


# 3 rounds and 4 confirming ones, the order turned every round (ab.in_order): A B B A A B ...
SEVEN_ROUNDS = ["A", "B", "B", "A"] * 3 + ["A", "B"]


def regressions_in(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if line.startswith("REGRESSION")]


def test_a_slower_kernel_is_found_and_nothing_else(repo: Repo, run_cli) -> None:
    """Three rounds a side, then the regression alone in four more (the default --confirm),
    where it regresses again: it fails, and `compare A/ B/` of the folders says the same."""
    done = run_ab(run_cli, repo, repo.a, repo.b, "--json", "ab.json")
    assert done.status == 1, done.out + done.err
    assert regressions_in(done.out) == [SLOWED]
    assert done.out.startswith("kernelwatch ab: real_time")
    assert repo.traced() == SEVEN_ROUNDS  # each run its own process
    assert repo.builds == [repo.a, repo.b]
    out = repo.root.parent / "out"
    for side, sha in (("A", repo.a), ("B", repo.b)):
        files = sorted(p.name for p in (out / side).iterdir())
        assert files == [f"round-{k}.json" for k in range(1, 8)]
        context = json.loads((out / side / "round-2.json").read_text())["context"]
        assert context["kernelwatch_git_commit"] == sha and context["kernelwatch_ab_sha"] == sha
        assert context["kernelwatch_repetitions"] == "4"
        assert context["kernelwatch_run_purpose"] == f"ab {side} round 2 of 3"
        confirming = json.loads((out / side / "round-4.json").read_text())
        assert {row["run_name"] for row in confirming["benchmarks"]} == {SLOWED}
        assert confirming["context"]["kernelwatch_run_purpose"] == f"ab {side} round 4 of 7"
    note = "1 regression(s) after 3 round(s) measured in 4 more round(s) of each side: 1 still"
    assert note in done.out
    notes = json.loads(Path("ab.json").read_text())["notes"]
    assert any(n.startswith(note) for n in notes)
    # 4 repetitions is the default, which no measurement derived (run_ab types --rounds 3):
    # said once, in each output
    unmeasured = "3 rounds x 4 repetitions a side (repetitions: the default, not derived from "
    assert done.out.count(unmeasured) == 1 and sum(n.startswith(unmeasured) for n in notes) == 1
    again = run_cli("compare", out / "A", out / "B", "--json", "c.json")
    assert again.status == 1 and regressions_in(again.out) == [SLOWED]
    verdicts = [
        {n: (r["verdict"], r["limit"]) for n, r in report_of(Path(f)).items()}
        for f in ("ab.json", "c.json")
    ]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == len(BENCHMARKS)
    for sha in (repo.a, repo.b):
        assert (repo.root / ".kernelwatch" / "worktrees" / sha / "build" / "bench").is_dir()


def test_a_disturbance_of_the_first_rounds_is_not_confirmed(
    repo: Repo, run_cli, monkeypatch
) -> None:
    """B's kernel 3 is slow in B's first three processes only (a slow mode of the process,
    not the code): a REGRESSION after three rounds, none over all seven once four more rounds
    measured it; exit 0, the note names it."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "B":
            binary = side.build_dir / "bench" / "kernelwatch_bench_fake"
            fakebench.configure(binary, slow_runs=3)
            Path(f"{binary}.runs").unlink(missing_ok=True)  # counted anew for each ab

    monkeypatch.setattr(ab, "cmake_build", build)
    first = run_ab(run_cli, repo, repo.a, repo.b, "--confirm", "0", out="first")
    assert first.status == 1 and regressions_in(first.out) == [SLOWED], first.out + first.err
    done = run_ab(run_cli, repo, repo.a, repo.b, "--confirm", "4")
    assert done.status == 0, done.out + done.err
    assert regressions_in(done.out) == []
    assert (
        "1 regression(s) after 3 round(s) measured in 4 more round(s) of each side: 0 still "
        f"regress over all 7 rounds, not {SLOWED} (REGRESSION +19" in done.out
    )
    assert sorted(p.name for p in (repo.root.parent / "out" / "B").iterdir())[-1] == "round-7.json"


def test_the_same_commit_twice_is_the_same(repo: Repo, run_cli) -> None:
    done = run_ab(run_cli, repo, repo.b, "HEAD", "--cmake-arg=-DX=1", "--target", "t1", rounds=2)
    assert done.status == 0, done.out + done.err
    assert repo.builds == [repo.b]  # one build for the one commit
    assert repo.options == {"cmake_args": ["-DX=1"], "targets": ["t1"], "cancel": None}


def test_worktrees_and_builds_are_reused(repo: Repo, run_cli) -> None:
    assert run_ab(run_cli, repo, repo.a, repo.b, rounds=2).status == 1
    worktrees = git(repo.root, "worktree", "list")
    assert (
        run_ab(
            run_cli, repo, "HEAD~1", "HEAD", "--filter", "^fake/kernel/[34]/", rounds=2, out="o2"
        ).status
        == 1
    )
    assert git(repo.root, "worktree", "list") == worktrees and len(worktrees.splitlines()) == 3
    assert repo.builds == [repo.a, repo.b] * 2  # incremental builds, same folders


def test_an_earlier_run_in_out_is_refused_and_kept(repo: Repo, run_cli) -> None:
    assert run_ab(run_cli, repo, repo.a, repo.b, rounds=3).status == 1
    out = repo.root.parent / "out"
    before = {p: p.read_bytes() for p in sorted(out.rglob("round-*.json"))}
    done = run_ab(run_cli, repo, repo.b, repo.b, rounds=1)
    assert done.status == 2 and "already holds runs" in done.err, done.err
    assert {p: p.read_bytes() for p in sorted(out.rglob("round-*.json"))} == before
    assert repo.traced() == SEVEN_ROUNDS  # nothing measured the second time (3 + 4 confirming)


def test_an_out_another_ab_writes_is_refused_before_anything_is_built(repo: Repo, run_cli) -> None:
    """Two `ab --out DIR` at once each wrote round files into DIR and judged the other's
    rounds with its own: the second is refused in one line, building and measuring nothing."""
    from kernelwatch import locks

    out = repo.root.parent / "out"
    with locks.writing([("--out", out)]):
        done = run_ab(run_cli, repo, repo.a, repo.b, rounds=1)
    assert done.status == 2
    assert one_error(done.err) == (
        f"kernelwatch: error: --out {out}: another kernelwatch command is writing it now; "
        "name another path, or run this one when that one has ended"
    )
    assert repo.builds == [] and repo.traced() == [] and not out.exists()


def test_build_only_then_no_build_without_git(repo: Repo, run_cli, tmp_path: Path) -> None:
    done = run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
    assert done.status == 0 and repo.traced() == []
    assert "A (" in done.err and "built in" in done.err
    # As on a machine that got the build folders but not the git history:
    copy = tmp_path / "copy"
    for sha in (repo.a, repo.b):
        shutil.copytree(
            repo.root / ".kernelwatch" / "worktrees" / sha / "build",
            copy / ".kernelwatch" / "worktrees" / sha / "build",
        )
    done = run_cli(
        "ab", repo.a, repo.b, "--no-build", "--repo", copy, "--rounds", 2, "--out", tmp_path / "o2"
    )
    assert done.status == 1, done.err
    assert repo.builds == [repo.a, repo.b]  # not built again


def test_real_cmake_build(tmp_path: Path, monkeypatch, run_cli) -> None:
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    made = Repo(tmp_path / "repo")
    done = run_ab(run_cli, made, made.a, made.b, "--target", "all", rounds=2)
    assert done.status == 1, done.out + done.err
    assert [line.split()[1] for line in done.out.splitlines() if line.startswith("REGRESSION")] == [
        SLOWED
    ]
    context = json.loads((tmp_path / "out" / "B" / "round-1.json").read_text())["context"]
    assert context["kernelwatch_git_commit"] == made.b  # KERNELWATCH_GIT_COMMIT reached the build
    log = made.root / ".kernelwatch" / "worktrees" / made.a / f".{ab.BUILD_LOG}"
    assert "-DCMAKE_BUILD_TYPE=Release" in log.read_text()
    assert "--target all" in log.read_text()


# --- failures -----------------------------------------------------------------------------------


def test_unknown_commit(repo: Repo, run_cli) -> None:
    done = run_ab(run_cli, repo, repo.a, "no-such-branch")
    assert done.status == 2
    assert f"no-such-branch: not a commit in {repo.root}" in one_error(done.err)


def test_not_a_repository(tmp_path: Path, run_cli) -> None:
    (tmp_path / "plain").mkdir()
    done = run_cli("ab", "A", "B", "--repo", tmp_path / "plain")
    assert done.status == 2 and "not inside a git repository" in one_error(done.err)
    done = run_cli("ab", "A", "B", "--repo", tmp_path / "absent")
    assert done.status == 2 and "no such directory" in one_error(done.err)


def test_build_failure(repo: Repo, run_cli, monkeypatch) -> None:
    def broken(side: ab.Side, log: Path, **options: object) -> None:
        raise InputError(f"building {side.name} failed: see {log}")

    monkeypatch.setattr(ab, "cmake_build", broken)
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 2 and "building A failed" in one_error(done.err)


def test_real_build_failure_names_the_log(tmp_path: Path) -> None:
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    source = tmp_path / "src"
    source.mkdir()
    (source / "CMakeLists.txt").write_text("project(broken NONE)\nmessage(FATAL_ERROR nope)\n")
    side = ab.Side("A", "main", "a" * 40, source, source / "build")
    with pytest.raises(InputError, match=r"building A \(main, aaaaaaaaaaaa\) failed: .* see "):
        ab.cmake_build(side, tmp_path / "build.log")
    assert "nope" in (tmp_path / "build.log").read_text()


def test_no_gpu(repo: Repo, run_cli) -> None:
    repo.extra = {"exit": 4}
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 4
    assert one_error(done.err, "kernelwatch: no CUDA GPU").endswith("; nothing to measure")


def test_no_gpu_is_said_before_building(repo: Repo, run_cli, monkeypatch) -> None:
    fakebench.no_nvidia_smi(monkeypatch, devices=False)
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 4
    assert one_error(done.err, "kernelwatch: no CUDA GPU").endswith("; nothing to measure")
    assert repo.builds == []  # two builds (minutes) spared for an answer known at once
    worktrees = repo.root / ".kernelwatch" / "worktrees"
    assert not worktrees.exists()  # nor two checkouts left behind (found by an audit)
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0  # needs no GPU
    assert repo.builds == [repo.a, repo.b]
    assert repo.traced() == []


def test_a_crash(repo: Repo, run_cli) -> None:
    repo.extra = {"exit": 3}
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 3 and "lost its CUDA context" in one_error(done.err)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rounds", "0"], "--rounds 0: must be at least 1"),
        (["--confirm", "-1"], "--confirm -1: must be 0 or more"),
        (["--repetitions", "0"], "--repetitions 0: must be at least 1"),
        (["--filter", "^none$"], "--filter '^none$' matches no benchmark"),
        (["--bench", "bench/absent"], "no such file"),
        (["--alpha", "3"], "alpha 3: must be at least 1e-15 and below 1"),
    ],
)
def test_bad_input(repo: Repo, run_cli, argv: list[str], message: str) -> None:
    done = run_cli("ab", repo.a, repo.b, "--repo", repo.root, *argv)
    assert done.status == 2 and message in one_error(done.err)


def test_a_foreign_folder_in_the_worktree_place(repo: Repo, run_cli) -> None:
    squatter = repo.root / ".kernelwatch" / "worktrees" / repo.a
    squatter.mkdir(parents=True)
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 2 and "exists but is not a worktree" in one_error(done.err)


def slow_b_build(
    repo: Repo, monkeypatch, tmp_path: Path, seconds: float, extra: dict[str, object]
) -> tuple[Path, dict[str, float]]:
    """B's build made `seconds` slower; the fake binaries log their spans. Returns the span log
    and, filled as the builds end, each side's build end time."""
    monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    spans = tmp_path / "spans.log"
    repo.extra = {"spans": str(spans), **extra}
    built: dict[str, float] = {}

    def slow_build(side: ab.Side, log: Path, **options: object) -> None:
        if side.name == "B":
            time.sleep(seconds)
        repo.build(side, log, **options)
        built[side.name] = time.time()

    monkeypatch.setattr(ab, "cmake_build", slow_build)
    return spans, built


@pytest.mark.parametrize("no_overlap", [False, True])
def test_b_builds_while_a_is_measured(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path, no_overlap: bool
) -> None:
    """With --measure-all (the selection of identical builds needs B built first)."""
    # 4 s: with 1.5, a loaded 2-core machine started A's first process after B had built
    spans, built = slow_b_build(repo, monkeypatch, tmp_path, 4.0, {"sleep": 0.2})
    done = run_ab(
        run_cli, repo, repo.a, repo.b, "--measure-all", *(["--no-overlap"] if no_overlap else [])
    )
    assert done.status == 1, done.err  # B's slower kernel is still found
    assert repo.traced() == SEVEN_ROUNDS  # 3 rounds, then 4 confirming the regression
    first = json.loads(spans.read_text().splitlines()[0])
    assert (first["start"] < built["B"]) is not no_overlap


def test_the_selection_builds_b_before_measuring(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    spans, built = slow_b_build(repo, monkeypatch, tmp_path, 1.0, {"sleep": 0.1})
    done = run_ab(run_cli, repo, repo.a, repo.b, rounds=2)
    assert done.status in (0, 1), done.err
    assert json.loads(spans.read_text().splitlines()[0])["start"] >= built["B"]


def test_plain_binaries_wait_for_bs_build(repo: Repo, run_cli, monkeypatch, tmp_path: Path) -> None:
    """A plain Google Benchmark binary times the host: B's build beside A's first round would
    slow A (and hide B's slowdown), so B is built before anything is measured."""
    spans, built = slow_b_build(repo, monkeypatch, tmp_path, 1.0, {"counters": False})
    done = run_ab(run_cli, repo, repo.a, repo.b, "--measure-all")
    assert done.status == 1, done.err
    assert "plain Google Benchmark binary (host-timed): waiting for B's build" in done.err
    first = json.loads(spans.read_text().splitlines()[0])
    assert first["start"] >= built["B"]
    assert repo.traced() == SEVEN_ROUNDS  # 3 rounds, then 4 confirming the regression


def test_the_worktree_cache_is_ignored_by_git(repo: Repo, run_cli) -> None:
    """Other projects do not ignore .kernelwatch/: `git add -A` would add the worktrees."""
    (repo.root / ".kernelwatch").mkdir()  # made by an earlier kernelwatch, without the file
    run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""
    git(repo.root, "add", "-A")
    assert git(repo.root, "diff", "--cached", "--name-only") == ""


def test_a_failed_measurement_ends_bs_build_at_once(repo: Repo, run_cli, monkeypatch) -> None:
    """A's measurement fails (its binary refuses the arguments; a crash would only cost that
    round) while B builds in the background: the error is reported now, not after B's build,
    and the build's processes do not run on."""
    started = threading.Event()

    def endless_b_build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "B":
            started.set()
            tool.run(["sleep", "300"], cancel=options.get("cancel"))

    monkeypatch.setattr(ab, "cmake_build", endless_b_build)
    repo.extra = {"exit": 2}
    began = time.monotonic()
    done = run_ab(run_cli, repo, repo.a, repo.b, "--measure-all")  # B builds while A measures
    assert done.status == 2 and "refused the arguments" in one_error(done.err)
    assert started.is_set() and time.monotonic() - began < 60


OTHER = {"other/kernel/manual_time": 300.0}


def two_binaries(repo: Repo, monkeypatch, **other: dict) -> None:
    """Each side builds a second binary, kernelwatch_bench_other, behaving as other[side]."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        fakebench.make(
            side.build_dir / "bench", "kernelwatch_bench_other", OTHER, **other.get(side.name, {})
        )

    monkeypatch.setattr(ab, "cmake_build", build)


def report_of(path: Path) -> dict[str, dict]:
    return {row["name"]: row for row in json.loads(path.read_text())["benchmarks"]}


def test_a_crash_of_b_fails_as_its_own_row_and_the_rest_is_compared(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    """B's other binary crashes in round 2 only: every other benchmark is compared as usual,
    the crashed one is an ERROR that names the side, the round and the signal, even with
    --allow-errors; exit 3; every round file kept."""
    two_binaries(repo, monkeypatch, B={"signal": "SIGSEGV", "signal_runs": [1]})
    json_out, markdown = tmp_path / "ab.json", tmp_path / "ab.md"
    done = run_ab(
        run_cli, repo, repo.a, repo.b, "--json", json_out, "--markdown", markdown, "--allow-errors"
    )
    assert done.status == 3, done.out + done.err
    rows = report_of(json_out)
    crashed = rows["other/kernel/manual_time"]
    assert crashed["verdict"] == "ERROR" and crashed["failed"] and crashed["crashed"]
    assert "crashed: B round 2 of 3: " in crashed["reason"] and "SIGSEGV" in crashed["reason"]
    assert "the runs that finished: SAME" in crashed["reason"]  # rounds 1 and 3 measured it
    assert rows[SLOWED]["verdict"] == "REGRESSION" and not rows[SLOWED]["crashed"]
    assert {r["verdict"] for n, r in rows.items() if n not in (SLOWED, *OTHER)} == {"SAME"}
    assert "1 regression, 1 crashed" in markdown.read_text().splitlines()[0]
    assert "ERROR" in done.out and "B round 2 of 3" in done.err
    out = repo.root.parent / "out"
    for side in ("A", "B"):  # rounds 4 to 7 confirm kernel 3, in the fake binary only
        files = sorted(p.name for p in (out / side).iterdir())
        assert files == [f"round-{k}.json" for k in range(1, 8)]
        confirming = json.loads((out / side / "round-7.json").read_text())["benchmarks"]
        assert {row["run_name"] for row in confirming} == {SLOWED}
    context = json.loads((out / "B" / "round-2.json").read_text())["context"]
    assert context["kernelwatch_no_result"] == ["other/kernel/manual_time"]
    assert "SIGSEGV" in context["kernelwatch_failed_processes"][0]


def test_unmeasured_defaults_are_said_only_where_used() -> None:
    """defaults.AB_ROUNDS and AB_REPETITIONS were never derived from a measurement: an `ab`
    (or `bisect`) that leaves either at its default says so; one that chose both does not,
    even where it typed the defaults' values (`--rounds 3 --repetitions 4`)."""
    said = "not derived from a measurement: docs/running.md, `ab`)"
    both = {"rounds", "repetitions"}
    assert ab.unmeasured(3, 4, both) == f"3 rounds x 4 repetitions a side (defaults, {said}"
    assert (
        ab.unmeasured(5, 4, {"repetitions"})
        == f"5 rounds x 4 repetitions a side (repetitions: the default, {said}"
    )
    assert (
        ab.unmeasured(3, 10, {"rounds"})
        == f"3 rounds x 10 repetitions a side (rounds: the default, {said}"
    )
    assert ab.unmeasured(5, 10, set()) is None
    assert ab.unmeasured(3, 4, set()) is None
    for command in ("ab", "bisect"):
        parsed = [
            cli.build_parser().parse_args([command, "A", "B", *typed])
            for typed in ([], ["--rounds", "3"], ["--rounds", "3", "--repetitions", "4"])
        ]
        assert [options.defaulted(a, "rounds", "repetitions") for a in parsed] == [
            both,
            {"repetitions"},
            set(),
        ]


def test_b_crashing_its_only_binary_every_round(repo: Repo, run_cli, monkeypatch) -> None:
    """Nothing of B finished: every benchmark is a crashed ERROR, the report is still shown."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "B":
            fakebench.configure(side.build_dir / "bench" / "kernelwatch_bench_fake", exit=3)

    monkeypatch.setattr(ab, "cmake_build", build)
    done = run_ab(run_cli, repo, repo.a, repo.b, rounds=2)
    assert done.status == 3, done.out + done.err
    errors = [line for line in done.out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == len(BENCHMARKS) and all(
        "crashed: B round 1 of 2, B round 2 of 2: " in line for line in errors
    ), done.out
    assert "lost its CUDA context" in done.out
    # each round of B kept as its crash, for compare of the folders (test_ab_crash_round.py)
    for side in ("A", "B"):
        assert len(list((repo.root.parent / "out" / side).iterdir())) == 2


def test_a_crash_on_a_only_does_not_fail_b(repo: Repo, run_cli, monkeypatch, tmp_path) -> None:
    """A's other binary crashes every round: its benchmark is an ERROR that fails nothing (B
    measured it, nothing to compare with); the exit status is the comparison's (1: kernel 3)."""
    two_binaries(repo, monkeypatch, A={"signal": "SIGABRT"})
    json_out = tmp_path / "ab.json"
    done = run_ab(run_cli, repo, repo.a, repo.b, "--json", json_out, "--repetitions", 3, rounds=2)
    assert done.status == 1, done.out + done.err
    assert "not derived from a measurement" not in done.out  # --rounds and --repetitions chosen
    row = report_of(json_out)["other/kernel/manual_time"]
    assert row["verdict"] == "ERROR" and not row["failed"] and row["crashed"]
    assert row["reason"].startswith("baseline crashed: A round 1 of 2, A round 2 of 2: ")
    assert row["reason"].endswith("; not compared")


def test_a_benchmark_bs_build_no_longer_registers_is_missing_not_failing(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    """B removed A's other binary: its benchmark is MISSING without failing (B's binaries do
    not list it); the exit status is the comparison's (1: kernel 3 slower), the heading names no
    MISSING. A benchmark B lists but crashes on still fails (the test above)."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "A":
            fakebench.make(side.build_dir / "bench", "kernelwatch_bench_other", OTHER)

    monkeypatch.setattr(ab, "cmake_build", build)
    json_out, markdown = tmp_path / "ab.json", tmp_path / "ab.md"
    done = run_ab(
        run_cli, repo, repo.a, repo.b, "--json", json_out, "--markdown", markdown, rounds=2
    )
    assert done.status == 1, done.out + done.err
    row = report_of(json_out)["other/kernel/manual_time"]
    assert (row["verdict"], row["failed"], row["reason"]) == (
        "MISSING",
        False,
        "not in this build: removed or renamed",
    )
    assert markdown.read_text().splitlines()[0] == "### kernelwatch ab: 1 regression"


def test_a_gpu_lost_mid_round_ends_ab_with_4(repo: Repo, run_cli, monkeypatch) -> None:
    two_binaries(repo, monkeypatch, B={"exit": 4})
    done = run_ab(run_cli, repo, repo.a, repo.b)
    assert done.status == 4, done.out + done.err
    assert one_error(done.err, "kernelwatch: no CUDA GPU").endswith("; nothing to measure")
    out = repo.root.parent / "out"
    assert sorted(p.name for p in (out / "A").iterdir()) == ["round-1.json"]
    kept = json.loads((out / "B" / "round-1.json").read_text())
    assert kept["context"]["kernelwatch_no_result"] == list(OTHER)


# --- benchmarks of binaries built identically: not measured (ab.py) --------------------------

WRAPPER = """\
#include <stdio.h>
#include <unistd.h>
static const char commit[] = COMMIT; /* as the generated *_build_info.cpp embeds it */
int main(int argc, char** argv) {
  if (argc < 0) printf("%s %s %d\\n", commit, SCRIPT, VERSION);
  execv(SCRIPT, argv);
  return 127;
}
"""


def elf_binaries(repo: Repo, monkeypatch, *, fake: bool = True, **changed: dict) -> Path:
    """Each side builds kernelwatch_bench_other, an ELF program (cc) that runs a fake binary
    beside it, with a CMakeCache.txt and the target's flag files; changed[side] may set its
    "version" (a byte of its code) or "flags" (its flags.make). `fake`: the Python fake binary
    (not ELF: always measured) is built too. Returns the other binary's trace."""
    if shutil.which("cc") is None:
        pytest.skip("cc is not installed")
    trace = repo.root.parent / "other-trace.log"

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        bench = side.build_dir / "bench"
        if not fake:
            (bench / "kernelwatch_bench_fake").unlink()
        script = fakebench.make(bench, "kernelwatch_bench_other.py", OTHER, trace=str(trace))
        source = side.build_dir / "other.c"
        source.write_text(WRAPPER)
        version = changed.get(side.name, {}).get("version", 1)
        defines = [f'-DCOMMIT="{side.sha}"', f'-DSCRIPT="{script}"', f"-DVERSION={version}"]
        subprocess.run(
            ["cc", "-O2", "-o", str(bench / "kernelwatch_bench_other"), str(source), *defines],
            check=True,
        )
        (side.build_dir / "CMakeCache.txt").write_text(f"fake_SOURCE_DIR:STATIC={side.worktree}\n")
        target = bench / "CMakeFiles" / "kernelwatch_bench_other.dir"
        target.mkdir(parents=True, exist_ok=True)
        flags = changed.get(side.name, {}).get("flags", "-O2")
        (target / "flags.make").write_text(f"C_FLAGS = {flags} -I{side.worktree}\n")
        (target / "link.txt").write_text(f"cc -o {bench}/kernelwatch_bench_other\n")

    monkeypatch.setattr(ab, "cmake_build", build)
    return trace


def test_a_binary_built_identically_is_not_measured(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    """The other binary differs only by each side's commit and paths: not measured on either
    side, an IDENTICAL row in every format, failing nothing; the fake (not ELF) is measured."""
    trace = elf_binaries(repo, monkeypatch)
    json_out, markdown, junit = tmp_path / "ab.json", tmp_path / "ab.md", tmp_path / "ab.xml"
    done = run_ab(
        run_cli, repo, repo.a, repo.b, "--json", json_out, "--markdown", markdown, "--junit", junit
    )
    assert done.status == 1, done.out + done.err  # kernel 3 of the fake, measured
    assert not trace.exists() and repo.traced() == SEVEN_ROUNDS  # 4 rounds confirming
    row = report_of(json_out)["other/kernel/manual_time"]
    assert (row["verdict"], row["failed"], row["reason"]) == (
        "IDENTICAL",
        False,
        "identical build: not measured",
    )
    assert report_of(json_out)[SLOWED]["verdict"] == "REGRESSION"
    assert "1 benchmark(s) of binaries built identically on both sides: not measured" in done.err
    assert any(
        line.startswith("IDENTICAL") and "other/kernel/manual_time" in line
        for line in done.out.splitlines()
    ), done.out
    text = markdown.read_text()
    assert "<summary>1 built identically, not measured</summary>" in text
    assert "| **IDENTICAL** | `other/kernel/manual_time` |" in text.split("<summary>1 built")[1]
    assert '<skipped message="IDENTICAL: identical build: not measured"' in junit.read_text()


def test_a_byte_changed_is_measured(repo: Repo, run_cli, monkeypatch, tmp_path: Path) -> None:
    trace = elf_binaries(repo, monkeypatch, B={"version": 2})
    json_out = tmp_path / "ab.json"
    done = run_ab(run_cli, repo, repo.a, repo.b, "--json", json_out, rounds=2)
    assert done.status == 1, done.out + done.err
    assert len(trace.read_text().splitlines()) == 4  # A B B A
    assert report_of(json_out)["other/kernel/manual_time"]["verdict"] == "SAME"


def test_a_build_setting_changed_is_measured(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    trace = elf_binaries(repo, monkeypatch, B={"flags": "-O2 -DFAST_MATH"})
    done = run_ab(run_cli, repo, repo.a, repo.b, rounds=2)
    assert done.status == 1, done.out + done.err
    assert len(trace.read_text().splitlines()) == 4


def test_measure_all_measures_identical_builds(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    trace = elf_binaries(repo, monkeypatch)
    done = run_ab(run_cli, repo, repo.a, repo.b, "--measure-all", rounds=2)
    assert done.status == 1, done.out + done.err
    assert len(trace.read_text().splitlines()) == 4 and "IDENTICAL" not in done.out


def test_nothing_to_measure_when_every_binary_is_identical(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    trace = elf_binaries(repo, monkeypatch, fake=False)
    json_out = tmp_path / "ab.json"
    done = run_ab(run_cli, repo, repo.a, repo.b, "--json", json_out)
    assert done.status == 0, done.out + done.err
    assert not trace.exists() and not (repo.root.parent / "out" / "A").exists()
    assert [r["verdict"] for r in report_of(json_out).values()] == ["IDENTICAL"]
    assert f"baseline  {repo.root / '.kernelwatch' / 'worktrees' / repo.a / 'build'}" in done.out


def test_one_commit_twice_is_measured_and_identical_rows_are_not_explained(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    """ab of one commit twice is an A/A run: measured by intent. --explain leaves IDENTICAL
    rows alone (the same binary on both sides)."""
    trace = elf_binaries(repo, monkeypatch)
    done = run_ab(run_cli, repo, repo.b, repo.b, rounds=2)
    assert done.status == 0, done.out + done.err
    assert len(trace.read_text().splitlines()) == 4 and "IDENTICAL" not in done.out
    done = run_ab(run_cli, repo, repo.a, repo.b, "--explain", "^other/", rounds=2, out="o2")
    assert done.status == 1 and "IDENTICAL" in done.out, done.out + done.err
    assert "explaining 1 benchmark(s)" in done.out + done.err  # kernel 3 only


H200_CONFIRM = Path(__file__).parents[1] / "data" / "gpu" / "h200-card-fe04b4df-ab-confirm"


def test_the_h200_ab_with_confirming_rounds(run_cli, tmp_path: Path, monkeypatch) -> None:
    """GPU-fe04b4df: the reductions at 128 threads a block. Rounds 4 and 5 hold only the six
    regressions of the first three, which all stood; `compare A/ B/` of the folders gives ab's
    verdicts, limits and ratios exactly, and the first three rounds alone the same six."""
    monkeypatch.chdir(tmp_path)
    ab_report = json.loads(gzip.decompress((H200_CONFIRM / "ab.json.gz").read_bytes()))
    stood = "6 regression(s) after 3 round(s) measured in 2 more round(s) of each side: 6 still"
    assert any(n.startswith(stood) for n in ab_report["notes"])
    regressed = {r["name"] for r in ab_report["benchmarks"] if r["verdict"] == "REGRESSION"}
    assert len(regressed) == 6 and all(n.startswith("reduction/sum/") for n in regressed)
    for side in ("A", "B"):
        for k in (1, 2, 3):
            first = tmp_path / "first" / side / f"round-{k}.json.gz"
            first.parent.mkdir(parents=True, exist_ok=True)
            first.write_bytes((H200_CONFIRM / side / first.name).read_bytes())
        for k in (4, 5):
            round_k = gzip.decompress((H200_CONFIRM / side / f"round-{k}.json.gz").read_bytes())
            assert {row["run_name"] for row in json.loads(round_k)["benchmarks"]} == regressed

    def verdicts(report: dict) -> dict:
        return {r["name"]: (r["verdict"], r["limit"]) for r in report["benchmarks"]}

    def ratios(report: dict) -> dict:
        return {r["name"]: r["ratio"] for r in report["benchmarks"]}

    done = run_cli("compare", H200_CONFIRM / "A", H200_CONFIRM / "B", "--json", "c.json")
    assert done.status == 1, done.err
    again = json.loads(Path("c.json").read_text())
    assert verdicts(again) == verdicts(ab_report)
    # to the last bits: numpy 2.4 sums in another order than the numpy that wrote ab.json
    assert ratios(again) == pytest.approx(ratios(ab_report), rel=1e-12, abs=0)
    first = run_cli("compare", Path("first/A"), Path("first/B"), "--json", "f.json")
    assert first.status == 1, first.err
    alone = verdicts(json.loads(Path("f.json").read_text()))
    assert {n for n, v in alone.items() if v[0] == "REGRESSION"} == regressed
