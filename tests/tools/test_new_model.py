"""A GPU model kernelwatch has no baseline for, as its team meets it: real H200 runs made into
an A100's (othermodel.py), then the commands baselines/README.md gives for a new GPU: no
baseline yet, `baseline update` from one card, then from several cards and hosts, a new card
compared with it; and models whose names have spaces and odd characters."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from conftest import GPU_DATA
from othermodel import A100, A100_MIG, RTX_4090, card_uuid, write_as_model

CONFIG = Path(__file__).resolve().parents[2] / "baselines" / "kernelwatch.toml"
SLUG = "nvidia-a100-sxm4-80gb-sm80"
# Real one-GPU H200 runs of the whole suite, each becoming another A100 card.
RUNS = (
    "h200-suite-card-54f59374.json.gz",
    "h200-suite-card-86422532.json.gz",
    "h200-suite-card-a5b8dffa-second-run.json.gz",
)


@pytest.fixture
def baselines(tmp_path: Path) -> Path:
    folder = tmp_path / "baselines"
    folder.mkdir()
    return folder


def a100(tmp_path: Path, n: int, source: str = RUNS[0], **kwargs: object) -> Path:
    return write_as_model(
        GPU_DATA / source, tmp_path / f"a100-card-{n}.json", A100, card_uuid(n), **kwargs
    )


def test_the_first_run_of_a_new_model_is_offered_as_its_baseline(
    tmp_path: Path, baselines: Path, run_cli
) -> None:
    # The hint said "kernelwatch run --no-compare --out RUN.json && kernelwatch baseline update
    # RUN.json": measure again, into the very file `report` was given (or `run` just wrote).
    pytest.importorskip("matplotlib", reason="report needs matplotlib")
    run = a100(tmp_path, 1)
    page = tmp_path / "report.html"
    done = run_cli("report", run, "-o", page, "--baselines", baselines)
    assert done.status == 0, done.err
    assert "no baseline" in done.out
    text = html.unescape(page.read_text())
    assert f"no baseline for this GPU (NVIDIA A100-SXM4-80GB (sm 8.0), {SLUG})" in text
    assert f"kernelwatch baseline update {run}" in text
    assert "--no-compare" not in text
    # ... and the hint works as written
    done = run_cli("baseline", "update", run, "--baselines", baselines)
    assert done.status == 0, done.err
    assert (baselines / SLUG / "result.json").is_file()
    done = run_cli("report", run, "-o", page, "--baselines", baselines)
    assert done.status == 0 and f"against {baselines / SLUG / 'result.json'}" in done.out
    assert "REGRESSION" not in done.out, done.out


def test_a_one_card_baseline_says_the_host_level_is_the_prior(
    tmp_path: Path, baselines: Path, run_cli
) -> None:
    # A new card on a host configured unlike the baseline's one host: every limit is the host
    # prior, which the level note called "measured for every benchmark" (and the Catches
    # column showed no "(prior)"): np.fmax with the prior had made the unmeasured level finite.
    done = run_cli("baseline", "update", a100(tmp_path, 1), "--baselines", baselines)
    assert done.status == 0, done.err
    new = a100(tmp_path, 9, "h200-suite-rep10.json.gz")
    base = baselines / SLUG / "result.json"
    done = run_cli("compare", base, new, "--config", CONFIG, "--format", "json")
    report = json.loads(done.out)
    notes = report["notes"]
    level = next(n for n in notes if n.startswith("level: host"))
    assert "never measured" in level and "host-level prior 2.00%" in level, level
    assert "no runs of this model: the widest prior" in level, level  # (an A100: levels.PRIORS)
    assert any("configured unlike every host" in n for n in notes), notes
    compared = [b for b in report["benchmarks"] if b["level"] is not None]
    assert compared and not any(b["level_measured"] for b in compared)
    done = run_cli("compare", base, new, "--config", CONFIG, "--format", "markdown")
    assert "(prior)" in done.out


def test_a_pool_of_cards_and_hosts_measures_every_level(
    tmp_path: Path, baselines: Path, run_cli
) -> None:
    # three one-GPU hosts, and a host with two cards: card, kind and host levels measured
    runs = [a100(tmp_path, n + 1, source) for n, source in enumerate(RUNS)]
    pair = (card_uuid(5), card_uuid(6))
    runs += [
        a100(tmp_path, 5, RUNS[1], host_cards=pair),
        a100(tmp_path, 6, RUNS[2], host_cards=pair),
    ]
    done = run_cli("baseline", "update", *runs, "--baselines", baselines)
    assert done.status == 0, done.err
    shown = run_cli("baseline", "show", SLUG, "--baselines", baselines).out
    assert "card: measured (5 cards)" in shown and "host: measured (4 hosts)" in shown, shown
    new = a100(tmp_path, 9, "h200-suite-rep10.json.gz")
    done = run_cli(
        "compare", baselines / SLUG / "result.json", new, "--config", CONFIG, "--format", "json"
    )
    notes = json.loads(done.out)["notes"]
    level = next(n for n in notes if n.startswith("level: "))
    assert "measured for every benchmark" in level and "6 card(s) of 5 host(s)" not in level


@pytest.mark.parametrize(
    "model, slug",
    [
        (RTX_4090, "nvidia-geforce-rtx-4090-sm89"),
        (A100_MIG, "nvidia-a100-sxm4-40gb-mig-1g-5gb-sm80"),
    ],
)
def test_odd_model_names_get_a_folder_of_their_own(
    tmp_path: Path, baselines: Path, run_cli, model, slug
) -> None:
    run = write_as_model(GPU_DATA / RUNS[0], tmp_path / "run.json", model, card_uuid(20))
    done = run_cli("baseline", "update", run, "--baselines", baselines)
    assert done.status == 0, done.err
    assert [p.name for p in baselines.iterdir()] == [slug]
    shown = run_cli("baseline", "show", run, "--baselines", baselines).out
    assert f"GPU           {model.name} (sm {model.capability})" in shown
    # another model's run is never judged by it
    other = a100(tmp_path, 1)
    done = run_cli("baseline", "update", other, run, "--baselines", baselines)
    assert done.status == 2 and "a baseline is one GPU model" in done.err


def test_report_of_a_folder_of_two_models_asks_for_one_file(
    tmp_path: Path, baselines: Path, run_cli
) -> None:
    # report said "ingest one result file at a time", history ingest's words
    folder = tmp_path / "mixed"
    folder.mkdir()
    a100(folder, 1)
    write_as_model(GPU_DATA / RUNS[0], folder / "rtx.json", RTX_4090, card_uuid(20))
    done = run_cli("report", folder, "-o", tmp_path / "r.html", "--baselines", baselines)
    assert done.status == 2 and done.err == (
        f"kernelwatch: error: {folder}: is a directory; give one result file\n"
    )
    done = run_cli("compare", folder, a100(tmp_path, 2), "--format", "json")
    assert done.status == 2 and "one side must be one GPU model" in done.err
