"""The stored noise, baselines/<slug>/noise.json: written by `baseline update`, read and
checked for compare; found beside a baseline's result.json."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json
from kernelwatch.noise.estimates import TIME, LevelNoise, Noise

NOISE_FILE = "noise.json"
# 2: each benchmark's spread per level (process, card, host); 1 (read still): process only.
NOISE_SCHEMA = 2
READABLE_SCHEMAS = (1, 2)


def noise_document(
    noise: Noise, context: Mapping[str, Any], *, keep: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """noise.json's content for a baseline result; `keep`: entries of benchmarks not measured
    again (a partial update), kept as they were."""
    card = noise.card if noise.card is not None else np.full(len(noise.names), np.nan)
    host = noise.host if noise.host is not None else np.full(len(noise.names), np.nan)
    kind = noise.kind if noise.kind is not None else np.full(len(noise.names), np.nan)
    benchmarks: dict[str, Any] = {}
    for i, name in enumerate(noise.names):
        benchmarks[name] = {
            "noise": _round(noise.noise[i]),
            "between_processes": _round(noise.between[i]),
            "within_run": _round(noise.within[i]),
            "counter": _round(noise.counter[i]),
            "group": _round(noise.group[i]),
            "card": _round(card[i]),
            "host": _round(host[i]),
            "kind": _round(kind[i]),
            "processes": int(noise.processes[i]),
            "repetitions": int(noise.repetitions[i]),
        }
    benchmarks.update(keep or {})
    return {
        "schema_version": NOISE_SCHEMA,
        "metric": TIME.key,
        "commit": context.get("kernelwatch_git_commit"),
        "updated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cards": noise.cards,
        "hosts": noise.hosts,
        "kind_units": noise.kind_units,
        "method": "noise (process level): largest of: standard deviation of per-process medians "
        "/ median (pooled over the runs); robust CV of the repetitions; noise counter / 3.92; "
        "median of its group. card: standard deviation of the cards' mean run medians within "
        "one host; host: of the hosts' mean run medians; kind: of the run medians around their "
        "kind of card's mean (kinds.py), pooled over kinds; each at least its group's median; "
        "null where not measured or where the runs do not name their card or host "
        "(docs/measurement.md)",
        "benchmarks": dict(sorted(benchmarks.items())),
    }


def _round(value: float) -> float | None:
    if not math.isfinite(value):
        return None
    return float(f"{value:.4g}")


def read_noise_file(path: Path) -> dict[str, Any]:
    """A noise.json, checked; one InputError line when it is not one."""
    data = read_json(path)
    entries = data.get("benchmarks") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or not isinstance(entries, dict)
        or data.get("schema_version") not in READABLE_SCHEMAS
    ):
        raise InputError(f"{path}: not a kernelwatch noise file (schema {NOISE_SCHEMA})")
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise InputError(f"{path}: {name}: not an object")
        for key in ("noise", "card", "host", "kind"):
            value = entry.get(key)
            if key != "noise" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{path}: {name}: {key} must be a number")
            if not (0 <= value < 10):
                raise InputError(f"{path}: {name}: {key} {value} out of range")
    return data


def levels_from_file(data: Mapping[str, Any]) -> LevelNoise:
    """The per-level spreads a checked noise file holds (schema 1: the process level only)."""
    entries = data["benchmarks"]
    names = tuple(entries)

    def column(key: str) -> np.ndarray:
        values = [entries[n].get(key) for n in names]
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

    # A file that does not say how many processes its noise came from (written by hand, or by
    # an older tool) is taken at its word: measured.
    processes = np.array([entries[n].get("processes") or 0 for n in names])
    measured = (processes != 1) | np.isfinite(column("between_processes"))
    return LevelNoise(
        names, column("noise"), measured, column("card"), column("host"), column("kind")
    )


def stored(path: Path, context: Mapping[str, Any]) -> tuple[LevelNoise | None, str | None]:
    """The stored noise per benchmark from `path`, and a warning when it was not written with
    the result whose context is given (then nothing is used)."""
    data = read_noise_file(path)
    commit, theirs = data.get("commit"), context.get("kernelwatch_git_commit")
    if commit and theirs and commit != theirs:
        return None, (
            f"{path} was written for commit {str(commit)[:12]}, the baseline is "
            f"{str(theirs)[:12]}: its noise is not used"
        )
    return levels_from_file(data), None


def stored_beside(
    baseline: Path, context: Mapping[str, Any], path: Path | None = None
) -> tuple[LevelNoise | None, str | None]:
    """The stored noise of a baseline (`path`, else the noise.json beside it), None when there
    is none; and a warning when the file does not belong to that result."""
    path = path or beside(baseline)
    if path is None:
        return None, None
    found, warning = stored(path, context)
    return (found if found is not None and found.names else None), warning


def beside(result_path: Path) -> Path | None:
    """The noise.json of a baseline: beside its result.json, or in the folder given."""
    try:
        folder = result_path if result_path.is_dir() else result_path.parent
        candidate = folder / NOISE_FILE
        return candidate if candidate.is_file() else None
    except OSError:  # a folder that may not be searched: reading its result says so, in one line
        return None
