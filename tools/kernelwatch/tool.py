"""Running an external tool (git, cmake, nvidia-smi, cuobjdump, ncu, a benchmark binary).

One place decides how a tool that cannot start, runs too long or exits non-zero is reported:
as a ToolError, one line, with what the caller needs to word its own message. stdin is
always closed: no tool here may wait for a terminal.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from kernelwatch.errors import InputError

Failure = Literal["cannot-run", "timeout", "status", "cancelled"]


class ToolError(InputError):
    """A tool could not run (`cannot-run`: `reason` is the system's word for it), did not
    finish in `timeout` seconds, was ended because its caller gave up (`cancelled`), or exited
    with a non-zero `status` (`check`). Its message is one line; `exception` is what subprocess
    raised (its text, for messages that quote it)."""

    def __init__(
        self,
        message: str,
        *,
        command: Sequence[str],
        failure: Failure,
        reason: str = "",
        status: int | None = None,
        stdout: str = "",
        stderr: str = "",
        timeout: float | None = None,
        exception: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.command = tuple(command)
        self.failure = failure
        self.reason = reason
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.timeout = timeout
        self.exception = exception

    @property
    def said(self) -> str:
        """The tool's last non-blank line: stderr's, else stdout's ("" if none)."""
        return last_line(self.stderr) or last_line(self.stdout)


@dataclass(frozen=True)
class Finished:
    """A tool that ran to its end: its exit status (negative: the signal that ended it) and
    what it wrote ("" where it went elsewhere)."""

    command: tuple[str, ...]
    status: int
    stdout: str = ""
    stderr: str = ""


def run(
    command: Sequence[str],
    *,
    timeout: float | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    log: IO[Any] | None = None,
    discard_stdout: bool = False,
    tick: Callable[[], None] | None = None,
    tick_seconds: float = 1.0,
    cancel: threading.Event | None = None,
) -> Finished:
    """Run `command` to its end and capture its output as text (`log`: both streams go to that
    file instead; `discard_stdout`: stdout is thrown away). `tick` is called about every
    `tick_seconds` while it runs. The tool runs in a session of its own: when this is
    interrupted, runs past `timeout` or `cancel` is set (from another thread), the tool and
    every process it started are ended (`cmake --build` leaves ninja and nvcc running when
    only cmake is killed). ToolError when it cannot start, runs past `timeout`, is cancelled,
    or (`check`) exits non-zero."""
    argv = [str(part) for part in command]
    stdout: Any = log if log is not None else subprocess.PIPE
    if discard_stdout:
        stdout = subprocess.DEVNULL
    stderr: Any = log if log is not None else subprocess.PIPE
    process: subprocess.Popen[str] | None = None
    try:
        with signals_held():  # (until `process` is known: the finally below ends it)
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    text=True,
                    errors="replace",
                    env=None if env is None else dict(env),
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:  # (ValueError: a NUL byte in an argument)
                raise _cannot_run(argv, exc) from None
        out, err = _wait(process, timeout, tick, tick_seconds, cancel)
    except _Cancelled:
        raise ToolError(
            f"`{shlex.join(argv)}` was cancelled", command=argv, failure="cancelled"
        ) from None
    except subprocess.TimeoutExpired as exc:
        raise ToolError(
            f"`{shlex.join(argv)}` did not finish in {timeout:g} s",
            command=argv,
            failure="timeout",
            timeout=timeout,
            exception=exc,
        ) from None
    finally:
        if process is not None:
            with signals_held():  # (another Ctrl-C waits: it skipped the ending, at most 40 s)
                if process.poll() is None:  # interrupted, cancelled or past its time
                    _end_group(process)
    done = Finished(tuple(argv), process.returncode, out or "", err or "")
    if check and done.status != 0:
        said = last_line(done.stderr) or last_line(done.stdout)
        raise ToolError(
            f"`{shlex.join(argv)}` failed (exit status {done.status}): {said or 'no message'}",
            command=argv,
            failure="status",
            status=done.status,
            stdout=done.stdout,
            stderr=done.stderr,
        )
    return done


class _Cancelled(Exception):
    pass


_CANCEL_POLL_S = 0.2  # how soon a cancelled tool is ended
# How long the pipes of a tool that has ended may stay open: past it, what it left running in
# its session (a daemon a build started) is ended, else its end was waited for for ever.
_LEFTOVER_S = 1.0


def _wait(
    process: subprocess.Popen[str],
    timeout: float | None,
    tick: Callable[[], None] | None,
    tick_seconds: float,
    cancel: threading.Event | None,
) -> tuple[str | None, str | None]:
    period = min(tick_seconds if tick is not None else _LEFTOVER_S, _LEFTOVER_S)
    if cancel is not None:
        period = min(period, _CANCEL_POLL_S)
    # communicate() may be called again after its timeout without losing output.
    waited = since_tick = 0.0
    ended: float | None = None  # when the tool itself was seen ended
    while True:
        step = period if timeout is None else min(period, timeout - waited)
        try:
            return process.communicate(timeout=max(step, 0.0))
        except subprocess.TimeoutExpired:
            waited += step
            since_tick += step
            if timeout is not None and waited >= timeout:
                raise
            if cancel is not None and cancel.is_set():
                raise _Cancelled from None
            if process.poll() is not None:
                ended = waited if ended is None else ended
                if waited - ended >= _LEFTOVER_S:
                    _end_leftovers(process.pid)
            if tick is not None and since_tick >= tick_seconds:
                since_tick = 0.0
                tick()


def stream(
    command: Sequence[str],
    show: Callable[[str], None],
    *,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run `command` in a session of its own, stdout and stderr merged, each line given to
    `show` as it comes; on an interrupt (or any exception in `show`) the whole process group
    is ended. The output is returned in `stdout`; ToolError only when it cannot start."""
    argv = [str(part) for part in command]
    process: subprocess.Popen[str] | None = None
    lines: list[str] = []
    stop = threading.Event()
    try:
        with signals_held():  # (until `process` is known: the finally below ends it)
            try:
                process = subprocess.Popen(
                    argv,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    text=True,
                    errors="replace",  # (a commit subject, a compiler's line in Latin-1)
                    env=None if env is None else dict(env),
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:  # (ValueError: a NUL byte in an argument)
                raise _cannot_run(argv, exc) from None
        watcher = threading.Thread(target=_watch_leftovers, args=(process, stop), daemon=True)
        watcher.start()
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            show(line)
        status = process.wait()
    finally:
        stop.set()
        if process is not None:
            with signals_held():  # (another Ctrl-C waits: it skipped the ending, at most 40 s)
                if process.poll() is None:
                    _end_group(process)
    return Finished(tuple(argv), status, "".join(lines))


# The signals that end kernelwatch (cli: KeyboardInterrupt, Terminated).
_ENDING = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, and delivered when it ends: their
    Python handlers are swapped (numpy's threads take signals too, so a mask of this thread
    would not hold them). One that landed inside Popen, as the fork returned, raised out of it
    before the caller had the process: nothing ended that tool (a session of its own), which
    ran on after kernelwatch had exited. Python runs signal handlers in the main thread only:
    elsewhere nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    hold = _Hold()
    try:
        for ending in _ENDING:
            handler = signal.getsignal(ending)
            if callable(handler):  # (SIG_IGN, SIG_DFL: the kernel's, nothing to hold)
                hold.previous[ending] = handler
                signal.signal(ending, hold)
        yield
    finally:
        # Holding stops before the handlers are given back, one call each: a signal landing
        # between two calls raises out of the loop, and a handler not given back yet must
        # still end the command (it passes the signal on), not record it for nobody.
        hold.holding = False
        try:
            for restored, handler in hold.previous.items():
                signal.signal(restored, handler)
        finally:
            if hold.held:
                got, frame = hold.held[0]
                hold.previous[got](got, frame)  # raises, as it would have in Popen


class _Hold:
    """The handler signals_held installs: records an ending signal while holding, passes it on
    to the handler it replaced after."""

    def __init__(self) -> None:
        self.holding = True
        self.held: list[tuple[int, Any]] = []
        self.previous: dict[int, Any] = {}

    def __call__(self, got: int, frame: Any) -> None:
        if self.holding:
            self.held.append((got, frame))
        else:
            self.previous[got](got, frame)


def _end_group(process: subprocess.Popen[str]) -> None:
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _watch_leftovers(process: subprocess.Popen[str], stop: threading.Event) -> None:
    """stream's reading ends with its pipe's end: once the tool has ended, what it left
    holding the pipe is ended _LEFTOVER_S later (unless the reading ended meanwhile)."""
    ended: float | None = None
    while not stop.wait(_CANCEL_POLL_S):
        if process.poll() is None:
            continue
        ended = time.monotonic() if ended is None else ended
        if time.monotonic() - ended >= _LEFTOVER_S:
            _end_leftovers(process.pid)
            return


def _end_leftovers(session: int) -> None:
    """End what an ended tool left running in its session (its process group), holding its
    pipes open. (Its number is not given to another process while the group has members.)"""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(session, signal.SIGKILL)


def _cannot_run(argv: Sequence[str], exc: OSError | ValueError) -> ToolError:
    reason = getattr(exc, "strerror", None) or str(exc)
    return ToolError(
        f"{Path(argv[0]).name}: cannot run: {reason}",
        command=argv,
        failure="cannot-run",
        reason=reason,
        exception=exc,
    )


def last_line(text: str) -> str:
    """The last non-blank line of `text`, stripped ("" if none)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
