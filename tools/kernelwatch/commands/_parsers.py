"""Shared by the command modules (the leading underscore keeps it out of command discovery)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """A (sub)command parser whose description and epilog keep their own line breaks."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, formatter_class=argparse.RawDescriptionHelpFormatter, **options
    )
    return parser
