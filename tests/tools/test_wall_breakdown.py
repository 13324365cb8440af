"""scripts/gpu/wall_breakdown.py: the harness's timeline marks turned into seconds per phase."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from conftest import REPO

_spec = importlib.util.spec_from_file_location(
    "wall_breakdown", REPO / "scripts" / "gpu" / "wall_breakdown.py"
)
assert _spec and _spec.loader
wall_breakdown = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wall_breakdown)


def _process(folder: Path, pid: int, marks: list[dict[str, object]]) -> None:
    text = "".join(json.dumps({"pid": pid, **m}) + "\n" for m in marks)
    (folder / f"{pid}.jsonl").write_text(text)


def _repetition(t: float, name: str) -> list[dict[str, object]]:
    """One repetition from t: 1 s set-up, 2 s check, 0.5 s warm-up, 4 s sampling of which 3 s
    the batches' GPU time and 2 s the samples', 0.25 s tear-down."""
    return [
        {"t": t, "phase": "run_start", "instance": name},
        {"t": t + 1, "phase": "measure_start", "instance": name},
        {"t": t + 3, "phase": "verified", "instance": name},
        {"t": t + 3.5, "phase": "warmed", "instance": name},
        {"t": t + 7.5, "phase": "sampled", "instance": name, "sample_s": 2, "batch_gpu_s": 3},
        {"t": t + 7.75, "phase": "run_end", "instance": name},
    ]


def test_every_second_of_a_process_lands_in_one_phase(tmp_path: Path) -> None:
    marks = [
        {"t": 100.0, "phase": "main", "args": "--benchmark_repetitions=2", "process_age_s": 0.5},
        {"t": 100.25, "phase": "context"},
        {"t": 100.5, "phase": "fingerprints"},
        {"t": 101.0, "phase": "copy_ceiling"},
        *_repetition(102.0, "fam/a"),
        *_repetition(110.0, "fam/a"),
        {"t": 118.0, "phase": "benchmarks_done"},
        {"t": 118.5, "phase": "end"},
    ]
    _process(tmp_path, 1, marks)
    _process(tmp_path, 2, [{"t": 0.0, "phase": "main", "args": "--benchmark_list_tests"}])
    table = wall_breakdown.collect(tmp_path)
    row = table[("fam", "first")]
    expected = {
        "start": 0.5, "context": 0.25, "fingerprint": 0.25, "ceiling": 0.5, "setup": 2,
        "check": 4, "warmup": 1, "samples": 4, "flush_hold": 2, "host_gaps": 2, "teardown": 0.5,
        "gbench": 1.0 + 0.25 + 0.25, "shutdown": 0.5,
    }  # fmt: skip
    assert {p: row[p] for p in wall_breakdown.PHASES} == expected
    # exec to main, then main to the end: the phases add up to the process's whole life
    assert sum(expected.values()) == 0.5 + 18.5
    assert row["processes"] == 1 and row["repetitions"] == 2
    assert ("(listing)", "first") in table


def test_re_runs_are_counted_apart(tmp_path: Path) -> None:
    main = {"t": 0.0, "phase": "main", "args": "--benchmark_filter=^fam/a$", "process_age_s": 0}
    _process(tmp_path, 3, [main, *_repetition(1.0, "fam/a")])
    assert list(wall_breakdown.collect(tmp_path)) == [("fam", "re-run")]
