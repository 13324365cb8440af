"""`run --gpus`: every GPU of the host at once, each with its own result, baseline and
report; host-bound benchmarks one GPU at a time, on one GPU of each model (fake binaries and a
fake nvidia-smi)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import fakebench
from kernelwatch import gpus
from kernelwatch.errors import InputError

H100 = "GPU-00000000-0000-0000-0000-00000000a100"
H200 = "GPU-00000000-0000-0000-0000-00000000a200"
SMI = f"0, {H100}, NVIDIA H100 80GB HBM3, 9.0\n1, {H200}, NVIDIA H200, 9.0"
DEVICES = {
    H100: {"gpu_uuid": H100},
    H200: {"gpu_uuid": H200, "gpu_name": "NVIDIA H200"},
}
KERNELS = {f"alpha/copy/{n}/manual_time": 100.0 + n for n in range(3)}
COPIES = {f"transfers/h2d/pinned/bytes:{n}/manual_time": 900.0 + n for n in range(2)}
SERIAL = '[run]\nserial = ["^transfers/"]\n'


@pytest.fixture
def host(tmp_path: Path, monkeypatch):
    return make_host(tmp_path, monkeypatch, SMI, DEVICES)


def make_host(tmp_path: Path, monkeypatch, smi: str, devices: dict) -> Path:
    fakebench.fake_nvidia_smi(tmp_path, monkeypatch, smi)
    monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.chdir(tmp_path)
    spans = tmp_path / "spans.log"
    fakebench.suite(
        tmp_path / "build",
        {"alpha": KERNELS, "transfers": COPIES},
        devices=devices,
        spans=str(spans),
        sleep=0.3,
    )
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / "kernelwatch.toml").write_text(SERIAL)
    return tmp_path


def run(run_cli, host: Path, *argv: object):
    return run_cli(
        "run", "--build-dir", host / "build", "--baselines", host / "baselines",
        "--repetitions", "2", "--processes", "1", *argv,
    )  # fmt: skip


def make_baselines(run_cli, host: Path) -> None:
    done = run(run_cli, host, "--gpus", "all", "--no-compare", "--out", host / "base.json")
    assert done.status == 0, done.err
    for index in (0, 1):
        done = run_cli("baseline", "update", host / f"base-gpu{index}.json",
                       "--baselines", host / "baselines", "--min-repetitions", "2")  # fmt: skip
        assert done.status == 0, done.err
    (host / "spans.log").unlink()


def test_each_gpu_gets_its_own_result_and_its_own_models_baseline(run_cli, host: Path) -> None:
    make_baselines(run_cli, host)
    done = run(run_cli, host, "--gpus", "all", "--out", host / "night.json",
               "--markdown", host / "night.md")  # fmt: skip
    assert done.status == 0, done.err
    for index, uuid in enumerate((H100, H200)):
        context = json.loads((host / f"night-gpu{index}.json").read_text())["context"]
        assert context["gpu_uuid"] == uuid
        assert context["kernelwatch_gpu_index"] == str(index)
        assert (host / f"night-gpu{index}.md").is_file()
        assert f"GPU {index} (" in done.out  # one report per GPU on stdout
    assert done.err.count(": exit 0 (no regression)") == 2


def test_the_worst_gpu_decides_the_exit_status(run_cli, host: Path) -> None:
    make_baselines(run_cli, host)
    for folder in (host / "baselines").iterdir():
        if folder.is_dir() and "h200" in folder.name:
            for file in folder.iterdir():
                file.unlink()
            folder.rmdir()
    done = run(run_cli, host, "--gpus", "all", "--out", host / "night.json")
    assert done.status == 2
    assert f"GPU 1 (NVIDIA H200, {H200}): error: no baseline for this GPU" in done.err
    assert ": exit 0 (no regression)" in done.err and ": exit 2 (bad input)" in done.err
    assert (host / "night-gpu1.json").is_file()  # measured and kept all the same


def test_a_hung_binary_loses_no_gpus_other_results(run_cli, host: Path) -> None:
    fakebench.configure(host / "build" / "bench" / "kernelwatch_bench_transfers",
                        hang="transfers/h2d/pinned/1")  # fmt: skip
    done = run(run_cli, host, "--gpus", "all", "--no-compare", "--out", host / "night.json")
    assert done.status == 3
    for index in (0, 1):
        night = host / f"night-gpu{index}.json"
        rows = json.loads(night.read_text())["benchmarks"]
        assert {row["run_name"] for row in rows} == set(KERNELS)
        assert f": exit 3 (a benchmark binary crashed or hung); {night}" in done.err
    assert done.err.count("hung (exit status 5): transfers/h2d/pinned/1 made no progress") >= 2


def test_gpus_run_at_once_and_host_bound_benchmarks_alone(run_cli, host: Path) -> None:
    done = run(run_cli, host, "--gpus", "0,1", "--no-compare", "--out", host / "r.json")
    assert done.status == 0, done.err
    assert "host-bound benchmark(s)" in done.err
    spans = [json.loads(line) for line in (host / "spans.log").read_text().splitlines()]
    kernels = [s for s in spans if s["names"][0].startswith("alpha/")]
    copies = [s for s in spans if s["names"][0].startswith("transfers/")]
    assert {s["gpu"] for s in kernels} == {H100, H200} and len(copies) == 2

    def overlap(a: dict, b: dict) -> bool:
        return a["start"] < b["end"] and b["start"] < a["end"]

    assert overlap(kernels[0], kernels[1])  # the GPUs measured at once
    for copy in copies:  # ... but never while a host-bound benchmark measured
        assert not any(overlap(copy, other) for other in spans if other is not copy)
    context = json.loads((host / "r-gpu0.json").read_text())["context"]
    assert context["kernelwatch_serial"] == sorted(COPIES)


def test_host_bound_from_the_baselines_counter(run_cli, host: Path) -> None:
    make_baselines(run_cli, host)
    (host / "baselines" / "kernelwatch.toml").write_text("")
    for result in (host / "baselines").glob("*/result.json"):
        document = json.loads(result.read_text())
        for row in document["benchmarks"]:
            if row["run_name"].startswith("transfers/"):
                row["host_bound"] = 1
        result.write_text(json.dumps(document))
    done = run(run_cli, host, "--gpus", "all", "--no-compare", "--out", host / "r.json")
    assert done.status == 0, done.err
    assert json.loads((host / "r-gpu1.json").read_text())["context"][
        "kernelwatch_serial"
    ] == sorted(COPIES)


def test_host_bound_benchmarks_measure_on_one_gpu_of_each_model(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    twin = H100[:-4] + "b100"
    host = make_host(
        tmp_path,
        monkeypatch,
        f"0, {H100}, NVIDIA H100 80GB HBM3, 9.0\n1, {twin}, NVIDIA H100 80GB HBM3, 9.0",
        {H100: {"gpu_uuid": H100}, twin: {"gpu_uuid": twin}},
    )
    done = run(run_cli, host, "--gpus", "all", "--no-compare", "--out", host / "base.json",
               "--host-bound-on", "each")  # fmt: skip
    assert done.status == 0, done.err
    for index in (0, 1):  # each: both GPUs measured the copies, one at a time
        rows = json.loads((host / f"base-gpu{index}.json").read_text())["benchmarks"]
        assert {row["run_name"] for row in rows} == set(KERNELS) | set(COPIES)
    done = run_cli("baseline", "update", host / "base-gpu1.json", "--baselines",
                   host / "baselines", "--min-repetitions", "2", "--compress")  # fmt: skip
    assert done.status == 0, done.err  # (run judges against a compressed baseline too)
    assert (host / "baselines" / "nvidia-h100-80gb-hbm3-sm90" / "result.json.gz").is_file()
    (host / "spans.log").unlink()

    done = run(run_cli, host, "--gpus", "all", "--out", host / "night.json")
    assert done.status == 0, done.err
    assert "measure on the first GPU of each model only" in done.err
    spans = [json.loads(line) for line in (host / "spans.log").read_text().splitlines()]
    assert {s["gpu"] for s in spans if s["names"][0].startswith("transfers/")} == {H100}
    second = json.loads((host / "night-gpu1.json").read_text())
    assert {row["run_name"] for row in second["benchmarks"]} == set(KERNELS)
    assert second["context"]["kernelwatch_host_bound_on"] == (
        f"GPU 0 (NVIDIA H100 80GB HBM3, {H100})"
    )
    assert "kernelwatch_whole_build" not in second["context"]
    assert "MISSING" not in done.out  # its baseline is judged on what it measured
    assert done.err.count(": exit 0 (no regression)") == 2


@pytest.mark.parametrize(
    "spec, message",
    [("2", "no GPU 2 on this host"), ("0,0", "given twice"), ("0,", "an empty entry")],
)
def test_bad_gpu_lists(run_cli, host: Path, spec: str, message: str) -> None:
    done = run(run_cli, host, "--gpus", spec)
    assert done.status == 2 and message in done.err and done.err.count("\n") == 1


def test_no_gpu_listed_exits_4(run_cli, host: Path, monkeypatch) -> None:
    fakebench.fake_nvidia_smi(host, monkeypatch, "No devices were found", 6)
    done = run(run_cli, host, "--gpus", "all")
    assert done.status == 4 and "no CUDA GPU is visible" in done.err


def test_no_nvidia_smi_exits_4_with_the_no_gpu_line(run_cli, host: Path, monkeypatch) -> None:
    """The exit-4 line is always the one docs/running.md gives (CI scripts match on it)."""
    fakebench.no_nvidia_smi(monkeypatch)
    done = run(run_cli, host, "--gpus", "all")
    assert done.status == 4 and done.err == (
        "kernelwatch: no CUDA GPU is visible (--gpus: no nvidia-smi to list the GPUs); "
        "nothing to measure\n"
    )


def test_parse_and_select() -> None:
    found = gpus.parse(SMI + "\n\n")
    assert [g.index for g in found] == [0, 1] and found[1].slug == "nvidia-h200-sm90"
    assert gpus.select(found, H200) == [found[1]]
    assert gpus.select(found, "1,0") == [found[1], found[0]]
    assert gpus.parse("0, GPU-x, Tesla T4")[0].capability is None  # an old driver
    with pytest.raises(InputError):
        gpus.select(found, "7")


def test_selftest_on_every_gpu_at_once(run_cli, host: Path) -> None:
    out = host / "st"
    done = run_cli(
        "selftest", "--build-dir", host / "build", "--baselines", host / "baselines",
        "--gpus", "all", "--aa-runs", "2", "--trials", "0", "--repetitions", "4",
        "--processes", "2", "--out", out,
    )  # fmt: skip
    assert done.status in (0, 1), done.err
    for index, uuid in enumerate((H100, H200)):
        for k in (1, 2):
            context = json.loads((out / f"gpu{index}" / f"aa-{k}.json").read_text())["context"]
            assert context["gpu_uuid"] == uuid
        assert f"== GPU {index} (" in done.out
        assert f"selftest: GPU {index} (" in done.err


TWO_H200 = "GPU-00000000-0000-0000-0000-0000000b0200"
SMI_TWO_H200 = f"0, {H200}, NVIDIA H200, 9.0\n1, {TWO_H200}, NVIDIA H200, 9.0"


def test_split_shares_the_suite_among_the_gpus_each_judged_as_its_shard(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    """--split: the GPUs share the suite, each result judged as shard k/N against the model's
    baseline (no MISSING for the other shard's benchmarks); merge joins them."""
    devices = {uuid: {"gpu_uuid": uuid, "gpu_name": "NVIDIA H200"} for uuid in (H200, TWO_H200)}
    host = make_host(tmp_path, monkeypatch, SMI_TWO_H200, devices)
    done = run(run_cli, host, "--gpus", "0", "--no-compare", "--out", host / "base.json")
    assert done.status == 0, done.err
    done = run_cli("baseline", "update", host / "base-gpu0.json", "--baselines",
                   host / "baselines", "--min-repetitions", "2")  # fmt: skip
    assert done.status == 0, done.err
    (host / "spans.log").unlink()
    done = run(run_cli, host, "--gpus", "all", "--split", "--out", host / "r.json")
    assert done.status == 0, done.err
    assert done.err.count(": exit 0 (no regression)") == 2 and "MISSING" not in done.out
    names = []
    for index in (0, 1):
        document = json.loads((host / f"r-gpu{index}.json").read_text())
        assert document["context"]["kernelwatch_shard"] == f"{index + 1}/2"
        assert "kernelwatch_whole_build" not in document["context"]
        names.append({row["run_name"] for row in document["benchmarks"]})
    assert not names[0] & names[1] and names[0] | names[1] == set(KERNELS) | set(COPIES)
    assert set(COPIES) <= names[0]  # the host-bound part: GPU 1's first (runner.sharing)
    assert "2 host-bound benchmark(s) (counter host_bound, or [run] serial in kernelwatch.toml) " \
        "measure on GPU 1 of the split only, with no build" in done.err  # fmt: skip
    plans = {json.loads((host / f"r-gpu{i}.json").read_text())["context"]["kernelwatch_shard_plan"]
             for i in (0, 1)}  # fmt: skip
    assert len(plans) == 1 and ", shared at run time " in plans.pop()
    spans = [json.loads(line) for line in (host / "spans.log").read_text().splitlines()]
    assert {s["gpu"] for s in spans} == {H200, TWO_H200}
    merged = run_cli("merge", host / "r-gpu0.json", host / "r-gpu1.json", "--out", host / "m.json")
    assert merged.status == 0, merged.err
    rows = json.loads((host / "m.json").read_text())["benchmarks"]
    assert {row["run_name"] for row in rows} == set(KERNELS) | set(COPIES)


def split_on_two_h200(
    run_cli, tmp_path: Path, monkeypatch, count: int, **behaviour: Any
) -> tuple[dict[str, dict[str, float]], list[dict[str, Any]]]:
    """`run --gpus all --split --no-compare` of `count` one-benchmark binaries (b0, b1, ...,
    fakebench `behaviour`) on a host of two H200s: the binaries, and every process's span."""
    devices = {uuid: {"gpu_uuid": uuid, "gpu_name": "NVIDIA H200"} for uuid in (H200, TWO_H200)}
    fakebench.fake_nvidia_smi(tmp_path, monkeypatch, SMI_TWO_H200)
    monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.chdir(tmp_path)
    families = {f"b{i}": {f"b{i}/k/manual_time": 100.0} for i in range(count)}
    fakebench.suite(tmp_path / "build", families, devices=devices, spans=str(tmp_path / "spans"),
                    **behaviour)  # fmt: skip
    done = run_cli("run", "--build-dir", tmp_path / "build", "--repetitions", "4",
                   "--processes", "2", "--no-compare", "--gpus", "all", "--split",
                   "--out", tmp_path / "r.json")  # fmt: skip
    assert done.status == 0, done.err
    spans = [json.loads(line) for line in (tmp_path / "spans").read_text().splitlines()]
    return families, spans


def test_split_gives_a_slower_gpu_fewer_parts_and_keeps_each_benchmark_on_one_card(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    """Each GPU takes the next binary when it is free: a card five times slower measures
    fewer of them, and a benchmark's processes and top-ups all run on the card that took it
    (its processes' spread is one card's)."""
    families, spans = split_on_two_h200(run_cli, tmp_path, monkeypatch, 8, sleep=0.2,
                                        slow_on={TWO_H200: 5.0},
                                        noisy={"b0/k/manual_time": 20})  # fmt: skip
    cards: dict[str, set[str]] = {}
    for span in spans:
        for name in span["names"]:
            cards.setdefault(name, set()).add(span["gpu"])
    assert set(cards) == {name for family in families.values() for name in family}
    assert all(len(on) == 1 for on in cards.values())
    # b0 is noisy: topped up, its top-ups' processes too on the card that took it
    assert sum("b0/k/manual_time" in span["names"] for span in spans) > 2
    fast = sum(on == {H200} for on in cards.values())
    assert fast > len(cards) - fast >= 1
    measured = {
        uuid: {row["run_name"] for row in json.loads(out.read_text())["benchmarks"]}
        for uuid, out in ((H200, tmp_path / "r-gpu0.json"), (TWO_H200, tmp_path / "r-gpu1.json"))
    }
    assert all(name in measured[next(iter(on))] for name, on in cards.items())


def test_an_unanchored_split_measures_each_part_whole_before_claiming_the_next(
    run_cli, tmp_path: Path, monkeypatch
) -> None:
    """Not anchored (--no-compare), a GPU measures a part's processes and top-ups before it
    claims the next part, so the top-ups count in how much each GPU takes."""
    _, spans = split_on_two_h200(run_cli, tmp_path, monkeypatch, 6, sleep=0.1,
                                 noisy={"b0/k/manual_time": 20,
                                        "b1/k/manual_time": 20})  # fmt: skip
    for gpu in (H200, TWO_H200):
        order = [span["names"][0].split("/")[0] for span in spans if span["gpu"] == gpu]
        parts = list(dict.fromkeys(order))
        assert order == sorted(order, key=parts.index), order  # each part's spans together
    topped = [span for span in spans if span["names"] == ["b0/k/manual_time"]]
    assert len(topped) > 2  # processes and top-ups, on one card
    assert len({span["gpu"] for span in topped}) == 1


@pytest.mark.parametrize("argv", [["--split"], ["--gpus", "all", "--split", "--shard", "1/2"]])
def test_split_needs_gpus_and_no_shard(run_cli, host: Path, argv: list[str]) -> None:
    done = run(run_cli, host, "--no-compare", *argv)
    assert done.status == 2
    assert done.err.strip().splitlines()[-1] == (
        "kernelwatch: error: --split shares the benchmarks among --gpus: give --gpus, not --shard"
    )
