"""Levels of variation: which one a comparison crosses, and the prior for a level not measured.

A benchmark's median moves between two results for reasons that nest:

* process: two processes on one card (the run-to-run noise of one machine);
* card: two physical cards of one model in one host;
* host: two hosts (another machine: its CPU, memory, PCIe link, driver install, neighbours).

A card of a kind the baseline holds (kinds.py) crosses the host level too (why:
compare.judged_against); only a run on the card itself, or an anchor measured there, judges it
more sharply.

Each result's context names its card (`gpu_uuid`), its host (`host_gpu_uuids`: the set of all
GPUs NVML sees identifies a machine, else `host_machine_id`) and its host's configuration (CPU
model, cores, kernel, the GPU's PCIe link, ...: docs/results.md). A baseline made from several
runs lists each run's card and host in `kernelwatch_baseline_runs`. The level a comparison
crosses is the widest one between the contender and any run of the baseline; a context that
does not name its card or host is taken to cross hosts (the widest, so the safest).

Where a level's spread was never measured for a benchmark, `prior` gives a conservative one
from the benchmark's duration (docs/measurement.md, "The prior").
"""

from __future__ import annotations

import collections
import enum
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import show

# The context key of a pooled baseline: one entry per run it was made from (see `pool` in
# baseline/pool.py): {"processes": [...], "card": ..., "host": ..., "config": ..., ...}.
RUNS_KEY = "kernelwatch_baseline_runs"

# What a time can depend on beyond the GPU model, on the host's side. Two results whose values
# of these agree were measured on hosts configured alike (docs/results.md lists the keys); a key
# the baseline's hosts of a class vary in does not tell them apart (_configured_unlike).
HOST_CONFIG_KEYS = (
    "host_cpu_model",
    "host_cpu_sockets",
    "host_cpu_cores",
    "host_os_kernel",
    "host_virtualized",
    "host_gpu_count",
    "gpu_numa_node",
    "gpu_pcie_generation",
    "gpu_pcie_width",
    "gpu_nvlink_active_links",
    "gpu_driver_version",
    "gpu_power_limit_w",
    "gpu_application_sm_clock_mhz",
    "gpu_ecc",
    "gpu_mig_mode",
)
_UNKNOWN = ("", "unknown", None)


class Level(enum.IntEnum):
    """Ordered: a wider level includes the variation of the narrower ones."""

    PROCESS = 0
    CARD = 1
    HOST = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Unit:
    """Where one run was measured. None where the context does not say."""

    card: str | None
    host: str | None
    config: str | None  # host_config's digest
    # The values of HOST_CONFIG_KEYS, in order; None for a run of a pool that did not list them
    # (`baseline update` before 2026-12-03).
    values: tuple[str | None, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        """What `baseline update` lists of each run it pools (baseline/pool.py)."""
        return {
            "card": self.card,
            "host": self.host,
            "config": self.config,
            **dict(zip(HOST_CONFIG_KEYS, self.values or ())),
        }


def _known(value: Any) -> str | None:
    return None if value in _UNKNOWN else str(value)


def host_identity(context: Mapping[str, Any]) -> str | None:
    """The machine: the set of its GPUs (NVML sees all of them, whatever CUDA_VISIBLE_DEVICES
    says), else its machine id."""
    gpus = _known(context.get("host_gpu_uuids"))
    if gpus:
        return "gpus:" + ",".join(sorted(g.strip() for g in gpus.split(",") if g.strip()))
    machine = _known(context.get("host_machine_id"))
    return f"machine:{machine}" if machine else None


def host_config(context: Mapping[str, Any]) -> str | None:
    """A short digest of the host configuration keys; None when the context records none."""
    values = config_values(context)
    if not any(values):
        return None
    text = "\n".join(f"{key}={value}" for key, value in zip(HOST_CONFIG_KEYS, values))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def config_values(context: Mapping[str, Any]) -> tuple[str | None, ...]:
    """The values of HOST_CONFIG_KEYS in a context (or a pooled run's entry), None where one
    was not read."""
    return tuple(_known(context.get(key)) for key in HOST_CONFIG_KEYS)


# The keys that name a result's host (host_identity).
HOST_IDENTITY_KEYS = ("host_gpu_uuids", "host_machine_id")


def measured_on(contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The card and host keys of one result made of runs with these contexts (merge's parts,
    the files of a folder read as one side): `gpu_uuid` naming every card (a card no baseline
    holds where they are several), and where the runs name several hosts, the host keys and the
    configuration keys they disagree on unknown (the host level): such a result is judged as
    measured on another card and host, never as its first run's card alone."""
    found: dict[str, Any] = {}
    if len({host_identity(c) for c in contexts}) > 1:
        found.update(dict.fromkeys(HOST_IDENTITY_KEYS, "unknown"))
        for key in HOST_CONFIG_KEYS:
            if len({str(c.get(key)) for c in contexts}) > 1:
                found[key] = "unknown"  # (a key the fingerprint could not read is so too)
    uuids = list(dict.fromkeys(str(c.get("gpu_uuid")) for c in contexts if c.get("gpu_uuid")))
    if uuids:
        found["gpu_uuid"] = ",".join(uuids)
    return found


def unit_of(context: Mapping[str, Any]) -> Unit:
    return Unit(
        _known(context.get("gpu_uuid")),
        host_identity(context),
        host_config(context),
        config_values(context),
    )


# What `baseline update` (baseline/pool.py) writes of each run that the levels and kinds read:
# its card, host and host configuration's digest (text, or null where its context did not name
# them) and its processes (the numbers its rows carry); its commit, where listed, is text too;
# since 2026-12-03 each HOST_CONFIG_KEYS value too (a key's absence: a pool made before).
_RUN_TEXT = ("card", "host", "config")


def pooled_runs(
    context: Mapping[str, Any], where: str = "a result's context"
) -> list[Mapping[str, Any]] | None:
    """The runs a pooled result lists (RUNS_KEY); None for a result without the key (one run,
    or a baseline older than the key). A list that is damaged is refused in one line naming
    `where` (the file) and the key: read as no list, it judged a pool of 19 cards as its
    first run's card alone, and turned the matching of kinds of card off without a word."""
    if RUNS_KEY not in context:
        return None
    runs = context[RUNS_KEY]
    problem = _runs_problem(runs)
    if problem is not None:
        raise InputError(
            f"{where}: {RUNS_KEY}: {problem} (baseline update writes a list of each run's "
            "card, host, config, commit and processes; update the baseline again from its runs)"
        )
    return list(runs)


def _runs_problem(runs: Any) -> str | None:
    """What is wrong with a RUNS_KEY value, if anything."""
    if not isinstance(runs, list) or not runs:
        return f"is {show(runs)}, not a list of runs"
    seen: set[int] = set()
    for k, run in enumerate(runs, 1):
        if not isinstance(run, Mapping):
            return f"run {k} is {show(run)}, not an object"
        for key in (*_RUN_TEXT, "processes"):
            if key not in run:
                return f"run {k} has no {key!r}"
        for key in (*_RUN_TEXT, "commit"):
            if not isinstance(run.get(key), (str, type(None))):
                return f"run {k}'s {key!r} is {show(run[key])}, not text"
        processes = run["processes"]
        # type(): bool is an int; a float or text number matched no row's process (noise.py).
        if (
            not isinstance(processes, list)
            or not processes
            or any(type(p) is not int or p < 1 for p in processes)
        ):
            return f"run {k}'s 'processes' is {show(processes)}, not a list of process numbers"
        for process in processes:
            if process in seen:
                return f"process {process} is listed twice (run {k})"
            seen.add(process)
    return None


def pooled_process_ids(
    context: Mapping[str, Any], carried: np.ndarray, where: str
) -> np.ndarray | None:
    """For a pooled result (RUNS_KEY), each row's process id: the rank of its process number
    (`carried`, NaN for a row without one) among every number the runs list, so that
    noise.row_units gives id k the run that lists the k-th; None for a result without the list.
    A row without a number, or with one no run lists, is refused in one line naming `where`:
    the ids were the ranks among the rows' numbers, and a list that did not match them read
    the pool as ONE run (the spreads between cards and hosts unmeasured, the limits changed
    without a word), or gave each process from the first difference on the next one's run.
    A listed process without rows is no harm: a pool cut down to some benchmarks has them."""
    runs = pooled_runs(context, where)
    if runs is None:
        return None
    listed = listed_processes(runs)
    unnumbered = int(np.isnan(carried).sum())
    unlisted = ~np.isnan(carried) & ~np.isin(carried, listed)
    problem = None
    if unnumbered:
        problem = f"{unnumbered} row(s) carry no process number (kernelwatch_process)"
    elif unlisted.any():
        number = float(carried[np.argmax(unlisted)])
        problem = (
            f"process {show(int(number) if number.is_integer() else number)} of its rows is in "
            f"no run's list (the runs list {len(listed)} process(es))"
        )
    if problem is not None:
        raise InputError(
            f"{where}: {RUNS_KEY} does not match its rows: {problem} (baseline update lists "
            "each run's processes; update the baseline again from its runs)"
        )
    return np.searchsorted(listed, carried).astype(np.int64)


def listed_processes(runs: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Every process number the runs of a pool list, in order: a process id is the rank of its
    number here (pooled_process_ids)."""
    return np.array(sorted(p for run in runs for p in run["processes"]), dtype=float)


def units_of(context: Mapping[str, Any], where: str = "a result's context") -> tuple[Unit, ...]:
    """The runs a result was made from: those a pooled baseline lists, else the result's own."""
    runs = pooled_runs(context, where)
    if runs is not None:
        return tuple(
            Unit(
                _known(r.get("card")),
                _known(r.get("host")),
                _known(r.get("config")),
                config_values(r) if all(key in r for key in HOST_CONFIG_KEYS) else None,
            )
            for r in runs
        )
    return (unit_of(context),)


@dataclass(frozen=True)
class Crossing:
    """The level a comparison crosses and why; `unlike`: what makes the contender's host
    configured unlike every host of the baseline (its spread there was never measured), "" where
    the runs name only their configurations' digests; None where it is configured like one."""

    level: Level
    why: str
    unlike: str | None = None
    same_host: bool = False  # every baseline run was made on the contender's host, alike
    # Every host on both sides has one GPU: the host prior of that class applies (below).
    one_gpu_hosts: bool = False

    @property
    def other_config(self) -> bool:
        return self.unlike is not None


def crossing(baseline: Mapping[str, Any], contender: Mapping[str, Any]) -> Crossing:
    return replace(
        _crossing(baseline, contender), one_gpu_hosts=_one_gpu_hosts(baseline, contender)
    )


def _one_gpu_hosts(baseline: Mapping[str, Any], contender: Mapping[str, Any]) -> bool:
    """Whether every host of the contender's runs and of the baseline's has one GPU; a count
    not recorded is taken as several (their prior is the wider)."""
    return all(
        host_class(count) is HostClass.ONE_GPU
        for count in [*_gpu_counts(baseline), *_gpu_counts(contender)]
    )


def _gpu_counts(context: Mapping[str, Any]) -> list[Any]:
    """The GPU count of each run's host: those a pooled result lists (its own context is its
    first run's), else the result's own."""
    runs = pooled_runs(context)
    if runs is not None:
        return [r.get("host_gpu_count") for r in runs]
    return [context.get("host_gpu_count")]


class HostClass(enum.Enum):
    """A host with one GPU, or with several. The classes time short kernels apart: on the H200
    pool of e5b8351 (24 cards, 14 one-GPU hosts, 4 multi-GPU ones), the multi-GPU hosts' means
    were slower by 0.6-0.7 us a launch (`transpose/best` 2048^2 +5.1 %, the 7.9 us
    `reduction/sum/vectorized` +18 %) and by 0.49 % (median) on kernels of 50 us or more, while
    the hosts of one class agree within 0.5-1.0 % (median sd, short kernels too): the spread
    between all hosts was 3.5 % on kernels under 20 us, 0.9 % within a class."""

    ONE_GPU = "one-GPU"
    MULTI_GPU = "multi-GPU"


def host_class(count: Any) -> HostClass | None:
    """The class of a host with `count` GPUs (host_gpu_count); None where it was not recorded."""
    text = str(count).strip() if count is not None else ""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:  # ("²".isdigit(); int fails)
        return None
    return HostClass.ONE_GPU if int(text) == 1 else HostClass.MULTI_GPU


def hosts_per_class(context: Mapping[str, Any]) -> dict[HostClass | None, int]:
    """The distinct hosts of a result's runs per class (None: not recorded), for a pooled
    result; empty for a result of one run."""
    runs = pooled_runs(context)
    if runs is None:
        return {}
    seen = {(_known(r.get("host")), host_class(r.get("host_gpu_count"))) for r in runs}
    return dict(collections.Counter(c for _, c in seen))


def contender_class(context: Mapping[str, Any]) -> HostClass | None:
    """The class of every host a result's runs were made on; None where they are of several
    classes or one does not say."""
    found = {host_class(count) for count in _gpu_counts(context)}
    return found.pop() if len(found) == 1 else None


def _crossing(baseline: Mapping[str, Any], contender: Mapping[str, Any]) -> Crossing:
    """The widest level between the baseline's runs and any run of the contender's: a pooled
    result given as the contender (its context is its first run's) was taken as that run alone,
    and a run on its first card was judged at the process level against 19 cards of 13 hosts."""
    theirs = units_of(baseline)
    found = [_crossed(theirs, ours) for ours in units_of(contender)]
    widest = max(found, key=lambda c: c.level)  # (the first of the widest)
    unlike = [c.unlike for c in found if c.unlike is not None]
    return replace(
        widest,
        unlike=max(unlike, key=len) if unlike else None,  # (the one that says what differs)
        same_host=all(c.same_host for c in found),
    )


def _crossed(theirs: Sequence[Unit], ours: Unit) -> Crossing:
    # Whatever the card or host: a context that does not name them still records how its host
    # is configured, and knowing less must not judge more sharply than knowing it.
    unlike = _configured_unlike(theirs, ours)
    if ours.card is None or any(u.card is None for u in theirs):
        why = "the contexts do not name the card: taken as another host"
        return Crossing(Level.HOST, why, unlike)
    same_host = ours.host is not None and all(
        u.host == ours.host and u.config == ours.config for u in theirs
    )
    if all(u.card == ours.card for u in theirs):
        return Crossing(Level.PROCESS, f"same card ({ours.card[:12]}…)", unlike, same_host)
    if same_host:
        return Crossing(Level.CARD, "another card of the same host", unlike, same_host)
    if ours.host is None or any(u.host is None for u in theirs):
        why = "the contexts do not name the host: taken as another host"
        return Crossing(Level.HOST, why, unlike)
    return Crossing(Level.HOST, "another host", unlike, same_host)


def _configured_unlike(theirs: Sequence[Unit], ours: Unit) -> str | None:
    """What makes the contender's host configured unlike every host of the baseline (Crossing's
    `unlike`): None where it is configured like one.

    With the values listed, a key in which the baseline's hosts of the contender's class (one
    GPU or several; all hosts where it has none) differ among themselves is varied within the
    host level's measured spread, so another value of it is one more host: the H200 pool's
    one-GPU hosts ran two host kernels (v657, v973), and the runs of each of the three kernels
    seen (v1147 too) judged against the others', that key left out, failed 1 of 8,636
    comparisons, a benchmark that fails so leaving hosts out too (docs/measurement.md, "Host
    kernels"). A key in which they all agree (the driver, say) was never varied: another value
    of it is unmeasured. Within the class, because the classes time short kernels apart
    (HostClass): the GPU count and cores taken as varied across all hosts, a two-GPU host
    judged like a pool of one-GPU hosts and one four-GPU host failed unchanged code
    (`scripts/leave_one_host_out.py --class-hosts 1`: 2 of 9,888 comparisons; none judged by
    the class)."""
    if ours.config is None or any(u.config is None for u in theirs):
        return None
    classes = _by_class(theirs)
    if ours.values is None or classes is None:
        return None if any(u.config == ours.config for u in theirs) else ""
    mine_class = host_class(ours.values[HOST_CONFIG_KEYS.index("host_gpu_count")])
    kin = classes.get(mine_class) or [v for values in classes.values() for v in values]
    differing = []
    for key, mine, values in zip(HOST_CONFIG_KEYS, ours.values, map(set, zip(*kin))):
        if mine not in values and not _varies(values):
            said = ", ".join(sorted(v or "unknown" for v in values))
            differing.append(f"{key} {mine or 'unknown'}, the baseline's {said}")
    return "; ".join(differing) or None


def varied_keys(context: Mapping[str, Any]) -> dict[HostClass | None, tuple[str, ...]] | None:
    """The configuration keys in which a result's hosts of each class differ among themselves:
    a runner of that class unlike them only in those is configured like them
    (_configured_unlike); None where a run does not list its values."""
    classes = _by_class(units_of(context))
    if classes is None:
        return None
    return {
        found: tuple(k for k, v in zip(HOST_CONFIG_KEYS, map(set, zip(*values))) if _varies(v))
        for found, values in classes.items()
    }


def _by_class(
    units: Sequence[Unit],
) -> dict[HostClass | None, list[tuple[str | None, ...]]] | None:
    """The units' configuration values per class of host; None where one does not list them."""
    found: dict[HostClass | None, list[tuple[str | None, ...]]] = collections.defaultdict(list)
    count = HOST_CONFIG_KEYS.index("host_gpu_count")
    for unit in units:
        if unit.values is None:
            return None
        found[host_class(unit.values[count])].append(unit.values)
    return dict(found)


def _varies(values: set[str | None]) -> bool:
    """Whether the hosts' values of a key differ (one not read is no value)."""
    return len(values - {None}) > 1


# --- the prior ------------------------------------------------------------------------------
#
# A level never measured for a benchmark gets sd = relative + absolute / median time. The
# absolute part is launch and clock jitter, which weighs on short kernels; the relative part is
# what long kernels move by. scripts/derive_prior.py takes each as the 99th percentile of the
# spreads measured at that level (docs/measurement.md, "The prior"), per GPU model, over that
# model's runs; each constant is the largest over the sets of runs below, rounded up.
#
# H200 (driver 580.159.04, CUDA 13.0):
#   three one-GPU hosts (GPU-e6875044, -5d8b3240, -54f59374): process 0.455 %, 143 ns; host 1.99 %,
#     597 ns;
#   eight (and GPU-d716bf60, -86422532, -fcc70672, -fb021b3e, -a5b8dffa): process 0.494 %,
#     326 ns; host 1.57 %, 767 ns; with a two-GPU host running both GPUs at once (GPU-6a541b71,
#     its short kernels +0.7 to +1.6 us) as a ninth: host 1.52 %, 703 ns;
#   seven with device memory from the stream-ordered pool (GPU-fb021b3e, -a5b8dffa, -295b2056,
#     -5e652b35, -33a20bea, -958b75d6, -9724cb6b), whose 8192^2 transposes spread 0.8-1.8 %
#     between processes: process 0.772 %, 99 ns; host 1.74 %, 671 ns.
#   today's harness (2cd5aac-5076e5b: checks on the GPU, sampling tools kept per thread):
#     GPU-e96746ba (GPU 0 of a two-GPU host, alone) and GPU-5f632982 (one-GPU host): process
#     0.886 %, 177 ns; GPU-e96746ba alone and with GPU-531b1ecc measuring beside it: process
#     0.919 %, 197 ns; both GPUs at once: process 0.852 %, 227 ns, card 0.447 %, 200 ns
#     (tests/data/gpu/h200-x2-card-e96746ba/, h200-card-5f632982.json.gz).
#   the ten one-GPU hosts of the baseline re-measured at today's harness (its nine, and
#     GPU-720306a7): process 1.094 %, 171 ns (single processes of the latency-bound reductions
#     about 2 % slower on two cards); kind 1.090 %, 31 ns; host 1.72 %, 681 ns; unseen kind
#     2.36 %, 227 ns.
#   Two cards of one host were measured twice (0.10 % median; p99 0.447 % + 200 ns): the card
#     level still takes the host's.
#   the pool of the baseline re-measured at 3409419 (the references marked): its five one-GPU
#     hosts (GPU-91844ef6, -64f3957b, -e4a61ee5, -cefb9859, -b90493cd): process 0.873 %, 127 ns;
#     kind 1.04 %, 46 ns; host 1.68 %, 722 ns; unseen kind 2.30 %, 231 ns; both GPUs of a
#     two-GPU host measuring at once (GPU-7f7c6807, -6aab3983), from noise.json: card 0.68 %,
#     125 ns. Every one inside the constants below, which stand.
#   that pool widened to sixteen cards of eleven hosts (and GPU-ba115ed5, -0cf3f5d4, -5a0b92fa;
#     a two-GPU and a four-GPU host, every GPU at once): its eight one-GPU hosts process 0.94 %,
#     140 ns; kind 0.90 %, 52 ns; host 1.76 %, 594 ns; unseen kind 2.32 %, 233 ns; with GPU 0 of
#     the three multi-GPU hosts host 1.79 %, 585 ns; card (eight cards of three hosts) 0.53 %,
#     167 ns. Inside the constants too.
#   widened at 61b6fec to nineteen cards of thirteen hosts (and GPU-b6c6505d; a two-GPU host,
#     GPU-59b384ea, -e0122269): its nine one-GPU hosts process 0.94 %, 146 ns; kind 0.84 %, 50 ns;
#     host 1.72 %, 572 ns; unseen kind 2.33 %, 230 ns; with GPU 0 of the four multi-GPU hosts
#     host 1.74 %, 559 ns. Inside the constants, which stand.
#   widened at ef8875d to twenty-four cards of eighteen hosts, per class of host (HostClass):
#     its fourteen one-GPU hosts process 0.97 %, 231 ns; kind 0.76 %, 64 ns; host 1.49 %,
#     481 ns; unseen kind 2.33 %, 228 ns; its four multi-GPU hosts (ten cards) process 0.86 %,
#     346 ns; card 0.50 %, 154 ns; host 1.75 %, 522 ns; all eighteen host 1.52 %, 518 ns.
#     Inside the constants, ONE_GPU_HOSTS's too, which stand.
# H100 80GB HBM3 (2026-11-27/28; one kind of card seen):
#   the five cards of its baseline (harness of c2e9ee4: one-GPU hosts GPU-7692141e, -18b292b3,
#     -1ea85f9e, both GPUs of a two-GPU host GPU-fbb49afb, -1fb43360): process 0.388 %, 152 ns;
#     host 0.707 %, 735 ns (the two-GPU host's cards pooled: derive_prior.py); the three
#     one-GPU hosts alone: host 0.687 %, 35 ns;
#   five of the harness of 7067794 (one-GPU host GPU-acf992b3; two two-GPU hosts, both GPUs at
#     once: GPU-c73c6c90, -28cc5c97 and GPU-d99398cc, -495b2220): process 0.731 %, 341 ns;
#     host 0.868 %, 747 ns; one GPU of each host: process 0.716 %, 420 ns, host 1.011 %, 976 ns;
#   the two cards of each two-GPU host (card level): 0.750 %, 143 ns; 1.023 %, 40 ns; 0.797 %,
#     89 ns; their process level at most 0.806 %, 424 ns.
#   A host of several GPUs adds to short kernels (976 ns across both kinds of host, 35 ns among
#     one-GPU hosts): the host prior is the one across both; among one-GPU hosts alone
#     (ONE_GPU_HOSTS) the four of GPU-7692141e, -18b292b3, -1ea85f9e (c2e9ee4) and -4474abb1
#     (1416cc3, whose set-ups are c2e9ee4's): host 0.688 %, 21 ns.
PRIORS: Mapping[str, Mapping[Level, tuple[float, float]]] = {
    "NVIDIA H200 (sm 9.0)": {
        Level.PROCESS: (0.011, 330.0),  # (relative, ns)
        Level.CARD: (0.020, 770.0),
        Level.HOST: (0.020, 770.0),
    },
    "NVIDIA H100 80GB HBM3 (sm 9.0)": {
        Level.PROCESS: (0.0081, 430.0),
        Level.CARD: (0.0103, 150.0),
        Level.HOST: (0.0102, 980.0),
    },
}

# The host level where the contender's host and every host of the baseline have one GPU (the
# runners most teams rent), per model, from the runs above: the H200's one-GPU sets reach its
# general host prior (1.99 %, 767 ns), the H100's stay well inside its (0.69 %, 35 ns).
ONE_GPU_HOSTS: Mapping[str, tuple[float, float]] = {
    "NVIDIA H200 (sm 9.0)": (0.020, 770.0),
    "NVIDIA H100 80GB HBM3 (sm 9.0)": (0.0070, 40.0),
}

# A model never measured, or a level its runs never measured: the widest of the measured
# models' priors (each part's largest), so that no model gets less than one that was measured.
PRIOR: Mapping[Level, tuple[float, float]] = {
    level: (
        max(own[level][0] for own in PRIORS.values() if level in own),
        max(own[level][1] for own in PRIORS.values() if level in own),
    )
    for level in Level
}

# A card of a kind that a one-kind baseline (a single run too) never held: its hosts' spread
# never crossed kinds, and kinds differ systematically, the same on every card of a kind
# (occupancy/smem_limited by 4.6 %). Half the widest gap between a run and a run of another
# kind, the largest over the benchmarks, by derive_prior.py: eleven H200 runs of both kinds
# (five committed one-GPU-host runs, GPU-5f632982, GPU-ea2c27d5, and GPU 0 alone of four
# multi-GPU hosts, GPU-25583732, -79d32954, -dc7c8ec2, -d1dff13b) 2.47 %, 636 ns; today's
# harness alone (GPU-e96746ba, -5f632982) 2.33 %, 723 ns. Against the mean of the other kind's
# runs it was 2.30 %, 210 ns, which left two single runs of the two kinds (4.7 % apart on that
# benchmark) at the limit. Applied with the host prior, whichever is larger.
UNSEEN_KIND_PRIOR = (0.025, 730.0)


def prior_constants(
    level: Level, model: str | None = None, one_gpu_hosts: bool = False
) -> tuple[float, float]:
    """(relative, absolute ns) of the prior for `level` on the GPU model `model`
    (results.gpu_model): the model's own where its runs measured that level (the host level
    among one-GPU hosts where `one_gpu_hosts`), else PRIOR's."""
    if one_gpu_hosts and level is Level.HOST and model is not None and model in ONE_GPU_HOSTS:
        return ONE_GPU_HOSTS[model]
    return PRIORS.get(model or "", {}).get(level, PRIOR[level])


def prior(
    level: Level,
    median_ns: np.ndarray,
    *,
    gpu: bool = True,
    model: str | None = None,
    one_gpu_hosts: bool = False,
) -> np.ndarray:
    """The conservative spread of a level at which a benchmark was never measured: at least the
    process level's, whose jitter a run on another card or host brings along. The H100's
    constants were measured at each level apart (the wider ones from the spread of each run's
    mean, where a run's own process jitter averages out): its one-GPU host prior (0.70 % +
    40 ns) is below its process prior (0.81 % + 430 ns), and a 5 us kernel was held to 3.0 %
    against another host but to 18.8 % on its own card."""
    spread = _spread(prior_constants(level, model, one_gpu_hosts), median_ns, gpu)
    process = _spread(prior_constants(Level.PROCESS, model), median_ns, gpu)
    at_least: np.ndarray = np.fmax(spread, process)
    return at_least


def unseen_kind_prior(
    median_ns: np.ndarray,
    *,
    gpu: bool = True,
    model: str | None = None,
    one_gpu_hosts: bool = False,
) -> np.ndarray:
    """The spread a card of a kind the baseline never held is held to, at least."""
    spread: np.ndarray = np.fmax(
        _spread(UNSEEN_KIND_PRIOR, median_ns, gpu),
        prior(Level.HOST, median_ns, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts),
    )
    return spread


def _spread(constants: tuple[float, float], median_ns: np.ndarray, gpu: bool) -> np.ndarray:
    """relative + absolute / time. The absolute part is a GPU launch's jitter: results without
    a GPU get the relative part."""
    relative, absolute_ns = constants
    if not gpu:
        return np.full(len(median_ns), relative)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = relative + absolute_ns / np.asarray(median_ns, dtype=float)
    return np.where(np.isfinite(spread) & (spread > 0), spread, relative)


# A spread between cards or hosts measured from few of them is itself uncertain: two H200 cards
# (GPU-e6875044, GPU-5d8b3240) agreed to 0.10 % (median over the suite), and a third
# (GPU-54f59374) differed from them by 1.0 % (median), 4.7 % at most. So a wider level's
# measured spread is taken at its upper 90 % confidence bound for the number of runs it came
# from, and with fewer than MIN_UNITS runs it is at least the prior.
UPPER_BOUND_CONFIDENCE = 0.90
MIN_UNITS = 3


def upper_bound_factor(units: int, confidence: float | None = None) -> float:
    """sd_upper / sd_measured for a standard deviation measured from `units` runs: the upper
    bound of its confidence interval, sqrt(dof / chi-square quantile of 1 - confidence);
    UPPER_BOUND_CONFIDENCE's as it reads when called (scripts/leave_one_host_out.py tries
    others)."""
    if confidence is None:
        confidence = UPPER_BOUND_CONFIDENCE
    dof = units - 1
    if dof < 1:
        return math.inf
    z = NormalDist().inv_cdf(1.0 - confidence)
    if dof == 1:  # the square of a normal: P(chi2 < q) = P(|Z| < sqrt q)
        quantile = NormalDist().inv_cdf(0.5 + (1.0 - confidence) / 2.0) ** 2
    elif dof == 2:  # an exponential of mean 2
        quantile = -2.0 * math.log(confidence)
    else:  # Wilson-Hilferty, within 2 % of the exact quantile from 3 degrees of freedom
        quantile = dof * (1.0 - 2.0 / (9.0 * dof) + z * math.sqrt(2.0 / (9.0 * dof))) ** 3
    return math.sqrt(dof / quantile)


def describe(units: Sequence[Unit]) -> str:
    cards = {u.card for u in units}
    hosts = {u.host for u in units}
    return f"{len(units)} run(s) on {len(cards)} card(s) of {len(hosts)} host(s)"
