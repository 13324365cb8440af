"""The leaves every command stands on (files, tool, locks, project) given what a demanding
user or a fuzzer gives them: a private file replaced, a lock file that is a link, a file system
without locks, a tool that writes bytes that are not UTF-8 or leaves a child holding its pipe,
a current folder that was removed."""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import process_gone

from kernelwatch import files, locks, project, tool
from kernelwatch.errors import InputError


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755])
def test_replacing_a_file_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    """`-o private.json` of a file the user made readable by nobody else (or executable) was
    replaced by one of mode 0666 & ~umask: the result, readable by every user again."""
    target = tmp_path / "private.json"
    target.write_text("old")
    target.chmod(mode)
    files.write_atomic(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o7777 == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a file to another user")
def test_root_replacing_a_users_file_keeps_its_owner(tmp_path: Path) -> None:
    """A command run with sudo replaced a user's result by root's, which the user could then
    no longer replace (with a 0644 mode: not write)."""
    target = tmp_path / "r.json"
    target.write_text("old")
    os.chown(target, 4321, 4321)
    files.write_atomic(target, "new")
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4321)


def test_a_lock_file_that_is_a_link_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock file in the (shared, world-writable) lock folder that is a symbolic link to a file
    of someone else's: opening the lock chmod-ed that file 0666, writable by every user."""
    monkeypatch.setenv(locks.LOCK_DIR_ENV, str(tmp_path / "locks"))
    (tmp_path / "locks").mkdir()
    victim = tmp_path / "baseline.json"
    victim.write_text("keep")
    victim.chmod(0o644)
    (tmp_path / "locks" / "gpu-GPU-1.lock").symlink_to(victim)
    with pytest.raises(InputError, match="lock file"):
        with locks.gpu_lock("GPU-1"):
            pass
    assert victim.stat().st_mode & 0o777 == 0o644 and victim.read_text() == "keep"


def test_a_lock_folder_without_locks_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock folder on a file system that has no flock (ENOLCK): the GPU and host locks raised
    the OSError, an internal error, where the output lock goes on without one."""
    monkeypatch.setenv(locks.LOCK_DIR_ENV, str(tmp_path))

    def no_locks(handle: object, mode: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    for held in (locks.gpu_lock("GPU-1"), locks.host_shared(), locks.host_exclusive()):
        with pytest.raises(InputError, match=locks.LOCK_DIR_ENV):
            with held:
                pass


def test_stream_takes_output_that_is_not_utf8() -> None:
    """bisect streams `git bisect run`, which prints commit subjects and build output as they
    are: one byte that is not UTF-8 was a UnicodeDecodeError, an internal error."""
    shown: list[str] = []
    done = tool.stream(
        python("import sys; sys.stdout.buffer.write(b'caf\\xe9\\nok\\n')"), shown.append
    )
    assert done.status == 0 and shown == ["caf\ufffd\n", "ok\n"]


LEAVES_A_SLEEPER = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(sys.argv[1], "w").write(str(child.pid))
print("done", flush=True)
"""


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_a_tool_whose_child_keeps_its_pipe_open(tmp_path: Path, timeout: float | None) -> None:
    """A tool that ends but leaves a child holding its stdout (a daemon a build started):
    run() waited for the pipe's end, for ever without a timeout, else until the timeout, which
    it then reported as the tool's, and left the child running."""
    pid_file = tmp_path / "pid"
    began = time.monotonic()
    done = tool.run([*python(LEAVES_A_SLEEPER), str(pid_file)], timeout=timeout)
    assert done.status == 0 and done.stdout == "done\n"
    assert time.monotonic() - began < 15
    assert process_gone(int(pid_file.read_text()))


def test_stream_of_a_tool_whose_child_keeps_its_pipe_open(tmp_path: Path) -> None:
    """The same through stream (bisect's `git bisect run` of a step that starts a daemon)."""
    pid_file = tmp_path / "pid"
    began = time.monotonic()
    done = tool.stream([*python(LEAVES_A_SLEEPER), str(pid_file)], lambda line: None)
    assert done.status == 0 and done.stdout == "done\n"
    assert time.monotonic() - began < 15
    assert process_gone(int(pid_file.read_text()))


def test_a_command_line_with_a_nul_byte_cannot_run() -> None:
    """An argument holding a NUL byte (from a file: a setting, a benchmark's name) made Popen
    raise ValueError, an internal error, not the ToolError that says the tool cannot run."""
    with pytest.raises(tool.ToolError) as caught:
        tool.run(["echo", "a\x00b"])
    assert caught.value.failure == "cannot-run"


def test_a_removed_current_folder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kernelwatch run from a folder that was removed meanwhile (a build folder made anew):
    Path.cwd()'s FileNotFoundError was an internal error."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(InputError, match="current folder"):
        project.find()
    with pytest.raises(InputError, match="current folder"):
        project.root("name the database with --db PATH")
