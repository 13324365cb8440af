"""Reading one Google Benchmark JSON file (1.7 or 1.8, the layout before 1.5, or an nvbench file
mapped to one) into validated columns: one format, read three ways, top to bottom here.

    the file        a file to a parsed document (orjson when installed), every failure one line
    the columns     FileColumns, time units, and how value rows become columns of doubles
    the reader      read_file, read_document: the fast path, else the row-by-row one
    the fast path   the usual file: one lean pass over the rows, then checks on whole columns
    in parts        a large usual file a part of its rows at a time (never all as dicts)
    row by row      any file: the first invalid row is the message (and the rows of the layout
                    before 1.5 as 1.5 writes them; the row of a failed benchmark)

A 10,000-benchmark file has 140,000 rows, so the usual file is read by the fast path. Anything
unusual or invalid sends the file through the row-by-row path, which handles every case and
words the exact message. (Issue 33: the seven modules of gbench/ were one concept cut to fit a
size rule.)
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import stat
import sys
import zlib
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from kernelwatch.errors import InputError, shortened
from kernelwatch.files import SURROGATE_ESCAPE, check_input_file, strict_json
from kernelwatch.names import registration, row_name, without_aggregate
from kernelwatch.results import HOST_BOUND_COUNTER, NVBENCH_SAMPLES_KEY, TIME_KEYS
from kernelwatch.tool import signals_held

# --- the file: a parsed document ------------------------------------------------------------------
# Parsing a JSON file into a document, every failure one InputError line.
#
# Parsing is most of the time of a large comparison: `orjson` is used when it is installed (the
# optional extra `kernelwatch[fast]`; 2-3x faster than `json` on a 70 MB file), else `json`.
# A file orjson refuses (bare NaN or Infinity, which Google Benchmark writes; invalid JSON) is
# parsed again with `json`, which accepts the bare words and gives the error messages. A file
# that starts as gzip does (a compressed baseline, `baseline update --compress`; any result) is
# read through gzip, whatever its name.


def _import_orjson() -> Any:
    """orjson, or None where it is not installed (optional speed-up: `pip install orjson`, or
    kernelwatch[fast]). SIGINT and SIGTERM wait until it has loaded: one that lands while it
    loads crashed the interpreter (orjson 3.8.3: a segmentation fault, no line said why), in
    1 of 3 such interrupts."""
    with signals_held():
        try:
            import orjson

            return orjson
        except ImportError:  # pragma: no cover - depends on the machine
            return None


_orjson: Any = _import_orjson()


# Deeper than any result (Google Benchmark's rows are 3 levels deep, nvbench's summaries 7,
# kernelwatch's kernel records 8) and far below what the json module can write back (Python's
# recursion limit, 1,000 less the stack): orjson and json read up to about 1,000 levels, and a history's
# content hash or a written baseline then failed on a deep context or nvbench `meta`.
MAX_DEPTH = 100

GZIP_MAGIC = b"\x1f\x8b"
# The most a compressed file may unpack to: far above any result (a pooled baseline of 285,000
# rows is 272 MB of text), far below what would exhaust the machine (a gzip bomb: 1 GB of
# zeros packs into 1 MB).
MAX_UNPACKED = 2 << 30


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every way it can fail into one InputError line. Every
    result file is read here, so here its format is told apart: an nvbench file comes back as
    the Google Benchmark document it maps to (kernelwatch/nvbench.py)."""
    document = _parse(path)
    check_depth(path, document)
    if is_nvbench(document):
        from kernelwatch import nvbench  # (loaded for nvbench's files alone)

        return nvbench.as_google_benchmark(document, path)
    return document


def is_nvbench(document: Any) -> bool:
    """Whether a parsed JSON document is nvbench's output."""
    if not isinstance(document, dict) or "context" in document:
        return False
    benchmarks = document.get("benchmarks")
    return (
        isinstance(document.get("meta"), dict)
        and isinstance(document.get("devices"), list)
        and isinstance(benchmarks, list)
        and all(isinstance(b, dict) and "states" in b for b in benchmarks)
    )


def unpacked(path: str | Path, data: bytes) -> bytes:
    """`data` as it is, or decompressed when it starts as gzip does; one InputError line for a
    damaged file or one that unpacks past MAX_UNPACKED."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as packed:
            text = packed.read(MAX_UNPACKED + 1)
    except (OSError, EOFError, zlib.error) as exc:  # (gzip.BadGzipFile is an OSError)
        raise InputError(f"{path}: a damaged gzip file ({exc})") from None
    if len(text) > MAX_UNPACKED:
        raise InputError(f"{path}: unpacks to more than {MAX_UNPACKED >> 30} GiB; not a result")
    return text


def _parse(path: str | Path) -> Any:
    file = Path(path)
    check_input_file(file, "a result file")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read: {exc.strerror or exc}") from None
    data = unpacked(file, data)
    if data.startswith(_BOM):  # (Windows editors and PowerShell 5 write one; RFC 8259 8.1)
        data = data[len(_BOM) :]
    if not data or data.isspace():  # (isspace stops at the first other byte; strip copies)
        # Google Benchmark opens --benchmark_out before it looks for benchmarks (1.7, 1.8).
        raise InputError(
            f"{file}: empty file (Google Benchmark leaves its --benchmark_out empty when "
            "--benchmark_filter matches no benchmark)"
        )
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # NaN/Infinity, or bad input: json below accepts the one, explains the other
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{file}: not a JSON text file (invalid UTF-8)") from None
    try:
        # Google Benchmark writes NaN and Infinity as bare words; json accepts them by default.
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if not _looks_like_json(text):
            start = text.lstrip()[:20].splitlines()[0]
            hint = _gbench_text_hint(text)
            raise InputError(f"{file}: not JSON (it starts with {start!r}){hint}") from None
        where = f"line {exc.lineno} column {exc.colno}"
        what = f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"
        ends_early = exc.pos >= len(text.rstrip()) or not text.rstrip().endswith(("}", "]"))
        hint = "; the file ends early (truncated?)" if ends_early else ""
        if exc.msg == "Extra data":  # a whole document, then more: `>>` onto an old result
            hint = "; more follows the first JSON document (two results in one file?)"
        raise InputError(f"{file}: invalid JSON: {what}{hint}") from None
    except RecursionError:
        raise InputError(_too_deep(file)) from None
    except ValueError:  # Python reads no integer of more digits (sys.get_int_max_str_digits)
        raise InputError(
            f"{file}: invalid JSON: an integer of more than {sys.get_int_max_str_digits()} digits"
        ) from None
    if SURROGATE_ESCAPE.search(text):  # (orjson refuses them; json lets them through)
        lone = _lone_surrogate(document)
        if lone is not None:
            raise InputError(
                f"{file}: invalid JSON: a string holds a lone surrogate "
                f"(\\u{ord(lone):04x}), which is not Unicode text"
            )
    return document


def check_depth(path: str | Path, document: Any) -> None:
    """Refuse a document nested more than MAX_DEPTH levels (without recursion: that is what
    fails)."""
    stack: list[tuple[Any, int]] = []
    if type(document) is dict or type(document) is list:
        stack.append((document, 1))
    children: Iterable[Any]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(_too_deep(path))
        if type(value) is dict:
            children = value.values()
        elif _flat_objects(value):
            continue  # rows: 140,000 of them looked at in one pass in C, 2x faster
        else:
            children = value
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))


def _flat_objects(items: list[Any]) -> bool:
    """Whether `items` are objects none of whose values is an object or a list."""
    try:
        kinds = set(map(type, chain.from_iterable(map(dict.values, items))))
    except TypeError:  # an item that is not an object
        return False
    return dict not in kinds and list not in kinds


def _too_deep(path: str | Path) -> str:
    return f"{path}: invalid JSON: nested too deeply (more than {MAX_DEPTH} levels)"


_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark
_JSON_START = re.compile(
    r'\s*(\{|\[\s*($|[\[{"\-0-9tfnNI\]])|"|-?[0-9]|true|false|null|NaN|-?Infinity)'
)


def _looks_like_json(text: str) -> bool:
    """Whether a text that failed to parse starts as JSON does (a truncated or damaged JSON
    file), or as something else (TOML's `[section]`, CSV, HTML): then it is "not JSON". A
    number or word followed by more text is something else too: Google Benchmark's console and
    CSV files start with the date, `2026-11-24T17:18:44+00:00`, which json reads as 2026."""
    if _JSON_START.match(text) is None:
        return False
    try:
        value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except json.JSONDecodeError:
        return True  # an object or list that breaks off or is damaged
    return isinstance(value, (dict, list))


def _gbench_text_hint(text: str) -> str:
    """What to do when the file is Google Benchmark's console or CSV output (the date, then
    `Running <binary>`, in both): written with the wrong --benchmark_out_format, or stdout."""
    lines = text.lstrip().splitlines()[:2]
    if len(lines) == 2 and lines[1].startswith("Running "):
        return (
            "; it is Google Benchmark's console or CSV output: write the result with "
            "--benchmark_out=FILE --benchmark_out_format=json"
        )
    return ""


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in the strings (and keys) of a parsed document, if any."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _lone_in(item)
            if found is not None:
                return found
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _lone_in(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


# --- the columns ----------------------------------------------------------------------------------
# The validated columns of one result file (FileColumns), and how rows become columns: times
# and counters as arrays of doubles, gaps where a row lacks a key, labels.


# Scale of each Google Benchmark time unit in nanoseconds; times are compared in ns.
TIME_UNITS: dict[str, float] = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# Row keys that are not counters (everything else numeric in a row is a counter).
RESERVED_KEYS = frozenset(
    {
        "name",
        "run_name",
        "run_type",
        "repetitions",
        "repetition_index",
        "threads",
        "iterations",
        "real_time",
        "cpu_time",
        "time_unit",
        "family_index",
        "per_family_instance_index",
        "aggregate_name",
        "aggregate_unit",
        "error_occurred",
        "error_message",
        "skipped",
        "skip_message",
        "label",
        "big_o",
        "cpu_coefficient",
        "real_coefficient",
        "rms",
    }
)


@dataclass(frozen=True)
class FileColumns:
    """One result file, validated. Value rows are grouped by benchmark, in `names` order:
    benchmark k owns the next counts[k] rows of every column."""

    path: str
    context: dict[str, Any]
    names: list[str]
    counts: list[int]  # 0 for a benchmark that only errored or was skipped
    from_aggregates: list[bool]  # its one row is a median (else mean) aggregate
    time_scales: array[float]  # per benchmark: ns per unit of its times (one unit per benchmark)
    columns: dict[
        str, array[float]
    ]  # real_time, cpu_time (in time_scales units), counters; NaN where absent
    gaps: dict[str, bytes]  # for columns absent from some rows: 1 where absent
    errors: dict[str, str]
    skipped: dict[str, str]
    notes: tuple[str, ...] = ()  # what the statistics should say about this file
    labels: dict[str, str] = field(default_factory=dict)  # Google Benchmark's `label`, if any
    registered: dict[str, int] = field(default_factory=dict)  # its `family_index`, if any


def show(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return shortened(
        repr(value) if isinstance(value, (int, float)) else strict_json(value, indent=None)
    )


def labels(names: list[str], firsts: list[dict[str, Any]]) -> dict[str, str]:
    """Each benchmark's `label` (SetLabel), from its first value row: shown beside its name."""
    return {
        name: row["label"]
        for name, row in zip(names, firsts)
        if isinstance(row.get("label"), str) and row["label"]
    }


def registration_order(names: list[str], firsts: list[dict[str, Any]]) -> dict[str, int]:
    """Each benchmark's `family_index` (Google Benchmark >= 1.6), from its first value row: its
    family's place in its binary's registration order, which the rows, interleaved at random,
    do not keep. The report's figures order a family's variants by it."""
    return {
        name: row["family_index"]
        for name, row in zip(names, firsts)
        if isinstance(row.get("family_index"), int) and not isinstance(row["family_index"], bool)
    }


def to_columns(
    rows: list[dict[str, Any]],
    firsts: list[dict[str, Any]],
    taken: dict[str, list[Any]] | None = None,
) -> tuple[dict[str, array[float]], dict[str, bytes]]:
    """Times as written (in the file's units) and every numeric counter; rows are validated.
    Counter names come from the first value row of each benchmark: Google Benchmark writes the
    same counters for every repetition. `taken`: values of some keys already taken from the
    rows, in the same order (not taken twice)."""
    taken = taken or {}

    def values_of(key: str) -> list[Any]:
        return taken[key] if key in taken else [row.get(key) for row in rows]

    columns = {"real_time": array("d", values_of("real_time"))}
    gaps: dict[str, bytes] = {}
    counters = set().union(*firsts) - RESERVED_KEYS
    for key in ["cpu_time", *sorted(counters)]:
        values = values_of(key)
        found = doubles(values)
        if found is None:
            _refuse_mixed(key, values, rows)
            continue  # strings, lists, huge integers: not a counter
        columns[key], gap = found
        if gap is not None:
            gaps[key] = gap
    return columns, gaps


def doubles(values: list[Any]) -> tuple[array[float], bytes | None] | None:
    """One key's values as doubles, NaN where a row lacks it, and which rows lack it (None when
    none does); None when they are not all numbers (strings, lists, huge integers)."""
    try:
        return array("d", values), None  # as is first: most columns have no gaps
    except TypeError:
        if None in values:
            try:
                return array("d", [math.nan if v is None else v for v in values]), bytes(
                    v is None for v in values
                )
            except (TypeError, OverflowError):
                return None
    except OverflowError:
        pass
    return None


class MixedCounter(ValueError):
    """A counter that is a number in some rows and something else in another."""


def _refuse_mixed(key: str, values: list[Any], rows: list[dict[str, Any]]) -> None:
    """A column of numbers with one string (or list, ...) in it is a damaged row, not a column
    that is no counter: name that row, rather than let --metric say no benchmark has it."""
    numeric = [type(v) in (int, float) for v in values]
    if not any(numeric):
        return
    for i, (value, is_number) in enumerate(zip(values, numeric)):
        if not is_number and value is not None:
            row = rows[i]
            name = row.get("name")
            repetition = row.get("repetition_index")
            where = f" (repetition {repetition})" if repetition is not None else ""
            raise MixedCounter(
                f"{name}{where}: counter {key!r} is {show(value)}, a number in the other rows"
            )


# --- the reader: a file or document to columns ----------------------------------------------------
# A result file or parsed document to validated columns: the fast path for the usual file,
# else the row-by-row path (one result, by the same rules).


def read_file(path: str, in_directory: bool = False) -> FileColumns | None:
    """Read and validate one result file. In a directory, a JSON object without a
    "benchmarks" key (a manifest, say) is not a result: None."""
    columns = read_streamed(path)
    return columns if columns is not None else _read_whole(path, in_directory)


def read_streamed(path: str) -> FileColumns | None:
    """The usual result file, read a part of its rows at a time (in parts, below: never all of them
    as dicts); None for any other file, valid or not (read_file reads it whole)."""
    parts = read_parts(path)
    if parts is None:
        return None
    shell, columns = parts
    if is_nvbench(shell) or _report_of(shell):
        return None
    check_depth(path, shell)  # (its rows were read as columns: only the rest is kept)
    check_context(path, columns.context)
    note = _nvbench_note(path, columns.context)
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


# The context keys the tools read as text: the GPU (a baseline's folder, a comment's marker),
# the software it ran with, the commit and the run. The harness and --benchmark_context write
# each as a string, nvbench's conversion null where a device does not say; anything else
# (`"gpu_name": 5`) was taken as is and named a baseline 5-sm5. Not Google Benchmark's `date`:
# only shown and sorted as text, a malformed one is a result like any other (test_hardening).
TEXT_CONTEXT_KEYS = (
    "gpu_name",
    "gpu_compute_capability",
    "gpu_uuid",
    "host_gpu_uuids",
    "host_name",
    "gpu_driver_version",
    "cuda_runtime_version",
    "cuda_driver_api_version",
    "library_build_type",
    "kernelwatch_build_type",
    "kernelwatch_cache_mode",
    "kernelwatch_git_commit",
    "kernelwatch_run_started",
)


def check_context(path: str, context: Mapping[str, Any]) -> None:
    """Each of TEXT_CONTEXT_KEYS a string (or null) where the context has it."""
    for key in TEXT_CONTEXT_KEYS:
        if not isinstance(context.get(key, ""), (str, type(None))):
            raise InputError(f'{path}: context "{key}" is not a string')


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
    check_context(path, document.get("context", {}))
    for i, row in enumerate(document["benchmarks"]):
        if not isinstance(row, dict):
            raise InputError(f"{path}: benchmarks[{i}] is not an object")
    return document


def read_document(path: str, document: Any) -> FileColumns:
    """Validate a parsed result document; `path` names it in messages."""
    context = check_envelope(path, document).get("context", {})
    columns = _read(path, context, document["benchmarks"])
    note = _nvbench_note(path, context)
    return columns if note is None else replace(columns, notes=(note,))


def _nvbench_note(path: str, context: Mapping[str, Any]) -> str | None:
    """nvbench.summaries_note for a converted nvbench file (its context says so); None for any
    other file, without loading nvbench.py."""
    if NVBENCH_SAMPLES_KEY not in context:
        return None
    from kernelwatch import nvbench

    return nvbench.summaries_note(path, context)


def _read(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns:
    rows = as_1_5_layout(path, rows)
    columns = read_usual(path, context, rows)
    if columns is None:
        columns = read_rows(path, context, distinguish_registrations(rows))
    return columns


# --- the fast path --------------------------------------------------------------------------------
# The fast path for the usual result file: one lean pass over the rows, then every check on
# whole columns (a 10,000-benchmark file has 140,000 rows). Anything unusual or invalid is left to
# the row-by-row path (below), which handles every case and words the exact message.
#
# The rows may come in parts (`Usual.take`, one call per part; read_parts parses a large file
# a part at a time): each part is turned into columns of doubles as it comes, so that its parsed
# rows can go before the next part is parsed (a 285,000-row baseline parsed whole is 1 GB of
# dicts; its columns are 55 MB).


def read_usual(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns | None:
    """The usual file, fast: every row an object with a name, a run_name and a run_type
    of iteration or aggregate; no error or skipped rows; every aggregate after a repetition
    of its benchmark (so it is ignored). The same result as `rows.read_rows`, by the same rules,
    checked on whole columns after one lean pass; None for any other file, valid or not."""
    usual = Usual()
    usual.take(rows)
    return usual.columns(path, context)


@dataclass
class _Part:
    """One part's value rows as columns: each key's `_doubles` (its doubles and where its rows
    lack it, or what else it holds)."""

    size: int
    columns: dict[str, Any]  # key -> _doubles' answer


@dataclass
class Usual:
    """The fast path, fed the rows a part at a time (`take`), then `columns`. Once a part is
    not the usual file's, the rest is ignored and `columns` is None."""

    unusual: bool = False
    index: dict[str, int] = field(default_factory=dict)  # benchmark -> number, first seen
    firsts: list[dict[str, Any]] = field(default_factory=list)  # its first value row's keys
    codes: array[int] = field(default_factory=lambda: array("q"))  # per value row
    repetitions: list[np.ndarray] = field(default_factory=list)
    unit_names: set[str] = field(default_factory=set)
    unit_of: set[tuple[int, str]] = field(default_factory=set)
    parts: list[_Part] = field(default_factory=list)

    def take(self, rows: Iterable[Any]) -> None:
        if not self.unusual and not self._take(rows):
            self.unusual = True
            self.parts.clear()

    def _take(self, rows: Iterable[Any]) -> bool:
        index = self.index
        codes: list[int] = []
        value_rows: list[dict[str, Any]] = []
        repetitions: list[Any] = []
        units: list[Any] = []
        real: list[Any] = []
        cpu: list[Any] = []
        for row in rows:
            if type(row) is not dict:
                return False
            name = row.get("name")
            ident = row.get("run_name")
            if type(name) is not str or not name or type(ident) is not str or not ident:
                return False
            run_type = row.get("run_type")
            if run_type == "iteration":
                if row.get("error_occurred") or row.get("skipped"):
                    return False
                code = index.get(ident)
                if code is None:
                    code = index[ident] = len(index)
                    first = dict.fromkeys(row.keys() - RESERVED_KEYS)
                    for kept in ("label", "family_index"):
                        if kept in row:
                            first[kept] = row[kept]
                    self.firsts.append(first)  # (its counters, label, family: to_columns' firsts)
                codes.append(code)
                value_rows.append(row)
                repetitions.append(row.get("repetition_index"))
                units.append(row.get("time_unit", "ns"))
                real.append(row.get("real_time"))
                cpu.append(row.get("cpu_time"))
            elif run_type != "aggregate" or ident not in index:
                return False
        if not value_rows:
            return True
        # Types first: JSON true and false would pass as numbers below.
        if (
            {type(r) for r in repetitions} != {int}
            or {type(u) for u in units} != {str}
            or not {type(t) for t in real} <= {float, int}
            or not {type(t) for t in cpu} <= {float, int, type(None)}
        ):
            return False
        try:
            self.repetitions.append(np.array(repetitions, dtype=np.int64))
        except OverflowError:
            return False
        self.codes.extend(codes)
        self.unit_names |= set(units)
        self.unit_of |= set(zip(codes, units))
        columns: dict[str, _Found] = {
            "real_time": _doubles(real),
            "cpu_time": _doubles(cpu),
        }
        for key in set().union(*value_rows) - RESERVED_KEYS:
            values = [row.get(key) for row in value_rows]
            if key == HOST_BOUND_COUNTER and not {type(v) for v in values} <= _COUNTER_TYPES:
                return False  # (refused row by row: _check_host_bound)
            columns[key] = _doubles(values)
        self.parts.append(_Part(len(value_rows), columns))
        return True

    def columns(self, path: str, context: dict[str, Any]) -> FileColumns | None:
        """The file's columns, checked as a whole; None for any file that is not the usual."""
        if self.unusual or not self.parts:
            return None
        names = list(self.index)
        scales = _scales(self.unit_names, self.unit_of, len(names))
        benchmark = np.frombuffer(self.codes, dtype=np.int64)
        repetition = np.concatenate(self.repetitions)
        if scales is None or _repeated(benchmark, repetition):
            return None
        counters = set().union(*self.firsts) - RESERVED_KEYS
        columns: dict[str, array[float]] = {}
        gaps: dict[str, bytes] = {}
        for key in ["real_time", "cpu_time", *sorted(counters)]:
            joined = self._joined(key)
            if joined is None:
                return None  # (to_columns' MixedCounter: the row-by-row path words it)
            if not isinstance(joined, tuple):
                continue  # text: not a counter
            columns[key], gap = joined
            if gap is not None:
                gaps[key] = gap
        counts = np.bincount(benchmark)
        if (np.diff(benchmark) < 0).any():  # interleaved repetitions: group them, in file order
            grouped = np.argsort(benchmark, kind="stable")
            columns = {k: _taken(v, grouped) for k, v in columns.items()}
            gaps = {k: np.frombuffer(v, dtype=np.uint8)[grouped].tobytes() for k, v in gaps.items()}
        # `0 < x < inf` is False for NaN too; a cpu_time may be absent, not negative.
        real_times = np.frombuffer(columns["real_time"])
        cpu_times = np.frombuffer(columns["cpu_time"])
        cpu_absent = np.frombuffer(gaps.get("cpu_time", bytes(len(cpu_times))), dtype=bool)
        if not (
            ((real_times > 0) & (real_times < math.inf)).all()
            and (((cpu_times >= 0) & (cpu_times < math.inf)) | cpu_absent).all()
        ):
            return None
        return FileColumns(
            path,
            context,
            names,
            counts.tolist(),
            [False] * len(names),
            array("d", scales),
            columns,
            gaps,
            {},
            {},
            labels=labels(names, self.firsts),
            registered=registration_order(names, self.firsts),
        )

    def _joined(self, key: str) -> tuple[array[float], bytes | None] | None | bool:
        """A key's column over every part (NaN, and a gap, where a row lacks it), as to_columns
        makes it; False for a column without numbers (text: not a counter); None where numbers
        are mixed with something else (to_columns' MixedCounter, or a huge integer)."""
        found = [part.columns.get(key, _ABSENT) for part in self.parts]
        if any(f is _TEXT or f is None for f in found):
            # A part of text: the whole column is no counter if no other part has a number.
            numbers = any(
                f is None or (f is not _TEXT and f is not _ABSENT and (f[1] is None or 0 in f[1]))
                for f in found
            )
            return None if numbers else False
        column: array[float] = array("d")
        gap_parts: list[bytes] = []
        has_gaps = False
        for part, (values, gap) in zip(self.parts, found):  # type: ignore[misc]
            if values is None:
                values = array("d", [math.nan]) * part.size
                gap = b"\x01" * part.size
            column += values
            gap_parts.append(gap if gap is not None else bytes(part.size))
            has_gaps = has_gaps or gap is not None
        return column, (b"".join(gap_parts) if has_gaps else None)


# What a part holds of a key: its doubles and gaps; _ABSENT where no row has the key; _TEXT
# where no row has a number (a column of text is no counter); None where numbers are mixed
# with something else (or an integer too large for a double).
_Found = Any
_ABSENT: _Found = (None, None)
_TEXT: _Found = ("text", None)


def _doubles(values: list[Any]) -> _Found:
    """A part's values of one key as to_columns converts them (columns.doubles)."""
    found = doubles(values)
    if found is not None:
        return found
    return None if any(type(v) in (int, float) for v in values) else _TEXT


def _taken(column: array[float], order: np.ndarray) -> array[float]:
    out = array("d")
    out.frombytes(np.frombuffer(column, dtype=float)[order].tobytes())
    return out


def _scales(names: set[str], unit_of: set[tuple[int, str]], benchmarks: int) -> list[float] | None:
    """ns per unit of each benchmark; None for an unknown unit or a benchmark with two."""
    if not names <= TIME_UNITS.keys():
        return None
    if len(names) == 1:
        return [TIME_UNITS[next(iter(names))]] * benchmarks
    if len(unit_of) != benchmarks:
        return None
    return [TIME_UNITS[unit] for _, unit in sorted(unit_of)]


def _repeated(benchmark: np.ndarray, repetition: np.ndarray) -> bool:
    """Whether a (benchmark, repetition_index) pair occurs twice: sorted by both, two equal
    neighbours."""
    by_both = np.lexsort((repetition, benchmark))
    return bool(((np.diff(benchmark[by_both]) == 0) & (np.diff(repetition[by_both]) == 0)).any())


# --- a large file in parts ------------------------------------------------------------------------
# A large result file read a part of its rows at a time (needs orjson): each part becomes
# columns (Usual) before the next is parsed, so the file's rows are never all Python dicts at
# once (a 285,000-row pooled baseline, 272 MB: 1.3 GB parsed whole, ~0.1 GB so).
#
# The rows are cut where one ends and the next starts on its own line (`},\n    {`: Google
# Benchmark's layout and kernelwatch's). A raw newline is never inside a JSON string, and each part
# must parse as a list of rows, so a cut made anywhere else fails to parse: then, and for any file
# that is not the usual one, the caller reads the whole file (read_json, read_file). A
# gzip file is unpacked in memory first (a compressed baseline: 17 MB of text for five cards).


PART_BYTES = 4 << 20  # ~4,000 rows: 15 MB of dicts at a time
HEAD_BYTES = 64 << 20  # a context larger than this: read whole
_BENCHMARKS = re.compile(rb'"benchmarks"\s*:\s*\[(\s*)')


def read_parts(
    path: str, part_bytes: int = PART_BYTES
) -> tuple[dict[str, Any], FileColumns] | None:
    """The file's document without its rows (its "benchmarks" an empty list) and its columns,
    read a part at a time; None for a file this does not read (the caller reads it whole)."""
    if _orjson is None:
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # (a pipe is read once: by the caller)
            return None
        with open(path, "rb") as file:
            if file.read(len(GZIP_MAGIC)) == GZIP_MAGIC:  # its text unpacked, then read alike
                file.seek(0)
                return _read_part_by_part(path, io.BytesIO(unpacked(path, file.read())), part_bytes)
            file.seek(0)
            return _read_part_by_part(path, file, part_bytes)
    except (OSError, ValueError):  # (orjson.JSONDecodeError is a ValueError)
        return None


def _read_part_by_part(
    path: str, file: BinaryIO, part_bytes: int
) -> tuple[dict[str, Any], FileColumns] | None:
    size = file.seek(0, 2)
    tail_at = _tail_at(file, size)
    if tail_at is None:
        return None
    file.seek(tail_at)
    tail = file.read()
    file.seek(0)
    # The document with a mark for the rows: they are the "benchmarks" of the document only if
    # the mark is (not a nested "benchmarks", not one that a later key of that name replaces).
    mark = f"kernelwatch-rows-{os.urandom(8).hex()}"
    head = b""
    while True:
        more = file.read(max(part_bytes, 1 << 16))
        head += more
        located = _shell_at(head, tail_at, tail, mark, more == b"")
        if located is not None:
            break
        if not more or len(head) >= HEAD_BYTES:
            return None
    found, shell = located
    body_at = found.end()
    shell["benchmarks"] = []
    context = shell.get("context", {})
    if not isinstance(context, dict):
        return None
    cut = b"},\n" + found.group(1).lstrip(b"\r\n") + b"{"  # one row's end, the next's start
    usual = Usual()
    pending = head[body_at:]
    file.seek(len(head))
    at = len(head)
    while True:
        block = file.read(min(part_bytes, max(tail_at - at, 0)))
        if not block and at < tail_at:
            return None  # (the file shrank under us)
        at += len(block)
        pending += block
        last = at >= tail_at
        if last:
            pending = pending[: len(pending) - (at - tail_at)]
            part, pending = pending, b""
        else:
            end = pending.rfind(cut)
            if end < 0:
                continue
            part, pending = pending[: end + 1], pending[end + 2 :]
        rows = _orjson.loads(b"[" + part + b"]")
        if not rows:
            return None  # (no rows, or `,,`: read whole, which says what it is)
        usual.take(rows)
        del rows
        if usual.unusual:
            return None
        if last:
            break
    columns = usual.columns(path, context)
    return None if columns is None else (shell, columns)


def _tail_at(file: BinaryIO, size: int) -> int | None:
    """Where the rows' closing `]` is: the last `]` of the file (its end: `]` then `}`)."""
    back = min(size, 1 << 16)
    file.seek(size - back)
    end = file.read(back)
    at = end.rfind(b"]")
    return None if at < 0 else size - back + at


def _shell_at(
    head: bytes, tail_at: int, tail: bytes, mark: str, whole: bool
) -> tuple[re.Match[bytes], dict[str, Any]] | None:
    """The top-level "benchmarks" list's opening in `head`, and the document without its rows
    (the rows replaced by `mark` must be its "benchmarks"); None if not in `head` (`whole`: the
    head is the whole file)."""
    for found in _BENCHMARKS.finditer(head, 0, tail_at):
        if found.end() == len(head) and not whole:
            return None  # (the first row's indent may go on)
        opened = found.end() - len(found.group(1)) - 1
        try:
            shell = _orjson.loads(head[:opened] + f'"{mark}"'.encode() + tail[1:])
        except ValueError:
            continue  # a nested one (else a BOM, bare NaN, bad JSON: read whole)
        if isinstance(shell, dict) and shell.get("benchmarks") == mark:
            return found, shell
    return None


# --- row by row -----------------------------------------------------------------------------------
# The row-by-row path: any result file, valid or not, one row after another; the first
# invalid row (in file order) is the message. The usual file takes the fast path (above) and
# gets the same result.


def read_rows(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns:
    """Any file, row by row; the first invalid row (in file order) is the message."""

    def fail(message: str) -> InputError:
        return InputError(f"{path}: {message}")

    taken = _Taken(fail)
    for i, row in enumerate(rows):
        taken.take(i, row)
    for ident, unit in taken.units.items():
        if type(unit) is not str or unit not in TIME_UNITS:  # (a list: unhashable)
            raise fail(f"{ident}: unknown time_unit {shortened(repr(unit))}")
    return _file_columns(path, context, rows, _Layout.of(taken))


def _file_columns(
    path: str, context: dict[str, Any], rows: list[Any], layout: _Layout
) -> FileColumns:
    """The columns of the value rows that `layout` chose."""
    value_rows = [rows[i] for i in layout.value_rows]
    _check_host_bound(path, value_rows)
    firsts, offset, measured = [], 0, []
    for name, count in zip(layout.names, layout.counts):
        if count:
            firsts.append(value_rows[offset])
            measured.append(name)
        offset += count
    try:
        columns, gaps = to_columns(value_rows, firsts)
    except OverflowError:  # an integer beyond the range of a double
        raise InputError(f"{path}: a time or counter is too large to be a number") from None
    except MixedCounter as exc:
        raise InputError(f"{path}: {exc}") from None
    return FileColumns(
        path,
        context,
        layout.names,
        layout.counts,
        layout.from_aggregates,
        array("d", layout.scales),
        columns,
        gaps,
        layout.errors,
        layout.skipped,
        labels=labels(measured, firsts),
        registered=registration_order(measured, firsts),
    )


# A counter's value as Google Benchmark writes it, or absent (a JSON true is a bool).
_COUNTER_TYPES = {int, float, type(None)}


def _check_host_bound(path: str, rows: list[dict[str, Any]]) -> None:
    """The harness's host_bound counter is read one way by every command (hostbound.flag):
    a true would become 1.0 here and a "1" in every row no counter at all, so that compare
    judged a copy `run` refuses. Other values (2, NaN) are refused as the side is loaded
    (loading._merge, by ResultSet.host_bound)."""
    for row in rows:
        value = row.get(HOST_BOUND_COUNTER)
        if type(value) not in _COUNTER_TYPES:
            from kernelwatch import hostbound  # (it imports this module)

            hostbound.flag(value, path, row_name(row))


class _Taken:
    """What the row-by-row pass keeps of each benchmark, row after row: its repetition rows,
    else its central aggregate, else why it has no value (an error, a skip); each row checked
    as it comes (`fail` words the message)."""

    def __init__(self, fail: Callable[[str], InputError]) -> None:
        self.fail = fail
        self.buckets: dict[str, list[int]] = {}  # iteration rows per benchmark, first-seen order
        self.central: dict[str, tuple[int, int]] = {}  # (rank, row) of its median/mean aggregate
        self.units: dict[str, Any] = {}
        self.seen: set[tuple[str, Any]] = set()
        self.errors: dict[str, str] = {}
        self.skipped: dict[str, str] = {}
        self.order: dict[str, None] = {}  # every benchmark, first-seen order

    def take(self, i: int, row: Any) -> None:
        name, run_type, ident = self._identify(i, row)
        if run_type == "aggregate" and not self._wanted_aggregate(ident, row):
            return
        if ident not in self.order:
            self.order[ident] = None
        for flag in ("error_occurred", "skipped"):  # a string "false" is true to Python
            if flag in row and type(row[flag]) is not bool:
                raise self.fail(f"{name}: {flag} is {show(row[flag])}, not true or false")
        if row.get("error_occurred"):
            self.errors.setdefault(ident, str(row.get("error_message") or "error occurred"))
            return
        if row.get("skipped"):
            self.skipped.setdefault(ident, str(row.get("skip_message") or "skipped"))
            return
        if run_type == "iteration":
            self._repetition(i, ident, row)
        else:
            self._aggregate(i, ident, row.get("aggregate_name"))
        self._check_unit(ident, row)
        self._check_times(ident, row)

    def _identify(self, i: int, row: Any) -> tuple[str, str, str]:
        """The row's name, run_type (as old files imply it) and benchmark."""
        if type(row) is not dict:
            raise self.fail(f"benchmarks[{i}] is not an object")
        name = row.get("name")
        if type(name) is not str or not name:
            raise self.fail(f"benchmarks[{i}] has no name")
        run_type = row.get("run_type")
        if run_type is None:
            run_type = "aggregate" if "aggregate_name" in row else "iteration"
        if run_type != "aggregate" and run_type != "iteration":
            raise self.fail(f"{name}: unknown run_type {shortened(repr(run_type))}")
        ident = row.get("run_name")
        if type(ident) is not str or not ident:
            # Files without run_name name their aggregate rows "<run>_<aggregate>".
            aggregated = run_type == "aggregate"
            ident = without_aggregate(name, row.get("aggregate_name")) if aggregated else name
        return name, run_type, ident

    def _wanted_aggregate(self, ident: str, row: dict[str, Any]) -> bool:
        """Only a central value stands in for missing repetitions; stddev, cv, BigO, RMS and
        user statistics are not compared."""
        aggregate = row.get("aggregate_name")
        if ident in self.buckets or (aggregate != "median" and aggregate != "mean"):
            return False
        return bool(row.get("aggregate_unit", "time") == "time")

    def _repetition(self, i: int, ident: str, row: dict[str, Any]) -> None:
        # A name registered twice repeats its repetition indices.
        repetition = row.get("repetition_index")
        if type(repetition) is list or type(repetition) is dict:  # (unhashable: crashed below)
            raise self.fail(f"{ident}: repetition_index is {show(repetition)} (must be an integer)")
        if repetition is None:  # old files: count rows instead
            repetition = ("row", len(self.buckets.get(ident, ())))
            limit = row.get("repetitions", 1)
            if isinstance(limit, int) and repetition[1] >= limit:
                raise self.fail(f"duplicate benchmark name {ident!r}")
        key = (ident, repetition)
        if key in self.seen:
            raise self.fail(f"duplicate benchmark name {ident!r} (repetition {repetition} twice)")
        self.seen.add(key)
        bucket = self.buckets.get(ident)
        if bucket is None:
            self.buckets[ident] = [i]
        else:
            bucket.append(i)

    def _aggregate(self, i: int, ident: str, aggregate: Any) -> None:
        key = (ident, aggregate)
        if key in self.seen:
            raise self.fail(f"duplicate benchmark name {ident!r} ({aggregate} given twice)")
        self.seen.add(key)
        rank = 0 if aggregate == "median" else 1
        best = self.central.get(ident)
        if best is None or rank < best[0]:
            self.central[ident] = (rank, i)

    def _check_unit(self, ident: str, row: dict[str, Any]) -> None:
        unit = row.get("time_unit", "ns")
        first_unit = self.units.setdefault(ident, unit)
        if first_unit != unit:
            for given in (unit, first_unit):
                if type(given) is not str or given not in TIME_UNITS:  # (a list: unhashable)
                    raise self.fail(f"{ident}: unknown time_unit {shortened(repr(given))}")
            raise self.fail(
                f"{ident}: mismatched time units ({first_unit} and {unit}) in one benchmark"
            )

    def _check_times(self, ident: str, row: dict[str, Any]) -> None:
        real = row.get("real_time")
        # `0 < x < inf` is False for NaN too; type() excludes bool and strings.
        if not ((type(real) is float or type(real) is int) and 0 < real < math.inf):
            raise self.fail(
                f"{ident}: real_time is {show(real)} (must be a positive finite number)"
            )
        cpu = row.get("cpu_time")
        if cpu is not None and not (
            (type(cpu) is float or type(cpu) is int) and 0 <= cpu < math.inf
        ):
            raise self.fail(f"{ident}: cpu_time is {show(cpu)} (must be a finite number >= 0)")


@dataclass
class _Layout:
    """The benchmarks of a file in first-seen order, and which rows hold their values: the
    repetitions, else the central aggregate (one value), else none (an error or a skip)."""

    names: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    from_aggregates: list[bool] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    value_rows: list[int] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, taken: _Taken) -> _Layout:
        layout = cls(errors=taken.errors, skipped=taken.skipped)
        for ident in taken.order:
            bucket = taken.buckets.get(ident)
            if bucket:
                layout.value_rows.extend(bucket)
                layout.counts.append(len(bucket))
                layout.from_aggregates.append(False)
            elif ident in taken.central:
                layout.value_rows.append(taken.central[ident][1])
                layout.counts.append(1)
                layout.from_aggregates.append(True)
            elif ident in taken.errors or ident in taken.skipped:
                layout.counts.append(0)
                layout.from_aggregates.append(False)
            else:
                continue
            layout.names.append(ident)
            layout.scales.append(TIME_UNITS[taken.units.get(ident, "ns")])
        return layout


# Keys Google Benchmark 1.5 added to its rows; a file with none of them has the older layout.
_SINCE_1_5 = frozenset(
    {"run_name", "run_type", "repetitions", "repetition_index", "aggregate_name"}
)
# The statistics it wrote after a benchmark's repetitions before 1.5, as `<name>_<statistic>`.
_OLD_STATISTICS = ("mean", "median", "stddev", "cv")


def as_1_5_layout(path: str, rows: list[Any]) -> list[Any]:
    """Rows of Google Benchmark before 1.5 (name, iterations, times; nothing else) as 1.5
    writes them, as its compare.py reads them: the rows of one name are its repetitions, and a
    row `<name>_mean` (`_median`, `_stddev`, `_cv`) after them is their aggregate, which 1.5
    marks with run_type and aggregate_name. In an aggregates-only file, whose rows are all
    statistics, `<name>_mean` is one when `<name>_stddev` is there too (it always was).

    Such a file has no repetition_index to tell a name given twice from more repetitions, but
    then its repetitions follow one another (random interleaving came later): rows of one name
    that others separate are a duplicate benchmark name. Files with any 1.5 key keep their
    rows, and the checks by repetition_index and repetitions (row by row, the fast path)."""
    if any(type(row) is not dict or not _SINCE_1_5.isdisjoint(row) for row in rows):
        return rows  # (a row that is not an object: read_rows words it)
    names = {row["name"] for row in rows if type(row.get("name")) is str}
    converted: list[Any] = []
    previous: str | None = None  # the benchmark of the last repetition row
    index = 0
    seen: set[str] = set()
    for row in rows:
        name = row.get("name")
        if type(name) is not str:
            converted.append(row)  # (read_rows: "has no name")
            continue
        statistic = _old_statistic(name, names)
        if statistic is not None:
            run_name = without_aggregate(name, statistic)
            converted.append(
                {**row, "run_name": run_name, "run_type": "aggregate", "aggregate_name": statistic}
            )
            previous = None
            continue
        if name == previous:
            index += 1
        elif name in seen:
            raise InputError(
                f"{path}: duplicate benchmark name {name!r} (a file without repetition_index, "
                "Google Benchmark's before 1.5, whose rows of that name are apart)"
            )
        else:
            index = 0
            seen.add(name)
        previous = name
        converted.append({**row, "run_type": "iteration", "repetition_index": index})
    return converted


def _old_statistic(name: str, names: set[str]) -> str | None:
    """The statistic a row of the pre-1.5 layout holds, if it is one (as_1_5_layout)."""
    for statistic in _OLD_STATISTICS:
        suffix = f"_{statistic}"
        if name.endswith(suffix) and len(name) > len(suffix):
            base = name[: -len(suffix)]
            if base in names or (f"{base}_stddev" in names and f"{base}_mean" in names):
                return statistic
    return None


def distinguish_registrations(rows: list[Any]) -> list[Any]:
    """Rows of a benchmark name registered more than once (Google Benchmark allows it: its own
    complexity_test does) renamed `<name>#2`, `#3`, ... in registration order. Google Benchmark
    tells them apart by `family_index` and `per_family_instance_index`; files without those keep
    their names (and a name given twice is refused as a duplicate).

    The registrations are numbered within each process (`kernelwatch_process`): Google Benchmark
    numbers families and instances among those its filter selects, so a top-up or confirmation
    process, run with an anchored filter, gives the same benchmark other indices than the run's
    first processes (transpose/naive_rows/rows:8192/cols:8192/block_rows:8 was instance 2 of
    its family in an H200 run's two processes, instance 0 in its four top-up processes); only a
    name with two keys in one process is two registrations. Their order is that of the keys,
    which is registration order; the order the rows come in is not, under random interleaving."""
    keys: dict[tuple[str, Any], set[tuple[Any, Any]]] = {}
    for row in rows:
        key = _registration_key(row)
        if key is not None:
            keys.setdefault(key[0], set()).add(key[1])
    numbers: dict[tuple[str, Any], dict[tuple[Any, Any], int]] = {}
    for name_process, found in keys.items():
        if len(found) > 1:
            try:
                ordered = sorted(found)
            except TypeError:  # indices of mixed types: not Google Benchmark's; file order
                ordered = [k for k in _first_seen(rows, name_process) if k in found]
            numbers[name_process] = {key: k + 1 for k, key in enumerate(ordered)}
    if not numbers:
        return rows
    renamed = list(rows)
    for i, row in enumerate(rows):
        key = _registration_key(row)
        number = numbers.get(key[0], {}).get(key[1], 1) if key is not None else 1
        if number > 1:
            ident, name = row["run_name"], row.get("name")
            numbered = registration(ident, number)
            renamed[i] = {
                **row,
                "run_name": numbered,
                "name": name.replace(ident, numbered, 1) if isinstance(name, str) else name,
            }
    return renamed


def _registration_key(row: Any) -> tuple[tuple[str, Any], tuple[Any, Any]] | None:
    """((run_name, process), (family_index, per_family_instance_index)) of a row that has them."""
    if type(row) is not dict:
        return None
    ident, family = row.get("run_name"), row.get("family_index")
    if type(ident) is not str or family is None:
        return None
    process = row.get("kernelwatch_process")
    indices = (family, row.get("per_family_instance_index"))
    if any(type(index) is list or type(index) is dict for index in indices):
        return None  # not Google Benchmark's (integers), and unhashable: no registration
    return (ident, repr(process)), indices


def _first_seen(rows: list[Any], name_process: tuple[str, Any]) -> list[tuple[Any, Any]]:
    seen: list[tuple[Any, Any]] = []
    for row in rows:
        key = _registration_key(row)
        if key is not None and key[0] == name_process and key[1] not in seen:
            seen.append(key[1])
    return seen


def failed_row(name: str, message: str, *, skipped: bool = False) -> dict[str, Any]:
    """The one row of a benchmark that called SkipWithError(message) (`error_occurred`,
    `error_message`) or, with `skipped`, SkipWithMessage(message) (`skipped`, `skip_message`,
    Google Benchmark 1.8 on): no repetitions measured, zero times."""
    row: dict[str, Any] = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "iterations": 0,
        "real_time": 0.0,
        "cpu_time": 0.0,
        "time_unit": "ns",
    }
    if skipped:
        row.update(skipped=True, skip_message=message)
    else:
        row.update(error_occurred=True, error_message=message)
    return row
