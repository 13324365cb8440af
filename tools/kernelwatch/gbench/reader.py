"""A result file or parsed document to validated columns: the fast path for the usual file,
else the row-by-row path (one result, by the same rules)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kernelwatch import nvbench
from kernelwatch.errors import InputError
from kernelwatch.gbench.columns import FileColumns
from kernelwatch.gbench.fast import read_usual
from kernelwatch.gbench.jsonfile import check_depth, read_json
from kernelwatch.gbench.rows import as_1_5_layout, distinguish_registrations, read_rows
from kernelwatch.gbench.stream import read_parts


def read_file(path: str, in_directory: bool = False) -> FileColumns | None:
    """Read and validate one result file. In a directory, a JSON object without a
    "benchmarks" key (a manifest, say) is not a result: None."""
    columns = read_streamed(path)
    return columns if columns is not None else _read_whole(path, in_directory)


def read_streamed(path: str) -> FileColumns | None:
    """The usual result file, read a part of its rows at a time (stream.py: never all of them
    as dicts); None for any other file, valid or not (read_file reads it whole)."""
    parts = read_parts(path)
    if parts is None:
        return None
    shell, columns = parts
    if nvbench.is_nvbench(shell) or _report_of(shell):
        return None
    check_depth(path, shell)  # (its rows were read as columns: only the rest is kept)
    note = nvbench.summaries_note(path, columns.context)
    return columns if note is None else replace(columns, notes=(note,))


def _read_whole(path: str, in_directory: bool) -> FileColumns | None:
    document = read_json(path)
    if in_directory and isinstance(document, dict):
        # (a manifest's "benchmarks" is a count, a noise.json's an object; a compare report's
        # a list of verdicts, beside the result in the folder `run --out --json` wrote)
        if not isinstance(document.get("benchmarks"), list) or _report_of(document):
            return None
    return read_document(path, document)


def _report_of(document: dict[str, Any]) -> str | None:
    """The command whose JSON report (compare's --json, schema_version 1) this is, if any."""
    tool = document.get("tool")
    if "schema_version" in document and isinstance(tool, dict):
        if tool.get("name") == "kernelwatch":
            return str(tool.get("command") or "compare")
    return None


def check_envelope(path: str, document: Any) -> dict[str, Any]:
    """`document` if it is shaped as a result: an object with a "benchmarks" list of objects
    and, if it has one, a "context" object (what a reader of raw rows takes for granted)."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise InputError(f'{path}: not a Google Benchmark result (no "benchmarks" list)')
    command = _report_of(document)
    if command is not None:
        raise InputError(
            f"{path}: the JSON report of kernelwatch {command} (its verdicts), not a benchmark "
            "result: give the result file it compared"
        )
    if not isinstance(document.get("context", {}), dict):
        raise InputError(f'{path}: not a Google Benchmark result ("context" is not an object)')
    for i, row in enumerate(document["benchmarks"]):
        if not isinstance(row, dict):
            raise InputError(f"{path}: benchmarks[{i}] is not an object")
    return document


def read_document(path: str, document: Any) -> FileColumns:
    """Validate a parsed result document; `path` names it in messages."""
    context = check_envelope(path, document).get("context", {})
    columns = _read(path, context, document["benchmarks"])
    note = nvbench.summaries_note(path, context)
    return columns if note is None else replace(columns, notes=(note,))


def _read(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns:
    rows = as_1_5_layout(path, rows)
    columns = read_usual(path, context, rows)
    if columns is None:
        columns = read_rows(path, context, distinguish_registrations(rows))
    return columns
