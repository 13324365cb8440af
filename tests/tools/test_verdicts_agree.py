"""Two ways to give the same baseline and contender get the same verdicts: here, the parts of a
sharded run as a folder (`compare BASELINE parts/`, `report --baseline`'s reading too) and as
the file `merge` joined them into (`compare BASELINE merged.json`)."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import GPU_DATA, REPO, Run
from kernelwatch.baseline import row_identity
from kernelwatch.merge import PLAN_KEY, SHARD_KEY, plan_key

BASELINE = REPO / "baselines" / "nvidia-h200-sm90"
# A card the pooled baseline holds a run of (baselines/README.md): compared by that run.
HELD_CARD = GPU_DATA / "h200-card-5a0b92fa-marked-plain" / "plain.json.gz"
OTHER_CARD = "GPU-0000aaaa-a2ff-94e6-0dd5-85ca1f10c1ff"  # in the same host, held by no run


def shards(
    folder: Path,
    family: str,
    factor: float,
    *,
    other_card: bool,
    source: Path = HELD_CARD,
    identical_to: str | None = None,
) -> list[Path]:
    """The held card's run (or `source`) as two shards, as `run --shard K/2` writes them: part
    2 the benchmarks of `family`, every time `factor` times as long, measured on `OTHER_CARD` (a
    second card of the host) or on the held card itself; with `identical_to`, each part records
    its benchmarks as built identically to that commit, as an anchored `run` does."""
    with gzip.open(source, "rt") as f:
        document: dict[str, Any] = json.load(f)
    plan = plan_key({row_identity(r) for r in document["benchmarks"]}, 2)
    folder.mkdir()
    paths = []
    for k in (1, 2):
        part = copy.deepcopy(document)
        context = part["context"]
        context.pop("kernelwatch_whole_build")
        context.update({SHARD_KEY: f"{k}/2", PLAN_KEY: plan})
        part["benchmarks"] = [
            r for r in part["benchmarks"] if row_identity(r).startswith(family) == (k == 2)
        ]
        if k == 2:
            for row in part["benchmarks"]:
                row["real_time"] *= factor
            if other_card:
                uuids = f"{context['gpu_uuid']},{OTHER_CARD}"
                context.update(gpu_uuid=OTHER_CARD, host_gpu_uuids=uuids)
                part["context"]["gpu_pci_bus_id"] = "0000:00:07.0"
        if other_card and k == 1:
            context["host_gpu_uuids"] = f"{context['gpu_uuid']},{OTHER_CARD}"
        if identical_to is not None:
            names = sorted({row_identity(r) for r in part["benchmarks"]})
            context["kernelwatch_built_identically"] = {"commit": identical_to, "benchmarks": names}
        paths.append(folder / f"s{k}.json")
        paths[-1].write_text(json.dumps(part))
    return paths


def verdicts(done: Run) -> tuple[int, dict[str, str]]:
    found = json.loads(done.out)
    return done.status, {b["name"]: b["verdict"] for b in found["benchmarks"]}


def folder_and_merged(
    run_cli: Callable[..., Run], tmp_path: Path, *, other_card: bool
) -> tuple[tuple[int, dict[str, str]], tuple[int, dict[str, str]]]:
    """The verdicts of compare BASELINE with the folder of two shards (occupancy/ 1.5 % slower,
    in part 2) and with their merged file."""
    parts = shards(tmp_path / "parts", "occupancy/", 1.015, other_card=other_card)
    merged = tmp_path / "merged.json"
    assert run_cli("merge", *parts, "-o", merged).status == 0
    by_folder = verdicts(run_cli("compare", BASELINE, tmp_path / "parts", "--format", "json"))
    return by_folder, verdicts(run_cli("compare", BASELINE, merged, "--format", "json"))


def test_a_folder_of_shards_from_two_cards_is_judged_as_their_merged_result(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """A folder read as one side took its first file's context whole: the parts of a run
    sharded over two cards of a host were all judged as measured on the first card, which the
    baseline holds (its own run, process level, limit 1.0 %), where `merge` of the same parts
    names both cards (another card: the card level). Part 2, on the second card, 1.5 % slower:
    `compare BASE parts/` exit 1 with 18 REGRESSION, `compare BASE merged.json` exit 0, all
    SAME."""
    by_folder, by_file = folder_and_merged(run_cli, tmp_path, other_card=True)
    assert by_folder == by_file
    assert by_file[0] == 0 and by_file[1]["occupancy/copy/block:256/manual_time"] == "SAME"


def test_a_folder_of_shards_from_one_card_still_judges_by_that_cards_run(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """Parts measured on the card the baseline holds stay judged by its run, as folder and as
    merged file: the same slowdown fails both."""
    by_folder, by_file = folder_and_merged(run_cli, tmp_path, other_card=False)
    assert by_folder == by_file
    assert by_file[0] == 1
    assert sum(v == "REGRESSION" for v in by_file[1].values()) == 18


def test_compare_of_a_baseline_folder_reads_its_baselines_config_as_report_does(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """`report --baselines DIR` (and `run --baselines DIR`) judged by DIR's kernelwatch.toml,
    `compare DIR/<gpu> RESULT` of the same files by the checkout's: a baselines folder whose
    config sets an 8 % threshold, every transpose benchmark 5 % slower: `compare` exit 1 with
    37 of its 43 REGRESSION, the report all SAME."""
    import shutil

    root = tmp_path / "baselines"
    slug = "nvidia-h100-80gb-hbm3-sm90"
    shutil.copytree(REPO / "baselines" / slug, root / slug)
    (root / "kernelwatch.toml").write_text('[compare]\nthreshold = "8%"\n')
    with gzip.open(GPU_DATA / "h100-card-4474abb1.json.gz", "rt") as f:
        document: dict[str, Any] = json.load(f)
    document["context"]["kernelwatch_filter"] = "^transpose/"
    document["context"].pop("kernelwatch_whole_build", None)
    document["benchmarks"] = [
        r for r in document["benchmarks"] if r["run_name"].startswith("transpose/")
    ]
    for row in document["benchmarks"]:
        row["real_time"] *= 1.05
    result = tmp_path / "run.json"
    result.write_text(json.dumps(document))
    for baseline in (root / slug, root / slug / "result.json.gz"):
        compared = run_cli("compare", baseline, result, "--format", "json")
        summary = json.loads(compared.out)["summary"]
        assert (compared.status, summary["failed"]) == (0, False), compared.err
        assert {k: n for k, n in summary["counts"].items() if n} == {"SAME": 43}
    reported = run_cli("report", result, "--baselines", root, "-o", tmp_path / "r.html")
    assert "43 SAME;" in reported.out, reported.err


# An anchored run on a card outside the pool (GPU-27c05724, fdd4ecb): exit 0 with nothing to
# measure, every binary built as the baseline's commit's; its runner finding, as run said it.
ANCHORED = GPU_DATA / "h200-card-27c05724-anchored-fdd4ecb"


def test_compare_of_an_anchored_run_judges_what_it_built_identically_as_run_did(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """Its result against the baseline failed `reduction/sum/sequential/double` 64 Mi at +1.3 %
    (limit +1.2 %), a trait of the card (compare.log.gz). With the record `run` now writes of
    what it built identically, compare reads it as run did: 356 IDENTICAL, exit 0, and a runner
    finding; a benchmark that crashed in the run stays an ERROR."""
    with gzip.open(ANCHORED / "compare.log.gz", "rt") as f:
        assert "1 REGRESSION, 2 IMPROVEMENT, 353 SAME" in f.read()
    with gzip.open(ANCHORED / "suite.json.gz", "rt") as f:
        document: dict[str, Any] = json.load(f)
    names = sorted({row_identity(r) for r in document["benchmarks"]})
    commit = json.loads((BASELINE / "manifest.json").read_text())["commit"]
    document["context"]["kernelwatch_built_identically"] = {"commit": commit, "benchmarks": names}
    recorded = tmp_path / "suite.json"
    recorded.write_text(json.dumps(document))
    done = run_cli("compare", BASELINE, recorded, "--format", "json")
    assert done.status == 0, done.err
    report = json.loads(done.out)
    assert report["summary"]["counts"]["IDENTICAL"] == 356
    # run's own finding, made against the baseline of then (8eb680f's pool): its words, and
    # the numbers of the baseline compare is given
    with gzip.open(ANCHORED / "suite.log.gz", "rt") as f:
        said = [line for line in f if line.startswith("note: runner finding: ")]
    opening = "runner finding: this runner times the baseline's own commit "
    assert len(said) == 1 and said[0].startswith(f"note: {opening}")
    assert report["notes"][1].startswith(opening)
    assert "(geometric mean of 356 benchmarks; " in report["notes"][1]
    crashed = "reduction/sum/sequential/double/n:67108864/manual_time"
    document["benchmarks"] = [r for r in document["benchmarks"] if r["run_name"] != crashed]
    document["benchmarks"].append(
        {
            "name": crashed,
            "run_name": crashed,
            "run_type": "iteration",
            "iterations": 0,
            "real_time": 0,
            "cpu_time": 0,
            "time_unit": "ns",
            "error_occurred": True,
            "error_message": "wrong output at index 7",
        }
    )
    recorded.write_text(json.dumps(document))
    done = run_cli("compare", BASELINE, recorded, "--format", "json")
    rows = {b["name"]: b["verdict"] for b in json.loads(done.out)["benchmarks"]}
    assert done.status == 1 and rows[crashed] == "ERROR"


def test_a_folder_of_anchored_shards_is_judged_as_their_merged_result(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """Each part of an anchored sharded run records what it built identically; a folder of the
    parts read only the first part's record, and judged the second's benchmarks against the
    baseline's cards (the reductions 1.5 % slower on this card: REGRESSION), where their merged
    file reads them all IDENTICAL, as each shard's run did."""
    commit = json.loads((BASELINE / "manifest.json").read_text())["commit"]
    parts = shards(
        tmp_path / "parts",
        "reduction/",
        1.015,
        other_card=False,
        source=ANCHORED / "suite.json.gz",
        identical_to=commit,
    )
    merged = tmp_path / "merged.json"
    assert run_cli("merge", *parts, "-o", merged).status == 0
    by_folder = verdicts(run_cli("compare", BASELINE, tmp_path / "parts", "--format", "json"))
    by_file = verdicts(run_cli("compare", BASELINE, merged, "--format", "json"))
    assert by_folder == by_file
    assert by_file[0] == 0 and set(by_file[1].values()) == {"IDENTICAL"}
