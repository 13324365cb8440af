"""names.py: the grammar of benchmark names."""

from __future__ import annotations

import pytest

from kernelwatch import names

NAME = "transpose/best/float/rows:2048/cols:2048/manual_time"


def test_parts_of_a_suite_name() -> None:
    assert names.family(NAME) == "transpose"
    assert names.variant(NAME) == "transpose/best/float"
    assert names.path_and_parameters(NAME) == (
        "transpose/best/float",
        {"rows": "2048", "cols": "2048"},
    )
    assert names.instance_key(NAME) == "transpose/best/float/2048/2048"


@pytest.mark.parametrize(
    ("name", "variant", "key"),
    [
        ("BM_Copy/1024/real_time", "BM_Copy", "BM_Copy/1024"),
        ("BM_x/min_time:0.500/repeats:3/process_time", "BM_x", "BM_x"),
        ("BM_x/threads:4", "BM_x", "BM_x"),
        ("manual_time", "manual_time", ""),
        ("1024", "1024", "1024"),
    ],
)
def test_google_benchmark_suffixes(name: str, variant: str, key: str) -> None:
    assert names.variant(name) == variant
    assert names.instance_key(name) == key


def test_rows_aggregates_and_registrations() -> None:
    assert names.row_name({"run_name": "a/1", "name": "a/1_median"}) == "a/1"
    assert names.row_name({"name": "b"}) == "b" and names.row_name([1]) == ""
    assert names.without_aggregate("BM_x_median", "median") == "BM_x"
    assert names.without_aggregate("BM_x", "mean") == "BM_x"
    assert [names.registration("BM_x", k) for k in (1, 2, 3)] == ["BM_x", "BM_x#2", "BM_x#3"]


def test_short_commit_keeps_a_dirty_marker() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert names.short_commit(sha) == "0123456789ab"
    assert names.short_commit(sha + "-dirty") == "0123456789ab-dirty"
    assert names.short_commit("abc-dirty") == "abc-dirty"
    assert names.short_commit(None) == names.short_commit("") == "unknown"
