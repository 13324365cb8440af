"""The JSON view of a compare Report (schema in docs/compare.md)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from kernelwatch import __version__
from kernelwatch.compare import Report, SideSummary
from kernelwatch.files import strict_json
from kernelwatch.results import ResultSet, gpu_model

# Bump on any change to the JSON output that could break a reader (renames, removals, meaning).
# 2: REGRESSION is only a failing slowdown; one that does not fail is SLOWER (issue #29).
SCHEMA_VERSION = 2


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _side_json(side: SideSummary | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {
        "n": side.n,
        "median": _number(side.median),
        "robust_cv": _number(side.robust_cv),
        "processes": side.processes,
        "from_aggregates": side.from_aggregates,
    }


def report_json(report: Report, command: str = "compare") -> dict[str, Any]:
    """The JSON document as a dict (documented in docs/compare.md, `schema_version` 2)."""
    settings = report.settings
    geomean = report.geomean_ratio()
    suite = report.suite

    def side(result: ResultSet) -> dict[str, Any]:
        scalars = {
            k: v
            for k, v in result.context.items()
            if isinstance(v, (str, int)) or (isinstance(v, float) and math.isfinite(v))
        }
        return {
            "label": result.label,
            "paths": [str(p) for p in result.paths],
            "gpu": gpu_model(result.context),
            "context": scalars,
        }

    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kernelwatch", "version": __version__, "command": command},
        "metric": {
            "name": report.metric.key,
            "higher_is_better": report.metric.higher_is_better,
            "unit": "ns" if report.metric.is_time else None,
        },
        "settings": {
            "alpha": settings.alpha,
            "threshold": settings.threshold,
            "min_repetitions": settings.min_repetitions,
            "noise_multiplier": settings.noise_multiplier,
            "confidence": settings.confidence,
            "ci_method": "hodges-lehmann",
            "test": "mann-whitney-u",
            "correction": "benjamini-hochberg",
            "allow_missing": settings.allow_missing,
            "allow_errors": settings.allow_errors,
            "threshold_rules": [
                {"match": r.pattern.pattern, "threshold": r.threshold} for r in settings.rules
            ],
            "sources": dataclasses.asdict(settings.sources),  # where each came from, in words
        },
        "baseline": side(report.baseline),
        "contender": side(report.contender),
        "summary": {
            "counts": {v.value: n for v, n in report.counts().items()},
            "geomean_ratio": None if geomean is None else geomean[0],
            "geomean_count": 0 if geomean is None else geomean[1],
            "geomean_left_out": report.geomean_left_out,
            "suite": (
                None
                if suite is None
                else {
                    "verdict": suite.verdict.value,
                    "geomean_ratio": suite.ratio,
                    "ci_low": suite.ci_low,
                    "ci_high": suite.ci_high,
                    "limit": suite.limit,
                    "count": suite.benchmarks,
                    "failed": suite.regression,
                }
            ),
            "failed": report.failed,
            "exit_status": report.exit_status,
        },
        "warnings": list(report.warnings),
        "notes": list(report.notes),
        "benchmarks": [
            {
                "name": c.name,
                **({"label": c.label} if c.label else {}),
                "verdict": c.verdict.value,
                "reason": c.reason,
                "failed": c.failed,
                "crashed": c.crashed,
                **({"confirmed": c.confirmed} if command == "run" else {}),
                "ratio": _number(c.ratio),
                "change": None if c.ratio is None else c.ratio - 1.0,
                "ci_low": _number(c.ci_low),
                "ci_high": _number(c.ci_high),
                "p_value": _number(c.p_value),
                "q_value": _number(c.q_value),
                "threshold": _number(c.threshold),
                "noise_floor": _number(c.noise_floor),
                "limit": _number(c.limit),
                "level": c.level,
                "level_measured": c.level_measured,
                "sensitivity": _number(c.sensitivity),
                "host_bound": c.host_bound,
                "from_summaries": c.from_summaries,
                "baseline": _side_json(c.baseline),
                "contender": _side_json(c.contender),
                **(
                    {"explanation": report.explanations[c.name].as_json()}
                    if c.name in report.explanations
                    else {}
                ),
            }
            for c in report.comparisons
        ],
    }


def render_json(report: Report, command: str = "compare") -> str:
    """The JSON document: indented, except that each benchmark is one line (json's indenting
    encoder is pure Python and takes most of a second for 10,000 benchmarks)."""
    document = report_json(report, command)
    benchmarks = document.pop("benchmarks")
    head = strict_json(document)
    rows = ",\n".join("    " + strict_json(b, indent=None) for b in benchmarks)
    body = f'"benchmarks": [\n{rows}\n  ]' if benchmarks else '"benchmarks": []'
    return head[:-2] + ",\n  " + body + "\n}\n"
