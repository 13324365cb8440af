"""A run's completeness: which benchmarks a result has no row for, and why: the judged build
does not register them (removed or renamed: MISSING without failing), the run covered a part of
the suite that left them out (not compared, as `run` compared them: outside_part), or their
process crashed, hung or lost the GPU (an ERROR, shown where it happened); and what a failed run
still keeps (the result of the processes that finished, with the benchmarks it lacks named).

Not in the build. Google Benchmark's compare.py and nvbench's script ignore what one side
lacks; here a benchmark that vanishes from a run can also be a crash or a hang, which must
fail, so only one that the build does not register passes (docs/ci.md, "When a pull request
changes the suite"). `run` of the whole suite (no --filter, --shard nor --bench) lists every
benchmark its binaries register (--benchmark_list_tests) and runs them all, and says so in the
result's context (WHOLE_BUILD_KEY): a benchmark absent from such a result is not in its build,
unless the context names it among those whose process crashed (results.NO_RESULT_KEY: shown
as the crash). Google Benchmark writes a row for every benchmark it runs, one that errors or
skips too. `ab` lists B's binaries itself (not_registered).

Crashes, in a comparison's runs (`ab`, bisect's oracle) or in the run that wrote a result
compared later (`compare`, `report` of the partial result `run` keeps: keep_partial). A crashed
process measures nothing of its binary, so each of the binary's benchmarks is marked; which
one of them crashed, the failure line may say (the harness's hang watchdog names it). On the
contender's side a crash is an ERROR of its own that fails whatever --allow-errors says (a
kernel that crashes is the worst regression there is); on the baseline's side it fails
nothing: the benchmark is judged on the baseline's runs that finished, or is an ERROR "not
compared" when none did.

(Issue 33: inbuild.py, crashes.py and partial.py, one concept in three files.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import baseline as baselines
from kernelwatch import results
from kernelwatch.compare import SEVERITY, Comparison, Report, Verdict
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import write_json_atomic
from kernelwatch.gbench import show
from kernelwatch.results import FAILED_KEY, NO_RESULT_KEY, ResultSet

if TYPE_CHECKING:  # its types only: a compare of two files runs nothing
    from kernelwatch import runner

# --- not in the build -----------------------------------------------------------------------------

# Context key of a result of `run` that ran every benchmark its build registers.
WHOLE_BUILD_KEY = "kernelwatch_whole_build"


# Context key of a result of `run --bench`: the binaries it ran. They may be a part of the suite
# its baseline holds, judged on that part as a --filter is (outside_part), or the whole of
# another project's suite, which `baseline update` takes whole (so not baseline.ran_a_part).
BENCH_KEY = "kernelwatch_bench"


def coverage(filter: str | None, shard: object, bench: Sequence[str]) -> dict[str, Any]:
    """The context keys that say what a run covers: its whole build, or the --bench binaries."""
    if bench:
        return {BENCH_KEY: [Path(b).name for b in bench]}
    return {} if filter or shard else {WHOLE_BUILD_KEY: "true"}


def judged_on_its_part(context: Mapping[str, Any]) -> bool:
    """Whether a result is judged on the part of its baseline it ran: it ran a part of the suite
    (baseline.ran_a_part: --filter, --shard, a GPU of `run --gpus`) or named its binaries."""
    return baselines.ran_a_part(context) or bool(context.get(BENCH_KEY))


def not_registered(baseline: ResultSet, registered: Iterable[str]) -> frozenset[str]:
    """The baseline's benchmarks that are not among the build's `registered` ones."""
    return frozenset(baseline.index.keys() - set(registered))


def not_in_build(baseline: ResultSet, contender: ResultSet) -> frozenset[str]:
    """The baseline's benchmarks that the contender's build does not register, as its context
    tells (none when it does not say it ran its whole build)."""
    if str(contender.context.get(WHOLE_BUILD_KEY, "")).lower() != "true":
        return frozenset()
    return frozenset(baseline.index.keys() - _accounted(contender))


def outside_part(baseline: ResultSet, contender: ResultSet) -> frozenset[str]:
    """The baseline's benchmarks outside the part of the suite the contender's context says it
    ran (judged_on_its_part), that no crash took: not compared. `run`, `compare` and `report`
    all judge such a result against the whole baseline with these left out (verdict.judge_result),
    so that every command gives it the same verdict."""
    if not judged_on_its_part(contender.context):
        return frozenset()
    return frozenset(baseline.index.keys() - _accounted(contender))


def _accounted(contender: ResultSet) -> set[str]:
    """The benchmarks a result has a row for, and those its context says a crash took."""
    rows = contender.index.keys() | contender.errors.keys() | contender.skipped.keys()
    return rows | set(no_result(contender))


def no_result(result: ResultSet) -> list[str]:
    """The benchmarks a saved result's context says a crash left without a result
    (results.NO_RESULT_KEY, beside results.FAILED_KEY: `run` writes both); a one-line error for
    a list that is damaged or left out beside the failures: read leniently, a crashed benchmark
    absent from a run of the whole build was MISSING, not failing. (A name the result has rows
    for is a crash still: ab's rounds, compared again, are one side whose context is the first
    round's, and a later round may have measured what it lost; ab calls that an ERROR too.)"""
    context = result.context
    names = context.get(NO_RESULT_KEY)
    if names is None and not context.get(FAILED_KEY):
        return []
    where = f"{result.label}: context {NO_RESULT_KEY}"
    if names is None:
        raise InputError(
            f"{where} is missing beside {FAILED_KEY}: which benchmarks a failed process left "
            "without a result cannot be told (`run` writes both keys; docs/running.md)"
        )
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(
            f"{where} is {show(names)}, not a list of benchmark names as `run` writes it "
            "(docs/running.md)"
        )
    return list(dict.fromkeys(names))


# --- crashes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crash:
    """One failed benchmark process: its side ("A", "B"), its run ("round 2 of 3"), its
    one-line failure, and the benchmarks of its binary."""

    side: str
    run: str
    failure: str
    names: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.side} {self.run}" if self.run else self.side


def from_incomplete(failed: runner.IncompleteRun, side: str, run: str) -> list[Crash]:
    return [Crash(side, run, failure, names) for failure, names in failed.lost]


# The longest failure line kept whole: the hang watchdog's names its benchmark instance.
_FAILURE_CHARACTERS = 400


def from_context(result: ResultSet) -> list[Crash]:
    """The crash a saved result's context records (runner.IncompleteRun's partial result):
    its benchmarks without a result, with the failure line. Which failed process each belongs
    to, the context does not say: with several, the first line and how many more."""
    context = result.context
    names = no_result(result)
    if not names:
        return []
    lines = _strings(context.get(results.FAILED_KEY))
    # One line, as run records it (tool.last_line): a line break or an escape sequence from
    # the file split the warning on stderr and acted on the terminal, and each crashed row
    # repeats it (a 300,000-character line, 300 times).
    failure = _one_line(lines[0]) if lines else f"no result ({results.NO_RESULT_KEY})"
    if len(lines) > 1:
        failure += f" (and {len(lines) - 1} more failed process(es): {results.FAILED_KEY})"
    return [Crash(result.label, "", failure, tuple(names))]


def mark_saved(report: Report) -> Report:
    """The report with the benchmarks that either side's saved result has no result for, for
    a crash recorded in its context (from_context), marked as crashes (mark), one warning per
    side saying so."""
    base, cont = from_context(report.baseline), from_context(report.contender)
    if not base and not cont:
        return report
    marked = mark(report, base, cont)
    warnings = [
        f"{crash.where}: a partial result, {len(crash.names)} benchmark(s) without a result: "
        f"{crash.failure}"
        for crash in (*cont, *base)
    ]
    return dataclasses.replace(marked, warnings=tuple(report.warnings) + tuple(warnings))


def _one_line(text: str) -> str:
    """A line from a file for a warning and a row: blanks folded, control characters escaped
    (`\\x1b`), cut to _FAILURE_CHARACTERS."""
    folded = " ".join(text.split())
    shown = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in folded
    )
    return shortened(shown, _FAILURE_CHARACTERS)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def mark(report: Report, baseline: Sequence[Crash], contender: Sequence[Crash]) -> Report:
    """The report with every crashed benchmark's row saying so (the module's rules), a row
    added for one neither side measured, and a warning per failed process."""
    on_base, on_cont = _by_name(baseline), _by_name(contender)
    if not on_base and not on_cont:
        return report
    rows = []
    for c in report.comparisons:
        rows.append(_marked(c, on_base.get(c.name, []), on_cont.get(c.name, [])))
    shown = {c.name for c in report.comparisons}
    for name in sorted((on_base.keys() | on_cont.keys()) - shown):
        nothing = Comparison(name, Verdict.ERROR, "measured on neither side", failed=False)
        rows.append(_marked(nothing, on_base.get(name, []), on_cont.get(name, [])))
    rows.sort(key=lambda c: (SEVERITY[c.verdict], not (c.failed and c.crashed)))
    warnings = [
        f"{crash.where}: {crash.failure} ({len(crash.names)} benchmark(s) of its binary without "
        "a result in that run)"
        for crash in (*contender, *baseline)
    ]
    return dataclasses.replace(
        report, comparisons=tuple(rows), warnings=tuple(report.warnings) + tuple(warnings)
    )


def _marked(c: Comparison, on_base: Sequence[Crash], on_cont: Sequence[Crash]) -> Comparison:
    if on_cont:
        measured = f"; the runs that finished: {c.change}" if c.ratio is not None else ""
        return _crash_row(c, f"crashed: {_said(on_cont)}{measured}", failed=True)
    if not on_base:
        return c
    if c.ratio is not None:  # the baseline's other runs measured it
        reason = f"{c.reason}; judged on the baseline's runs that finished ({_said(on_base)})"
        return c._replace(reason=reason, crashed=True)
    if c.verdict in (Verdict.NEW, Verdict.ERROR) and not c.failed:
        return _crash_row(c, f"baseline crashed: {_said(on_base)}; not compared", failed=False)
    return c._replace(reason=f"{c.reason}; baseline crashed: {_said(on_base)}", crashed=True)


def _crash_row(c: Comparison, reason: str, failed: bool) -> Comparison:
    return Comparison(c.name, Verdict.ERROR, reason, failed=failed, label=c.label, crashed=True)


def _said(crashes: Sequence[Crash]) -> str:
    """Where, and the first failure's line: `B round 2 of 3, B round 3 of 3: LINE`."""
    places = ", ".join(dict.fromkeys(crash.where for crash in crashes))
    return f"{places}: {crashes[0].failure}"


def _by_name(crashes: Iterable[Crash]) -> dict[str, list[Crash]]:
    found: dict[str, list[Crash]] = {}
    for crash in crashes:
        for name in crash.names:
            found.setdefault(name, []).append(crash)
    return found


# --- what a failed run keeps ----------------------------------------------------------------------


def keep_partial(
    failed: runner.IncompleteRun,
    out_for: Callable[[str | None], Path],
    progress: runner.Progress,
    new: bool = False,
) -> Path | None:
    """Write the result of the processes that finished to `out_for(gpu slug)` and say which
    benchmarks have no result; None when no process finished. Nothing is compared here (the
    run fails with the crash); `compare` and `report` of the result show the benchmarks without
    a result as the crash (mark_saved). `new`: a default name, which replaces no file
    (files.write_atomic)."""
    if failed.partial is None:
        return None
    document = failed.partial.document
    out = out_for(baselines.context_slug(document["context"]))
    out = write_json_atomic(out, document, make_parents=True, new=new)
    progress.say(
        f"kernelwatch: wrote {out} with the results of the processes that finished (not "
        f"compared; context keys {results.FAILED_KEY} and {results.NO_RESULT_KEY} say what is "
        "missing)"
    )
    if failed.no_result:
        progress.say(
            f"kernelwatch: no result for {len(failed.no_result)} benchmark(s): "
            + ", ".join(failed.no_result)
        )
    return out
