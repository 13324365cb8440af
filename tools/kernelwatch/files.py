"""Writing output files atomically: a reader (or a crash) never sees half a file."""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from kernelwatch.errors import InputError


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write `data` to a temporary file beside `path`, then rename it over `path`."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 would surprise readers
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def strict_json(
    document: Any,
    indent: int | None = 2,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
) -> str:
    """`document` as strict JSON, the only way kernelwatch writes JSON: NaN and +-Infinity
    become null. Google Benchmark writes them as bare words (its `_cv` rows of always-zero
    counters are NaN), which strict parsers (JavaScript's JSON.parse, so github-action-benchmark;
    orjson) refuse."""
    options: dict[str, Any] = {"indent": indent, "sort_keys": sort_keys, "allow_nan": False}
    if separators is not None:
        options["separators"] = separators
    try:
        return json.dumps(document, **options)
    except ValueError:  # a non-finite float somewhere (the rare case: mapped only then)
        return json.dumps(_finite(document), **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(document: Any) -> str:
    """A result document as text: indented like Google Benchmark's own files, strict JSON."""
    return strict_json(document) + "\n"


def write_json_atomic(path: str | Path, document: Any) -> Path:
    return write_atomic(path, json_text(document))
