"""`kernelwatch merge` on parts that are unusual but real: a part whose process crashed, parts
from several hosts, and kernel records of the wrong shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import H100_CONTEXT, document
from kernelwatch.gbench import read_json

COMMIT = {"kernelwatch_git_commit": "0123456789ab"}
# Another card, in another host (host_gpu_uuids names the host: levels.host_identity).
OTHER_HOST = {
    "gpu_uuid": "GPU-99999999-other-host",
    "host_gpu_uuids": "GPU-99999999-other-host",
}
CRASH = {
    "kernelwatch_failed_processes": ["build/bench/x: crashed (signal 11)"],
    "kernelwatch_no_result": ["BM_c/1"],
}


def shard(
    write_json: Any,
    k: int,
    spec: dict[str, list[float]],
    count: int = 2,
    **options: Any,
) -> Path:
    context = {**options.pop("context", H100_CONTEXT), **COMMIT}
    context["kernelwatch_shard"] = f"{k}/{count}"
    return write_json(f"shard-{k}.json", spec, context=context, **options)


def test_a_part_whose_process_crashed_is_merged_with_its_crash(run_cli, write_json) -> None:
    """`run` writes what a shard's finished processes measured, with the crash in the context
    (docs/running.md). merge took those keys for settings: "differ in setting
    kernelwatch_failed_processes ...: not parts of one run", exit 2, so the other parts could
    not be merged; the crash is now joined, as the topped-up list is."""
    first = shard(write_json, 1, {"BM_a/1": [10.0, 10.1, 10.2]})
    second = shard(write_json, 2, {"BM_b/1": [20.0, 20.1, 20.2]}, context={**H100_CONTEXT, **CRASH})
    out = first.parent / "merged.json"
    for given in ((first, second), (second, first)):
        done = run_cli("merge", *given, "-o", out)
        assert done.status == 0, done.err
        context = read_json(out)["context"]
        assert context["kernelwatch_failed_processes"] == CRASH["kernelwatch_failed_processes"]
        assert context["kernelwatch_no_result"] == ["BM_c/1"]
    # compare shows the crashed benchmark as the shard's own result would: a failing ERROR
    baseline = write_json(
        "base.json",
        {"BM_a/1": [10.0, 10.1, 10.2], "BM_b/1": [20.0, 20.1, 20.2], "BM_c/1": [5.0, 5.1, 5.2]},
        context={**H100_CONTEXT, **COMMIT},
    )
    done = run_cli("compare", baseline, out, "--format", "json")
    rows = {row["name"]: row for row in json.loads(done.out)["benchmarks"]}
    assert rows["BM_c/1"]["verdict"] == "ERROR" and rows["BM_c/1"]["crashed"]


def test_crashes_of_several_parts_are_all_kept(run_cli, write_json) -> None:
    first = shard(write_json, 1, {"BM_a/1": [10.0, 10.1, 10.2]}, context={**H100_CONTEXT, **CRASH})
    other = {
        "kernelwatch_failed_processes": ["build/bench/y: hung (exit status 5)"],
        "kernelwatch_no_result": ["BM_d/1", "BM_e/1"],
    }
    second = shard(write_json, 2, {"BM_b/1": [20.0, 20.1, 20.2]}, context={**H100_CONTEXT, **other})
    out = first.parent / "merged.json"
    done = run_cli("merge", first, second, "-o", out)
    assert done.status == 0, done.err
    context = read_json(out)["context"]
    assert context["kernelwatch_failed_processes"] == [
        "build/bench/x: crashed (signal 11)",
        "build/bench/y: hung (exit status 5)",
    ]
    assert context["kernelwatch_no_result"] == ["BM_c/1", "BM_d/1", "BM_e/1"]


def test_a_crash_record_that_is_not_a_list_is_one_line(run_cli, write_json) -> None:
    first = shard(write_json, 1, {"BM_a/1": [10.0, 10.1, 10.2]})
    second = shard(
        write_json,
        2,
        {"BM_b/1": [20.0, 20.1, 20.2]},
        context={**H100_CONTEXT, "kernelwatch_no_result": "BM_c/1"},
    )
    done = run_cli("merge", first, second, "-o", first.parent / "merged.json")
    assert done.status == 2
    assert (
        done.err
        == f"kernelwatch: error: {second}: context kernelwatch_no_result is not a list of strings\n"
    )


def host_bound_parts(write_json: Any, second_context: dict[str, Any]) -> tuple[Path, Path, Path]:
    """A baseline measured on H100_CONTEXT's card and host; shard 1 measured there too, shard 2
    (a host-bound benchmark, 50 % slower) with `second_context`."""
    host_bound = {"BM_h/1": {"host_bound": [1.0] * 5}}
    times = {"BM_a/1": [10.0, 10.1, 10.2, 10.0, 10.1], "BM_h/1": [100.0, 101, 100.5, 100.2, 100.7]}
    baseline = write_json(
        "base.json", times, counters=host_bound, context={**H100_CONTEXT, **COMMIT}
    )
    first = shard(write_json, 1, {"BM_a/1": times["BM_a/1"]})
    slower = {"BM_h/1": [150.0, 151, 150.5, 150.2, 150.7]}
    second = shard(write_json, 2, slower, counters=host_bound, context=second_context)
    return baseline, first, second


def test_parts_from_another_host_are_not_judged_as_the_first_parts_host(
    run_cli, write_json
) -> None:
    """The merged context was the first part's but for gpu_uuid: shards from two hosts, the
    first on the baseline's, were judged as "another card of the same host", so a host-bound
    benchmark of the other host's shard failed (REGRESSION, exit 1) where that shard's own
    comparison, like run's report of it, did not fail it (host-bound, another host)."""
    baseline, first, second = host_bound_parts(write_json, {**H100_CONTEXT, **OTHER_HOST})
    out = first.parent / "merged.json"
    assert run_cli("merge", first, second, "-o", out).status == 0
    alone = run_cli("compare", baseline, second, "--format", "json")
    merged = run_cli("compare", baseline, out, "--format", "json")
    assert alone.status == merged.status == 0, merged.out
    rows = {row["name"]: row for row in json.loads(merged.out)["benchmarks"]}
    assert rows["BM_h/1"]["verdict"] == "SLOWER" and not rows["BM_h/1"]["failed"]
    assert rows["BM_h/1"]["level"] == "host"
    assert read_json(out)["context"]["host_gpu_uuids"] == "unknown"


def test_parts_of_one_host_keep_it(run_cli, write_json) -> None:
    """Two cards of one host (`run --gpus all --split`): the merged result names that host."""
    host = {"host_gpu_uuids": "GPU-00000000-test-card,GPU-11111111-test-card"}
    _, first, second = host_bound_parts(
        write_json, {**H100_CONTEXT, **host, "gpu_uuid": "GPU-11111111-test-card"}
    )
    first.write_text(
        json.dumps({**read_json(first), "context": {**read_json(first)["context"], **host}})
    )
    out = first.parent / "merged.json"
    assert run_cli("merge", first, second, "-o", out).status == 0
    context = read_json(out)["context"]
    assert context["host_gpu_uuids"] == host["host_gpu_uuids"]
    assert context["gpu_uuid"] == "GPU-00000000-test-card,GPU-11111111-test-card"


def test_parts_of_several_hosts_have_no_one_configuration(run_cli, write_json) -> None:
    """A fingerprint key (levels.HOST_CONFIG_KEYS) that differs between parts of two hosts is
    unknown in the merged result: the first part's value described only its own part. The
    cards of one host differ in such keys too (power limit, NUMA node): they keep the first
    part's, and so their host's level."""
    host_context = {**H100_CONTEXT, "host_cpu_model": "CPU A", "gpu_power_limit_w": "700"}
    for other, kept in (({}, "700"), (OTHER_HOST, "unknown")):
        _, first, second = host_bound_parts(
            write_json, {**host_context, **other, "gpu_power_limit_w": "500"}
        )
        first.write_text(
            json.dumps(
                {**read_json(first), "context": {**read_json(first)["context"], **host_context}}
            )
        )
        out = first.parent / "merged.json"
        assert run_cli("merge", first, second, "-o", out).status == 0
        context = read_json(out)["context"]
        assert context["gpu_power_limit_w"] == kept and context["host_cpu_model"] == "CPU A"


@pytest.mark.parametrize(
    "records",
    [
        {"version": 1, "benchmarks": 5},
        {"version": 1, "benchmarks": ["x"]},
        {"version": 1, "benchmarks": {}, "code": {"kernelwatch_bench_x": 5}},
        {"version": 1, "code": "x"},
        5,
        "records",
    ],
)
def test_kernel_records_of_another_shape_are_one_line(run_cli, write_json, records: Any) -> None:
    """{"benchmarks": 5} was an internal error (TypeError in kernels.joined), exit 2 without
    saying which file."""
    first = shard(write_json, 1, {"BM_a/1": [10.0, 10.1, 10.2]})
    second = shard(
        write_json,
        2,
        {"BM_b/1": [20.0, 20.1, 20.2]},
        context={**H100_CONTEXT, "kernelwatch_kernels": records},
    )
    out = first.parent / "merged.json"
    done = run_cli("merge", first, second, "-o", out)
    assert done.status == 2 and not out.exists()
    assert done.err.startswith(f"kernelwatch: error: {second}: context kernelwatch_kernels ")
    assert len(done.err.splitlines()) == 1


@pytest.mark.parametrize(
    "key",
    [
        "kernelwatch_git_commit",  # a commit
        "kernelwatch_repetitions",  # a setting
        "cuda_runtime_version",  # the software measured with
        "gpu_name",  # the GPU model
    ],
)
def test_a_long_context_value_is_cut_short_in_the_message(run_cli, write_json, key: str) -> None:
    """The one line names the parts and the key; a part's 5,000-character context value
    was written whole into it."""
    first = shard(write_json, 1, {"BM_a": [1.0, 2.0]})
    second = shard(write_json, 2, {"BM_b": [1.0, 2.0]})
    document = json.loads(second.read_text())
    document["context"][key] = "y" * 5000
    second.write_text(json.dumps(document))
    done = run_cli("merge", first, second, "-o", first.parent / "m.json")
    assert done.status == 2 and done.err.startswith("kernelwatch: error: ")
    assert "yyy..." in done.err and len(done.err) < 400 and done.err.count("\n") == 1
    assert not (first.parent / "m.json").exists()
