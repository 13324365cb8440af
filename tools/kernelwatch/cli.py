"""The `kernelwatch` command line: one entry point, one module per subcommand.

Each module in kernelwatch/commands/ registers its own subcommand (see commands/__init__.py),
so adding a command never touches this file or the other commands.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import NoReturn

from kernelwatch import __version__, commands
from kernelwatch.errors import InputError, OutputError, shortened
from kernelwatch.files import output_error

EXIT_CODES = """\
exit status (each command's --help says more):
  0  success (bisect: the first bad commit was found)
  1  the check failed (compare, run, ab: a regression; selftest: a target missed; history
     changes: a regression among the changes listed; bisect: no first bad commit found)
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."
  3  a benchmark binary crashed, hung or lost its CUDA context (run, ab, bisect, selftest)
  4  no CUDA GPU is visible: nothing to measure (run, ab, bisect, selftest)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM: a cancelled CI job, `timeout`); the tools it started end with it
"""


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other error (the usage text is in --help); the
    subcommands' parsers are of this class too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("kernelwatch").strip()
        where = f"{command}: " if command else ""
        help_hint = f"kernelwatch {command} --help" if command else "kernelwatch --help"
        _say(f"kernelwatch: error: {where}{' '.join(message.split())} (see {help_hint})")
        sys.exit(2)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Also remember the innermost (sub)command that left arguments it does not know, so
        that the message points to that command's --help, not to kernelwatch's."""
        given = list(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(_joined_values(given), namespace)
        if extras and not hasattr(parsed, _UNKNOWN_TO):
            setattr(parsed, _UNKNOWN_TO, self)
        return parsed, extras


_UNKNOWN_TO = "_kernelwatch_unknown_to"

# Options whose bad values may start with "-": argparse takes `--shard -1/2` (or a negative
# percentage, `--slowdowns -5%`) for an option and says "expected one argument", where the
# value's own check names what a shard or a level must be.
DASH_VALUES = frozenset({"--shard", "--slowdowns", "--threshold"})


def _joined_values(argv: Sequence[str]) -> list[str]:
    """`--shard -1/2` as `--shard=-1/2` (up to a `--`, after which nothing is an option)."""
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            out += [word, *words]
            break
        value = next(words, None) if word in DASH_VALUES else None
        if value is not None and value.startswith("-"):
            out.append(f"{word}={value}")
        else:
            out += [word] if value is None else [word, value]
    return out


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv` starting with a command's name, only that command's parser (the
    only one argparse would use), so that a command loads only what it uses."""
    parser = Parser(
        prog="kernelwatch",
        description=(
            "Performance-regression tooling for Google Benchmark and nvbench results of CUDA "
            "kernels."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kernelwatch {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    first = next(iter(argv or ()), None)
    for module in commands.discover(first):
        module.register(subparsers)
    return parser


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS, errno.EBADF}


def _printable_output() -> None:
    """A file name that is not UTF-8 (r$'\\xff'.json) reaches Python as a lone surrogate, and
    print() of it was an internal error where stdout is strict: the H200 machine's Python has a
    strict one under LANG=C.UTF-8, where this machine's escapes. It is written as \\udcff."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
    if sys.stdout is None:  # started with stdout closed (`>&-`): what prints fails as output
        sys.stdout = _Closed()


class _Closed(io.TextIOBase):
    """A closed standard output: a write is the output error it would be on a closed
    descriptor (exit 2), not an AttributeError of None."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def _say(line: str) -> None:
    """One line on stderr. Where stderr cannot take it (closed, a full disk) the exit status
    still says what happened: the failed write ended runs with Python's status 1 (regression)."""
    if sys.stderr is None:
        return
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):  # nor fail again in the flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C: every `finally` runs, so the benchmark processes and builds
    kernelwatch started (each in a session of its own) are ended with it, not left running."""


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler (a caller's thread runs main as is)
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script passes it to sys.exit)."""
    _printable_output()
    try:
        with _sigterm_raises():
            return _main(argv)
    except Terminated:  # one that landed in _main's own error handling, or as it returned
        _say("kernelwatch: terminated")
        return 143


def _main(argv: Sequence[str] | None) -> int:
    try:
        given = sys.argv[1:] if argv is None else argv
        parser = build_parser(given)  # (imports the command: a Ctrl-C lands here most often)
        try:
            args, unknown = parser.parse_known_args(argv)
            if unknown:
                owner = getattr(args, _UNKNOWN_TO, parser)
                owner.error(f"unrecognized arguments: {' '.join(unknown)}")
            if getattr(args, "handler", None) is None:
                named = (module.__name__.rpartition(".")[2] for module in commands.discover())
                parser.error(f"name a command: {', '.join(named)}")
        except SystemExit as exc:  # --help, --version, or a usage error (already printed)
            return exc.code if isinstance(exc.code, int) else 0
        # The command as typed, for the records of what produced a result (run, baseline).
        args.command_line = shlex.join(["kernelwatch", *(sys.argv[1:] if argv is None else argv)])
        status = int(args.handler(args))
        try:
            sys.stdout.flush()  # what print() left in the buffer fails here, not at exit
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise output_error(exc) from None
        return status
    except InputError as exc:
        if isinstance(exc, OutputError):
            _silence_stdout()
        _say(f"kernelwatch: {exc.prefix}{exc}")
        return exc.exit_status
    except Terminated:
        _say("kernelwatch: terminated")
        return 143
    except KeyboardInterrupt:
        _say("kernelwatch: interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): silence the flush at exit, end like SIGPIPE would.
        _silence_stdout()
        return 141
    except OSError as exc:
        # Files are opened, read and written through kernelwatch.files and gbench, which word
        # their own errors. One left with a file name is a path the machine refused, whoever
        # asked (pathlib's is_dir() raises PermissionError in a folder that may not be
        # searched): the path and why, in one line. One without is a print() to a stdout that
        # cannot take it (a full disk, `> /dev/full`).
        if exc.filename is not None and exc.strerror:
            _say(f"kernelwatch: error: {shortened(str(exc.filename), 200)}: {exc.strerror}")
            return 2
        if exc.errno not in _WRITE_ERRORS:
            return _internal_error(exc)
        _silence_stdout()
        _say(f"kernelwatch: error: {output_error(exc)}")
        return 2
    except ModuleNotFoundError as exc:
        package = (exc.name or "").partition(".")[0]
        if not package or package == "kernelwatch":
            return _internal_error(exc)
        # A package kernelwatch needs, missing: `PYTHONPATH=tools python3 -m kernelwatch` on a
        # fresh machine without numpy said "internal error: ModuleNotFoundError".
        _say(
            f"kernelwatch: error: the Python package {package} is not installed: "
            f"pip install {package} (in a checkout: tools/kw setup-python)"
        )
        return 2
    except UnicodeEncodeError as exc:
        # A name or value given as bytes that are not UTF-8 (a lone surrogate here), where it
        # must be text: a history's query, a database's column.
        _say(f"kernelwatch: error: {ascii(exc.object)[:120]}: not UTF-8 text")
        return 2
    except Exception as exc:  # a bug: still one line, unless asked for the traceback
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    if os.environ.get("KERNELWATCH_DEBUG"):
        raise exc
    _say(
        f"kernelwatch: internal error: {type(exc).__name__}: {exc} "
        "(set KERNELWATCH_DEBUG=1 for a traceback)"
    )
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not fail again. (When stdout
    is not a file descriptor, embedded use, there is nothing to silence.)"""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
