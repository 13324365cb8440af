"""Views of a selftest Analysis: a plain-text table, Markdown, JSON. Deciding is analysis.py's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelwatch.files import json_text
from kernelwatch.selftest.analysis import Analysis, Detection, Example, Rate, TargetCheck
from kernelwatch.selftest.runs import level_text


def _pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def _rate(rate: Rate, digits: int = 1) -> str:
    if not rate.total:
        return "-"
    return f"{_pct(rate.rate, digits)} ({rate.hits}/{rate.total})"


def _num(value: float | None, fmt: str = ".0f") -> str:
    return "-" if value is None else format(value, fmt)


def target_value(t: TargetCheck) -> str:
    return "not measured" if t.value is None else _pct(t.value)


def limit_text(t: TargetCheck) -> str:
    return f"{'<=' if t.at_most else '>='} {_pct(t.limit, 1 if t.limit < 0.1 else 0)}"


def _status(t: TargetCheck) -> str:
    return "-" if not t.measured else "PASS" if t.met else "MISS"


def _settings_line(a: Analysis) -> str:
    s = a.settings
    rules = f", {len(s.rules)} threshold rule(s)" if s.rules else ""
    unmeasured = " (the default, not derived from a measurement: docs/measurement.md)"
    return (
        f"threshold {s.threshold * 100:g}%{rules}, noise floor {s.noise_multiplier:g} x "
        f"{limits_text(a)}, alpha {s.alpha:g}; benchmarks of {a.min_time_us:g} us or more are "
        "'long'" + (unmeasured if "min_time_us" in a.unmeasured_defaults else "")
    )


def limits_text(a: Analysis) -> str:
    """Where the noise floors came from: the spread at the level each comparison crossed,
    measured or the prior (Analysis.limits)."""
    if not a.limits:
        return "noise"
    parts = []
    for level, rate in a.limits.items():
        prior = rate.total - rate.hits
        part = f"{level}: measured for {rate.hits} of {rate.total} comparisons"
        parts.append(part + (f", the {level}-level prior for {prior}" if prior else ""))
    return "the spread at the level the runs cross (" + "; ".join(parts) + ")"


def _heading(a: Analysis) -> str:
    levels = ", ".join(level_text(d.level, percent=True) for d in a.detections) or "none"
    trials = max((d.trials for d in a.detections), default=0)
    return (
        f"kernelwatch selftest: {a.runs} run(s): {a.aa_runs} A/A ({a.aa_pairs} pairs), "
        f"{trials} trial(s) of slowdowns {levels}"
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    out = [indent + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row in rows:
        out.append(indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return out


# (title, header, rows) of one table.
_Section = tuple[str, list[str], list[list[str]]]


def _sections(a: Analysis) -> list[_Section]:
    """(title, header, rows) of every table, shared by the text and Markdown views; a table
    with nothing to show is left out."""
    sections = [
        _targets_section(a),
        _false_alarms_section(a),
        _detection_section(a),
        _family_detection_section(a),
        _measurement_section(a),
        _wall_time_section(a),
    ]
    return [s for s in sections if s is not None]


def _targets_section(a: Analysis) -> _Section:
    return (
        "targets",
        ["", "target", "measured", "", "needed"],
        [[_status(t), t.name, target_value(t), t.detail, limit_text(t)] for t in a.targets],
    )


def _false_alarms_section(a: Analysis) -> _Section | None:
    if not a.aa_pairs:
        return None
    rows = [
        ["all", _rate(a.false_alarms, 2)],
        [f">= {a.min_time_us:g} us", _rate(a.false_alarms_long, 2)],
        ["UNSURE (not alarms)", _rate(a.unsure, 2)],
    ]
    rows += [[family, _rate(r, 2)] for family, r in a.false_alarms_by_family.items()]
    return (f"A/A false alarms ({a.aa_pairs} pairs of runs)", ["benchmarks", "flagged"], rows)


def _detection_section(a: Analysis) -> _Section | None:
    if not a.detections:
        return None
    return (
        "injected slowdowns: REGRESSION verdicts",
        ["slower by", "trials", "all", f">= {a.min_time_us:g} us", "left out (rule above)"],
        [
            [
                level_text(d.level, percent=True),
                str(d.trials),
                _rate(d.all),
                _rate(d.long),
                str(d.excluded),
            ]
            for d in a.detections
        ],
    )


def _family_detection_section(a: Analysis) -> _Section | None:
    families = sorted({f for d in a.detections for f in d.by_family})
    if not families:
        return None
    return (
        f"detection per family (>= {a.min_time_us:g} us)",
        ["family", *(level_text(d.level, percent=True) for d in a.detections)],
        [[f, *(_rate(d.by_family.get(f, Rate())) for d in a.detections)] for f in families],
    )


def _measurement_section(a: Analysis) -> _Section | None:
    if not a.figures:
        return None
    return (
        "measurement per family" + (" (A/A runs)" if a.aa_runs else " (control runs)"),
        [
            "family",
            "benchmarks",
            "median time",
            "median CV",
            "noise",
            "samples",
            "sample CV",
            "timed/rep",
            "throttled",
            "SM clock",
            "max temp",
        ],
        [
            [
                f.family,
                str(f.benchmarks),
                _num(f.median_time_us, ".1f") + " us",
                _pct(f.median_cv, 3),
                _pct(f.median_noise, 3),
                _num(f.median_samples),
                _pct(f.median_sample_cv, 2),
                _num(f.median_timed_ms, ".1f") + " ms",
                _pct(f.throttled_fraction, 2),
                _num(f.median_clock_mhz) + " MHz",
                _num(f.max_temperature_c) + " C",
            ]
            for f in a.figures
        ],
    )


def _wall_time_section(a: Analysis) -> _Section | None:
    if not a.times:
        return None
    return (
        "wall time",
        ["run", "seconds", "benchmarks", "processes", "per benchmark"],
        [
            [
                t.file,
                _num(t.seconds, ".1f"),
                str(t.benchmarks),
                str(t.processes),
                _num(t.per_benchmark, ".2f") + " s",
            ]
            for t in a.times
        ],
    )


def _examples(a: Analysis) -> list[tuple[str, Sequence[Example]]]:
    found: list[tuple[str, Sequence[Example]]] = []
    if a.false_alarm_examples:
        found.append(("false alarms (first)", a.false_alarm_examples))
    for d in a.detections:
        if d.misses:
            found.append(
                (f"missed {level_text(d.level, percent=True)} slowdowns, long (first)", d.misses)
            )
    return found


def _summary(a: Analysis) -> str:
    # Runs still to make: "all targets hold" read as a pass where the command exits 1.
    head = f"INCOMPLETE: {a.missing} run(s) still to make (--resume); " if a.missing else ""
    missed = a.missed
    if missed:
        return (
            head
            + "MISSED: "
            + "; ".join(f"{t.name} {target_value(t)} ({limit_text(t)})" for t in missed)
        )
    unmeasured = [t.name for t in a.targets if not t.measured]
    tail = f" (not measured: {', '.join(unmeasured)})" if unmeasured else ""
    return (
        head + ("the runs made so far miss no target" if a.missing else "all targets hold") + tail
    )


def render_text(a: Analysis) -> str:
    lines = [_heading(a), _settings_line(a), ""]
    for title, header, rows in _sections(a):
        lines.append(title)
        lines += _table(header, rows)
        lines.append("")
    for title, examples in _examples(a):
        lines.append(title)
        for e in examples:
            median = "" if e.median_us is None else f" ({e.median_us:.1f} us)"
            lines.append(f"  {e.verdict:<11} {e.name}{median}: {e.reason}  [{e.where}]")
        lines.append("")
    for note in a.notes:
        lines.append(f"note: {note}")
    lines.append(_summary(a))
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(a: Analysis) -> str:
    lines = [
        f"### {_md(_heading(a))}",
        "",
        _md(_settings_line(a)),
        "",
        f"**{_md(_summary(a))}**",
        "",
    ]
    for title, header, rows in _sections(a):
        lines.append(f"#### {_md(title)}")
        lines.append("")
        lines.append("| " + " | ".join(_md(h) or " " for h in header) + " |")
        lines.append("|" + "---|" * len(header))
        for row in rows:
            lines.append("| " + " | ".join(_md(c) for c in row) + " |")
        lines.append("")
    for title, examples in _examples(a):
        lines.append(f"#### {_md(title)}")
        lines.append("")
        for e in examples:
            lines.append(f"- {e.verdict} `{e.name}`: {_md(e.reason)} ({_md(e.where)})")
        lines.append("")
    for note in a.notes:
        lines.append(f"- note: {_md(note)}")
    return "\n".join(lines).rstrip() + "\n"


def _rate_json(rate: Rate) -> dict[str, Any]:
    return {"hits": rate.hits, "total": rate.total, "rate": rate.rate}


def _example_json(e: Example) -> dict[str, Any]:
    return {
        "where": e.where,
        "name": e.name,
        "verdict": e.verdict,
        "reason": e.reason,
        "median_us": e.median_us,
    }


def _detection_json(d: Detection) -> dict[str, Any]:
    return {
        "level": d.level,
        "trials": d.trials,
        "all": _rate_json(d.all),
        "long": _rate_json(d.long),
        "excluded": d.excluded,
        "by_family": {f: _rate_json(r) for f, r in d.by_family.items()},
        "misses": [_example_json(e) for e in d.misses],
    }


def report_json(a: Analysis) -> dict[str, Any]:
    s = a.settings
    return {
        "tool": "kernelwatch selftest",
        "settings": {
            "threshold": s.threshold,
            "noise_multiplier": s.noise_multiplier,
            "alpha": s.alpha,
            "min_repetitions": s.min_repetitions,
            "threshold_rules": [
                {"match": r.pattern.pattern, "threshold": r.threshold} for r in s.rules
            ],
            "min_time_us": a.min_time_us,
            "unmeasured_defaults": a.unmeasured_defaults,  # at a default no measurement derived
            "limits": {
                level: {"measured": rate.hits, "prior": rate.total - rate.hits}
                for level, rate in a.limits.items()
            },
        },
        "targets": [
            {
                "name": t.name,
                "value": t.value,
                "limit": t.limit,
                "at_most": t.at_most,
                "measured": t.measured,
                "met": t.met,
                "detail": t.detail,
            }
            for t in a.targets
        ],
        "passed": a.passed,
        "exit_status": a.exit_status,
        "runs": a.runs,
        "missing_runs": a.missing,
        "aa": {
            "runs": a.aa_runs,
            "pairs": a.aa_pairs,
            "false_alarms": _rate_json(a.false_alarms),
            "false_alarms_long": _rate_json(a.false_alarms_long),
            "unsure": _rate_json(a.unsure),
            "by_family": {f: _rate_json(r) for f, r in a.false_alarms_by_family.items()},
            "examples": [_example_json(e) for e in a.false_alarm_examples],
        },
        "detection": [_detection_json(d) for d in a.detections],
        "median_cv": a.median_cv,
        "median_cv_long": a.median_cv_long,
        "families": [
            {
                "family": f.family,
                "benchmarks": f.benchmarks,
                "median_time_us": f.median_time_us,
                "median_cv": f.median_cv,
                "median_noise": f.median_noise,
                "median_samples": f.median_samples,
                "median_sample_cv": f.median_sample_cv,
                "throttled_fraction": f.throttled_fraction,
                "median_timed_ms": f.median_timed_ms,
                "median_clock_mhz": f.median_clock_mhz,
                "max_temperature_c": f.max_temperature_c,
            }
            for f in a.figures
        ],
        "wall_time": [
            {
                "file": t.file,
                "role": t.role,
                "seconds": t.seconds,
                "benchmarks": t.benchmarks,
                "processes": t.processes,
                "per_benchmark_seconds": t.per_benchmark,
            }
            for t in a.times
        ],
        "notes": list(a.notes),
    }


def render_json(a: Analysis) -> str:
    return json_text(report_json(a))
