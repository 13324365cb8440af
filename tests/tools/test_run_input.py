"""`kernelwatch run` fed what a user's shell and a broken binary can give it: environment
variables Google Benchmark reads, --bench-arg flags that `run` sets itself, a result that names
fewer benchmarks than the listing, a result that is JSON but no valid result, and another
command measuring on the same GPU."""

from __future__ import annotations

import fcntl
import json
import stat
import sys
from pathlib import Path

import fakebench
import pytest
import test_run
from kernelwatch.errors import InputError
from kernelwatch.runner import discovery
from test_run import ALPHA, BETA, one_error

# Runs the fake binary real_<name> beside it (the wrapped one), with what the wrapper adds.
WRAPPER = """#!{python}
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
argv = [os.path.join(here, {real!r})]
# Google Benchmark reads a flag it is not given from its upper-case environment variable.
if os.environ.get("BENCHMARK_FILTER"):
    argv.append("--benchmark_filter=" + os.environ["BENCHMARK_FILTER"])
done = subprocess.run(argv + sys.argv[1:])
out = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out=")]
edit = os.path.join(here, {real!r} + ".edit")
if out and done.returncode == 0 and os.path.exists(edit):
    document = json.load(open(out[0]))
    exec(open(edit).read())  # changes `document`
    json.dump(document, open(out[0], "w"))
sys.exit(done.returncode)
"""


class Box(test_run.Box):
    """test_run's box, each fake binary behind a wrapper (WRAPPER), cwd = tmp."""

    def __init__(self, tmp: Path, run_cli) -> None:
        super().__init__(tmp, run_cli)
        for binary in self.binaries:
            real = binary.with_name("real_" + binary.name.rsplit("_", 1)[1])
            binary.rename(real)
            Path(f"{binary}.json").rename(f"{real}.json")
            binary.write_text(WRAPPER.format(python=sys.executable, real=real.name))
            binary.chmod(0o755)

    def edit(self, family: str, code: str) -> None:
        """Python run on each output of `family`'s binary (`document`) before kernelwatch reads
        it."""
        (self.build / "bench" / f"real_{family}.edit").write_text(code)

    def run(self, *argv: object, repetitions: int = 4):
        return self.run_cli(
            "run", "--build-dir", self.build, "--baselines", self.baselines,
            "--repetitions", repetitions, "--top-ups", 0, *argv,
        )  # fmt: skip

    def make_baseline(self) -> None:
        out = self.tmp / "base.json"
        done = self.run("--no-compare", "--out", out)
        assert done.status == 0, done.err
        done = self.run_cli("baseline", "update", out, "--baselines", self.baselines,
                            "--min-repetitions", 4)  # fmt: skip
        assert done.status == 0, done.err


@pytest.fixture
def box(tmp_path: Path, run_cli, monkeypatch) -> Box:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.chdir(tmp_path)
    return Box(tmp_path, run_cli)


def names(path: Path) -> set[str]:
    return {row["run_name"] for row in json.loads(path.read_text())["benchmarks"]}


def test_a_benchmark_filter_left_in_the_environment_does_not_make_a_part_the_whole_build(
    box: Box, monkeypatch
) -> None:
    """BENCHMARK_FILTER=alpha in the shell: the binaries ran alpha alone, the result said it
    was the whole build, and beta's baseline benchmarks read "not in this build: removed or
    renamed" (exit 0; the baseline's next whole update drops them)."""
    box.make_baseline()
    monkeypatch.setenv("BENCHMARK_FILTER", "alpha")
    out = box.tmp / "r.json"
    done = box.run("--out", out)
    assert done.status == 0, done.err
    assert names(out) == set(ALPHA) | set(BETA)
    assert "MISSING" not in done.out


def test_the_harness_kernel_records_go_only_where_the_runner_says(box: Box, monkeypatch) -> None:
    """KERNELWATCH_KERNELS_OUT in the shell reached every process but the first of each binary
    (the runner sets it for that one): they appended to the user's file."""
    mine = box.tmp / "mine.jsonl"
    mine.write_text("kept\n")
    monkeypatch.setenv("KERNELWATCH_KERNELS_OUT", str(mine))
    box.edit(
        "alpha",
        "if os.environ.get('KERNELWATCH_KERNELS_OUT'):\n"
        "    open(os.environ['KERNELWATCH_KERNELS_OUT'], 'a').write('appended\\n')\n",
    )
    done = box.run("--no-compare", "--out", box.tmp / "r.json")
    assert done.status == 0, done.err
    assert mine.read_text() == "kept\n"


@pytest.mark.parametrize(
    ("flag", "instead"),
    [
        ("--benchmark_out=victim.txt", "--out"),
        ("--benchmark_out_format=csv", "--out"),
        ("--benchmark_repetitions=3", "--repetitions"),
        ("--benchmark_filter=alpha", "--filter"),
        ("--benchmark_enable_random_interleaving=false", "--no-interleave"),
        ("--kernelwatch_max_time=1", "--max-time"),
        ("--benchmark_list_tests", None),
    ],
)
def test_a_bench_arg_that_run_sets_itself_is_refused_before_anything_runs(
    box: Box, flag: str, instead: str | None
) -> None:
    """--bench-arg=--benchmark_out=FILE replaced a file the run was not asked to write and
    ended in exit 3; --bench-arg=--benchmark_repetitions=3 gave 6 repetitions to a result
    that said 10."""
    victim = box.tmp / "victim.txt"
    victim.write_text("precious\n")
    done = box.run("--no-compare", "--out", box.tmp / "r.json", f"--bench-arg={flag}")
    assert done.status == 2
    line = one_error(done.err)
    assert f"--bench-arg {flag}" in line and (instead is None or instead in line)
    assert victim.read_text() == "precious\n"
    assert not (box.tmp / "r.json").exists()
    assert not (box.build / "bench" / "real_alpha.runs").exists()  # nothing was measured


def test_a_listed_benchmark_without_a_row_is_a_failed_binary_not_one_removed(box: Box) -> None:
    """A binary that exits 0 with no row for a benchmark it listed: the benchmark read
    "MISSING: not in this build: removed or renamed", not failing (exit 0)."""
    box.make_baseline()
    box.edit("beta", "document['benchmarks'] = [r for r in document['benchmarks']"
                     " if 'n:1' not in r['name']]")  # fmt: skip
    out = box.tmp / "r.json"
    done = box.run("--out", out)
    assert done.status == 3
    assert "no row for 1 benchmark(s) it listed, beta/sum/n:1/manual_time" in one_error(done.err)
    assert names(out) == set(ALPHA)
    assert json.loads(out.read_text())["context"]["kernelwatch_no_result"] == list(BETA)


@pytest.mark.parametrize(
    "code",
    [
        "document['benchmarks'][0]['real_time'] = -5",
        "document['benchmarks'][0]['time_unit'] = 'fortnights'",
        "document['context'] = []",
        "document = []",
    ],
)
def test_a_binary_that_writes_an_invalid_result_loses_no_other_result(box: Box, code: str) -> None:
    """A result that is JSON but not a valid one (a negative time, a context that is no
    object) ended the whole run with exit 2, every other binary's measurements lost."""
    box.edit("beta", code)
    out = box.tmp / "r.json"
    done = box.run("--no-compare", "--out", out)
    assert done.status == 3
    assert "kernelwatch_bench_beta: wrote an invalid result: " in one_error(done.err)
    assert names(out) == set(ALPHA)


@pytest.mark.parametrize("command", ["run", "selftest"])
def test_a_plain_run_waits_for_another_measurement_on_its_gpu(
    box: Box, monkeypatch, tmp_path: Path, command: str
) -> None:
    """`ab` and `run --gpus` hold gpu-<UUID>.lock while they measure; a plain `run` or
    `selftest` took no lock and measured on the card beside them."""
    from kernelwatch import locks
    from kernelwatch.runner import interleaving, process

    uuid = fakebench.GPU_CONTEXT["gpu_uuid"]
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"if sys.argv[1:] == ['-L']:\n    print('GPU 0: NVIDIA H100 80GB HBM3 (UUID: {uuid})')\n"
        f"else:\n    print('0, {uuid}, NVIDIA H100 80GB HBM3, 9.0')\n"
    )
    smi.chmod(0o755)
    monkeypatch.setattr(process, "NVIDIA_SMI", str(smi))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    lock = locks.lock_dir()
    lock.mkdir(parents=True, exist_ok=True)
    held = open(lock / f"gpu-{uuid}.lock", "a+b")  # another command measuring on the card
    fcntl.flock(held, fcntl.LOCK_EX)
    told: list[str] = []
    waiting = interleaving._waiting

    def ends_when_waited_for(progress, prefix):  # the other command ends once the run waits
        def said(why: str) -> None:
            told.append(why)
            held.close()
            waiting(progress, prefix)(why)

        return said

    monkeypatch.setattr(interleaving, "_waiting", ends_when_waited_for)
    try:
        if command == "run":
            done = box.run("--no-compare", "--out", box.tmp / "r.json")
        else:
            done = box.run_cli(
                "selftest",
                "--build-dir",
                box.build,
                "--aa-runs",
                "2",
                "--trials",
                "0",
                "--out",
                box.tmp / "st",
            )
    finally:
        held.close()
    assert done.status == 0, done.err
    assert told == [f"waiting for another measurement on {uuid}"]
    assert f"waiting for another measurement on {uuid}" in done.err


# --- a build whose binaries list nothing ----------------------------------------------------------


def _silent_binary(path: Path) -> Path:
    """A 'benchmark binary' that lists nothing (a build whose benchmarks are all gone)."""
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_one_binary_listing_nothing_reads_as_english(tmp_path: Path) -> None:
    # docs/running.md, step 3: "no benchmark at all is exit 2", in one readable line.
    with pytest.raises(InputError) as caught:
        discovery.plan([_silent_binary(tmp_path / "kernelwatch_bench_a")], None)
    assert str(caught.value) == "1 benchmark binary lists no benchmarks"


def test_binaries_listing_nothing_read_as_english(tmp_path: Path) -> None:
    binaries = [_silent_binary(tmp_path / f"kernelwatch_bench_{n}") for n in "ab"]
    with pytest.raises(InputError) as caught:
        discovery.plan(binaries, None)
    assert str(caught.value) == "2 benchmark binaries list no benchmarks"
