"""Google Benchmark results as typed, columnar data; merging directories.

A benchmark is identified by its `run_name` (its `name` in files too old to have one), which
groups its repetitions. A directory stands for all of its `*.json` result files, merged: a
benchmark found in several files gets the repetitions of all of them, and remembers which file
(process) each came from, because the spread between processes is the noise that matters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import TIME_KEYS, FileColumns, read_document, read_file

# The harness's per-repetition counter: relative width of the 95 % confidence interval of the
# median of that repetition's samples (0.005 = 0.5 %). kernelwatch/noise/ turns it into a noise.
NOISE_COUNTER = "noise"
# The row key `kernelwatch run` adds to every row of a merged result: which of the binary's
# processes (1, 2, ...) the repetition came from. Not a counter: it groups values by process.
PROCESS_KEY = "kernelwatch_process"

# Counters where a larger value is better, recognised by name; others need a direction flag.
_HIGHER_SUFFIXES = ("_per_second", "_fraction")
_LOWER_NAMES = frozenset({"real_time", "cpu_time", "allocs_per_iter", "max_bytes_used"})


@dataclass(frozen=True)
class Metric:
    """What is compared: a time (`real_time`, `cpu_time`) or a counter, and its good direction."""

    key: str
    higher_is_better: bool

    @property
    def is_time(self) -> bool:
        return self.key in TIME_KEYS


def resolve_metric(name: str, higher_is_better: bool | None = None) -> Metric:
    """Map a --metric value to a Metric; `time` means `real_time` (the manual/GPU time)."""
    key = "real_time" if name in ("time", "") else name
    if higher_is_better is not None:
        if key in TIME_KEYS and higher_is_better:
            raise InputError(f"--metric {name}: a time is always lower-is-better")
        return Metric(key, higher_is_better)
    if key in _LOWER_NAMES:
        return Metric(key, False)
    if key.endswith(_HIGHER_SUFFIXES):
        return Metric(key, True)
    raise InputError(
        f"--metric {name}: unknown direction for this counter; "
        "pass --higher-is-better or --lower-is-better"
    )


def gpu_model(context: Mapping[str, Any]) -> str | None:
    """The GPU model a result was measured on (name + compute capability), if recorded."""
    name = context.get("gpu_name")
    if not name:
        return None
    capability = context.get("gpu_compute_capability")
    return f"{name} (sm {capability})" if capability else str(name)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of one side, as a typed view: its values per metric key (times in ns)."""

    name: str
    values: Mapping[str, np.ndarray]
    sources: np.ndarray  # index into ResultSet.paths of each value's file
    processes: np.ndarray  # process of each value: a number per (file, kernelwatch_process)
    from_aggregates: bool = False  # values are per-file median/mean aggregates
    error: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class ResultSet:
    """One side of a comparison (a file, or a directory of files), as columns: benchmark k owns
    rows starts[k] .. starts[k] + counts[k] of every column, of `sources` and of `processes`.
    A value's process is its file's, or, in a file merged by `kernelwatch run` from several
    processes, the process named by its row's `kernelwatch_process` key."""

    label: str
    paths: tuple[Path, ...]
    context: Mapping[str, Any]
    names: tuple[str, ...]
    starts: np.ndarray
    counts: np.ndarray
    from_aggregates: np.ndarray
    sources: np.ndarray
    processes: np.ndarray
    columns: Mapping[str, np.ndarray]
    gaps: Mapping[str, np.ndarray]  # bool per row, for columns absent from some rows
    errors: Mapping[str, str]
    skipped: Mapping[str, str]
    notes: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)  # Google Benchmark's `label`
    index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {name: k for k, name in enumerate(self.names)})

    def subset(self, keep: np.ndarray, context: Mapping[str, Any]) -> ResultSet:
        """The rows where `keep` (a bool per row) holds, with another context; benchmarks left
        without rows keep a count of 0 (as skipped ones have)."""
        cumulative = np.concatenate([[0], np.cumsum(keep.astype(np.int64))])
        counts = cumulative[self.starts + self.counts] - cumulative[self.starts]
        return ResultSet(
            self.label,
            self.paths,
            context,
            self.names,
            np.cumsum(counts) - counts,
            counts,
            self.from_aggregates,
            self.sources[keep],
            self.processes[keep],
            {k: v[keep] for k, v in self.columns.items()},
            {k: v[keep] for k, v in self.gaps.items()},
            self.errors,
            self.skipped,
            self.notes,
        )

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.index

    def benchmark(self, name: str) -> Benchmark:
        k = self.index[name]
        rows = slice(self.starts[k], self.starts[k] + self.counts[k])
        values = {}
        for key, column in self.columns.items():
            gap = self.gaps.get(key)
            if gap is None or not gap[rows].any():
                values[key] = column[rows]
        return Benchmark(
            name,
            values,
            self.sources[rows],
            self.processes[rows],
            bool(self.from_aggregates[k]),
            self.errors.get(name),
            self.skipped.get(name),
        )

    def metric_column(self, metric: Metric) -> tuple[np.ndarray, np.ndarray] | None:
        """The metric's column and a per-row "present" mask, validated (finite, positive);
        None when no row has the metric."""
        column = self.columns.get(metric.key)
        if column is None:
            return None
        gap = self.gaps.get(metric.key)
        present = ~gap if gap is not None else np.ones(len(column), dtype=bool)
        bad = present & ~(np.isfinite(column) & (column > 0))
        if bad.any():
            row = int(np.argmax(bad))
            k = int(np.searchsorted(self.starts, row, side="right") - 1)
            value = column[row]
            shown = "NaN" if np.isnan(value) else repr(float(value))
            if metric.is_time:
                shown += " ns"  # times are in ns by now
            raise InputError(
                f"{self.paths[self.sources[row]]}: {self.names[k]}: {metric.key} is {shown} "
                "(must be a positive finite number)"
            )
        return column, present


def check_times(result: ResultSet) -> None:
    """What compare checks of a result it compares by time, for the commands that keep one
    (history ingest, baseline update): real_time positive and finite once in ns (1e308 us is
    finite in the file, inf in ns), cpu_time finite. Unchecked, the history dropped such a
    value with no word (it keeps finite values only)."""
    result.metric_column(resolve_metric("time"))
    column, gap = result.columns.get("cpu_time"), result.gaps.get("cpu_time")
    if column is None:
        return
    bad = ~np.isfinite(column) if gap is None else ~np.isfinite(column) & ~gap
    if bad.any():
        row = int(np.argmax(bad))
        k = int(np.searchsorted(result.starts, row, side="right") - 1)
        raise InputError(
            f"{result.paths[result.sources[row]]}: {result.names[k]}: cpu_time is "
            f"{float(column[row])!r} ns (must be a finite number >= 0)"
        )


def load(path: str | Path) -> ResultSet:
    """Load a result file, or every `*.json` result file of a directory, merged."""
    return load_all([path])[0]


def load_all(paths: Sequence[str | Path]) -> list[ResultSet]:
    """Load several sides (files or directories), each merged as `load` does. Every path is
    checked to exist before any file is parsed (a typo fails at once, not after a big read)."""
    try:
        plans = [_expand(Path(p)) for p in paths]
    except OSError as exc:  # a folder that may not be read (is_file raises EACCES)
        raise InputError(f"{exc.filename}: cannot read: {exc.strerror or exc}") from None
    return [
        _merge(str(path), files, [read_file(str(f), in_directory) for f in files])
        for path, (files, in_directory) in zip(paths, plans)
    ]


def from_documents(label: str, documents: Sequence[Any]) -> ResultSet:
    """A side from already parsed result documents (merged as a directory's files are)."""
    names = [f"{label}[{i}]" if len(documents) > 1 else label for i in range(len(documents))]
    parsed: list[FileColumns | None] = [read_document(n, d) for n, d in zip(names, documents)]
    return _merge(label, [Path(n) for n in names], parsed)


def _expand(root: Path) -> tuple[list[Path], bool]:
    # A baseline folder (baseline/: result.json, noise.json, manifest.json) is its result;
    # its stored noise is found beside it (noise.stored_beside).
    if (root / "manifest.json").is_file() and (root / "result.json").is_file():
        return [root / "result.json"], False
    if root.is_dir():
        files = sorted(p for p in root.glob("*.json") if p.is_file())
        if not files:
            raise InputError(f"{root}: directory holds no .json files")
        return files, True
    if not root.exists():
        raise InputError(f"{root}: no such file or directory")
    return [root], False


def _merge(label: str, files: list[Path], parsed: list[FileColumns | None]) -> ResultSet:
    """One side from its files: a single file is used as is; several are merged by name."""
    notes = [f"{f}: skipped, not a benchmark result" for f, p in zip(files, parsed) if p is None]
    kept = [p for p in parsed if p is not None]
    notes += [note for p in kept for note in p.notes]
    if not kept:
        raise InputError(f"{label}: holds no benchmark results")
    _check_same_gpu(kept)
    errors: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for p in kept:
        for name, message in p.errors.items():
            errors.setdefault(name, message)
        for name, message in p.skipped.items():
            skipped.setdefault(name, message)

    labels: dict[str, str] = {}
    for p in kept:
        for name, text in p.labels.items():
            labels.setdefault(name, text)

    if len(kept) == 1:
        p = kept[0]
        counts = np.asarray(p.counts, dtype=np.int64)
        columns, gaps, process_keys = _numpy_columns(p)
        sources = np.zeros(int(counts.sum()), dtype=np.int64)
        result = ResultSet(
            label,
            (Path(p.path),),
            p.context,
            tuple(p.names),
            np.cumsum(counts) - counts,
            counts,
            np.asarray(p.from_aggregates, dtype=bool),
            sources,
            _process_ids(sources, process_keys),
            columns,
            gaps,
            errors,
            skipped,
            tuple(notes),
        )
    else:
        result = _merge_files(label, kept, errors, skipped, notes)
    if not len(result):
        raise InputError(f"{label}: holds no benchmark results")
    return replace(result, labels=labels) if labels else result


def _numpy_columns(
    p: FileColumns,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """A file's columns as numpy arrays, times scaled to ns; and each row's process key
    (NaN where the row has none), which is not a metric."""
    scale = np.repeat(np.frombuffer(p.time_scales, dtype=float), p.counts)
    columns = {}
    for key, values in p.columns.items():
        column = np.frombuffer(values, dtype=float)
        # (1e308 s overflows to inf in ns: metric_column refuses it in one line, so numpy's
        # warning would only add a second)
        with np.errstate(over="ignore"):
            columns[key] = column * scale if key in TIME_KEYS else column
    gaps = {k: np.frombuffer(v, dtype=np.uint8).astype(bool) for k, v in p.gaps.items()}
    process_keys = columns.pop(PROCESS_KEY, None)
    if process_keys is None:
        process_keys = np.full(len(scale), np.nan)
    elif PROCESS_KEY in gaps:
        process_keys = np.where(gaps.pop(PROCESS_KEY), np.nan, process_keys)
    return columns, gaps, process_keys


def _process_ids(sources: np.ndarray, process_keys: np.ndarray) -> np.ndarray:
    """One number per distinct (file, process key) pair; rows without a key share their
    file's."""
    known = np.isfinite(process_keys)
    if not known.any():  # the usual file: one process per file
        return sources.astype(np.int64, copy=True)
    keys = np.where(known, process_keys, -1.0)
    whole = keys == np.round(keys)
    if whole.all() and keys.min() >= -1 and keys.max() < 2**20:  # small integers: one int key
        code = sources.astype(np.int64) * (2**21) + keys.astype(np.int64) + 1
        _, ids = np.unique(code, return_inverse=True)
    else:
        _, ids = np.unique(np.stack([sources.astype(float), keys]), axis=1, return_inverse=True)
    return np.asarray(ids, dtype=np.int64).reshape(-1)


def _check_same_gpu(files: list[FileColumns]) -> None:
    first = gpu_model(files[0].context)
    for p in files[1:]:
        if gpu_model(p.context) != first:
            raise InputError(
                f"{p.path}: measured on {gpu_model(p.context) or 'an unnamed GPU'}, but "
                f"{files[0].path} on {first or 'an unnamed GPU'}; one side must be one GPU model"
            )


def _merge_files(
    label: str,
    files: list[FileColumns],
    errors: dict[str, str],
    skipped: dict[str, str],
    notes: list[str],
) -> ResultSet:
    # Per benchmark, the (file, first row, count, from_aggregates) segments that hold it.
    segments: dict[str, list[tuple[int, int, int, bool]]] = {}
    for f, p in enumerate(files):
        row = 0
        for name, count, agg in zip(p.names, p.counts, p.from_aggregates):
            segments.setdefault(name, []).append((f, row, count, agg))
            row += count
    keys = sorted(
        set().union(*(p.columns for p in files)) - {PROCESS_KEY},
        key=lambda k: (k not in TIME_KEYS, k),
    )
    parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    gap_parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    names, counts, aggregated, sources, process_parts = [], [], [], [], []
    arrays, gaps, process_keys = zip(*(_numpy_columns(p) for p in files))
    left_out: dict[int, int] = {}  # file -> its benchmarks whose aggregates were left out
    for name, segs in segments.items():
        # Repetitions beat aggregates: use per-file aggregates only where no file has repetitions.
        full = [s for s in segs if s[2] and not s[3]]
        use = full or [s for s in segs if s[2]]
        for f, _, count, agg in segs if full else ():
            if agg and count:
                left_out[f] = left_out.get(f, 0) + 1
        names.append(name)
        counts.append(sum(s[2] for s in use))
        aggregated.append(not full and bool(use))
        for f, start, count, _ in use:
            sources.append(np.full(count, f))
            rows = slice(start, start + count)
            process_parts.append(process_keys[f][rows])
            for k in keys:
                column = arrays[f].get(k)
                if column is None:
                    parts[k].append(np.full(count, np.nan))
                    gap_parts[k].append(np.ones(count, dtype=bool))
                else:
                    parts[k].append(column[rows])
                    gap = gaps[f].get(k)
                    gap_parts[k].append(gap[rows] if gap is not None else np.zeros(count, bool))
    notes += [
        f"{files[f].path}: aggregates only for {n} benchmark(s) whose repetitions other files "
        "hold: left out (a median does not pool with repetitions)"
        for f, n in sorted(left_out.items())
    ]
    counts_array = np.asarray(counts, dtype=np.int64)

    def joined(chunks: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=dtype)

    gap_columns = {k: joined(g, bool) for k, g in gap_parts.items()}
    source_column = joined(sources, np.int64)
    return ResultSet(
        label,
        tuple(Path(p.path) for p in files),
        files[0].context,
        tuple(names),
        np.cumsum(counts_array) - counts_array,
        counts_array,
        np.asarray(aggregated, dtype=bool),
        source_column,
        _process_ids(source_column, joined(process_parts, float)),
        {k: joined(v, float) for k, v in parts.items()},
        {k: g for k, g in gap_columns.items() if g.any()},
        errors,
        skipped,
        tuple(notes),
    )
