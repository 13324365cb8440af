#!/usr/bin/env python3
"""How long `kernelwatch compare` takes on two files of 10,000 benchmarks x 10 repetitions.

Writes two Google Benchmark JSON files (laid out as Google Benchmark writes them, with this
project's counters and the mean/median/stddev/cv aggregates, so about 70 MB each) into a
temporary directory, then times the comparison end to end: in this process (cli.main) and as
a subprocess (`python3 -m kernelwatch compare`, interpreter start and imports included).

    python3 tools/bench_compare_speed.py [--benchmarks 10000] [--repetitions 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import numpy as np  # noqa: E402
from kernelwatch import cli, synthetic  # noqa: E402
from kernelwatch import gbench  # noqa: E402


def make_file(path: Path, benchmarks: int, repetitions: int, seed: int, slow: set[str]) -> None:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(benchmarks):
        name = f"BM_Kernel/{i}/manual_time"
        times = rng.lognormal(np.log(50.0 + i % 997), 0.004, repetitions)
        if name in slow:
            times = times * 1.10
        bytes_moved = 8e6 * (1 + i % 997)
        rows += synthetic.benchmark_rows(
            name,
            times.tolist(),
            time_unit="us",
            family_index=i,
            counters={
                "bytes_per_second": (bytes_moved / (times * 1e-6)).tolist(),
                "peak_fraction": (bytes_moved / (times * 1e-6) / 3.35e12).tolist(),
            },
        )
    context = {"gpu_name": "NVIDIA H100 80GB HBM3", "gpu_compute_capability": "9.0"}
    synthetic.write(path, synthetic.document(rows, context))


def _flagged(table: str) -> set[str]:
    return {line.split()[1] for line in table.splitlines() if line.startswith("REGRESSION")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=10_000)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each kind")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        base, cont = Path(tmp, "baseline.json"), Path(tmp, "contender.json")
        # One benchmark in 100 is 10 % slower. (A lone regression among 10,000 cannot be
        # significant with 10 repetitions: see "Power" in docs/compare.md.)
        slow = {f"BM_Kernel/{i}/manual_time" for i in range(0, args.benchmarks, 100)}
        started = time.perf_counter()
        make_file(base, args.benchmarks, args.repetitions, seed=1, slow=set())
        make_file(cont, args.benchmarks, args.repetitions, seed=2, slow=slow)
        size = (base.stat().st_size + cont.stat().st_size) / 2**20
        print(
            f"wrote 2 files, {args.benchmarks} benchmarks x {args.repetitions} repetitions, "
            f"{size:.0f} MiB in all, in {time.perf_counter() - started:.1f} s"
        )

        argv = ["compare", str(base), str(cont)]
        in_process = []
        for _ in range(args.runs):
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()) as out:
                status = cli.main(argv)
            in_process.append(time.perf_counter() - started)
            assert status == 1 and _flagged(out.getvalue()) == slow, "wrong regressions"

        env = dict(os.environ, PYTHONPATH=str(TOOLS))
        as_subprocess = []
        for _ in range(args.runs):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "kernelwatch", *argv],
                env=env,
                capture_output=True,
                text=True,
            )
            as_subprocess.append(time.perf_counter() - started)
            assert done.returncode == 1 and _flagged(done.stdout) == slow, done.stderr

    def show(label: str, runs: list[float]) -> None:
        print(
            f"{label:<28} median {statistics.median(runs):.2f} s "
            f"(runs: {', '.join(f'{r:.2f}' for r in runs)})"
        )

    parser = getattr(gbench._orjson, "__version__", None)
    print(
        f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, numpy {np.__version__}, "
        f"JSON parser: {f'orjson {parser}' if parser else 'json (pip install orjson: faster)'}"
    )
    show("compare, in process:", in_process)
    show("compare, as a subprocess:", as_subprocess)
    return 0


if __name__ == "__main__":
    sys.exit(main())
