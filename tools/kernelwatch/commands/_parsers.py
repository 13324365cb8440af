"""Shared by the command modules (the leading underscore keeps it out of command discovery)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """A (sub)command parser whose description and epilog keep their own line breaks."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, formatter_class=argparse.RawDescriptionHelpFormatter, **options
    )
    return parser


def add_actions(parser: argparse.ArgumentParser) -> Any:
    """The actions of a command that does nothing alone (`baseline`, `history`): without one
    it prints its help on stderr and exits 2."""
    parser.set_defaults(handler=lambda args: _usage(parser))
    return parser.add_subparsers(title="actions", metavar="ACTION")


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
