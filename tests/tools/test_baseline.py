"""Baselines per GPU model (kernelwatch.baseline and `kernelwatch baseline ...`)."""

from __future__ import annotations

import fcntl
import gzip
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, document, rows_for, run_module
from fakebench import GPU_CONTEXT
from kernelwatch import baseline as baselines
from kernelwatch import project, results, synthetic
from kernelwatch.compare import DEFAULT_NOISE_MULTIPLIER
from kernelwatch.errors import InputError
from kernelwatch import gbench
from kernelwatch.gbench import failed_row

SLUG = "nvidia-h100-80gb-hbm3-sm90"


def steady(median: float, n: int = 10, seed: int = 0) -> list[float]:
    return (median * np.random.default_rng(seed).lognormal(0.0, 0.002, n)).tolist()


SUITE = {f"fam{i % 2}/bench/{i}/manual_time": steady(100.0 + i, seed=i) for i in range(6)}


def suite(slow: dict[str, float] | None = None, n: int = 10, seed: int = 0) -> dict:
    return {
        name: (
            steady(100.0 + i, n=n, seed=seed + i)
            if not slow or name not in slow
            else [t * slow[name] for t in steady(100.0 + i, n=n, seed=seed + i)]
        )
        for i, name in enumerate(SUITE)
    }


def context(**changes: str) -> dict:
    return {
        **GPU_CONTEXT,
        "date": "2026-11-21T05:40:57+00:00",
        "kernelwatch_run_command": "kernelwatch run --no-compare --out r.json",
        **changes,
    }


def one_line(err: str, starts: str = "kernelwatch: error: ") -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(starts) and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "baselines"
    folder.mkdir()  # (update refuses a --baselines folder that is not there)
    return folder


# --- slugs and resolution ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "capability", "slug"),
    [
        ("NVIDIA H100 80GB HBM3", "9.0", "nvidia-h100-80gb-hbm3-sm90"),
        ("NVIDIA H200", "9.0", "nvidia-h200-sm90"),
        ("NVIDIA A100-SXM4-80GB", "8.0", "nvidia-a100-sxm4-80gb-sm80"),
        ("  NVIDIA GeForce RTX 4090 ", "8.9", "nvidia-geforce-rtx-4090-sm89"),
        ("NVIDIA B200", "10.0", "nvidia-b200-sm100"),
    ],
)
def test_gpu_slug(name: str, capability: str, slug: str) -> None:
    assert baselines.gpu_slug(name, capability) == slug


def test_context_slug() -> None:
    assert baselines.context_slug(GPU_CONTEXT) == SLUG
    assert baselines.context_slug({"gpu_name": "X"}) is None
    assert baselines.context_slug({}) is None
    with pytest.raises(InputError, match="cannot name a baseline"):
        baselines.gpu_slug("---", "9.0")
    # Its digits alone made "9.00" and "09.0" baselines of their own (sm900, sm090), and a
    # capability holding a path the H100's (found by an audit)
    for capability in ("9.00", "09.0", "9.0/../../x", "90", "sm_90"):
        with pytest.raises(InputError, match=r"compute capability .* \(not MAJOR\.MINOR"):
            baselines.gpu_slug("NVIDIA H100", capability)


def test_default_root_is_the_checkout_from_inside_it(monkeypatch) -> None:
    for inside in (REPO, REPO / "docs"):
        monkeypatch.chdir(inside)
        assert project.find() == REPO
        assert baselines.default_root() == REPO / "baselines"


def test_default_root_of_another_project_is_its_own(tmp_path: Path, monkeypatch) -> None:
    """A project that runs this checkout as a tool (PYTHONPATH=kernelwatch/tools) from its own
    root (a repository: .git) keeps its baselines there, not beside kernelwatch's suite's.
    """
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert baselines.default_root() == tmp_path / "baselines"


def test_resolve_names_the_available_ones_and_how_to_create(
    root: Path, write_json, run_cli
) -> None:
    other = write_json("h200.json", suite(), context=context(gpu_name="NVIDIA H200"))
    assert run_cli("baseline", "update", other, "--baselines", root).status == 0
    with pytest.raises(InputError) as caught:
        baselines.resolve(root, GPU_CONTEXT, "new.json")
    message = str(caught.value)
    assert f"no baseline for this GPU (NVIDIA H100 80GB HBM3 (sm 9.0), {SLUG})" in message
    assert "available in" in message and "nvidia-h200-sm90" in message
    assert "kernelwatch baseline update new.json" in message
    with pytest.raises(InputError, match="records no GPU"):
        baselines.resolve(root, {}, "new.json")
    assert (
        baselines.resolve(
            root, {"gpu_name": "NVIDIA H200", "gpu_compute_capability": "9.0"}, "x"
        ).slug
        == "nvidia-h200-sm90"
    )


# --- update -----------------------------------------------------------------------------------


def test_update_writes_result_and_manifest(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 0, done.err
    assert "new baseline: there was none for this GPU" in done.out
    folder = root / SLUG
    assert sorted(os.listdir(folder)) == ["manifest.json", "noise.json", "result.json"]
    stored = json.loads((folder / "result.json").read_text())
    assert stored["context"]["gpu_name"] == GPU_CONTEXT["gpu_name"]
    assert len(stored["benchmarks"]) == len(json.loads(result.read_text())["benchmarks"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["slug"] == SLUG and manifest["benchmarks"] == len(SUITE)
    assert manifest["commit"] == GPU_CONTEXT["kernelwatch_git_commit"]
    assert manifest["driver"] == "580.159.04" and manifest["cuda_runtime"] == "13.0"
    assert manifest["command"] == "kernelwatch run --no-compare --out r.json"
    assert manifest["repetitions"] == 10 and manifest["date"] == "2026-11-21T05:40:57+00:00"
    [record] = manifest["history"]
    assert record["filter"] is None and record["benchmarks"] == len(SUITE)
    assert record["update_command"].startswith("kernelwatch baseline update ")


def test_a_compressed_baseline_is_judged_as_its_json_and_stays_compressed(
    root: Path, write_json, run_cli, tmp_path: Path
) -> None:
    first = write_json("r1.json", suite(), context=context())
    done = run_cli("baseline", "update", first, "--baselines", root, "--compress")
    assert done.status == 0, done.err
    folder = root / SLUG
    assert sorted(os.listdir(folder)) == ["manifest.json", "noise.json", "result.json.gz"]
    packed = (folder / "result.json.gz").read_bytes()
    assert gzip.decompress(packed).startswith(b"{")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run_cli("baseline", "update", first, "--baselines", plain).status == 0
    assert gzip.decompress(packed) == (plain / SLUG / "result.json").read_bytes()

    slowed = write_json("r2.json", suite({next(iter(SUITE)): 1.2}, seed=50), context=context())
    verdicts = []
    for baseline in (folder, folder / "result.json.gz", plain / SLUG):
        done = run_cli("compare", baseline, slowed)
        assert done.status == 1, done.err
        verdicts.append([line.split()[0] for line in done.out.splitlines() if "/bench/" in line])
    assert verdicts[0] == verdicts[1] == verdicts[2] and "REGRESSION" in verdicts[0]

    again = write_json("r3.json", suite(seed=7), context=context(kernelwatch_git_commit="f" * 40))
    assert run_cli("baseline", "update", again, "--baselines", root).status == 0
    assert sorted(os.listdir(folder)) == ["manifest.json", "noise.json", "result.json.gz"]
    converted = run_cli("baseline", "update", again, "--baselines", plain, "--compress")
    assert converted.status == 0, converted.err
    assert not (plain / SLUG / "result.json").exists()  # converted, not kept beside it


def test_a_damaged_or_bomb_gzip_is_one_line(tmp_path: Path, run_cli, monkeypatch) -> None:
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(gzip.compress(b'{"benchmarks": []}' * 100)[:40])
    done = run_cli("compare", damaged, damaged)
    assert done.status == 2 and "a damaged gzip file" in one_line(done.err)
    monkeypatch.setattr(gbench, "MAX_UNPACKED", 1000)
    bomb = tmp_path / "bomb.json"
    bomb.write_bytes(gzip.compress(b" " * 5000))
    done = run_cli("compare", bomb, bomb)
    assert done.status == 2 and "unpacks to more than" in one_line(done.err)


def test_second_update_prints_what_moved_and_keeps_history(root: Path, write_json, run_cli) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    slowed = next(iter(SUITE))
    second = write_json(
        "r2.json",
        suite({slowed: 1.2}, seed=50),
        context=context(kernelwatch_git_commit="f" * 40),
    )
    done = run_cli("baseline", "update", second, "--baselines", root)
    assert done.status == 0, done.err
    assert "against the previous baseline (commit 012345678" in done.out
    moved = [line for line in done.out.splitlines() if line.strip().startswith("REGRESSION")]
    assert len(moved) == 1 and slowed in moved[0] and "+20." in moved[0]
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert [r["commit"] for r in manifest["history"]] == [
        GPU_CONTEXT["kernelwatch_git_commit"],
        "f" * 40,
    ]
    assert manifest["commit"] == "f" * 40


def test_filter_replaces_only_matching_benchmarks(root: Path, write_json, run_cli) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = json.loads((root / SLUG / "result.json").read_text())["benchmarks"]
    extra = {"fam0/new/manual_time": steady(50.0, seed=99)}
    second = write_json("r2.json", {**suite(seed=7), **extra}, context=context())
    done = run_cli("baseline", "update", second, "--filter", "^fam0/", "--baselines", root)
    assert done.status == 0, done.err
    after = json.loads((root / SLUG / "result.json").read_text())["benchmarks"]
    fam1 = [r for r in before if r["run_name"].startswith("fam1/")]
    assert [r for r in after if r["run_name"].startswith("fam1/")] == fam1  # kept as they were
    new_rows = json.loads(second.read_text())["benchmarks"]
    assert [r for r in after if r["run_name"].startswith("fam0/")] == [
        r for r in new_rows if r["run_name"].startswith("fam0/")
    ][: len([r for r in after if r["run_name"].startswith("fam0/")])]
    assert after[-1]["run_name"].startswith("fam0/new")  # added at the end
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert manifest["benchmarks"] == len(SUITE) + 1
    assert manifest["history"][-1]["filter"] == "^fam0/"
    assert manifest["history"][-1]["benchmarks"] == 4


def test_dry_run_writes_nothing(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    done = run_cli("baseline", "update", result, "--dry-run", "--baselines", root)
    assert done.status == 0 and "dry run: nothing written" in done.out
    assert not any(root.iterdir())


def test_warnings_for_dirty_or_debug_builds(root: Path, write_json, run_cli) -> None:
    result = write_json(
        "r.json",
        suite(),
        context=context(kernelwatch_git_commit="abc-dirty", kernelwatch_build_type="Debug"),
    )
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 0
    assert "uncommitted changes (abc-dirty)" in done.err and "a Debug build" in done.err


REFUSED = {
    "error row": (
        lambda: document(
            suite(),
            rows=[failed_row("x/e", "oom")],
            context=context(),
        ),
        "1 benchmark(s) have errors or were skipped (first: x/e: oom); a baseline needs a clean run",
    ),
    "skipped row": (
        lambda: document(
            suite(),
            rows=[failed_row("x/s", "no fp64", skipped=True)],
            context=context(),
        ),
        "(first: x/s: skipped: no fp64)",
    ),
    "no GPU context": (
        lambda: document(suite(), context={"host_name": "ci"}),
        "the result records no GPU (gpu_name and gpu_compute_capability",
    ),
    "few repetitions": (
        lambda: document(suite(n=5), context=context()),
        "has 5 repetition(s); a baseline needs at least 10 (--min-repetitions)",
    ),
    "aggregates only": (
        lambda: {
            "context": context(),
            "benchmarks": [r for r in rows_for(suite()) if r["run_type"] == "aggregate"],
        },
        "has only aggregates (mean/median), no repetitions",
    ),
    "invalid JSON": (lambda: '{"benchmarks": [', "invalid JSON"),
    "a process crashed": (  # what run keeps of a run whose process crashed (completeness.keep_partial)
        lambda: document(
            suite(),
            context=context(
                kernelwatch_failed_processes=["./b: crashed (SIGSEGV): no message"],
                kernelwatch_no_result=["y/a"],
            ),
        ),
        "1 of its benchmark processes failed (kernelwatch_failed_processes: ./b: crashed "
        "(SIGSEGV): no message); a baseline is made from runs that finished, so measure it again",
    ),
    "NaN time": (
        lambda: document({"x/a": [1.0] * 9 + [math.nan]}, context=context()),
        "real_time is NaN",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_update_refuses(case: str, root: Path, write_json, run_cli) -> None:
    make, message = REFUSED[case]
    result = write_json("r.json", make())
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 2 and done.out == ""
    assert message in one_line(done.err)
    assert not any(root.iterdir())


LONG = "x/" + "a" * 5000


@pytest.mark.parametrize(
    "make",
    [
        lambda: document({LONG: steady(100.0, n=5)}, context=context()),
        lambda: document(suite(), rows=[failed_row(LONG, "e" * 5000)], context=context()),
        lambda: {
            "context": context(),
            "benchmarks": [
                {**r, "name": LONG, "run_name": LONG}
                for r in rows_for(suite())
                if r["run_type"] == "aggregate"
            ],
        },
    ],
    ids=["few repetitions", "error row", "aggregates only"],
)
def test_a_refusal_cuts_a_long_name(make, root: Path, write_json, run_cli) -> None:
    """A 5,000-character benchmark name (or error message) was written whole into the line."""
    done = run_cli("baseline", "update", write_json("r.json", make()), "--baselines", root)
    assert done.status == 2 and done.err.count("\n") == 1
    assert "(5,002 characters)" in done.err and len(done.err) < 700, done.err[:300]


def test_update_refuses_another_gpu_model_than_the_folders(root: Path, write_json, run_cli) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    # Same slug, different name: the folder's manifest decides.
    other = write_json("r2.json", suite(), context=context(gpu_name="NVIDIA H100 80GB-HBM3"))
    done = run_cli("baseline", "update", other, "--baselines", root)
    assert done.status == 2
    assert "but baseline nvidia-h100-80gb-hbm3-sm90 holds NVIDIA H100 80GB HBM3" in one_line(
        done.err
    )


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ({"history": "x"}, "not a baseline manifest \\(history is str, not list\\)"),
        ({"history": [1, "a"]}, "not a baseline manifest \\(history holds a non-object\\)"),
        ({"benchmarks": "many"}, "not a baseline manifest \\(benchmarks is str, not int\\)"),
        ({"schema_version": 99}, "manifest schema 99, which this kernelwatch does not read"),
        ({"slug": "other-slug"}, f"the manifest of other-slug, in the folder of {SLUG}"),
    ],
)
def test_a_damaged_or_newer_manifest_is_refused_and_kept(
    damage: dict, message: str, root: Path, write_json, run_cli
) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    path = root / SLUG / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **damage}))
    before = {p.name: p.read_bytes() for p in (root / SLUG).iterdir()}
    for argv in (["update", first], ["show", SLUG], ["list"]):
        done = run_cli("baseline", *argv, "--baselines", root)
        assert done.status == 2 and re.search(message, one_line(done.err)), done.err
    assert {p.name: p.read_bytes() for p in (root / SLUG).iterdir()} == before


def test_partial_update_refuses_another_driver(root: Path, write_json, run_cli) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    newer = write_json("r2.json", suite(), context=context(gpu_driver_version="590.1"))
    done = run_cli("baseline", "update", newer, "--filter", "fam0", "--baselines", root)
    assert done.status == 2
    assert "different driver (baseline 580.159.04, result 590.1)" in one_line(done.err)
    assert run_cli("baseline", "update", newer, "--baselines", root).status == 0  # whole: fine


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--filter", "^nothing"],
            "--filter '^nothing' matches no benchmark in the result",
        ),
        (["--filter", "z" * 5000], "... (5,002 characters) matches no benchmark"),  # was whole
        (["--filter", "("], "bad regex"),
        (["--min-repetitions", "0"], "--min-repetitions 0: must be at least 1"),
    ],
)
def test_update_bad_options(argv: list[str], message: str, root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    done = run_cli("baseline", "update", result, *argv, "--baselines", root)
    assert done.status == 2 and message in one_line(done.err)


def test_update_bad_paths(root: Path, tmp_path: Path, run_cli) -> None:
    done = run_cli("baseline", "update", tmp_path / "absent.json", "--baselines", root)
    assert done.status == 2 and "absent.json: no such file" in one_line(done.err)
    done = run_cli("baseline", "update", tmp_path, "--baselines", root)
    assert done.status == 2 and "not a directory" in one_line(done.err)


@pytest.mark.parametrize(
    ("part", "said"),
    [
        (
            {"kernelwatch_filter": "^fam0/"},
            "ran a part of the suite (run --filter '^fam0/')",
        ),
        (
            {"kernelwatch_shard": "1/2"},
            "ran a part of the suite (shard 1/2); merge the shards",
        ),
    ],
)
def test_a_part_of_the_suite_needs_filter(
    part: dict, said: str, root: Path, write_json, run_cli
) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = (root / SLUG / "result.json").read_bytes()
    fam0 = {n: t for n, t in suite(seed=7).items() if n.startswith("fam0/")}
    partial = write_json("p.json", fam0, context=context(**part))
    for extra in ([], ["--drop-missing"]):
        done = run_cli("baseline", "update", partial, *extra, "--baselines", root)
        assert done.status == 2 and done.out == ""
        assert said in one_line(done.err)
        assert (root / SLUG / "result.json").read_bytes() == before
    done = run_cli("baseline", "update", partial, "--filter", "^fam0/", "--baselines", root)
    assert done.status == 0, done.err
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert manifest["benchmarks"] == len(SUITE)  # the others kept


def test_a_gpu_that_left_the_host_bound_benchmarks_to_another_is_pooled_beside_it(
    root: Path, write_json, run_cli
) -> None:
    """run --gpus: the second GPU of a host leaves the host-bound benchmarks to the first; its
    run pools beside the first's, not alone (the pooled context is the whole run's)."""
    on = {results.HOST_BOUND_ON_KEY: "GPU 0 (NVIDIA H100, GPU-card-0)"}
    fam1 = {n: t for n, t in suite(seed=7).items() if n.startswith("fam1/")}
    second = write_json("gpu1.json", fam1, context=context(gpu_uuid="GPU-card-1", **on))
    done = run_cli("baseline", "update", second, "--baselines", root)
    assert done.status == 2 and not (root / SLUG).exists()
    assert (
        "ran a part of the suite (the host-bound benchmarks left to GPU 0 (NVIDIA H100, "
        "GPU-card-0)); pool it with a run that measured them"
    ) in one_line(done.err)
    first = write_json("gpu0.json", suite(), context=context(gpu_uuid="GPU-card-0"))
    done = run_cli("baseline", "update", second, first, "--baselines", root)
    assert done.status == 0, done.err
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert manifest["benchmarks"] == len(SUITE)
    pooled = json.loads((root / SLUG / "result.json").read_text())["context"]
    assert results.HOST_BOUND_ON_KEY not in pooled and pooled["gpu_uuid"] == "GPU-card-0"


def test_a_whole_update_that_drops_benchmarks_needs_drop_missing(
    root: Path, write_json, run_cli
) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = (root / SLUG / "result.json").read_bytes()
    kept = dict(list(suite(seed=7).items())[:2])
    fewer = write_json("f.json", kept, context=context())
    done = run_cli("baseline", "update", fewer, "--baselines", root)
    assert done.status == 2 and done.out == ""
    line = one_line(done.err)
    dropped = list(SUITE)[2:]
    assert f"would drop {len(dropped)} benchmark(s) the baseline holds" in line
    assert f"({', '.join(dropped[:3])}, ...)" in line and "--drop-missing" in line
    assert (root / SLUG / "result.json").read_bytes() == before
    done = run_cli(
        "baseline",
        "update",
        fewer,
        "--drop-missing",
        "--filter",
        ".",
        "--baselines",
        root,
    )
    assert done.status == 2 and "--drop-missing: only for a whole update" in one_line(done.err)
    done = run_cli("baseline", "update", fewer, "--drop-missing", "--baselines", root)
    assert done.status == 0, done.err
    assert "REMOVED" in done.out
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert manifest["benchmarks"] == 2
    noise = json.loads((root / SLUG / "noise.json").read_text())["benchmarks"]
    assert sorted(noise) == sorted(kept)


def test_a_models_folder_given_as_the_baselines_is_refused(root: Path, write_json, run_cli) -> None:
    """`--baselines baselines/<slug>` made a second baseline inside the first (CLI audit of
    2026-11-30)."""
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    inner = root / SLUG
    before = sorted(p.name for p in inner.iterdir())
    done = run_cli("baseline", "update", result, "--baselines", inner)
    assert done.status == 2 and "is one GPU model's baseline" in one_line(done.err), done.err
    assert sorted(p.name for p in inner.iterdir()) == before


def test_a_run_given_twice_is_refused(root: Path, tmp_path: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    (tmp_path / "link.json").symlink_to(result)
    (tmp_path / "sub").mkdir()
    copy = write_json("copy.json", result.read_text())
    started = context(kernelwatch_run_started="2026-11-21T05:40:00+00:00")
    one = write_json("one.json", suite(), context=started)
    reformatted = write_json("again.json", json.dumps(json.loads(one.read_text()), indent=None))
    cases = [
        ((result, result), f"{result}: given twice; "),
        ((result, tmp_path / "link.json"), f"given twice (the same file as {result})"),
        (
            (result, tmp_path / "sub" / ".." / "r.json"),
            f"given twice (the same file as {result})",
        ),
        ((result, copy), f"{copy}: given twice (the same run as {result})"),
        ((one, reformatted), f"{reformatted}: given twice (the same run as {one})"),
    ]
    for paths, said in cases:
        done = run_cli("baseline", "update", *paths, "--baselines", root)
        assert done.status == 2 and said in one_line(done.err), (paths, done.err)
    assert not any(root.iterdir())
    other = write_json("two.json", suite(seed=3), context=context(gpu_uuid="GPU-other"))
    done = run_cli("baseline", "update", result, other, "--baselines", root)  # two runs: pooled
    assert done.status == 0, done.err


def card(number: int, host: str = "host-a", **changes: str) -> dict:
    """A run's context on card `number` of `host` (the set of GPUs NVML sees names a host)."""
    return context(
        **{
            "gpu_uuid": f"GPU-card-{number}",
            "host_gpu_uuids": host,
            "kernelwatch_run_started": f"2026-11-21T05:4{number}:00+00:00",
            **changes,
        }
    )


def test_update_says_how_many_cards_and_hosts_its_runs_came_from(
    root: Path, write_json, run_cli
) -> None:
    """The card and host spreads are measured between distinct cards and hosts (noise.py): the
    count is what a pool holds, whatever the number of files."""
    runs = [
        write_json("r1.json", suite(seed=1), context=card(1)),
        write_json("r2.json", suite(seed=2), context=card(2)),
        write_json("r3.json", suite(seed=3), context=card(3, host="host-b")),
    ]
    done = run_cli("baseline", "update", *runs, "--baselines", root, "--dry-run")
    assert done.status == 0 and done.err == "", done.err
    assert "\nruns: 3 on 3 card(s) of 2 host(s)\n" in done.out
    one = run_cli("baseline", "update", runs[0], "--baselines", root, "--dry-run")
    assert one.status == 0 and "\nruns: 1 on 1 card(s) of 1 host(s)\n" in one.out


def test_a_run_merged_from_several_cards_is_said_to_pool_as_one(
    root: Path, write_json, run_cli
) -> None:
    """`merge` of a `run --gpus all` names every part's card in one gpu_uuid; pooled, the
    result is one run, so the spread between its cards goes unmeasured: update says so."""
    merged = write_json(
        "merged.json", suite(seed=1), context=card(1, gpu_uuid="GPU-card-1,GPU-card-2")
    )
    other = write_json("r3.json", suite(seed=3), context=card(3, host="host-b"))
    done = run_cli("baseline", "update", merged, other, "--baselines", root, "--dry-run")
    assert done.status == 0, done.err
    assert (
        f"\nruns: 2 on 2 card(s) of 2 host(s); {merged} was merged from the runs of 2 cards and "
        "pools as one, the spread between them unmeasured: pool the files it was merged from "
        "instead\n"
    ) in done.out


def test_one_card_run_twice_is_said_and_refused_where_cards_must_be_distinct(
    root: Path, write_json, run_cli
) -> None:
    """The baseline workflow's runs are meant to be one card each; where a model has fewer
    runners than runs, one runner measures twice, and its two runs pool as more processes of one
    card: no spread between cards comes of them."""
    first = write_json("r1.json", suite(seed=1), context=card(1))
    again = write_json(
        "r2.json",
        suite(seed=2),
        context=card(1, kernelwatch_run_started="2026-11-21T06:00:00+00:00"),
    )
    other = write_json("r3.json", suite(seed=3), context=card(3, host="host-b"))
    done = run_cli("baseline", "update", first, again, other, "--baselines", root, "--dry-run")
    assert done.status == 0, done.err
    assert (
        f"\nruns: 3 on 2 card(s) of 2 host(s); {again} is of {first}'s card (GPU-card-1): one "
        "card's runs pool as more processes of it, not as another card\n"
    ) in done.out
    refused = run_cli(
        "baseline", "update", first, again, other, "--distinct-cards", "--baselines", root
    )
    assert refused.status == 2 and refused.out == ""
    assert one_line(refused.err) == (
        f"kernelwatch: error: {again}: measured on the card of {first} (GPU-card-1); "
        "--distinct-cards: each run on a card of its own (run the baseline workflow with at "
        "most as many runs as the model has runners, or pool them without --distinct-cards)"
    )
    assert not any(root.iterdir())
    unnamed = {k: v for k, v in card(4).items() if k != "gpu_uuid"}
    nameless = write_json("r4.json", suite(seed=4), context=unnamed)
    refused = run_cli(
        "baseline", "update", first, nameless, "--distinct-cards", "--baselines", root
    )
    assert refused.status == 2 and (
        f"{nameless}: names no card (no gpu_uuid in its context); --distinct-cards"
        in one_line(refused.err)
    )
    done = run_cli("baseline", "update", first, other, "--distinct-cards", "--baselines", root)
    assert done.status == 0, done.err
    assert "runs: 2 on 2 card(s) of 2 host(s)\n" in done.out


NOT_MEASURED = (
    "the minimum of 10 repetitions a benchmark (--min-repetitions) is not derived from a "
    "measurement"
)


def test_the_default_minimum_of_repetitions_says_it_is_not_measured(
    root: Path, write_json, run_cli
) -> None:
    result = write_json("r.json", suite(), context=context())
    done = run_cli("baseline", "update", result, "--baselines", root, "--dry-run")
    assert done.status == 0 and done.out.count(NOT_MEASURED) == 1, done.out
    told = run_cli(
        "baseline", "update", result, "--min-repetitions", "10", "--baselines", root, "--dry-run"
    )
    assert told.status == 0 and NOT_MEASURED not in told.out + told.err
    few = write_json("few.json", suite(n=5), context=context())
    refused = run_cli("baseline", "update", few, "--baselines", root)
    assert refused.status == 2 and NOT_MEASURED in one_line(refused.err)
    refused = run_cli("baseline", "update", few, "--min-repetitions", "8", "--baselines", root)
    assert refused.status == 2 and NOT_MEASURED not in one_line(refused.err)


def test_a_missing_baselines_folder_is_refused(tmp_path: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    for extra in ([], ["--dry-run"]):
        done = run_cli("baseline", "update", result, *extra, "--baselines", tmp_path / "typo" / "b")
        assert done.status == 2
        assert "--baselines " + str(tmp_path / "typo" / "b") + ": no such folder" in one_line(
            done.err
        )
    assert not (tmp_path / "typo").exists()
    done = run_cli("baseline", "update", result, "--baselines", result)
    assert done.status == 2 and f"--baselines {result}: not a folder" in one_line(done.err)


def test_only_the_checkouts_baselines_folder_may_be_made(tmp_path: Path) -> None:
    assert baselines.may_create_root(None)
    assert baselines.may_create_root(str(baselines.default_root()))
    assert not baselines.may_create_root(str(tmp_path / "baselines"))


def test_a_time_infinite_in_ns_is_refused(root: Path, write_json, run_cli) -> None:
    document = json.loads(write_json("r.json", suite(), context=context()).read_text())
    next(r for r in document["benchmarks"] if r["run_type"] == "iteration")["real_time"] = 1e308
    huge = write_json("huge.json", json.dumps(document))  # 1e308 us: finite as read
    done = run_cli("baseline", "update", huge, "--baselines", root)
    assert done.status == 2
    assert f"{huge}: fam0/bench/0/manual_time: real_time is inf ns" in one_line(done.err)
    assert not any(root.iterdir())


def test_updates_of_one_baselines_folder_run_one_after_the_other(
    tmp_path: Path, write_json
) -> None:
    """A second `baseline update` waits for the first, also where the checkout has no
    baselines/ yet: the first locked the checkout then (the folder's nearest ancestor), a second
    started after baselines/ was made locked baselines/, and both built on the old baseline.
    The update makes baselines/ first and locks it, never the checkout."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    first = write_json("r1.json", suite(), context=context())
    second = write_json("r2.json", suite(seed=3), context=context(gpu_uuid="GPU-other"))
    held = os.open(checkout, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = run_module("baseline", "update", first, cwd=checkout, timeout=60)
    finally:
        os.close(held)
    assert done.returncode == 0 and "waiting" not in done.stderr, done.stderr
    held = os.open(checkout / "baselines", os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen(
            [sys.executable, "-m", "kernelwatch", "baseline", "update", str(second), first],
            cwd=checkout,
            env=dict(os.environ, PYTHONPATH=str(REPO / "tools")),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiting.stderr is not None
        said = waiting.stderr.readline()
        assert "waiting for another kernelwatch command writing in" in said, said
        assert waiting.poll() is None
    finally:
        os.close(held)
    assert waiting.wait(timeout=60) == 0, waiting.stderr.read()
    manifest = json.loads((checkout / "baselines" / SLUG / "manifest.json").read_text())
    assert len(manifest["history"]) == 2


def test_update_is_atomic(root: Path, write_json, run_cli, monkeypatch) -> None:
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = (root / SLUG / "result.json").read_bytes()

    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    second = write_json("r2.json", suite(seed=3), context=context())
    done = run_cli("baseline", "update", second, "--baselines", root)
    assert done.status == 2 and "No space left on device" in done.err.splitlines()[-1]
    assert (root / SLUG / "result.json").read_bytes() == before
    assert sorted(os.listdir(root / SLUG)) == [
        "manifest.json",
        "noise.json",
        "result.json",
    ]
    assert sorted(os.listdir(root)) == [SLUG]  # no staging folder left beside it


# --- list and show ----------------------------------------------------------------------------


def test_list_and_show(root: Path, write_json, run_cli) -> None:
    empty = run_cli("baseline", "list", "--baselines", root)
    assert empty.status == 0 and "no baselines in" in empty.out
    for missing in (root / "typo", root / "typo.json"):
        if missing.suffix:
            missing.write_text("{}")
        done = run_cli("baseline", "list", "--baselines", missing)
        assert done.status == 2 and done.out == ""
        what = "not a folder" if missing.suffix else "no such folder"
        assert f"{missing}: {what}, so no baselines" in one_line(done.err)
    (root / "typo.json").unlink()
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    h200 = write_json("h.json", suite(), context=context(gpu_name="NVIDIA H200"))
    assert run_cli("baseline", "update", h200, "--baselines", root).status == 0
    listing = run_cli("baseline", "list", "--baselines", root)
    lines = listing.out.splitlines()
    assert lines[0].split() == ["SLUG", "GPU", "BENCHMARKS", "COMMIT", "DATE"]
    assert lines[1].startswith(SLUG) and "NVIDIA H100 80GB HBM3 (sm 9.0)" in lines[1]
    assert "6" in lines[1].split() and "0123456789ab" in lines[1]
    assert lines[2].startswith("nvidia-h200-sm90")
    for which in (SLUG, str(result)):
        shown = run_cli("baseline", "show", which, "--baselines", root)
        assert shown.status == 0
        assert shown.out.startswith(f"baseline {SLUG}")
        assert "benchmarks    6, repetitions 10" in shown.out
        assert "families      fam0 3, fam1 3" in shown.out
        assert "updates       1" in shown.out


def test_show_unknown(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    done = run_cli("baseline", "show", "nvidia-h200-sm90", "--baselines", root)
    assert done.status == 2
    assert f"no baseline nvidia-h200-sm90: available in {root}: {SLUG}" in one_line(done.err)
    nogpu = write_json("n.json", suite(), context={"host_name": "x"})
    done = run_cli("baseline", "show", nogpu, "--baselines", root)
    assert done.status == 2 and "records no GPU" in one_line(done.err)


def test_baseline_without_action_names_the_actions_in_one_line(run_cli) -> None:
    done = run_cli("baseline")
    assert done.status == 2 and "baseline: name an action: update, list, show" in one_line(done.err)


@pytest.mark.parametrize("action", ["update", "list", "show"])
def test_help_of_actions(action: str, run_cli) -> None:
    done = run_cli("baseline", action, "--help")
    assert done.status == 0 and f"usage: kernelwatch baseline {action}" in done.out
    assert "exit status" in done.out


# --- the stored noise -------------------------------------------------------------------------


def two_processes(spec: dict, **changes: str) -> dict:
    """A result as `kernelwatch run --processes 2` writes it: the first half of each
    benchmark's repetitions from process 1, the second from process 2."""
    doc = document(spec, context=context(**changes), aggregates=False)
    for row in doc["benchmarks"]:
        row["kernelwatch_process"] = 1 if row["repetition_index"] < row["repetitions"] // 2 else 2
    return doc


def spread(shift: float) -> dict:
    """SUITE with the second process of fam1/bench/5 `shift` slower."""
    out = suite()
    name = "fam1/bench/5/manual_time"
    out[name] = out[name][:5] + [t * (1 + shift) for t in out[name][5:]]
    return out


def test_update_stores_each_benchmarks_noise(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", two_processes(spread(0.02)))
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 0 and done.err == "", done.err
    assert "noise.json" in done.out
    stored = json.loads((root / SLUG / "noise.json").read_text())
    assert (
        stored["schema_version"] == 2 and stored["commit"] == GPU_CONTEXT["kernelwatch_git_commit"]
    )
    assert sorted(stored["benchmarks"]) == sorted(SUITE)
    noisy = stored["benchmarks"]["fam1/bench/5/manual_time"]
    assert noisy["processes"] == 2 and noisy["repetitions"] == 10
    assert noisy["between_processes"] == pytest.approx(0.02 / math.sqrt(2), rel=0.15)
    assert noisy["noise"] >= noisy["between_processes"]
    quiet = stored["benchmarks"]["fam0/bench/0/manual_time"]
    assert quiet["noise"] < 0.005
    manifest = json.loads((root / SLUG / "manifest.json").read_text())
    assert manifest["processes"] == 2 and manifest["noise_file"] == "noise.json"


def test_a_one_process_result_is_warned_about(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 0 and "come from one process only" in done.err
    assert "--processes 2" in done.err


def test_a_partial_update_of_a_pool_needs_its_runs_process_counts(
    root: Path, write_json, run_cli
) -> None:
    """The kept rows keep their process numbers: runs of one process each would have given the
    second card's kept rows (processes 3-4) to no run, and its first process to the first card."""

    def runs(processes: int, seed: int) -> list[Path]:
        made = []
        for card in (0, 1):
            spec, changes = suite(seed=seed + card), {"gpu_uuid": f"GPU-card-{card}"}
            doc = (
                two_processes(spec, **changes)
                if processes == 2
                else document(spec, context=context(**changes), aggregates=False)
            )
            made.append(write_json(f"r{processes}-{seed}-{card}.json", doc))
        return made

    assert run_cli("baseline", "update", *runs(2, 0), "--baselines", root).status == 0
    before = {p.name: p.read_bytes() for p in (root / SLUG).iterdir()}
    done = run_cli("baseline", "update", *runs(1, 7), "--filter", "^fam0/", "--baselines", root)
    assert done.status == 2
    assert "its runs have [1, 1] process(es), the baseline's [2, 2]" in one_line(done.err)
    assert {p.name: p.read_bytes() for p in (root / SLUG).iterdir()} == before
    done = run_cli("baseline", "update", *runs(2, 7), "--filter", "^fam0/", "--baselines", root)
    assert done.status == 0, done.err


def test_partial_update_keeps_the_others_noise(root: Path, write_json, run_cli) -> None:
    first = write_json("r1.json", two_processes(spread(0.02)))
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = json.loads((root / SLUG / "noise.json").read_text())["benchmarks"]
    second = write_json("r2.json", two_processes(suite(seed=7)))
    done = run_cli("baseline", "update", second, "--filter", "^fam0/", "--baselines", root)
    assert done.status == 0, done.err
    after = json.loads((root / SLUG / "noise.json").read_text())["benchmarks"]
    fam1 = [n for n in SUITE if n.startswith("fam1/")]
    assert {n: after[n] for n in fam1} == {n: before[n] for n in fam1}
    assert after["fam0/bench/0/manual_time"] != before["fam0/bench/0/manual_time"]


def test_show_lists_the_noise(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", two_processes(spread(0.02)))
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    shown = run_cli("baseline", "show", SLUG, "--baselines", root)
    assert shown.status == 0
    assert "noise         noise.json: 6 of 6 benchmarks, from 2 processes each" in shown.out
    lines = shown.out.splitlines()
    fam1 = next(line for line in lines if line.strip().startswith("fam1 "))
    assert "median" in fam1 and "max 1." in fam1
    noisiest = lines[lines.index("  noisiest") + 2]
    assert noisiest.endswith("fam1/bench/5/manual_time")
    every = run_cli("baseline", "show", SLUG, "--noise", "--baselines", root).out.splitlines()
    assert len(every) == len(lines) - 5 + 6


def test_show_says_when_no_noise_is_stored(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    (root / SLUG / "noise.json").unlink()
    shown = run_cli("baseline", "show", SLUG, "--baselines", root)
    assert shown.status == 0 and "none stored" in shown.out


def test_compare_uses_the_noise_stored_beside_the_baseline(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", two_processes(spread(0.02)))
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    name = "fam1/bench/5/manual_time"
    slower = suite()
    slower[name] = [t * 1.03 for t in slower[name]]
    contender = write_json("c.json", two_processes(slower))
    base = root / SLUG / "result.json"

    def verdict(*extra: object) -> tuple[str, float]:
        done = run_cli("compare", base, contender, "--format", "json", *extra)
        assert done.status in (0, 1), done.err
        found = {b["name"]: b for b in json.loads(done.out)["benchmarks"]}[name]
        return found["verdict"], found["noise_floor"]

    stored = json.loads((root / SLUG / "noise.json").read_text())["benchmarks"][name]["noise"]
    found, floor = verdict()
    assert floor == pytest.approx(DEFAULT_NOISE_MULTIPLIER * stored) and found == "SAME"
    (root / SLUG / "custom.json").write_text(
        json.dumps({"schema_version": 1, "benchmarks": {name: {"noise": 0.0001}}})
    )
    found, floor = verdict("--noise-file", root / SLUG / "custom.json")
    assert found == "REGRESSION" and floor < 0.01
    found, floor = verdict("--no-noise-file")
    assert floor != pytest.approx(DEFAULT_NOISE_MULTIPLIER * stored)
    done = run_cli("compare", base, contender, "--noise-file", root / "absent.json")
    assert done.status == 2 and "--noise-file" in one_line(done.err)


def test_compare_names_a_noise_file_that_is_a_device(write_json, run_cli) -> None:
    # `--noise-file /dev/zero` said "no such file", where /dev/zero is there: a device.
    result = write_json("r.json", two_processes(suite()))
    done = run_cli("compare", result, result, "--noise-file", "/dev/zero")
    assert done.status == 2 and done.out == ""
    assert one_line(done.err) == (
        "kernelwatch: error: /dev/zero: a character device, not a kernelwatch noise file"
    )


def test_compare_ignores_a_noise_file_of_another_commit(root: Path, write_json, run_cli) -> None:
    result = write_json("r.json", two_processes(suite()))
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    noise_path = root / SLUG / "noise.json"
    data = json.loads(noise_path.read_text())
    noise_path.write_text(json.dumps({**data, "commit": "f" * 40}))
    done = run_cli("compare", root / SLUG / "result.json", result)
    assert done.status == 0 and "its noise is not used" in done.err


def test_a_baseline_folder_reads_as_its_result_only(tmp_path: Path) -> None:
    """`run --baseline DIR` and `report --baseline DIR`: manifest.json and noise.json are
    beside the result and must not be read as results (their `benchmarks` is a count / map).
    """
    folder = tmp_path / SLUG
    folder.mkdir()
    synthetic.write(
        folder / "result.json",
        synthetic.document(
            synthetic.benchmark_rows("BM_a/manual_time", [1.0, 1.1, 1.2]), GPU_CONTEXT
        ),
    )
    (folder / "manifest.json").write_text(json.dumps({"benchmarks": 1}))
    (folder / "noise.json").write_text(json.dumps({"benchmarks": {"BM_a/manual_time": {}}}))
    documents = baselines.result_documents(folder)
    assert len(documents) == 1 and documents[0]["benchmarks"][0]["name"].startswith("BM_a")
    with pytest.raises(InputError, match="holds no benchmark results"):
        baselines.result_documents(tmp_path)


def test_an_update_from_fewer_cards_than_the_pool_warns(root: Path, write_json, run_cli) -> None:
    pool = [
        write_json(f"r{i}.json", suite(seed=i), context=context(gpu_uuid=f"GPU-card-{i}"))
        for i in range(3)
    ]
    assert run_cli("baseline", "update", *pool, "--baselines", root).status == 0
    one = write_json("one.json", suite(seed=9), context=context(gpu_uuid="GPU-card-9"))
    done = run_cli("baseline", "update", one, "--baselines", root, "--dry-run")
    assert done.status == 0, done.err
    assert (
        f"warning: {one}: the baseline was pooled from 3 run(s) on 3 card(s) of 1 host(s), this "
        "update from 1 run(s) on 1 card(s) of 1 host(s)"
    ) in done.err
    again = run_cli("baseline", "update", *pool, "--baselines", root, "--dry-run")
    assert again.status == 0 and "pooled from" not in again.err


def test_show_names_every_level_the_committed_h200_baseline_measured(run_cli) -> None:
    """baselines/README.md: every level measured, the card level by the GPUs of four
    multi-GPU hosts (never, before 3409419's pool); the kind level (shown, no longer a level
    compare judges at) was left unsaid."""
    done = run_cli("baseline", "show", "nvidia-h200-sm90", "--baselines", REPO / "baselines")
    assert done.status == 0, done.err
    line = next(text.strip() for text in done.out.splitlines() if text.strip().startswith("levels"))
    assert line == (
        "levels        process: measured; card: measured (24 cards); kind: measured (between "
        "the cards of one kind; compare holds a card to the host level); "
        "host: measured (18 hosts)"
    )


@pytest.mark.parametrize(
    ("slug", "hosts", "varied", "said"),
    [
        (
            "nvidia-h200-sm90",
            {"one-GPU": 14, "multi-GPU": 4},
            {"one-GPU": ["host_os_kernel"], "multi-GPU": ["host_cpu_cores", "host_gpu_count"]},
            (
                "18: 14 one-GPU, 4 multi-GPU; a runner is judged against the pool centred on its "
                'class of host (docs/measurement.md, "Classes of host")',
                "one-GPU hosts: host_os_kernel; multi-GPU hosts: host_cpu_cores, host_gpu_count "
                "(a runner unlike every host of its class in another key is held to the host "
                "prior: docs/compare.md)",
            ),
        ),
        (
            "nvidia-h100-80gb-hbm3-sm90",
            {"one-GPU": 3, "multi-GPU": 1},
            None,
            (
                "4: 3 one-GPU, 1 multi-GPU; a runner is judged against the pool centred on its "
                'class of host (docs/measurement.md, "Classes of host")',
                "not listed (pooled before its runs listed their configuration): a runner "
                "configured unlike every host in any key is held to the host prior "
                "(docs/compare.md)",
            ),
        ),
    ],
)
def test_show_says_how_a_runner_of_each_class_of_host_is_judged(
    run_cli, slug: str, hosts: dict[str, int], varied: dict | None, said: tuple[str, str]
) -> None:
    """compare centres a pool on a runner's class of host where it holds both classes
    (docs/measurement.md, "Classes of host"), and judges a runner on a host kernel the pool
    never ran at the pool's spread where its hosts of that class ran two (levels.varied_keys),
    else at the host prior: whether a team's runners get either is read here."""
    root = REPO / "baselines"
    done = run_cli("baseline", "show", slug, "--baselines", root)
    lines = {t.strip()[:14]: t.strip()[14:] for t in done.out.splitlines()}
    assert (lines["hosts         "], lines["varied        "]) == said
    shown = json.loads(
        run_cli("baseline", "show", slug, "--baselines", root, "--format", "json").out
    )
    assert (shown["hosts"], shown["varied"]) == (hosts, varied)


def test_a_whole_baseline_file_is_one_side_read_in_parts(tmp_path: Path) -> None:
    """report and run take a baseline file whole as one side read a part of its rows at a time
    (a pooled baseline's rows as dicts were 1.3 GB): the side its documents give."""
    pytest.importorskip(
        "orjson",
        reason="a file is read in parts with orjson (tools/kw setup installs it)",
    )
    from kernelwatch.loading import from_documents

    given = REPO / "baselines" / "nvidia-h200-sm90" / "result.json.gz"
    found = baselines.against(tmp_path, {}, "run.json", given=given)
    assert found.whole is not None and found.read is None
    side = from_documents(found.label, found.documents)
    assert (found.whole.label, found.whole.paths, found.whole.names) == (
        side.label,
        side.paths,
        side.names,
    )
    assert dict(found.whole.context) == dict(side.context) and found.whole.notes == side.notes
    assert np.array_equal(found.whole.processes, side.processes)
    for key, column in side.columns.items():
        assert np.array_equal(found.whole.columns[key], column, equal_nan=True)


def test_list_and_show_as_json_hold_what_the_tables_say(run_cli) -> None:
    """The committed baselines: `--format json` is one document with the table's facts."""
    root = REPO / "baselines"
    table = run_cli("baseline", "list", "--baselines", root)
    assert run_cli("baseline", "list", "--baselines", root, "--format", "table").out == table.out
    done = run_cli("baseline", "list", "--baselines", root, "--format", "json")
    assert done.status == 0 and done.err == "", done.err
    listed = json.loads(done.out)  # one document, nothing else on stdout
    assert listed["schema_version"] == 1 and listed["command"] == "baseline list"
    rows = table.out.splitlines()[1:]
    assert [b["slug"] for b in listed["baselines"]] == [row.split()[0] for row in rows]
    for row, entry in zip(rows, listed["baselines"]):
        assert entry["gpu"] in row and f"  {entry['benchmarks']}  " in row
        assert entry["commit"][:12] in row and row.endswith(entry["date"])
        assert len(entry["commit"]) == 40 and entry["has_manifest"]
    for entry in listed["baselines"]:
        slug = entry["slug"]
        text = run_cli("baseline", "show", slug, "--baselines", root).out
        done = run_cli("baseline", "show", slug, "--baselines", root, "--format", "json")
        assert done.status == 0 and done.err == "", done.err
        shown = json.loads(done.out)
        assert shown["schema_version"] == 1 and shown["command"] == "baseline show"
        assert (shown["slug"], shown["gpu"]) == (slug, entry["gpu"])
        assert shown["benchmarks"] == entry["benchmarks"]
        assert shown["manifest"]["commit"] == entry["commit"]
        for key, label in (("driver", "driver"), ("cuda_runtime", "CUDA runtime")):
            assert f"  {label:<12}  {shown['manifest'][key]}\n" in text
        repetitions = shown["repetitions"]
        assert f"benchmarks    {shown['benchmarks']}, repetitions {repetitions['min']}" in text
        families = ", ".join(f"{f} {n}" for f, n in shown["families"].items())
        assert f"families      {families}\n" in text
        assert sum(shown["families"].values()) == shown["benchmarks"]
        assert f"updates       {len(shown['updates'])}\n" in text
        if shown["noise"] is None:
            assert "noise         none stored" in text
            continue
        noise = shown["noise"]["benchmarks"]
        assert f"noise.json: {len(noise)} of {shown['benchmarks']} benchmarks" in text
        noisiest = max(noise, key=lambda name: noise[name]["noise"])
        every = run_cli("baseline", "show", slug, "--noise", "--baselines", root).out
        assert every.splitlines()[-len(noise)].endswith(noisiest)
    assert any(
        json.loads(
            run_cli("baseline", "show", e["slug"], "--baselines", root, "--format", "json").out
        )["noise"]
        for e in listed["baselines"]
    )


def test_json_of_no_baselines_and_bad_format(root: Path, run_cli) -> None:
    done = run_cli("baseline", "list", "--baselines", root, "--format", "json")
    assert done.status == 0 and json.loads(done.out)["baselines"] == []
    for args in (("list",), ("show", SLUG)):
        done = run_cli("baseline", *args, "--baselines", root, "--format", "yaml")
        assert done.status == 2 and done.out == ""
        one_line(done.err)
    done = run_cli("baseline", "show", SLUG, "--baselines", root, "--format", "json")
    assert done.status == 2 and done.out == "" and f"no baseline {SLUG}" in one_line(done.err)


def test_a_noise_file_of_another_gpu_model_is_not_used(root: Path, write_json, run_cli) -> None:
    """noise.json named no GPU model: `--noise-file` of another model's baseline at the same
    commit gave its spreads to this one without a word. It names its model now, and one of
    another model is not used, as one of another commit is not."""
    result = write_json("r.json", two_processes(spread(0.02)))
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    stored = json.loads((root / SLUG / "noise.json").read_text())
    assert stored["gpu_model"] == "NVIDIA H100 80GB HBM3 (sm 9.0)"
    other = root / "other-noise.json"
    other.write_text(json.dumps({**stored, "gpu_model": "NVIDIA A100-SXM4-80GB (sm 8.0)"}))
    base = root / SLUG / "result.json"
    done = run_cli("compare", base, result, "--noise-file", other, "--format", "json")
    assert done.status == 0, done.err
    assert "NVIDIA A100-SXM4-80GB (sm 8.0)" in done.err and "not used" in done.err, done.err
    used = run_cli("compare", base, result, "--noise-file", root / SLUG / "noise.json")
    assert used.status == 0 and "not used" not in used.err, used.err
