"""What a contender is judged against and at which level: the baseline's runs it is compared
with (its own card, cards of its kind, or all), the level crossed, each benchmark's spread at
that level (stored, measured or the prior, with the notes saying which) and the sensitivity."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from kernelwatch import kinds, levels
from kernelwatch import noise as noises
from kernelwatch.compare.outcome import Comparison, Settings, Verdict
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.results import Metric, ResultSet, gpu_model

# Sensitivity is the slowdown caught with 90 % probability: the one-sided normal quantile.
_Z_POWER = 1.2815515655446004


@dataclass(frozen=True)
class Reference:
    """What a contender is judged by: `baseline`, the runs it is compared with; `crossing`, the
    level between them; `pooled`, the result whose spreads apply (the whole baseline where
    `baseline` is its runs on cards of the contender's kind); `units`, how many runs measured
    that level's spread (1 + its degrees of freedom)."""

    baseline: ResultSet
    crossing: levels.Crossing
    pooled: ResultSet
    units: int
    # The contender's card is of no kind the baseline holds, and the baseline holds one kind:
    # the spread between its hosts never crossed kinds, which differ by 0.6-1.0 % (median) and
    # up to 4.9 % (docs/measurement.md), so it says nothing of this card.
    unseen_kind: bool = False


def judged_against(baseline: ResultSet, contender: ResultSet, notes: list[str]) -> Reference:
    """The runs of a pooled baseline on the contender's own card (process level); else those on
    cards of its kind (kinds.py), held to the spread between cards of one kind; else all."""
    units = levels.units_of(baseline.context)
    crossing = levels.crossing(baseline.context, contender.context)
    wide = Reference(baseline, crossing, baseline, _units_at(crossing.level, units))
    if len(levels.units_of(contender.context)) > 1:  # a pooled contender is not one card
        return wide
    own = noises.runs_of_card(baseline, levels.unit_of(contender.context).card)
    if own is not None:
        # Cards of one model differ by up to 4.9 % on some kernels (docs/measurement.md): a
        # pooled baseline that holds a run on the contender's own card is compared by it.
        notes.append(
            "the baseline holds a run on this card: compared with that run (process level)"
        )
        return Reference(own, levels.crossing(own.context, contender.context), own, 1)
    found = noises.kind_of(baseline, contender) if crossing.level is Level.HOST else None
    if found is None:
        return wide
    if found.kind is None:
        unseen = found.kinds < 2
        notes.append(
            f"this card is of none of the baseline's {found.kinds} kind(s) of card (shape "
            f"distance {found.distance:.2%} from the nearest; one kind within "
            f"{kinds.KIND_DISTANCE:.2%}): held to the spread between all its hosts"
            + (
                ", at least the prior for an unseen kind (docs/measurement.md): with one kind, "
                "that spread never crossed kinds; add a run on a card of this kind to the "
                "baseline to judge it sharply"
                if unseen
                else ""
            )
        )
        return replace(wide, unseen_kind=unseen)
    mine = noises.runs_of(baseline, found.runs) or baseline
    if int((mine.counts > 0).sum()) < int((baseline.counts > 0).sum()):
        notes.append(
            "this card is of a kind the baseline holds, but its runs on that kind lack "
            "benchmarks the others have: held to the spread between all its hosts"
        )
        return wide
    notes.append(
        f"this card is of a kind the baseline holds (shape distance {found.distance:.2%}, "
        f"within {kinds.KIND_DISTANCE:.2%}): compared with its {len(found.runs)} run(s) on "
        "cards of that kind, held to the spread between cards of one kind (kinds.py)"
    )
    kind = levels.Crossing(
        Level.KIND, "another host, a card of the same kind", crossing.other_config
    )
    return Reference(mine, kind, baseline, len(units) - found.kinds + 1)


def _units_at(level: Level, units: tuple[levels.Unit, ...]) -> int:
    """The distinct cards (hosts at the host level) a level's spread was measured over."""
    return len({u.host if level is Level.HOST else u.card for u in units})


@dataclass(frozen=True)
class Spread:
    noise: np.ndarray  # relative spread of each benchmark at the level crossed
    measured: np.ndarray  # bool: measured at that level (False: the prior was used)
    units: int  # the baseline's runs at that level (cards or hosts), for the sensitivity


def spread_at_level(
    against: Reference,
    contender: ResultSet,
    measured: Measured,
    metric: Metric,
    stored_noise: noises.LevelNoise | None,
    notes: list[str],
) -> Spread:
    """Each benchmark's relative spread at the level the comparison crosses: the baseline's
    stored noise where there is one (for the time metric: noise.json describes times), else
    computed from its values (noise.py); where the level was never measured, the prior; at
    least the spread of the contender's own per-process medians, so a disturbed process of
    the judged run widens its limit instead of raising an alarm."""
    spreads = _computed_spreads(against, metric, measured)
    if stored_noise is not None and metric.key == noises.TIME.key:
        spreads = _stored_first(spreads, stored_noise.take(measured.names), notes)
    level = against.crossing.level
    durations = _durations(against.baseline, measured)
    model = gpu_model(against.baseline.context)
    gpu = model is not None
    one_gpu_hosts = against.crossing.one_gpu_hosts
    prior = levels.prior(level, durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts)
    units = levels.units_of(against.pooled.context)
    at = _upper_bound(spreads.at(level), against, units, prior, notes)
    # Measured or not before the floors: a floor (np.fmax) makes a never-measured level finite,
    # and a one-card baseline against a host configured otherwise read "measured for every
    # benchmark" while every limit was the host prior.
    has = np.isfinite(at)
    at = _floored_where_unmeasured(at, against, durations, model, notes)
    noise = np.where(np.isfinite(at), at, np.fmax(spreads.process, prior))
    notes.append(_level_note(against.crossing, units, has, model))
    own = noises.between_processes(contender, metric, measured.c, measured.c_values)
    return Spread(np.maximum(noise, own), has, against.units)


def _computed_spreads(against: Reference, metric: Metric, measured: Measured) -> noises.LevelNoise:
    """Each benchmark's spreads computed from the baseline's values (noise.py)."""
    if against.pooled is against.baseline:
        return noises.measure(against.baseline, metric, measured.b).levels()
    # the spread within kinds comes from every kind the pooled baseline holds
    return noises.measure(against.pooled, metric).levels().take(measured.names)


def _stored_first(
    spreads: noises.LevelNoise, kept: noises.LevelNoise, notes: list[str]
) -> noises.LevelNoise:
    """The stored noise `kept` (aligned with `spreads`) where it holds the benchmark."""
    found = np.isfinite(kept.process)
    notes.append(
        f"noise: the baseline's stored noise for {int(found.sum())} of "
        f"{len(found)} benchmark(s)"
        + ("" if found.all() else "; computed from its repetitions for the others")
    )
    return noises.LevelNoise(
        spreads.names,
        np.where(found, kept.process, spreads.process),
        np.where(found, kept.process_measured, spreads.process_measured),
        np.where(found, kept.card, spreads.card),
        np.where(found, kept.host, spreads.host),
        np.where(found & np.isfinite(kept.kind), kept.kind, spreads.kind),
    )


def _upper_bound(
    at: np.ndarray,
    against: Reference,
    units: tuple[levels.Unit, ...],
    prior: np.ndarray,
    notes: list[str],
) -> np.ndarray:
    """A spread measured above the process level, at the upper bound of its confidence interval;
    with too few of them, at least the prior."""
    level, at_level = against.crossing.level, against.units
    if level is Level.PROCESS or not np.isfinite(at).any():
        return at
    factor = levels.upper_bound_factor(at_level)
    at = at * factor
    few = at_level < levels.MIN_UNITS
    if few:
        at = np.fmax(at, prior)
    measured_from = (
        f"{len(units)} runs in kinds of card ({at_level - 1} degree(s) of freedom)"
        if level is Level.KIND
        else f"{at_level} {level.label}s"
    )
    notes.append(
        f"the {level.label}-level spread, measured from {measured_from}, is taken "
        f"at its upper {levels.UPPER_BOUND_CONFIDENCE:.0%} confidence bound (x{factor:.2f})"
        + (f"; with fewer than {levels.MIN_UNITS}, at least the prior" if few else "")
    )
    return at


def _floored_where_unmeasured(
    at: np.ndarray,
    against: Reference,
    durations: np.ndarray,
    model: str | None,
    notes: list[str],
) -> np.ndarray:
    """At least the prior (the baseline's GPU model's) where the baseline never measured a
    spread like this contender's: a card of an unseen kind, a host configured unlike all of the
    baseline's."""
    gpu = model is not None
    one_gpu_hosts = against.crossing.one_gpu_hosts
    if against.unseen_kind:
        unseen = levels.unseen_kind_prior(
            durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts
        )
        at = np.fmax(at, unseen)
    if against.crossing.level >= Level.KIND and against.crossing.other_config:
        # Measured between hosts, but never on one configured so: at least the host prior,
        # whatever the level (the kind level's prior covers only one-GPU hosts alike).
        host = levels.prior(
            Level.HOST, durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts
        )
        at = np.fmax(at, host)
        notes.append(
            "this host is configured unlike every host of the baseline (docs/results.md, "
            "fingerprint): each spread is at least the host-level prior"
        )
    return at


def _level_note(
    crossing: levels.Crossing, units: tuple[levels.Unit, ...], has: np.ndarray, model: str | None
) -> str:
    """Which level is crossed, and where its spread was measured or is the prior (the
    baseline's GPU model's)."""
    level = crossing.level
    relative, absolute = levels.prior_constants(level, model, crossing.one_gpu_hosts)
    per_time = f" + {absolute:g} ns / time" if model is not None else " (no GPU: no launch term)"
    if has.all():
        said = "measured for every benchmark"
    else:
        said = (
            f"measured for {int(has.sum())} of {len(has)} benchmark(s); never measured for "
            f"the others: the {level.label}-level prior {relative:.2%}{per_time}"
            f"{' (one-GPU hosts)' if _one_gpu_host_prior(crossing, model) else ''}"
            f"{' (no runs of this model: the widest prior)' if _unmeasured_model(model) else ''} "
            "(docs/measurement.md)"
        )
    return (
        f"level: {level.label} ({crossing.why}; baseline: {levels.describe(units)}); "
        f"its spread {said}"
    )


def _one_gpu_host_prior(crossing: levels.Crossing, model: str | None) -> bool:
    """Whether the host prior taken is the one among one-GPU hosts (levels.ONE_GPU_HOSTS)."""
    return crossing.level is Level.HOST and crossing.one_gpu_hosts and model in levels.ONE_GPU_HOSTS


def _unmeasured_model(model: str | None) -> bool:
    """A GPU model none of whose runs went into levels.PRIORS."""
    return model is not None and model not in levels.PRIORS


def _durations(baseline: ResultSet, measured: Measured) -> np.ndarray:
    """Each benchmark's median time in the baseline (ns), for the prior; NaN without times."""
    column = baseline.metric_column(noises.TIME)
    if column is None:
        return np.full(len(measured.names), np.nan)
    values, _ = column
    return np.array(
        [
            float(np.median(values[start : start + count])) if count else np.nan
            for start, count in zip(
                baseline.starts[measured.b].tolist(), baseline.counts[measured.b].tolist()
            )
        ]
    )


def sensitivity_of(
    limit: np.ndarray,
    spread: Spread,
    level: Level,
    b_processes: list[int],
    c_processes: list[int],
) -> list[float]:
    """The smallest slowdown caught with 90 % probability: the change must clear the limit,
    and the observed difference of the medians falls short of the true one by more than
    1.28 standard deviations only 10 % of the time. That standard deviation: at the process
    level the noise (a per-process median's spread) over each side's processes; at a wider
    level one run's offset plus the baseline's mean offset over its runs at that level."""
    if level is Level.PROCESS:
        b_count = np.maximum(np.asarray(b_processes, dtype=float), 1.0)
        c_count = np.maximum(np.asarray(c_processes, dtype=float), 1.0)
        factor = np.sqrt(1.0 / b_count + 1.0 / c_count)
    else:
        factor = np.full(len(limit), np.sqrt(1.0 + 1.0 / max(spread.units, 1)))
    result: list[float] = np.expm1(np.log1p(limit) + _Z_POWER * spread.noise * factor).tolist()
    return result


# What each side holds of a benchmark: verdicts decided by presence, errors and skips alone; the
# benchmarks measured on both sides with the metric's columns; the processes per benchmark.


# Marks a benchmark skipped or absent on both sides: left out, counted in a note.
LEAVE_OUT = Comparison("", Verdict.SAME, "", failed=False)


def _status(result: ResultSet, name: str) -> str:
    if name in result.errors:
        return "error"
    k = result.index.get(name)
    if k is None:
        return "absent"
    if name in result.skipped or result.counts[k] == 0:
        return "skipped"
    return "ok"


# The reason of a baseline benchmark that the contender's build does not register at all
# (completeness.py): removed or renamed on purpose, so MISSING without failing.
NOT_IN_BUILD = "not in this build: removed or renamed"


def presence_verdict(
    name: str,
    baseline: ResultSet,
    contender: ResultSet,
    settings: Settings,
    removed: frozenset[str] = frozenset(),
) -> Comparison | None:
    """Verdicts decided by what exists and what failed, before any statistics; None when both
    sides have measurements. `removed`: the benchmarks the contender's build does not register
    (completeness.py); absent from the contender, they are MISSING without failing."""
    base, cont = _status(baseline, name), _status(contender, name)
    if cont == "error":
        where = "both sides" if base == "error" else "contender"
        return Comparison(
            name,
            Verdict.ERROR,
            f"{where}: {contender.errors[name]}",
            failed=not settings.allow_errors,
        )
    if cont != "ok":
        if base in ("absent", "skipped"):
            return LEAVE_OUT
        if cont == "absent" and name in removed:
            return Comparison(name, Verdict.MISSING, NOT_IN_BUILD, failed=False)
        why = (
            f"skipped in the contender: {contender.skipped[name]}"
            if name in contender.skipped
            else "not in the contender"
        )
        return Comparison(name, Verdict.MISSING, why, failed=not settings.allow_missing)
    if base in ("absent", "skipped"):
        why = (
            f"skipped in the baseline: {baseline.skipped[name]}"
            if name in baseline.skipped
            else "not in the baseline"
        )
        return Comparison(name, Verdict.NEW, why, failed=False)
    if base == "error":
        return Comparison(name, Verdict.ERROR, f"baseline: {baseline.errors[name]}", failed=False)
    return None


def presence_notes(comparisons: list[Comparison]) -> list[str]:
    """What to do about the benchmarks a changed suite added, removed or renamed: a NEW one is
    not judged at all until the baseline holds it; one the build no longer registers is
    MISSING without failing until the baseline drops it; any other MISSING one fails every run
    until then (docs/ci.md, "When a pull request changes the suite")."""
    new = sum(c.verdict is Verdict.NEW and "skipped" not in c.reason for c in comparisons)
    missing = sum(c.verdict is Verdict.MISSING and c.failed for c in comparisons)
    removed = sum(
        c.verdict is Verdict.MISSING and not c.failed and c.reason == NOT_IN_BUILD
        for c in comparisons
    )
    rename = "; NEW and MISSING together: a rename? Its old names are MISSING, its new NEW"
    notes = []
    if new:
        notes.append(
            f"{new} NEW benchmark(s) not in the baseline: not judged until the baseline holds "
            "them; add them after the merge (baselines/README.md)"
        )
    if removed:
        notes.append(
            f"{removed} MISSING benchmark(s) not in this build (removed or renamed): not "
            "failing; the baseline drops them at its next whole update (the baseline workflow "
            "after the merge pools with --drop-missing)" + (rename if new else "")
        )
    if missing:
        notes.append(
            f"{missing} MISSING benchmark(s) fail the comparison until the baseline drops them: "
            "if removed on purpose, drop them from the baseline (baselines/README.md)"
            + (rename if new and not removed else "")
        )
    return notes


@dataclass(frozen=True)
class Measured:
    """The benchmarks measured on both sides: their indices in each result set and the
    metric's columns (validated)."""

    names: list[str]
    b: np.ndarray  # benchmark index in the baseline
    c: np.ndarray  # benchmark index in the contender
    b_values: np.ndarray  # the baseline's metric column
    c_values: np.ndarray


def metric_values(
    baseline: ResultSet, contender: ResultSet, names: list[str], metric: Metric
) -> tuple[Measured, int, list[tuple[str, str]]]:
    """The benchmarks measured on both sides; plus how many lack the metric on both sides,
    and which lack it on one side."""
    empty = np.zeros(0, dtype=np.int64)
    if not names:
        return Measured([], empty, empty, np.zeros(0), np.zeros(0)), 0, []
    found = []
    for result in (baseline, contender):
        column = result.metric_column(metric)
        if column is None:
            raise InputError(f"{result.label}: no benchmark has the metric {metric.key!r}")
        values, mask = column
        cumulative = np.concatenate([[0], np.cumsum(mask)])
        present = cumulative[result.starts + result.counts] - cumulative[result.starts]
        partial = (present > 0) & (present < result.counts)
        if partial.any():
            k = int(np.argmax(partial))
            raise InputError(
                f"{result.label}: {metric.key} missing from some repetitions of {result.names[k]}"
            )
        found.append((values, present > 0))
    (b_values, b_has), (c_values, c_has) = found

    b = np.array([baseline.index[name] for name in names], dtype=np.int64)
    c = np.array([contender.index[name] for name in names], dtype=np.int64)
    both, b_only, c_only = b_has[b] & c_has[c], b_has[b] & ~c_has[c], ~b_has[b] & c_has[c]
    one_sided = [(names[i], "contender") for i in np.flatnonzero(b_only)]
    one_sided += [(names[i], "baseline") for i in np.flatnonzero(c_only)]
    lacking = int((~b_has[b] & ~c_has[c]).sum())
    keep = np.flatnonzero(both)
    measured = Measured([names[i] for i in keep], b[keep], c[keep], b_values, c_values)
    return measured, lacking, one_sided


def process_counts(result: ResultSet, k: np.ndarray) -> list[int]:
    """How many processes (files, or processes of a merged run) each benchmark's values came
    from."""
    if not len(result.processes) or result.processes.max() == 0:
        return [1] * len(k)
    return [
        len(set(result.processes[start : start + count].tolist()))
        for start, count in zip(result.starts[k].tolist(), result.counts[k].tolist())
    ]
