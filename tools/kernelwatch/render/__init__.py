"""Views of a compare Report: terminal table, Markdown, JSON (schema in docs/compare.md), JUnit.

cells.py      what every view shows of a comparison, worded once (values, changes, lines)
table.py      the terminal table
markdown.py   Markdown for a step summary or a PR comment
document.py   the JSON document
junit.py      JUnit XML
"""

from kernelwatch.render.cells import aligned, format_value, summary_line
from kernelwatch.render.document import SCHEMA_VERSION, render_json
from kernelwatch.render.junit import render_junit
from kernelwatch.render.markdown import render_markdown
from kernelwatch.render.table import render_table

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
