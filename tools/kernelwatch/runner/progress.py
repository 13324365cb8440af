"""The status line of a run on a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """One self-rewriting status line on stderr, only when stderr is a terminal: which binary,
    how many benchmarks are done and left, elapsed time."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.started = time.monotonic()
        self._status = ""
        self._shown = False

    def status(self, text: str) -> None:
        self._status = text
        self.tick()

    def tick(self) -> None:
        if not self.enabled:
            return
        elapsed = format_duration(time.monotonic() - self.started)
        self.stream.write(f"\r\033[K{self._status}; {elapsed} elapsed")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False

    def say(self, line: str) -> None:
        """A line that stays (shown whether or not stderr is a terminal)."""
        self.clear()
        self.stream.write(line + "\n")
        self.stream.flush()


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
