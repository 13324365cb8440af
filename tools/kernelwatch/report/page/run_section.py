"""The page's first section, the run: its GPU, software, settings and files, and the
benchmarks that failed in it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape as _e
from typing import Any

from kernelwatch.report.build import Page
from kernelwatch.report.page.markup import when
from kernelwatch.results import HOST_BOUND_ON_KEY, anchoring, gpu_model, slowed_on_purpose


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def context_rows(context: Mapping[str, Any], page: Page) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []

    def add(label: str, value: Any) -> None:
        if value not in (None, ""):
            rows.append((label, str(value)))

    add("GPU", gpu_model(context) or "not recorded")
    sms = context.get("gpu_sm_count")
    memory = _number(context.get("gpu_memory_bytes"))
    l2 = _number(context.get("gpu_l2_cache_bytes"))
    parts = [
        f"{sms} SMs" if sms else "",
        f"{memory / 2**30:.0f} GiB" if memory else "",
        f"{l2 / 2**20:.0f} MiB L2" if l2 else "",
    ]
    add("GPU size", ", ".join(p for p in parts if p))
    peak = _number(context.get("gpu_peak_bandwidth_bytes_per_second"))
    add("DRAM peak (theoretical)", f"{peak / 1e9:,.0f} GB/s" if peak else None)
    sm_clock = _number(context.get("gpu_sm_clock_khz"))
    mem_clock = _number(context.get("gpu_memory_clock_khz"))
    if sm_clock or mem_clock:
        add(
            "clocks",
            " / ".join(
                p
                for p in (
                    f"SM {sm_clock / 1e3:.0f} MHz" if sm_clock else "",
                    f"memory {mem_clock / 1e3:.0f} MHz" if mem_clock else "",
                )
                if p
            ),
        )
    add("ECC", context.get("gpu_ecc"))
    add("driver", context.get("gpu_driver_version"))
    runtime, api = context.get("cuda_runtime_version"), context.get("cuda_driver_api_version")
    if runtime or api:
        add("CUDA", f"runtime {runtime or '?'}, driver API {api or '?'}")
    add("commit", context.get("kernelwatch_git_commit") or "not recorded")
    add("date", when(context.get("date") or context.get("kernelwatch_run_started")))
    seconds = _number(context.get("kernelwatch_run_seconds"))
    add("run took", f"{seconds / 60:.1f} min" if seconds else None)
    add("build", context.get("kernelwatch_build_type"))
    add(
        "L2 before each launch",
        {"cold": "flushed (cold)", "hot": "kept (hot)"}.get(
            str(context.get("kernelwatch_cache_mode")), context.get("kernelwatch_cache_mode")
        ),
    )
    add("repetitions", context.get("kernelwatch_repetitions"))
    add(
        "max sampling time per repetition",
        f"{context['kernelwatch_max_time']} s" if context.get("kernelwatch_max_time") else None,
    )
    add("random interleaving", context.get("kernelwatch_random_interleaving"))
    add("filter", context.get("kernelwatch_filter"))
    elsewhere = context.get(HOST_BOUND_ON_KEY)
    add("host-bound benchmarks", f"measured on {elsewhere}, not this GPU" if elsewhere else None)
    add("host", context.get("host_name"))
    add("kernelwatch", context.get("kernelwatch_version"))
    add("result file", str(page.result))
    counted = f"{page.benchmarks}"
    if page.errors:
        counted += f", {len(page.errors)} with errors"
    if page.skipped:
        counted += f", {len(page.skipped)} skipped"
    add("benchmarks", counted)
    return rows


def context_section(page: Page) -> str:
    cells = "".join(
        f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in context_rows(page.context, page)
    )
    out = [f'<section id="run"><h2>The run</h2><dl class="context">{cells}</dl>']
    slowed = slowed_on_purpose(page.context)
    if slowed:
        out.append(
            f'<div class="box"><b>Slowed down on purpose</b>: this run was {_e(slowed)}; it '
            "shows what kernelwatch catches, not how the code performs.</div>"
        )
    anchor = anchoring(page.context)
    if anchor:
        # `run` judged it against its anchor; this page compares it with the committed baseline
        # (what run built identically to that baseline's commit reads as run read it)
        out.append(
            f'<div class="box"><b>Anchor</b>: <code>run</code>\'s verdict was {_e(anchor)}. The '
            "comparison below is with the committed baseline (another card), but for the "
            "benchmarks run built identically to its commit, IDENTICAL as run judged them: the "
            "verdict of record is run's report.</div>"
        )
    if page.errors:
        items = "".join(
            f"<li><code>{_e(n)}</code>: {_e(m)}</li>" for n, m in sorted(page.errors.items())
        )
        out.append(
            f'<div class="box bad"><b>{len(page.errors)} benchmark(s) failed in this run</b>'
            f"<ul>{items}</ul></div>"
        )
    out.append("</section>")
    return "".join(out)
