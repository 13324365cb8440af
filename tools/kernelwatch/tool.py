"""Running an external tool (git, cmake, nvidia-smi, cuobjdump, ncu, a benchmark binary).

One place decides how a tool that cannot start, runs too long or exits non-zero is reported:
as a ToolError, one line, with what the caller needs to word its own message. stdin is
always closed: no tool here may wait for a terminal.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import locale
import os
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from kernelwatch.errors import InputError, shortened

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
    what it wrote ("" where it went elsewhere); `stdout_left_out` and `stderr_left_out`: the
    bytes of each that `keep` did not keep."""

    command: tuple[str, ...]
    status: int
    stdout: str = ""
    stderr: str = ""
    stdout_left_out: int = 0
    stderr_left_out: int = 0


# What `run(keep=TAIL_BYTES)` keeps of each stream: enough for the lines a message quotes.
TAIL_BYTES = 64 * 1024


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
    keep: int | None = None,
) -> Finished:
    """Run `command` to its end and capture its output as text (`log`: both streams go to that
    file instead; `discard_stdout`: stdout is thrown away; `keep`: only the first and the last
    `keep` bytes of each stream are kept, so that a tool printing gigabytes is not held in
    memory). `tick` is called about every `tick_seconds` while it runs. The tool runs in a
    session of its own: when this is interrupted, runs past `timeout` or `cancel` is set (from
    another thread), the tool and every process it started are ended (`cmake --build` leaves
    ninja and nvcc running when only cmake is killed). Once the tool has exited, what it left
    holding its pipes is waited for a few seconds at most (_wait). ToolError when it cannot
    start, runs past `timeout`, is cancelled, or (`check`) exits non-zero."""
    argv = [str(part) for part in command]
    stdout: Any = log if log is not None else subprocess.PIPE
    if discard_stdout:
        stdout = subprocess.DEVNULL
    stderr: Any = log if log is not None else subprocess.PIPE
    process: subprocess.Popen[bytes] | None = None
    out, err = _Capture(keep), _Capture(keep)
    try:
        with signals_held():  # (until `process` is known: the finally below ends it)
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=None if env is None else dict(env),
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:  # (ValueError: a NUL byte in an argument)
                raise _cannot_run(argv, exc) from None
        sinks = {
            pipe: capture.add
            for pipe, capture in ((process.stdout, out), (process.stderr, err))
            if pipe is not None
        }
        _wait(process, argv, sinks, timeout, tick, tick_seconds, cancel)
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
                _close_pipes(process)
    done = Finished(
        tuple(argv), process.returncode, out.text(), err.text(), out.left_out, err.left_out
    )
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


class _Capture:
    """What one pipe said: all of it, or (`keep`) its first and last `keep` bytes, the rest
    only counted."""

    def __init__(self, keep: int | None) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.left_out = 0

    def add(self, data: bytes) -> None:
        if self.keep is None:
            self.head += data
            return
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        over = len(self.tail) - self.keep
        if over > 0:
            del self.tail[:over]
            self.left_out += over

    def text(self) -> str:
        if not self.left_out:
            return _decode(bytes(self.head + self.tail))
        # (the tail's first line may be cut: last_line and the like read its end)
        gap = f"\n[kernelwatch: {self.left_out:,} bytes of output not kept]\n"
        return _decode(bytes(self.head)) + gap + _decode(bytes(self.tail))


def _decoder() -> io.IncrementalNewlineDecoder:
    """Text as the tool's pipes read it before: the locale's encoding, bytes it cannot decode
    replaced, \\r\\n and \\r as \\n (a compiler's line in Latin-1, a progress line's \\r)."""
    decoder = codecs.getincrementaldecoder(locale.getpreferredencoding(False))("replace")
    return io.IncrementalNewlineDecoder(decoder, translate=True)


def _decode(data: bytes) -> str:
    return str(_decoder().decode(data, final=True))


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


class _Cancelled(Exception):
    pass


_POLL_S = 0.2  # how soon a cancelled tool is ended, or an ended one noticed
# How long the pipes of a tool that has ended may stay open: past it, what it left running in
# its session (a daemon a build started) is ended, else its end was waited for for ever.
_LEFTOVER_S = 1.0
# ... and how long after that: what it left in a session of its own (setsid) is out of reach,
# and kept the pipe open for ever; what was read is kept and the pipe closed.
_HELD_S = 1.0
_CHUNK = 1 << 16


def _wait(
    process: subprocess.Popen[bytes],
    argv: Sequence[str],
    sinks: Mapping[IO[bytes], Callable[[bytes], None]],
    timeout: float | None,
    tick: Callable[[], None] | None,
    tick_seconds: float,
    cancel: threading.Event | None,
) -> None:
    """Give what each pipe says to its sink until every pipe has ended and the tool has
    exited; once it has exited, for _LEFTOVER_S + _HELD_S at most. TimeoutExpired when it is
    still running after `timeout` seconds, _Cancelled when `cancel` is set."""
    began = last_tick = time.monotonic()
    ended: float | None = None  # when the tool itself was seen exited
    leftovers_ended = False
    with selectors.DefaultSelector() as selector:
        for pipe, sink in sinks.items():
            selector.register(pipe, selectors.EVENT_READ, sink)
        while True:
            step = _POLL_S
            if timeout is not None:
                step = max(0.0, min(step, began + timeout - time.monotonic()))
            if selector.get_map():
                for key, _ in selector.select(step):
                    data = os.read(key.fd, _CHUNK)
                    if data:
                        key.data(data)
                    else:
                        selector.unregister(key.fileobj)
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=step)
            exited = process.poll() is not None
            if exited and not selector.get_map():
                return
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                raise _Cancelled
            if exited:
                ended = now if ended is None else ended
                if now - ended >= _LEFTOVER_S and not leftovers_ended:
                    _end_leftovers(process.pid)
                    leftovers_ended = True
                elif now - ended >= _LEFTOVER_S + _HELD_S:
                    print(
                        f"kernelwatch: warning: {_one_line(argv)}: exited, but "
                        "a process it left running (in a session of its own) held its output "
                        f"open; stopped reading it {_LEFTOVER_S + _HELD_S:g} s after",
                        file=sys.stderr,
                        flush=True,
                    )
                    return
            elif timeout is not None and now - began >= timeout:
                raise subprocess.TimeoutExpired(list(argv), timeout)
            if tick is not None and now - last_tick >= tick_seconds:
                last_tick = now
                tick()


def _one_line(argv: Sequence[str]) -> str:
    """A command line as a warning names it: on one line, shortened."""
    return shortened(" ".join(shlex.join(argv).split()), 200)


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
    process: subprocess.Popen[bytes] | None = None
    lines: list[str] = []
    decoder = _decoder()
    pending = [""]  # the line not ended yet

    def take(data: bytes, final: bool = False) -> None:
        *complete, pending[0] = (pending[0] + decoder.decode(data, final)).split("\n")
        for line in complete:
            lines.append(line + "\n")
            show(line + "\n")

    try:
        with signals_held():  # (until `process` is known: the finally below ends it)
            try:
                process = subprocess.Popen(
                    argv,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=None if env is None else dict(env),
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:  # (ValueError: a NUL byte in an argument)
                raise _cannot_run(argv, exc) from None
        assert process.stdout is not None
        _wait(process, argv, {process.stdout: take}, None, None, 1.0, None)
        take(b"", final=True)
        if pending[0]:
            lines.append(pending[0])
            show(pending[0])
        status = process.wait()
    finally:
        if process is not None:
            with signals_held():  # (another Ctrl-C waits: it skipped the ending, at most 40 s)
                if process.poll() is None:
                    _end_group(process)
                _close_pipes(process)
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


def _end_group(process: subprocess.Popen[Any]) -> None:
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


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
