"""`kernelwatch merge` keeps how each part was judged (`kernelwatch_anchor`): a sharded nightly
anchors each shard on its own card where the baseline lacks that card (docs/running.md,
"Anchoring"), and the merged result, which `report` and `history` read, said nothing of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import conftest
from conftest import GPU_DATA, REPO
from kernelwatch import merge as shards
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json

# A whole H200 suite run anchored on the baseline's commit (card ea2c27d5, b9b23ab's harness).
ANCHORED_RUN = GPU_DATA / "h200-card-ea2c27d5-anchored.json.gz"
BASELINE = REPO / "baselines" / "nvidia-h200-sm90"
CONFIG = REPO / "baselines" / "kernelwatch.toml"
# Its phrase, as `run` wrote it.
ITS_ANCHOR = (
    "anchored on b9b23ab633f0 (measured by this run; "
    "/work/main/.kernelwatch/anchors/45ec957d04d61c01.json)"
)
# A card the baseline holds: `run` judged that part against the committed baseline.
OTHER_CARD = "GPU-720306a7-4d3c-fd4f-2e5f-6a1ab8e5d2a1"
# What the phrase of a part some of whose benchmarks the anchor failed ends with.
FALLBACK = "; 1 benchmark(s) the anchor failed judged against the committed baseline"
NOT_ANCHORED = "not anchored: the baseline's commit b9b23ab633f0 is not in /w (a shallow clone?)"


def anchored_shards(tmp: Path, anchors: dict[int, str | None]) -> list[Path]:
    """The anchored run cut into len(anchors) shards as `run --shard K/N` would write them, part
    K with the anchor phrase anchors[K] (None: none recorded, on OTHER_CARD)."""
    document = read_json(ANCHORED_RUN)
    names = list(dict.fromkeys(r["run_name"] for r in document["benchmarks"]))
    count = len(anchors)
    files = []
    for k, part in enumerate(shards.split(names, count, shards.durations([document])), 1):
        chosen = set(part)
        context = {**document["context"], "kernelwatch_shard": f"{k}/{count}"}
        context["kernelwatch_topped_up"] = sorted(chosen & set(context["kernelwatch_topped_up"]))
        context.pop("kernelwatch_anchor")
        if anchors[k] is None:
            context["gpu_uuid"] = OTHER_CARD
        else:
            context["kernelwatch_anchor"] = anchors[k]
        rows = [r for r in document["benchmarks"] if r["run_name"] in chosen]
        path = tmp / f"shard-{k}.json"
        path.write_text(json.dumps({"context": context, "benchmarks": rows}))
        files.append(path)
    return files


def test_the_merged_result_says_how_each_part_was_judged(tmp_path: Path, run_cli) -> None:
    """Part 1 anchored on its card, part 2 on a card the baseline holds: the merged phrase says
    the parts were judged differently and gives each part's own phrase whole, in shard order
    whatever the order on the command line (it had no kernelwatch_anchor at all)."""
    files = anchored_shards(tmp_path, {1: ITS_ANCHOR, 2: None})
    out = tmp_path / "merged.json"
    done = run_cli("merge", *reversed(files), "-o", out)
    assert done.status == 0, done.err
    assert read_json(out)["context"]["kernelwatch_anchor"] == (
        "partly anchored, per part (1 of 2 parts anchored, the others judged against the "
        f"committed baseline): part 1/2 ({files[0]}, GPU-ea2c27d5-15d1-67d6-6b86-4b1d096ff117): "
        f"{ITS_ANCHOR}; part 2/2 ({files[1]}, {OTHER_CARD}): against the committed baseline "
        "(no anchoring recorded)"
    )


def part(index: int, count: int, anchor: str | None, shard: bool = True) -> tuple[str, Any]:
    """A small part `index` of `count` on card GPU-<index>, with the anchor phrase given."""
    context: dict[str, Any] = {**conftest.H100_CONTEXT, "gpu_uuid": f"GPU-{index}"}
    if shard:
        context["kernelwatch_shard"] = f"{index}/{count}"
    if anchor is not None:
        context["kernelwatch_anchor"] = anchor
    return f"s{index}.json", conftest.document({f"BM_{index}": [1.0, 1.1]}, context=context)


@pytest.mark.parametrize(
    "anchors, expected",
    [
        ([None, None], None),  # as before: no part anchored, nothing said
        (
            [ITS_ANCHOR, ITS_ANCHOR + FALLBACK],
            "anchored per part, each on the card it ran on: part 1/2 (s1.json, GPU-1): "
            f"{ITS_ANCHOR}; part 2/2 (s2.json, GPU-2): {ITS_ANCHOR}; 1 benchmark(s) the anchor "
            "failed judged against the committed baseline",
        ),
        (
            [NOT_ANCHORED, None],
            f"not anchored, per part: part 1/2 (s1.json, GPU-1): {NOT_ANCHORED}; part 2/2 "
            "(s2.json, GPU-2): against the committed baseline (no anchoring recorded)",
        ),
        (
            [None, NOT_ANCHORED, ITS_ANCHOR],
            "partly anchored, per part (1 of 3 parts anchored, the others judged against the "
            "committed baseline): part 1/3 (s1.json, GPU-1): against the committed baseline (no "
            f"anchoring recorded); part 2/3 (s2.json, GPU-2): {NOT_ANCHORED}; part 3/3 (s3.json, "
            f"GPU-3): {ITS_ANCHOR}",
        ),
        ([ITS_ANCHOR], ITS_ANCHOR),  # a lone part is the whole: its phrase as it is
    ],
)
def test_all_none_or_some_parts_anchored(anchors: list[str | None], expected: str | None) -> None:
    parts = [part(k, len(anchors), a) for k, a in enumerate(anchors, 1)]
    merged = shards.merge_results(parts)
    assert merged["context"].get("kernelwatch_anchor") == expected


@pytest.mark.parametrize("key", ["kernelwatch_built_identically", "kernelwatch_not_confirmed"])
def test_what_the_parts_runs_recorded_is_joined(key: str) -> None:
    """Each part records the benchmarks it built as the baseline's commit, and the regressions
    its re-runs did not confirm (its own); the merged result holds them all, as compare reads
    them (verdict.as_run_judged), where one commit."""
    parts = [part(k, 3, ITS_ANCHOR) for k in (1, 2, 3)]
    for k in (1, 2):
        parts[k - 1][1]["context"][key] = {"commit": "a" * 40, "benchmarks": [f"BM_{k}"]}
    merged = shards.merge_results(parts)["context"][key]
    assert merged == {"commit": "a" * 40, "benchmarks": ["BM_1", "BM_2"]}
    # parts judged against two commits: no baseline is both's, so none is recorded
    parts[1][1]["context"][key]["commit"] = "b" * 40
    assert key not in shards.merge_results(parts)["context"]
    parts[1][1]["context"][key] = ["BM_2"]
    with pytest.raises(InputError, match=f"^s2.json: context {key} is not"):
        shards.merge_results(parts)


def test_parts_that_are_no_shards_are_numbered_as_given() -> None:
    parts = [part(2, 2, None, shard=False), part(1, 2, ITS_ANCHOR, shard=False)]
    anchor = shards.merge_results(parts)["context"]["kernelwatch_anchor"]
    assert anchor.endswith(
        ": part 1 (s2.json, GPU-2): against the committed baseline (no anchoring recorded); "
        f"part 2 (s1.json, GPU-1): {ITS_ANCHOR}"
    )


def test_a_part_whose_anchor_is_no_text_is_one_line(tmp_path: Path, run_cli) -> None:
    files = anchored_shards(tmp_path, {1: ITS_ANCHOR, 2: None})
    document = json.loads(files[1].read_text())
    document["context"]["kernelwatch_anchor"] = {"anchored": True}
    files[1].write_text(json.dumps(document))
    out = tmp_path / "merged.json"
    done = run_cli("merge", *files, "-o", out)
    assert done.status == 2 and not out.exists()
    assert (
        done.err == f"kernelwatch: error: {files[1]}: context kernelwatch_anchor is not a string\n"
    )


def test_a_merged_result_merged_again_keeps_its_parts(tmp_path: Path, run_cli) -> None:
    """Merging is idempotent: the result of one merged file is that file (its anchoring and its
    parts too; its kernelwatch_shards was one "- on GPU-a,GPU-b" before), and compare and
    history take both."""
    files = anchored_shards(tmp_path, {1: ITS_ANCHOR, 2: None})
    once, twice = tmp_path / "once.json", tmp_path / "twice.json"
    assert run_cli("merge", *files, "-o", once).status == 0
    done = run_cli("merge", once, "-o", twice)
    assert done.status == 0, done.err
    assert read_json(twice) == read_json(once)
    assert read_json(once)["context"]["kernelwatch_shards"] == [
        "1/2 on GPU-ea2c27d5-15d1-67d6-6b86-4b1d096ff117",
        f"2/2 on {OTHER_CARD}",
    ]
    for result in (once, twice):
        done = run_cli("compare", BASELINE, result, "--config", CONFIG)
        assert done.status in (0, 1), done.err  # a verdict, not an error
        done = run_cli("history", "ingest", result, "--db", tmp_path / f"{result.stem}.sqlite")
        assert done.status == 0, done.err


def test_history_and_the_report_of_a_merged_anchored_result_show_it(
    tmp_path: Path, run_cli
) -> None:
    """`history list` (its last column), `history show` (a note) and `report` (the Anchor box)
    show the merged result's anchoring, as they show an unsharded anchored run's."""
    files = anchored_shards(tmp_path, {1: ITS_ANCHOR, 2: None})
    merged, db = tmp_path / "merged.json", tmp_path / "history.sqlite"
    assert run_cli("merge", *files, "-o", merged).status == 0
    anchor = read_json(merged)["context"]["kernelwatch_anchor"]
    assert run_cli("history", "ingest", merged, "--db", db).status == 0
    listed = run_cli("history", "list", "--db", db)
    assert listed.status == 0 and listed.out.splitlines()[1].endswith(f"  {anchor}")
    name = read_json(files[0])["benchmarks"][0]["run_name"]
    shown = run_cli("history", "show", name, "--db", db)
    assert shown.status == 0, shown.err
    assert f": its verdict was {anchor}\n" in shown.out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib is not installed (tools/kw setup installs it): no report")
    page = tmp_path / "report.html"
    done = run_cli("report", merged, "-o", page, "--config", CONFIG)
    assert done.status == 0, done.err
    html = page.read_text()
    box = html[html.index('<div class="box"><b>Anchor</b>') :]
    assert box.startswith(
        '<div class="box"><b>Anchor</b>: <code>run</code>\'s verdict was partly anchored, per '
        "part (1 of 2 parts anchored"
    )
    assert ITS_ANCHOR in box[: box.index("</div>")]


def test_the_other_processes_each_part_saw_on_its_gpu_are_joined() -> None:
    """A part measured beside another process on its GPU (runner/occupants.py) makes the
    merged result one measured so; parts that saw different ones are not refused as runs of
    different settings."""
    parts = [part(k, 2, None) for k in (1, 2)]
    parts[0][1]["context"]["kernelwatch_other_processes"] = ["pid 7: a"]
    parts[1][1]["context"]["kernelwatch_other_processes"] = ["pid 8: b", "pid 7: a"]
    merged = shards.merge_results(parts)["context"]["kernelwatch_other_processes"]
    assert merged == ["pid 7: a", "pid 8: b"]
