"""The noise model's input as a demanding user and a fuzzer give it (levels.py, noise.py,
config.py, loading.py, completeness.py): the level a comparison crosses when a context leaves
something out or is a pooled result, and a damaged noise.json, --config or partial result."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import GPU_DATA, REPO, run_module
from kernelwatch import levels
from kernelwatch.levels import Level

H200_BASELINE = REPO / "baselines" / "nvidia-h200-sm90"
H200_RUN = GPU_DATA / "h200-card-d9675f7b-plain" / "plain.json.gz"
# A run on the card of the H200 baseline's first pooled run (its pooled context is that run's).
H200_FIRST_CARD = GPU_DATA / "h200-x2-card-59b384ea-plain-61b6fec" / "plain-gpu0.json.gz"
CONFIG = {"host_cpu_model": "Xeon", "host_cpu_cores": "16", "host_gpu_count": "1"}


def where(card: str | None, host: str | None = None, **config: str) -> dict[str, Any]:
    """A context on card `card` (None: not named) of the host whose GPUs are `host`."""
    context: dict[str, Any] = {**CONFIG, **config, "gpu_name": "NVIDIA H200"}
    if card is not None:
        context["gpu_uuid"] = card
        context["host_gpu_uuids"] = host or card
    return context


def pooled(*contexts: dict[str, Any]) -> dict[str, Any]:
    """A pooled baseline's context (baseline/pool.py): the first run's, and every run listed."""
    runs = [
        {**levels.unit_of(c).as_dict(), "processes": [i + 1], "host_gpu_count": c["host_gpu_count"]}
        for i, c in enumerate(contexts)
    ]
    return {**contexts[0], levels.RUNS_KEY: runs}


def limits(out: Path) -> dict[str, float]:
    """Each benchmark's upper limit in a `compare --json` report."""
    report = json.loads(out.read_text())
    return {c["name"]: c["limit"] for c in report["benchmarks"] if c.get("limit") is not None}


# --- the level a comparison crosses -----------------------------------------------------------


def test_a_host_configured_otherwise_is_said_when_the_card_or_host_is_not_named() -> None:
    """A contender whose host is configured unlike every host of the baseline is held to at least
    the host prior. When its context did not name its card (or its host), the crossing said
    nothing of the configuration: knowing less, it was judged more sharply (a 130 us copy of the
    H200 baseline: a limit of 1.1 % instead of 5.2 %)."""
    baseline = where("GPU-a")
    other = {"gpu_power_limit_w": "500"}
    assert levels.crossing(baseline, where("GPU-b", **other)).other_config
    assert levels.crossing(baseline, where(None, **other)).other_config
    no_host = {**where("GPU-b", **other), "host_gpu_uuids": ""}
    assert levels.crossing(baseline, no_host).level is Level.HOST
    assert levels.crossing(baseline, no_host).other_config
    assert not levels.crossing(baseline, where(None)).other_config


def test_a_pooled_contender_crosses_the_widest_level_of_its_runs() -> None:
    """A pooled baseline given as CONTENDER (its context is its first run's) against a run on that
    first run's card was taken as the same card, the process level, though it pools runs of
    other cards and hosts; and as a one-GPU host when its first run was one."""
    first, second = where("GPU-a"), where("GPU-b", host_gpu_count="2")
    contender = pooled(first, second)
    found = levels.crossing(first, contender)
    assert found.level is Level.HOST
    assert not found.one_gpu_hosts
    # a pool of runs on the baseline's own card is still that card
    assert levels.crossing(first, pooled(first, first)).level is Level.PROCESS
    # two cards of the baseline's one host: the card level
    host = "GPU-a,GPU-b"
    one, two = where("GPU-a", host), where("GPU-b", host)
    assert levels.crossing(one, pooled(one, two)).level is Level.CARD


def _without_card(tmp_path: Path, **changes: Any) -> tuple[Path, Path]:
    document = json.loads(gzip.decompress(H200_RUN.read_bytes()))
    document["context"].update(changes)
    named = tmp_path / "named.json"
    named.write_text(json.dumps(document))
    del document["context"]["gpu_uuid"]
    unnamed = tmp_path / "unnamed.json"
    unnamed.write_text(json.dumps(document))
    return named, unnamed


def test_compare_holds_a_run_without_its_card_on_another_configuration_to_the_host_prior(
    tmp_path: Path,
) -> None:
    named, unnamed = _without_card(tmp_path, gpu_power_limit_w="500")
    found = {}
    for path in (named, unnamed):
        out = tmp_path / f"{path.stem}.report.json"
        done = run_module("compare", "--json", out, H200_BASELINE, path)
        assert done.returncode == 0, done.stderr
        assert "configured unlike every host" in done.stdout
        found[path.stem] = limits(out)
    name = "coalescing/memcpy_d2d/manual_time"
    assert found["unnamed"][name] == pytest.approx(found["named"][name])
    assert found["unnamed"][name] > 0.04


def test_compare_of_a_run_with_a_pooled_baseline_as_contender_crosses_hosts(
    tmp_path: Path,
) -> None:
    """One run on the first card of the H200 baseline against the baseline (19 cards of 13
    hosts): 'level: process (same card)', and `local_array`, which is 2-4 % apart between cards
    of one kind, failed as two REGRESSIONs (exit 1)."""
    done = run_module("compare", H200_FIRST_CARD, H200_BASELINE)
    assert "level: process" not in done.stdout
    assert "level: host" in done.stdout
    assert done.returncode == 0, done.stdout[-3000:]


# --- a damaged noise.json -----------------------------------------------------------------------


def _noise_file(tmp_path: Path, change: Any) -> Path:
    """The H200 baseline's folder in `tmp_path`, its noise.json as `change` leaves it."""
    folder = tmp_path / "baselines" / H200_BASELINE.name
    folder.mkdir(parents=True)
    for name in ("manifest.json", "result.json.gz"):
        (folder / name).symlink_to(H200_BASELINE / name)
    document = json.loads((H200_BASELINE / "noise.json").read_text())
    change(document)
    (folder / "noise.json").write_text(json.dumps(document))
    return folder


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(cards="many"), "cards must be a number"),
        (lambda d: d.update(hosts=-3), "hosts -3 is not a count"),
        (lambda d: d.update(kind_units=2.5), "kind_units 2.5 is not a count"),
        (lambda d: d.update(schema_version=True), "not a kernelwatch noise file"),
    ],
)
def test_a_noise_file_s_own_counts_are_checked(tmp_path: Path, change: Any, said: str) -> None:
    """`baseline show` printed "card: measured (many cards)" from a damaged noise.json, exit 0."""
    folder = _noise_file(tmp_path, change)
    done = run_module("baseline", "show", "--baselines", folder.parent, folder.name)
    assert done.returncode == 2, done.stdout[-2000:]
    assert said in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_long_name_or_value_of_a_noise_file_is_cut_in_the_line(tmp_path: Path) -> None:
    """A 200,000-character benchmark name with a bad value: the error line held it whole."""
    name = "x" * 200_000

    def damage(document: dict[str, Any]) -> None:
        document["benchmarks"][name] = {"noise": 10**300}

    folder = _noise_file(tmp_path, damage)
    done = run_module("compare", folder, H200_RUN)
    assert done.returncode == 2
    assert "out of range" in done.stderr and "(200,000 characters)" in done.stderr
    assert len(done.stderr) < 1000 and len(done.stderr.splitlines()) == 1


# --- a partial result ---------------------------------------------------------------------------


def test_a_partial_result_s_failure_line_stays_one_line(tmp_path: Path) -> None:
    """The failure line of a partial result's context is printed in a warning and in every
    crashed row: a line break in it split the warning on stderr, an escape sequence acted on
    the terminal, and a long one was repeated whole in each row."""
    document = json.loads(gzip.decompress(H200_RUN.read_bytes()))
    gone = "coalescing/memcpy_d2d/manual_time"
    document["benchmarks"] = [
        b for b in document["benchmarks"] if b.get("run_name", b["name"]) != gone
    ]
    document["context"]["kernelwatch_failed_processes"] = [
        "first line\nsecond line \x1b[31mred " + "x" * 5000
    ]
    document["context"]["kernelwatch_no_result"] = [gone]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(document))
    done = run_module("compare", H200_BASELINE, partial)
    assert done.returncode == 1
    warnings = [line for line in done.stderr.splitlines() if "partial result" in line]
    assert len(done.stderr.splitlines()) == 1 and len(warnings) == 1
    assert "first line second line \\x1b[31mred" in warnings[0]
    assert "\x1b" not in done.stderr and len(warnings[0]) < 1000
    row = next(line for line in done.stdout.splitlines() if gone in line)
    assert "crashed:" in row and len(row) < 1000
