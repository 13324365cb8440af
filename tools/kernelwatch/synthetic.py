"""Google Benchmark JSON documents built from chosen values: for tests and the speed script.

The rows follow what Google Benchmark 1.8 writes (1.7 lacks `aggregate_unit`).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def benchmark_rows(
    name: str,
    times: Sequence[float],
    *,
    time_unit: str = "ns",
    counters: Mapping[str, Sequence[float]] | None = None,
    aggregates: bool = True,
    aggregates_only: bool = False,
    family_index: int = 0,
    version: str = "1.8",
) -> list[dict[str, Any]]:
    """Rows of one benchmark: one iteration row per time (in `time_unit`), then mean, median,
    stddev and cv aggregates, as Google Benchmark writes them with --benchmark_repetitions."""
    counters = counters or {}
    n = len(times)
    common = {"family_index": family_index, "per_family_instance_index": 0, "run_name": name}
    rows: list[dict[str, Any]] = []
    if not aggregates_only:
        for i, t in enumerate(times):
            row = {
                "name": name,
                **common,
                "run_type": "iteration",
                "repetitions": n,
                "repetition_index": i,
                "threads": 1,
                "iterations": 1000,
                "real_time": t,
                "cpu_time": t * 1.01,
                "time_unit": time_unit,
            }
            row.update({k: v[i] for k, v in counters.items()})
            rows.append(row)
    if (aggregates and n > 1) or aggregates_only:
        for agg, fn, unit in (
            ("mean", _mean, "time"),
            ("median", statistics.median, "time"),
            ("stddev", _stddev, "time"),
            ("cv", _cv, "percentage"),
        ):
            row = {
                "name": f"{name}_{agg}",
                **common,
                "run_type": "aggregate",
                "repetitions": n,
                "threads": 1,
                "aggregate_name": agg,
            }
            if version != "1.7":
                row["aggregate_unit"] = unit
            row.update(
                {
                    "iterations": n,
                    "real_time": fn(times),
                    "cpu_time": fn(times) * 1.01,
                    "time_unit": time_unit,
                }
            )
            row.update({k: fn(v) for k, v in counters.items()})
            rows.append(row)
    return rows


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _cv(values: Sequence[float]) -> float:
    mean = _mean(values)
    return _stddev(values) / mean if mean else 0.0  # a counter that is 0 in every repetition


def _stddev(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = _mean(values)
    # (over the largest deviation: squares of values near 1e300 overflow, near 1e-300 vanish)
    scale = max(abs(v - mean) for v in values) or 1.0
    spread = math.fsum(((v - mean) / scale) ** 2 for v in values) / (len(values) - 1)
    return scale * math.sqrt(spread)


def document(
    rows: Sequence[Mapping[str, Any]], context: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    base_context: dict[str, Any] = {
        "date": "2026-11-21T00:00:00+00:00",
        "host_name": "synthetic",
        "executable": "synthetic",
        "num_cpus": 16,
        "mhz_per_cpu": 2000,
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": [0.0, 0.0, 0.0],
        "library_build_type": "release",
    }
    base_context.update(context or {})
    return {"context": base_context, "benchmarks": list(rows)}


def write(path: str | Path, doc: Mapping[str, Any]) -> Path:
    """Write a document laid out as Google Benchmark lays it out (indentation, and floats as
    %.16e), so that parsing costs what parsing a real file costs."""
    target = Path(path)
    with target.open("w", encoding="utf-8") as out:
        out.write('{\n  "context": ')
        out.write(json.dumps(doc["context"], indent=2).replace("\n", "\n  "))
        out.write(',\n  "benchmarks": [\n')
        rows = []
        keys: dict[str, str] = {}
        for row in doc["benchmarks"]:
            for k in row.keys() - keys.keys():
                keys[k] = f"      {json.dumps(k)}: "
            fields = ",\n".join(keys[k] + _gbench_value(v) for k, v in row.items())
            rows.append("    {\n" + fields + "\n    }")
        out.write(",\n".join(rows))
        out.write("\n  ]\n}\n")
    return target


def _gbench_value(value: Any) -> str:
    kind = type(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return f"{value:.16e}"
    if kind is int:
        return str(value)
    if kind is str and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return json.dumps(value)
