"""tool.run and tool.stream: the one way kernelwatch runs an external program."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import process_gone

from kernelwatch import tool
from kernelwatch.errors import InputError


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_output_and_status() -> None:
    done = tool.run(python("import sys; print('out'); print('err', file=sys.stderr)"))
    assert (done.status, done.stdout, done.stderr) == (0, "out\n", "err\n")
    assert tool.run(python("raise SystemExit(3)"), check=False).status == 3


def test_a_non_zero_exit_is_one_line_with_the_last_thing_said() -> None:
    with pytest.raises(tool.ToolError) as caught:
        tool.run(python("import sys; print('first\\nlast  ', file=sys.stderr); sys.exit(5)"))
    error = caught.value
    assert isinstance(error, InputError) and error.exit_status == 2
    assert (error.failure, error.status, error.said) == ("status", 5, "last")
    assert str(error).endswith("failed (exit status 5): last") and "\n" not in str(error)


def test_a_missing_program() -> None:
    with pytest.raises(tool.ToolError) as caught:
        tool.run(["kernelwatch-test-no-such-program"])
    assert caught.value.failure == "cannot-run" and caught.value.reason
    assert str(caught.value).startswith("kernelwatch-test-no-such-program: cannot run: ")


@pytest.mark.parametrize("tick", [None, lambda: None])
def test_a_timeout_ends_the_program(tick) -> None:
    with pytest.raises(tool.ToolError) as caught:
        tool.run(python("import time; time.sleep(30)"), timeout=0.3, tick=tick, tick_seconds=0.1)
    assert caught.value.failure == "timeout"
    assert str(caught.value).endswith("did not finish in 0.3 s")


def test_tick_while_it_runs() -> None:
    ticks: list[int] = []
    tool.run(python("import time; time.sleep(0.5)"), tick=lambda: ticks.append(1), tick_seconds=0.1)
    assert ticks


def test_log_takes_both_streams(tmp_path) -> None:
    log = tmp_path / "log"
    with log.open("w") as out:
        done = tool.run(python("import sys; print('a'); print('b', file=sys.stderr)"), log=out)
    assert done.stdout == "" and sorted(log.read_text().split()) == ["a", "b"]


def test_stream_shows_each_line() -> None:
    shown: list[str] = []
    done = tool.stream(python("print('one'); print('two'); raise SystemExit(1)"), shown.append)
    assert shown == ["one\n", "two\n"] and done.status == 1 and done.stdout == "one\ntwo\n"


def test_last_line() -> None:
    assert tool.last_line("a\n  b  \n\n") == "b" and tool.last_line("") == ""


# A program that starts a grandchild (as cmake starts ninja and nvcc), writes the grandchild's
# pid and waits for it.
PARENT_OF_SLEEPER = (
    "import subprocess, sys, time; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
    "open(sys.argv[1], 'w').write(str(child.pid)); child.wait()"
)


def started_pid(path: Path) -> int:
    deadline = time.monotonic() + 10
    while not (path.is_file() and path.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(path.read_text())


def test_a_timeout_ends_what_the_tool_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(tool.ToolError) as caught:
        tool.run([*python(PARENT_OF_SLEEPER), str(pid_file)], timeout=2)
    assert caught.value.failure == "timeout"
    assert process_gone(started_pid(pid_file))


def test_cancel_from_another_thread_ends_the_tool_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    cancel = threading.Event()
    threading.Thread(target=lambda: (started_pid(pid_file), cancel.set()), daemon=True).start()
    began = time.monotonic()
    with pytest.raises(tool.ToolError) as caught:
        tool.run([*python(PARENT_OF_SLEEPER), str(pid_file)], cancel=cancel)
    assert caught.value.failure == "cancelled" and time.monotonic() - began < 20
    assert process_gone(started_pid(pid_file))


class _Ended(BaseException):
    """What the CLI's SIGTERM handler raises (cli.Terminated), here."""


def _end(signum: int, frame: object) -> None:
    raise _Ended


@pytest.mark.parametrize(
    "number, handler, raised",
    [
        (signal.SIGINT, signal.default_int_handler, KeyboardInterrupt),
        (signal.SIGTERM, _end, _Ended),
    ],
)
@pytest.mark.parametrize(
    "start",
    [tool.run, lambda argv: tool.stream(argv, lambda line: None)],
    ids=["run", "stream"],
)
def test_a_signal_as_the_tool_starts_ends_it(
    monkeypatch, start: Callable[[list[str]], Any], number: int, handler: Any, raised: type
) -> None:
    """Ctrl-C or SIGTERM landing inside Popen, as the fork returns (the parent waits there
    for the child's exec), raised out of Popen before tool.run had the process: the tool, in
    a session of its own, ran on after kernelwatch exited (1 in 6 interrupts of a loop of
    tool.run). The signal is held until the process is known, then ends it."""
    started: list[int] = []
    execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def signalled_as_it_forks(self: subprocess.Popen[str], *args: Any, **kwargs: Any) -> None:
        execute(self, *args, **kwargs)
        started.append(self.pid)
        signal.raise_signal(number)  # its handler runs at once, still inside Popen

    monkeypatch.setattr(subprocess.Popen, "_execute_child", signalled_as_it_forks)
    previous = signal.signal(number, handler)
    try:
        with pytest.raises(raised):
            start(python("import time; time.sleep(60)"))
    finally:
        signal.signal(number, previous)
    try:
        assert started and process_gone(started[0])
    finally:
        with contextlib.suppress(ProcessLookupError, IndexError):
            os.kill(started[0], signal.SIGKILL)


def test_a_ctrl_c_as_the_hold_ends_leaves_sigterm_working(monkeypatch) -> None:
    """The hold gives SIGINT its handler back before SIGTERM. A Ctrl-C landing between the two
    raised out of the restoring, and SIGTERM kept the hold's handler, which only recorded it:
    for the rest of the command a cancelled CI job's SIGTERM ended nothing."""
    got: list[int] = []
    restore = signal.signal

    def ctrl_c_after_sigint(number: int, handler: Any) -> Any:
        previous = restore(number, handler)
        if number == signal.SIGINT and handler is signal.default_int_handler:
            raise KeyboardInterrupt  # as the handler just given back would, at once
        return previous

    previous_int = restore(signal.SIGINT, signal.default_int_handler)
    previous_term = restore(signal.SIGTERM, lambda number, frame: got.append(number))
    try:
        with pytest.raises(KeyboardInterrupt):
            with tool.signals_held():
                monkeypatch.setattr(signal, "signal", ctrl_c_after_sigint)
        monkeypatch.undo()
        signal.raise_signal(signal.SIGTERM)
        assert got == [signal.SIGTERM]
    finally:
        restore(signal.SIGINT, previous_int)
        restore(signal.SIGTERM, previous_term)
