"""Atomic writes (kernelwatch.files)."""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path

import pytest
from conftest import GPU_DATA
from hypothesis import given
from hypothesis import strategies as st
from kernelwatch import files
from kernelwatch.errors import InputError


def test_write_creates_folders_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "r.json"
    with pytest.raises(InputError, match="the folder .* does not exist"):
        files.write_json_atomic(target, {"x": [1, 2]})  # a mistyped path grows no tree
    assert not (tmp_path / "a").exists()
    files.write_json_atomic(target, {"x": [1, 2]}, make_parents=True)
    assert json.loads(target.read_text()) == {"x": [1, 2]}
    assert os.listdir(target.parent) == ["r.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(InputError, match="r.json: cannot write: No space left on device"):
        files.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]


@pytest.mark.parametrize(
    "name, tagged",
    [
        ("r.json", "r-gpu0.json"),
        ("r.json.gz", "r-gpu0.json.gz"),  # was r.json-gpu0.gz: no folder's *.json.gz found it
        ("r.md", "r-gpu0.md"),
        ("r", "r-gpu0.json"),
        ("r.gz", "r-gpu0.json.gz"),
    ],
)
def test_tagged_keeps_the_kind_of_file(name: str, tagged: str) -> None:
    assert files.tagged(Path("d") / name, "-gpu0") == Path("d") / tagged


def test_a_json_name_ending_in_gz_is_written_compressed(tmp_path: Path) -> None:
    files.write_json_atomic(tmp_path / "r.json.gz", {"a": 1})
    files.write_json_atomic(tmp_path / "r.json", {"a": 1})
    packed, plain = (tmp_path / "r.json.gz").read_bytes(), (tmp_path / "r.json").read_bytes()
    assert gzip.decompress(packed) == plain
    files.write_json_atomic(tmp_path / "again.json.gz", {"a": 1})
    assert (tmp_path / "again.json.gz").read_bytes() == packed  # no time in it: reproducible


def test_unwritable_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        files.write_atomic(tmp_path / "file" / "r.json", "x")


def _strict_loads(text: str) -> object:
    def refuse(word: str) -> object:
        raise AssertionError(f"bare {word} in the output")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_nan_and_infinity_become_null(tmp_path: Path) -> None:
    # Google Benchmark's own `_cv` rows of always-zero counters hold NaN.
    document = {"benchmarks": [{"name": "BM_a_cv", "bytes": math.nan, "x": [math.inf, -math.inf]}]}
    target = files.write_json_atomic(tmp_path / "r.json", document)
    assert _strict_loads(target.read_text()) == {
        "benchmarks": [{"name": "BM_a_cv", "bytes": None, "x": [None, None]}]
    }
    assert files.strict_json({"a": 1.5}, indent=None) == '{"a": 1.5}'


def test_every_json_writer_goes_through_the_strict_helper() -> None:
    # One helper writes JSON (files.strict_json); synthetic.py writes Google Benchmark's own
    # layout, bare NaN included, as test input, and history.content_hash only hashes.
    package = Path(files.__file__).parent
    allowed = {"files.py", "synthetic.py", "history/intake.py"}
    for source in package.rglob("*.py"):
        text = source.read_text()
        if source.relative_to(package).as_posix() in allowed:
            continue
        assert "json.dump" not in text, f"{source}: use files.strict_json"
    assert "json.dumps(context" not in (package / "history" / "intake.py").read_text()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder", "device"])
def test_only_a_regular_file_is_replaced(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "out"
    victim = tmp_path / "victim"
    victim.write_text("keep")
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target = Path("/dev/null")
    with pytest.raises(InputError, match="not a regular file .*refusing to replace it"):
        files.write_atomic(target, "x")
    assert victim.read_text() == "keep" and Path("/dev/null").is_char_device()
    if kind == "symlink":
        assert target.is_symlink()
    assert sorted(os.listdir(tmp_path)) == (["victim"] if kind == "device" else ["out", "victim"])


def test_write_folder_replaces_it_whole(tmp_path: Path) -> None:
    folder = tmp_path / "base"
    assert files.write_folder(folder, {"a": b"1", "b": b"1"}) == []
    (folder / "README").write_text("kept")
    (folder / ".a.x.tmp").write_text("an older writer's temporary: not carried over")
    files.write_folder(folder, {"a": b"2", "b": b"2"})
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "a": "2",
        "b": "2",
        "README": "kept",
    }
    assert os.listdir(tmp_path) == ["base"]


def test_write_folder_cleans_and_recovers_leftovers(tmp_path: Path) -> None:
    folder = tmp_path / "base"
    files.write_folder(folder, {"a": b"1"})
    (tmp_path / ".base.new-1-ab").mkdir()  # a staging folder of a killed update
    notes = files.write_folder(folder, {"a": b"2"})
    assert notes and ".base.new-1-ab" in notes[0]
    assert os.listdir(tmp_path) == ["base"] and (folder / "a").read_text() == "2"
    # killed between the two renames of the fallback: the old folder is put back first
    folder.rename(tmp_path / ".base.old-1-cd")
    (tmp_path / ".base.new-1-cd").mkdir()
    notes = files.write_folder(folder, {"b": b"3"})
    assert "restored" in notes[0]
    assert sorted(os.listdir(folder)) == ["a", "b"] and os.listdir(tmp_path) == ["base"]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchanged", "two renames"])
def test_an_old_copy_that_cannot_be_removed_is_a_note_not_a_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    """Once the new folder is swapped in, removing the old copy only tidies up: where that
    failed (a file made immutable), the update said "cannot write", exit 2, with the new
    baseline already in place."""
    folder = tmp_path / "base"
    files.write_folder(folder, {"a": b"1"})
    if not exchange:
        monkeypatch.setattr(files, "_exchange", lambda staging, target: False)

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(files.shutil, "rmtree", refuse)
    notes = files.write_folder(folder, {"a": b"2"})
    assert (folder / "a").read_text() == "2"
    (left,) = [p for p in tmp_path.iterdir() if p != folder]
    assert (left / "a").read_text() == "1"
    assert notes == [
        f"the old folder is left at {left} (Operation not permitted): remove it",
    ]


@pytest.mark.parametrize("first", [True, False], ids=["new folder", "replaced folder"])
def test_an_interrupted_write_folder_leaves_no_staging_folder(tmp_path: Path, first: bool) -> None:
    """Ctrl-C while a baseline is written: its hidden staging folder stayed in baselines/
    (until the next update), where `git add -A` took it."""
    folder = tmp_path / "base"
    if not first:
        files.write_folder(folder, {"a": b"1"})

    def interrupted(handle: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        files.write_folder(folder, {"a": b"2", "b": interrupted})
    assert os.listdir(tmp_path) == ([] if first else ["base"])
    if not first:
        assert os.listdir(folder) == ["a"] and (folder / "a").read_text() == "1"


def test_write_folder_without_exchange(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(files, "_exchange", lambda a, b: False)
    folder = tmp_path / "base"
    files.write_folder(folder, {"a": b"1"})
    files.write_folder(folder, {"a": b"2"})
    assert (folder / "a").read_text() == "2" and os.listdir(tmp_path) == ["base"]


def test_write_folder_refuses_a_file_or_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(InputError, match="not a folder .*symbolic link"):
        files.write_folder(tmp_path / "link", {"a": b"1"})
    assert os.listdir(tmp_path / "real") == []


def test_write_output_words_a_full_disk() -> None:
    with (
        open("/dev/full", "w") as full,
        pytest.raises(InputError, match="could not write the output"),
    ):
        files.write_output("x" * 100000, full)


def test_check_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs and outputs compared resolved: the same file, a file in an input folder, one path
    named twice are refused; a folder an owned output makes takes the other outputs."""
    monkeypatch.chdir(tmp_path)
    result, runs = tmp_path / "a.json", tmp_path / "runs"
    result.write_text("{}")
    runs.mkdir()
    inputs = [files.Input("the result", result), files.Input("the runs", runs)]
    check = files.check_outputs
    with pytest.raises(InputError, match=r"^--json .*a.json: is an input of this command \(the"):
        check([files.Output("--json", tmp_path / "runs" / ".." / "a.json")], inputs)
    with pytest.raises(InputError, match="lies inside an input folder of this command"):
        check([files.Output("--json", runs / "deep" / "r.json")], inputs)
    with pytest.raises(InputError, match="^--markdown .*: is also written as --json;"):
        check([files.Output("--json", tmp_path / "x"), files.Output("--markdown", "x")], inputs)
    made = files.Output("--out", tmp_path / "new" / "r.json", make_parents=True)
    check([made, files.Output("--json", tmp_path / "new" / "r.md")], inputs)
    with pytest.raises(InputError, match="the folder .*/new does not exist"):
        check([files.Output("--json", tmp_path / "new" / "r.md")], inputs)
    with pytest.raises(InputError, match="cannot write: .*a.json is not a folder"):
        check([files.Output("--out", result / "x" / "r.json", make_parents=True)])
    with pytest.raises(InputError, match="not a folder .*refusing to write there"):
        check([files.Output("--out", result, folder=True)])
    check([files.Output("--out", runs, folder=True), files.Output("--json", None)], inputs)


def test_a_file_given_as_an_output_folder_is_called_a_file(tmp_path: Path) -> None:
    # `selftest --out results.json` (or bisect's, ab's) said "not a folder (not a plain file)"
    # of a plain file.
    result = tmp_path / "a.json"
    result.write_text("{}")
    with pytest.raises(InputError, match=r"^--out .*a.json: not a folder \(a regular file\);"):
        files.check_outputs([files.Output("--out", result, folder=True)])
    assert result.read_text() == "{}"


def test_a_file_name_that_is_not_utf8_is_written_as_escaped_bytes(tmp_path: Path) -> None:
    # A name with the byte 0xff reaches Python as the lone surrogate \udcff: it failed to
    # encode (an internal error), or went into JSON as "\udcff", which the reader refuses.
    name = os.fsdecode(b"r\xffx.json")
    assert files.printable(name) == "r\\xffx.json" and files.printable("é ✓") == "é ✓"
    assert files.printable("a\ud800") == "a\\ud800"  # (no byte decodes to it)
    text = files.strict_json({name: [name, "😀"]}, indent=None)
    assert json.loads(text) == {"r\\xffx.json": ["r\\xffx.json", "😀"]}
    files.write_atomic(tmp_path / "r.md", f"baseline `{name}`\n")
    assert (tmp_path / "r.md").read_text(encoding="utf-8") == "baseline `r\\xffx.json`\n"
    out = tmp_path / "stdout"
    with open(out, "w", encoding="utf-8", errors="strict") as stream:
        files.write_output(name, stream)
    assert out.read_text() == "r\\xffx.json"


@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
@pytest.mark.parametrize(
    "document",
    [
        {"context": {"a": "é"}, "benchmarks": [{"x": 1.5, "n": 2, "s": None, "l": [1, {}]}]},
        {"benchmarks": [{"x": math.nan}, {"y": [-math.inf]}]},
        {"command": "run \udcff.json", "b": ["x" * 100] * 50},
        {"emoji": "😀", "x": "\\ud800"},
    ],
    ids=["plain", "non-finite", "lone-surrogate", "escaped-pair"],
)
def test_write_json_writes_json_text_a_piece_at_a_time(
    tmp_path: Path, monkeypatch, document: object, batch: int
) -> None:
    """write_json (baseline update's 272 MB result.json) writes what json_text gives, byte for
    byte: its NaN and surrogates mapped as strict_json maps them, however the pieces fall."""
    monkeypatch.setattr(files, "_BATCH", batch)
    path = tmp_path / "out.json"
    with path.open("wb") as handle:
        files.write_json(handle, document)
    assert path.read_bytes() == files.json_text(document).encode("utf-8")


_KEYS = st.text(max_size=3) | st.integers() | st.floats() | st.booleans() | st.none()
_VALUES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
_DOCUMENTS = st.recursive(
    _VALUES,
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(_KEYS, inner),
    max_leaves=20,
)


@given(_DOCUMENTS)
def test_json_text_is_jsons_own_indented_text(document: object) -> None:
    """The writers' fast indentation (files._indented: the C encoder for each container of
    plain values) gives json.dumps(indent=2)'s text to the byte, and fails where it fails:
    keys of every kind json takes, floats of every size, empty containers, tuples."""
    try:
        expected: str | type[Exception] = json.dumps(document, indent=2, allow_nan=False)
    except ValueError as exc:  # NaN or an infinity: strict_json maps them, json refuses
        expected = type(exc)
    try:
        got: str | type[Exception] = "".join(files._indented(document))
    except ValueError as exc:
        got = type(exc)
    assert got == expected


@pytest.mark.parametrize(
    "command",
    [
        ["selftest", "--from"],
        ["run", "--build-dir"],
        ["report", str(GPU_DATA / "h200-suite-rep10.json.gz"), "-o", "r.html", "--baselines"],
        ["ab", "HEAD", "HEAD", "--repo"],
    ],
    ids=lambda c: c[-1],
)
def test_a_file_given_for_a_folder_says_so(tmp_path: Path, run_cli, command: list[str]) -> None:
    """A file where a folder is asked for read "no such directory" (files.check_input_dir)."""
    given = tmp_path / "notes.txt"
    given.write_text("")
    done = run_cli(*command, given)
    assert done.status == 2
    assert (
        done.err == f"kernelwatch: error: {command[-1]} {given}: a regular file, not a directory\n"
    )
    done = run_cli(*command, tmp_path / "none")
    assert done.err == f"kernelwatch: error: {command[-1]} {tmp_path / 'none'}: no such directory\n"
