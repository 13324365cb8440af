"""Malformed nvbench input (kernelwatch.nvbench): summaries of the wrong type or size, sample
files that do not say how many times they hold, or hold far more: one line and exit 2, or a
documented reading (nvbench's summary, with a note), never a wrong number read silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_module
from kernelwatch import nvbench
from kernelwatch.loading import load
from test_hardening import memory_limit
from test_nvbench import REF, _naming, one_device, sample_summary_edited, with_samples

MEAN = "nv/cold/time/gpu/mean"


def _with_summary(tmp_path: Path, tag: str, value: Any) -> Path:
    """nvbench's one-device test file with the first state's summary `tag` set to `value`."""
    document = one_device(REF)
    summary = next(
        s for s in document["benchmarks"][0]["states"][0]["summaries"] if s["tag"] == tag
    )
    summary["data"][0]["value"] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    "tag, value, message",
    [
        # true was float(True), a cold GPU time of 1 s: a REGRESSION of +99,600 % (exit 1)
        (MEAN, True, "is True (not a finite number >= 0)"),
        ("nv/cold/time/gpu/stdev/relative", False, "is False (not a finite number >= 0)"),
        ("nv/cold/sample_size", True, "is True (not a whole number of samples)"),
        # an integer beyond float's range was an internal error (OverflowError)
        (MEAN, 10**400, "is 1000000"),
    ],
    ids=["time true", "noise false", "count true", "time 1e400"],
)
def test_a_summary_that_is_no_number_is_one_line(
    tmp_path: Path, run_cli, tag: str, value: Any, message: str
) -> None:
    path = _with_summary(tmp_path, tag, value)
    for argv in (["compare", REF, path], ["export", path, "--format", "bmf"]):
        done = run_cli(*argv)
        assert done.status == 2 and done.err.count("\n") == 1, done.err
        assert f"simple: {tag} {message}" in done.err
        assert len(done.err) < 500  # (the number cut short)


@pytest.mark.parametrize("value", ["2.5", "1e300", "1e19"])
def test_a_sample_count_that_is_no_count_is_one_line(tmp_path: Path, run_cli, value: str) -> None:
    """1e300 was an internal error (OverflowError) in compare, 1e19 an int64 overflow in its
    table, 2.5 taken as 2.5 samples."""
    path = _with_summary(tmp_path, "nv/cold/sample_size", value)
    done = run_cli("compare", REF, path)
    assert done.status == 2 and done.err.count("\n") == 1, done.err
    assert f"nv/cold/sample_size is '{value}' (not a whole number of samples)" in done.err


def _without_size(path: Path) -> Path:
    """`path` (an nvbench file of with_samples) with its first sample file's size left out."""

    def drop_size(summary: dict[str, Any]) -> None:
        summary["data"] = [d for d in summary["data"] if d["name"] != "size"]

    return sample_summary_edited(path, drop_size)


def test_a_sample_file_of_no_size_is_not_read(tmp_path: Path) -> None:
    """nvbench always writes the count beside the name: the only check that the file is the
    state's. Without it, any file of the folder whose length is a multiple of 4 (the JSON file
    itself: 8,117 "times" of 7e31 ns) was read as the state's samples."""
    path = _without_size(_naming(with_samples(tmp_path, "a.json", {}, seed=1), "a.json"))
    result = load(path)
    k = result.index["simple"]
    assert result.from_aggregates[k] and result.counts[k] == 1  # nvbench's summary
    assert any("a.json: the sample file has no count of times" in n for n in result.notes)


@pytest.mark.parametrize("size", ["40.0", "-1", "abc"])
def test_a_sample_file_of_a_size_that_is_no_count_is_not_read(tmp_path: Path, size: str) -> None:
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    sample_summary_edited(path, lambda s: s["data"][1].update(value=size))
    result = load(path)
    assert result.from_aggregates[result.index["simple"]]
    assert any("the sample file has no count of times" in n for n in result.notes), result.notes


@pytest.mark.parametrize(
    "data, seen",
    [(b"", "0 bytes"), (b"\x00" * 158, "158 bytes"), (b"\x00" * 164, "more than 160 bytes")],
)
def test_a_sample_file_of_another_length_falls_back_to_the_summary(
    tmp_path: Path, data: bytes, seen: str
) -> None:
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    (tmp_path / "a.json-bin" / "0.bin").write_bytes(data)
    result = load(path)
    assert result.from_aggregates[result.index["simple"]]
    assert any(f"0.bin holds {seen}, not 40 float32 times" in n for n in result.notes)


def test_a_huge_sample_file_is_not_read(tmp_path: Path) -> None:
    """A sample file of 8 GiB where the JSON says 40 times was read whole (then converted):
    an internal MemoryError, or the machine's memory. Now its length is checked first."""
    path = with_samples(tmp_path, "a.json", {}, seed=1)
    with open(tmp_path / "a.json-bin" / "0.bin", "r+b") as sample:
        sample.truncate(8 << 30)  # (sparse: no disk used)
    done = run_module("compare", path, path, timeout=120, preexec_fn=memory_limit(4 << 30))
    assert done.returncode == 0, done.stderr
    assert "0.bin holds more than 160 bytes, not 40 float32 times" in done.stdout


@pytest.mark.parametrize("reason", [{"why": "no"}, ["a", "b"], 7, "", None])
def test_a_skip_reason_that_is_no_text_is_nvbench_s_word(tmp_path: Path, reason: Any) -> None:
    """A skipped state's reason is shown in compare's table and the reports: a list or an
    object there was shown as Python writes it."""
    document = one_device(REF)
    state = document["benchmarks"][0]["states"][0]
    state.update(is_skipped=True, skip_reason=reason)
    rows = nvbench.as_google_benchmark(document, tmp_path / "skipped.json")["benchmarks"]
    assert rows[0]["skipped"] and rows[0]["skip_message"] == "skipped by nvbench"
