"""The fast path for the usual result file: one lean pass over the rows, then every check on
whole columns (a 10,000-benchmark file has 140,000 rows). Anything unusual or invalid is left to
the row-by-row path (rows.py), which handles every case and words the exact message.

The rows may come in parts (`Usual.take`, one call per part; `stream.py` parses a large file
a part at a time): each part is turned into columns of doubles as it comes, so that its parsed
rows can go before the next part is parsed (a 285,000-row baseline parsed whole is 1 GB of
dicts; its columns are 55 MB)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernelwatch.gbench.columns import RESERVED_KEYS, TIME_UNITS, FileColumns, doubles, labels


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
                    if "label" in row:
                        first["label"] = row["label"]
                    self.firsts.append(first)  # (its counters and label: to_columns' firsts)
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
            columns[key] = _doubles([row.get(key) for row in value_rows])
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
