"""One path from a run to its verdicts: the settings (options over the config file over the
defaults), the run's baseline (given, or its GPU model's committed one) whole, with the
baseline's stored noise, where a run of a part of the suite leaves the rest out; the
comparison; the re-runs that confirm its regressions.

`run`, `report` and `compare` judge a result against its baseline through here (judge_result),
so the page and a comparison of the saved files show exactly the verdicts `run` gives
(docs/report.md); `ab` judges B against A's runs with the same comparison (judge), and
`history changes` reads the same config (suite_config, Config.over), as they all do.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import baseline as baselines
from kernelwatch import completeness
from kernelwatch.compare import (
    SEVERITY,
    SLOWDOWNS,
    Comparison,
    Report,
    Settings,
    Sources,
    Verdict,
    compare,
    judged_against,
    worded_for,
)
from kernelwatch.config import Config, ThresholdRule, load_config, parse_fraction
from kernelwatch.errors import InputError
from kernelwatch.files import Output, write_atomic, write_output
from kernelwatch.loading import baseline_folder_result, from_documents
from kernelwatch.results import (
    IDENTICAL_KEY,
    UNCONFIRMED_KEY,
    Metric,
    ResultSet,
    anchoring,
    occupied,
    recorded_for,
)

SUITE_CONFIG = "kernelwatch.toml"


@dataclass(frozen=True)
class Judging:
    """How verdicts are decided: the metric and compare's settings."""

    metric: Metric
    settings: Settings

    def to_json(self) -> dict[str, Any]:
        """As JSON (`bisect` hands it to its steps, which are processes of their own)."""
        fields = dataclasses.asdict(self.settings)
        fields["rules"] = [
            {"match": r.pattern.pattern, "flags": int(r.pattern.flags), "threshold": r.threshold}
            for r in self.settings.rules
        ]
        return {"metric": dataclasses.asdict(self.metric), "settings": fields}

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Judging:
        fields = dict(document["settings"])
        # A bisection's plan written before they were kept: where they came from is unknown.
        unknown = {f.name: "not recorded" for f in dataclasses.fields(Sources) if f.name != "rules"}
        fields["sources"] = Sources(**fields.get("sources", unknown))
        fields["rules"] = tuple(
            ThresholdRule(re.compile(r["match"], r["flags"]), r["threshold"])
            for r in fields["rules"]
        )
        return cls(Metric(**document["metric"]), Settings(**fields))


def suite_config(path: str | Path | None, root: Path | None = None) -> Config:
    """--config, else the suite's own kernelwatch.toml in the baselines folder (`root`, default
    baselines/ in the checkout) when there is one: its per-benchmark thresholds and host-bound
    list belong to the benchmarks, as the baselines do."""
    if path is None:
        folder = root if root is not None else baselines.found_root()
        if folder is None:  # outside any project: no suite, no suite settings
            return Config()
        found = folder / SUITE_CONFIG
        try:
            path = found if found.is_file() else None
        except OSError:  # a folder that may not be read: load_config says so, in one line
            path = found
    return load_config(path) if path else Config()


def baselines_root_of(baseline: str | Path) -> Path | None:
    """The baselines folder a baseline given by path stands in: the parent of a GPU's baseline
    folder (its manifest.json beside its result), given as the folder or as its result file;
    None for any other result (then the checkout's, suite_config). `compare` of a baseline
    folder reads that folder's kernelwatch.toml, as `run` and `report` with `--baselines`
    read it: the same files were judged by another config."""
    path = Path(baseline)
    for folder in (path, path.parent):
        try:
            if baseline_folder_result(folder) is not None:
                return folder.parent
        except OSError:  # a folder that may not be read: the command's own reading says so
            return None
    return None


def settings(
    config: Config,
    *,
    threshold: str | None = None,
    alpha: float | None = None,
    min_repetitions: int | None = None,
    noise_multiplier: float | None = None,
    **gates: bool,
) -> Settings:
    """Compare's settings, resolved once: the command line (None: not given) over the suite's
    config over compare's defaults, each with where it came from (Settings.sources); `gates`
    (allow_missing, allow_errors, allow_gpu_mismatch, strict) as the command has them."""
    given: dict[str, Any] = {  # by the option's name, --min-repetitions as min_repetitions
        "threshold": parse_fraction(threshold, "--threshold") if threshold else None,
        "alpha": alpha,
        "min_repetitions": min_repetitions,
        "noise_multiplier": noise_multiplier,
    }
    default, said = Settings(), Sources()
    values = {
        name: config.over(name, value, getattr(default, name)) for name, value in given.items()
    }
    sources = {
        name: config.origin(name, value, f"--{name.replace('_', '-')}", getattr(said, name))
        for name, value in given.items()
    }
    sources["rules"] = config.name if config.rules else ""
    return Settings(**values, rules=config.rules, sources=Sources(**sources), **gates)


def find_baseline(
    root: Path | None,
    context: Mapping[str, Any],
    result_label: str,
    names: set[str],
    *,
    given: Path | None = None,
) -> baselines.Against:
    """The run's baseline (baselines.against). For a run of a part of the suite
    (completeness.judged_on_its_part), its documents are the part (`names`), while the side
    judged (`whole`, baseline_side) is the whole baseline, as `compare` reads it: judge_result
    leaves the rest out (completeness.outside_part). A baseline cut down to the part lost its
    processes that held none of it, and with them which pooled run each process is
    (noise.row_units): a card the baseline holds was held to the spread between all its hosts, not
    to its own run, and its kinds were told from the part alone. Where the baseline holds none
    of `names`, no side at all (baseline_side refuses, naming the run's part)."""
    found = baselines.against(root, context, result_label, given=given)
    if not completeness.judged_on_its_part(context):
        return found
    kept = [d for d in (baselines.restrict(d, names) for d in found.documents) if d["benchmarks"]]
    return dataclasses.replace(found, read=kept, whole=baseline_side(found) if kept else None)


def baseline_side(found: baselines.Against, empty: str = "") -> ResultSet:
    """The run's baseline as one side: a file taken whole as it was read (a part of its rows at
    a time), else its documents (`side`)."""
    return found.whole if found.whole is not None else side(found.label, found.documents, empty)


def side(label: str, documents: Sequence[Any], empty: str = "") -> ResultSet:
    """The baseline's documents that hold benchmarks, as one side; refuses when none does."""
    kept = [d for d in documents if d.get("benchmarks")]
    if not kept:
        raise InputError(
            f"baseline {label} {empty or 'holds none of these benchmarks'}; update it with "
            "kernelwatch baseline update"
        )
    return from_documents(label, kept)


# How a result was run, where a difference moves medians (random interleaving shifted one
# strided kernel by 2.4% on an H200: docs/measurement.md); the harness settings are those a
# pooled baseline's runs must share (baseline/pool.py). Repetitions and processes move no
# median: fewer say so in the power note and the sensitivity.
RUN_SETTING_KEYS = {
    "kernelwatch_random_interleaving": "random interleaving",
    "kernelwatch_max_time": "max time (s)",
    "kernelwatch_noise_target": "noise target",
    "kernelwatch_min_samples": "min samples",
    "kernelwatch_blocking_kernel": "blocking kernel",
    "kernelwatch_keep_set_ups": "set-ups kept",
}


def judge(
    base: ResultSet,
    run: ResultSet,
    judging: Judging,
    found: baselines.Against | None = None,
    removed: frozenset[str] = frozenset(),
    outside: frozenset[str] = frozenset(),
) -> Report:
    """Compare `run` with `base` (with the stored noise of `found`, the baseline it came from;
    `removed`: the benchmarks of `base` that run's build does not register, `outside`: those
    outside the part of the suite it ran, completeness.py); warn where the two were run
    differently, and where the stored noise is not the baseline's."""
    report = compare(
        base,
        run,
        judging.metric,
        judging.settings,
        found.noise if found is not None else None,
        removed,
        outside,
    )
    warnings = [
        f"different {label}: baseline {base.context[key]}, this run {run.context[key]}"
        for key, label in RUN_SETTING_KEYS.items()
        if key in base.context
        and key in run.context
        and str(base.context[key]) != str(run.context[key])
    ]
    for side, result in (("baseline", base), ("contender", run)):
        said = occupied(result.context)
        if said is not None:  # (runner/occupants.py: GPU-fe9a1c25's matmuls 68-115 % slower)
            warnings.append(f"the {side} was {said}: its times may be slowed by them")
    if found is not None and found.warning:
        warnings.append(found.warning)
    if not warnings:
        return report
    return dataclasses.replace(report, warnings=tuple(report.warnings) + tuple(warnings))


def judge_result(
    base: ResultSet, run: ResultSet, judging: Judging, found: baselines.Against | None = None
) -> Report:
    """A result judged against its baseline (judge), as `run`, `report` and `compare` all judge
    it: the baseline's benchmarks that the result's build does not register are not failing
    (completeness.not_in_build), those outside the part of the suite it ran are not compared
    (completeness.outside_part), those a crash left without a result in a saved partial
    result are crashes (completeness.mark_saved), and what its `run` built identically to the
    baseline's commit or did not confirm reads as run read it (as_run_judged)."""
    outside = completeness.outside_part(base, run)
    report = judge(base, run, judging, found, completeness.not_in_build(base, run), outside)
    return as_run_judged(completeness.mark_saved(report))


# What `run` established beyond the numbers of its result: a benchmark binary that its build
# made identically to the baseline commit's is that commit's own code, so its change against the
# baseline is the runner's (anchor.py); a regression that its re-runs did not confirm does not
# fail (confirm_regressions). The run records both (results.RECORD_KEYS), and any command that
# judges the result against a baseline of that commit (compare, report, the nightly's merged
# result) reads them as run did. Before, GPU-27c05724 (H200, fdd4ecb) ran exit 0 with nothing
# to measure, and `compare` of its result with the baseline failed one of those benchmarks at
# +1.3 % (limit +1.2 %).
IDENTICAL_REASON = "built identically to the baseline's commit: the anchor not measured"
# The verdicts of the finding's benchmarks beyond their limits, and how many it names.
_BEYOND = frozenset({Verdict.REGRESSION, Verdict.SLOWER, Verdict.IMPROVEMENT})
FINDING_NAMES = 3


def finding(report: Report) -> str:
    """The committed baseline against the same code on this runner (the anchor, or the run's
    benchmarks built identically): what the runner does to the numbers. Never a regression of
    the code, whatever it says."""
    ratio = report.geomean_ratio()
    if ratio is None:
        return "runner finding: the anchor and the baseline share no benchmark"
    mean, count = ratio
    counts = report.counts()
    slower = counts[Verdict.REGRESSION] + counts[Verdict.SLOWER]
    faster = counts[Verdict.IMPROVEMENT]
    change = (mean - 1.0) * (-1 if report.metric.higher_is_better else 1)
    size = f"{abs(change):.1%} {'slower' if change > 0 else 'faster'}"
    text = (
        f"runner finding: this runner times the baseline's own commit {size} than the "
        f"baseline's cards did (geometric mean of {count} benchmarks; {slower} slower and "
        f"{faster} faster beyond their limits)"
    )
    if slower == 0 and faster == 0:
        return text
    # Which ones, the largest first: host-bound transfers alone point at the host, short
    # kernels at launch latency, everything at the card or its clocks.
    moved = sorted(
        ((c.name, c.ratio) for c in report.comparisons if c.verdict in _BEYOND and c.ratio),
        key=lambda moved: abs(math.log(moved[1])),
        reverse=True,
    )
    named = ", ".join(f"{name} {ratio - 1:+.1%}" for name, ratio in moved[:FINDING_NAMES])
    more = f" and {len(moved) - FINDING_NAMES} more" if len(moved) > FINDING_NAMES else ""
    return (
        f"{text}: a runner unlike the baseline's (another card or host, a throttling GPU), "
        f"not a regression of the code ({named}{more})"
    )


def as_run_judged(report: Report) -> Report:
    """`report` (a result against its baseline) with what the result's `run` established
    against a baseline of the same commit read as run read it (results.RECORD_KEYS): the
    benchmarks built identically, measured, IDENTICAL, their changes the runner finding; the
    regressions its re-runs did not confirm SLOWER. As it was where the result records
    neither."""
    commit = report.baseline.context.get("kernelwatch_git_commit")
    return _not_confirmed(_built_identically(report, commit), commit)


def _built_identically(report: Report, commit: object) -> Report:
    names = recorded_for(report.contender.context, IDENTICAL_KEY, commit, report.contender.label)
    # (measured on both sides: a crash here, an ERROR, stays one whatever the code)
    rows = tuple(c for c in report.comparisons if c.name in names and c.ratio is not None)
    if not rows:
        return report
    said = finding(dataclasses.replace(report, comparisons=rows, fallback=frozenset()))
    note = (
        f"{len(rows)} benchmark(s) built identically to the baseline's commit "
        f"{str(commit)[:12]} (the run's {IDENTICAL_KEY}): IDENTICAL, as `run` judged them"
    )
    others = sum(c.ratio is not None and c.name not in names for c in report.comparisons)
    if others and anchoring(report.contender.context):
        note += (
            f"; the {others} other(s) `run` judged against the anchor it measured, here against "
            "this baseline: run's report is the verdict of record"
        )
    judged = report.with_identical(dict.fromkeys((c.name for c in rows), IDENTICAL_REASON))
    return dataclasses.replace(judged, notes=(note, said, *report.notes))


def _not_confirmed(report: Report, commit: object) -> Report:
    """The regressions `run` re-ran in fresh processes without confirming them, SLOWER as in
    its report (confirm_regressions); their re-runs are the files beside the result."""
    context, label = report.contender.context, report.contender.label
    names = recorded_for(context, UNCONFIRMED_KEY, commit, label)
    flagged = {c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION} & names
    if not flagged:
        return report
    reason = f"not confirmed by the run's re-runs (its {UNCONFIRMED_KEY})"
    rows = [
        (
            c._replace(
                verdict=worded_for(c.verdict, False),
                reason=f"{reason}; {c.reason}",
                confirmed=False,
                failed=False,
            )
            if c.name in flagged
            else c
        )
        for c in report.comparisons
    ]
    rows.sort(key=lambda c: (SEVERITY[c.verdict], c.confirmed is False))
    note = (
        f"{len(flagged)} regression(s) {reason}, its re-runs beside it "
        "(<result>.confirm-K.json): SLOWER, as `run` judged them"
    )
    return dataclasses.replace(report, comparisons=tuple(rows), notes=(*report.notes, note))


# rerun(k, names) -> re-run k (1-based) of `names`, as a result (confirm.RerunCrashed, with what
# finished, when a process of it failed).
Rerun = Callable[[int, Sequence[str]], ResultSet]


def confirm(
    report: Report, found: baselines.Against, judging: Judging, rerun: Rerun, times: int
) -> Report:
    """Every REGRESSION re-run up to `times` times against the same baseline (the rest left
    out, with its stored noise), its card held as of the kind the whole run told: confirmed
    only when it regresses every time."""
    kind = judged_against(report.baseline, report.contender, report.metric, []).unseen_kind

    def against(contender: ResultSet, flagged: Sequence[str]) -> Report:
        # The whole baseline, the rest left out, as the run was judged (find_baseline): cut
        # down to the flagged, a pooled baseline no longer tells its runs apart.
        base = baseline_side(found)
        outside = frozenset(base.index.keys() - set(flagged))
        return compare(
            base,
            contender,
            judging.metric,
            judging.settings,
            found.noise,
            outside=outside,
            unseen_kind=kind,
        )

    def again(k: int, flagged: Sequence[str]) -> Report:
        try:
            return against(rerun(k, flagged), flagged)
        except RerunCrashed as exc:  # what finished is compared all the same
            if exc.finished is not None:
                exc.report = against(exc.finished, flagged)
            raise

    return confirm_regressions(report, again, times)


# Confirming regressions: re-run only the flagged benchmarks in fresh processes, and fail only on
# those that regress every time. A one-off disturbance (another job on the GPU, a clock dip) then
# shows as SLOWER "not confirmed" instead of failing CI.


# rerun(k, names) -> the compare Report of re-run k (1-based) of `names` against the baseline;
# RerunCrashed when a process of it crashed, hung or lost the GPU.
Recompared = Callable[[int, Sequence[str]], Report]


class RerunCrashed(Exception):
    """A re-run in which benchmark processes failed: each lost benchmark's failure line
    (`crashed`), the exit status of the first failure (3; 4: the GPU went away), what
    finished (`finished`) and its comparison (`report`; None when nothing finished)."""

    def __init__(
        self,
        crashed: Mapping[str, str],
        exit_status: int,
        finished: ResultSet | None = None,
        report: Report | None = None,
    ) -> None:
        super().__init__(next(iter(crashed.values()), "a re-run failed"))
        self.crashed = dict(crashed)
        self.exit_status = exit_status
        self.finished = finished
        self.report = report


def confirm_regressions(report: Report, rerun: Recompared, times: int) -> Report:
    """The report with every REGRESSION marked confirmed (still failing) or not confirmed
    (SLOWER: shown, not failing). A re-run confirms it when it is slower past the limit again,
    failing or not (SLOWER: unverified). `times` re-runs at most; 0 leaves the report as it
    is."""
    flagged = [c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION]
    if times <= 0 or not flagged:
        return report
    standing = list(flagged)
    seen: dict[str, list[Comparison | None]] = {name: [] for name in flagged}
    crashed: dict[str, str] = {}  # name -> "re-run K crashed: LINE"
    runs = 0
    for k in range(1, times + 1):
        if not standing:
            break
        runs = k
        try:
            found = {c.name: c for c in rerun(k, standing).comparisons}
        except RerunCrashed as exc:
            # What crashed stays as the first run judged it; the rest goes on as usual.
            found = {c.name: c for c in exc.report.comparisons} if exc.report else {}
            for name in standing:
                if name in exc.crashed:
                    crashed[name] = f"re-run {k} crashed: {exc.crashed[name]}"
                    found.pop(name, None)
            standing = [n for n in standing if n not in crashed]
        for name in standing:
            seen[name].append(found.get(name))
        standing = [
            n for n in standing if found.get(n) is not None and found[n].verdict in SLOWDOWNS
        ]

    confirmed = set(standing)
    comparisons = []
    for c in report.comparisons:
        if c.verdict is not Verdict.REGRESSION:
            comparisons.append(c)
            continue
        history = ", ".join("absent" if r is None else r.change for r in seen[c.name])
        if c.name in crashed:
            before = f" after {history}" if history else ""
            reason = f"not confirmed either way: {crashed[c.name]}{before}; first run {c.reason}"
            comparisons.append(c._replace(reason=reason, crashed=True))
        elif c.name in confirmed:
            reason = f"confirmed by {len(seen[c.name])} re-run(s) ({history}); {c.reason}"
            comparisons.append(c._replace(reason=reason, confirmed=True))
        else:
            reason = f"not confirmed: re-run gave {history}; first run {c.reason}"
            comparisons.append(
                c._replace(
                    verdict=worded_for(c.verdict, False),
                    reason=reason,
                    confirmed=False,
                    failed=False,
                )
            )
    comparisons.sort(key=lambda c: (SEVERITY[c.verdict], c.confirmed is False))
    unconfirmed = len(flagged) - len(confirmed) - len(crashed)
    note = (
        f"{len(flagged)} regression(s) re-run up to {runs} time(s) in a fresh process: "
        f"{len(confirmed)} confirmed, {unconfirmed} not confirmed"
    )
    if unconfirmed:
        note += " (SLOWER: shown, not failing)"
    if crashed:
        note += f", {len(crashed)} whose re-run crashed (still failing, as the first run judged)"
    return dataclasses.replace(
        report, comparisons=tuple(comparisons), notes=tuple(report.notes) + (note,)
    )


# Where a compare Report goes: stdout in the chosen format, and the JUnit, Markdown and JSON files
# asked for; the exit status. `compare`, `run` and `ab` end here.


@dataclass(frozen=True)
class Outputs:
    format: str = "table"  # table, markdown or json, on stdout
    junit: str | None = None
    markdown: str | None = None
    json: str | None = None
    color: str = "auto"  # auto, always or never


def report_outputs(outputs: Outputs) -> list[Output]:
    """The report files asked for, for files.check_outputs before the work."""
    return [
        Output("--junit", outputs.junit),
        Output("--markdown", outputs.markdown),
        Output("--json", outputs.json),
    ]


def write_report(report: Report, outputs: Outputs, command: str = "compare") -> int:
    """Warnings on stderr, the JUnit and Markdown files if asked, the report on stdout; the
    exit status. Kernel changes are classified here when the caller explained nothing (free:
    it reads the results' kernel records)."""
    # The views and the kernel records' reading load here: `history changes` and `ab`'s
    # planning read their settings through this module and print no report.
    from kernelwatch import kernels, render

    if not report.explanations:
        report = kernels.classified(report)
    for warning in report.warnings:  # (they quote result files: an escape stays text)
        print(f"kernelwatch: warning: {render.visible(warning)}", file=sys.stderr)
    files = [(outputs.junit, "--junit", "render_junit")]
    files.append((outputs.markdown, "--markdown", "render_markdown"))
    files.append((outputs.json, "--json", "render_json"))
    for path, option, view in files:
        if path:  # (a format's code loads where its file is asked for: render/__init__.py)
            try:
                write_atomic(path, getattr(render, view)(report, command=command))
            except InputError as exc:
                raise InputError(f"{option} {exc}") from None
    if outputs.format == "json":
        text = render.render_json(report, command=command)
    elif outputs.format == "markdown":
        text = render.render_markdown(report, command=command)
    else:
        text = render.render_table(report, color=_use_color(outputs.color), command=command)
    write_output(text)
    return report.exit_status


def _use_color(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
