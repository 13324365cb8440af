"""Parsing a JSON file into a document, every failure one InputError line.

Parsing is most of the time of a large comparison: `orjson` is used when it is installed (the
optional extra `kernelwatch[fast]`; 2-3x faster than `json` on a 70 MB file), else `json`.
A file orjson refuses (bare NaN or Infinity, which Google Benchmark writes; invalid JSON) is
parsed again with `json`, which accepts the bare words and gives the error messages. A file
that starts as gzip does (a compressed baseline, `baseline update --compress`; any result) is
read through gzip, whatever its name.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
import stat
import sys
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from kernelwatch import nvbench
from kernelwatch.errors import InputError
from kernelwatch.files import SURROGATE_ESCAPE

_orjson: Any
try:  # optional speed-up: `pip install orjson` (or kernelwatch[fast])
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the machine
    _orjson = None


# Deeper than any result (Google Benchmark's rows are 3 levels deep, nvbench's summaries 7,
# kernelwatch's kernel records 8) and far below what the json module can write back (Python's
# recursion limit, 1,000 less the stack): orjson and json read up to about 1,000 levels, and a history's
# content hash or a written baseline then failed on a deep context or nvbench `meta`.
MAX_DEPTH = 100

GZIP_MAGIC = b"\x1f\x8b"
# The most a compressed file may unpack to: far above any result (a pooled baseline of 285,000
# rows is 272 MB of text), far below what would exhaust the machine (a gzip bomb: 1 GB of
# zeros packs into 1 MB).
MAX_UNPACKED = 2 << 30


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every way it can fail into one InputError line. Every
    result file is read here, so here its format is told apart: an nvbench file comes back as
    the Google Benchmark document it maps to (kernelwatch/nvbench.py)."""
    document = _parse(path)
    check_depth(path, document)
    if nvbench.is_nvbench(document):
        return nvbench.as_google_benchmark(document, path)
    return document


def unpacked(path: str | Path, data: bytes) -> bytes:
    """`data` as it is, or decompressed when it starts as gzip does; one InputError line for a
    damaged file or one that unpacks past MAX_UNPACKED."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as packed:
            text = packed.read(MAX_UNPACKED + 1)
    except (OSError, EOFError, zlib.error) as exc:  # (gzip.BadGzipFile is an OSError)
        raise InputError(f"{path}: a damaged gzip file ({exc})") from None
    if len(text) > MAX_UNPACKED:
        raise InputError(f"{path}: unpacks to more than {MAX_UNPACKED >> 30} GiB; not a result")
    return text


def _parse(path: str | Path) -> Any:
    file = Path(path)
    try:
        mode = file.stat().st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # (a pipe, `<(...)`, is read as a file)
            # /dev/zero, /dev/sda: read whole into memory until it runs out, never an error
            kind = "character" if stat.S_ISCHR(mode) else "block"
            raise InputError(f"{file}: a {kind} device, not a result file")
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}: cannot read: {exc.strerror or exc}") from None
    data = unpacked(file, data)
    if data.startswith(_BOM):  # (Windows editors and PowerShell 5 write one; RFC 8259 8.1)
        data = data[len(_BOM) :]
    if not data or data.isspace():  # (isspace stops at the first other byte; strip copies)
        # Google Benchmark opens --benchmark_out before it looks for benchmarks (1.7, 1.8).
        raise InputError(
            f"{file}: empty file (Google Benchmark leaves its --benchmark_out empty when "
            "--benchmark_filter matches no benchmark)"
        )
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # NaN/Infinity, or bad input: json below accepts the one, explains the other
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{file}: not a JSON text file (invalid UTF-8)") from None
    try:
        # Google Benchmark writes NaN and Infinity as bare words; json accepts them by default.
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if not _looks_like_json(text):
            start = text.lstrip()[:20].splitlines()[0]
            hint = _gbench_text_hint(text)
            raise InputError(f"{file}: not JSON (it starts with {start!r}){hint}") from None
        where = f"line {exc.lineno} column {exc.colno}"
        what = f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"
        ends_early = exc.pos >= len(text.rstrip()) or not text.rstrip().endswith(("}", "]"))
        hint = "; the file ends early (truncated?)" if ends_early else ""
        if exc.msg == "Extra data":  # a whole document, then more: `>>` onto an old result
            hint = "; more follows the first JSON document (two results in one file?)"
        raise InputError(f"{file}: invalid JSON: {what}{hint}") from None
    except RecursionError:
        raise InputError(_too_deep(file)) from None
    except ValueError:  # Python reads no integer of more digits (sys.get_int_max_str_digits)
        raise InputError(
            f"{file}: invalid JSON: an integer of more than {sys.get_int_max_str_digits()} digits"
        ) from None
    if SURROGATE_ESCAPE.search(text):  # (orjson refuses them; json lets them through)
        lone = _lone_surrogate(document)
        if lone is not None:
            raise InputError(
                f"{file}: invalid JSON: a string holds a lone surrogate "
                f"(\\u{ord(lone):04x}), which is not Unicode text"
            )
    return document


def check_depth(path: str | Path, document: Any) -> None:
    """Refuse a document nested more than MAX_DEPTH levels (without recursion: that is what
    fails)."""
    stack: list[tuple[Any, int]] = []
    if type(document) is dict or type(document) is list:
        stack.append((document, 1))
    children: Iterable[Any]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(_too_deep(path))
        if type(value) is dict:
            children = value.values()
        elif _flat_objects(value):
            continue  # rows: 140,000 of them looked at in one pass in C, 2x faster
        else:
            children = value
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))


def _flat_objects(items: list[Any]) -> bool:
    """Whether `items` are objects none of whose values is an object or a list."""
    try:
        kinds = set(map(type, chain.from_iterable(map(dict.values, items))))
    except TypeError:  # an item that is not an object
        return False
    return dict not in kinds and list not in kinds


def _too_deep(path: str | Path) -> str:
    return f"{path}: invalid JSON: nested too deeply (more than {MAX_DEPTH} levels)"


_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark
_JSON_START = re.compile(
    r'\s*(\{|\[\s*($|[\[{"\-0-9tfnNI\]])|"|-?[0-9]|true|false|null|NaN|-?Infinity)'
)


def _looks_like_json(text: str) -> bool:
    """Whether a text that failed to parse starts as JSON does (a truncated or damaged JSON
    file), or as something else (TOML's `[section]`, CSV, HTML): then it is "not JSON". A
    number or word followed by more text is something else too: Google Benchmark's console and
    CSV files start with the date, `2026-11-24T17:18:44+00:00`, which json reads as 2026."""
    if _JSON_START.match(text) is None:
        return False
    try:
        value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except json.JSONDecodeError:
        return True  # an object or list that breaks off or is damaged
    return isinstance(value, (dict, list))


def _gbench_text_hint(text: str) -> str:
    """What to do when the file is Google Benchmark's console or CSV output (the date, then
    `Running <binary>`, in both): written with the wrong --benchmark_out_format, or stdout."""
    lines = text.lstrip().splitlines()[:2]
    if len(lines) == 2 and lines[1].startswith("Running "):
        return (
            "; it is Google Benchmark's console or CSV output: write the result with "
            "--benchmark_out=FILE --benchmark_out_format=json"
        )
    return ""


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in the strings (and keys) of a parsed document, if any."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _lone_in(item)
            if found is not None:
                return found
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _lone_in(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None
