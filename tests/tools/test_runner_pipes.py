"""What a tool's or a benchmark binary's pipes can do to `run`: a process it left in a session
of its own (setsid) holding them open after it exited, gigabytes written to them, a banner
printed on stdout while it lists its benchmarks."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import fakebench
import pytest
from test_leaves_input import python

from kernelwatch import runner, tool
from kernelwatch.errors import BenchmarkCrashed, InputError
from kernelwatch.runner.process import Progress, run_one

A = {"alpha/copy/manual_time": 100.0, "alpha/copy(2)/manual_time": 200.0}

# A tool that leaves a child in a session of its own holding its stdout and stderr (the pid in
# argv[1]), says its result and exits.
LEAVES_A_SETSID_SLEEPER = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    time.sleep(60)
    os._exit(0)
open(sys.argv[1], "w").write(str(pid))
print("result", flush=True)
sys.stderr.write("said\\n")
"""

# A benchmark binary: the fake one (REAL) behind a wrapper that, in a measuring run, leaves a
# child in a session of its own holding stdout and stderr (its pid written to PID).
SETSID_WRAPPER = """#!{python}
import os, sys, time
if any(arg.startswith("--benchmark_out=") for arg in sys.argv[1:]):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        time.sleep(60)
        os._exit(0)
    open({pid!r}, "w").write(str(pid))
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[list[Path]]:
    """Files each holding the pid of a leftover a test started; each is killed at the end."""
    files: list[Path] = []
    yield files
    for path in files:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(path.read_text()), signal.SIGKILL)


def wrapped(tmp_path: Path, script: str, **values: object) -> Path:
    """The fake binary of A behind the wrapper `script` (formatted with `values`)."""
    real = fakebench.make(tmp_path / "real", "kernelwatch_bench_alpha", A, counters=False)
    binary = tmp_path / "bench" / "kernelwatch_bench_alpha"
    binary.parent.mkdir()
    binary.write_text(script.format(python=sys.executable, real=str(real), **values))
    binary.chmod(0o755)
    return binary


def run_job(tmp_path: Path, binary: Path, **settings: object) -> dict[str, object]:
    """`run` of every benchmark `binary` lists, one process: its result document."""
    (job,) = runner.plan([binary], None)
    options = runner.RunSettings(repetitions=2, **settings)  # type: ignore[arg-type]
    out = tmp_path / "out.json"
    command = runner.benchmark_command(job, options, out)
    return run_one(binary, command, out, options, Progress(enabled=False), job.names).document


def test_a_setsid_leftover_holding_the_pipes_does_not_hold_run(
    tmp_path: Path, leftovers: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool whose child moved to a session of its own (out of reach of the process group's
    ending) and held its pipes: run() read them until the timeout, reported the tool as timed
    out and lost what it said; without a timeout it waited for ever."""
    leftovers.append(tmp_path / "pid")
    began = time.monotonic()
    done = tool.run([*python(LEAVES_A_SETSID_SLEEPER), str(tmp_path / "pid")], timeout=15)
    assert time.monotonic() - began < 8
    assert (done.status, done.stdout, done.stderr) == (0, "result\n", "said\n")
    warning = capsys.readouterr().err.splitlines()
    assert len(warning) == 1 and warning[0].startswith("kernelwatch: warning: ")
    assert "LEAVES" not in warning[0] and "held its output open" in warning[0]
    assert sys.executable in warning[0]  # names the command


def test_stream_of_a_tool_with_a_setsid_leftover(tmp_path: Path, leftovers: list[Path]) -> None:
    """The same through stream (bisect's `git bisect run`): it waited for ever."""
    leftovers.append(tmp_path / "pid")
    shown: list[str] = []
    began = time.monotonic()
    done = tool.stream([*python(LEAVES_A_SETSID_SLEEPER), str(tmp_path / "pid")], shown.append)
    assert time.monotonic() - began < 8
    assert done.status == 0 and sorted(shown) == ["result\n", "said\n"]


def test_a_benchmark_binary_with_a_setsid_leftover_keeps_its_result(
    tmp_path: Path, leftovers: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A binary whose leftover (a server it started, setsid) held its stderr: the run waited
    until --process-timeout and called the binary hung, its written result lost."""
    pid = tmp_path / "pid"
    leftovers.append(pid)
    binary = wrapped(tmp_path, SETSID_WRAPPER, pid=str(pid))
    began = time.monotonic()
    document = run_job(tmp_path, binary, process_timeout=15.0)
    assert time.monotonic() - began < 10
    assert {row["run_name"] for row in document["benchmarks"]} == set(A)  # type: ignore
    err = capsys.readouterr().err
    assert f"kernelwatch: warning: {binary}" in err and "held its output open" in err


SPEAKS_A_LOT = """#!/bin/sh
case "$*" in *--benchmark_out=*)
  yes 'a line of diagnostics that goes on and on' | head -c 40000000 >&2
  echo >&2
  echo 'the last word' >&2
  exit 1;;
esac
exec {real} "$@"
"""


def test_a_binary_writing_tens_of_megabytes_is_not_held_in_memory(tmp_path: Path) -> None:
    """40 MB on a binary's stderr was held whole (and again as text) to quote its last line."""
    binary = wrapped(tmp_path, SPEAKS_A_LOT)
    tracemalloc.start()
    try:
        with pytest.raises(BenchmarkCrashed, match="exit status 1.*: the last word$"):
            run_job(tmp_path, binary)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_a_listing_of_gigabytes_is_refused_in_one_line(tmp_path: Path) -> None:
    """A binary that printed without end while listing was held whole in memory."""
    binary = tmp_path / "lists_too_much"
    binary.write_text("#!/bin/sh\nyes x/manual_time | head -c 70000000\n")
    binary.chmod(0o755)
    with pytest.raises(InputError, match="printed more than 64 MiB; is it a Google Benchmark"):
        runner.list_benchmarks(binary, None)


BANNER = """#!/bin/sh
echo '=== acme kernels v2.1 ==='
echo 'built with CUDA 12.4'
exec {real} "$@"
"""


def test_a_banner_printed_while_listing_is_named(tmp_path: Path) -> None:
    """A plain Google Benchmark binary (--bench) that prints a banner: its lines were taken
    for benchmarks, and the run failed naming only the first, as if a benchmark had vanished.
    It still fails (a real benchmark without a row must not read as removed), naming each."""
    binary = wrapped(tmp_path, BANNER)
    with pytest.raises(BenchmarkCrashed) as failed:
        run_job(tmp_path, binary)
    message = str(failed.value)
    assert "no row for 2 benchmark(s) it listed, === acme kernels v2.1 ===, built with" in message
    assert "must print benchmark names only" in message and "\n" not in message
