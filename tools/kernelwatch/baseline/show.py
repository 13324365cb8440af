"""`baseline show`'s text: a baseline's provenance, its updates, and its stored noise per level
(per family, and the noisiest benchmarks), built as lines for the command to print."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from kernelwatch import noise as noises
from kernelwatch.baseline.store import Entry
from kernelwatch.gbench import read_file
from kernelwatch.names import family as family_of
from kernelwatch.names import short_commit

# The wider levels noise.json stores a spread for (noise/), narrowest first.
LEVELS = ("card", "kind", "host")


def describe(entry: Entry, every_noise: bool, noise_multiplier: float) -> list[str]:
    """The lines of `baseline show` for one baseline folder (`noise_multiplier`: compare's
    default, whose product with the noise is each limit's floor)."""
    parsed = read_file(str(entry.result))  # (a part of its rows at a time: gbench/stream.py)
    assert parsed is not None  # (None only for a file in a folder)
    m = entry.manifest
    families = collections.Counter(family_of(name) for name in parsed.names)
    counts = [c for c in parsed.counts if c] or [0]

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
        f"  benchmarks    {len(parsed.names)}, repetitions {min(counts)}"
        + (f" to {max(counts)}" if max(counts) != min(counts) else ""),
        "  families      " + ", ".join(f"{f} {n}" for f, n in sorted(families.items())),
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
    return lines + _noise_lines(entry, parsed.names, every_noise, noise_multiplier)


NOISIEST = 5


def _noise_lines(entry: Entry, names: list[str], every: bool, multiplier: float) -> list[str]:
    """The stored noise: per family the median and the largest; the noisiest benchmarks (all,
    with `every`)."""
    if not entry.noise_path.is_file():
        return [
            (
                "  noise         none stored (a baseline from before noise.json): compare "
                "measures it from the repetitions; update the baseline to keep it"
            )
        ]
    document = noises.read_noise_file(entry.noise_path)
    stored = document["benchmarks"]
    known = {n: e for n, e in stored.items() if n in set(names)}
    if not known:
        return [f"  noise         {entry.noise_path.name} holds none of these benchmarks"]
    processes = [e.get("processes") for e in known.values() if isinstance(e.get("processes"), int)]
    lines = [
        f"  noise         {entry.noise_path.name}: {len(known)} of {len(names)} benchmarks"
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
        said.insert(1, "kind: measured (between the cards of one kind)")
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
