"""Atomic writes (kernelwatch.files)."""

from __future__ import annotations

import json
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
