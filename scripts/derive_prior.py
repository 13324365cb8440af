#!/usr/bin/env python3
"""Derive the prior of levels.py (relative + absolute / time, per level) from real runs, and
print the table of measured spreads per level and family that docs/measurement.md shows.

    PYTHONPATH=tools python3 scripts/derive_prior.py RUN.json RUN.json [RUN.json ...]

Each file is one `kernelwatch run` (two processes or more) on one card of one host, named by
its context (`gpu_uuid`, `host_gpu_uuids`: levels.unit_of; a run that names neither is a card
and a host of its own). The process level is the spread of each run's per-process medians. A
card's median is the mean of its runs' medians (two runs of one card cross no card). The card
level is the spread of the cards' medians around their host's mean, pooled over hosts (printed
where a host holds two cards or more); the host level, the spread of the hosts' means (as
noise.py measures both; noise.py then takes the host level at least as if the kinds were drawn
alike, and a prior stands for a pool that measured no such spread); the kind level, the spread
of the cards' medians around the mean of their kind of card (kinds.py), pooled (kinds are told
apart only from kinds.MIN_SHARED benchmarks). Host-bound benchmarks are left out: they do not
fail against another host whatever their spread.
A constant is the 99th percentile of the spreads it must cover, rounded up: the relative part
from benchmarks of 100 us or more, the absolute part from the shorter ones' excess over it. With
two kinds or more, the prior for a card of a kind the baseline never held: half the widest gap
between a run and a run of another kind, the largest over the benchmarks (a limit is twice a
spread; a baseline of one run is such a run, and a pooled one's mean lies inside the gap).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from kernelwatch import kinds, levels
from kernelwatch import noise as noises
from kernelwatch.errors import InputError
from kernelwatch.loading import load
from kernelwatch.results import HOST_BOUND_COUNTER

LONG_NS = 100_000.0


@dataclass(frozen=True)
class Run:
    """One file: per benchmark its median, the spread of its per-process medians, and the
    host-bound ones; the card and host it was measured on."""

    medians: dict[str, float]
    spreads: dict[str, float]
    host_bound: set[str]
    card: str
    host: str


def _run(path: str) -> Run:
    result = load(path)
    if len(np.unique(result.processes)) < 2:
        raise InputError(
            f"{path}: one process: the process level needs a run of two processes or more"
        )
    measured = noises.measure(result, pool=False)
    times = result.columns["real_time"]
    flags = result.columns.get(HOST_BOUND_COUNTER)
    medians, spreads, host_bound = {}, {}, set()
    for k, name in enumerate(result.names):
        rows = slice(result.starts[k], result.starts[k] + result.counts[k])
        if not result.counts[k]:
            continue
        medians[name] = float(np.median(times[rows]))
        if np.isfinite(measured.between[k]):
            spreads[name] = float(measured.between[k])
        if flags is not None and (np.nan_to_num(flags[rows]) == 1).any():
            host_bound.add(name)
    unit = levels.unit_of(result.context)
    # A run whose context names no card (host) is one of its own: the widest reading.
    card = unit.card or f"unnamed card of {path}"
    host = unit.host or f"unnamed host of {path}"
    return Run(medians, spreads, host_bound, card, host)


def _fit(points: list[tuple[float, float]], quantile: float = 0.99) -> tuple[float, float]:
    """(relative, absolute ns) covering that quantile of the spreads."""
    spread = np.array([s for _, s in points])
    time = np.array([t for t, _ in points])
    long = spread[time >= LONG_NS]
    source = long if len(long) else spread
    relative = float(np.quantile(source, quantile))
    excess = (spread - relative) * time
    short = excess[time < LONG_NS]
    absolute = float(np.quantile(short, quantile)) if len(short) else 0.0
    return relative, max(absolute, 0.0)


def _family(name: str) -> str:
    return name.split("/", 1)[0]


def _pooled(values: np.ndarray, groups: list[str]) -> float | None:
    """The relative spread of `values` (logs) around their group's mean, pooled over groups; None
    where no group holds two."""
    names = sorted(set(groups))
    dof = len(values) - len(names)
    if dof <= 0:
        return None
    mean = {g: values[[i for i, h in enumerate(groups) if h == g]].mean() for g in names}
    centred = values - np.array([mean[g] for g in groups])
    return float(np.sqrt(np.sum(centred**2) / dof))


def main(paths: list[str]) -> int:
    if len(paths) < 2:
        print("usage: derive_prior.py RUN.json RUN.json [...]", file=sys.stderr)
        return 2
    runs = [_run(p) for p in paths]
    host_bound = set().union(*(r.host_bound for r in runs))
    names = sorted(set.intersection(*(set(r.medians) for r in runs)) - host_bound)
    if not names:
        raise InputError("the runs share no benchmark that does not touch the host")
    # Runs of one card are one card (the mean of their medians); cards of one host, one host.
    cards = sorted({r.card for r in runs}, key=[r.card for r in runs].index)
    host_of_card = {r.card: r.host for r in runs}
    card_hosts = [host_of_card[c] for c in cards]
    hosts = sorted(set(card_hosts), key=card_hosts.index)
    process: list[tuple[float, float]] = []
    card: list[tuple[float, float]] = []
    host: list[tuple[float, float]] = []
    kind: list[tuple[float, float]] = []
    unseen_kind: list[tuple[float, float]] = []

    def of_cards(medians: np.ndarray) -> np.ndarray:
        return np.array([medians[[r.card == c for r in runs]].mean() for c in cards])

    medians_of_card = np.array([of_cards(np.array([r.medians[n] for r in runs])) for n in names]).T
    # Under kinds.MIN_SHARED benchmarks no two cards can be told of one kind (nor of two).
    told = len(cards) > 1 and len(names) >= kinds.MIN_SHARED
    kind_of_card = kinds.group(medians_of_card) if told else np.zeros(len(cards), dtype=int)
    kinds_seen = int(kind_of_card.max()) + 1 if told else 1
    kind_dof = len(cards) - kinds_seen if told else 0
    by_family: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j, name in enumerate(names):
        medians = np.array([r.medians[name] for r in runs])
        time = float(np.median(medians))
        family = by_family[_family(name)]
        family["benchmarks"].append(time)
        for r in runs:
            if name in r.spreads:
                process.append((time, r.spreads[name]))
                family["process"].append(r.spreads[name])
        per_card = medians_of_card[:, j]
        within_host = _pooled(np.log(per_card), card_hosts)
        if within_host is not None:  # the cards of one host around their host's mean
            card.append((time, within_host))
            family["card"].append(within_host)
        if len(hosts) > 1:  # the hosts' means: a host's median's standard deviation, relative
            per_host = np.array([per_card[[h == g for h in card_hosts]].mean() for g in hosts])
            spread = float(np.std(per_host, ddof=1) / np.mean(per_host))
            host.append((time, spread))
            family["host"].append(spread)
        if kind_dof > 0:  # pooled around each kind's mean
            within_kind = _pooled(np.log(per_card), [str(k) for k in kind_of_card])
            assert within_kind is not None
            kind.append((time, within_kind))
            family["kind"].append(within_kind)
        if kinds_seen > 1:  # each card against every card of another kind, halved: a limit is 2x
            logs = np.log(per_card)
            gaps = np.abs(logs[:, None] - logs[None, :])[kind_of_card[:, None] != kind_of_card]
            unseen_kind.append((time, float(gaps.max()) / 2.0))
    print(
        f"{len(names)} benchmarks in all {len(paths)} runs ({len(host_bound)} host-bound left out)"
        f" on {len(cards)} card(s) of {len(hosts)} host(s)"
    )
    if told:
        print(f"kinds of card: {kind_of_card.tolist()} (kinds.py), {kind_dof} degrees of freedom")
    else:
        print("kinds of card: not told (one card, or fewer shared benchmarks than kinds.py needs)")
    if len(hosts) < 2:
        print("host level: not measured (the runs were made on one host)")
    for level, points in (("process", process), ("card", card), ("kind", kind), ("host", host)):
        if not points:
            continue
        relative, absolute = _fit(points)
        print(f"{level:8s} p99: relative {relative:.4%}, absolute {absolute:.0f} ns")
    if unseen_kind:
        # Kinds differ systematically, the same on every card of a kind: a percentile would
        # leave known false alarms on every card of an unseen kind, so the largest gap is used.
        relative, absolute = _fit(unseen_kind, quantile=1.0)
        print(f"unseen kind, largest: relative {relative:.4%}, absolute {absolute:.0f} ns")
    shown = [lv for lv in ("process", "card", "kind", "host") if lv != "card" or card]
    print(
        "\n| family | benchmarks | "
        + " | ".join(f"{level}: median | p99" for level in shown)
        + " |"
    )
    print("| --- | --- |" + " --- | --- |" * len(shown))
    for family, values in sorted(by_family.items()):
        cells = []
        for level in shown:
            v = np.array(values[level])
            cells += [f"{np.median(v):.3%}", f"{np.quantile(v, 0.99):.3%}"] if len(v) else ["", ""]
        print(f"| {family} | {len(values['benchmarks'])} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as exc:  # a missing file, not a result, a run of one process
        sys.exit(f"derive_prior: {exc}")
