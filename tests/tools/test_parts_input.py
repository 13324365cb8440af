"""Splitting a run and joining its parts, from an audit: `merge` of shards that together are one
whole run, or that are not (parts of two splits), what the merged context says of every part,
and `--gpus` values that are long or name GPUs of two models for `--split`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_gpus import H100, H200, SMI, host, run  # noqa: F401 (host: a fixture)
from test_run import ALPHA, REMOVED, Box, box, fakebench_slug  # noqa: F401 (box: a fixture)
from test_shard import small_part

import fakebench
from kernelwatch import gpus
from kernelwatch import merge as shards
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json


def test_the_merged_parts_of_a_whole_run_are_judged_as_that_run(box: Box) -> None:
    """A benchmark removed from the build is MISSING without failing against a whole run
    (kernelwatch_whole_build). The shards of that run said nothing of the whole build, nor did
    their merged result: `compare` of it failed the removed benchmark (exit 1) where the
    unsplit run passed (exit 0). Every part of the plan, holding all of its benchmarks, is the
    whole run."""
    box.make_baseline()
    fakebench.configure(
        box.binaries[0], benchmarks={n: t for n, t in ALPHA.items() if n != REMOVED}
    )
    whole = box.tmp / "whole.json"
    assert box.run("--no-compare", "--out", whole).status == 0
    parts = [box.tmp / f"s{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        done = box.run("--no-compare", "--shard", f"{k}/2", "--out", part)
        assert done.status == 0, done.err
    merged = box.tmp / "merged.json"
    done = box.run_cli("merge", *parts, "-o", merged)
    assert done.status == 0, done.err
    assert read_json(merged)["context"]["kernelwatch_whole_build"] == "true"
    base = box.baselines / fakebench_slug()
    unsplit, joined = (box.run_cli("compare", base, path) for path in (whole, merged))
    assert unsplit.status == joined.status == 0, joined.out
    assert REMOVED in joined.out and "not in this build" in joined.out


def plan_part(index: int, names: list[str], **context: Any) -> tuple[str, dict[str, Any]]:
    """small_part of a plan of `names` (kernelwatch_shard_plan of 2 parts)."""
    return small_part(index, kernelwatch_shard_plan=shards.plan_key(names, 2), **context)


ALL = ["BM_part1", "BM_part2"]


@pytest.mark.parametrize(
    "context",
    [{"kernelwatch_filter": "^BM_"}, {"kernelwatch_host_bound_on": "GPU 0 (NVIDIA H100 ...)"}],
)
def test_merged_parts_of_a_part_of_the_suite_are_no_whole_build(context: dict[str, Any]) -> None:
    parts = [plan_part(1, ALL, **context), plan_part(2, ALL, **context)]
    assert "kernelwatch_whole_build" not in shards.merge_results(parts)["context"]
    # and with no such key, the same parts are the whole build
    assert (
        shards.merge_results([plan_part(1, ALL), plan_part(2, ALL)])["context"][
            "kernelwatch_whole_build"
        ]
        == "true"
    )


def test_a_part_lost_to_a_crash_still_makes_the_whole_build() -> None:
    lost = {"kernelwatch_failed_processes": ["x: crashed"], "kernelwatch_no_result": ["BM_c"]}
    names = [*ALL, "BM_c"]
    merged = shards.merge_results([plan_part(1, names), plan_part(2, names, **lost)])
    assert merged["context"]["kernelwatch_whole_build"] == "true"
    assert merged["context"]["kernelwatch_no_result"] == ["BM_c"]


def parts_of_two_splits(
    tmp_path: Path, run_cli: Any, monkeypatch: Any, shards: tuple[str, str]
) -> list[Path]:
    """Shard shards[0] split by a baselines folder's durations, shards[1] by count (no
    baseline): parts of one plan (x/a, x/b, x/d of 1 us, x/c of 5 s) but of two splits."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    long = {"x/a": 1000.0, "x/b": 1000.0, "x/c": 5e9, "x/d": 1000.0}  # x/c alone in a part
    fakebench.suite(tmp_path / "build", {"x": long})
    timed, none = tmp_path / "timed", tmp_path / "none"
    timed.mkdir()
    none.mkdir()
    common = ["run", "--build-dir", tmp_path / "build", "--no-compare", "--repetitions", "2",
              "--processes", "1"]  # fmt: skip
    done = run_cli(*common, "--baselines", none, "--out", tmp_path / "w.json")
    assert done.status == 0, done.err
    done = run_cli("baseline", "update", tmp_path / "w.json", "--baselines", timed,
                   "--min-repetitions", "2")  # fmt: skip
    assert done.status == 0, done.err
    parts = [tmp_path / f"s{shard[0]}.json" for shard in shards]
    for baselines, shard, part in zip((timed, none), shards, parts):
        done = run_cli(*common, "--baselines", baselines, "--shard", shard, "--out", part)
        assert done.status == 0, done.err
    return parts


def test_parts_of_two_splits_that_leave_a_benchmark_out_are_refused(
    tmp_path: Path, run_cli, monkeypatch
) -> None:
    """The split follows the baselines' durations, which the plan key does not hold: shard 1/2
    run with a baselines folder and shard 2/2 with another (here none: split by count) are parts
    of one plan but of two splits. x/a fell in neither, and merge wrote the other three,
    exit 0."""
    parts = parts_of_two_splits(tmp_path, run_cli, monkeypatch, ("1/2", "2/2"))
    held = [{row["run_name"] for row in read_json(part)["benchmarks"]} for part in parts]
    assert held == [{"x/c"}, {"x/b", "x/d"}]  # x/a in neither
    out = tmp_path / "merged.json"
    done = run_cli("merge", *parts, "-o", out)
    assert done.status == 2 and done.err.count("\n") == 1, done.err
    assert done.err.startswith("kernelwatch: error: the 2 parts hold 3 benchmark(s), not the ")
    assert "split by other durations" in done.err and not out.exists()
    # what there is still merges where asked to (the plan's benchmarks then are not all there)
    done = run_cli("merge", *parts, "-o", out, "--allow-partial")
    assert done.status == 0, done.err
    assert "kernelwatch_whole_build" not in read_json(out)["context"]


def test_the_merged_context_names_every_parts_host_bound_benchmarks_and_gpu() -> None:
    """kernelwatch_serial and kernelwatch_gpu_index were the first part's: a nightly whose
    transfers fell in shard 2 said it measured none with the host to themselves, and the
    parts of `--gpus all --split` on GPUs 0 and 1 said GPU 0 beside both UUIDs."""
    first = small_part(1, kernelwatch_gpu_index="0", gpu_uuid=H100)
    second = small_part(
        2, kernelwatch_gpu_index="1", gpu_uuid=H200, kernelwatch_serial=["BM_part2"]
    )
    for parts in ([first, second], [second, first]):
        context = shards.merge_results(parts)["context"]
        assert context["kernelwatch_serial"] == ["BM_part2"]
        assert context["kernelwatch_gpu_index"] == "0,1"
        assert context["gpu_uuid"] == f"{H100},{H200}"
    one = [small_part(1, kernelwatch_gpu_index="0"), small_part(2, kernelwatch_gpu_index="0")]
    context = shards.merge_results(one)["context"]  # GPU 0 of two hosts
    assert context["kernelwatch_gpu_index"] == "0" and "kernelwatch_serial" not in context


def test_a_host_bound_list_that_is_not_a_list_of_strings_is_one_line() -> None:
    with pytest.raises(InputError, match="s2.json: context kernelwatch_serial is not a list"):
        shards.merge_results([small_part(1), small_part(2, kernelwatch_serial=[7])])


@pytest.mark.parametrize("index", [[1], 1, {"gpu": 1}, "1,[2]", ""], ids=repr)
def test_a_gpu_index_that_is_not_a_number_as_run_writes_it_is_one_line(index: Any) -> None:
    """A list was merged as "0,[1]", into what `report` and `history` show of the run."""
    with pytest.raises(InputError, match="s2.json: context kernelwatch_gpu_index is "):
        shards.merge_results([small_part(1), small_part(2, kernelwatch_gpu_index=index)])


AVAILABLE = gpus.parse(SMI)


@pytest.mark.parametrize(
    "spec", ["x" * 5000, "0,0," + "1," * 2500, "0,," + "1" * 5000, "GPU-" + "f" * 5000]
)
def test_a_long_gpus_value_is_cut_short(spec: str) -> None:
    with pytest.raises(InputError) as caught:
        gpus.select(AVAILABLE, spec)
    assert len(str(caught.value)) < 400 and "characters)" in str(caught.value)


def test_a_long_gpus_value_is_one_short_line(run_cli, host: Path) -> None:  # noqa: F811
    done = run(run_cli, host, "--gpus", "7" * 5000, "--no-compare")
    assert done.status == 2 and done.err.count("\n") == 1 and len(done.err) < 400, done.err
    assert done.err.startswith("kernelwatch: error: --gpus 7777")


def test_split_refuses_gpus_of_two_models(run_cli, host: Path) -> None:
    """`--gpus all --split` on an H100 and an H200 ran, each exit 0: two parts of one suite
    that merge refuses (one GPU model), each model's result half the suite, and the host-bound
    benchmarks measured on one model only."""
    with pytest.raises(InputError) as caught:
        gpus.one_model(AVAILABLE)
    assert str(caught.value) == (
        "--split: GPU 0 (NVIDIA H100 80GB HBM3) and GPU 1 (NVIDIA H200) are of two models, and "
        "the parts of one suite merge for one model only; give --gpus of one model, or leave "
        "out --split"
    )
    gpus.one_model(AVAILABLE[:1])
    gpus.one_model([AVAILABLE[1], gpus.Gpu(2, "GPU-2", "NVIDIA H200", "9.0")])
    done = run(run_cli, host, "--gpus", "all", "--split", "--no-compare")  # an H100 and an H200
    assert done.status == 2 and done.err.strip() == f"kernelwatch: error: {caught.value}"
    assert not list(host.glob("*.json"))  # nothing measured


@pytest.mark.parametrize(
    "starts, took",
    [
        # side by side (`--gpus all --split`): the first start to the last end, not 200 s
        (("2026-12-01T10:00:00+00:00", "2026-12-01T10:00:05+00:00"), "105.0"),
        # one after the other, in other zones: the same span
        (("2026-12-01T10:00:00+00:00", "2026-12-01T12:01:40+02:00"), "200.0"),
        # a part that does not say when it started: the sum, as before
        (("2026-12-01T10:00:00+00:00", None), "200.0"),
    ],
)
def test_the_merged_run_time_is_how_long_the_parts_took(
    starts: tuple[str, str | None], took: str
) -> None:
    """The merged kernelwatch_run_seconds was the parts' sum: the report said a `--split` run of
    two GPUs side by side took twice as long as it did."""
    parts = [
        small_part(k, kernelwatch_run_seconds="100.0", kernelwatch_run_started=start)
        for k, start in enumerate(starts, 1)
    ]
    for _, document in parts:
        if document["context"]["kernelwatch_run_started"] is None:
            del document["context"]["kernelwatch_run_started"]
    assert shards.merge_results(parts)["context"]["kernelwatch_run_seconds"] == took


def test_the_merged_copy_ceiling_stands_for_every_part() -> None:
    """The merged result kept the first part's ceiling, which compare holds against the
    baseline's: one card's figure for a run of several."""
    key = "kernelwatch_copy_ceiling_bytes_per_second"
    parts = [
        small_part(k, **{key: ceiling})
        for k, ceiling in enumerate(("4000000000000", "4200000000000"), 1)
    ]
    assert shards.merge_results(parts)["context"][key] == "4100000000000"


@pytest.mark.parametrize(
    "key", ["kernelwatch_run_seconds", "kernelwatch_copy_ceiling_bytes_per_second"]
)
@pytest.mark.parametrize("value", ["fast", "-5", "nan", [100], True], ids=repr)
def test_a_time_or_ceiling_that_is_not_a_number_is_one_line(key: str, value: Any) -> None:
    """Such a part was left out of the merged figure without a word: the merged run's time was
    the other parts' alone, its copy ceiling another card's."""
    with pytest.raises(InputError, match=f"s2.json: context {key} is "):
        shards.merge_results([small_part(1, **{key: "100"}), small_part(2, **{key: value})])


def test_parts_of_two_splits_that_hold_a_benchmark_twice_are_named_so(
    tmp_path: Path, run_cli, monkeypatch
) -> None:
    """The other way two splits of one plan meet: a benchmark in both parts. merge said
    "benchmark 'x/a' is in both s1.json and s2.json: one result needs unique names", the
    words for two binaries of one run, not for shards run with other options."""
    # 2/2 split by the durations, 1/2 by the count
    parts = parts_of_two_splits(tmp_path, run_cli, monkeypatch, ("2/2", "1/2"))
    held = [{row["run_name"] for row in read_json(part)["benchmarks"]} for part in parts]
    assert held[0] & held[1], held
    done = run_cli("merge", *parts, "-o", tmp_path / "merged.json")
    assert done.status == 2 and done.err.count("\n") == 1, done.err
    assert "parts of two splits" in done.err and "split by other durations" in done.err, done.err
