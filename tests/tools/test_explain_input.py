"""The explanations (kernels.py, sass.py, ncu.py, explain.py) on odd input: kernel records of
another shape in a result file, names no compiler writes, cards of two architectures, a kernel
compiled into two translation units, ncu printing what it should not. An explanation that
cannot be made is a note; it never changes a verdict or the exit status."""

from __future__ import annotations

import copy
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import H100_CONTEXT, Run, result_set
from test_ncu import KERNELS_A

from kernelwatch import explain, explanation, kernels, render, sass
from kernelwatch.compare import Settings, compare
from kernelwatch.results import resolve_metric

NAME = "transpose/best/n:4/manual_time"
SPREAD = [1.0, 1.001, 0.999, 1.002, 0.998, 1.0005]
# test_ncu's kernel records: the benchmark NAME launches _Zk (and copy/4 launches _Zc).
RECORDS: dict[str, Any] = KERNELS_A


def _records(change: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    found = copy.deepcopy(RECORDS)
    if change is not None:
        change(found)
    return found


def _record(entry: dict[str, Any]) -> dict[str, Any]:
    benchmark: dict[str, Any] = entry["benchmarks"]["transpose/best/4"]
    return benchmark


MALFORMED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "no kernels": lambda e: _record(e).pop("kernels"),
    "kernels null": lambda e: _record(e).update(kernels=None),
    "kernels a string": lambda e: _record(e).update(kernels="_Zk"),
    "a kernel a number": lambda e: _record(e).update(kernels=[5]),
    "no binary": lambda e: _record(e).pop("binary"),
    "binary a list": lambda e: _record(e).update(binary=["x"]),
    "benchmarks a list": lambda e: e.update(benchmarks=[1]),
    "code a list": lambda e: e.update(code=[1]),
    "a binary's code a list": lambda e: e["code"].update(kernelwatch_bench_transpose=[1]),
    "a kernel's code a list": lambda e: e["code"]["kernelwatch_bench_transpose"].update(_Zk=[1]),
    "sass a number": lambda e: e["code"]["kernelwatch_bench_transpose"]["_Zk"].update(sass=5),
}


@pytest.mark.parametrize("change", MALFORMED.values(), ids=MALFORMED.keys())
@pytest.mark.parametrize("side", ["baseline", "contender"])
def test_malformed_kernel_records_leave_the_verdict_alone(
    change: Callable[[dict[str, Any]], Any],
    side: str,
    write_json: Callable[..., Path],
    run_cli: Callable[..., Run],
) -> None:
    """`compare` of result files whose kernel records another tool (or a hand) shaped otherwise
    ended in `internal error: KeyError: 'kernels'` (exit 2) for a SAME benchmark."""
    bad = _records(change)
    contexts = {
        "baseline": {**H100_CONTEXT, "kernelwatch_kernels": bad if side == "baseline" else RECORDS},
        "contender": {
            **H100_CONTEXT,
            "kernelwatch_kernels": RECORDS if side == "baseline" else bad,
        },
    }
    paths = [
        write_json(f"{which}.json", {NAME: [100.0 * x for x in SPREAD]}, context=contexts[which])
        for which in ("baseline", "contender")
    ]
    for view in ("table", "json", "markdown"):
        done = run_cli("compare", *paths, "--format", view)
        assert done.status == 0, done.err
        assert "internal error" not in done.err and "Traceback" not in done.err


def test_a_name_of_many_digits_is_compared_at_once() -> None:
    """A kernel name of 40,000 digits took 23 s in stable_name (the regex tried every start to
    the end), and one of 5,000 raised ValueError (int's 4,300-digit limit): an internal error."""
    started = time.monotonic()
    assert kernels.stable_name("_Z" + "1" * 40_000 + "x").endswith("x")
    assert time.monotonic() - started < 2
    huge = "9" * 5000 + "_GLOBAL__N__x"
    assert kernels.stable_name(huge)
    a = _records(lambda e: _record(e)["kernels"][0].update(name=huge))
    assert kernels.classify(a, RECORDS, NAME).change is explanation.Change.CODE
    # nvcc's anonymous namespaces still compare alike across builds.
    one = "_ZN50_GLOBAL__N__bfb7b470_12_reduction_cu_6554246a_13046kernelEv"
    two = "_ZN50_GLOBAL__N__bfb7b470_12_reduction_cu_6554246a_12986kernelEv"
    assert kernels.stable_name(one) == kernels.stable_name(two)


def test_cards_of_two_architectures_do_not_blame_the_kernel() -> None:
    """An A100 result against an H100 one (--allow-gpu-mismatch): the same kernel's SASS and
    registers differ by architecture, and every benchmark read "kernel code changed"."""
    a100 = _records(lambda e: e.update(arch="sm_80"))
    a100["code"]["kernelwatch_bench_transpose"]["_Zk"].update(sass="bbbbbbbbbbbbbbbb", registers=24)
    found = kernels.classify(a100, RECORDS, NAME)
    assert found.change is explanation.Change.UNKNOWN, found.text()
    assert "sm_80" in found.text() and "sm_90" in found.text()
    assert not found.changed_code  # no SASS diff of two architectures' code either
    # A launch that changed is still said, and another kernel is still a change of the code.
    wider = _records(lambda e: _record(e)["kernels"][0].update(grid=[8, 4, 1]))
    assert kernels.classify(a100, wider, NAME).change is explanation.Change.LAUNCH
    other = _records(lambda e: _record(e)["kernels"][0].update(name="_Zother"))
    assert kernels.classify(a100, other, NAME).change is explanation.Change.CODE


def test_a_moved_back_edge_changes_the_fingerprint() -> None:
    """Branch targets were numbered in their order: a loop whose back-edge moved from the
    second instruction to the third, the instructions otherwise alike, normalised alike and
    its kernel read as identical."""

    def listing(back_to: int, at: int = 0) -> list[tuple[int | None, str]]:
        return [
            (at, "MOV R1, c[0x0][0x28]"),
            (at + 0x10, "IADD3 R0, R0, 0x1, RZ"),
            (at + 0x20, "ISETP.NE.AND P0, PT, R0, 0x10, PT"),
            (at + 0x30, f"@P0 BRA 0x{at + back_to:x}"),
            (at + 0x40, "EXIT"),
        ]

    assert sass.normalise(listing(0x10)) != sass.normalise(listing(0x20))
    assert sass.normalise(listing(0x10))[3] == "@P0 BRA I1"
    # At other addresses, alike in all else, it still normalises alike.
    assert sass.normalise(listing(0x10, at=0x100)) == sass.normalise(listing(0x10))


def test_fingerprints_of_another_records_version_are_not_compared() -> None:
    """A baseline recorded before kernels.VERSION 2 hashed another normalisation: every kernel
    with a branch would read as changed code."""
    before = _records(lambda e: e.update(version=1))
    before["code"]["kernelwatch_bench_transpose"]["_Zk"].update(sass="bbbbbbbbbbbbbbbb")
    found = kernels.classify(before, RECORDS, NAME)
    assert found.change is explanation.Change.UNKNOWN, found.text()
    assert "version 1 and 2" in found.text() and not found.changed_code
    # Resources are still compared.
    before["code"]["kernelwatch_bench_transpose"]["_Zk"].update(registers=99)
    assert kernels.classify(before, RECORDS, NAME).change is explanation.Change.CODE


def test_the_summary_says_why_kernels_were_not_compared() -> None:
    """The real H200 suite against the committed baseline (records version 1) printed
    "kernels of the benchmarks: 356 not compared" and no reason: SAME rows show none."""
    older = _records(lambda e: e.update(version=1))
    rows = {NAME: SPREAD, "copy/n:4/manual_time": SPREAD}
    report = kernels.classified(
        compare(
            result_set(rows, context={**H100_CONTEXT, kernels.CONTEXT_KEY: older}),
            result_set(rows, context={**H100_CONTEXT, kernels.CONTEXT_KEY: RECORDS}),
            resolve_metric("real_time"),
            Settings(),
        )
    )
    assert render.kernel_summary(report) == (
        "kernels of the benchmarks: 2 not compared (all: launch and resources alike; SASS "
        "fingerprints of kernel records version 1 and 2 (two kernelwatch releases))"
    )


# --- ncu printing what it should not ----------------------------------------------------------

HEADER = (
    '"ID","Kernel Name","gpu__time_duration.sum",'
    '"sm__warps_active.avg.pct_of_peak_sustained_active"'
)
FAKE_NCU = """\
import sys, time
from pathlib import Path
args = sys.argv[1:]
if "--export" in args:
    time.sleep(float(Path(sys.argv[0] + ".sleep").read_text().split()[0]))
    Path(args[args.index("--export") + 1]).write_text("report")
    sys.exit(0)
if "--import" in args:
    time.sleep(float(Path(sys.argv[0] + ".sleep").read_text().split()[1]))
    sys.stdout.write(Path(sys.argv[0] + ".csv").read_text())
"""


def _fake_ncu(tmp_path: Path, csv_text: str, sleep: tuple[float, float] = (0.0, 0.0)) -> str:
    """A stand-in for ncu: `--export` writes a report after sleep[0] s, `--import` prints
    `csv_text` after sleep[1] s."""
    script = tmp_path / "ncu"
    script.write_text(f"#!{sys.executable}\n{FAKE_NCU}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    Path(f"{script}.csv").write_text(csv_text)
    Path(f"{script}.sleep").write_text(f"{sleep[0]} {sleep[1]}")
    return str(script)


def _regressed() -> Any:
    changed = _records(
        lambda e: e["code"]["kernelwatch_bench_transpose"]["_Zk"].update(sass="b" * 16)
    )
    base = result_set(
        {NAME: [100.0 * x for x in SPREAD]},
        context={**H100_CONTEXT, "kernelwatch_kernels": RECORDS},
    )
    cont = result_set(
        {NAME: [130.0 * x for x in SPREAD]},
        context={**H100_CONTEXT, "kernelwatch_kernels": changed},
    )
    return compare(base, cont, resolve_metric("real_time"), Settings())


def _explained(tmp_path: Path, tool: str, budget: float = 60) -> explanation.Explanation:
    builds = {
        side: explain.Build({"kernelwatch_bench_transpose": tmp_path / "kernelwatch_bench_x"})
        for side in ("A", "B")
    }
    report = explain.explain(_regressed(), builds, budget=budget, ncu_path=tool)
    return report.explanations[NAME]


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param('"0","' + "_Z" + "a" * 200_000 + '","5","50"', id="a name past 128 KiB"),
        pytest.param('"0","_Zk","n/a","n/a"', id="every metric n/a"),
    ],
)
def test_ncu_output_that_gives_no_counters_is_a_note(tmp_path: Path, rows: str) -> None:
    """A cell over csv's 128 KiB limit raised csv.Error out of `ab` (an internal error after
    all the measuring); a report whose metrics were all n/a gave an explanation with no
    counters and no word of why."""
    found = _explained(tmp_path, _fake_ncu(tmp_path, f"{HEADER}\n{rows}\n"))
    assert found.note.startswith("not profiled (A): ncu"), found.note
    assert found.counters_text() == found.note


def test_ncu_reading_its_report_keeps_to_the_budget(tmp_path: Path) -> None:
    """`ncu --import` had the whole budget again after the profiling run had used it: a hung
    import doubled the time the explanation may take."""
    tool = _fake_ncu(tmp_path, f'{HEADER}\n"0","_Zk","5","50"\n', sleep=(4, 30))
    started = time.monotonic()
    found = _explained(tmp_path, tool, budget=6)
    assert time.monotonic() - started < 8.5  # (it took 10 s: 4 profiling, then 6 more)
    assert "did not finish" in found.note


# --- real machine code ------------------------------------------------------------------------

TEMPLATE = "template <class T> __global__ void scale(T* p) { p[threadIdx.x] *= 2; }\n"
MAIN = (
    '#include "scale.cuh"\nvoid other();\n'
    "int main() { scale<float><<<1, 32>>>(nullptr); other(); }\n"
)
OTHER = {
    "unused": "void other() {}\n",
    "used": '#include "scale.cuh"\nvoid other() { scale<float><<<1, 32>>>(nullptr); }\n',
}


def _nvcc() -> str:
    """nvcc, with cuobjdump beside it; the test skips (fails with CI=true) without them."""
    nvcc = shutil.which("nvcc") or sass.find_tool("nvcc")
    if nvcc is None or sass.find_tool("cuobjdump") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvcc or cuobjdump not found (CI=true: the SASS tests must run)")
        pytest.skip("nvcc or cuobjdump not found")
    return nvcc


def test_a_kernel_in_two_translation_units_is_one_kernel(tmp_path: Path) -> None:
    """A header's template kernel used by a second .cu file of the binary is compiled into
    both files' fatbins: its listings were joined, so the unchanged kernel read "kernel code
    changed" (SASS 533f3c29→7bd3a540, 24→48 instr) once another file used it."""
    nvcc = _nvcc()
    (tmp_path / "scale.cuh").write_text(TEMPLATE)
    (tmp_path / "main.cu").write_text(MAIN)
    found = {}
    for variant, source in OTHER.items():
        (tmp_path / f"{variant}.cu").write_text(source)
        binary = tmp_path / variant
        subprocess.run(
            [nvcc, "-arch=sm_90", "-O3", "-o", str(binary), "main.cu", f"{variant}.cu"],
            check=True,
            capture_output=True,
            cwd=tmp_path,
        )
        arch, listing = sass.kernels_for_gpu(binary, "9.0")
        found[variant] = listing["_Z5scaleIfEvPT_"]
    assert found["used"].fingerprint == found["unused"].fingerprint
    assert found["used"].instructions == found["unused"].instructions


CALLER = """\
__device__ float f(float x);
__global__ void k(float* p) { p[threadIdx.x] = f(p[threadIdx.x]); }
__global__ void plain(float* p) { p[threadIdx.x] *= 2.0f; }
int main() { return 0; }
"""
CALLEE = "__device__ __noinline__ float f(float x) { return x * FACTOR; }\n"


def test_a_change_in_a_separately_compiled_callee_changes_its_caller(tmp_path: Path) -> None:
    """With -rdc, a kernel calls a device function of another .cu file through a relocation
    (`CALL.ABS.NOINC 0x0`): a change inside the callee left the kernel's listing byte-equal,
    and the explanation said "kernel identical", the change coming from elsewhere."""
    nvcc = _nvcc()
    (tmp_path / "a.cu").write_text(CALLER)
    (tmp_path / "b.cu").write_text(CALLEE)
    found = {}
    for factor in ("2.0f", "3.0f"):
        binary = tmp_path / f"x{factor}"
        command = [nvcc, "-rdc=true", "-arch=sm_90", f"-DFACTOR={factor}", "a.cu", "b.cu"]
        subprocess.run([*command, "-o", str(binary)], check=True, capture_output=True, cwd=tmp_path)
        found[factor] = sass.kernels_for_gpu(binary, "9.0")[1]
    two, three = found["2.0f"], found["3.0f"]
    assert two["_Z1kPf"].fingerprint != three["_Z1kPf"].fingerprint
    assert "<_Z1ff>:" in two["_Z1kPf"].lines
    assert two["_Z5plainPf"].fingerprint == three["_Z5plainPf"].fingerprint
