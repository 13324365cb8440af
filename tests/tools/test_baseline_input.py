"""`kernelwatch baseline` given damaged or mistaken input: each refused in one line, the
baselines folder left as it was."""

from __future__ import annotations

import gzip
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from test_baseline import SLUG, card, context, one_line, suite


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "baselines"
    folder.mkdir()
    return folder


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("failed", [5, "oops", {"process": "./b"}])
def test_a_failed_processes_record_of_another_shape_is_refused_in_one_line(
    failed: Any, root: Path, write_json, run_cli
) -> None:
    """A number there stopped the update with "internal error: TypeError" (len of an int)."""
    result = write_json(
        "r.json", suite(), context={**context(), "kernelwatch_failed_processes": failed}
    )
    done = run_cli("baseline", "update", result, "--baselines", root)
    assert done.status == 2 and done.out == ""
    line = one_line(done.err)
    assert f"{result}: 1 of its benchmark processes failed (kernelwatch_failed_processes: " in line
    assert not any(root.iterdir())


@pytest.mark.parametrize("process", [[1], {"a": 1}, "x", None, 1.5, True])
def test_pooled_runs_whose_process_is_not_a_number_are_refused_in_one_line(
    process: Any, root: Path, write_json, run_cli
) -> None:
    """A list or an object there stopped the update with "internal error: TypeError: unhashable
    type"; the others were pooled as processes no run has."""
    first = write_json("r1.json", suite(seed=1), context=card(1))
    document = json.loads(write_json("r2.json", suite(seed=2), context=card(2)).read_text())
    document["benchmarks"][3]["kernelwatch_process"] = process
    second = write_json("r2.json", json.dumps(document))
    before = first.read_bytes()
    done = run_cli("baseline", "update", first, second, "--baselines", root)
    assert done.status == 2 and done.out == ""
    name = document["benchmarks"][3]["run_name"]
    assert f"{second}: {name}: kernelwatch_process is {process!r}, not a process number" in (
        one_line(done.err)
    )
    assert not any(root.iterdir()) and first.read_bytes() == before


def test_a_baselines_link_to_a_missing_folder_is_refused_in_one_line(
    tmp_path: Path, write_json, run_cli, monkeypatch
) -> None:
    """The checkout's own baselines/ (which update may make) as a dangling link said only
    "baselines: File exists", and --dry-run passed."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "baselines").symlink_to(tmp_path / "gone")
    result = write_json("r.json", suite(), context=context())
    monkeypatch.chdir(checkout)
    for extra in ([], ["--dry-run"]):
        done = run_cli("baseline", "update", result, *extra)
        assert done.status == 2 and done.out == ""
        assert f"--baselines {checkout / 'baselines'}: a link to a missing folder" in one_line(
            done.err
        )
    assert not (tmp_path / "gone").exists()


def test_a_partial_update_from_another_card_says_the_cards_differ(
    root: Path, write_json, run_cli
) -> None:
    """Both sides were said alike, "1 run(s) on 1 card(s) of 1 host(s), the baseline 1 run(s)
    on 1 card(s) of 1 host(s)", and nothing said why they were refused."""
    first = write_json("r1.json", suite(seed=1), context=card(1))
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = contents(root)
    other = write_json("r2.json", suite(seed=2), context=card(2))
    done = run_cli("baseline", "update", other, "--filter", "^fam0/", "--baselines", root)
    assert done.status == 2 and done.out == ""
    assert (
        f"{other}: 1 run(s) on 1 card(s) of 1 host(s), the baseline 1 run(s) on 1 card(s) of 1 "
        "host(s), but other cards: a partial update (--filter)"
    ) in one_line(done.err)
    moved = write_json("r3.json", suite(seed=3), context=card(1, host="host-b"))
    done = run_cli("baseline", "update", moved, "--filter", "^fam0/", "--baselines", root)
    assert done.status == 2 and ", but other hosts: a partial update" in one_line(done.err)
    assert contents(root) == before


@pytest.mark.parametrize("make", ["missing", "file"])
def test_show_names_a_baselines_folder_that_is_not_one(make: str, tmp_path: Path, run_cli) -> None:
    """A mistyped --baselines was said to hold no baselines, as an empty folder does."""
    given = tmp_path / "typo"
    if make == "file":
        given.write_text("")
    done = run_cli("baseline", "show", SLUG, "--baselines", given)
    said = "no such folder" if make == "missing" else "not a folder"
    assert done.status == 2 and done.out == ""
    assert one_line(done.err) == f"kernelwatch: error: no baseline {SLUG}: {given}: {said}"


def test_an_empty_filter_is_refused_not_taken_for_a_whole_update(
    root: Path, write_json, run_cli
) -> None:
    """`--filter "$UNSET"` was taken as no filter: with --drop-missing, a whole update that
    removed every benchmark the result lacks, exit 0."""
    first = write_json("r1.json", suite(), context=context())
    assert run_cli("baseline", "update", first, "--baselines", root).status == 0
    before = contents(root)
    fam0 = {n: t for n, t in suite(seed=7).items() if n.startswith("fam0/")}
    part = write_json("p.json", fam0, context=context(gpu_uuid="GPU-other"))
    for extra in ([], ["--drop-missing"]):
        done = run_cli("baseline", "update", part, "--filter", "", *extra, "--baselines", root)
        assert done.status == 2 and done.out == ""
        assert "argument --filter: an empty value" in one_line(done.err)
    assert contents(root) == before


def test_a_manifest_that_is_a_fifo_is_refused_not_waited_on(
    root: Path, write_json, run_cli
) -> None:
    """A FIFO for manifest.json was opened and read: `baseline list`, `show`, `update` and
    `report` waited for a writer for ever. (Here a writer answers such a read with `{}`, an
    empty manifest, so that the unfixed command ends: it passed as a baseline without one.)"""
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    manifest = root / SLUG / "manifest.json"
    manifest.unlink()
    os.mkfifo(manifest)
    writer = threading.Thread(target=lambda: manifest.write_text("{}"), daemon=True)
    writer.start()
    try:
        for args in (("list",), ("show", SLUG), ("update", result)):
            done = run_cli("baseline", *args, "--baselines", root)
            assert done.status == 2 and done.out == "", (args, done)
            assert one_line(done.err) == (
                f"kernelwatch: error: {manifest}: a FIFO, not a baseline manifest"
            )
    finally:  # (a reader, open until the writer is done, lets its open return)
        reader = os.open(manifest, os.O_RDONLY | os.O_NONBLOCK)
        writer.join()
        os.close(reader)
    assert stat.S_ISFIFO(manifest.lstat().st_mode)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("gpu_name", "NVIDIA " * 700, "a folder name of 4,9"),
        ("gpu_compute_capability", "y" * 5000, "compute capability 'yyy"),
        # within 255, but not with its staging folder's ".<slug>.new-<pid>-<hex>" (an audit)
        ("gpu_name", "a" * 240, "a folder name of 245 characters (at most 233)"),
    ],
)
def test_a_gpu_that_names_no_folder_is_refused_in_a_short_line(
    key: str, value: str, said: str, root: Path, write_json, run_cli
) -> None:
    """A GPU name of thousands of characters named a folder no file system takes ("File name
    too long", the whole path quoted), and a capability without digits was quoted whole: lines
    of 5,000 characters."""
    result = write_json("r.json", suite(), context=context(**{key: value}))
    for args in (("baseline", "update", result, "--baselines", root), ("report", result)):
        out = root.parent / "report.html"
        done = run_cli(*args, *(("--baselines", root, "-o", out) if args[0] == "report" else ()))
        assert done.status == 2 and done.out == "", (args, done)
        line = one_line(done.err)
        assert "cannot name a baseline for GPU " in line and said in line and len(line) < 300, line
        assert not out.exists()
    assert not any(root.iterdir())


def test_a_manifest_that_is_a_dangling_link_is_refused_not_taken_as_none(
    root: Path, write_json, run_cli
) -> None:
    """A manifest.json linked to a file that is gone was read as "no manifest": `list` and
    `show` passed, and `update` wrote a new manifest over the link's place."""
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    manifest = root / SLUG / "manifest.json"
    manifest.unlink()
    manifest.symlink_to(root / "gone.json")
    for args in (("list",), ("show", SLUG), ("update", result)):
        done = run_cli("baseline", *args, "--baselines", root)
        assert done.status == 2 and done.out == "", (args, done)
        assert one_line(done.err).startswith(f"kernelwatch: error: {manifest}: "), done.err
    assert manifest.is_symlink() and not (root / "gone.json").exists()


@pytest.mark.parametrize("kind", ["folder", "dangling link", "FIFO"])
def test_a_noise_file_that_is_not_a_file_is_refused_not_taken_as_none(
    kind: str, root: Path, write_json, run_cli
) -> None:
    """A noise.json beside a baseline that was a folder or a dangling link was taken as no
    noise file, with no word: the verdict fell back to the priors as if none were measured."""
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root).status == 0
    noise = root / SLUG / "noise.json"
    noise.unlink(missing_ok=True)
    {
        "folder": noise.mkdir,
        "dangling link": lambda: noise.symlink_to(root / "gone.json"),
        "FIFO": lambda: os.mkfifo(noise),
    }[kind]()
    for args in (("compare", root / SLUG, result), ("baseline", "show", SLUG, "--baselines", root)):
        done = run_cli(*args)
        assert done.status == 2 and done.out == "", (args, done)
        assert one_line(done.err).startswith(f"kernelwatch: error: {noise}: "), done.err


@pytest.mark.parametrize("kind", ["missing", "JSON null", "folder", "dangling link", "FIFO"])
def test_a_baselines_result_that_is_gone_or_damaged_is_refused_not_taken_as_none(
    kind: str, root: Path, write_json, run_cli
) -> None:
    """A folder whose manifest records a baseline but whose result.json.gz was gone, null, a
    folder or a FIFO was read as "no baseline": `update --filter` wrote a new baseline of the
    one benchmark it was given over the manifest's whole suite ("new baseline: there was
    none for this GPU", exit 0)."""
    result = write_json("r.json", suite(), context=context())
    assert run_cli("baseline", "update", result, "--baselines", root, "--compress").status == 0
    packed = root / SLUG / "result.json.gz"
    packed.unlink()
    {
        "missing": lambda: None,
        "JSON null": lambda: packed.write_bytes(gzip.compress(b"null")),
        "folder": packed.mkdir,
        "dangling link": lambda: packed.symlink_to(root / "gone.json"),
        "FIFO": lambda: os.mkfifo(packed),
    }[kind]()
    before = contents(root)
    name = json.loads(result.read_text())["benchmarks"][0]["run_name"]
    done = run_cli("baseline", "update", result, "--baselines", root, "--filter", f"^{name}$")
    assert done.status == 2 and done.out == "", done
    line = one_line(done.err)
    said = root / SLUG if kind == "missing" else packed
    assert line.startswith(f"kernelwatch: error: {said}"), line
    assert contents(root) == before and sorted(p.name for p in (root / SLUG).iterdir()) == sorted(
        ["manifest.json", "noise.json", *(() if kind == "missing" else ["result.json.gz"])]
    )
