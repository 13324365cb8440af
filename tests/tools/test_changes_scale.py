"""The speed-ups of `history changes` (scripts/scale_bench.py measured them) change nothing it
finds: on a history of the real H200 suite runs, the series read per benchmark are the series
the old one-query loader read, and the flat series that detection now skips are those where it
found nothing."""

from __future__ import annotations

import copy
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernelwatch import changes, history, synthetic
from kernelwatch.history import failed_runs
from kernelwatch.results import resolve_metric
from kernelwatch.gbench import failed_row, read_json

pytest.importorskip("scipy", reason="scipy is not installed (the history extra)")

DATA = Path(__file__).resolve().parent.parent / "data" / "gpu"
CARDS = ("54f59374", "86422532", "a5b8dffa-second-run", "5e6217f4", "d716bf60-no-transfers")
STEPPED = re.compile(r"^(transpose/naive|matmul/)")


def old_load_series(db: sqlite3.Connection, metric_key: str) -> Iterator[changes.Series]:
    """load_series as it was before it read one key range per series: one query over the metric,
    sorted by GPU, benchmark, date, run and repetition."""
    names = {int(r[0]): r[1] for r in db.execute("SELECT id, name FROM benchmarks")}
    (metric_id,) = db.execute("SELECT id FROM metrics WHERE name = ?", (metric_key,)).fetchone()
    query = (
        "SELECT r.gpu_slug, s.benchmark_id, r.id, r.date, r.git_commit, r.ingested_at, s.value "
        "FROM samples s JOIN runs r ON r.id = s.run_id "
        "WHERE s.metric_id = ? AND r.gpu_slug IS NOT NULL "
        "ORDER BY r.gpu_slug, s.benchmark_id, r.date, r.id, s.repetition"
    )
    failed = failed_runs(db)
    key: tuple[str, int] | None = None
    runs: list[changes.SeriesRun] = []
    values: list[float] = []
    offsets: list[int] = []
    for slug, benchmark_id, run_id, date, commit, ingested_at, value in db.execute(
        query, (metric_id,)
    ):
        if (run_id, benchmark_id) in failed:
            continue
        if (slug, benchmark_id) != key:
            if key is not None:
                yield series_of(key[0], names[key[1]], runs, values, offsets)
            key, runs, values, offsets = (slug, benchmark_id), [], [], []
        if not runs or runs[-1].id != run_id:
            runs.append(changes.SeriesRun(int(run_id), date, commit, ingested_at))
            offsets.append(len(values))
        values.append(value)
    if key is not None:
        yield series_of(key[0], names[key[1]], runs, values, offsets)


def series_of(slug: str, name: str, runs: list[Any], values: list[float], offsets: list[int]):
    return changes.Series(
        slug,
        name,
        tuple(runs),
        np.asarray(values, dtype=np.float64),
        np.asarray([*offsets, len(values)], dtype=np.int64),
    )


@pytest.fixture(scope="module")
def real_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The five real suite runs of five H200 cards as nights 1-5 (one without the transfers),
    then three more nights of the first card's run with the naive transposes and the matrix
    multiplies 15 % slower and, in one night, one benchmark failed (compare's ERROR)."""
    folder = tmp_path_factory.mktemp("real-history")
    db = folder / "history.sqlite"
    base = read_json(DATA / f"h200-suite-card-{CARDS[0]}.json.gz")
    nights: list[dict[str, Any]] = [
        read_json(DATA / f"h200-suite-card-{card}.json.gz") for card in CARDS
    ]
    for k in range(3):
        night = copy.deepcopy(base)
        for row in night["benchmarks"]:
            if STEPPED.search(row["run_name"]):
                row["real_time"] *= 1.15 + 0.001 * k
            else:
                row["real_time"] *= 1.0 + 0.002 * k
        if k == 1:
            failing = night["benchmarks"][0]["run_name"]
            night["benchmarks"] = [r for r in night["benchmarks"] if r["run_name"] != failing] + [
                failed_row(failing, "launch failed")
            ]
        nights.append(night)
    for k, night in enumerate(nights):
        night["context"]["date"] = f"2026-11-{k + 1:02d}T03:00:00+00:00"
        path = synthetic.write(folder / f"night{k}.json", night)
        history.ingest(path, db)
    return db


@pytest.mark.parametrize("metric", ["real_time", "bytes_per_second", "sm_clock_mhz"])
def test_the_series_are_those_the_one_query_loader_read(real_history: Path, metric: str) -> None:
    with history.database(real_history) as db:
        new = list(changes.load_series(db, metric))
        old = list(old_load_series(db, metric))
    assert [(s.gpu_slug, s.benchmark) for s in new] == [(s.gpu_slug, s.benchmark) for s in old]
    assert len(new) > 250  # (not every benchmark has every counter)
    for a, b in zip(new, old):
        assert a.runs == b.runs
        assert a.values.dtype == b.values.dtype and np.array_equal(a.values, b.values)
        assert a.offsets.dtype == b.offsets.dtype and np.array_equal(a.offsets, b.offsets)
    assert any(len(s.runs) == 7 for s in new)  # the failed night is no point of its series


@pytest.mark.parametrize("threshold", [0.0, 0.01, 0.05, 0.1])
def test_a_series_too_flat_to_change_is_one_where_nothing_was_found(
    real_history: Path, threshold: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    metric = resolve_metric("time")
    analysis = changes.otava_analysis()
    with history.database(real_history) as db:
        every = list(changes.load_series(db, metric.key))
    flat = [s for s in every if changes.too_flat(s, threshold)]
    if threshold == 0.0:
        assert not flat
    else:
        assert 0 < len(flat) < len(every)
    monkeypatch.setattr(changes, "too_flat", lambda series, threshold: False)
    for series in flat:
        assert changes.detect(series, metric, threshold, 0.05, analysis) == []


def test_the_changes_found_are_the_same_with_and_without_skipping_flat_series(
    real_history: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with history.database(real_history) as db:
        quick = changes.find_changes(db)
        monkeypatch.setattr(changes, "too_flat", lambda series, threshold: False)
        slow = changes.find_changes(db)
    assert quick == slow
    stepped = [c for c in quick if STEPPED.search(c.benchmark)]
    assert len(stepped) >= 10 and {c.index for c in stepped} == {5}  # found, at night 6
