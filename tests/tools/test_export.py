"""kernelwatch export (kernelwatch.export): Bencher Metric Format and github-action-benchmark.

The checks are written from the formats' documentation, not from their code:
* BMF, https://bencher.dev/docs/reference/bencher-metric-format: a JSON object whose keys are
  benchmark names (non-empty) and whose values are objects of measure (non-empty key) -> metric;
  a metric is an object with a required number `value` and optional numbers `lower_value` and
  `upper_value` (its JSON schema lists no other property). `latency` is the built-in measure
  in nanoseconds.
* github-action-benchmark's README, "customSmallerIsBetter"/"customBiggerIsBetter": a JSON array
  of objects with `name` (string), `unit` (string) and `value` (number), and optional `range`
  and `extra` (strings).
Both are read by strict JSON parsers (JavaScript's JSON.parse): no NaN or Infinity.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import gpu_file_params, rows_for
from kernelwatch.export import median_interval


def strict(text: str) -> Any:
    def refuse(word: str) -> Any:
        raise AssertionError(f"bare {word}: not JSON")

    return json.loads(text, parse_constant=refuse)


def is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def check_bmf(document: Any) -> None:
    assert isinstance(document, dict) and document
    for benchmark, measures in document.items():
        assert isinstance(benchmark, str) and benchmark and len(benchmark) <= 1024
        assert isinstance(measures, dict) and measures
        for measure, metric in measures.items():
            assert isinstance(measure, str) and measure and len(measure) <= 64
            assert isinstance(metric, dict) and "value" in metric
            assert set(metric) <= {"value", "lower_value", "upper_value"}, metric
            assert all(is_number(v) for v in metric.values()), metric
            if "lower_value" in metric:
                assert metric["lower_value"] <= metric["value"] <= metric["upper_value"]


def check_github_action_benchmark(document: Any) -> None:
    assert isinstance(document, list) and document
    for row in document:
        assert isinstance(row, dict)
        assert {"name", "unit", "value"} <= set(row) <= {"name", "unit", "value", "range", "extra"}
        assert isinstance(row["name"], str) and row["name"]
        assert isinstance(row["unit"], str) and row["unit"]
        assert is_number(row["value"])
        for key in ("range", "extra"):
            assert key not in row or isinstance(row[key], str)


def test_bmf_of_a_file_with_repetitions(run_cli, write_json) -> None:
    path = write_json(
        "r.json", {"BM_a/manual_time": [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]}, time_unit="ns"
    )
    done = run_cli("export", path, "--format", "bmf")
    assert done.status == 0, done.err
    document = strict(done.out)
    check_bmf(document)
    # the median; with 7 values the 95 % interval of the median is [min, max] (P = 2/128)
    assert document == {
        "BM_a/manual_time": {"latency": {"value": 13.0, "lower_value": 10.0, "upper_value": 16.0}}
    }


def test_github_action_benchmark_directions(run_cli, write_json, tmp_path: Path) -> None:
    path = write_json(
        "r.json",
        {"BM_a": [10.0, 11.0, 12.0]},
        counters={"BM_a": {"bytes_per_second": [3.0, 2.0, 1.0]}},
        time_unit="ns",
    )
    done = run_cli("export", path, "--format", "github-action-benchmark", "-o", tmp_path / "o")
    assert done.status == 0 and "customSmallerIsBetter" in done.err and not done.out
    document = strict((tmp_path / "o").read_text())
    check_github_action_benchmark(document)
    assert document[0]["name"] == "BM_a" and document[0]["unit"] == "ns"
    assert document[0]["value"] == 11.0 and document[0]["range"] == "± 1"
    done = run_cli(
        "export", path, "--format", "github-action-benchmark", "--metric", "bytes_per_second"
    )
    assert "customBiggerIsBetter" in done.err
    assert strict(done.out)[0]["value"] == 2.0


def test_benchmarks_without_the_metric_are_counted_on_stderr(run_cli, write_json) -> None:
    """A real H200 run exported with --metric bytes_per_second gave 289 of its 356 benchmarks,
    silently (compare says so in a note)."""
    path = write_json(
        "r.json",
        {"BM_copy": [10.0, 11.0, 12.0], "BM_empty": [1.0, 1.0, 1.0]},
        counters={"BM_copy": {"bytes_per_second": [3.0, 2.0, 1.0]}},
    )
    done = run_cli("export", path, "--format", "bmf", "--metric", "bytes_per_second")
    assert done.status == 0 and list(strict(done.out)) == ["BM_copy"]
    assert "note: 1 of 2 benchmark(s) have no values of bytes_per_second" in done.err
    done = run_cli("export", path, "--format", "github-action-benchmark")
    assert done.status == 0 and len(strict(done.out)) == 2 and "note:" not in done.err


def test_a_benchmark_that_failed_in_a_repetition_is_left_out(run_cli, write_json) -> None:
    """Nine repetitions timed, the tenth reported wrong output: compare's ERROR, and no point of
    the history's series. Export gave the nine's median as the run's value ("median of 9
    repetitions"), a dashboard's point for a kernel that computed the wrong result."""
    rows = rows_for({"BM_bad": [float(t) for t in range(10, 20)]}, aggregates=False)
    rows[3].update(error_occurred=True, error_message="wrong output at index 7")
    path = write_json("r.json", {"BM_ok": [10.0, 11.0, 12.0]}, rows=rows)
    for form in ("bmf", "github-action-benchmark"):
        done = run_cli("export", path, "--format", form)
        assert done.status == 0, done.err
        assert "BM_bad" not in done.out and "BM_ok" in done.out
        assert "note: 1 of 2 benchmark(s)" in done.err and "compare's ERROR" in done.err
    alone = write_json("alone.json", rows=rows)
    done = run_cli("export", alone, "--format", "bmf")
    assert done.status == 2 and "no benchmark has values of 'real_time' (1 failed)" in done.err


def test_range_covers_a_lopsided_interval(run_cli, write_json) -> None:
    """docs/results.md: `range` is the larger distance from the median to a bound."""
    path = write_json("r.json", {"BM_a": [10.0, 11.0, 15.0]}, time_unit="ns")
    row = strict(run_cli("export", path, "--format", "github-action-benchmark").out)[0]
    assert row["value"] == 11.0 and row["range"] == "± 4"  # not the half-width, 2.5


def test_one_value_has_no_bounds(run_cli, write_json) -> None:
    path = write_json("r.json", {"BM_a": [10.0]}, time_unit="ns")
    document = strict(run_cli("export", path, "--format", "bmf").out)
    check_bmf(document)
    assert document["BM_a"]["latency"] == {"value": 10.0}
    rows = strict(run_cli("export", path, "--format", "github-action-benchmark").out)
    check_github_action_benchmark(rows)
    assert "range" not in rows[0]


def test_median_interval_order_statistics() -> None:
    assert median_interval(np.array([5.0])) == (None, None)
    assert median_interval(np.array([3.0, 1.0, 2.0])) == (1.0, 3.0)  # below 6: min and max
    values = np.arange(1.0, 21.0)  # n = 20: the 95 % interval is [x(6), x(15)]
    assert median_interval(values) == (6.0, 15.0)


@pytest.mark.parametrize("n", [1023, 1024, 1025, 5000, 200_000])
def test_median_interval_of_many_values_does_not_overflow(n: int) -> None:
    # 2.0**n overflows a float from n = 1024; the interval is the binomial one, about
    # n/2 -+ 0.98 sqrt(n) (the normal approximation) for large n.
    lower, upper = median_interval(np.arange(1.0, n + 1))
    assert lower is not None and upper is not None
    half_width = 0.98 * math.sqrt(n)
    assert abs(lower - (n / 2 - half_width)) < 2 and abs(upper - (n / 2 + half_width)) < 3


def test_median_interval_is_the_exact_binomial_one() -> None:
    from fractions import Fraction

    for n in range(2, 300):
        cumulative, k = Fraction(0), 0
        for i in range(n):
            cumulative += Fraction(math.comb(n, i), 2**n)
            if cumulative > Fraction(1, 40):
                break
            k = i + 1
        expected = (1.0, float(n)) if k == 0 else (float(k), float(n - k + 1))
        assert median_interval(np.arange(1.0, n + 1)) == expected, n


NVBENCH_DATA = Path(__file__).parents[1] / "data" / "nvbench"
NVBENCH_FILES = [pytest.param(p, id=p.name) for p in sorted(NVBENCH_DATA.glob("*.json"))]


@pytest.mark.parametrize("path", [*gpu_file_params(), *NVBENCH_FILES])
def test_real_files_export_strict_json_in_both_formats(run_cli, path: Path | None) -> None:
    # (nvbench's files hold thousands of samples: 2.0**n overflowed from 1024)
    assert path is not None
    for form, check in (
        ("bmf", check_bmf),
        ("github-action-benchmark", check_github_action_benchmark),
    ):
        done = run_cli("export", path, "--format", form)
        assert done.status == 0, done.err
        check(strict(done.out))


def test_bad_input_is_one_line(run_cli, tmp_path: Path) -> None:
    done = run_cli("export", tmp_path / "none.json", "--format", "bmf")
    assert done.status == 2 and done.err.startswith("kernelwatch: error:")
    assert len(done.err.strip().splitlines()) == 1


def test_counters_whose_statistics_overflow_are_refused(run_cli, write_json) -> None:
    """np.median adds the middle two of an even count: counters of 1.6e308-1.75e308 (finite)
    gave an infinite median, written `"value": null`, exit 0: a document Bencher and
    github-action-benchmark refuse. They are no measurement, and refused as compare refuses
    them (results.MEASURABLE, ResultSet.check_counters)."""
    rows = rows_for({"BM_a": [10.0, 11.0, 12.0, 13.0]}, aggregates=False)
    for row, value in zip(rows, [1.6e308, 1.7e308, 1.7e308, 1.75e308]):
        row["bytes_per_second"] = value
    path = write_json("r.json", rows=rows)
    for tool in ("bmf", "github-action-benchmark"):
        done = run_cli("export", path, "--format", tool, "--metric", "bytes_per_second")
        assert done.status == 2 and done.out == "", done.out
        assert done.err == (
            f"kernelwatch: error: {path}: BM_a: counter bytes_per_second is 1.6e+308 (a "
            "counter must lie within ±1e+100)\n"
        )
