"""Levels of variation: the level two contexts cross, the spread measured per level from a
pooled baseline, the prior where a level was never measured, host-bound benchmarks, and the
sensitivity each comparison states."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import H100_CONTEXT, merged
from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch import synthetic
from kernelwatch.baseline.pool import pool
from kernelwatch.compare import Settings, Verdict, compare
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.loading import from_documents
from kernelwatch.results import PROCESS_KEY, gpu_model, resolve_metric

TIME = resolve_metric("time")
CONFIG = {"host_cpu_model": "Xeon", "host_cpu_cores": "16", "host_gpu_count": "1"}
UNNAMED = {k: v for k, v in H100_CONTEXT.items() if k not in ("gpu_uuid", "host_gpu_uuids")}


def where(card: str, host: str | None = None, **config: str) -> dict[str, str]:
    """A context on card `card` of the host whose GPUs are `host` (default: that card alone)."""
    return {
        **H100_CONTEXT,
        **CONFIG,
        **config,
        "gpu_uuid": card,
        "host_gpu_uuids": host or card,
        "kernelwatch_git_commit": "c" * 40,
    }


def run(context: dict, medians: dict[str, float], seed: int = 0, host_bound: bool = False) -> dict:
    """A `kernelwatch run` result: two processes of five repetitions per benchmark (us)."""
    rng = np.random.default_rng(seed)
    spec = {
        name: [(m * rng.lognormal(0.0, 0.0005, 5)).tolist() for _ in (1, 2)]
        for name, m in medians.items()
    }
    flags = {name: {"host_bound": [1.0] * 10} for name in medians} if host_bound else None
    return merged(spec, flags, context)


# --- which level two contexts cross ---------------------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "contender", "level"),
    [
        (where("GPU-a"), where("GPU-a"), Level.PROCESS),
        (where("GPU-a", "GPU-a,GPU-b"), where("GPU-b", "GPU-b,GPU-a"), Level.CARD),
        (where("GPU-a"), where("GPU-b"), Level.HOST),
        (
            {**UNNAMED, "gpu_uuid": "GPU-a"},
            {**UNNAMED, "gpu_uuid": "GPU-b"},
            Level.HOST,
        ),
        (UNNAMED, UNNAMED, Level.HOST),  # nothing named: the widest, the safest
    ],
)
def test_the_level_comes_from_the_two_contexts(baseline, contender, level) -> None:
    assert levels.crossing(baseline, contender).level is level


def test_a_host_configured_unlike_the_baselines_is_said() -> None:
    other = levels.crossing(where("GPU-a"), where("GPU-b", host_cpu_cores="32"))
    assert other.level is Level.HOST and other.other_config
    assert not levels.crossing(where("GPU-a"), where("GPU-b")).other_config
    assert levels.crossing(where("GPU-a"), where("GPU-a")).same_host


def pooled_from(*contexts: dict[str, str]) -> dict:
    """The context of a baseline pooled from one run in each context."""
    return pool([(f"{k}.json", run(c, SUITE, k)) for k, c in enumerate(contexts)])["context"]


def test_a_value_the_baseline_s_hosts_varied_in_is_one_more_host() -> None:
    """The H200 pool's one-GPU hosts ran host kernels v657 and v973, and a host on v1147 was
    configured unlike all of them, each spread the host prior (8.1 % median sensitivity, not
    4.1 %). A key they vary in is within their measured spread; a driver they all share is not,
    and the note says which key differs."""
    baseline = pooled_from(
        where("GPU-a", host_os_kernel="v657"), where("GPU-b", host_os_kernel="v973")
    )
    newer = levels.crossing(baseline, where("GPU-c", host_os_kernel="v1147"))
    assert newer.level is Level.HOST and not newer.other_config
    driver = levels.crossing(
        baseline, where("GPU-c", host_os_kernel="v1147", gpu_driver_version="590.10")
    )
    assert driver.other_config
    assert driver.unlike == "gpu_driver_version 590.10, the baseline's 580.159.04"


def test_only_the_hosts_of_the_runner_s_class_vary_a_key_for_it() -> None:
    """The classes time short kernels apart (levels.HostClass): a two-GPU host taken as like a
    pool of one-GPU hosts and one four-GPU host failed unchanged code."""
    two = {"host_gpu_count": "2", "host_cpu_cores": "32"}
    baseline = pooled_from(
        where("GPU-a", host_os_kernel="v657"),
        where("GPU-b", "GPU-b,GPU-c", host_os_kernel="v657", **two),
        where("GPU-d", "GPU-d,GPU-e", host_os_kernel="v973", **two),
    )
    assert not levels.crossing(
        baseline, where("GPU-f", "GPU-f,GPU-g", host_os_kernel="v1147", **two)
    ).other_config
    one = levels.crossing(baseline, where("GPU-h", host_os_kernel="v973"))
    assert one.other_config and one.unlike == "host_os_kernel v973, the baseline's v657"


def test_a_pool_that_lists_no_values_is_told_apart_by_the_digest() -> None:
    """A baseline pooled before its runs listed their configurations' values: any key differs."""
    baseline = pooled_from(
        where("GPU-a", host_os_kernel="v657"), where("GPU-b", host_os_kernel="v973")
    )
    for entry in baseline[levels.RUNS_KEY]:
        del entry["host_os_kernel"]
    newer = levels.crossing(baseline, where("GPU-c", host_os_kernel="v1147"))
    assert newer.other_config and newer.unlike == ""
    assert not levels.crossing(baseline, where("GPU-c", host_os_kernel="v973")).other_config


def test_a_model_gets_its_own_prior_and_a_model_never_measured_the_widest() -> None:
    """The H100's levels were measured on H100 cards (levels.PRIORS): its card and host priors
    are its own, narrower than the H200's; a model never measured takes the widest of the
    measured models', part by part."""
    h100, h200 = gpu_model(H100_CONTEXT), "NVIDIA H200 (sm 9.0)"
    assert set(levels.PRIORS) == {h100, h200}
    for level in (Level.CARD, Level.HOST):
        assert levels.prior_constants(level, h100)[0] < levels.prior_constants(level, h200)[0]
    for level in Level:
        widest = levels.prior_constants(level, "NVIDIA A100-SXM4-80GB (sm 8.0)")
        assert widest == levels.PRIOR[level] == levels.prior_constants(level, None)
        for model in (h100, h200):
            own = levels.prior_constants(level, model)
            assert own[0] <= widest[0] and own[1] <= widest[1]


def test_the_prior_grows_for_short_kernels_and_has_no_launch_term_without_a_gpu() -> None:
    relative, absolute = levels.PRIOR[Level.HOST]
    long, short = levels.prior(Level.HOST, np.array([1e6, 5e3]))
    assert long == pytest.approx(relative + absolute / 1e6)
    assert short == pytest.approx(relative + absolute / 5e3) and short > long
    assert levels.prior(Level.HOST, np.array([5e3]), gpu=False).tolist() == [relative]
    assert levels.PRIOR[Level.PROCESS] < levels.PRIOR[Level.CARD] <= levels.PRIOR[Level.HOST]


# --- a pooled baseline measures the wider levels --------------------------------------------

SUITE = {f"fam/k/n:{i}/manual_time": 100.0 + 10 * i for i in range(4)}


def pooled(offsets: dict[str, float]) -> dict:
    """Runs on one card per host, each host's medians moved by its offset."""
    return pool(
        [
            (
                f"{card}.json",
                run(where(card), {n: t * (1 + off) for n, t in SUITE.items()}, k),
            )
            for k, (card, off) in enumerate(offsets.items())
        ]
    )


def test_pooling_numbers_processes_anew_and_lists_each_run() -> None:
    document = pooled({"GPU-a": 0.0, "GPU-b": 0.01})
    runs = document["context"][levels.RUNS_KEY]
    assert [r["processes"] for r in runs] == [[1, 2], [3, 4]]
    assert [r["card"] for r in runs] == ["GPU-a", "GPU-b"]
    assert {row[PROCESS_KEY] for row in document["benchmarks"]} == {1, 2, 3, 4}


def test_pooling_refuses_other_settings_and_warns_of_other_commits() -> None:
    other = run({**where("GPU-b"), "kernelwatch_cache_mode": "hot"}, SUITE)
    with pytest.raises(InputError, match="cache mode"):
        pool([("a.json", run(where("GPU-a"), SUITE)), ("b.json", other)])
    warnings: list[str] = []
    later = run({**where("GPU-b"), "kernelwatch_git_commit": "d" * 40}, SUITE)
    pool([("a.json", run(where("GPU-a"), SUITE)), ("b.json", later)], warnings)
    assert len(warnings) == 1 and "2 commits" in warnings[0]


def test_the_spread_between_hosts_is_measured_from_a_pooled_baseline() -> None:
    result = from_documents("pooled", [pooled({"GPU-a": 0.0, "GPU-b": 0.01, "GPU-c": -0.01})])
    found = noises.measure(result).levels()
    assert found.process_measured.all() and (found.process < 0.002).all()
    assert np.isnan(found.card).all()  # one card per host: never measured
    assert found.host == pytest.approx(np.full(4, 0.01), rel=0.15)
    assert found.at(Level.HOST) == pytest.approx(found.host)


def test_a_card_run_twice_is_one_card_and_unnamed_runs_measure_no_level() -> None:
    """The card spread is between cards' means: one card run twice (1 % apart, the process
    level's business) beside a second card of that host 3 % off gives about 2.3 %, not the pool
    of three runs. Runs whose contexts name no card or host (nvbench's) measure neither level;
    they were one card and one host, "card: measured (1 cards)"."""
    host = "GPU-a,GPU-b"
    runs = [
        ("a1.json", run(where("GPU-a", host), SUITE, 1)),
        (
            "a2.json",
            run(where("GPU-a", host), {n: t * 1.01 for n, t in SUITE.items()}, 2),
        ),
        (
            "b.json",
            run(where("GPU-b", host), {n: t * 1.035 for n, t in SUITE.items()}, 3),
        ),
    ]
    found = noises.measure(from_documents("pooled", [pool(runs)]))
    assert found.cards == 2 and found.hosts == 1
    # Card means 1.005 and 1.035: sd 0.03 / sqrt(2), over the pool's median (1.01).
    assert found.card == pytest.approx(np.full(4, 0.03 / np.sqrt(2) / 1.01), rel=0.01)
    assert np.isnan(found.host).all()
    unnamed = [
        (f"{k}.json", run(UNNAMED, {n: t * (1 + k / 100) for n, t in SUITE.items()}, k))
        for k in range(2)
    ]
    found = noises.measure(from_documents("pooled", [pool(unnamed)]))
    assert (found.cards, found.hosts) == (0, 0)
    assert np.isnan(found.card).all() and np.isnan(found.host).all()


def test_a_run_on_a_fourth_host_is_held_to_the_measured_host_spread() -> None:
    """Three hosts: the host spread (0.2 %) at its 90 % upper bound for 2 degrees of freedom
    (x3.08), times the multiplier 2: a 1.2 % limit, which 3 % clears and 0.1 % does not.
    """
    baseline = from_documents("b", [pooled({"GPU-a": 0.0, "GPU-b": 0.002, "GPU-d": -0.002})])
    same = run(where("GPU-c"), {n: t * 1.001 for n, t in SUITE.items()}, seed=9)
    slow = run(where("GPU-c"), {n: t * 1.03 for n, t in SUITE.items()}, seed=9)
    quiet = compare(baseline, from_documents("c", [same]), TIME, Settings())
    assert {c.verdict for c in quiet.comparisons} == {Verdict.SAME}
    assert {c.level for c in quiet.comparisons} == {"host"}
    assert all(c.level_measured for c in quiet.comparisons)
    assert any("measured for every benchmark" in n for n in quiet.notes)
    caught = compare(baseline, from_documents("c", [slow]), TIME, Settings())
    assert {c.verdict for c in caught.comparisons} == {Verdict.REGRESSION} and caught.failed
    factor = levels.upper_bound_factor(3)
    assert any("from 3 hosts" in n and f"x{factor:.2f}" in n for n in caught.notes)
    for c in caught.comparisons:
        assert c.limit is not None and 0.01 <= c.limit < 0.03


def test_two_hosts_are_too_few_to_trust_alone() -> None:
    """Two cards that agree (as GPU-e6875044 and GPU-5d8b3240 did, to 0.1 %) say little about
    a third: the measured host spread is at least the prior then."""
    baseline = from_documents("b", [pooled({"GPU-a": 0.0, "GPU-b": 0.0001})])
    report = compare(
        baseline, from_documents("c", [run(where("GPU-c"), SUITE, 5)]), TIME, Settings()
    )
    relative, _ = levels.prior_constants(Level.HOST, gpu_model(H100_CONTEXT), one_gpu_hosts=True)
    assert all(
        c.noise_floor is not None and c.noise_floor >= 2 * relative for c in report.comparisons
    )
    assert any("at least the prior" in n for n in report.notes)


def test_a_benchmark_held_by_fewer_hosts_of_the_pool_gets_their_wider_bound() -> None:
    """Runs of suites that differ (`baseline update` pools them with a warning): a benchmark
    only two of three hosts ran had its spread measured over two, x7.96 at the upper bound and
    at least the prior, not the pool's three (x3.08) that held it to a limit too narrow."""
    extra = "other/z/manual_time"
    runs = [
        (
            f"{card}.json",
            run(
                where(card),
                {n: t * (1 + off) for n, t in {**SUITE, extra: 500.0}.items() if n != skip},
                k,
            ),
        )
        for k, (card, off, skip) in enumerate(
            [("GPU-a", 0.0, ""), ("GPU-b", 0.004, ""), ("GPU-d", -0.002, extra)]
        )
    ]
    baseline = from_documents("b", [pool(runs)])
    which = np.flatnonzero(baseline.counts > 0)
    held = dict(zip(baseline.names, noises.units_holding(baseline, which, Level.HOST).tolist()))
    assert held == {**{n: 3 for n in SUITE}, extra: 2}
    contender = from_documents("c", [run(where("GPU-c"), {**SUITE, extra: 500.0}, 5)])
    report = compare(baseline, contender, TIME, Settings())
    spread = dict(zip(baseline.names, noises.measure(baseline).levels().at(Level.HOST)))
    for c in report.comparisons:
        units = held[c.name]
        factor = levels.upper_bound_factor(units)
        assert c.noise_floor == pytest.approx(2 * factor * spread[c.name], rel=1e-6), c.name
        assert c.limit is not None and c.sensitivity is not None
        assert c.sensitivity == pytest.approx(
            np.expm1(np.log1p(c.limit) + 1.2816 * c.noise_floor / 2 * np.sqrt(1 + 1 / units)),
            rel=1e-3,
        )
    assert levels.upper_bound_factor(2) > 2 * levels.upper_bound_factor(3)
    assert any(
        "measured from 2 to 3 hosts (per benchmark" in n
        and f"x{levels.upper_bound_factor(3):.2f}-x{levels.upper_bound_factor(2):.2f}" in n
        and "at least the prior" in n
        for n in report.notes
    ), report.notes


def test_one_gpu_hosts_on_both_sides_get_their_own_host_prior() -> None:
    """H100 one-GPU hosts differ by 0.69 % + 35 ns, a host of several GPUs adds up to 2.3 us
    per launch (levels.ONE_GPU_HOSTS): the narrower prior only where every host on both sides
    has one GPU, and where a count is not recorded, the wider."""
    h100 = gpu_model(H100_CONTEXT)
    one = levels.prior_constants(Level.HOST, h100, one_gpu_hosts=True)
    several = levels.prior_constants(Level.HOST, h100)
    assert one == levels.ONE_GPU_HOSTS[h100] and one[0] < several[0] and one[1] < several[1]
    assert levels.prior_constants(Level.CARD, h100, one_gpu_hosts=True) == (
        levels.prior_constants(Level.CARD, h100)
    ), "only the host level has a class"
    assert levels.crossing(where("GPU-a"), where("GPU-b")).one_gpu_hosts
    assert not levels.crossing(where("GPU-a"), where("GPU-b", host_gpu_count="2")).one_gpu_hosts
    assert not levels.crossing(where("GPU-a", host_gpu_count="2"), where("GPU-b")).one_gpu_hosts
    unknown = {k: v for k, v in where("GPU-b").items() if k != "host_gpu_count"}
    assert not levels.crossing(where("GPU-a"), unknown).one_gpu_hosts
    pooled_runs = pooled({"GPU-a": 0.0, "GPU-b": 0.0001})["context"]
    assert levels.crossing(pooled_runs, where("GPU-c")).one_gpu_hosts
    assert not levels.crossing(pooled_runs, where("GPU-c", host_gpu_count="4")).one_gpu_hosts

    baseline = from_documents("b", [pooled({"GPU-a": 0.0, "GPU-b": 0.0001})])
    floors = {}
    for count, constants in (("1", one), ("2", several)):
        contender = from_documents("c", [run(where("GPU-c", host_gpu_count=count), SUITE, 5)])
        report = compare(baseline, contender, TIME, Settings())
        floors[count] = [c.noise_floor for c in report.comparisons]
        assert all(f is not None and f >= 2 * constants[0] for f in floors[count])
    assert all(a < b for a, b in zip(floors["1"], floors["2"])), "two hosts: at least the prior"


def test_stored_levels_survive_the_noise_file(tmp_path) -> None:
    document = pooled({"GPU-a": 0.0, "GPU-b": 0.01})
    result = from_documents("b", [document])
    path = tmp_path / noises.NOISE_FILE
    import json

    path.write_text(json.dumps(noises.noise_document(noises.measure(result), document["context"])))
    stored, warning = noises.stored(path, document["context"])
    assert warning is None and stored is not None
    assert np.isfinite(stored.host).all() and np.isnan(stored.card).all()


# --- two plain files, host-bound benchmarks, sensitivity ------------------------------------


def plain(median_us: float, factor: float = 1.0, seed: int = 0) -> dict:
    """One single-process Google Benchmark file of one benchmark, on card GPU-a."""
    times = (median_us * factor * np.random.default_rng(seed).lognormal(0, 0.0002, 10)).tolist()
    rows = synthetic.benchmark_rows("BM_k", times, aggregates=False, time_unit="us")
    return synthetic.document(rows, where("GPU-a"))


def test_two_single_process_files_get_the_process_prior_not_the_within_process_spread() -> None:
    base, cont = from_documents("a", [plain(10.0)]), from_documents("b", [plain(10.0, seed=1)])
    report = compare(base, cont, TIME, Settings())
    found = report.comparisons[0]
    assert found.level == "process" and found.level_measured is False
    relative, absolute = levels.prior_constants(Level.PROCESS, gpu_model(base.context))
    assert found.noise_floor == pytest.approx(2 * (relative + absolute / 10_000), rel=0.01)
    assert any("never measured" in n and "process-level prior" in n for n in report.notes)


def test_a_host_bound_change_against_another_host_is_reported_not_failing() -> None:
    medians = {"transfers/h2d/pageable/manual_time": 1000.0}
    baseline = from_documents("b", [run(where("GPU-a"), medians, host_bound=True)])
    slower = {n: t * 1.5 for n, t in medians.items()}
    elsewhere = compare(
        baseline,
        from_documents("c", [run(where("GPU-b"), slower, 1, True)]),
        TIME,
        Settings(),
    )
    found = elsewhere.comparisons[0]
    assert found.verdict is Verdict.SLOWER and not found.failed and found.host_bound
    assert "host-bound" in found.reason and elsewhere.exit_status == 0
    here = compare(
        baseline,
        from_documents("c", [run(where("GPU-a"), slower, 1, True)]),
        TIME,
        Settings(),
    )
    assert here.comparisons[0].verdict is Verdict.REGRESSION
    assert here.comparisons[0].failed and here.exit_status == 1


def test_sensitivity_is_the_limit_plus_the_spread_of_the_difference() -> None:
    baseline = from_documents("b", [run(where("GPU-a"), SUITE)])
    report = compare(
        baseline, from_documents("c", [run(where("GPU-a"), SUITE, 3)]), TIME, Settings()
    )
    for c in report.comparisons:
        assert c.sensitivity is not None and c.limit is not None
        # two processes a side: the difference's sd is one noise; 90 % power is 1.28 of them
        assert c.sensitivity == pytest.approx(
            np.expm1(np.log1p(c.limit) + 1.2816 * c.noise_floor / 2), rel=1e-3
        )
        assert c.limit < c.sensitivity < 0.02


def test_a_run_on_a_card_of_the_baseline_is_compared_with_that_cards_runs() -> None:
    """A pooled baseline that holds a run on the contender's card: the process level, against
    that card's own rows, so a card 2 % off the others does not blur a 2 % slowdown."""
    baseline = from_documents("b", [pooled({"GPU-a": 0.0, "GPU-b": 0.02, "GPU-d": -0.02})])
    slower = run(where("GPU-b"), {n: t * 1.02 * 1.02 for n, t in SUITE.items()}, seed=7)
    report = compare(baseline, from_documents("c", [slower]), TIME, Settings())
    assert {c.level for c in report.comparisons} == {"process"}
    assert {c.verdict for c in report.comparisons} == {Verdict.REGRESSION}
    for c in report.comparisons:
        assert c.ratio == pytest.approx(1.02, rel=0.003)  # against GPU-b's rows alone
        assert c.baseline is not None and c.baseline.n == 10
    assert any("holds a run on this card" in n for n in report.notes)


def test_the_level_note_names_the_one_gpu_host_prior() -> None:
    """A one-card baseline never measured the host level: the note gives the prior taken, that
    of one-GPU hosts where both sides have one GPU, the one across kinds of host otherwise."""
    baseline = from_documents("b", [run(where("GPU-a"), SUITE, 1)])
    h100 = gpu_model(H100_CONTEXT)
    for count, constants, said in (
        ("1", levels.ONE_GPU_HOSTS[h100], " (one-GPU hosts)"),
        ("2", levels.prior_constants(Level.HOST, h100), ""),
    ):
        contender = from_documents("c", [run(where("GPU-c", host_gpu_count=count), SUITE, 5)])
        notes = compare(baseline, contender, TIME, Settings()).notes
        level = next(n for n in notes if n.startswith("level: host"))
        prior = f"host-level prior {constants[0]:.2%} + {constants[1]:g} ns / time{said}"
        assert prior in level, level
        # the prior applied is at least the process level's (levels.prior): the note said only
        # the one-GPU host prior, 0.70 % + 40 ns, for kernels held to 0.81 % + 430 ns
        process = levels.prior_constants(Level.PROCESS, h100)
        wider = process[0] > constants[0] or process[1] > constants[1]
        at_least = f"at least the process-level prior {process[0]:.2%} + {process[1]:g} ns / time"
        assert (at_least in level) == wider, level


def test_a_wider_level_s_prior_is_at_least_the_process_level_s() -> None:
    # The H100's one-GPU host prior (0.70 % + 40 ns) was below its process prior (0.81 % +
    # 430 ns): a 5 us kernel got 3.0 % against another host and 18.8 % on its own card.
    model = "NVIDIA H100 80GB HBM3 (sm 9.0)"
    times = np.array([5e3, 5e4, 1e6, 1e8])
    process = levels.prior(Level.PROCESS, times, model=model)
    for level in Level:
        for one_gpu_hosts in (False, True):
            wider = levels.prior(level, times, model=model, one_gpu_hosts=one_gpu_hosts)
            assert (wider >= process).all(), (level, one_gpu_hosts)
    host = levels.prior(Level.HOST, times, model=model, one_gpu_hosts=True)
    assert host[0] == pytest.approx(0.0081 + 430 / 5e3)
    assert host[-1] == pytest.approx(0.0081 + 430 / 1e8)


def test_the_baseline_s_own_card_on_a_host_configured_otherwise_gets_the_host_prior() -> None:
    # docs/compare.md: "whatever the level". A driver changed under a card of the baseline gave
    # +2.5 % to every benchmark, each failing a 1 % process-level limit.
    context = dict(H100_CONTEXT, gpu_name="NVIDIA H200", host_gpu_count="1")
    rng = np.random.default_rng(0)
    medians = {f"BM_{i}/{j}": 50.0 + 10 * i + j for i in range(30) for j in range(3)}

    def run(scale: float, **changed: str) -> Any:
        spec = {
            n: [(m * scale * rng.lognormal(0, 5e-4, 5)).tolist() for _ in (1, 2)]
            for n, m in medians.items()
        }
        return from_documents("x", [merged(spec, None, dict(context, **changed))])

    report = compare(run(1.0), run(1.025, gpu_driver_version="590.10"), TIME, Settings())
    assert {c.verdict for c in report.comparisons} == {Verdict.SAME}
    assert {c.level for c in report.comparisons} == {"process"}
    assert any(
        "configured unlike every host of the baseline (gpu_driver_version 590.10, the "
        "baseline's 580.159.04)" in n
        for n in report.notes
    )
