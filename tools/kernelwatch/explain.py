"""Why a benchmark changed: did its kernel change (kernels.py: SASS, resources, launch), what
did the hardware do differently (ncu.py: a fixed metric set on both sides), and how the
machine code differs (sass.py: instruction mix and changed lines).

Runs after all timing. The kernel comparison costs nothing (it reads the results' contexts);
ncu and the SASS diffs run only for the benchmarks chosen (confirmed REGRESSIONs, and those
matching --explain), within a time budget, and only where both builds are at hand.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults, kernels, names
from kernelwatch.compare import SLOWDOWNS, Report, Verdict
from kernelwatch.errors import InputError, shortened
from kernelwatch.explanation import Change, Explanation, KernelChange, Moved, SassDiff
from kernelwatch.files import write_json_atomic

if TYPE_CHECKING:  # profiling and SASS diffs load where builds are explained, not in compare
    from kernelwatch import ncu

DEFAULT_BUDGET = defaults.EXPLAIN_BUDGET  # seconds of ncu per command
EXPLANATIONS_FILE = "explanations.json"


@dataclass(frozen=True)
class Build:
    """One side's binaries (by file name) and the arguments they run with."""

    binaries: Mapping[str, Path]
    extra_args: tuple[str, ...] = ()


def chosen(report: Report, pattern: re.Pattern[str] | None) -> list[str]:
    """The benchmarks to profile: REGRESSIONs, SLOWER ones but those a re-run did not confirm
    (host-bound against another host, unverified), and every benchmark matching `pattern` that
    was measured (an IDENTICAL one runs the same binary on both sides: nothing to explain)."""
    names = []
    for c in report.comparisons:
        regressed = c.verdict in SLOWDOWNS and c.confirmed is not False
        matched = (
            pattern is not None and pattern.search(c.name) and c.verdict is not Verdict.IDENTICAL
        )
        if regressed or matched:
            names.append(c.name)
    return names


Profiler = Callable[[str, "ncu.Target", float], "ncu.Profile"]


def explain(
    report: Report,
    builds: Mapping[str, Build] | None = None,
    *,
    pattern: re.Pattern[str] | None = None,
    budget: float = DEFAULT_BUDGET,
    say: Callable[[str], None] = lambda line: None,
    ncu_path: str | None | bool = None,
    profiler: Profiler | None = None,
) -> Report:
    """`report` with its explanations: the kernel comparison of every benchmark (when the
    results carry kernel records), and for the chosen benchmarks, when `builds` has both
    sides ("A", "B"), the SASS diffs and the ncu counters within `budget` seconds.
    `ncu_path`: None looks for ncu; False: do not profile."""
    names = [c.name for c in report.comparisons]
    changes = kernels.classify_all(report.baseline.context, report.contender.context, names) or {}
    found: dict[str, Explanation] = {n: Explanation(kernel=k) for n, k in changes.items()}
    notes: list[str] = []
    picked = chosen(report, pattern) if builds else []
    if builds and not picked:
        notes.append("nothing to explain (no REGRESSION, no --explain match): 0 s added")
    if picked and builds is not None:
        from kernelwatch import ncu

        profiler = profiler or ncu.profile
        started = time.monotonic()
        tool: str | None = (
            ncu.find_ncu()
            if ncu_path is None
            else (ncu_path if isinstance(ncu_path, str) else None)
        )
        tool = tool or None
        if tool is None and ncu_path is not False:
            notes.append("ncu not found (Nsight Compute): no hardware counters in the explanation")
            say(f"kernelwatch: {notes[-1]}")
        deadline = started + budget
        left_out = 0
        for name in picked:
            explanation = found.get(name, Explanation())
            diffs, diff_note = _sass_diffs(explanation.kernel, builds, report)
            explanation = dataclasses.replace(explanation, sass_diffs=diffs, note=diff_note)
            if tool is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 1:
                    left_out += 1
                else:
                    say(f"kernelwatch: profiling {name} with ncu (A, then B)")
                    try:
                        explanation = _profile(
                            explanation, name, builds, report, tool, remaining, profiler
                        )
                    except ncu.NcuUnavailable as exc:
                        notes.append(str(exc))
                        say(f"kernelwatch: {exc}; going on without counters")
                        tool = None
            found[name] = explanation
        spent = time.monotonic() - started
        if left_out:
            notes.append(
                f"--explain-budget {budget:g} s spent: {left_out} benchmark(s) not profiled"
            )
        notes.append(f"explaining {len(picked)} benchmark(s) took {spent:.1f} s after the timing")
    if not found and not notes:
        return report
    return dataclasses.replace(report, explanations=found, notes=report.notes + tuple(notes))


def _side_record(report: Report, side: str, name: str) -> Mapping[str, Any] | None:
    context = report.baseline.context if side == "A" else report.contender.context
    entry = context.get(kernels.CONTEXT_KEY)
    if not isinstance(entry, Mapping):
        return None
    found = (entry.get("benchmarks") or {}).get(names.instance_key(name))
    return found if isinstance(found, Mapping) else None


def _profile(
    explanation: Explanation,
    name: str,
    builds: Mapping[str, Build],
    report: Report,
    tool: str,
    remaining: float,
    profiler: Profiler,
) -> Explanation:
    deadline = time.monotonic() + remaining
    metrics: list[Mapping[str, float]] = []
    spent = 0.0
    for side in ("A", "B"):
        record = _side_record(report, side, name)
        if record is None or not record.get("kernels"):
            return dataclasses.replace(
                explanation, note=f"not profiled: no kernel record of {name} in {side}"
            )
        binary = builds[side].binaries.get(str(record.get("binary")))
        if binary is None:
            return dataclasses.replace(
                explanation,
                note=f"not profiled: {side}'s binary {record.get('binary')} not at hand",
            )
        from kernelwatch import ncu

        target = ncu.Target(
            binary,
            name,
            tuple(str(k.get("name")) for k in record["kernels"]),
            builds[side].extra_args,
        )
        try:
            found = profiler(tool, target, deadline - time.monotonic())
        except RuntimeError as exc:
            return dataclasses.replace(explanation, note=f"not profiled ({side}): {exc}")
        metrics.append(found.metrics)
        spent += found.seconds
    before, after = metrics
    return dataclasses.replace(
        explanation,
        before=before,
        after=after,
        moved=tuple(ncu.moved_most(before, after)),
        seconds=explanation.seconds + spent,
    )


def _sass_diffs(
    change: KernelChange | None, builds: Mapping[str, Build], report: Report
) -> tuple[tuple[SassDiff, ...], str]:
    if change is None or not change.changed_code:
        return (), ""
    capability_a = report.baseline.context.get("gpu_compute_capability")
    capability_b = report.contender.context.get("gpu_compute_capability")
    from kernelwatch import sass

    diffs: list[SassDiff] = []
    for binary_a, name_a, binary_b, name_b in change.changed_code:
        path_a = builds["A"].binaries.get(binary_a)
        path_b = builds["B"].binaries.get(binary_b)
        if path_a is None or path_b is None:
            return tuple(diffs), "no SASS diff: a side's binary is not at hand"
        try:
            _, listing_a = sass.kernels_for_gpu(path_a, capability_a)
            _, listing_b = sass.kernels_for_gpu(path_b, capability_b)
        except InputError as exc:
            return tuple(diffs), f"no SASS diff: {exc}"
        if name_a in listing_a and name_b in listing_b:
            diffs.append(sass.diff(listing_a[name_a], listing_b[name_b]))
    return tuple(diffs), ""


def write_explanations(report: Report, path: Path) -> None:
    """The explanations as JSON ({"benchmarks": {name: explanation}}), for `kernelwatch report
    --explanations` (docs/report.md)."""
    write_json_atomic(
        path,
        {
            "kernelwatch_explanations": 1,
            "benchmarks": {n: e.as_json() for n, e in report.explanations.items()},
        },
    )


def read_explanations(path: Path) -> dict[str, Explanation]:
    """What write_explanations wrote, back as Explanations (for the HTML report)."""
    from kernelwatch.gbench import read_json

    document = read_json(path)
    if not isinstance(document, dict) or "kernelwatch_explanations" not in document:
        raise InputError(f"--explanations {path}: not a kernelwatch explanations file")
    found: dict[str, Explanation] = {}
    try:
        for name, item in (document.get("benchmarks") or {}).items():
            if not isinstance(item, dict):
                continue
            kernel = None
            if isinstance(item.get("kernel"), dict):
                try:
                    kind = Change(item["kernel"].get("change"))
                except ValueError:
                    kind = Change.UNKNOWN
                kernel = KernelChange(kind, tuple(map(str, item["kernel"].get("details", []))))
            counters = item.get("counters") or {}
            moved = tuple(
                Moved(str(m["metric"]), float(m["baseline"]), float(m["contender"]))
                for m in counters.get("moved", [])
                if isinstance(m, dict)
            )
            diffs = tuple(
                SassDiff(
                    str(d.get("kernel", "")),
                    str(d.get("baseline", "")),
                    str(d.get("contender", "")),
                    _instructions(d.get("instructions", (0, 0))),
                    tuple(map(_counted, d.get("mix", []))),
                    tuple(map(_counted, d.get("shared_ops", []))),
                    tuple(map(str, d.get("diff", []))),
                    int(d.get("diff_lines_left_out", 0)),
                )
                for d in item.get("sass_diff", [])
                if isinstance(d, dict)
            )
            found[str(name)] = Explanation(
                kernel,
                dict(counters.get("baseline") or {}),
                dict(counters.get("contender") or {}),
                moved,
                diffs,
                str(item.get("note", "")),
                float(item.get("seconds", 0.0)),
            )
    except (AttributeError, KeyError, OverflowError, TypeError, ValueError) as exc:
        # A value of the wrong shape (a list where an object belongs, a missing or non-numeric
        # number): one line, as for any other input, not an internal error.
        raise InputError(
            f"--explanations {path}: not a kernelwatch explanations file "
            f"({type(exc).__name__}: {shortened(str(exc), 160)})"
        ) from None
    return found


def _instructions(entry: Any) -> tuple[int, int]:
    """A SASS diff's (before, after) instruction counts; ValueError when they are not two
    whole numbers (text there went into the report's page as it was, a script too)."""
    before, after = entry
    return int(before), int(after)


def _counted(entry: Any) -> tuple[str, int, int]:
    """One (mnemonic, before, after) of an explanations file; ValueError when it is not one."""
    op, before, after = entry
    return str(op), int(before), int(after)
