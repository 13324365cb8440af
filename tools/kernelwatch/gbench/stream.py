"""A large result file read a part of its rows at a time (needs orjson): each part becomes
columns (fast.Usual) before the next is parsed, so the file's rows are never all Python dicts at
once (a 285,000-row pooled baseline, 272 MB: 1.3 GB parsed whole, ~0.1 GB so).

The rows are cut where one ends and the next starts on its own line (`},\\n    {`: Google
Benchmark's layout and kernelwatch's). A raw newline is never inside a JSON string, and each part
must parse as a list of rows, so a cut made anywhere else fails to parse: then, and for any file
that is not the usual one, the caller reads the whole file (jsonfile.read_json, reader.py). A
gzip file is unpacked in memory first (a compressed baseline: 17 MB of text for five cards)."""

from __future__ import annotations

import io
import os
import re
import stat
from typing import Any, BinaryIO

from kernelwatch.gbench.columns import FileColumns
from kernelwatch.gbench.fast import Usual
from kernelwatch.gbench.jsonfile import GZIP_MAGIC, _orjson, unpacked

PART_BYTES = 4 << 20  # ~4,000 rows: 15 MB of dicts at a time
HEAD_BYTES = 64 << 20  # a context larger than this: read whole
_BENCHMARKS = re.compile(rb'"benchmarks"\s*:\s*\[(\s*)')


def read_parts(
    path: str, part_bytes: int = PART_BYTES
) -> tuple[dict[str, Any], FileColumns] | None:
    """The file's document without its rows (its "benchmarks" an empty list) and its columns,
    read a part at a time; None for a file this does not read (the caller reads it whole)."""
    if _orjson is None:
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # (a pipe is read once: by the caller)
            return None
        with open(path, "rb") as file:
            if file.read(len(GZIP_MAGIC)) == GZIP_MAGIC:  # its text unpacked, then read alike
                file.seek(0)
                return _read(path, io.BytesIO(unpacked(path, file.read())), part_bytes)
            file.seek(0)
            return _read(path, file, part_bytes)
    except (OSError, ValueError):  # (orjson.JSONDecodeError is a ValueError)
        return None


def _read(path: str, file: BinaryIO, part_bytes: int) -> tuple[dict[str, Any], FileColumns] | None:
    size = file.seek(0, 2)
    tail_at = _tail_at(file, size)
    if tail_at is None:
        return None
    file.seek(tail_at)
    tail = file.read()
    file.seek(0)
    # The document with a mark for the rows: they are the "benchmarks" of the document only if
    # the mark is (not a nested "benchmarks", not one that a later key of that name replaces).
    mark = f"kernelwatch-rows-{os.urandom(8).hex()}"
    head = b""
    while True:
        more = file.read(max(part_bytes, 1 << 16))
        head += more
        located = _shell_at(head, tail_at, tail, mark, more == b"")
        if located is not None:
            break
        if not more or len(head) >= HEAD_BYTES:
            return None
    found, shell = located
    body_at = found.end()
    shell["benchmarks"] = []
    context = shell.get("context", {})
    if not isinstance(context, dict):
        return None
    cut = b"},\n" + found.group(1).lstrip(b"\r\n") + b"{"  # one row's end, the next's start
    usual = Usual()
    pending = head[body_at:]
    file.seek(len(head))
    at = len(head)
    while True:
        block = file.read(min(part_bytes, max(tail_at - at, 0)))
        if not block and at < tail_at:
            return None  # (the file shrank under us)
        at += len(block)
        pending += block
        last = at >= tail_at
        if last:
            pending = pending[: len(pending) - (at - tail_at)]
            part, pending = pending, b""
        else:
            end = pending.rfind(cut)
            if end < 0:
                continue
            part, pending = pending[: end + 1], pending[end + 2 :]
        rows = _orjson.loads(b"[" + part + b"]")
        if not rows:
            return None  # (no rows, or `,,`: read whole, which says what it is)
        usual.take(rows)
        del rows
        if usual.unusual:
            return None
        if last:
            break
    columns = usual.columns(path, context)
    return None if columns is None else (shell, columns)


def _tail_at(file: BinaryIO, size: int) -> int | None:
    """Where the rows' closing `]` is: the last `]` of the file (its end: `]` then `}`)."""
    back = min(size, 1 << 16)
    file.seek(size - back)
    end = file.read(back)
    at = end.rfind(b"]")
    return None if at < 0 else size - back + at


def _shell_at(
    head: bytes, tail_at: int, tail: bytes, mark: str, whole: bool
) -> tuple[re.Match[bytes], dict[str, Any]] | None:
    """The top-level "benchmarks" list's opening in `head`, and the document without its rows
    (the rows replaced by `mark` must be its "benchmarks"); None if not in `head` (`whole`: the
    head is the whole file)."""
    for found in _BENCHMARKS.finditer(head, 0, tail_at):
        if found.end() == len(head) and not whole:
            return None  # (the first row's indent may go on)
        opened = found.end() - len(found.group(1)) - 1
        try:
            shell = _orjson.loads(head[:opened] + f'"{mark}"'.encode() + tail[1:])
        except ValueError:
            continue  # a nested one (else a BOM, bare NaN, bad JSON: read whole)
        if isinstance(shell, dict) and shell.get("benchmarks") == mark:
            return found, shell
    return None
