"""Running benchmark binaries (kernelwatch.runner), with fake binaries (fakebench.py)."""

from __future__ import annotations

import io
import json
import math
import re
import shlex
from pathlib import Path

import fakebench
import numpy as np
import pytest
from conftest import GPU_DATA, process_gone
from kernelwatch import results, runner
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError
from kernelwatch.gbench import read_json
from kernelwatch.runner import precision
from kernelwatch.runner.process import format_duration

A = {"alpha/copy/manual_time": 100.0, "alpha/copy(2)/manual_time": 200.0}
B = {"beta/sum/n:1/manual_time": 50.0, "beta/sum/n:2/manual_time": 60.0}


@pytest.fixture
def binaries(tmp_path: Path) -> list[Path]:
    return fakebench.suite(tmp_path / "build", {"alpha": A, "beta": B})


# --- filters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "matmul/simple/m:8192/n:8192/manual_time",
        "BM_x<float, 4>/1.5/(a|b)/manual_time",
        "BM_all[*+?{}]^$\\end",
        "transfers/-1/manual_time",
    ],
)
def test_names_filter_matches_exactly_the_names(name: str) -> None:
    pattern = re.compile(runner.names_filter([name, "other"]))
    assert pattern.search(name) and pattern.search("other")
    assert not pattern.search(name + "/more") and not pattern.search("x" + name)
    assert not pattern.search(name[:-1])


def test_ere_escape_leaves_ordinary_characters() -> None:
    assert runner.ere_escape("a/b:1/c_d-e <f, g>") == "a/b:1/c_d-e <f, g>"
    assert runner.ere_escape("a.b(c)") == "a\\.b\\(c\\)"


# --- finding binaries and the GPU -------------------------------------------------------------


def test_find_binaries(binaries: list[Path], tmp_path: Path) -> None:
    folder = tmp_path / "build" / "bench"
    (folder / "kernelwatch_bench_notes.txt").write_text("x")
    (folder / "kernelwatch_bench_plain").write_text("not executable")
    (folder / "kernelwatch_bench_dir").mkdir()
    assert runner.find_binaries(tmp_path / "build") == binaries
    assert runner.find_binaries(tmp_path / "absent") == []


def test_check_binary(tmp_path: Path, binaries: list[Path]) -> None:
    assert runner.check_binary(binaries[0]) == binaries[0]
    with pytest.raises(InputError, match="no such file"):
        runner.check_binary(tmp_path / "absent")
    (tmp_path / "text").write_text("x")
    with pytest.raises(InputError, match="not an executable file"):
        runner.check_binary(tmp_path / "text")


def test_bench_in_the_current_folder_runs(
    binaries: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # --bench ./my_benchmarks: a bare name is looked up on PATH by exec, and was not found.
    monkeypatch.chdir(binaries[0].parent)
    checked = runner.check_binary(Path("./" + binaries[0].name))
    assert checked == binaries[0]
    assert set(runner.list_benchmarks(checked, None)) == set(A)


def test_gpu_found_by_nvidia_smi(tmp_path: Path, monkeypatch) -> None:
    fakebench.fake_nvidia_smi(tmp_path, monkeypatch, "GPU 0: NVIDIA H200 (UUID: GPU-1234)")
    assert runner.gpu_absent_reason(None) is None


def test_nvidia_smi_without_gpu(tmp_path: Path, monkeypatch) -> None:
    fakebench.fake_nvidia_smi(
        tmp_path, monkeypatch, "NVIDIA-SMI has failed because it couldn't communicate", 9
    )
    reason = runner.gpu_absent_reason(None)
    assert reason.startswith("nvidia-smi -L: NVIDIA-SMI has failed")
    with pytest.raises(NoGpuError, match="no CUDA GPU is visible .*; nothing to measure"):
        runner.require_gpu(None)


def test_probe_binary_without_nvidia_smi(binaries: list[Path], monkeypatch) -> None:
    fakebench.no_nvidia_smi(monkeypatch)
    assert runner.gpu_absent_reason(binaries[0]) is None
    assert fakebench.runs(binaries[0]) == 0  # the probe measures nothing
    fakebench.configure(binaries[0], exit=4)
    assert runner.gpu_absent_reason(binaries[0]) == (
        "no nvidia-smi; kernelwatch_bench_alpha: fake: 0 devices"
    )


def test_no_nvidia_smi_no_binary_no_devices(monkeypatch) -> None:
    fakebench.no_nvidia_smi(monkeypatch, devices=False)
    assert runner.gpu_absent_reason(None) == "no nvidia-smi, no /dev/nvidia* device files"
    fakebench.no_nvidia_smi(monkeypatch, devices=True)
    assert runner.gpu_absent_reason(None) is None


# --- listing --------------------------------------------------------------------------------


def test_plan_lists_with_the_filter(binaries: list[Path]) -> None:
    jobs = runner.plan(binaries, None)
    assert [job.names for job in jobs] == [tuple(A), tuple(B)]
    jobs = runner.plan(binaries, "^beta/sum/n:2")
    assert [(job.binary, job.names) for job in jobs] == [
        (binaries[1], ("beta/sum/n:2/manual_time",))
    ]
    with pytest.raises(
        InputError, match=re.escape("--filter '^nothing' matches no benchmark in 2")
    ):
        runner.plan(binaries, "^nothing")


def test_a_filter_the_binaries_cannot_compile_is_named_as_such(binaries: list[Path]) -> None:
    # Python's re takes \w; Google Benchmark's POSIX regex does not, lists nothing, exits 0
    fakebench.configure(binaries[0], refuses_filter=r"\\w")
    with pytest.raises(InputError) as refused:
        runner.plan(binaries, r"^alpha/\w+")
    assert str(refused.value) == (
        "--filter '^alpha/\\\\w+': kernelwatch_bench_alpha cannot compile it (Invalid escape at "
        "offset 7); the binaries take a POSIX extended regex: no (?...), \\d, \\w or \\s"
    )


def test_plan_refuses_a_name_in_two_binaries(tmp_path: Path) -> None:
    both = fakebench.suite(tmp_path / "build", {"one": A, "two": A})
    with pytest.raises(InputError, match="is in both .*kernelwatch_bench_one and"):
        runner.plan(both, None)


def test_listing_failure_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "not_gbench"
    script.write_text("#!/bin/sh\necho 'usage: not_gbench FILE' >&2\nexit 1\n")
    script.chmod(0o755)
    with pytest.raises(InputError, match="listing its benchmarks failed .*usage: not_gbench"):
        runner.list_benchmarks(script, None)
    broken = tmp_path / "broken"
    broken.write_bytes(b"\x7fELF garbage")
    broken.chmod(0o755)
    with pytest.raises(InputError, match="cannot run"):
        runner.list_benchmarks(broken, None)


# --- running --------------------------------------------------------------------------------


def test_command_line_flags(tmp_path: Path) -> None:
    settings = runner.RunSettings(
        repetitions=7, max_time=0.5, interleave=False, extra_args=("--x=1",)
    )
    job = runner.Job(Path("/b/bin"), "^a$", ("a",))
    command = runner.benchmark_command(job, settings, tmp_path / "o.json")
    assert command == [
        "/b/bin",
        "--benchmark_filter=^a$",
        "--benchmark_repetitions=7",
        "--kernelwatch_max_time=0.5",
        "--benchmark_enable_random_interleaving=false",
        f"--benchmark_out={tmp_path / 'o.json'}",
        "--benchmark_out_format=json",
        "--x=1",
    ]
    default = runner.benchmark_command(
        runner.Job(Path("b"), None, ("a",)), runner.RunSettings(), Path("o")
    )
    assert "--kernelwatch_max_time=0.25" in default and "--benchmark_repetitions=10" in default
    assert "--benchmark_enable_random_interleaving=true" in default
    assert not any(arg.startswith("--benchmark_filter") for arg in default)
    plain = runner.Job(Path("b"), None, ("a",), harness=False)
    assert not any(
        arg.startswith("--kernelwatch_")
        for arg in runner.benchmark_command(plain, runner.RunSettings(), Path("o"))
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"repetitions": 0}, "--repetitions 0"),
        ({"max_time": 0.0}, "--max-time 0"),
        ({"processes": 0}, "--processes 0: must be at least 1"),
        ({"processes": 3, "repetitions": 2}, "--processes 3: more processes than --repetitions 2"),
        ({"precision": 1.5}, "--precision 1.5: must be a fraction from 0 to 1"),
        ({"precision": -0.1}, "--precision -0.1: must be a fraction"),
        ({"top_ups": 11}, "--top-ups 11: must be from 0 to 10"),
        ({"repetitions": 10**12}, "--repetitions 1000000000000: must be at most 10000"),
        (
            {"repetitions": 10**12, "processes": 10**12},
            "--repetitions 1000000000000: must be at most 10000",
        ),
        ({"repetitions": 100, "processes": 65}, "--processes 65: must be at most 64"),
        ({"max_time": math.inf}, "--max-time inf: must be a positive number"),
        ({"max_time": math.nan}, "--max-time nan: must be a positive number"),
        ({"precision": math.nan}, "--precision nan: must be a fraction"),
        ({"precision": math.inf}, "--precision inf: must be a fraction"),
    ],
)
def test_bad_run_settings(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        runner.RunSettings(**options)


def test_run_suite_merges_and_records(binaries: list[Path], tmp_path: Path) -> None:
    log = tmp_path / "argv.log"
    for binary in binaries:
        fakebench.configure(binary, log=str(log))
    jobs = runner.plan(binaries, None)
    suite = runner.run_suite(
        jobs, runner.RunSettings(repetitions=3), context={"kernelwatch_run_command": "kw run"}
    )
    document = suite.document
    names = {row["run_name"] for row in document["benchmarks"]}
    assert names == set(A) | set(B)
    context = document["context"]
    assert context["gpu_name"] == fakebench.GPU_CONTEXT["gpu_name"]
    assert context["kernelwatch_repetitions"] == "3"
    assert context["kernelwatch_max_time"] == "0.25"
    assert context["kernelwatch_random_interleaving"] == "true"
    assert context["kernelwatch_run_command"] == "kw run"
    assert float(context["kernelwatch_run_seconds"]) >= 0
    commands = context["kernelwatch_benchmark_commands"]
    assert [shlex.split(c)[0] for c in commands] == [str(b) for b in binaries]
    assert [json.loads(line) for line in log.read_text().splitlines()][-1] == suite.commands[-1][1:]


def test_merge_refuses_two_gpus(binaries: list[Path]) -> None:
    fakebench.configure(binaries[1], context={"gpu_uuid": "GPU-other"})
    with pytest.raises(InputError, match="one result must come from one GPU"):
        runner.run_suite(runner.plan(binaries, None), runner.RunSettings(repetitions=2))


@pytest.mark.parametrize(
    ("behaviour", "error", "message"),
    [
        ({"exit": 4}, NoGpuError, r"no CUDA GPU is visible \(kernelwatch_bench_alpha: fake: 0"),
        ({"exit": 3}, BenchmarkCrashed, "lost its CUDA context .*illegal memory access"),
        ({"signal": "SIGSEGV"}, BenchmarkCrashed, r"crashed \(SIGSEGV\)"),
        ({"exit": 7}, BenchmarkCrashed, "failed .exit status 7.: fake: exiting with 7"),
        ({"no_output": True}, BenchmarkCrashed, "exited 0 but wrote no result file"),
        (
            {"renamed": "other/"},
            BenchmarkCrashed,
            r"kernelwatch_bench_alpha: wrote 2 benchmark\(s\) that its --benchmark_list_tests "
            r"did not list, other/alpha/copy\(2\)/manual_time among them$",
        ),
        (
            {"hang": "alpha/copy/1"},
            BenchmarkCrashed,
            r"kernelwatch_bench_alpha: hung \(exit status 5\): alpha/copy/1 made no progress for "
            r"120 s \(a kernel that never finishes\?\); the process ends$",
        ),
    ],
)
def test_binary_failures(binaries: list[Path], behaviour: dict, error: type, message: str) -> None:
    jobs = runner.plan(binaries, None)
    fakebench.configure(binaries[0], **behaviour)
    with pytest.raises(error, match=message) as caught:
        runner.run_suite(jobs, runner.RunSettings(repetitions=2))
    assert "\n" not in str(caught.value)


def test_a_hung_binary_keeps_the_other_binaries_results(binaries: list[Path]) -> None:
    fakebench.configure(binaries[0], hang="alpha/copy")
    settings = runner.RunSettings(repetitions=4, processes=2, precision=0.0001, top_ups=1)
    with pytest.raises(
        runner.IncompleteRun, match=r"hung \(exit status 5\): alpha/copy "
    ) as caught:
        runner.run_suite(runner.plan(binaries, None), settings, keep_going=True)
    failed = caught.value
    assert failed.exit_status == 3 and "\n" not in str(failed)
    assert failed.no_result == tuple(A)
    assert failed.partial is not None
    document = failed.partial.document
    assert {row["run_name"] for row in document["benchmarks"]} == set(B)
    assert {row["kernelwatch_process"] for row in document["benchmarks"]} >= {1, 2}
    context = document["context"]
    assert context[results.NO_RESULT_KEY] == list(A)
    assert context[results.FAILED_KEY] == [str(failed)]
    # Its second process and its top-ups are skipped: it would hang again.
    assert fakebench.runs(binaries[0]) == 1
    assert fakebench.runs(binaries[1]) == 4  # its 2 processes and a top-up in 2 more


def test_a_binary_that_hangs_in_its_second_process_keeps_its_first(binaries: list[Path]) -> None:
    fakebench.configure(binaries[1], hang="beta/sum/n:2", hang_from_run=1)
    fakebench.configure(binaries[0], exit=3)  # and another crashes at once
    settings = runner.RunSettings(repetitions=4, processes=2)
    with pytest.raises(runner.IncompleteRun) as caught:
        runner.run_suite(runner.plan(binaries, None), settings, keep_going=True)
    failed = caught.value
    assert "lost its CUDA context" in str(failed) and "(and 1 more failed process(es))" in str(
        failed
    )
    assert failed.no_result == tuple(A)  # beta has process 1's rows
    assert failed.partial is not None
    rows = failed.partial.document["benchmarks"]
    assert {row["run_name"] for row in rows} == set(B)
    assert {row.get("kernelwatch_process") for row in rows if row["run_type"] == "iteration"} == {1}


def test_a_gpu_lost_mid_run_keeps_what_was_measured(binaries: list[Path]) -> None:
    fakebench.configure(binaries[1], exit=4)  # alpha measured; then the GPU is gone
    with pytest.raises(runner.IncompleteRun, match="no CUDA GPU is visible") as caught:
        runner.run_suite(
            runner.plan(binaries, None), runner.RunSettings(repetitions=2), keep_going=True
        )
    assert caught.value.exit_status == 4 and caught.value.no_result == tuple(B)
    assert caught.value.partial is not None


def test_no_gpu_before_anything_was_measured_is_still_exit_4(binaries: list[Path]) -> None:
    fakebench.configure(binaries[0], exit=4)
    with pytest.raises(NoGpuError):
        runner.run_suite(
            runner.plan(binaries, None), runner.RunSettings(repetitions=2), keep_going=True
        )


def test_without_keep_going_the_first_failure_ends_the_run(binaries: list[Path]) -> None:
    fakebench.configure(binaries[0], hang="alpha/copy")
    with pytest.raises(BenchmarkCrashed) as caught:
        runner.run_suite(runner.plan(binaries, None), runner.RunSettings(repetitions=2))
    assert not isinstance(caught.value, runner.IncompleteRun)
    assert fakebench.runs(binaries[1]) == 0


def test_nothing_finished_leaves_no_partial_result(binaries: list[Path]) -> None:
    for binary in binaries:
        fakebench.configure(binary, signal="SIGSEGV")
    with pytest.raises(runner.IncompleteRun) as caught:
        runner.run_suite(
            runner.plan(binaries, None), runner.RunSettings(repetitions=2), keep_going=True
        )
    assert caught.value.partial is None
    assert caught.value.no_result == (*A, *B)


def test_process_timeout_kills_a_stalled_plain_binary_and_its_children(tmp_path: Path) -> None:
    plain = fakebench.make(tmp_path, "plain", A, counters=False, stall=True)
    other = fakebench.make(tmp_path, "other", B, counters=False)
    jobs = runner.plan([plain, other], None)
    assert not any(job.harness for job in jobs)
    settings = runner.RunSettings(repetitions=2, process_timeout=1.0)
    with pytest.raises(runner.IncompleteRun) as caught:
        runner.run_suite(jobs, settings, keep_going=True)
    assert re.search(
        r"plain: hung: did not finish in 1 s \(--process-timeout\), so its process group was "
        r"killed",
        str(caught.value),
    )
    assert caught.value.no_result == tuple(A)
    assert caught.value.partial is not None
    child = int(Path(f"{plain}.child").read_text())
    assert process_gone(child, within=2.5), "the binary's own child must be killed with it"


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_bad_process_timeout(seconds: float) -> None:
    with pytest.raises(InputError, match="--process-timeout .*: must be a positive number"):
        runner.RunSettings(process_timeout=seconds)


def test_refused_arguments(binaries: list[Path]) -> None:
    jobs = runner.plan(binaries, None)
    with pytest.raises(InputError, match="refused the arguments .exit status 2.: .*--nonsense"):
        runner.run_suite(jobs, runner.RunSettings(repetitions=2, extra_args=("--nonsense",)))


def test_rerun_jobs_select_flagged_names_per_binary(binaries: list[Path]) -> None:
    jobs = runner.plan(binaries, None)
    again = runner.rerun_jobs(jobs, ["beta/sum/n:2/manual_time", "alpha/copy(2)/manual_time"])
    assert [job.binary for job in again] == binaries
    assert again[0].filter == "^(alpha/copy\\(2\\)/manual_time)$"
    assert runner.plan([binaries[0]], again[0].filter)[0].names == ("alpha/copy(2)/manual_time",)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal(binaries: list[Path]) -> None:
    jobs = runner.plan(binaries, None)
    terminal = _Terminal()
    runner.run_suite(jobs, runner.RunSettings(repetitions=2), progress=runner.Progress(terminal))
    shown = terminal.getvalue()
    assert "[1/2] kernelwatch_bench_alpha: 2 benchmark(s); 0 of 4 done, 4 left" in shown
    assert "[2/2] kernelwatch_bench_beta: 2 benchmark(s); 2 of 4 done, 2 left" in shown
    assert "elapsed" in shown and shown.endswith("\r\033[K")
    pipe = io.StringIO()
    runner.run_suite(jobs, runner.RunSettings(repetitions=2), progress=runner.Progress(pipe))
    assert pipe.getvalue() == ""


def test_durations() -> None:
    assert format_duration(5.9) == "5s"
    assert format_duration(65) == "1m05s"
    assert format_duration(3725) == "1h02m"


# --- several processes per binary ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("repetitions", "processes", "shares"),
    [(10, 1, [10]), (10, 2, [5, 5]), (10, 3, [4, 3, 3]), (3, 3, [1, 1, 1])],
)
def test_repetitions_are_split_between_processes(repetitions, processes, shares) -> None:
    assert runner.RunSettings(repetitions=repetitions, processes=processes).split() == shares


def test_processes_are_interleaved_across_binaries_and_marked(
    binaries: list[Path], tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    for binary in binaries:
        fakebench.configure(binary, trace=str(trace))
    jobs = runner.plan(binaries, None)
    suite = runner.run_suite(jobs, runner.RunSettings(repetitions=5, processes=2))
    # alpha, beta, alpha, beta: a binary's two processes are apart in time
    assert trace.read_text().split() == [str(b) for b in binaries] * 2
    assert [c[1] for c in suite.commands] == ["--benchmark_repetitions=3"] * 2 + [
        "--benchmark_repetitions=2"
    ] * 2
    document = suite.document
    assert document["context"]["kernelwatch_processes"] == "2"
    assert document["context"]["kernelwatch_repetitions"] == "5"
    rows = [r for r in document["benchmarks"] if r["run_name"] == "beta/sum/n:1/manual_time"]
    assert [(r["kernelwatch_process"], r["repetition_index"]) for r in rows] == [
        (1, 0),
        (1, 1),
        (1, 2),
        (2, 3),
        (2, 4),
    ]
    assert {r["repetitions"] for r in rows} == {5}
    assert all(r["run_type"] == "iteration" for r in document["benchmarks"])  # no aggregates


def test_one_process_keeps_the_rows_as_written(binaries: list[Path]) -> None:
    suite = runner.run_suite(runner.plan(binaries[:1], None), runner.RunSettings(repetitions=3))
    kinds = [r["run_type"] for r in suite.document["benchmarks"]]
    assert kinds.count("aggregate") == 8  # mean, median, stddev, cv of each of two benchmarks
    iterations = [r for r in suite.document["benchmarks"] if r["run_type"] == "iteration"]
    assert {r["kernelwatch_process"] for r in iterations} == {1}
    assert [r["repetition_index"] for r in iterations][:3] == [0, 1, 2]


def test_processes_of_one_binary_must_share_the_gpu() -> None:
    first = {"context": {"gpu_uuid": "GPU-a"}, "benchmarks": []}
    other = {"context": {"gpu_uuid": "GPU-b"}, "benchmarks": []}
    with pytest.raises(InputError, match="process 2 ran on GPU-b, process 1 on GPU-a"):
        runner.join_processes(Path("bin"), [first, other])


# --- top-ups --------------------------------------------------------------------------------


def test_median_error_of_a_known_spread() -> None:
    # MAD 1 of a median 100: sigma 1.4826, its median's error over 9 values sqrt(pi/2) / 3 of it
    times = np.array([98.0, 99.0, 99.0, 100.0, 100.0, 100.0, 101.0, 101.0, 102.0])
    assert precision.median_error(times) == pytest.approx(1.2533 * 1.4826 / 3 / 100, rel=1e-3)
    assert np.isnan(precision.median_error(np.array([1.0, 2.0])))


def _document(rows: list[tuple[str, float, dict]]) -> dict:
    return {
        "context": {},
        "benchmarks": [
            {"run_name": name, "run_type": "iteration", "real_time": value, **extra}
            for name, value, extra in rows
        ],
    }


def test_imprecise_names_the_wide_and_leaves_out_host_bound_and_aggregates() -> None:
    wide = [90.0, 110.0, 95.0, 105.0, 100.0]
    tight = [100.0, 100.1, 99.9, 100.0, 100.05]
    document = _document(
        [("wide", v, {}) for v in wide]
        + [("tight", v, {}) for v in tight]
        + [("copy", v, {"host_bound": 1}) for v in wide]
        + [("tight", 1000.0, {"run_type": "aggregate"})]
    )
    aim = runner.RunSettings(precision=0.0025)
    assert precision.imprecise([document], aim) == ["wide"]
    # over two processes' outputs, the repetitions are pooled
    half = _document([("wide", v, {}) for v in wide[:2]])
    assert precision.imprecise([half], aim) == []  # fewer than 3: not known to be wide
    assert precision.imprecise([half, _document([("wide", 95.0, {})])], aim) == ["wide"]


def test_a_median_is_topped_up_to_the_precision_its_threshold_needs() -> None:
    """--precision is the target at the default threshold; a benchmark judged with a threshold
    k times looser needs its median k times less precisely, and none more precisely."""
    from kernelwatch.config import ThresholdRule

    rules = (
        ThresholdRule(re.compile("^loose/"), 0.10),
        ThresholdRule(re.compile("^tight/"), 0.005),
    )
    aim = runner.RunSettings(precision=0.0025, threshold=0.01, thresholds=rules)
    assert precision.target("loose/a", aim) == pytest.approx(0.025)
    assert precision.target("tight/a", aim) == 0.0025  # never tightened
    assert precision.target("other/a", aim) == 0.0025
    assert (
        precision.target("loose/a", runner.RunSettings(precision=0.0025, thresholds=rules))
        == 0.0025
    )
    spread = [99.0, 101.0, 99.5, 100.5, 100.0]  # its median known to 0.41 %
    rows = [(f"{family}/a", v, {}) for family in ("loose", "tight", "other") for v in spread]
    assert precision.imprecise([_document(rows)], aim) == ["tight/a", "other/a"]


def test_top_ups_rerun_only_the_imprecise_in_fresh_processes(
    binaries: list[Path], tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    noisy = "beta/sum/n:2/manual_time"
    for binary in binaries:
        fakebench.configure(binary, trace=str(trace), noisy={noisy: 20.0})
    settings = runner.RunSettings(repetitions=4, processes=2, precision=0.0025, top_ups=2)
    suite = runner.run_suite(runner.plan(binaries, None), settings)
    # both binaries' two processes, then beta's alone, twice: the noisy one stays imprecise
    assert trace.read_text().split() == [str(b) for b in binaries] * 2 + [str(binaries[1])] * 4
    assert [c for c in suite.commands[4:] if "--benchmark_filter" not in " ".join(c)] == []
    rows = [r for r in suite.document["benchmarks"] if r["run_name"] == noisy]
    assert [r["kernelwatch_process"] for r in rows] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    assert [r["repetition_index"] for r in rows] == list(range(12))
    assert {r["repetitions"] for r in rows} == {12}
    others = [r for r in suite.document["benchmarks"] if r["run_name"] != noisy]
    assert {r["kernelwatch_process"] for r in others} == {1, 2}
    assert {r["repetitions"] for r in others} == {4}
    context = suite.document["context"]
    assert context["kernelwatch_topped_up"] == [noisy]
    assert (context["kernelwatch_precision"], context["kernelwatch_top_ups"]) == ("0.0025", "2")


def test_no_top_up_when_every_median_is_precise(binaries: list[Path], tmp_path: Path) -> None:
    settings = runner.RunSettings(repetitions=4, processes=2, precision=0.0025, top_ups=2)
    suite = runner.run_suite(runner.plan(binaries, None), settings)
    assert len(suite.commands) == 4
    assert suite.document["context"]["kernelwatch_topped_up"] == []
    off = runner.run_suite(runner.plan(binaries, None), runner.RunSettings(repetitions=4))
    assert "kernelwatch_topped_up" not in off.document["context"]


def test_top_ups_of_a_real_run() -> None:
    """Card S's whole suite (H200): the benchmarks above 0.25 % after two processes of five
    repetitions were topped up to four or six processes; every other one that does not touch
    the host was within it."""
    path = GPU_DATA / "h200-suite-card-5e6217f4.json.gz"
    if not path.is_file():
        pytest.skip("no H200 card file")
    document = read_json(path)
    topped = set(document["context"]["kernelwatch_topped_up"])
    assert any(n.startswith("transpose/diagonal_rows/rows:8192/") for n in topped)
    rows: dict[str, list[dict]] = {}
    for row in document["benchmarks"]:
        rows.setdefault(row["run_name"], []).append(row)
    for name, mine in rows.items():
        processes = {r["kernelwatch_process"] for r in mine}
        first = np.array([r["real_time"] for r in mine if r["kernelwatch_process"] <= 2])
        if name in topped:
            assert processes in ({1, 2, 3, 4}, {1, 2, 3, 4, 5, 6})
            assert precision.median_error(first) > 0.0025
        else:
            assert processes == {1, 2}
            assert mine[0].get("host_bound") == 1 or precision.median_error(first) <= 0.0025
