"""Which of a baseline's benchmarks the judged build does not register at all: removed or
renamed by the change, so MISSING without failing (docs/ci.md, "When a pull request changes the
suite"). Google Benchmark's compare.py and nvbench's script ignore what one side lacks; here a
benchmark that vanishes from a run can also be a crash or a hang, which must fail, so only one
that the build does not register passes.

`run` of the whole suite (no --filter, --shard nor --bench) lists every benchmark its binaries
register (--benchmark_list_tests) and runs them all, and says so in the result's context
(WHOLE_BUILD_KEY): a benchmark absent from such a result is not in its build, unless the
context names it among those whose process crashed (results.NO_RESULT_KEY; crashes.py shows
those as the crash). Google Benchmark writes a row for every benchmark it runs, one that errors
or skips too. `ab` lists B's binaries itself (not_registered).
"""

from __future__ import annotations

from collections.abc import Iterable

from kernelwatch.results import NO_RESULT_KEY, ResultSet

# Context key of a result of `run` that ran every benchmark its build registers.
WHOLE_BUILD_KEY = "kernelwatch_whole_build"


def whole_build(filter: str | None, shard: object, bench: Iterable[str]) -> dict[str, str]:
    """The context key of a run, when it runs the whole build."""
    return {} if filter or shard or any(True for _ in bench) else {WHOLE_BUILD_KEY: "true"}


def not_registered(baseline: ResultSet, registered: Iterable[str]) -> frozenset[str]:
    """The baseline's benchmarks that are not among the build's `registered` ones."""
    return frozenset(baseline.index.keys() - set(registered))


def not_in_build(baseline: ResultSet, contender: ResultSet) -> frozenset[str]:
    """The baseline's benchmarks that the contender's build does not register, as its context
    tells (none when it does not say it ran its whole build)."""
    if str(contender.context.get(WHOLE_BUILD_KEY, "")).lower() != "true":
        return frozenset()
    crashed = contender.context.get(NO_RESULT_KEY)
    lost = {n for n in crashed if isinstance(n, str)} if isinstance(crashed, list) else set()
    present = contender.index.keys() | contender.errors.keys() | contender.skipped.keys()
    return frozenset(baseline.index.keys() - present - lost)
