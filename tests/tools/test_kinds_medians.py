"""kinds._medians, one sort for all benchmarks (scripts/scale_bench.py: it was 3 s of a 6.5 s
compare of 3,560 benchmarks), gives np.median's values, name by name, on the real baselines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernelwatch import kinds
from kernelwatch.gbench import read_json
from kernelwatch.loading import from_documents
from kernelwatch.results import ResultSet

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    ROOT / "baselines/nvidia-h200-sm90/result.json.gz",
    ROOT / "baselines/nvidia-h100-80gb-hbm3-sm90/result.json.gz",
    ROOT / "tests/data/gpu/h200-x2-card-6a541b71-both-gpus.json.gz",
]


def one_by_one(result: ResultSet, names: list[str], processes: np.ndarray | None) -> np.ndarray:
    """_medians as it was: np.median of each name's finite values in `processes`."""
    column = result.columns["real_time"]
    out = np.full(len(names), np.nan)
    for i, name in enumerate(names):
        k = result.index.get(name)
        if k is None:
            continue
        rows = slice(result.starts[k], result.starts[k] + result.counts[k])
        values = column[rows]
        if processes is not None:
            values = values[np.isin(result.processes[rows], processes)]
        values = values[np.isfinite(values)]
        if len(values):
            out[i] = float(np.median(values))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name + "/" + p.name)
def test_the_medians_are_np_medians_name_by_name(path: Path) -> None:
    result = from_documents(str(path), [read_json(path)])
    processes = np.unique(result.processes)
    names = [*reversed(result.names), "not/in/the/result"]
    column = result.columns["real_time"].copy()
    for chosen in (None, processes[:1], processes[1:3], processes[::2], np.array([10**6])):
        assert np.array_equal(
            kinds._medians(result, names, chosen), one_by_one(result, names, chosen), equal_nan=True
        )
    # odd and even counts, and values that are not finite, are left out as np.median's caller did
    column[::7] = np.nan
    odd = from_documents(str(path), [read_json(path)])
    odd.columns["real_time"][:] = column
    assert np.array_equal(
        kinds._medians(odd, names, processes[:3]),
        one_by_one(odd, names, processes[:3]),
        equal_nan=True,
    )
