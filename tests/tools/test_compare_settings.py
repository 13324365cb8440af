"""Where compare's settings came from: the report's header (table and Markdown, which `run`,
`ab` and the PR comment print too) and the JSON's `settings.sources` say, for each, whether
the command line, the suite's config or the default set it (docs/compare.md, "Config file")."""

from __future__ import annotations

import json
from pathlib import Path

from kernelwatch.results import resolve_metric
from kernelwatch.verdict import Judging, settings, suite_config

SUITE = {f"BM_k/{n}": [100.0 + n + 0.01 * k for k in range(5)] for n in range(3)}
MEASURED = "default: docs/measurement.md"  # where the defaults' reasons are


def shown(run_cli, *argv: object) -> tuple[str, str, dict]:
    """The table's first line, the Markdown's settings line and the JSON's settings."""
    table = run_cli("compare", *argv)
    assert table.status == 0, table.err
    markdown = run_cli("compare", *argv, "--format", "markdown").out.splitlines()[2]
    document = json.loads(run_cli("compare", *argv, "--format", "json").out)
    return table.out.splitlines()[0], markdown, document["settings"]


def test_the_header_says_where_each_setting_came_from(
    write_json, tmp_path: Path, run_cli, monkeypatch
) -> None:
    """The header said `threshold 1.0%` whether the default, the suite's kernelwatch.toml or
    --threshold set it, and nothing of the config's per-benchmark rules that override it."""
    files = (write_json("a.json", SUITE), write_json("b.json", SUITE))
    project = tmp_path / "project"
    (project / "baselines").mkdir(parents=True)
    monkeypatch.chdir(project)  # the project: its suite config, once written

    table, markdown, found = shown(run_cli, *files)
    for line in (table, markdown):
        assert f"alpha 0.05 (Benjamini-Hochberg; {MEASURED})" in line, line
        assert f"threshold 1.0% ({MEASURED})" in line, line
    assert found["sources"] == {
        "threshold": MEASURED,
        "alpha": MEASURED,
        "min_repetitions": "default",
        "noise_multiplier": MEASURED,
        "rules": "",
    }

    (project / "baselines" / "kernelwatch.toml").write_text(
        '[compare]\nthreshold = "3%"\nalpha = 0.01\n'
        '[[compare.thresholds]]\nmatch = "^BM_k/1$"\nthreshold = "10%"\n'
    )
    rule = "1 per-benchmark rule(s) of kernelwatch.toml override it where they match"
    table, markdown, found = shown(run_cli, *files)
    for line in (table, markdown):
        assert "alpha 0.01 (Benjamini-Hochberg; kernelwatch.toml)" in line, line
        assert f"threshold 3.0% (kernelwatch.toml; {rule})" in line, line
    assert found["sources"]["threshold"] == found["sources"]["alpha"] == "kernelwatch.toml"
    assert found["sources"]["min_repetitions"] == "default"
    assert found["sources"]["rules"] == "kernelwatch.toml"

    table, markdown, found = shown(run_cli, *files, "--threshold", "2%", "--min-repetitions", "4")
    for line in (table, markdown):
        assert f"threshold 2.0% (--threshold; {rule})" in line, line
    assert found["sources"]["threshold"] == "--threshold"
    assert found["sources"]["min_repetitions"] == "--min-repetitions"
    assert found["sources"]["alpha"] == "kernelwatch.toml"


def test_the_sources_travel_with_the_settings(tmp_path: Path) -> None:
    """`bisect` hands its steps the settings as JSON (Judging.to_json): each step's report says
    where they came from as the command did."""
    config = tmp_path / "k.toml"
    config.write_text("[compare]\nnoise_multiplier = 3\n")
    judging = Judging(
        resolve_metric("time", None), settings(suite_config(config), threshold="5%", alpha=0.01)
    )
    sources = judging.settings.sources
    assert (sources.threshold, sources.alpha, sources.noise_multiplier) == (
        "--threshold",
        "--alpha",
        "k.toml",
    )
    document = json.loads(json.dumps(judging.to_json()))
    assert Judging.from_json(document) == judging
    del document["settings"]["sources"]  # a bisection started before they were kept
    assert Judging.from_json(document).settings.sources.threshold == "not recorded"
