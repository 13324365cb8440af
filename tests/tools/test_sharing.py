"""The suite shared among GPUs at run time (`run --gpus all --split`): its parts, and the order
the GPUs claim them in."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kernelwatch.errors import InputError
from kernelwatch.runner import Job
from kernelwatch.runner.sharing import Claims, parts


def job(binary: str, *names: str, serial: bool = False) -> Job:
    return Job(Path(binary), None, names, serial)


JOBS = [
    job("coalescing", "c/1", "c/2", "c/3"),
    job("transfers", "t/h2d", "t/d2h", serial=True),
    job("reduction", "r/1"),
    job("probe", "p/1"),
    job("copies", "x/h2d", serial=True),
]
SECONDS = {"c/1": 5.0, "c/2": 5.0, "c/3": 5.0, "t/h2d": 10.0, "t/d2h": 10.0, "r/1": 3.0}


def test_the_host_bound_jobs_are_one_part_first_and_the_others_come_longest_first() -> None:
    found = parts(JOBS, SECONDS, 2)
    # p/1 and x/h2d are unknown: each counts as the median of the known times (5 s). The
    # host-bound part comes first whatever its length.
    assert parts(JOBS, {**SECONDS, "c/1": 99.0}, 2)[0] == (JOBS[1], JOBS[4])
    assert [[j.binary.name for j in part] for part in found] == [
        ["transfers", "copies"],
        ["coalescing"],
        ["probe"],
        ["reduction"],
    ]
    assert all(len(part) == 1 for part in found[1:])
    every = [name for part in found for j in part for name in j.names]
    assert sorted(every) == sorted(name for j in JOBS for name in j.names)


def test_fewer_jobs_than_gpus_halves_the_longest_until_every_gpu_has_a_part() -> None:
    found = parts([job("coalescing", "c/1", "c/2", "c/3", "c/4")], {}, 3)
    assert sorted(tuple(part[0].names) for part in found) == [("c/1",), ("c/2",), ("c/3", "c/4")]
    # Each half runs exactly its benchmarks (an anchored filter), in the binary it came from.
    assert {part[0].filter for part in found} == {"^(c/1)$", "^(c/2)$", "^(c/3|c/4)$"}
    with pytest.raises(InputError, match=r"--split: 4 GPUs, but the 2 benchmark\(s\) make only 2"):
        parts([job("transfers", "t/1", serial=True), job("probe", "p/1")], {}, 4)


def test_gpu_k_first_takes_the_kth_longest_part_then_whoever_asks_takes_the_next() -> None:
    found = parts(JOBS, SECONDS, 2)
    claims = Claims(found, 2)
    assert claims.take(2) == found[1]  # its own first part, whoever asks first
    assert claims.take(2) == found[2]  # the longest left
    assert claims.take(1) == found[0]  # GPU 1 (late) still gets the longest: the host-bound part
    assert claims.take(1) == found[3]
    assert claims.take(1) == () and claims.take(2) == ()


def test_many_gpus_claiming_at_once_take_every_part_exactly_once() -> None:
    found = [(job(f"b{i}", f"n/{i}"),) for i in range(200)]
    claims = Claims(found, 8)
    taken: dict[int, list[tuple[Job, ...]]] = {k: [] for k in range(1, 9)}

    def worker(k: int) -> None:
        while part := claims.take(k):
            taken[k].append(part)

    threads = [threading.Thread(target=worker, args=(k,)) for k in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    names = sorted(p[0].binary.name for parts_of in taken.values() for p in parts_of)
    assert names == sorted(p[0].binary.name for p in found)
    assert all(taken[k][0] == found[k - 1] for k in taken)
