"""`run --gpus all --split`: one suite shared among the GPUs of a host at run time.

A split fixed before the run cannot know the cards it lands on: on two-GPU H200 hosts one
card took 0.85-1.49x another's samples for the same coalescing benchmarks, and the fixed
shards came out 68 s and 88 s (docs/running.md). Here each GPU takes the next part of the
suite when it is free, longest first, in its first process round; its later rounds run the
same parts again on the same card, so a benchmark's processes and top-ups stay on one card
(the spread between them is a card's, as in a run on one GPU). Where no anchor's rounds come
between, a GPU measures each part whole, processes and top-ups, before it claims the next
(Measuring.by_part), so that what it takes counts the top-ups too.

A part is a whole job (one binary's benchmarks), so a shared suite starts no more benchmark
processes than one GPU alone: each extra process pays a CUDA context and its benchmarks'
shared set-up (18 extra processes cost 11 of 15 extra seconds in a fixed split of two
H200s). The host-bound jobs are one part, GPU 1's first: the host lock measures them one at
a time wherever they run, so on one GPU, from the start, they run while the others measure
the GPU-bound rest (the host-bound part is the longest: 58 of 140 s on an H200).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from kernelwatch.errors import InputError
from kernelwatch.runner.discovery import only
from kernelwatch.runner.settings import Job

Part = tuple[Job, ...]


def estimate(seconds: Mapping[str, float] | None) -> Callable[[str], float]:
    """Each benchmark's estimated seconds (`seconds`, as merge.durations reads them from the
    baselines): one the times do not know counts as their median, 1 without times."""
    known = sorted(v for v in (seconds or {}).values() if v > 0)
    typical = known[len(known) // 2] if known else 1.0
    return lambda name: (seconds or {}).get(name) or typical


def parts(jobs: Sequence[Job], seconds: Mapping[str, float], count: int) -> list[Part]:
    """The jobs as parts to share among `count` GPUs: the serial (host-bound) jobs as one
    part, first, then each other job as one, longest first by the estimated `seconds` of its
    benchmarks (an unknown one counts as the median). While there are fewer parts than GPUs,
    the longest job is halved, so that every GPU gets one."""
    of = estimate(seconds)

    def weight(part: Part) -> float:
        return sum(of(name) for job in part for name in job.names)

    serial = tuple(job for job in jobs if job.serial)
    found = [(job,) for job in jobs if not job.serial]
    while len(found) + bool(serial) < count:
        halvable = [part for part in found if len(part[0].names) > 1]  # (one job each)
        if not halvable:
            names = sum(len(job.names) for job in jobs)
            raise InputError(
                f"--split: {count} GPUs, but the {names} benchmark(s) make only "
                f"{len(found) + bool(serial)} part(s) to share; give fewer GPUs"
            )
        longest = max(halvable, key=weight)
        job = longest[0]
        half = len(job.names) // 2
        found.remove(longest)
        found += [(only(job, job.names[:half]),), (only(job, job.names[half:]),)]
    return ([serial] if serial else []) + sorted(found, key=lambda part: -weight(part))


class Claims:
    """The parts of one shared suite, handed out as the GPUs ask: GPU k (1-based, of
    `count`) gets the k-th part first, so that every GPU has one and the first GPU the
    host-bound part; after that, whoever asks first gets the longest part left. Thread-safe."""

    def __init__(self, found: Sequence[Part], count: int) -> None:
        if len(found) < count:
            raise ValueError("fewer parts than GPUs (parts() halves jobs to avoid this)")
        self._first = {k: found[k - 1] for k in range(1, count + 1)}
        self._rest = list(found[count:])
        self._lock = threading.Lock()

    def take(self, k: int) -> Part:
        """GPU k's next part; empty when none is left."""
        with self._lock:
            first = self._first.pop(k, None)
            if first is not None:
                return first
            return self._rest.pop(0) if self._rest else ()
