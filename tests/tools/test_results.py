"""Result sets: typed views, units, directories merged, metrics, several sides, real files."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import H100_CONTEXT, document, gpu_file_params, result_set, rows_for
from kernelwatch import results, synthetic
from kernelwatch.errors import InputError
from kernelwatch.loading import load, load_all
from kernelwatch.results import Metric, gpu_model, resolve_metric


def test_times_are_in_nanoseconds_whatever_the_unit(write_json) -> None:
    doc = document(
        rows=rows_for({"BM_ms": [1.0, 2.0]}, time_unit="ms")
        + rows_for({"BM_us": [1.0, 2.0]}, time_unit="us")
        + rows_for({"BM_s": [1.0, 2.0]}, time_unit="s")
    )
    side = load(write_json("a.json", doc))
    assert list(side.benchmark("BM_ms").values["real_time"]) == [1e6, 2e6]
    assert list(side.benchmark("BM_us").values["real_time"]) == [1e3, 2e3]
    assert list(side.benchmark("BM_s").values["cpu_time"]) == [1.01e9, 2.02e9]


def test_benchmark_view() -> None:
    side = result_set(
        {"BM_a/manual_time": [3.0, 1.0, 2.0]},
        counters={"BM_a/manual_time": {"bytes_per_second": [1.0, 3.0, 2.0]}},
        time_unit="ns",
    )
    bench = side.benchmark("BM_a/manual_time")
    assert list(bench.values["real_time"]) == [3.0, 1.0, 2.0]
    assert list(bench.values["bytes_per_second"]) == [1.0, 3.0, 2.0]
    assert not bench.from_aggregates and bench.error is None
    assert "BM_a/manual_time" in side and len(side) == 1


def test_directory_merges_files_and_pools_repetitions(write_json, tmp_path: Path) -> None:
    write_json("runs/1.json", {"BM_a": [1.0, 1.1, 1.2], "BM_b": [5.0, 5.0, 5.1]}, time_unit="ns")
    write_json("runs/2.json", {"BM_a": [1.3, 1.4, 1.5]}, time_unit="ns")
    (tmp_path / "runs" / "manifest.json").write_text('{"gpu": "H100"}')
    (tmp_path / "runs" / "notes.txt").write_text("not json")
    side = load(tmp_path / "runs")
    assert len(side.paths) == 2
    a = side.benchmark("BM_a")
    assert list(a.values["real_time"]) == [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    assert list(a.sources) == [0, 0, 0, 1, 1, 1]
    assert side.benchmark("BM_b").values["real_time"].size == 3
    assert any("manifest.json: skipped" in note for note in side.notes)


def test_directory_prefers_repetitions_over_aggregates(write_json, tmp_path: Path) -> None:
    write_json("runs/1.json", {"BM_a": [1.0, 2.0, 3.0]}, time_unit="ns")
    write_json(
        "runs/2.json",
        synthetic.document(
            synthetic.benchmark_rows("BM_a", [7.0, 8.0, 9.0], aggregates_only=True), H100_CONTEXT
        ),
    )
    a = load(tmp_path / "runs").benchmark("BM_a")
    assert list(a.values["real_time"]) == [1.0, 2.0, 3.0] and not a.from_aggregates


def test_directory_of_aggregates_only_files_gives_one_median_per_file(write_json, tmp_path) -> None:
    for i in range(3):
        rows = synthetic.benchmark_rows("BM_a", [1.0 + i, 2.0 + i, 30.0], aggregates_only=True)
        write_json(f"runs/{i}.json", synthetic.document(rows, H100_CONTEXT))
    a = load(tmp_path / "runs").benchmark("BM_a")
    assert list(a.values["real_time"]) == [2.0, 3.0, 4.0] and a.from_aggregates


def test_directory_of_gzipped_runs(write_json, tmp_path: Path) -> None:
    """A folder of runs archived with gzip reads as the plain one; one run in both forms
    would count as two processes: refused."""
    import gzip

    for i in range(3):
        rows = synthetic.benchmark_rows("BM_a", [1.0 + i, 2.0 + i, 3.0 + i])
        plain = write_json(f"plain/{i}.json", synthetic.document(rows, H100_CONTEXT))
        packed = tmp_path / "packed" / f"{i}.json.gz"
        packed.parent.mkdir(exist_ok=True)
        packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load(tmp_path / "plain").benchmark("BM_a"), load(tmp_path / "packed").benchmark("BM_a")
    assert list(a.values["real_time"]) == list(b.values["real_time"])
    assert len(set(b.processes)) == 3
    (tmp_path / "packed" / "1.json").write_bytes((tmp_path / "plain" / "1.json").read_bytes())
    with pytest.raises(InputError, match=r"packed: holds 1\.json and 1\.json\.gz: keep one"):
        load(tmp_path / "packed")


def test_a_folder_holding_one_run_twice_is_refused(write_json, tmp_path: Path) -> None:
    """Pooled, a copy counted its repetitions twice and made its q-values smaller than
    measured, with no word (merge and baseline update refuse it)."""
    rows = synthetic.benchmark_rows("BM_a", [1.0, 2.0, 3.0])
    first = write_json("runs/p1.json", synthetic.document(rows, H100_CONTEXT))
    (tmp_path / "runs" / "p2.json").write_bytes(first.read_bytes().replace(b"\n", b"\n  "))
    with pytest.raises(InputError, match=r"p2\.json holds the same measurements as .*p1\.json"):
        load(tmp_path / "runs")


def test_a_counter_whose_mean_would_overflow_is_refused(write_json, tmp_path: Path) -> None:
    """A bytes_per_second of 1.7e308 (finite) overflowed report's mean of it, warnings on
    stderr; zero and negative counters are a benchmark's own and read (found by an audit)."""
    counters = {"bytes_per_second": [1e12, 1.7e308]}
    rows = synthetic.benchmark_rows("BM_a", [1.0, 2.0], counters=counters)
    path = write_json("r.json", synthetic.document(rows, H100_CONTEXT))
    with pytest.raises(InputError, match=r"BM_a: counter bytes_per_second is 1\.7e\+308 \(a "):
        load(path)
    rows = synthetic.benchmark_rows("BM_a", [1.0, 2.0], counters={"delta": [0.0, -3.0]})
    assert list(
        load(write_json("s.json", synthetic.document(rows, H100_CONTEXT))).columns["delta"]
    ) == [0.0, -3.0]


def test_a_folder_of_rounds_reads_in_numeric_order(write_json, tmp_path: Path) -> None:
    """ab's round-2 before its round-10 (text order put round-10 first): the processes are
    numbered as measured, and the side's context is round-1's."""
    for k in range(1, 12):
        context = {**H100_CONTEXT, "kernelwatch_filter": f"round {k}"}
        rows = synthetic.benchmark_rows("BM_a", [float(k)])
        write_json(f"A/round-{k}.json", synthetic.document(rows, context))
    side = load(tmp_path / "A")
    assert list(side.benchmark("BM_a").values["real_time"]) == [float(k) for k in range(1, 12)]
    assert side.context["kernelwatch_filter"] == "round 1"


def test_directory_errors(write_json, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"directory holds no \.json files"):
        load(tmp_path / "empty")
    write_json("mixed/1.json", {"BM_a": [1.0]})
    write_json("mixed/2.json", {"BM_a": [1.0]}, context={"gpu_name": "NVIDIA H200"})
    with pytest.raises(InputError, match="one side must be one GPU model"):
        load(tmp_path / "mixed")
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "m.json").write_text("{}")
    with pytest.raises(InputError, match="holds no benchmark results"):
        load(tmp_path / "nothing")


def test_empty_benchmark_list_is_an_error(write_json) -> None:
    with pytest.raises(InputError, match="holds no benchmark results"):
        load(write_json("a.json", {"context": {}, "benchmarks": []}))


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        load(tmp_path / "absent.json")


def test_metric_column_rejects_bad_counter_values() -> None:
    side = result_set({"BM_a": [1.0, 2.0]}, counters={"BM_a": {"x_per_second": [1.0, 0.0]}})
    with pytest.raises(
        InputError, match=re.escape("BM_a: x_per_second is 0.0 (must be a positive")
    ):
        side.metric_column(Metric("x_per_second", True))
    assert side.metric_column(Metric("absent_per_second", True)) is None


def test_resolve_metric_directions() -> None:
    assert resolve_metric("time") == Metric("real_time", False)
    assert resolve_metric("cpu_time") == Metric("cpu_time", False)
    assert resolve_metric("bytes_per_second").higher_is_better
    assert resolve_metric("peak_fraction").higher_is_better
    assert resolve_metric("flop_per_second").higher_is_better
    assert resolve_metric("latency_cycles", higher_is_better=False) == Metric(
        "latency_cycles", False
    )
    with pytest.raises(InputError, match="unknown direction"):
        resolve_metric("latency_cycles")
    with pytest.raises(InputError, match="always lower-is-better"):
        resolve_metric("time", higher_is_better=True)
    with pytest.raises(InputError) as long:  # (a 5,000-character name was quoted whole)
        resolve_metric("x" * 5000)
    assert len(str(long.value)) < 300, str(long.value)


def test_gpu_model() -> None:
    assert gpu_model(H100_CONTEXT) == "NVIDIA H100 80GB HBM3 (sm 9.0)"
    assert gpu_model({"gpu_name": "X"}) == "X"
    assert gpu_model({"host_name": "ci"}) is None


def _snapshot(side: results.ResultSet) -> dict:
    return {
        name: {k: v.tolist() for k, v in side.benchmark(name).values.items()} for name in side.names
    }


def test_load_all_equals_loading_each(write_json, tmp_path: Path) -> None:
    for i in range(4):
        write_json(f"base/{i}.json", {"BM_a": [1.0 + i, 2.0, 3.0], f"BM_{i}": [4.0, 5.0]})
    (tmp_path / "base" / "manifest.json").write_text("{}")
    cont = write_json("cont.json", {"BM_a": [1.0, 2.0, 3.0]}, time_unit="us")
    together = load_all([tmp_path / "base", cont])
    one_by_one = [load(tmp_path / "base"), load(cont)]
    assert [_snapshot(s) for s in together] == [_snapshot(s) for s in one_by_one]
    assert list(together[0].benchmark("BM_a").sources) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert together[0].notes == one_by_one[0].notes


def test_load_all_checks_every_path_before_reading(write_json, tmp_path: Path) -> None:
    bad = write_json("bad.json", '{"benchmarks": [')
    with pytest.raises(InputError, match="absent.json: no such file or directory"):
        load_all([bad, tmp_path / "absent.json"])


@pytest.mark.parametrize("path", gpu_file_params())
def test_real_gpu_files_load(path: Path) -> None:
    side = load(path)
    assert len(side) > 0
    packed = path.read_bytes()
    raw = json.loads(gzip.decompress(packed) if path.suffix == ".gz" else packed)
    assert side.context == raw["context"]
    measured = [n for n in side.names if side.counts[side.index[n]] > 0]
    assert measured, "no benchmark with values"
    times = np.concatenate([side.benchmark(n).values["real_time"] for n in measured])
    assert np.all(np.isfinite(times)) and np.all(times > 0)
    assert gpu_model(side.context) is not None, "this project's files record the GPU"
