"""Classes of host (levels.HostClass): a run is judged against a pooled baseline centred on the
baseline's hosts of its own class (one GPU, or several), with the spread between hosts measured
within a class (noise.to_host_class, compare._of_host_class). On the H200 pool, the multi-GPU
hosts time short kernels 0.6-0.7 us a launch slower than the one-GPU hosts, while the hosts of
one class agree within about 1 %."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import GPU_DATA, run_module
from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch.levels import HostClass
from kernelwatch.loading import load
from test_kinds_input import H200_BASELINE, pool_of

ONE_GPU_CARDS = ("GPU-8dcbdf20", "GPU-c988b068", "GPU-12f809f7", "GPU-91844ef6")
# GPUs of three multi-GPU hosts (two two-GPU hosts, GPU 0 of a four-GPU one).
MULTI_GPU_CARDS = ("GPU-59b384ea", "GPU-e0122269", "GPU-7f7c6807", "GPU-6aab3983", "GPU-9835c3c8")
# Neither card's host is in the pool above: GPU-dc1b78b6 is GPU 1 of a two-GPU host.
MULTI_GPU_RUN = GPU_DATA / "h200-x2-card-462d5a41-marked-plain" / "plain-gpu1.json.gz"
ONE_GPU_RUN = GPU_DATA / "h200-card-5a0b92fa-marked-plain" / "plain.json.gz"
SHORT = "transpose/best/rows:2048/cols:2048/manual_time"  # 13.5 us on one GPU, 14.3 on several
NOTE = "centred on the baseline's {} hosts, like this one"  # (count, class)

needs_data = pytest.mark.skipif(
    not all(p.is_file() for p in (H200_BASELINE, MULTI_GPU_RUN, ONE_GPU_RUN)),
    reason="no H200 baseline or runs",
)


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        ("1", HostClass.ONE_GPU),
        (" 1 ", HostClass.ONE_GPU),
        (1, HostClass.ONE_GPU),
        ("2", HostClass.MULTI_GPU),
        ("8", HostClass.MULTI_GPU),
        ("0", None),
        ("", None),
        ("unknown", None),
        (None, None),
        ("1.5", None),
        ("-1", None),
        ("\u00b2", None),
        (True, None),
    ],
)
def test_the_class_of_a_host_is_read_from_its_gpu_count(count: Any, expected: Any) -> None:
    assert levels.host_class(count) is expected


def test_a_result_of_hosts_of_two_classes_has_no_class() -> None:
    runs = [
        {"card": "a", "host": "h1", "config": None, "processes": [1], "host_gpu_count": "1"},
        {"card": "b", "host": "h2", "config": None, "processes": [2], "host_gpu_count": "2"},
    ]
    assert levels.contender_class({"host_gpu_count": "2"}) is HostClass.MULTI_GPU
    assert levels.contender_class({levels.RUNS_KEY: runs}) is None
    assert levels.contender_class({levels.RUNS_KEY: runs[:1]}) is HostClass.ONE_GPU
    assert levels.contender_class({}) is None


def test_the_hosts_of_a_pool_are_counted_per_class_once_each() -> None:
    """Two GPUs of one host are one host; a count not recorded is a class of its own (None)."""
    runs = [
        {"card": "a", "host": "h1", "config": None, "processes": [1], "host_gpu_count": "2"},
        {"card": "b", "host": "h1", "config": None, "processes": [2], "host_gpu_count": "2"},
        {"card": "c", "host": "h2", "config": None, "processes": [3], "host_gpu_count": "1"},
        {"card": "d", "host": "h3", "config": None, "processes": [4]},
    ]
    assert levels.hosts_per_class({levels.RUNS_KEY: runs}) == {
        HostClass.MULTI_GPU: 1,
        HostClass.ONE_GPU: 1,
        None: 1,
    }
    assert levels.hosts_per_class({"host_gpu_count": "1"}) == {}


def host_means(result: Any, name: str) -> dict[HostClass, float]:
    """The geometric mean over each class's hosts of the hosts' mean run median of `name`."""
    run_of, _, hosts = noises.row_units(result)
    classes = [levels.host_class(r["host_gpu_count"]) for r in result.context[levels.RUNS_KEY]]
    k = result.index[name]
    rows = slice(result.starts[k], result.starts[k] + result.counts[k])
    values, runs = result.columns["real_time"][rows], run_of[result.processes[rows]]
    per_host: dict[str, list[float]] = {}
    for run in set(runs.tolist()):
        per_host.setdefault(hosts[run], []).append(np.log(np.median(values[runs == run])))
    out: dict[HostClass, list[float]] = {}
    for host, logs in per_host.items():
        out.setdefault(classes[hosts.index(host)], []).append(float(np.mean(logs)))
    return {c: float(np.exp(np.mean(v))) for c, v in out.items()}


@needs_data
def test_a_pool_centred_on_a_class_takes_that_class_s_means(tmp_path: Path) -> None:
    """The other class's runs are scaled so that both classes' means are the wanted one's; the
    wanted class's own values are untouched."""
    pool = load(str(pool_of(ONE_GPU_CARDS + MULTI_GPU_CARDS, (), tmp_path / "pool")))
    before = host_means(pool, SHORT)
    assert before[HostClass.MULTI_GPU] / before[HostClass.ONE_GPU] > 1.04  # the finding
    for wanted in HostClass:
        shifted = noises.to_host_class(pool, noises.TIME, wanted)
        assert shifted is not None
        after = host_means(shifted, SHORT)
        assert after[HostClass.ONE_GPU] == pytest.approx(before[wanted], rel=1e-9)
        assert after[HostClass.MULTI_GPU] == pytest.approx(before[wanted], rel=1e-9)
        # centred again, nothing moves
        again = noises.to_host_class(shifted, noises.TIME, wanted)
        assert again is not None
        assert np.allclose(again.columns["real_time"], shifted.columns["real_time"], rtol=1e-12)


@needs_data
def test_a_pool_is_not_centred_where_a_class_cannot_be_told(tmp_path: Path) -> None:
    """One class only, or a run whose host's class is not recorded: the pool as it is. One
    host of the wanted class is enough (its centre's uncertainty widens the spread)."""
    one_host = load(str(pool_of(ONE_GPU_CARDS + MULTI_GPU_CARDS[:2], (), tmp_path / "two")))
    assert noises.to_host_class(one_host, noises.TIME, HostClass.MULTI_GPU) is not None
    assert noises.to_host_class(one_host, noises.TIME, HostClass.ONE_GPU) is not None
    # the multi-GPU class holds the host-bound benchmarks alone: centred on it, the others'
    # centre could not be told; centred on the one-GPU class, they are its own
    gpu0 = ("GPU-59b384ea", "GPU-7f7c6807", "GPU-9835c3c8")  # (GPU 0 runs them)
    part = load(str(pool_of(ONE_GPU_CARDS, gpu0, tmp_path / "part")))
    assert noises.to_host_class(part, noises.TIME, HostClass.MULTI_GPU) is None
    assert noises.to_host_class(part, noises.TIME, HostClass.ONE_GPU) is not None
    one_class = load(str(pool_of(ONE_GPU_CARDS, (), tmp_path / "one")))
    assert noises.to_host_class(one_class, noises.TIME, HostClass.ONE_GPU) is None
    folder = pool_of(ONE_GPU_CARDS + MULTI_GPU_CARDS, (), tmp_path / "unrecorded")
    document = json.loads((folder / "result.json").read_text())
    document["context"][levels.RUNS_KEY][0]["host_gpu_count"] = "unknown"
    (folder / "result.json").write_text(json.dumps(document))
    assert noises.to_host_class(load(str(folder)), noises.TIME, HostClass.ONE_GPU) is None


def slowed(path: Path, name: str, factor: float, out: Path) -> Path:
    """The run at `path` with every time of `name` multiplied by `factor`."""
    with gzip.open(path, "rt") as file:
        document = json.load(file)
    for row in document["benchmarks"]:
        if row.get("run_name", row["name"]) == name and "real_time" in row:
            row["real_time"] *= factor
    out.write_text(json.dumps(document))
    return out


@needs_data
def test_each_class_is_judged_against_its_own_hosts(tmp_path: Path) -> None:
    """Against one-GPU and multi-GPU hosts pooled, `transpose/best` 2048^2 was held to +10.5 %
    around the pool's mean, 3.4 % off either class: a one-GPU host's 6 % slowdown passed.
    Centred on the run's class and held to the spread within a class (+2.6 %), unchanged code
    on either class passes and the slowdown is caught."""
    pool = pool_of(ONE_GPU_CARDS + MULTI_GPU_CARDS, (), tmp_path / "pool")
    for run, wanted in ((MULTI_GPU_RUN, "3 multi-GPU"), (ONE_GPU_RUN, "4 one-GPU")):
        done = run_module("compare", pool, run, "--json", tmp_path / "report.json")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr
        assert NOTE.format(wanted) in done.stdout
        hosts = int(wanted.split()[0])  # a centre of k hosts: the spread x sqrt(1 + 1/k)
        assert f"x{(1 + 1 / hosts) ** 0.5:.2f} for a centre that is the mean of {hosts}" in (
            done.stdout
        )
        rows = json.loads((tmp_path / "report.json").read_text())["benchmarks"]
        (row,) = [r for r in rows if r["name"] == SHORT]
        assert abs(row["ratio"] - 1.0) < 0.015, row
        assert row["limit"] < 1.04, row  # (the upper limit, as a ratio)
    slow = slowed(ONE_GPU_RUN, SHORT, 1.06, tmp_path / "slow.json")
    done = run_module("compare", pool, slow)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr
    assert f"REGRESSION  {SHORT}" in done.stdout
