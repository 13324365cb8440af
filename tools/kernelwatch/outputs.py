"""Where a compare Report goes: stdout in the chosen format, and the JUnit, Markdown and JSON
files asked for; the exit status. `compare`, `run` and `ab` end here."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from kernelwatch import explain, render
from kernelwatch.compare import Report
from kernelwatch.errors import InputError
from kernelwatch.files import Output, write_atomic, write_output


@dataclass(frozen=True)
class Outputs:
    format: str = "table"  # table, markdown or json, on stdout
    junit: str | None = None
    markdown: str | None = None
    json: str | None = None
    color: str = "auto"  # auto, always or never


def report_outputs(outputs: Outputs) -> list[Output]:
    """The report files asked for, for files.check_outputs before the work."""
    return [
        Output("--junit", outputs.junit),
        Output("--markdown", outputs.markdown),
        Output("--json", outputs.json),
    ]


def write_report(report: Report, outputs: Outputs, command: str = "compare") -> int:
    """Warnings on stderr, the JUnit and Markdown files if asked, the report on stdout; the
    exit status. Kernel changes are classified here when the caller explained nothing (free:
    it reads the results' kernel records)."""
    if not report.explanations:
        report = explain.explain(report)
    for warning in report.warnings:
        print(f"kernelwatch: warning: {warning}", file=sys.stderr)
    files = [(outputs.junit, "--junit", "render_junit")]
    files.append((outputs.markdown, "--markdown", "render_markdown"))
    files.append((outputs.json, "--json", "render_json"))
    for path, option, view in files:
        if path:  # (a format's code loads where its file is asked for: render/__init__.py)
            try:
                write_atomic(path, getattr(render, view)(report, command=command))
            except InputError as exc:
                raise InputError(f"{option} {exc}") from None
    if outputs.format == "json":
        text = render.render_json(report, command=command)
    elif outputs.format == "markdown":
        text = render.render_markdown(report, command=command)
    else:
        text = render.render_table(report, color=_use_color(outputs.color), command=command)
    write_output(text)
    return report.exit_status


def _use_color(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
