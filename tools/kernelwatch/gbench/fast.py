"""The fast path for the usual result file: one lean pass over the rows, then every check on
whole columns (a 10,000-benchmark file has 140,000 rows). Anything unusual or invalid is left to
the row-by-row path (rows.py), which handles every case and words the exact message."""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

from kernelwatch.gbench.columns import TIME_UNITS, FileColumns, MixedCounter, labels, to_columns


def read_usual(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns | None:
    """The usual file, fast: every row an object with a name, a run_name and a run_type
    of iteration or aggregate; no error or skipped rows; every aggregate after a repetition
    of its benchmark (so it is ignored). The same result as `rows.read_rows`, by the same rules,
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
        columns, gaps = to_columns(value_rows, firsts, {"real_time": real, "cpu_time": cpu})
    except (OverflowError, MixedCounter):
        return None
    if "cpu_time" not in columns:  # also an integer too large for a double
        return None
    # `0 < x < inf` is False for NaN too; a cpu_time may be absent, not negative.
    real_times = np.frombuffer(columns["real_time"])
    cpu_times = np.frombuffer(columns["cpu_time"])
    cpu_absent = np.frombuffer(gaps.get("cpu_time", bytes(len(cpu))), dtype=bool)
    if not (
        ((real_times > 0) & (real_times < math.inf)).all()
        and (((cpu_times >= 0) & (cpu_times < math.inf)) | cpu_absent).all()
    ):
        return None
    return FileColumns(
        path,
        context,
        list(index),
        counts.tolist(),
        [False] * len(index),
        array("d", scales),
        columns,
        gaps,
        {},
        {},
        labels=labels(list(index), firsts),
    )


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
