"""Atomic writes (kernelwatch.files)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from kernelwatch import files
from kernelwatch.errors import InputError


def test_write_creates_folders_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "r.json"
    files.write_json_atomic(target, {"x": [1, 2]})
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
    allowed = {"files.py", "synthetic.py", "history.py"}
    for source in package.rglob("*.py"):
        text = source.read_text()
        if source.name in allowed:
            continue
        assert "json.dump" not in text, f"{source}: use files.strict_json"
    assert "json.dumps(context" not in (package / "history.py").read_text()
