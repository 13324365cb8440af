"""A result as the JSON that dashboards read: Bencher Metric Format (BMF) and
github-action-benchmark's custom format. One entry per benchmark: the median of the metric
over its repetitions, with a 95 % interval of that median where the format has room for one.

* BMF (https://bencher.dev/docs/reference/bencher-metric-format): an object of benchmark name
  -> measure -> {"value", "lower_value", "upper_value"}. Times go to Bencher's built-in
  `latency` measure (nanoseconds); a counter to a measure named after it (a counter named
  like a built-in measure, `latency` or `throughput`, to "<name> (counter)").
* github-action-benchmark (`tool: customSmallerIsBetter` or `customBiggerIsBetter`): an array
  of {"name", "unit", "value", "range", "extra"}, `range` and `extra` strings.

The interval is the distribution-free one of the median (order statistics, binomial): with
fewer than 6 values no 95 % interval exists, and the bounds are the smallest and largest
value; with one value there are no bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelwatch import defaults
from kernelwatch.errors import InputError, shortened
from kernelwatch.results import Metric, ResultSet

FORMATS = defaults.EXPORT_FORMATS
CONFIDENCE = 0.95
BMF_TIME_MEASURE = "latency"  # Bencher's built-in measure, in nanoseconds
# Every Bencher project has these measures (latency in ns, throughput in ops/s), found by
# slug or name: a counter so named would be drawn on their axes, in their units.
BMF_BUILT_IN = frozenset({"latency", "throughput"})
# Bencher refuses a whole report holding a longer benchmark or measure name (UTF-8 bytes).
BMF_MAX_NAME = 1024
BMF_MAX_MEASURE = 64


@dataclass(frozen=True)
class Entry:
    name: str
    median: float
    lower: float | None
    upper: float | None
    n: int
    from_aggregates: bool
    label: str | None = None


def entries(result: ResultSet, metric: Metric) -> list[Entry]:
    """One entry per benchmark with values of the metric, in the result's order. A benchmark
    that failed in a repetition (compare's ERROR) has none: the others time a kernel whose
    output was wrong, and the history and the report leave such a run out of its series too."""
    column = result.metric_column(metric)
    if column is None:
        raise InputError(
            f"{result.label}: no benchmark has the metric {shortened(repr(metric.key))}"
        )
    values, present = column
    labels = result.labels
    found = []
    for k, name in enumerate(result.names):
        if name in result.errors:
            continue
        start, count = int(result.starts[k]), int(result.counts[k])
        rows = values[start : start + count][present[start : start + count]]
        if not len(rows):
            continue
        lower, upper = median_interval(rows)
        found.append(
            Entry(
                name,
                float(np.median(rows)),  # (MEASURABLE values: the middle two's sum is finite)
                lower,
                upper,
                len(rows),
                bool(result.from_aggregates[k]),
                labels.get(name),
            )
        )
    if not found:
        failed = f" ({len(result.errors)} failed)" if result.errors else ""
        raise InputError(
            f"{result.label}: no benchmark has values of {shortened(repr(metric.key))}{failed}"
        )
    return found


def median_interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The 95 % order-statistic interval of the median; min and max below 6 values; None
    for a single value."""
    ordered = np.sort(values)
    n = len(ordered)
    if n < 2:
        return None, None
    # Largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= (1 - CONFIDENCE) / 2. The
    # probabilities in log space: 2.0**n overflows a float from n = 1024 (an nvbench file holds
    # thousands of samples per state). log C(n, i) by running sums of log((n - i) / (i + 1)).
    half = np.arange(n // 2 + 1, dtype=np.float64)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log((n - half[:-1]) / (half[:-1] + 1)))))
    cumulative = np.cumsum(np.exp(log_comb - n * math.log(2.0)))
    k = int(np.searchsorted(cumulative, (1 - CONFIDENCE) / 2, side="right"))
    if k == 0:
        return float(ordered[0]), float(ordered[-1])
    return float(ordered[k - 1]), float(ordered[n - k])


def bmf(found: list[Entry], metric: Metric) -> dict[str, Any]:
    """The BMF document; without the benchmarks whose names Bencher refuses (bmf_fits)."""
    measure = bmf_measure(metric)
    if _utf8_length(measure) > BMF_MAX_MEASURE:
        raise InputError(
            f"--metric {shortened(repr(measure))}: {_utf8_length(measure):,} bytes; Bencher "
            f"takes measure names of up to {BMF_MAX_MEASURE} (--format github-action-benchmark "
            "has no such limit)"
        )
    document: dict[str, Any] = {}
    for e in found:
        if not bmf_fits(e.name):
            continue
        metrics: dict[str, float] = {"value": e.median}
        if e.lower is not None and e.upper is not None:
            metrics["lower_value"], metrics["upper_value"] = e.lower, e.upper
        document[e.name] = {measure: metrics}
    return document


def bmf_measure(metric: Metric) -> str:
    """The BMF measure of a metric: times `latency`; a counter its own name, unless that is a
    built-in measure's (BMF_BUILT_IN): then "<name> (counter)"."""
    if metric.is_time:
        return BMF_TIME_MEASURE
    if metric.key.casefold() in BMF_BUILT_IN:
        return f"{metric.key} (counter)"
    return metric.key


def bmf_fits(name: str) -> bool:
    """Whether Bencher takes `name` as a benchmark's name."""
    return _utf8_length(name) <= BMF_MAX_NAME


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def github_action_benchmark(found: list[Entry], metric: Metric) -> list[dict[str, Any]]:
    unit = "ns" if metric.is_time else metric.key
    rows = []
    for e in found:
        extra = [
            (
                f"from aggregates only ({e.n} value(s): a median or a mean each)"
                if e.from_aggregates
                else f"median of {e.n} repetitions"
            )
            + (
                f"; {CONFIDENCE:.0%} interval [{e.lower:.6g}, {e.upper:.6g}] {unit}"
                if e.lower is not None and e.upper is not None
                else ""
            )
        ]
        if e.label:
            extra.append(f"label: {e.label}")
        row: dict[str, Any] = {"name": e.name, "unit": unit, "value": e.median}
        if e.lower is not None and e.upper is not None:
            row["range"] = f"± {max(e.upper - e.median, e.median - e.lower):.6g}"
        row["extra"] = "\n".join(extra)
        rows.append(row)
    return rows


def export(result: ResultSet, metric: Metric, form: str) -> tuple[Any, int]:
    """The document of `form` (one of FORMATS) for a result, and how many benchmarks with
    values it left out for names the format cannot hold (bmf_fits)."""
    found = entries(result, metric)
    if form == "bmf":
        return bmf(found, metric), sum(not bmf_fits(e.name) for e in found)
    if form == "github-action-benchmark":
        return github_action_benchmark(found, metric), 0
    raise InputError(f"--format {form}: choose one of {', '.join(FORMATS)}")


def github_tool(metric: Metric) -> str:
    """The `tool:` github-action-benchmark needs for this metric."""
    return "customBiggerIsBetter" if metric.higher_is_better else "customSmallerIsBetter"
