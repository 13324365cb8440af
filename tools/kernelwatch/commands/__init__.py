"""Subcommands. Every module here is one subcommand and provides:

    register(subparsers) -> None   adds its parser, with set_defaults(handler=run)
    run(args) -> int               does the work, returns the exit status

Modules are found by listing this package, so a new command is one new file.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def discover() -> list[ModuleType]:
    """The command modules, in name order."""
    names = sorted(
        info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
    )
    return [importlib.import_module(f"{__name__}.{name}") for name in names]
