"""Views of a compare Report: terminal table, Markdown, JSON (schema in docs/compare.md), JUnit.

cells.py      what every view shows of a comparison, worded once (values, changes, lines); the
              terminal table
markdown.py   Markdown for a step summary or a PR comment
document.py   the JSON document
junit.py      JUnit XML

The table is what a command prints unless asked otherwise; the other formats load at their first
use (module __getattr__), so a compare that prints the table loads none of their code.
"""

from typing import TYPE_CHECKING, Any

from kernelwatch import loaded_at_first_use
from kernelwatch.render.cells import aligned, format_value, render_table, summary_line

if TYPE_CHECKING:
    from kernelwatch.render.document import SCHEMA_VERSION, render_json
    from kernelwatch.render.junit import render_junit
    from kernelwatch.render.markdown import render_markdown

_LOADED_AT_FIRST_USE = {
    "SCHEMA_VERSION": "document",
    "render_json": "document",
    "render_junit": "junit",
    "render_markdown": "markdown",
}


def __getattr__(name: str) -> Any:
    return loaded_at_first_use(__name__, _LOADED_AT_FIRST_USE, name)


__all__ = [
    "SCHEMA_VERSION",
    "aligned",
    "format_value",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_table",
    "summary_line",
]
