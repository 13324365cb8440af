"""nvbench's JSON in (kernelwatch.nvbench): detection, names, context, sample files, commands.

Files: tests/data/nvbench/ (README.md there says where each came from). The files made on the
GPU machine by scripts/gpu/make_nvbench_data.sh are used when present; nvbench's own test files
(test_ref.json, test_cmp.json: summaries only, two GPUs) always.
"""

from __future__ import annotations

import copy
import json
import math
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REPO
from kernelwatch import gbench, nvbench, results
from kernelwatch.gbench import read_json
from kernelwatch.loading import load

DATA = REPO / "tests" / "data" / "nvbench"
REF, CMP = DATA / "test_ref.json", DATA / "test_cmp.json"
# Made on the GPU machine (scripts/gpu/make_nvbench_data.sh): A/A from two processes, and a run
# with one kernel slowed down.
GPU_A, GPU_B, GPU_SLOW = DATA / "py-a.json", DATA / "py-b.json", DATA / "py-slow.json"
CPP = DATA / "cpp.json"
needs_gpu_files = pytest.mark.skipif(
    not GPU_A.is_file(),
    reason="no nvbench files from the GPU machine yet (scripts/gpu/make_nvbench_data.sh)",
)


def one_device(path: Path, device: int = 0) -> dict[str, Any]:
    """nvbench's test file with only one device's states (as a one-GPU machine writes it)."""
    document = json.loads(path.read_text())
    document["devices"] = [d for d in document["devices"] if d["id"] == device]
    for b in document["benchmarks"]:
        b["states"] = [s for s in b["states"] if s["device"] == device]
    return document


def with_samples(
    tmp_path: Path,
    name: str,
    scale: dict[str, float],
    seed: int,
    cwd_prefix: str = "out",
    samples: int = 40,
) -> Path:
    """A one-device nvbench file whose states point at `--jsonbin` sample files (`samples` a
    state), named as nvbench names them when run from another folder
    (`out/<json>-bin/<n>.bin`)."""
    document = one_device(REF)
    document["benchmarks"] = document["benchmarks"][:2]
    rng = np.random.default_rng(seed)
    folder = tmp_path / f"{name}-bin"
    folder.mkdir(parents=True)
    n = 0
    for b in document["benchmarks"]:
        for s in b["states"]:
            summaries = {x["tag"]: x for x in s["summaries"]}
            mean = float(summaries["nv/cold/time/gpu/mean"]["data"][0]["value"])
            factor = scale.get(b["name"], 1.0)
            times = (mean * factor * (1 + 0.002 * rng.standard_normal(samples))).astype("<f4")
            times.tofile(folder / f"{n}.bin")
            s["summaries"].append(
                {
                    "tag": nvbench.SAMPLE_TIMES_TAG,
                    "name": "Samples Times File",
                    "hint": "file/sample_times",
                    "data": [
                        {
                            "name": "filename",
                            "type": "string",
                            "value": f"{cwd_prefix}/{name}-bin/{n}.bin",
                        },
                        {"name": "size", "type": "int64", "value": str(len(times))},
                    ],
                }
            )
            n += 1
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_detected_by_its_shape() -> None:
    document = json.loads(REF.read_text())
    assert gbench.is_nvbench(document)
    assert not gbench.is_nvbench({"context": {}, "benchmarks": []})
    assert not gbench.is_nvbench({"meta": {}, "devices": [], "benchmarks": [{"name": "x"}]})


def test_states_are_named_family_axis_values_and_device() -> None:
    result = load(REF)
    assert "simple/device:0" in result
    assert "copy_sweep_grid_shape/BlockSize:64/NumBlocks:1024/device:1" in result
    assert "copy_type_sweep/T:U8/device:0" in result
    # float64 axes without binary noise: 0.0003, not 0.00030000000000000003
    assert "single_float64_axis/Duration:0.0003/device:0" in result
    # is_skipped states are skipped, with nvbench's reason
    assert "copy_type_conversion_sweep/In:I8/Out:I8/device:0" in result.skipped


def test_summaries_only_are_aggregates_and_a_note_says_so(run_cli) -> None:
    result = load(REF)
    k = result.index["simple/device:0"]
    assert result.from_aggregates[k] and result.counts[k] == 1
    # the cold GPU mean of that state, 0.0010034715849794225 s
    assert result.columns["real_time"][result.starts[k]] == pytest.approx(1003471.5849794225)
    assert result.columns[results.NVBENCH_MEAN_KEY][result.starts[k]] == pytest.approx(
        1003471.5849794225
    )
    assert any("nvbench summaries only" in n and "--jsonbin" in n for n in result.notes)
    done = run_cli("compare", REF, CMP)
    assert done.status == 0, done.err
    assert "nvbench summaries only" in done.out
    assert "keep the repetitions in the JSON file" not in done.out


def _summary(state: dict[str, Any], tag: str) -> dict[str, Any]:
    return next(x for x in state["summaries"] if x["tag"] == tag)


def _scaled(document: dict[str, Any], benchmark: str, factor: float) -> dict[str, Any]:
    """nvbench's document with every cold GPU time of `benchmark`'s states times `factor`."""
    document = copy.deepcopy(document)
    for b in document["benchmarks"]:
        if b["name"] != benchmark:
            continue
        for state in b["states"]:
            for x in state["summaries"]:
                if x["tag"].startswith("nv/cold/time/gpu/") and "stdev/relative" not in x["tag"]:
                    value = x["data"][0]
                    value["value"] = str(float(value["value"]) * factor)
    return document


def test_summaries_are_judged_by_welch_and_every_output_says_so(tmp_path: Path, run_cli) -> None:
    """nvbench's own test files (summaries only) were UNSURE on all 88 rows; judged from each
    state's mean, noise and sample count they are SAME, each row marked, in every format."""
    done = run_cli("compare", REF, CMP, "--format", "json", "--junit", tmp_path / "j.xml")
    assert done.status == 0, done.err
    report = json.loads(done.out)
    assert report["summary"]["counts"]["SAME"] == 88
    assert report["summary"]["counts"]["UNSURE"] == 0
    rows = report["benchmarks"]
    assert all(r["from_summaries"] and r["reason"].startswith("from summaries") for r in rows)
    assert all(r["q_value"] is not None and r["ci_low"] < r["ci_high"] for r in rows)
    # the sides' n is the sample count, their value the mean the ratio is of
    row = next(r for r in rows if r["name"] == "simple/device:0")
    assert row["baseline"]["n"] == int(
        _summary(one_device(REF)["benchmarks"][0]["states"][0], "nv/cold/sample_size")["data"][0][
            "value"
        ]
    )
    assert row["ratio"] == pytest.approx(row["contender"]["median"] / row["baseline"]["median"])
    assert any("judged from summaries" in n and "Welch" in n for n in report["notes"])
    assert "from summaries" in (tmp_path / "j.xml").read_text()
    table = run_cli("compare", REF, CMP)
    assert "judged from summaries" in table.out
    assert all(
        "from summaries" in line for line in table.out.splitlines() if line.startswith("SAME ")
    )
    markdown = run_cli("compare", REF, CMP, "--format", "markdown")
    assert "from summaries" in markdown.out


def test_a_slowdown_seen_in_summaries_fails(tmp_path: Path, run_cli) -> None:
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(_scaled(json.loads(CMP.read_text()), "simple", 1.2)))
    done = run_cli("compare", REF, slow, "--format", "json")
    assert done.status == 1, done.out
    rows = {r["name"]: r for r in json.loads(done.out)["benchmarks"]}
    for device in (0, 1):
        row = rows[f"simple/device:{device}"]
        assert row["verdict"] == "REGRESSION" and row["failed"] and row["from_summaries"]
        assert row["change"] == pytest.approx(0.2, abs=0.01)
    assert {r["verdict"] for n, r in rows.items() if not n.startswith("simple/")} == {"SAME"}


def test_a_summary_without_a_noise_is_unverified_with_the_jsonbin_advice(
    tmp_path: Path, run_cli
) -> None:
    """nvbench writes an infinite noise where it had too few samples: read, not judged from
    summaries, with nvbench's advice; so is a state without the noise summary."""
    documents = []
    for path in (REF, CMP):
        document = one_device(path)
        states = document["benchmarks"][0]["states"]
        _summary(states[0], "nv/cold/time/gpu/stdev/relative")["data"][0]["value"] = "inf"
        documents.append(document)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(documents[0]))
    b.write_text(json.dumps(documents[1]))
    done = run_cli("compare", a, b)
    assert done.status == 0, done.err
    row = next(line for line in done.out.splitlines() if " simple " in line)
    assert row.endswith("nvbench summaries only (1 and 1 values; need 3): run it with --jsonbin")
    assert row.startswith("UNSURE")


def test_samples_against_summaries_are_judged_from_summaries(tmp_path: Path, run_cli) -> None:
    """One side with --jsonbin samples, the other without: the samples' mean, noise and count
    meet the other side's summary."""
    sampled = with_samples(tmp_path / "a", "r.json", {}, seed=1)
    summary = tmp_path / "s.json"
    summary.write_text(json.dumps(one_device(REF)))
    done = run_cli("compare", sampled, summary, "--format", "json")
    assert done.status == 0, done.out
    rows = {r["name"]: r for r in json.loads(done.out)["benchmarks"]}
    assert rows["simple"]["from_summaries"] and rows["simple"]["verdict"] == "SAME"
    assert rows["simple"]["baseline"]["n"] == 40


def test_summary_statistics_are_welchs_t_on_the_log_means() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    from kernelwatch import stats

    rng = np.random.default_rng(7)
    cases = 200
    b_mean, c_mean = rng.uniform(1, 2, cases), rng.uniform(1, 2, cases) * 1.0
    b_cv, c_cv = rng.uniform(1e-4, 0.05, cases), rng.uniform(1e-4, 0.05, cases)
    b_n, c_n = rng.integers(2, 5000, cases).astype(float), rng.integers(2, 5000, cases) * 1.0
    c_mean = b_mean * np.exp(rng.normal(0, 0.002, cases))
    got = stats.summary_statistics(b_mean, b_cv, b_n, c_mean, c_cv, c_n, 0.95)
    want = scipy_stats.ttest_ind_from_stats(
        np.log(c_mean), c_cv, c_n, np.log(b_mean), b_cv, b_n, equal_var=False
    )
    # the same t; degrees of freedom rounded down: never a smaller p-value
    assert np.all(got.p_value >= want.pvalue * (1 - 2e-2))
    assert got.p_value == pytest.approx(want.pvalue, rel=0.05, abs=1e-12)
    swapped = stats.summary_statistics(c_mean, c_cv, c_n, b_mean, b_cv, b_n, 0.95)
    assert np.array_equal(swapped.log_ratio, -got.log_ratio)
    assert np.allclose(swapped.log_ci_low, -got.log_ci_high)
    for t, df in [(2.0, 5), (3.0, 30), (5.0, 1000), (5.0, 1001), (8.0, 5000), (12.0, 3000)]:
        assert stats.t_two_sided_p(t, df) == pytest.approx(2 * scipy_stats.t.sf(t, df), rel=2e-2)


@needs_gpu_files
def test_gpu_files_without_their_samples_agree_with_their_samples(tmp_path: Path, run_cli) -> None:
    """The A/A pair and the slowed pair of the GPU machine, their sample files left out:
    the verdicts from summaries are those per sample (docs/compare.md, "nvbench-compare-robust")."""

    def stripped(path: Path) -> Path:
        document = json.loads(path.read_text())
        for b in document["benchmarks"]:
            for s in b["states"]:
                s["summaries"] = [x for x in s["summaries"] if "bin:" not in x["tag"]]
        out = tmp_path / path.name
        out.write_text(json.dumps(document))
        return out

    for pair in ((GPU_A, GPU_B), (GPU_A, GPU_SLOW)):
        verdicts = []
        for a, b in (pair, (stripped(pair[0]), stripped(pair[1]))):
            done = run_cli("compare", a, b, "--format", "json")
            verdicts.append(
                (done.status, {r["name"]: r["verdict"] for r in json.loads(done.out)["benchmarks"]})
            )
        assert verdicts[0] == verdicts[1]


def test_two_gpu_models_in_one_file_name_no_gpu() -> None:
    context = load(REF).context
    assert "gpu_name" not in context
    assert context["nvbench_devices"] == ["Quadro GP100", "Quadro GV100"]
    assert context["nvbench_version"] == "0.1.0" and context["nvbench_json_version"] == "1.0.0"


def test_device_description_becomes_the_context(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(one_device(REF)))
    result = load(path)
    assert "simple" in result and "simple/device:0" not in result
    context = result.context
    assert context["gpu_name"] == "Quadro GV100"
    assert context["gpu_compute_capability"] == "7.0"
    assert context["gpu_sm_count"] == 80
    assert context["gpu_sm_clock_khz"] == "1627000"
    assert context["gpu_memory_clock_khz"] == "850000"
    assert context["gpu_peak_bandwidth_bytes_per_second"] == 870400000000
    assert context["gpu_ecc"] == "off"


def test_a_file_of_one_device_against_one_of_two_says_why_nothing_is_shared(
    tmp_path: Path, run_cli
) -> None:
    """nvbench measures every GPU it sees: a baseline from a one-GPU machine against a run on a
    two-GPU one was all NEW and MISSING (the states of a file of several devices are named
    /device:<id>), with only "a rename?" to go by."""
    document = copy.deepcopy(one_device(GPU_A))
    second = copy.deepcopy(document["devices"][0])
    second["id"] = 1
    document["devices"].append(second)
    for b in document["benchmarks"]:
        b["states"] += [{**copy.deepcopy(s), "device": 1} for s in b["states"]]
    two = tmp_path / "two.json"
    two.write_text(json.dumps(document))
    done = run_cli("compare", GPU_A, two)
    assert done.status == 1 and "Nothing measured on both sides" in done.out
    assert "differ by /device:<id>" in done.out and "--devices" in done.out, done.out
    assert "/device:" not in run_cli("compare", GPU_A, GPU_A).out


def test_sample_files_become_repetitions(tmp_path: Path) -> None:
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    result = load(path)
    k = result.index["simple"]
    assert not result.from_aggregates[k] and result.counts[k] == 40
    samples = np.fromfile(tmp_path / "a.json-bin" / "0.bin", dtype="<f4")
    values = result.columns["real_time"][result.starts[k] : result.starts[k] + 40]
    assert values == pytest.approx(samples.astype(float) * 1e9)
    assert not result.notes
    assert result.context[results.NVBENCH_SAMPLES_KEY] == "sample files"


def test_a_missing_sample_file_falls_back_to_the_summary_with_a_note(
    tmp_path: Path,
) -> None:
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    os.unlink(tmp_path / "a.json-bin" / "0.bin")
    result = load(path)
    assert result.from_aggregates[result.index["simple"]]
    assert any("0.bin not found" in n for n in result.notes)


def sample_summary_edited(path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """`path` (an nvbench file of with_samples) with `edit` made to its first state's sample
    file summary (data: its filename, then its size)."""
    document = json.loads(path.read_text())
    summary = next(
        s
        for s in document["benchmarks"][0]["states"][0]["summaries"]
        if s["tag"] == nvbench.SAMPLE_TIMES_TAG
    )
    edit(summary)
    path.write_text(json.dumps(document))
    return path


def _naming(path: Path, filename: str) -> Path:
    """`path` (an nvbench file of with_samples) with its first state's sample file renamed."""
    return sample_summary_edited(path, lambda s: s["data"][0].update(value=filename))


def _secret(tmp_path: Path) -> Path:
    """A text file outside the nvbench file's folders whose length passes as float32 times."""
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"TOKEN=0123456789abcdef\n\n")  # 24 bytes: 6 "times", all positive
    assert len(np.fromfile(secret, dtype="<f4")) == 6 and (np.fromfile(secret, "<f4") > 0).all()
    return secret


@pytest.mark.parametrize("how", ["absolute", "dot-dot", "symlink out of -bin", "linked folder"])
def test_a_sample_file_outside_the_json_folders_is_refused(
    tmp_path: Path, run_cli, how: str
) -> None:
    """A sample file name may not read any other file of the machine into a result, a history
    or an export (issue #29): its real path must lie in the JSON file's folder or its -bin.
    """
    secret = _secret(tmp_path)
    path = with_samples(tmp_path / "j", "a.json", {}, seed=1)
    bin_folder = tmp_path / "j" / "a.json-bin"
    if how == "absolute":
        name = str(secret)
    elif how == "dot-dot":
        name = "../elsewhere/secret.txt"
    elif how == "symlink out of -bin":
        (bin_folder / "0.bin").unlink()
        (bin_folder / "0.bin").symlink_to(secret)
        name = "a.json-bin/0.bin"
    else:
        (tmp_path / "j" / "linked").symlink_to(secret.parent)
        name = "linked/secret.txt"
    _naming(path, name)
    db = tmp_path / "h.sqlite"
    for argv in (
        ["export", path, "--format", "bmf"],
        ["compare", path, path],
        ["history", "ingest", path, "--db", db],
    ):
        done = run_cli(*argv)
        assert done.status == 2 and done.out == "", done.out
        assert done.err.count("\n") == 1 and done.err.startswith("kernelwatch: error: ")
        assert f"sample file {name!r} is outside" in done.err and str(path) in done.err
    assert not db.exists()


def test_a_relative_sample_file_name_is_never_taken_from_the_current_folder(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = _secret(tmp_path)
    path = _naming(with_samples(tmp_path / "j", "a.json", {}, seed=1), "secret.txt")
    (tmp_path / "j" / "a.json-bin" / "0.bin").unlink()
    monkeypatch.chdir(secret.parent)  # where `secret.txt` resolves from the current folder
    result = load(path)
    k = result.index["simple"]
    assert result.from_aggregates[k]  # nvbench's summary, not the secret's bytes
    assert any("secret.txt not found" in n for n in result.notes)


def test_sample_files_where_nvbench_writes_them_are_read(tmp_path: Path) -> None:
    """As written from nvbench's working folder (`out/a.json-bin/0.bin`), as an absolute name
    (`--jsonbin /abs/a.json`), through a link inside the folder, and from a -bin folder that is
    itself a link to where the files are kept."""
    path = with_samples(tmp_path / "j", "a.json", {}, seed=1)
    assert load(path).counts[load(path).index["simple"]] == 40  # out/a.json-bin/0.bin
    for name in (
        str(tmp_path / "j" / "a.json-bin" / "0.bin"),
        "here.bin",
        "a.json-bin/0.bin",
    ):
        if name == "here.bin":
            (tmp_path / "j" / "here.bin").symlink_to(tmp_path / "j" / "a.json-bin" / "0.bin")
        result = load(_naming(path, name))
        assert result.counts[result.index["simple"]] == 40, name
    kept = tmp_path / "kept"
    (tmp_path / "j" / "a.json-bin").rename(kept)
    (tmp_path / "j" / "a.json-bin").symlink_to(kept)
    result = load(_naming(path, "a.json-bin/0.bin"))
    assert result.counts[result.index["simple"]] == 40


@pytest.mark.parametrize("kind", ["fifo", "directory", "device link"])
def test_a_sample_file_that_is_not_a_regular_file_is_one_line(
    tmp_path: Path, run_cli, kind: str
) -> None:
    path = with_samples(tmp_path / "j", "a.json", {}, seed=1)
    sample = tmp_path / "j" / "a.json-bin" / "0.bin"
    sample.unlink()
    if kind == "fifo":
        os.mkfifo(sample)  # a read would wait for a writer forever
    elif kind == "directory":
        sample.mkdir()
    else:
        sample.symlink_to("/dev/zero")  # never ends
    done = run_cli("export", path, "--format", "bmf")
    assert done.status == 2 and done.err.count("\n") == 1, done.err
    expected = "is outside" if kind == "device link" else "is not a regular file"
    assert expected in done.err, done.err


@pytest.mark.parametrize(
    "name, message",
    [("a" * 5000, "File name too long"), ("a\0b", "holds a NUL character")],
)
def test_an_impossible_sample_file_name_is_one_line(
    tmp_path: Path, run_cli, name: str, message: str
) -> None:
    path = _naming(with_samples(tmp_path, "a.json", {}, seed=1), name)
    done = run_cli("export", path, "--format", "bmf")
    assert done.status == 2 and done.err.count("\n") == 1 and message in done.err, done.err
    assert len(done.err) < 500  # the name is cut short


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "sm_default_clock_rate",
            math.nan,
            "sm_default_clock_rate is nan (not a finite number)",
        ),
        ("global_memory_bus_peak_clock_rate", math.inf, "is inf (not a finite number)"),
        ("name", ["Quadro GV100"], "device 0: name is not a string"),
        (
            "number_of_sms",
            {"sms": 80},
            "number_of_sms is {'sms': 80} (not a finite number)",
        ),
    ],
)
def test_a_malformed_device_description_is_one_line(
    tmp_path: Path, run_cli, key: str, value: Any, message: str
) -> None:
    document = one_device(REF)
    document["devices"][0][key] = value
    path = tmp_path / "d.json"
    path.write_text(json.dumps(document))  # (NaN and Infinity as json writes them)
    for argv in (
        ["compare", path, path],
        ["history", "ingest", path, "--db", tmp_path / "h"],
    ):
        done = run_cli(*argv)
        assert done.status == 2 and done.err.count("\n") == 1 and message in done.err, done.err


def test_a_slowed_kernel_is_a_regression_per_sample(tmp_path: Path, run_cli) -> None:
    a = with_samples(tmp_path / "a", "r.json", {}, seed=1)
    b = with_samples(tmp_path / "b", "r.json", {}, seed=2)
    slow = with_samples(tmp_path / "s", "r.json", {"simple": 1.2}, seed=3)
    same = run_cli("compare", a, b)
    assert same.status == 0, same.out + same.err
    slowed = run_cli("compare", a, slow)
    assert slowed.status == 1, slowed.out
    regressions = [
        line.split()[1] for line in slowed.out.splitlines() if line.startswith("REGRESSION")
    ]
    assert regressions == ["simple"], slowed.out


def test_states_of_tens_of_thousands_of_samples_are_compared(tmp_path: Path, run_cli) -> None:
    """nvbench keeps sampling a short kernel until its noise settles: its own test file has
    states of up to 153,037 samples, all of them in a --jsonbin file. Twelve states of 30,000
    samples a side were an internal error (all 9e8 differences of each pair at once: "Unable to
    allocate 80.5 GiB"); now the interval is found without them (stats.PAIRS_AT_ONCE)."""
    a = with_samples(tmp_path / "a", "r.json", {}, seed=1, samples=30_000)
    slow = with_samples(tmp_path / "s", "r.json", {"simple": 1.2}, seed=3, samples=30_000)
    slowed = run_cli("compare", a, slow)
    assert slowed.status == 1, slowed.out + slowed.err
    verdicts = {line.split()[1]: line.split()[0] for line in slowed.out.splitlines()[5:] if line}
    assert verdicts["simple"] == "REGRESSION", slowed.out
    assert list(verdicts.values()).count("SAME") == 11, slowed.out


def test_bad_nvbench_input_is_one_line(tmp_path: Path, run_cli) -> None:
    document = one_device(REF)
    document["meta"]["version"]["json"]["string"] = "2.0.0"
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(document))
    done = run_cli("compare", path, path)
    assert done.status == 2 and "JSON format 2.0.0" in done.err and "Traceback" not in done.err
    broken = copy.deepcopy(one_device(REF))
    for value in ("nan", "-1.5e-05"):  # (a time, as every summary read, is a number >= 0)
        broken["benchmarks"][0]["states"][0]["summaries"][3]["data"][0]["value"] = value
        path.write_text(json.dumps(broken))
        done = run_cli("compare", path, path)
        assert done.status == 2 and "nv/cold/time/gpu/mean" in done.err, done.err
        assert "(not a finite number >= 0)" in done.err


def _states_five(d: dict[str, Any]) -> None:
    d["benchmarks"][0]["states"] = 5


def _axes_five(d: dict[str, Any]) -> None:
    d["benchmarks"][0]["states"][0]["axis_values"] = 5


def _data_five(d: dict[str, Any]) -> None:
    for summary in d["benchmarks"][0]["states"][0]["summaries"]:
        summary["data"] = 5


def _device_list(d: dict[str, Any]) -> None:
    d["devices"][0]["id"] = [0]
    d["benchmarks"][0]["states"][0]["device"] = {"id": 0}


def _device_text(d: dict[str, Any]) -> None:
    d["benchmarks"][0]["states"][0]["device"] = "x"


def _summaries_text(d: dict[str, Any]) -> None:
    d["benchmarks"][0]["states"][0]["summaries"] = "x"


def _skipped_text(d: dict[str, Any]) -> None:
    d["benchmarks"][0]["states"][0]["is_skipped"] = "false"


@pytest.mark.parametrize(
    "damage, message",
    [
        (_states_five, "nvbench: simple: states is not a list"),
        (_axes_five, "axis_values is not a list"),
        (_data_five, None),  # no summary with data: a skipped row, no error
        # (these read as other benchmarks, or as skipped ones: MISSING rows and exit 1)
        (_device_list, "a state's device is not a device id"),
        (_device_text, "a state's device is not a device id"),
        (_summaries_text, "a state's summaries is not a list"),
        # ("false" read as true: a measured state skipped; compare failed it as MISSING)
        (_skipped_text, "a state's is_skipped is 'false'"),
    ],
)
def test_malformed_nvbench_structures_are_one_line(
    tmp_path: Path, run_cli, damage: Any, message: str | None
) -> None:
    document = one_device(REF)
    damage(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    for argv in (["compare", path, path], ["export", path, "--format", "bmf"]):
        done = run_cli(*argv)
        assert "Traceback" not in done.err and "internal error" not in done.err, done.err
        if message is not None:
            assert done.status == 2 and message in done.err and done.err.count("\n") == 1


def test_baseline_update_and_history_ingest_take_nvbench(tmp_path: Path, run_cli) -> None:
    a = with_samples(tmp_path / "a", "r.json", {}, seed=1)
    (tmp_path / "baselines").mkdir()
    done = run_cli("baseline", "update", a, "--baselines", tmp_path / "baselines")
    assert done.status == 0, done.err
    stored = tmp_path / "baselines" / "quadro-gv100-sm70" / "result.json"
    assert stored.is_file(), list((tmp_path / "baselines").iterdir())
    assert "simple" in load(stored)
    db = tmp_path / "h.sqlite"
    done = run_cli("history", "ingest", a, "--db", db)
    assert done.status == 0, done.err
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT gpu_name FROM runs").fetchall() == [("Quadro GV100",)]


@pytest.mark.parametrize(
    "argv",
    [[], ["compare"], ["history", "ingest"], ["baseline", "update"], ["export"]],
    ids=lambda argv: " ".join(argv) or "kernelwatch",
)
def test_the_help_of_commands_that_read_nvbench_says_so(run_cli, argv: list[str]) -> None:
    """compare's and history ingest's said "Google Benchmark" only (issue #29)."""
    out = " ".join(run_cli(*argv, "--help").out.split())  # (lines joined: argparse wraps)
    assert "nvbench" in out and "Google Benchmark" in out, out


def test_read_json_is_where_the_format_is_told_apart(tmp_path: Path) -> None:
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    document = read_json(path)
    assert set(document) == {"context", "benchmarks"}
    assert document["benchmarks"][0]["run_name"] == "simple"


@needs_gpu_files
def test_gpu_files_a_a_passes_and_a_slowed_kernel_fails(run_cli) -> None:
    same = run_cli("compare", GPU_A, GPU_B)
    assert same.status == 0, same.out
    slowed = run_cli("compare", GPU_A, GPU_SLOW)
    assert slowed.status == 1, slowed.out
    regressions = [line for line in slowed.out.splitlines() if line.startswith("REGRESSION")]
    assert regressions and all("slowed" in line for line in regressions), slowed.out
    context = load(GPU_A).context
    assert context["gpu_name"] and context["gpu_compute_capability"]
    assert context[results.NVBENCH_SAMPLES_KEY] == "sample files"


@needs_gpu_files
def test_gpu_files_go_into_baselines_history_and_report(tmp_path: Path, run_cli) -> None:
    for path in (GPU_A, CPP):
        (tmp_path / "b" / path.stem).mkdir(parents=True)
        done = run_cli("baseline", "update", path, "--baselines", tmp_path / "b" / path.stem)
        assert done.status == 0, done.err
        done = run_cli("history", "ingest", path, "--db", tmp_path / "h.sqlite")
        assert done.status == 0, done.err
    pytest.importorskip("matplotlib")
    done = run_cli(
        "report",
        GPU_B,
        "-o",
        tmp_path / "r.html",
        "--baseline",
        GPU_A,
        "--db",
        tmp_path / "h.sqlite",
    )
    assert done.status == 0, done.err


@needs_gpu_files
def test_baseline_show_of_an_nvbench_baseline_says_unknown_not_none(
    tmp_path: Path, run_cli
) -> None:
    # nvbench records no commit, date, driver or build: the manifest holds null for them, which
    # `baseline show` printed as "None".
    (tmp_path / "b").mkdir()
    assert run_cli("baseline", "update", GPU_A, GPU_B, "--baselines", tmp_path / "b").status == 0
    done = run_cli("baseline", "show", GPU_A, "--baselines", tmp_path / "b")
    assert done.status == 0, done.err
    assert "None" not in done.out, done.out
    assert "  commit        unknown" in done.out and "  driver        unknown" in done.out


def test_a_stamped_file_names_its_commit_date_and_card(tmp_path: Path, run_cli) -> None:
    """nvbench records no commit, date or card UUID; a file stamped with them after the run
    (examples/nvbench/stamp.py: `meta.context`, `devices[].uuid`) gives them to the baseline's
    manifest, the history and the levels (the same card, not 'another host')."""
    runs = []
    for n in (1, 2):
        path = with_samples(tmp_path / str(n), "r.json", {}, seed=n)
        document = json.loads(path.read_text())
        document["meta"]["context"] = {
            "kernelwatch_git_commit": "0123456789abcdef0123456789abcdef01234567",
            "date": f"2026-11-28T08:0{n}:00+00:00",
            "nvbench_version": "forged",  # nvbench's own keys keep its value
        }
        document["devices"][0]["uuid"] = "GPU-00000000-1111-2222-3333-444444444444"
        path.write_text(json.dumps(document))
        runs.append(path)
    context = load(runs[0]).context
    assert context["kernelwatch_git_commit"].startswith("0123456789")
    assert context["gpu_uuid"] == "GPU-00000000-1111-2222-3333-444444444444"
    assert context["date"] == "2026-11-28T08:01:00+00:00"
    assert context["nvbench_version"] == "0.1.0"
    (tmp_path / "b").mkdir()
    assert run_cli("baseline", "update", *runs, "--baselines", tmp_path / "b").status == 0
    manifest = json.loads((tmp_path / "b" / "quadro-gv100-sm70" / "manifest.json").read_text())
    assert manifest["commit"].startswith("0123456789") and manifest["date"]
    done = run_cli("compare", tmp_path / "b" / "quadro-gv100-sm70" / "result.json", runs[1])
    assert "level: process (same card (GPU-00000000" in done.err + done.out, done.out
    assert run_cli("history", "ingest", runs[0], "--db", tmp_path / "h.sqlite").status == 0
    with sqlite3.connect(tmp_path / "h.sqlite") as connection:
        assert connection.execute("SELECT git_commit FROM runs").fetchall() == [
            ("0123456789abcdef0123456789abcdef01234567",)
        ]


@pytest.mark.parametrize("stamp", [["a list"], {"kernelwatch_git_commit": 12}])
def test_a_malformed_stamp_is_one_line(tmp_path: Path, run_cli, stamp: Any) -> None:
    document = one_device(REF)
    document["meta"]["context"] = stamp
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    done = run_cli("compare", path, path)
    assert done.status == 2 and "meta.context is not an object of strings" in done.err
    assert done.err.count("\n") == 1, done.err
