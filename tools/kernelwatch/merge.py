"""Shards: the suite split into N parts (`run --shard K/N`, at the end of this module), and the
results of the shards of one GPU model joined into one result, which `compare`, `baseline
update` and `history ingest` take like any other.

The rows are joined by runner.join_outputs (the same code that joins a run's binaries); here only
what makes the shards one measurement is checked: one commit, one GPU model, one driver, CUDA
runtime and build (results.MEASURING_KEYS), no empty part, the same harness and run
settings (every `kernelwatch_*` context key except those that describe one process or one
job), one N, one plan (the same benchmarks before sharding: plan_key), each part once.
Shards may have run on different cards of the model: the merged gpu_uuid then names them all,
so that compare treats the result as another card than any baseline's (the wider other-card
limit applies).
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import runner
from kernelwatch.completeness import BENCH_KEY, WHOLE_BUILD_KEY
from kernelwatch.errors import InputError, shortened
from kernelwatch.gbench import TIME_UNITS, show
from kernelwatch.history.intake import moment
from kernelwatch.kernels import CONTEXT_KEY as KERNELS_KEY
from kernelwatch.kernels import joined as joined_kernels
from kernelwatch.levels import RUNS_KEY, measured_on
from kernelwatch.names import row_name
from kernelwatch.results import (
    ANCHOR_KEY,
    CEILING_KEY,
    FAILED_KEY,
    HOST_BOUND_ON_KEY,
    MEASURING_KEYS,
    NO_RESULT_KEY,
    OCCUPANTS_KEY,
    RECORD_KEYS,
    anchoring,
    gpu_model,
    joined_record,
)
from kernelwatch.runner.precision import TOPPED_UP_KEY
from kernelwatch.runner.sharing import estimate

SHARD_KEY = "kernelwatch_shard"  # "K/N", in the context of a sharded run
SHARDS_KEY = "kernelwatch_shards"  # in a merged result: "K/N on GPU-…" for each part
GPU_INDEX_KEY = "kernelwatch_gpu_index"  # `run --gpus`: nvidia-smi's index of the GPU
_GPU_INDICES = re.compile(r"[0-9]+(,[0-9]+)*")  # (a merged result merged again: its parts')
_FIGURES = ("kernelwatch_run_seconds", CEILING_KEY)  # merged from every part's (_run_seconds)
PURPOSE_KEY = "kernelwatch_run_purpose"
SERIAL_KEY = "kernelwatch_serial"  # the host-bound benchmarks (runner, interleaving)
# `run` writes a flagged benchmark's re-run beside its result (s2.json: s2.confirm-1.json), with
# this purpose: a glob over the shards' results (s*.json) also names it, but it is no part.
CONFIRM_PURPOSE = "confirm "

# Context keys that describe one job, one process or one card rather than how it measured:
# allowed to differ between the parts.
PER_JOB_KEYS = frozenset(
    {
        SHARD_KEY,
        GPU_INDEX_KEY,
        "kernelwatch_run_started",
        "kernelwatch_run_seconds",
        "kernelwatch_run_command",
        PURPOSE_KEY,
        "kernelwatch_benchmark_commands",
        SERIAL_KEY,  # each part's own host-bound benchmarks: joined
        OCCUPANTS_KEY,  # other processes on that part's GPU: joined
        TOPPED_UP_KEY,  # each part tops up its own imprecise benchmarks
        # measured at each process start: differs between cards of one model by a few %
        CEILING_KEY,
        ANCHOR_KEY,  # how that part's card was judged: merged per part (merged_anchoring)
        # what that part's run established (built identically, not confirmed): joined
        *RECORD_KEYS,
        KERNELS_KEY,  # the kernels of that part's benchmarks: joined (kernels.joined)
        # a part whose process crashed records it: joined, so that its benchmarks stay ERRORs
        FAILED_KEY,
        NO_RESULT_KEY,
    }
)
# What names the host (levels.host_identity): a merged result of parts from several hosts must
# not take the first part's, nor its configuration (levels.HOST_CONFIG_KEYS), or compare
# judged the other parts as measured on that host (a host-bound benchmark failed in the merged
# result that its own shard's report did not fail): levels.measured_on, as a folder of the
# parts is read (loading).


def _shard_of(label: str, context: Mapping[str, Any]) -> Shard | None:
    text = context.get(SHARD_KEY)
    if text is None:
        return None
    return parse(str(text), f"{label}: {SHARD_KEY}")


def _settings(context: Mapping[str, Any]) -> dict[str, str]:
    return {
        key: str(value)
        for key, value in context.items()
        if key.startswith("kernelwatch_") and key not in PER_JOB_KEYS and key != PLAN_KEY
    }


def is_confirming_rerun(document: Mapping[str, Any]) -> bool:
    """A regression's re-run by `run --confirm`, not a result of its own."""
    return str((document.get("context") or {}).get(PURPOSE_KEY, "")).startswith(CONFIRM_PURPOSE)


def merge_results(
    inputs: Sequence[tuple[str, Mapping[str, Any]]], *, allow_partial: bool = False
) -> dict[str, Any]:
    """One result from shard results [(label, document)]; refuses (one line) mixed commits,
    models or settings, a part given twice, and (unless `allow_partial`) a missing part."""
    if len(inputs) < 1:
        raise InputError("merge: name at least one result file")
    labels = [label for label, _ in inputs]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise InputError(f"{twice}: given twice")
    first_label, first = inputs[0]
    first_context = first.get("context") or {}
    model = gpu_model(first_context)
    settings = _settings(first_context)
    shards: dict[int, str] = {}
    counts: set[int | None] = set()
    for label, document in inputs:
        context = document.get("context") or {}
        if gpu_model(context) != model:
            raise InputError(
                f"{label} ran on {shortened(gpu_model(context) or 'an unnamed GPU')}, "
                f"{first_label} on {shortened(model or 'an unnamed GPU')}: merge joins the shards "
                "of one GPU model"
            )
        _same_software(label, context, first_label, first_context)
        if not document.get("benchmarks"):
            # run never writes one: a shard that no benchmark falls in is refused (exit 2)
            raise InputError(f"{label}: holds no benchmark results: not a shard of a run")
        other = _settings(context)
        for key in sorted(set(settings) | set(other)):
            if settings.get(key) != other.get(key):
                what = "commit" if key == "kernelwatch_git_commit" else f"setting {key}"
                raise InputError(
                    f"{label} and {first_label} differ in {what} "
                    f"({shortened(str(other.get(key, 'unset')))} vs "
                    f"{shortened(str(settings.get(key, 'unset')))}): not parts of one run"
                )
        for key in DATE_KEYS:
            if context.get(key) and moment(str(context[key])) is None:
                raise InputError(
                    f"{label}: its context's {key} is {str(context[key])[:60]!r}, not an ISO 8601 "
                    "time: the merged result is dated by its earliest part"
                )
        part = _shard_of(label, context)
        counts.add(part.count if part else None)
        if len(counts) > 1:
            raise InputError(
                f"{label}: {'shard ' + str(part) if part else 'not a shard'}, unlike "
                f"{first_label} ({first_context.get(SHARD_KEY, 'not a shard')}): merge the "
                "shards of one split"
            )
        _same_plan(label, context, first_label, first_context)
        if not isinstance(context.get(ANCHOR_KEY, ""), (str, type(None))):
            raise InputError(f"{label}: context {ANCHOR_KEY} is not a string")
        index = context.get(GPU_INDEX_KEY, "0")
        if not isinstance(index, str) or not _GPU_INDICES.fullmatch(index):
            raise InputError(
                f"{label}: context {GPU_INDEX_KEY} is {shortened(show(index))}, not a GPU's "
                "index as run writes it (0; a merged result's 0,1)"
            )
        for key in _FIGURES:
            if not _figure(context.get(key)):
                raise InputError(
                    f"{label}: context {key} is {shortened(show(context[key]))}, not a number "
                    "of zero or more as run writes it"
                )
        for key in _NAME_LISTS:
            names = context.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InputError(f"{label}: context {key} is not a list of strings")
        _check_kernels(label, context.get(KERNELS_KEY))
        if part:
            if part.index in shards:
                raise InputError(f"{label} and {shards[part.index]} are both shard {part}")
            shards[part.index] = label
    count = next(iter(counts))
    if count is not None and len(shards) != count and not allow_partial:
        missing = sorted(set(range(1, count + 1)) - set(shards))
        raise InputError(
            f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} not given: the merged "
            "result would miss their benchmarks (--allow-partial merges what there is)"
        )
    if count is not None:  # in shard order, whatever the order on the command line
        order = {label: index for index, label in shards.items()}
        inputs = sorted(inputs, key=lambda item: order[item[0]])
    if count is not None:
        _one_part_each(inputs)
    contexts = [document.get("context") or {} for _, document in inputs]
    outputs = [(Path(label), document) for label, document in inputs]
    document = runner.join_outputs(outputs, _merged_context(contexts))
    judged = merged_anchoring(inputs)
    if judged is None:
        document["context"].pop(ANCHOR_KEY, None)
    else:  # the first part's phrase (join_outputs copied its context) replaced by every part's
        document["context"][ANCHOR_KEY] = judged
    for key in RECORD_KEYS:
        document["context"].pop(key, None)
        record = joined_record([(label, d.get("context") or {}) for label, d in inputs], key)
        if record is not None:
            document["context"][key] = record
    if count is not None:
        # (--allow-partial: what there is, every part given or not)
        refuse = len(shards) == count and not allow_partial
        _whole_plan(document, first_context, count, refuse=refuse)
        document["context"].pop(SHARD_KEY, None)
        document["context"].pop(PLAN_KEY, None)
    return document


def _whole_plan(
    document: dict[str, Any], first: Mapping[str, Any], count: int, *, refuse: bool
) -> None:
    """Checks that every part given holds every benchmark of their plan (plan_key of the rows'
    names and those a crash took): parts of two splits of one plan (the split follows the
    baselines' durations, which the key does not hold) left a benchmark in no part, and merged.
    A merged result that holds the plan of a run of the whole build is that run, and says so
    (completeness.WHOLE_BUILD_KEY): a benchmark it lacks is not in the build, not MISSING."""
    plan, context = first.get(PLAN_KEY), document["context"]
    # (a key plan_key did not write holds no names to check; parts that left the host-bound
    # benchmarks to another GPU hold less than their plan)
    if not _PLAN.fullmatch(str(plan)) or first.get(HOST_BOUND_ON_KEY):
        return
    names = {row_name(row) for row in document["benchmarks"] if isinstance(row, dict)}
    names |= set(context.get(NO_RESULT_KEY, []))
    if plan_key(names, count) != str(plan).split(_SHARED, 1)[0]:
        if refuse:
            raise InputError(
                f"the {count} parts hold {len(names)} benchmark(s), not the benchmarks of "
                f"their plan ({PLAN_KEY}): parts of two splits, split by other durations "
                "(another --baselines or --baseline), so some benchmark fell in no part; run "
                "every shard with the same options (--allow-partial merges what there is)"
            )
        return
    if not first.get("kernelwatch_filter") and not first.get(BENCH_KEY):
        context[WHOLE_BUILD_KEY] = "true"


def _one_part_each(inputs: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """A benchmark in two parts of one plan: parts of two splits (the other way they meet than
    _whole_plan's), whose words join_outputs has for two binaries of one run only."""
    owner: dict[str, str] = {}
    for label, document in inputs:
        for row in document.get("benchmarks", []):
            if not isinstance(row, dict):
                continue
            first = owner.setdefault(row_name(row), label)
            if first != label:
                raise InputError(
                    f"benchmark {row_name(row)!r} is in both {first} and {label}: parts of two "
                    "splits, split by other durations (another --baselines or --baseline); run "
                    "every shard with the same options"
                )


def _same_plan(
    label: str, context: Mapping[str, Any], first_label: str, first: Mapping[str, Any]
) -> None:
    """Shards of one split of one list of benchmarks (plan_key): the same commit may
    build other binaries (another project's, another build's). Shards from before the key are
    merged only when every part lacks it."""
    theirs, ours = context.get(PLAN_KEY), first.get(PLAN_KEY)
    if theirs == ours:
        return
    if theirs is None or ours is None:
        older = label if theirs is None else first_label
        raise InputError(
            f"{older} records no {PLAN_KEY} (a shard of an older kernelwatch), "
            f"{label if older == first_label else first_label} does: not parts of one run; "
            "run every shard with one kernelwatch"
        )
    raise InputError(
        f"{label} and {first_label} are shards of different plans ({PLAN_KEY} "
        f"{shortened(str(theirs))} vs {shortened(str(ours))}): another project's or another "
        "build's benchmarks, not parts of one run"
    )


def _same_software(
    label: str, context: Mapping[str, Any], first_label: str, first: Mapping[str, Any]
) -> None:
    """One run is measured with one driver, CUDA runtime and build (results.MEASURING_KEYS);
    a key one part records and another lacks differs too."""
    for key, what in MEASURING_KEYS.items():
        theirs, ours = context.get(key), first.get(key)
        if str(theirs) != str(ours):
            raise InputError(
                f"{label} and {first_label} differ in {what}, {key} "
                f"({shortened(str(theirs or 'unset'))} vs {shortened(str(ours or 'unset'))}): "
                "not parts of one run"
            )


# A part whose context records no anchoring: `run` judged it against the committed baseline
# (the baseline holds its card, or it ran without --anchor).
UNANCHORED = "against the committed baseline (no anchoring recorded)"
# How the phrase of an anchored verdict begins: anchor.Anchor.phrase's "anchored on <commit>",
# and a merged result's whose every part was (below), so that merging merged results counts
# them alike. "not anchored: ..." (why not) and "partly anchored" do not.
ANCHORED = "anchored "


def merged_anchoring(inputs: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    """How the parts (in shard order) were judged, as one phrase for the merged result's
    ANCHOR_KEY, which report and history show as they show a run's: None where no part records
    anchoring; a lone part's own phrase (it is the whole, and a merged result merged again keeps
    its phrase); else every part's phrase whole (`part K/N (file, GPU): <phrase or
    UNANCHORED>`), led by whether all, none or only some parts were anchored: each part's
    verdict was its own, and parts judged differently are said to be, not refused (a split
    run's cards that the baseline holds are not anchored, the others are)."""
    phrases = [anchoring(document.get("context") or {}) for _, document in inputs]
    if all(phrase is None for phrase in phrases):
        return None
    if len(inputs) == 1:
        return phrases[0]
    described = []
    for number, ((label, document), phrase) in enumerate(zip(inputs, phrases), 1):
        context = document.get("context") or {}
        shard = _shard_of(label, context)
        gpu = context.get("gpu_uuid") or "an unnamed GPU"
        described.append(f"part {shard or number} ({label}, {gpu}): {phrase or UNANCHORED}")
    anchored = sum(1 for phrase in phrases if phrase and phrase.startswith(ANCHORED))
    if anchored == len(inputs):
        lead = "anchored per part, each on the card it ran on"
    elif anchored == 0:
        lead = "not anchored, per part"
    else:
        lead = (
            f"partly anchored, per part ({anchored} of {len(inputs)} parts anchored, the others "
            "judged against the committed baseline)"
        )
    return f"{lead}: {'; '.join(described)}"


def _check_kernels(label: str, records: Any) -> None:
    """A part's kernel records have the shape kernels.joined joins (one line, not a TypeError)."""
    if records is None:
        return
    code = (records.get("code") or {}) if isinstance(records, dict) else None
    if (
        not isinstance(records, dict)
        or not isinstance(records.get("benchmarks") or {}, dict)
        or not isinstance(code, dict)
        or not all(isinstance(kernels, dict) for kernels in code.values())
    ):
        raise InputError(
            f"{label}: context {KERNELS_KEY} is not kernel records as `run` writes them "
            "(docs/results.md); merge the part without that key"
        )


# When the run started: the merged result's are its earliest part's.
DATE_KEYS = ("date", "kernelwatch_run_started")
# The context's lists that the merged result joins (checked first: one line, not a TypeError).
_NAME_LISTS = (
    "kernelwatch_benchmark_commands",
    TOPPED_UP_KEY,
    SERIAL_KEY,
    SHARDS_KEY,
    FAILED_KEY,
    NO_RESULT_KEY,
    OCCUPANTS_KEY,
)


def _parts_of(context: Mapping[str, Any]) -> list[str]:
    """What SHARDS_KEY says of a part: "K/N on GPU-…", or a merged result's own list (merged
    again, it keeps its parts)."""
    if SHARD_KEY not in context and SHARDS_KEY in context:
        return list(context[SHARDS_KEY])
    return [f"{context.get(SHARD_KEY, '-')} on {context.get('gpu_uuid', 'an unnamed GPU')}"]


def _merged_context(contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {
        SHARDS_KEY: [entry for c in contexts for entry in _parts_of(c)],
        "kernelwatch_benchmark_commands": [
            command for c in contexts for command in c.get("kernelwatch_benchmark_commands", [])
        ],
    }
    for key in (TOPPED_UP_KEY, SERIAL_KEY, OCCUPANTS_KEY):
        if any(key in c for c in contexts):
            merged[key] = sorted({name for c in contexts for name in c.get(key, [])})
    # like gpu_uuid: the GPUs of one host that measured the parts (`run --gpus all --split`)
    indices = dict.fromkeys(str(c[GPU_INDEX_KEY]) for c in contexts if GPU_INDEX_KEY in c)
    if indices:
        merged[GPU_INDEX_KEY] = ",".join(indices)
    if any(FAILED_KEY in c or NO_RESULT_KEY in c for c in contexts):  # (run writes both)
        merged[FAILED_KEY] = [line for c in contexts for line in c.get(FAILED_KEY, [])]
        merged[NO_RESULT_KEY] = list(
            dict.fromkeys(name for c in contexts for name in c.get(NO_RESULT_KEY, []))
        )
    # One host's parts keep the first's configuration: its cards differ in NUMA node, PCIe link
    # and power limit, and "unknown" there would judge a `--gpus all --split` run at the host
    # level, wider, where its A/A runs passed at the card's (docs/running.md).
    merged.update(measured_on(contexts))
    records = joined_kernels(contexts)
    if records is not None:
        merged[KERNELS_KEY] = records
    for key in DATE_KEYS:
        # As times (merge_results checked that each is one), written as that part wrote it: the
        # parts may carry other UTC offsets, no zone (UTC, as the history takes it) or
        # fractions of a second, and then the smallest text is not the earliest time.
        dated = [
            (when, str(c[key])) for c in contexts if c.get(key) and (when := moment(str(c[key])))
        ]
        if dated:
            merged[key] = min(dated, key=lambda pair: pair[0])[1]
    seconds = _run_seconds(contexts)
    if seconds is not None:
        merged["kernelwatch_run_seconds"] = f"{seconds:.1f}"
    ceilings = [c for c in (_positive(part.get(CEILING_KEY)) for part in contexts) if c]
    if ceilings:
        # One figure for several cards (a few % apart): their median, not the first part's.
        merged[CEILING_KEY] = f"{statistics.median(ceilings):.0f}"
    return merged


def _run_seconds(contexts: Sequence[Mapping[str, Any]]) -> float | None:
    """How long the parts took together: from the first start to the last end where every
    part says when it started (the parts of `--gpus all --split` run side by side, so the sum
    of their times is more than the run took); else the sum of the times there are."""
    seconds = [_positive(c.get("kernelwatch_run_seconds")) for c in contexts]
    known = [took for took in seconds if took is not None]
    timed = [
        (start, took)
        for c, took in zip(contexts, seconds)
        if took is not None and (start := moment(c.get("kernelwatch_run_started"))) is not None
    ]
    if len(timed) < len(contexts):
        return sum(known) if known else None
    begin = min(start for start, _ in timed)
    return max((start - begin).total_seconds() + took for start, took in timed)


def _number(value: Any) -> float | None:
    """A context value that is a finite number of zero or more (text, as run writes it, or a
    JSON number; not true), as float; else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 <= number < math.inf else None


def _figure(value: Any) -> bool:
    """Whether a part's time or ceiling (_FIGURES) is absent or a number: one left out of the
    merged figure without a word made a run's time the other parts' alone."""
    return value is None or _number(value) is not None


def _positive(value: Any) -> float | None:
    """A context value that is a positive finite number, as float; else None."""
    number = _number(value)
    return number if number else None


# Shards: the suite's benchmarks split into N parts of about equal time, for N machines.
#
# `kernelwatch run --shard K/N` runs part K. The split is a pure function of the benchmark
# names (as --benchmark_list_tests gives them, with the same --filter) and the estimated time of
# each, so every shard job of one GPU model computes the same split, and the N parts together
# hold every benchmark exactly once. The times come from a baseline result when there is one
# (greedy longest-processing-time: the longest benchmark first, onto the least-loaded part);
# otherwise every benchmark counts the same and the parts get equal counts.


# Seconds a repetition costs beyond its cpu_time (set-up, check, warm-up, Google Benchmark
# between repetitions, its share of the processes' start): what makes a run's rows add up to
# its kernelwatch_run_seconds. Five runs of today's harness: 0.0096-0.0124 s (H200s
# GPU-dc7c8ec2, GPU-79d32954, GPU-5f632982, GPU-d1dff13b; H100 GPU-4474abb1), median 0.0105.
# It was 0.077 s, from two runs of the harness of the H200 baseline (417 s and 419 s for 3,560
# rows).
OVERHEAD_PER_REPETITION_S = 0.0105
# The most parts a suite splits into: beyond that a part holds one benchmark or none (the
# suite has a few hundred), and the split's per-part lists must stay small.
MAX_COUNT = 1000
# ASCII digits only: \d (and int()) take full-width and Arabic-Indic digits too, which no
# shard job writes; spaces around the numbers are kept (" 2 / 4 ", as a shell line may quote).
_SPEC = re.compile(r"[ \t]*([0-9]+)[ \t]*/[ \t]*([0-9]+)[ \t]*")
# In the context of a sharded run: which split it is a part of (plan_key); merge joins only
# parts of one plan.
PLAN_KEY = "kernelwatch_shard_plan"
# How the plan of a suite shared at run time goes on (plan_key).
_SHARED = ", shared at run time "
_PLAN = re.compile(rf"sha256:[0-9a-f]{{64}} of [0-9]+({re.escape(_SHARED)}.*)?")


@dataclass(frozen=True)
class Shard:
    """Part `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str, what: str = "--shard") -> Shard:
    """K/N in ASCII digits with 1 <= K <= N <= MAX_COUNT; `what` names the source in the error
    (an option, or a result file's context key for `merge`). Every other value, "" and "-1/2"
    too, gets the one line that says what is expected."""
    match = _SPEC.fullmatch(text)
    # more digits than any valid N: no int() of a huge string (Python refuses > 4300 digits)
    index, count = (
        (int(g) if len(g) <= 9 else MAX_COUNT + 1 for g in match.groups()) if match else (0, 0)
    )
    if not 1 <= index <= count <= MAX_COUNT:
        raise InputError(
            f"{what} {shortened(text)!r}: write K/N in ASCII digits with 1 <= K <= N <= "
            f"{MAX_COUNT}, e.g. 2/4 (part 2 of 4)"
        )
    return Shard(index, count)


def plan_key(names: Iterable[str], count: int, shared: str = "") -> str:
    """The plan a shard is a part of: the sha256 of the sorted names of every benchmark of the
    whole run before sharding (one a line), and N. Shards of another project's or another
    build's benchmarks (same commit, other binaries) have another key. The parts of a suite
    shared at run time (`run --gpus all --split`) depend on the run, so their key names it
    (`shared`: a token of that run) and only they merge with each other."""
    digest = hashlib.sha256("\n".join(sorted(set(names))).encode("utf-8")).hexdigest()
    return f"sha256:{digest} of {count}" + (f"{_SHARED}{shared}" if shared else "")


def durations(documents: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Estimated wall seconds of each benchmark in a result: per repetition row, its cpu_time
    (the timed loop as the host saw it) plus the fixed overhead of a repetition."""
    seconds: dict[str, float] = defaultdict(float)
    for document in documents:
        # a baseline pooled from several runs (levels.RUNS_KEY) holds each run's repetitions
        runs = (document.get("context") or {}).get(RUNS_KEY)
        share = 1.0 / len(runs) if isinstance(runs, list) and runs else 1.0
        for row in document.get("benchmarks", []):
            if not isinstance(row, dict) or row.get("run_type") == "aggregate":
                continue
            name = row_name(row)
            unit = TIME_UNITS.get(str(row.get("time_unit", "ns")), 1.0) * 1e-9
            cpu = row.get("cpu_time")
            cpu_s = float(cpu) * unit if isinstance(cpu, (int, float)) and cpu > 0 else 0.0
            seconds[name] += share * (cpu_s + OVERHEAD_PER_REPETITION_S)
    return dict(seconds)


def split(
    names: Sequence[str], count: int, seconds: Mapping[str, float] | None = None
) -> list[list[str]]:
    """`names` in `count` parts of about equal estimated time, each part in the order of
    `names`. A benchmark the times do not know counts as their median (1 without times).
    Ties are broken by name and part number, so the split is deterministic."""
    of = estimate(seconds)
    weight = {n: of(n) for n in names}
    load = [0.0] * count
    part_of: dict[str, int] = {}
    for name in sorted(set(names), key=lambda n: (-weight[n], n)):
        part = min(range(count), key=lambda k: (load[k], k))
        part_of[name] = part
        load[part] += weight[name]
    parts: list[list[str]] = [[] for _ in range(count)]
    for name in dict.fromkeys(names):  # once each, in the given order
        parts[part_of[name]].append(name)
    return parts


def select(
    names: Sequence[str], shard: Shard, seconds: Mapping[str, float] | None = None
) -> list[str]:
    """The benchmarks of part `shard` (split)."""
    return split(names, shard.count, seconds)[shard.index - 1]
