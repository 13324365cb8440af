"""Reading one Google Benchmark JSON file (1.7 or 1.8) into validated columns.

Parsing is most of the time of a large comparison: `orjson` is used when it is installed (the
optional extra `kernelwatch[fast]`; 2-3x faster than `json` on a 70 MB file), else `json`.
A file orjson refuses (bare NaN or Infinity, which Google Benchmark writes; invalid JSON) is
parsed again with `json`, which accepts the bare words and gives the error messages.

A 10,000-benchmark file has 140,000 rows, so the usual file is read by a fast path: one lean
pass over the rows, then every check on whole columns. Anything unusual or invalid sends the
file through the row-by-row path, which handles every case and words the exact message.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch import nvbench
from kernelwatch.errors import InputError
from kernelwatch.files import strict_json
from kernelwatch.names import registration, without_aggregate

_orjson: Any
try:  # optional speed-up: `pip install orjson` (or kernelwatch[fast])
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the machine
    _orjson = None

# Scale of each Google Benchmark time unit in nanoseconds; times are compared in ns.
TIME_UNITS: dict[str, float] = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
TIME_KEYS = ("real_time", "cpu_time")

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

_INF = math.inf
_NAN = math.nan


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


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every way it can fail into one InputError line. Every
    result file is read here, so here its format is told apart: an nvbench file comes back as
    the Google Benchmark document it maps to (kernelwatch/nvbench.py)."""
    document = _parse(path)
    if nvbench.is_nvbench(document):
        return nvbench.as_google_benchmark(document, path)
    return document


def _parse(path: str | Path) -> Any:
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read: {exc.strerror or exc}") from None
    if not data or data.isspace():  # (isspace stops at the first other byte; strip copies)
        raise InputError(f"{file}: empty file")
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
            raise InputError(f"{file}: not JSON (it starts with {start!r})") from None
        where = f"line {exc.lineno} column {exc.colno}"
        what = f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"
        ends_early = exc.pos >= len(text.rstrip()) or not text.rstrip().endswith(("}", "]"))
        hint = "; the file ends early (truncated?)" if ends_early else ""
        raise InputError(f"{file}: invalid JSON: {what}{hint}") from None
    except RecursionError:
        raise InputError(f"{file}: invalid JSON: nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):  # (orjson refuses them; json lets them through)
        lone = _lone_surrogate(document)
        if lone is not None:
            raise InputError(
                f"{file}: invalid JSON: a string holds a lone surrogate "
                f"(\\u{ord(lone):04x}), which is not Unicode text"
            )
    return document


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_JSON_START = re.compile(
    r'\s*(\{|\[\s*($|[\[{"\-0-9tfnNI\]])|"|-?[0-9]|true|false|null|NaN|-?Infinity)'
)


def _looks_like_json(text: str) -> bool:
    """Whether a text that failed to parse starts as JSON does (a truncated or damaged JSON
    file), or as something else (TOML's `[section]`, CSV, HTML): then it is "not JSON"."""
    return _JSON_START.match(text) is not None


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


def read_file(path: str, in_directory: bool = False) -> FileColumns | None:
    """Read and validate one result file. In a directory, a JSON object without a
    "benchmarks" key (a manifest, say) is not a result: None."""
    document = read_json(path)
    if (
        in_directory
        and isinstance(document, dict)
        and not isinstance(document.get("benchmarks"), list)
    ):  # (a manifest's "benchmarks" is a count, a noise.json's an object)
        return None
    return read_document(path, document)


def read_document(path: str, document: Any) -> FileColumns:
    """Validate a parsed result document; `path` names it in messages."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise InputError(f'{path}: not a Google Benchmark result (no "benchmarks" list)')
    context = document.get("context", {})
    if not isinstance(context, dict):
        raise InputError(f'{path}: not a Google Benchmark result ("context" is not an object)')
    columns = _Reader(path).read(context, document["benchmarks"])
    note = nvbench.summaries_note(path, context)
    return columns if note is None else replace(columns, notes=(note,))


def _show(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return repr(value) if isinstance(value, (int, float)) else strict_json(value, indent=None)


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.path}: {message}")

    def read(self, context: dict[str, Any], rows: list[Any]) -> FileColumns:
        columns = self._read_usual(context, rows)
        if columns is None:
            columns = self._read_rows(context, _distinguish_registrations(rows))
        return columns

    def _read_usual(self, context: dict[str, Any], rows: list[Any]) -> FileColumns | None:
        """The usual file, fast: every row an object with a name, a run_name and a run_type
        of iteration or aggregate; no error or skipped rows; every aggregate after a repetition
        of its benchmark (so it is ignored). The same result as `_read_rows`, by the same rules,
        checked on whole columns after one lean pass; None for any other file, valid or not."""
        index: dict[str, int] = {}  # benchmark -> its number, first-seen order
        codes: list[int] = []  # per value row: its benchmark's number
        value_rows: list[dict[str, Any]] = []
        repetitions: list[Any] = []
        units: list[Any] = []
        real: list[Any] = []
        cpu: list[Any] = []
        for row in rows:
            if type(row) is not dict:
                return None
            name = row.get("name")
            ident = row.get("run_name")
            if type(name) is not str or not name or type(ident) is not str or not ident:
                return None
            run_type = row.get("run_type")
            if run_type == "iteration":
                if row.get("error_occurred") or row.get("skipped"):
                    return None
                code = index.get(ident)
                if code is None:
                    code = index[ident] = len(index)
                codes.append(code)
                value_rows.append(row)
                repetitions.append(row.get("repetition_index"))
                units.append(row.get("time_unit", "ns"))
                real.append(row.get("real_time"))
                cpu.append(row.get("cpu_time"))
            elif run_type != "aggregate" or ident not in index:
                return None

        # Types first: JSON true and false would pass as numbers below.
        if (
            not value_rows
            or {type(r) for r in repetitions} != {int}
            or {type(u) for u in units} != {str}
            or not {type(t) for t in real} <= {float, int}
            or not {type(t) for t in cpu} <= {float, int, type(None)}
        ):
            return None
        scales = _scales(codes, units, len(index))
        benchmark = np.array(codes)
        if scales is None or _repeated(benchmark, repetitions):
            return None

        counts = np.bincount(benchmark)
        if (np.diff(benchmark) < 0).any():  # interleaved repetitions: group them, in file order
            grouped = np.argsort(benchmark, kind="stable").tolist()
            value_rows = [value_rows[i] for i in grouped]
            real = [real[i] for i in grouped]
            cpu = [cpu[i] for i in grouped]
        firsts = [value_rows[start] for start in (np.cumsum(counts) - counts).tolist()]
        try:
            columns, gaps = _columns(value_rows, firsts, {"real_time": real, "cpu_time": cpu})
        except (OverflowError, MixedCounter):
            return None
        if "cpu_time" not in columns:  # also an integer too large for a double
            return None
        # `0 < x < inf` is False for NaN too; a cpu_time may be absent, not negative.
        real_times = np.frombuffer(columns["real_time"])
        cpu_times = np.frombuffer(columns["cpu_time"])
        cpu_absent = np.frombuffer(gaps.get("cpu_time", bytes(len(cpu))), dtype=bool)
        if not (
            ((real_times > 0) & (real_times < _INF)).all()
            and (((cpu_times >= 0) & (cpu_times < _INF)) | cpu_absent).all()
        ):
            return None
        return FileColumns(
            self.path,
            context,
            list(index),
            counts.tolist(),
            [False] * len(index),
            array("d", scales),
            columns,
            gaps,
            {},
            {},
            labels=_labels(list(index), firsts),
        )

    def _read_rows(self, context: dict[str, Any], rows: list[Any]) -> FileColumns:
        """Any file, row by row; the first invalid row (in file order) is the message."""
        taken = _Taken(self.fail)
        for i, row in enumerate(rows):
            taken.take(i, row)
        for ident, unit in taken.units.items():
            if unit not in TIME_UNITS:
                raise self.fail(f"{ident}: unknown time_unit {unit!r}")
        return self._file_columns(context, rows, _Layout.of(taken))

    def _file_columns(
        self, context: dict[str, Any], rows: list[Any], layout: _Layout
    ) -> FileColumns:
        """The columns of the value rows that `layout` chose."""
        value_rows = [rows[i] for i in layout.value_rows]
        firsts, offset, measured = [], 0, []
        for name, count in zip(layout.names, layout.counts):
            if count:
                firsts.append(value_rows[offset])
                measured.append(name)
            offset += count
        try:
            columns, gaps = _columns(value_rows, firsts)
        except OverflowError:  # an integer beyond the range of a double
            raise self.fail("a time or counter is too large to be a number") from None
        except MixedCounter as exc:
            raise self.fail(str(exc)) from None
        return FileColumns(
            self.path,
            context,
            layout.names,
            layout.counts,
            layout.from_aggregates,
            array("d", layout.scales),
            columns,
            gaps,
            layout.errors,
            layout.skipped,
            labels=_labels(measured, firsts),
        )


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
            raise self.fail(f"{name}: unknown run_type {run_type!r}")
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
        return row.get("aggregate_unit", "time") == "time"

    def _repetition(self, i: int, ident: str, row: dict[str, Any]) -> None:
        # A name registered twice repeats its repetition indices.
        repetition = row.get("repetition_index")
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
            if unit not in TIME_UNITS:
                raise self.fail(f"{ident}: unknown time_unit {unit!r}")
            raise self.fail(
                f"{ident}: mismatched time units ({first_unit} and {unit}) in one benchmark"
            )

    def _check_times(self, ident: str, row: dict[str, Any]) -> None:
        real = row.get("real_time")
        # `0 < x < inf` is False for NaN too; type() excludes bool and strings.
        if not ((type(real) is float or type(real) is int) and 0 < real < _INF):
            raise self.fail(
                f"{ident}: real_time is {_show(real)} (must be a positive finite number)"
            )
        cpu = row.get("cpu_time")
        if cpu is not None and not ((type(cpu) is float or type(cpu) is int) and 0 <= cpu < _INF):
            raise self.fail(f"{ident}: cpu_time is {_show(cpu)} (must be a finite number >= 0)")


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


def _labels(names: list[str], firsts: list[dict[str, Any]]) -> dict[str, str]:
    """Each benchmark's `label` (SetLabel), from its first value row: shown beside its name."""
    return {
        name: row["label"]
        for name, row in zip(names, firsts)
        if isinstance(row.get("label"), str) and row["label"]
    }


def _distinguish_registrations(rows: list[Any]) -> list[Any]:
    """Rows of a benchmark name registered more than once (Google Benchmark allows it: its own
    complexity_test does) renamed `<name>#2`, `#3`, ... in the order the registrations first
    appear. Google Benchmark tells them apart by `family_index` and
    `per_family_instance_index`; files without those keep their names (and a name given twice
    is refused as a duplicate)."""
    seen: dict[str, list[tuple[Any, Any]]] = {}
    renamed: list[Any] | None = None
    for i, row in enumerate(rows):
        if type(row) is not dict:
            continue
        ident, family = row.get("run_name"), row.get("family_index")
        if type(ident) is not str or family is None:
            continue
        key = (family, row.get("per_family_instance_index"))
        keys = seen.setdefault(ident, [key])
        if key not in keys:
            keys.append(key)
        k = keys.index(key)
        if k:
            if renamed is None:
                renamed = list(rows)
            name = row.get("name")
            numbered = registration(ident, k + 1)
            renamed[i] = {
                **row,
                "run_name": numbered,
                "name": name.replace(ident, numbered, 1) if isinstance(name, str) else name,
            }
    return rows if renamed is None else renamed


def _scales(codes: list[int], units: list[str], benchmarks: int) -> list[float] | None:
    """ns per unit of each benchmark; None for an unknown unit or a benchmark with two."""
    names = set(units)
    if not names <= TIME_UNITS.keys():
        return None
    if len(names) == 1:
        return [TIME_UNITS[units[0]]] * benchmarks
    unit_of = set(zip(codes, units))
    if len(unit_of) != benchmarks:
        return None
    return [TIME_UNITS[unit] for _, unit in sorted(unit_of)]


def _repeated(benchmark: np.ndarray, repetitions: list[int]) -> bool:
    """Whether a (benchmark, repetition_index) pair occurs twice (or an index is too large):
    sorted by both, two equal neighbours."""
    try:
        repetition = np.array(repetitions, dtype=np.int64)
    except OverflowError:
        return True
    by_both = np.lexsort((repetition, benchmark))
    return bool(((np.diff(benchmark[by_both]) == 0) & (np.diff(repetition[by_both]) == 0)).any())


def _columns(
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
        try:
            try:
                columns[key] = array("d", values)  # as is first: most columns have no gaps
            except TypeError:
                if None not in values:
                    raise
                columns[key] = array("d", [_NAN if v is None else v for v in values])
                gaps[key] = bytes(v is None for v in values)
        except (TypeError, OverflowError):
            _refuse_mixed(key, values, rows)
            continue  # strings, lists, huge integers: not a counter
    return columns, gaps


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
                f"{name}{where}: counter {key!r} is {_show(value)}, a number in the other rows"
            )
