"""ncu.py's parser on a canned `ncu --csv --page raw --print-units base` output (the documented
layout: a header row of identifying columns and metric names, a units row, one row per profiled
launch), the ranking of moved metrics, and explain.py end to end with a fake profiler."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import H100_CONTEXT, result_set

from kernelwatch import explain, explanation, ncu, render
from kernelwatch.compare import Settings, compare
from kernelwatch.results import resolve_metric

CSV = """==PROF== Connected to process 4242 (/build/bench/kernelwatch_bench_transpose)
==PROF== Profiling "transpose_tiled": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","lts__t_sector_hit_rate.pct","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"
"","","","","","","","","","","","byte","byte","nsecond","","%","%","ratio","ratio"
"0","4242","kernelwatch_bench_transpose","gpu1","_Z15transpose_tiledIfLi32ELi8ELi1EEvPT_PKS0_ii","1","13","(32, 8, 1)","(128, 128, 1)","0","9.0","67,108,864","67,108,864","45,120","0","38.5","91.2","0.8","0.3"
"""


def test_parses_the_raw_page() -> None:
    rows = ncu.parse_raw_csv(CSV)
    assert len(rows) == 1
    row = rows[0]
    assert row["Kernel Name"].startswith("_Z15transpose_tiled")
    assert row[explanation.DRAM_READ] == 67108864.0
    assert row[explanation.BANK_LD] == 0.0
    assert row[explanation.OCCUPANCY] == 91.2
    metrics = ncu.summarise(rows)
    assert metrics[explanation.DURATION] == 45120.0
    assert explanation.top_stalls(metrics)[0] == ("barrier", 0.8)


def test_no_header_means_no_rows() -> None:
    assert ncu.parse_raw_csv("==ERROR== The application returned an error code (1)\n") == []


def test_moved_most_puts_a_jump_from_zero_first() -> None:
    before = {
        explanation.BANK_LD: 0.0,
        explanation.OCCUPANCY: 91.0,
        explanation.DRAM_READ: 1e8,
        explanation.L2_HIT: 40.0,
    }
    after = {
        explanation.BANK_LD: 4.2e6,
        explanation.OCCUPANCY: 60.0,
        explanation.DRAM_READ: 1.01e8,
        explanation.L2_HIT: 40.5,
    }
    moved = ncu.moved_most(before, after)
    assert [m.metric for m in moved] == [explanation.BANK_LD, explanation.OCCUPANCY]
    assert moved[0].text() == "smem bank conflicts (ld) 0→4.2M"


def test_command_never_changes_clocks_and_profiles_only_the_benchmark() -> None:
    target = ncu.Target(
        Path("/b/kernelwatch_bench_transpose"), "transpose/best/n:4/manual_time", ("_Zk",)
    )
    argv = ncu.command("/usr/local/cuda/bin/ncu", target, Path("/tmp/x.ncu-rep"))
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert "--benchmark_repetitions=1" in argv
    assert "--benchmark_filter=^(transpose/best/n:4/manual_time)$" in argv
    assert argv[argv.index("--kernel-name") + 1] == "regex:^(_Zk)$"


KERNELS_A = {
    "version": 2,
    "arch": "sm_90",
    "sass": "cuobjdump",
    "benchmarks": {
        "transpose/best/4": {
            "binary": "kernelwatch_bench_transpose",
            "kernels": [
                {
                    "name": "_Zk",
                    "grid": [4, 4, 1],
                    "block": [32, 8, 1],
                    "dynamic_shared_bytes": 0,
                    "blocks_per_sm": 8,
                }
            ],
        },
        "copy/4": {
            "binary": "kernelwatch_bench_transpose",
            "kernels": [
                {
                    "name": "_Zc",
                    "grid": [4, 1, 1],
                    "block": [256, 1, 1],
                    "dynamic_shared_bytes": 0,
                    "blocks_per_sm": 8,
                }
            ],
        },
    },
    "code": {
        "kernelwatch_bench_transpose": {
            "_Zk": {"sass": "aaaa", "instructions": 70, "registers": 18},
            "_Zc": {"sass": "cccc", "instructions": 20, "registers": 8},
        }
    },
}


def _report(tmp_path: Path):
    kernels_b = json.loads(json.dumps(KERNELS_A))
    kernels_b["code"]["kernelwatch_bench_transpose"]["_Zk"]["sass"] = "bbbb"
    spread = [1.0, 1.001, 0.999, 1.002, 0.998, 1.0005]
    base = result_set(
        {
            "transpose/best/n:4/manual_time": [100.0 * x for x in spread],
            "copy/n:4/manual_time": [50.0 * x for x in spread],
        },
        context={**H100_CONTEXT, "kernelwatch_kernels": KERNELS_A},
    )
    cont = result_set(
        {
            "transpose/best/n:4/manual_time": [130.0 * x for x in spread],
            "copy/n:4/manual_time": [50.0 * x for x in reversed(spread)],
        },
        context={**H100_CONTEXT, "kernelwatch_kernels": kernels_b},
    )
    return compare(base, cont, resolve_metric("real_time"), Settings())


def test_explain_profiles_the_regression_and_renders_it(tmp_path: Path) -> None:
    report = _report(tmp_path)
    seen = []

    def fake(tool: str, target: ncu.Target, timeout: float) -> ncu.Profile:
        seen.append((target.binary.name, target.run_name))
        conflicts = 0.0 if target.binary.parent.name == "a" else 4.2e6
        return ncu.Profile(
            {explanation.BANK_LD: conflicts, explanation.OCCUPANCY: 90.0}, ("_Zk",), 1.0
        )

    builds = {
        side: explain.Build(
            {"kernelwatch_bench_transpose": tmp_path / side.lower() / "kernelwatch_bench_transpose"}
        )
        for side in ("A", "B")
    }
    explained = explain.explain(report, builds, budget=60, ncu_path="ncu", profiler=fake)
    assert len(seen) == 2  # the REGRESSION only, once per side
    found = explained.explanations["transpose/best/n:4/manual_time"]
    assert found.kernel.change.value == "kernel code changed"
    assert [m.metric for m in found.moved] == [explanation.BANK_LD]
    assert explained.explanations["copy/n:4/manual_time"].kernel.change.value == "kernel identical"
    table = render.render_table(explained)
    assert re.search(
        r"-> kernel code changed: .*SASS aaaa→bbbb.*smem bank conflicts \(ld\) 0→4.2M", table
    )
    assert "kernels of the benchmarks: 1 code changed, 1 identical" in table
    markdown = render.render_markdown(explained)
    assert "*kernel code changed" in markdown and "<details><summary>Why" in markdown
    document = json.loads(render.render_json(explained))
    rows = {b["name"]: b for b in document["benchmarks"]}
    moved = rows["transpose/best/n:4/manual_time"]["explanation"]["counters"]["moved"]
    assert moved[0]["baseline"] == 0.0 and moved[0]["contender"] == 4.2e6
    path = tmp_path / "explanations.json"
    explain.write_explanations(explained, path)
    back = explain.read_explanations(path)["transpose/best/n:4/manual_time"]
    assert back.moved[0].after == 4.2e6 and back.kernel.change.value == "kernel code changed"


def test_missing_ncu_is_one_note_and_nothing_else(tmp_path: Path) -> None:
    builds = {s: explain.Build({}) for s in ("A", "B")}
    lines: list[str] = []
    explained = explain.explain(_report(tmp_path), builds, say=lines.append, ncu_path="")
    assert any("ncu not found" in n for n in explained.notes)
    assert lines == [
        "kernelwatch: ncu not found (Nsight Compute): no hardware counters in the explanation"
    ]


def test_nothing_regressed_costs_nothing(tmp_path: Path) -> None:
    report = _report(tmp_path)
    report = compare(report.baseline, report.baseline, report.metric, Settings())
    explained = explain.explain(
        report,
        {s: explain.Build({}) for s in ("A", "B")},
        ncu_path="ncu",
        profiler=lambda *a: (_ for _ in ()).throw(AssertionError("profiled")),
    )
    assert any("0 s added" in n for n in explained.notes)


def test_counter_values_read_alike_in_one_column() -> None:
    assert [explanation.format_number(v) for v in (1820, 492_000, 65.5e6, 999, 2.64, 0.005, 0)] == [
        "1.82k",
        "492k",
        "65.5M",
        "999",
        "2.64",
        "0.005",
        "0",
    ]
