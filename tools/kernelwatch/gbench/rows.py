"""The row-by-row path: any result file, valid or not, one row after another; the first
invalid row (in file order) is the message. The usual file takes the fast path (fast.py) and
gets the same result."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kernelwatch.errors import InputError
from kernelwatch.gbench.columns import (
    TIME_UNITS,
    FileColumns,
    MixedCounter,
    labels,
    show,
    to_columns,
)
from kernelwatch.names import registration, without_aggregate


def read_rows(path: str, context: dict[str, Any], rows: list[Any]) -> FileColumns:
    """Any file, row by row; the first invalid row (in file order) is the message."""

    def fail(message: str) -> InputError:
        return InputError(f"{path}: {message}")

    taken = _Taken(fail)
    for i, row in enumerate(rows):
        taken.take(i, row)
    for ident, unit in taken.units.items():
        if unit not in TIME_UNITS:
            raise fail(f"{ident}: unknown time_unit {unit!r}")
    return _file_columns(path, context, rows, _Layout.of(taken))


def _file_columns(
    path: str, context: dict[str, Any], rows: list[Any], layout: _Layout
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
        return bool(row.get("aggregate_unit", "time") == "time")

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
    rows, and the checks by repetition_index and repetitions (rows.py, fast.py)."""
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
    return (ident, repr(process)), (family, row.get("per_family_instance_index"))


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
