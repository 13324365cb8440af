"""`baseline show`'s text: a baseline's provenance, its updates, and its stored noise per level
(per family, and the noisiest benchmarks), built as lines for the command to print; and the
JSON documents of `baseline list|show --format json`."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch.baseline import Entry
from kernelwatch.gbench import read_file
from kernelwatch.names import family as family_of
from kernelwatch.names import short_commit

# The wider levels noise.json stores a spread for (noise.py), narrowest first.
LEVELS = ("card", "kind", "host")


# Bump on any change to `baseline list|show --format json` that could break a reader (renames,
# removals, meaning); the schema is in docs/running.md.
SCHEMA_VERSION = 1
# What the manifest records of how the baseline was measured, as `show` prints it.
MANIFEST_KEYS = ("commit", "date", "driver", "cuda_runtime", "build_type", "cache_mode", "command")


@dataclass(frozen=True)
class _Contents:
    names: list[str]
    families: dict[str, int]
    repetitions: tuple[int, int]  # the fewest and the most of any benchmark
    hosts: dict[levels.HostClass | None, int]  # a pooled baseline's hosts per class
    varied: dict[levels.HostClass | None, tuple[str, ...]] | None  # levels.varied_keys


def _contents(entry: Entry) -> _Contents:
    parsed = read_file(str(entry.result))  # (a part of its rows at a time: gbench.read_parts)
    assert parsed is not None  # (None only for a file in a folder)
    families = collections.Counter(family_of(name) for name in parsed.names)
    counts = [c for c in parsed.counts if c] or [0]
    return _Contents(
        parsed.names,
        dict(sorted(families.items())),
        (min(counts), max(counts)),
        levels.hosts_per_class(parsed.context),
        levels.varied_keys(parsed.context) if levels.pooled_runs(parsed.context) else {},
    )


def list_document(root: Path, found: Sequence[Entry]) -> dict[str, Any]:
    """`baseline list --format json`: what the table says of each baseline, commits whole."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "baseline list",
        "root": str(root),
        "baselines": [
            {
                "slug": entry.slug,
                "directory": str(entry.directory),
                "gpu": None if entry.gpu == "?" else entry.gpu,
                "has_manifest": bool(entry.manifest),
                "benchmarks": entry.manifest.get("benchmarks"),
                "commit": entry.manifest.get("commit"),
                "date": entry.manifest.get("date"),
            }
            for entry in found
        ],
    }


def show_document(entry: Entry) -> dict[str, Any]:
    """`baseline show --format json`: the manifest's provenance and updates, the benchmarks per
    family, and every benchmark's stored noise as noise.json holds it (null: none stored)."""
    contents = _contents(entry)
    noise: dict[str, Any] | None = None
    path = entry.stored_noise
    if path is not None:
        stored = noises.read_noise_file(path)["benchmarks"]
        names = set(contents.names)
        noise = {
            "file": str(path),
            "benchmarks": {n: dict(e) for n, e in sorted(stored.items()) if n in names},
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "baseline show",
        "slug": entry.slug,
        "directory": str(entry.directory),
        "gpu": None if entry.gpu == "?" else entry.gpu,
        "manifest": (
            {key: entry.manifest.get(key) for key in MANIFEST_KEYS} if entry.manifest else None
        ),
        "benchmarks": len(contents.names),
        "repetitions": {"min": contents.repetitions[0], "max": contents.repetitions[1]},
        "families": contents.families,
        "hosts": {_class_name(c): n for c, n in contents.hosts.items()},
        "varied": (
            None
            if contents.varied is None
            else {_class_name(c): list(keys) for c, keys in contents.varied.items()}
        ),
        "updates": list(entry.manifest.get("history") or []),
        "noise": noise,
    }


def describe(entry: Entry, every_noise: bool, noise_multiplier: float) -> list[str]:
    """The lines of `baseline show` for one baseline folder (`noise_multiplier`: compare's
    default, whose product with the noise is each limit's floor)."""
    contents = _contents(entry)
    m = entry.manifest
    low, high = contents.repetitions

    def known(key: str) -> Any:  # (a baseline from nvbench records null for most: no "None")
        value = m.get(key)
        return "unknown" if value is None else value

    lines = [
        f"baseline {entry.slug}  ({entry.directory})",
        f"  GPU           {entry.gpu}",
        f"  commit        {known('commit')}",
        f"  date          {known('date')}",
        f"  driver        {known('driver')}",
        f"  CUDA runtime  {known('cuda_runtime')}",
        f"  build, cache  {known('build_type')}, {known('cache_mode')}",
        f"  command       {known('command')}",
        f"  benchmarks    {len(contents.names)}, repetitions {low}"
        + (f" to {high}" if high != low else ""),
        "  families      " + ", ".join(f"{f} {n}" for f, n in contents.families.items()),
    ]
    history = m.get("history") or []
    if history:
        lines.append(f"  updates       {len(history)}")
        for record in history:
            scope = f"filter {record['filter']!r}" if record.get("filter") else "whole"
            lines.append(
                f"    {record.get('updated', '?')}  commit {short_commit(record.get('commit'))}  "
                f"{record.get('benchmarks', '?')} benchmarks ({scope})"
            )
    if not m:
        lines.append("  (no manifest.json: written by hand? use kernelwatch baseline update)")
    if contents.hosts:
        lines.append("  hosts         " + _hosts_text(contents.hosts))
        lines.append("  varied        " + _varied_text(contents.varied))
    return lines + _noise_lines(entry, contents.names, every_noise, noise_multiplier)


def _class_name(host_class: levels.HostClass | None) -> str:
    return "class not recorded" if host_class is None else host_class.value


def _hosts_text(hosts: Mapping[levels.HostClass | None, int]) -> str:
    """A pooled baseline's hosts per class, and whether compare judges a runner against the pool
    centred on its class (compare._of_host_class: where both classes are held)."""
    order = [*levels.HostClass, None]
    counted = ", ".join(f"{hosts[c]} {_class_name(c)}" for c in order if c in hosts)
    if None in hosts:
        how = "a runner is judged against the pool as it is (a class not recorded)"
    elif len(hosts) < 2:
        how = "a runner of the other class is judged against the pool as it is"
    else:
        how = "a runner is judged against the pool centred on its class of host"
    return f'{sum(hosts.values())}: {counted}; {how} (docs/measurement.md, "Classes of host")'


def _varied_text(varied: Mapping[levels.HostClass | None, Sequence[str]] | None) -> str:
    """The configuration keys a pool's hosts of each class vary in: which runners it judges at
    its measured spread, and which at the host prior (docs/compare.md)."""
    if varied is None:
        return (
            "not listed (pooled before its runs listed their configuration): a runner "
            "configured unlike every host in any key is held to the host prior (docs/compare.md)"
        )
    order = [*levels.HostClass, None]
    said = "; ".join(
        f"{_class_name(c)} hosts: {', '.join(varied[c]) or 'none'}" for c in order if c in varied
    )
    return (
        f"{said} (a runner unlike every host of its class in another key is held to the host "
        "prior: docs/compare.md)"
    )


NOISIEST = 5


def _noise_lines(entry: Entry, names: list[str], every: bool, multiplier: float) -> list[str]:
    """The stored noise: per family the median and the largest; the noisiest benchmarks (all,
    with `every`)."""
    path = entry.stored_noise
    if path is None:
        return [
            (
                "  noise         none stored (a baseline from before noise.json): compare "
                "measures it from the repetitions; update the baseline to keep it"
            )
        ]
    document = noises.read_noise_file(path)
    stored = document["benchmarks"]
    known = {n: e for n, e in stored.items() if n in set(names)}
    if not known:
        return [f"  noise         {path.name} holds none of these benchmarks"]
    processes = [e.get("processes") for e in known.values() if isinstance(e.get("processes"), int)]
    lines = [
        f"  noise         {path.name}: {len(known)} of {len(names)} benchmarks"
        + _processes_text(processes)
        + f"; the floor of each limit is {multiplier:g} x this "
        "(--noise-multiplier)"
    ]
    lines.append("  levels        " + _levels_text(document, known))
    by_family: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for name, e in known.items():
        for level in ("noise", *LEVELS):
            if e.get(level) is not None:
                by_family[family_of(name)][level].append(float(e[level]))
    width = max(len(f) for f in by_family)
    for family, found in sorted(by_family.items()):
        parts = []
        for level in ("noise", *LEVELS):
            label = "process" if level == "noise" else level
            values = sorted(found.get(level, []))
            if values:
                parts.append(
                    f"{label} median {_percent(values[len(values) // 2])} "
                    f"max {_percent(values[-1])}"
                )
        lines.append(f"    {family:<{width}}  " + "; ".join(parts) + f"  ({len(found['noise'])})")
    ranked = sorted(known.items(), key=lambda item: -float(item[1]["noise"]))
    shown = ranked if every else ranked[:NOISIEST]
    lines.append("  noisiest" if not every else "  every benchmark, noisiest first")
    lines.append(
        "    noise     between   within    counter   group     card      kind      host      name"
    )
    for name, e in shown:
        keys = ("noise", "between_processes", "within_run", "counter", "group", *LEVELS)
        lines.append("    " + "".join(f"{_percent(e.get(k)):<10}" for k in keys) + name)
    return lines


def _levels_text(document: Mapping[str, Any], known: Mapping[str, Any]) -> str:
    """Which levels of variation this baseline measured, and which compare takes the prior for."""
    said = []
    for level, count_key in (("card", "cards"), ("host", "hosts")):
        measured = sum(1 for e in known.values() if e.get(level) is not None)
        count = document.get(count_key, 1)
        if measured:
            said.append(f"{level}: measured ({count} {count_key})")
        else:
            said.append(f"{level}: never measured, the prior applies (docs/measurement.md)")
    if any(e.get("kind") is not None for e in known.values()):  # kinds of card (kinds.py)
        said.insert(
            1,
            "kind: measured (between the cards of one kind; compare holds a card to the host level)",
        )
    return "process: measured; " + "; ".join(said)


def _processes_text(processes: list[int]) -> str:
    if not processes:
        return ""
    low, high = min(processes), max(processes)
    count = f"{low}" if low == high else f"{low} to {high}"
    return f", from {count} process{'es' if high > 1 else ''} each"


def _percent(value: Any) -> str:
    if value is None:
        return "-"
    return f"{float(value) * 100:.3f}%"
