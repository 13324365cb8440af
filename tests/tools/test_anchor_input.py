"""A damaged, mistaken or hostile anchor kept in <checkout>/.kernelwatch/anchors/, and bad
--anchor-max-age values: a kept anchor that is not this run's is measured again with a note
saying why, one the run cannot keep its anchor in leaves the run judged against the committed
baseline with a note, and nothing is lost, hangs or ends in an internal error (anchor.py;
docs/running.md, "Reuse"). The checkout and its fake builds: test_anchor.py."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_anchor import Checkout, checkout, one_error, report_of  # noqa: F401

from kernelwatch import anchor as anchors

LONG = "x" * 5000
SET_ASIDE = "kernelwatch: the kept anchor is not reused: "


def kept_anchor(checkout: Checkout) -> Path:
    """The anchor a first run on another card measured and kept."""
    checkout.anchored_once()
    [path] = (checkout.root / ".kernelwatch" / "anchors").glob("*.json")
    return path


def edited(path: Path, change: Callable[[dict[str, Any]], object]) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def first_row(document: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = document["benchmarks"][0]
    return row


def context(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = document["context"]
    return found


def measured_again(checkout: Checkout, path: Path, tmp_path: Path) -> str:
    """The second run: passes, its anchor measured again and kept in `path` (its stderr)."""
    out = tmp_path / "again.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    assert "Traceback" not in done.err and "internal error" not in done.err, done.err
    assert report_of(done)["notes"][0].startswith(f"anchored on {checkout.a[:12]} (measured by")
    assert all(len(line) < 1000 for line in done.err.splitlines()), done.err
    rewritten = json.loads(path.read_text())
    assert context(rewritten)["kernelwatch_anchor_commit"] == checkout.a
    assert context(rewritten)["gpu_uuid"] == "GPU-other-card"
    return done.err


def said(err: str) -> str:
    [line] = [line for line in err.splitlines() if line.startswith(SET_ASIDE)]
    return line


DAMAGED: dict[str, Callable[[dict[str, Any]], object]] = {
    "context a list": lambda d: d.update(context=[1]),
    "context a text": lambda d: d.update(context=LONG),
    "context a number": lambda d: d.update(context=5),
    "benchmarks null": lambda d: d.update(benchmarks=None),
    "benchmarks a number": lambda d: d.update(benchmarks=5),
    "a run_name a list": lambda d: first_row(d).update(run_name=[1]),
    "a run_name an object": lambda d: first_row(d).update(run_name={"a": 1}),
    "a real_time a text": lambda d: first_row(d).update(real_time="x"),
    "a real_time NaN": lambda d: first_row(d).update(real_time=float("nan")),
    "a real_time negative": lambda d: first_row(d).update(real_time=-5),
    "a time_unit of 5,000 characters": lambda d: first_row(d).update(time_unit=LONG),
    "gpu_uuid a list": lambda d: context(d).update(gpu_uuid=[1]),
    "the date a list": lambda d: context(d).update(kernelwatch_run_started=[1]),
    "no date": lambda d: context(d).pop("kernelwatch_run_started"),
    "a date of 5,000 characters": lambda d: context(d).update(kernelwatch_run_started=LONG),
    "a date without a time zone": lambda d: context(d).update(
        kernelwatch_run_started="2026-01-01T00:00:00"
    ),
}


@pytest.mark.parametrize("change", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_kept_anchor_is_measured_again_with_a_note(
    checkout: Checkout, tmp_path: Path, change: Callable[[dict[str, Any]], object]
) -> None:
    """Was an internal error, an exit 2 losing the verdict, or a silent re-measure (a bad date)."""
    path = kept_anchor(checkout)
    edited(path, change)
    line = said(measured_again(checkout, path, tmp_path))
    assert line.startswith(f"{SET_ASIDE}{path}: "), line


@pytest.mark.parametrize(
    "data",
    [b'{"context": {', b"\x1f\x8b\x08\x00damaged", gzip.compress(b"[1, 2"), b"", b"\xff\xfe"],
    ids=["truncated JSON", "damaged gzip", "gzip of invalid JSON", "empty", "not UTF-8"],
)
def test_an_unreadable_kept_anchor_is_measured_again_and_says_why(
    checkout: Checkout, tmp_path: Path, data: bytes
) -> None:
    """Was measured again without a word of the file set aside."""
    path = kept_anchor(checkout)
    path.write_bytes(data)
    assert said(measured_again(checkout, path, tmp_path)).startswith(f"{SET_ASIDE}{path}: ")


@pytest.mark.parametrize(
    "commit", ["0" * 40, [1], None, 12345, LONG], ids=["another", "list", "null", "number", "long"]
)
def test_a_kept_anchor_of_another_commit_is_not_reused(
    checkout: Checkout, tmp_path: Path, commit: object
) -> None:
    """Was reused: the run judged against another commit's numbers (`anchored on [1]`, ...)."""
    path = kept_anchor(checkout)
    edited(path, lambda d: context(d).update(kernelwatch_anchor_commit=commit))
    line = said(measured_again(checkout, path, tmp_path))
    assert f"not the baseline's commit {checkout.a[:12]}" in line, line
    assert len(line) < 400, line


@pytest.mark.parametrize("card", ["GPU-base-card", None, LONG], ids=["another", "none", "long"])
def test_a_kept_anchor_of_another_card_is_not_reused(
    checkout: Checkout, tmp_path: Path, card: str | None
) -> None:
    """Was reused: the run judged at the process level against another card's numbers."""
    path = kept_anchor(checkout)
    edited(path, lambda d: context(d).update(gpu_uuid=card))
    line = said(measured_again(checkout, path, tmp_path))
    assert "measured on another card or host than this run" in line, line


@pytest.mark.parametrize(
    "key", ["0" * 16, None, LONG], ids=["another key", "none (kept before keys)", "long"]
)
def test_a_kept_anchor_of_other_settings_is_not_reused(
    checkout: Checkout, tmp_path: Path, key: str | None
) -> None:
    """Was reused: the settings (--repetitions, --max-time, ...) were checked only by the file's
    name, so one copied under another key was the anchor of a run it was not measured like."""
    path = kept_anchor(checkout)
    assert context(json.loads(path.read_text()))[anchors.SETTINGS_KEY] == path.stem
    edited(path, lambda d: context(d).update({anchors.SETTINGS_KEY: key}))
    line = said(measured_again(checkout, path, tmp_path))
    assert line == f"{SET_ASIDE}{path}: not measured with the settings its name stands for", line
    assert context(json.loads(path.read_text()))[anchors.SETTINGS_KEY] == path.stem


def test_a_kept_anchor_dated_in_the_future_is_not_reused_and_says_why(
    checkout: Checkout, tmp_path: Path
) -> None:
    """Was measured again without a word: its negative age only read as too old."""
    path = kept_anchor(checkout)
    edited(path, lambda d: context(d).update(kernelwatch_run_started="2999-01-01T00:00:00+00:00"))
    line = said(measured_again(checkout, path, tmp_path))
    assert "dated in the future (2999-01-01T00:00:00+00:00)" in line, line


def test_an_anchor_too_old_is_measured_again_without_a_note(
    checkout: Checkout, tmp_path: Path
) -> None:
    """The documented reuse limit (--anchor-max-age) is no damage: no note."""
    path = kept_anchor(checkout)
    edited(path, lambda d: context(d).update(kernelwatch_run_started="2001-01-01T00:00:00+00:00"))
    assert SET_ASIDE not in measured_again(checkout, path, tmp_path)


def test_a_kept_anchor_larger_than_any_result_is_never_read(
    checkout: Checkout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was read whole into memory, whatever its size (a sparse file of terabytes)."""
    path = kept_anchor(checkout)
    monkeypatch.setattr(anchors, "MAX_UNPACKED", path.stat().st_size - 1)
    assert "larger than" in said(measured_again(checkout, path, tmp_path))


def not_anchored(checkout: Checkout, tmp_path: Path) -> str:
    """The second run: its result written and judged against the committed baseline with a
    note (its `kernelwatch_anchor`)."""
    out = tmp_path / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    note = report_of(done)["notes"][0]
    assert note.startswith("not anchored: "), note
    assert json.loads(out.read_text())["context"]["kernelwatch_anchor"] == note
    return note


PLACES: dict[str, Callable[[Path, Path], object]] = {
    "a folder": lambda path, tmp: path.mkdir(),
    "a dangling link": lambda path, tmp: path.symlink_to(tmp / "nowhere.json"),
    "a link to /dev/zero": lambda path, tmp: path.symlink_to("/dev/zero"),
}


@pytest.mark.parametrize("make", PLACES.values(), ids=PLACES.keys())
def test_no_file_where_the_anchor_is_kept_loses_no_run(
    checkout: Checkout, tmp_path: Path, make: Callable[[Path, Path], object]
) -> None:
    """The anchor was measured, then not kept: exit 2, the whole run's result never written."""
    path = kept_anchor(checkout)
    path.unlink()
    make(path, tmp_path)
    note = not_anchored(checkout, tmp_path)
    assert note.startswith(f"not anchored: {path}: not a regular file"), note
    assert os.path.lexists(path) and not path.is_file()


def test_a_link_where_the_anchor_is_kept_is_not_read_or_written_through(
    checkout: Checkout, tmp_path: Path
) -> None:
    """Was read through (a file nobody named), then the run lost (exit 2): not replaceable."""
    path = kept_anchor(checkout)
    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    edited(elsewhere, lambda d: context(d).update(kernelwatch_run_started="2001-01-01T00:00Z"))
    before = elsewhere.read_bytes()
    path.symlink_to(elsewhere)
    assert "not a regular file (a symbolic link)" in not_anchored(checkout, tmp_path)
    assert path.is_symlink() and elsewhere.read_bytes() == before


def test_an_anchors_folder_that_is_a_file_loses_no_run(checkout: Checkout, tmp_path: Path) -> None:
    """The anchor was measured, then not kept: exit 2, the whole run's result never written."""
    checkout.on("other")
    folder = checkout.root / ".kernelwatch" / "anchors"
    folder.parent.mkdir(exist_ok=True)
    folder.write_text("mine")
    assert "is not a folder" in not_anchored(checkout, tmp_path)
    assert folder.read_text() == "mine"


def test_a_fifo_where_the_anchor_is_kept_is_never_opened(
    checkout: Checkout, tmp_path: Path
) -> None:
    """Was opened to be read: the run waited for ever for a writer (here one waits, writes)."""
    path = kept_anchor(checkout)
    path.unlink()
    os.mkfifo(path)
    opened: list[bool] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError), open(path, "w") as fifo:  # waits for a reader
                opened.append(True)
                fifo.write("nonsense")

    waiting = threading.Thread(target=writer, daemon=True)
    waiting.start()
    try:
        note = not_anchored(checkout, tmp_path)
        assert not opened and "not a regular file (a FIFO)" in note, note
    finally:
        stop.set()
        while waiting.is_alive():  # lets the writer go
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
            waiting.join(0.1)


def test_an_anchor_that_cannot_be_kept_at_the_end_loses_no_run(
    checkout: Checkout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing write of the measured anchor (a full disk) was exit 2, the result unwritten."""
    from kernelwatch.errors import InputError

    def full(path: Path, *args: object, **options: object) -> Path:
        raise InputError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr(anchors, "write_json_atomic", full)
    checkout.on("other")
    note = not_anchored(checkout, tmp_path)
    assert "No space left on device" in note, note


@pytest.mark.parametrize("value", [LONG, f"{LONG}h", f"-{LONG}"], ids=["text", "hours", "negative"])
def test_a_long_anchor_max_age_is_cut_in_its_error(checkout: Checkout, value: str) -> None:
    """The 5,000-character value was written whole into the error line."""
    done = checkout.run(f"--anchor-max-age={value}")
    assert done.status == 2
    line = one_error(done.err)
    assert line.startswith("kernelwatch: error: --anchor-max-age ") and len(line) < 300, line
    assert "xxxx... (5,00" in line, line
