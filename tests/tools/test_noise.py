"""Each benchmark's noise (kernelwatch.noise): its sources, the group guard, the stored file,
and how compare uses it as the floor of the limit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import H100_CONTEXT, REPO, document, merged, result_set
from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch.compare import Settings, Verdict, compare
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.loading import from_documents, load
from kernelwatch.results import NOISE_TARGET_KEY, gpu_model, resolve_metric

TIME = resolve_metric("time")


def steady(median: float, n: int = 10, spread: float = 0.0002, seed: int = 0) -> list[float]:
    return (median * np.random.default_rng(seed).lognormal(0.0, spread, n)).tolist()


@pytest.mark.parametrize(
    ("name", "group"),
    [
        (
            "transpose/diagonal_rows/rows:8192/cols:8192/block_rows:8/manual_time",
            "transpose/diagonal_rows",
        ),
        ("coalescing/memcpy_d2d/manual_time", "coalescing/memcpy_d2d"),
        ("BM_Copy/1048576/manual_time", "BM_Copy"),
        ("BM_plain", "BM_plain"),
    ],
)
def test_group_is_the_name_without_parameters(name: str, group: str) -> None:
    assert noises.group_of(name) == group


def test_between_processes_in_one_merged_file() -> None:
    # Two processes 1 % apart, each very steady: the per-process medians show it.
    result = from_documents(
        "run.json", [merged({"BM_a": [steady(100.0, 5, seed=1), steady(101.0, 5, seed=2)]})]
    )
    assert result.benchmark("BM_a").processes.tolist() == [0] * 5 + [1] * 5
    found = noises.measure(result)
    assert found.processes.tolist() == [2] and found.repetitions.tolist() == [10]
    assert found.between[0] == pytest.approx(1.0 / np.sqrt(2) / 100.5, rel=0.02)
    # the robust CV of the pooled repetitions sees the two levels too, about as large
    assert found.noise[0] == pytest.approx(max(found.between[0], found.within[0]))


def test_one_process_gives_no_between_estimate() -> None:
    found = noises.measure(result_set({"BM_a": steady(100.0, spread=0.01)}))
    assert np.isnan(found.between[0]) and found.processes.tolist() == [1]
    assert found.noise[0] == pytest.approx(found.within[0]) and found.within[0] > 0.003


def test_the_counter_is_a_95_percent_width() -> None:
    found = noises.measure(
        result_set({"BM_a": steady(100.0)}, counters={"BM_a": {"noise": [0.0392] * 10}})
    )
    assert found.counter[0] == pytest.approx(0.01, rel=1e-3)
    assert found.noise[0] == pytest.approx(0.01, rel=1e-3)


def test_another_programs_counter_named_noise_is_its_own() -> None:
    """A Google Benchmark file of another project, with a counter `noise` of its own (a level of
    50): read as the harness's 95 % width it made a limit thousands of percent wide, and every
    slowdown of that benchmark SAME. Only a file of the harness (its noise target in the
    context) has the harness's counter."""
    counters = {"BM_a": {"noise": [50.0] * 10}}
    theirs = {k: v for k, v in H100_CONTEXT.items() if k != NOISE_TARGET_KEY}
    found = noises.measure(result_set({"BM_a": steady(100.0)}, counters=counters, context=theirs))
    assert np.isnan(found.counter[0]) and found.noise[0] < 0.01
    slower = result_set({"BM_a": steady(110.0, seed=1)}, context=theirs)
    base = result_set({"BM_a": steady(100.0)}, counters=counters, context=theirs)
    assert compare(base, slower, TIME, Settings()).comparisons[0].verdict is Verdict.REGRESSION


def test_the_counter_is_not_the_noise_of_another_metric() -> None:
    base = result_set(
        {"BM_a": steady(100.0)},
        counters={"BM_a": {"noise": [0.2] * 10, "ceiling_fraction": [0.8] * 10}},
    )
    found = noises.measure(base, resolve_metric("ceiling_fraction"))
    assert np.isnan(found.counter[0]) and found.noise[0] == 0.0


def test_a_group_guards_a_member_whose_own_estimate_came_out_small() -> None:
    spec = {
        f"fam/kernel/n:{n}/manual_time": [steady(100.0, 5, seed=n), steady(102.0, 5, seed=n + 50)]
        for n in range(4)
    }
    spec["fam/kernel/n:9/manual_time"] = [steady(100.0, 5, seed=9), steady(100.0, 5, seed=9)]
    found = noises.measure(from_documents("run", [merged(spec)]))
    lucky = found.names.index("fam/kernel/n:9/manual_time")
    assert found.between[lucky] < 0.001 < found.group[lucky]
    assert found.noise[lucky] == pytest.approx(found.group[lucky])
    alone = noises.measure(from_documents("run", [merged(spec)]), pool=False)
    assert alone.noise[lucky] < 0.001


def test_stored_noise_round_trip(tmp_path: Path) -> None:
    found = noises.measure(
        from_documents("r", [merged({"BM_a": [steady(100.0, 5), steady(101.0, 5, seed=3)]})])
    )
    path = tmp_path / noises.NOISE_FILE
    path.write_text(json.dumps(noises.noise_document(found, H100_CONTEXT)))
    data = noises.read_noise_file(path)
    entry = data["benchmarks"]["BM_a"]
    assert entry["processes"] == 2 and entry["repetitions"] == 10
    assert entry["noise"] == pytest.approx(found.noise[0], rel=1e-3)
    values, warning = noises.stored(path, H100_CONTEXT)
    assert warning is None and values is not None
    assert values.names == ("BM_a",) and values.process.tolist() == [entry["noise"]]
    assert values.process_measured.tolist() == [True] and np.isnan(values.host).all()
    assert noises.beside(tmp_path / "result.json") == path and noises.beside(tmp_path) == path


def test_a_noise_file_of_another_commit_is_not_used(tmp_path: Path) -> None:
    found = noises.measure(result_set({"BM_a": steady(100.0)}))
    path = tmp_path / noises.NOISE_FILE
    path.write_text(json.dumps(noises.noise_document(found, {"kernelwatch_git_commit": "a" * 40})))
    values, warning = noises.stored(path, {"kernelwatch_git_commit": "b" * 40})
    assert values is None and "not used" in (warning or "")


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        '{"schema_version": 1}',
        '{"schema_version": 3, "benchmarks": {}}',
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "host": "x"}}}',
        '{"schema_version": 1, "benchmarks": {"BM_a": {"noise": "x"}}}',
        '{"schema_version": 1, "benchmarks": {"BM_a": {"noise": -1}}}',
        # the keys that only `baseline show` prints: text there was an internal error
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "within_run": "x"}}}',
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "group": [0.1]}}}',
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "counter": {}}}}',
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "processes": "3"}}}',
        '{"schema_version": 2, "benchmarks": {"BM_a": {"noise": 0.01, "repetitions": 2.5}}}',
    ],
)
def test_a_damaged_noise_file_is_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "noise.json"
    path.write_text(content)
    with pytest.raises(InputError, match=str(path)):
        noises.read_noise_file(path)


# --- compare with the noise ---------------------------------------------------------------------


def process_noise(values: dict[str, float]) -> noises.LevelNoise:
    """Stored noise of the process level only, measured between processes."""
    count = len(values)
    nan = np.full(count, np.nan)
    return noises.LevelNoise(
        tuple(values),
        np.array(list(values.values())),
        np.ones(count, bool),
        nan,
        nan.copy(),
    )


def test_stored_noise_sets_the_floor_for_times_only() -> None:
    base = result_set({"BM_a": steady(100.0)}, counters={"BM_a": {"bytes_per_second": [1e9] * 10}})
    cont = result_set(
        {"BM_a": [t * 1.05 for t in steady(100.0, seed=1)]},
        counters={"BM_a": {"bytes_per_second": [1e9 / 1.05] * 10}},
    )
    plain = compare(base, cont, TIME, Settings()).comparisons[0]
    relative, absolute = levels.prior_constants(
        Level.PROCESS, gpu_model(base.context)
    )  # one process a side
    assert plain.verdict is Verdict.REGRESSION
    assert plain.limit == pytest.approx(2 * (relative + absolute / plain.baseline.median), rel=1e-3)
    stored = compare(base, cont, TIME, Settings(), process_noise({"BM_a": 0.03}))
    assert stored.comparisons[0].noise_floor == pytest.approx(Settings().noise_multiplier * 0.03)
    assert stored.comparisons[0].verdict is Verdict.SAME
    assert any("stored noise for 1 of 1" in n for n in stored.notes)
    bandwidth = compare(
        base, cont, resolve_metric("bytes_per_second"), Settings(), process_noise({"BM_a": 0.03})
    ).comparisons[0]
    # a counter: the stored noise (of times) is not used, the floor is that of `plain`
    assert bandwidth.noise_floor == pytest.approx(plain.noise_floor, rel=0.05)
    assert bandwidth.verdict is Verdict.REGRESSION


def test_a_disturbed_contender_process_widens_its_limit() -> None:
    # The judged run's second process is 4 % slow (a neighbour's job): not a regression.
    base = from_documents("b", [merged({"BM_a": [steady(100.0, 5), steady(100.0, 5, seed=1)]})])
    cont = from_documents(
        "c", [merged({"BM_a": [steady(100.0, 5, seed=2), steady(104.0, 5, seed=3)]})]
    )
    c = compare(base, cont, TIME, Settings()).comparisons[0]
    assert c.contender.processes == 2
    assert c.noise_floor > 0.04 and c.verdict is not Verdict.REGRESSION


def test_a_real_slowdown_of_every_process_is_still_found() -> None:
    base = from_documents("b", [merged({"BM_a": [steady(100.0, 5), steady(100.1, 5, seed=1)]})])
    cont = from_documents(
        "c", [merged({"BM_a": [steady(102.0, 5, seed=2), steady(102.1, 5, seed=3)]})]
    )
    c = compare(base, cont, TIME, Settings()).comparisons[0]
    assert c.verdict is Verdict.REGRESSION and c.limit == 0.01


def test_documents_without_process_keys_are_one_process_per_file() -> None:
    side = from_documents(
        "dir", [document({"BM_a": steady(100.0)}), document({"BM_a": steady(100.0, seed=1)})]
    )
    assert side.benchmark("BM_a").processes.tolist() == [0] * 10 + [1] * 10


def test_the_widest_step_is_the_largest_gap_between_two_processes_of_a_run() -> None:
    spec = {
        "fam/k/manual_time": [steady(100.0, 5), steady(100.0, 5, seed=1), steady(102.0, 5, seed=2)],
        "fam/one/manual_time": [steady(50.0, 5)],
    }
    result = from_documents("run", [merged(spec)])
    steps = dict(zip(result.names, noises.widest_steps(result)))
    assert steps["fam/k/manual_time"] == pytest.approx(0.02, rel=0.05)
    assert np.isnan(steps["fam/one/manual_time"])  # one process: no step to see


def test_the_h200_baselines_slow_process_is_a_step_its_spread_understates() -> None:
    """The H200 baseline of b0f397d: card GPU-43923646 ran one process of the 64 Mi warp-shuffle
    sum at 249.3 us against 243.3 us (+2.5 %), while the standard deviation between processes
    pooled over nine cards is 0.75 % (docs/measurement.md, "An anchor's two processes")."""
    folder = REPO / "tests" / "data" / "gpu" / "h200-baseline-b0f397d" / "nvidia-h200-sm90"
    base = load(folder)
    name = "reduction/sum/warp_shuffle/float/n:67108864/manual_time"
    step = dict(zip(base.names, noises.widest_steps(base)))[name]
    stored = noises.levels_from_file(noises.read_noise_file(folder / noises.NOISE_FILE))
    spread = stored.take([name]).process[0]
    assert step == pytest.approx(0.0247, abs=0.0005) and spread == pytest.approx(0.0075, abs=0.0001)
    assert step > 2 * spread  # beyond the limit the spread alone gives


def test_a_member_without_a_spread_leaves_its_group_s_guard_to_the_others() -> None:
    # np.median of a group with one NaN was NaN for every member: the 0.1 % one lost its guard.
    names = ["fam/a:1", "fam/a:2", "fam/a:3", "fam/a:4"]
    guarded = noises._group_medians(names, np.array([0.001, 0.02, 0.03, np.nan]))
    assert guarded.tolist() == [0.02] * 4
    too_few = noises._group_medians(names, np.array([0.001, np.nan, np.nan, np.nan]))
    assert np.isnan(too_few).all()
