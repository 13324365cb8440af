"""The grammar of benchmark names, in one place.

A Google Benchmark run_name, as this suite writes it, is

    family/variant/.../key:value/.../[min_time:0.5/repeats:3/...]/manual_time[#2]

* `family`: the first part (`transpose`), a kernel family of this suite.
* path parts without a colon (`transpose/best/float`): the benchmark's path; a bare number
  (`BM_Copy/1024`) is an unnamed argument.
* `key:value` parts (`rows:2048`): its named parameters.
* Google Benchmark appends options it was registered with (`min_time:`, `repeats:`, ...) and
  the time it reports (`manual_time`, `real_time`, `process_time`).
* A name registered twice is told apart here as `name#2`, `#3`, ... (gbench).
* Files without run_name name an aggregate row `<run_name>_<aggregate>` (`BM_x_median`).

A commit is shown by `short_commit`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# The last part Google Benchmark appends for the time it reports (manual = GPU time here).
TIME_SUFFIXES = frozenset({"manual_time", "real_time", "process_time"})
# Parts Google Benchmark appends for the options a benchmark was registered with.
OPTION_PREFIXES = ("min_time:", "min_warmup_time:", "repeats:", "iterations:", "threads:")

# A part that is a parameter (a number, `key:value`) or a time suffix, not the kernel variant.
_PARAMETER = re.compile(r"^(\d+(\.\d+)?|[^/]*:[^/]*|" + "|".join(sorted(TIME_SUFFIXES)) + r")$")

SHORT_COMMIT = 12  # characters of a commit id shown


def row_name(row: Any) -> str:
    """The benchmark a result row belongs to: its run_name, else its name ("" for a row that
    is no object)."""
    if not isinstance(row, Mapping):
        return ""
    return str(row.get("run_name") or row.get("name"))


def family(name: str) -> str:
    """`transpose/best/rows:2048/manual_time` -> `transpose`."""
    return name.split("/", 1)[0]


def variant(name: str) -> str:
    """The benchmark's variant: its name without parameters (`key:value`, numbers) and without
    Google Benchmark's time suffixes (the whole name when nothing else is left)."""
    kept = [part for part in name.split("/") if not _PARAMETER.match(part)]
    return "/".join(kept) or name


def path_and_parameters(name: str) -> tuple[str, dict[str, str]]:
    """`coalescing/offset/float/offset:6/manual_time` -> (`coalescing/offset/float`,
    {"offset": "6"}); a bare number stays in the path."""
    parts = name.split("/")
    if len(parts) > 1 and parts[-1] in TIME_SUFFIXES:
        parts = parts[:-1]
    path: list[str] = []
    params: dict[str, str] = {}
    for part in parts:
        key, colon, value = part.partition(":")
        if colon:
            params[key] = value
        else:
            path.append(part)
    return "/".join(path), params


def instance_key(run_name: str) -> str:
    """The harness's instance key of a run_name (family/args, as its kernel records name it):
    Google Benchmark's suffixes dropped, named integer arguments (`offset:1`) as their
    values."""
    parts = []
    for part in run_name.split("/"):
        if part in TIME_SUFFIXES or part.startswith(OPTION_PREFIXES):
            continue
        key, colon, value = part.partition(":")
        parts.append(value if colon and key and _is_int(value) else part)
    return "/".join(parts)


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


def without_aggregate(name: str, aggregate: Any) -> str:
    """An aggregate row's benchmark in files without run_name: `BM_x_median` -> `BM_x`."""
    suffix = f"_{aggregate}"
    return name[: -len(suffix)] if name.endswith(suffix) else name


def registration(name: str, number: int) -> str:
    """The name of the `number`th registration (1-based) of a name registered more than once:
    the first keeps it, then `name#2`, `name#3`, ..."""
    return name if number <= 1 else f"{name}#{number}"


def short_commit(commit: Any) -> str:
    """A commit id as shown: its first 12 characters, and a `-dirty` marker kept (a build
    from a modified tree must not read as the clean commit); "unknown" when there is none.
    (Of the three copies this replaces, `baseline list`'s kept the marker, the report's and
    `history`'s cut it off; a short id without it misstates what was measured.)"""
    text = str(commit or "unknown")
    dirty = text.endswith("-dirty") and len(text) > SHORT_COMMIT + len("-dirty")
    return text[:SHORT_COMMIT] + ("-dirty" if dirty else "")
