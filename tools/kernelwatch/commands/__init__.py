"""Subcommands. Every module here is one subcommand and provides:

    register(subparsers) -> None   adds its parser (options shared with other commands come
                                   from _options), with set_defaults(handler=main)
    main(args) -> int              the edge: turns the namespace into the command's frozen
                                   settings dataclass and calls run
    run(settings) -> int           does the work, returns the exit status

A command imports no other command and not kernelwatch.cli; what two commands share lives in
_options (flags and their typed values) or in a module outside this package (verdict: a run
against its baseline; outputs: a report's files). tests/tools/test_architecture.py checks it.
Modules are found by listing this package, so a new command is one new file.

`kernelwatch --help` imports every command module (its help lists them all); `kernelwatch CMD
...` imports only CMD's (cli passes the word to discover). A command module imports at its top
only what its parser needs (argparse, _options, defaults,
errors, files); its work is imported inside main and run, where it runs, so that a command
loads only what it uses (tests/tools/test_architecture.py checks the --help imports).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def discover(wanted: str | None = None) -> list[ModuleType]:
    """The command modules, in name order; only `wanted` where it names one (listing the
    package imports nothing, so a command run loads no other command's module)."""
    names = sorted(
        info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
    )
    if wanted in names:
        names = [str(wanted)]
    return [importlib.import_module(f"{__name__}.{name}") for name in names]
