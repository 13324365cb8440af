"""`kernelwatch ab` and `bisect` given bad, odd or hostile input or git state: one error line,
and nothing of the user's touched."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import git
from kernelwatch import ab, bisect
from test_ab import Repo, one_error, repo, run_ab  # noqa: F401 (fixtures)
from test_bisect import History, history, run_bisect, temporary  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def no_build(side: ab.Side, log: Path, **options: object) -> None:
    """A build that makes no benchmark binary."""
    side.build_dir.mkdir(parents=True, exist_ok=True)


# --- long values in error lines -----------------------------------------------------------------


def test_a_long_revision_is_shortened(repo: Repo, run_cli) -> None:
    done = run_ab(run_cli, repo, "x" * 5000, repo.b)
    assert done.status == 2
    line = one_error(done.err)
    assert "not a commit in" in line and "(5,000 characters)" in line and len(line) < 300


def test_a_long_revision_that_names_a_commit_is_shortened(repo: Repo, run_cli, monkeypatch) -> None:
    monkeypatch.setattr(ab, "cmake_build", no_build)
    done = run_ab(run_cli, repo, "HEAD~1" + "^0" * 2500, repo.b)
    assert done.status == 2
    line = one_error(done.err)
    assert "no benchmark binaries" in line and "(5,006 characters)" in line and len(line) < 400


def test_bisect_shortens_long_revisions(history: History, run_cli) -> None:
    long_head = "HEAD" + "^0" * 2500
    for good, bad, said in [
        ("x" * 5000, history.shas[6], "not a commit in"),
        (long_head, "HEAD", "are the same commit"),
        (long_head, history.shas[1], "is not an ancestor of"),
    ]:
        done = run_bisect(run_cli, history, good, bad)
        assert done.status == 2
        line = one_error(done.err)
        assert said in line and "characters)" in line and len(line) < 400, line


def test_an_empty_revision_is_named_as_such(repo: Repo, run_cli) -> None:
    """`ab "$BASE" HEAD` with BASE unset said "kernelwatch: error: : not a commit in ..."."""
    for done, argument in [
        (run_ab(run_cli, repo, "", repo.b), "REV_A"),
        (run_ab(run_cli, repo, repo.a, ""), "REV_B"),
    ]:
        assert done.status == 2
        assert f"argument {argument}: an empty value" in one_error(done.err)


def test_bisect_names_an_empty_revision_too(history: History, run_cli) -> None:
    for done, argument in [
        (run_bisect(run_cli, history, "", "HEAD"), "GOOD"),
        (run_bisect(run_cli, history, history.shas[1], ""), "BAD"),
    ]:
        assert done.status == 2
        assert f"argument {argument}: an empty value" in one_error(done.err)


# --- the user's other worktrees -----------------------------------------------------------------


def away_worktree(root: Path, sha: str) -> tuple[Path, Path]:
    """A worktree of the user's whose folder is away for now (an unmounted disk): git's
    record of it, and where the folder went."""
    folder = root.parent / "mine"
    git(root, "worktree", "add", "-q", "--detach", str(folder), sha)
    record = root / ".git" / "worktrees" / "mine"
    assert record.is_dir()
    folder.rename(root.parent / "mine-away")
    return record, root.parent / "mine-away"


def test_ab_leaves_a_missing_worktree_of_the_user_alone(repo: Repo, run_cli) -> None:
    """`git worktree prune` before each new worktree forgot every missing worktree of the
    repository: the user's, back from its disk, was no repository any more."""
    record, away = away_worktree(repo.root, repo.a)
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0
    assert record.is_dir()
    away.rename(repo.root.parent / "mine")
    assert git(repo.root.parent / "mine", "rev-parse", "HEAD") == repo.a


def test_a_deleted_worktree_of_ab_is_made_again(repo: Repo, run_cli) -> None:
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0
    shutil.rmtree(repo.root / ab.WORKTREES / repo.a)  # still registered with git
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0
    assert git(repo.root / ab.WORKTREES / repo.a, "rev-parse", "HEAD") == repo.a


def bisect_to_the_last(history: History, temporary: Path) -> None:
    """`git bisect` between two commits of `history` whose every step says good: the bad end
    is the first bad one."""
    good = [sys.executable, "-c", "print('kernelwatch step')"]
    outcome = bisect.run_bisect(
        history.root,
        history.shas[1],
        history.shas[6],
        lambda worktree: good,
        temporary.parent / "no-error.json",
        lambda line: None,
    )
    assert outcome.first_bad == history.shas[6]


def test_bisect_leaves_a_missing_worktree_of_the_user_alone(history: History, temporary) -> None:
    record, _ = away_worktree(history.root, history.shas[2])
    bisect_to_the_last(history, temporary)
    assert record.is_dir()
    assert "kernelwatch-bisect-" not in git(history.root, "worktree", "list", "--porcelain")
    assert list(temporary.iterdir()) == []


# --- ab's worktrees -----------------------------------------------------------------------------


def test_an_edited_worktree_is_refused(repo: Repo, run_cli) -> None:
    """A cached worktree someone edited was built and measured as the commit."""
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0
    edited = repo.root / ab.WORKTREES / repo.a / "CMakeLists.txt"
    edited.write_text("# tried something\n")
    repo.builds.clear()
    done = run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
    assert done.status == 2
    line = one_error(done.err)
    assert f"{repo.root / ab.WORKTREES / repo.a}: its files differ from {repo.a[:12]}" in line
    assert "CMakeLists.txt" in line and "git worktree remove --force" in line
    assert repo.builds == [] and edited.read_text() == "# tried something\n"


def test_a_tracked_file_the_build_rewrites_is_no_edit(repo: Repo, run_cli, monkeypatch) -> None:
    """A build that rewrites a tracked file (a generated header) left its worktree 'edited', so
    every later ab of that commit was refused. What the build left is the commit's; an edit
    after it is still refused."""
    made = repo.build

    def generating(side: ab.Side, log: Path, **options: object) -> None:
        (side.worktree / "CMakeLists.txt").write_text(f"# generated for {side.short}\n")
        made(side, log, **options)

    monkeypatch.setattr(ab, "cmake_build", generating)
    assert run_ab(run_cli, repo, repo.a, repo.b, "--build-only").status == 0
    again = run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
    assert again.status == 0, again.err
    assert repo.builds == [repo.a, repo.b] * 2
    edited = repo.root / ab.WORKTREES / repo.a / "bench" / "fake.json.in"
    edited.write_text("{}")
    done = run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
    assert done.status == 2 and "its files differ from" in one_error(done.err)


# --- --bench ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["ABSOLUTE", "../../x/kernelwatch_bench_fake"])
def test_a_bench_path_outside_the_sides_is_refused(repo: Repo, run_cli, path: str) -> None:
    """An absolute --bench named one binary for both sides: A measured against itself, no
    regression ever."""
    if path == "ABSOLUTE":
        path = str(repo.root.parent / "kernelwatch_bench_fake")
    done = run_ab(run_cli, repo, repo.a, repo.b, "--bench", path)
    assert done.status == 2
    assert f"--bench {path}: must be relative to each side's build folder" in one_error(done.err)
    assert repo.builds == []


def test_bisect_refuses_an_absolute_bench_path(history: History, run_cli) -> None:
    done = run_bisect(run_cli, history, history.shas[1], history.shas[6], "--bench", "/bin/true")
    assert done.status == 2
    assert "--bench /bin/true: must be relative to" in one_error(done.err)
    assert not (history.root / ab.WORKTREES).exists()


@pytest.mark.parametrize("name", ["r" * 5000, "r" * 300])
def test_a_long_repo_path_is_shortened(run_cli, tmp_path: Path, name: str) -> None:
    """A name past the file system's limit was the OSError's file name, written whole."""
    done = run_cli("ab", "A", "B", "--repo", tmp_path / name)
    assert done.status == 2
    line = one_error(done.err)
    assert line.startswith(f"kernelwatch: error: --repo {tmp_path}") and "characters)" in line
    assert len(line) < 400


# --- git's variables of a hook ------------------------------------------------------------------


def hook_environment(monkeypatch, root: Path) -> Path:
    """What git exports to a pre-commit hook: its repository and the index being committed."""
    index = root / ".git" / "index"
    monkeypatch.setenv("GIT_DIR", str(root / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    return index


def test_ab_in_a_hook_leaves_the_index_alone(repo: Repo, run_cli, monkeypatch) -> None:
    """`git worktree add` took GIT_INDEX_FILE for its own: the commit was checked out into the
    user's index, and the worktrees read the user's HEAD."""
    git(repo.root, "reset", "-q", "--soft", "HEAD~1")  # B's change staged, as if committed next
    monkeypatch.chdir(repo.root)
    index = hook_environment(monkeypatch, repo.root)
    staged = index.read_bytes()
    for _ in range(2):  # made, then reused
        done = run_ab(run_cli, repo, repo.a, repo.b, "--build-only")
        assert done.status == 0, done.err
        assert index.read_bytes() == staged
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(repo.root, "diff", "--cached", "--name-only").split() == [
        "bench/fake.json.in",
        "bench/fake.py.json",
    ]
    assert git(repo.root / ab.WORKTREES / repo.b, "rev-parse", "HEAD") == repo.b


def test_bisect_in_a_hook_leaves_the_index_alone(history: History, temporary, monkeypatch) -> None:
    index = hook_environment(monkeypatch, history.root)
    staged = index.read_bytes()
    bisect_to_the_last(history, temporary)
    assert index.read_bytes() == staged
