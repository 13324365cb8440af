"""The error types the CLI turns into one line on stderr and an exit status."""

from __future__ import annotations

import re


class InputError(Exception):
    """Bad input or usage that the user can fix; its message is one line, shown as is.
    The CLI prints `kernelwatch: error: MESSAGE` and exits with `exit_status`."""

    exit_status = 2
    prefix = "error: "

    def __init__(self, message: str) -> None:
        # One line on stderr is the contract: fold anything multi-line.
        super().__init__(" ".join(str(message).split()))


class OutputError(InputError):
    """stdout could not be written (a full disk, `> /dev/full`)."""


class BenchmarkCrashed(InputError):
    """A benchmark binary crashed or lost its CUDA context (its exit code 3, or a signal)."""

    exit_status = 3


class NoGpuError(InputError):
    """No usable CUDA GPU: nothing can be measured. Printed as `kernelwatch: MESSAGE`."""

    exit_status = 4
    prefix = ""


def shortened(text: str, limit: int = 80) -> str:
    """A value from the input cut for a one-line message: a 5,000-character GPU name, setting
    or history cell was written whole into the line, as often as the message names it."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def missing_extra(command: str, extra: str, exc: ImportError) -> InputError:
    """The one line for an optional dependency that is not installed: names exactly what to
    install (the package extra that brings it, pyproject.toml)."""
    module = exc.name or str(exc)
    return InputError(
        f"{command} needs {module}, which is not installed: "
        f"pip install 'kernelwatch[{extra}]' (in a checkout: pip install './tools[{extra}]')"
    )


def compile_regex(text: str, what: str) -> re.Pattern[str]:
    """`text` compiled, or the one line `WHAT 'TEXT': bad regex: WHY` (exit 2)."""
    try:
        return re.compile(text)
    except re.error as exc:
        raise InputError(f"{what} {text!r}: bad regex: {exc}") from None
    except (OverflowError, RecursionError):  # a{99999999999}, or thousands of nested groups
        raise InputError(f"{what} {text[:80]!r}: bad regex: too large to compile") from None
