"""Which kernels each benchmark launches, and whether they changed between two results.

The harness writes one record per benchmark instance (bench/harness/.../kernel_record.hpp: the
launch function captured into a CUDA graph) to the file named by KERNELWATCH_KERNELS_OUT; the
runner reads it, adds each kernel's SASS fingerprint and resources from `cuobjdump` (sass.py),
and stores the lot in the result's context under `kernelwatch_kernels` (docs/results.md):

    {"version": 2, "arch": "sm_90", "sass": "cuobjdump" | null, "note": "why no SASS" | absent,
     "benchmarks": {INSTANCE: {"binary": NAME, "kernels": [LAUNCH, ...], "error": MSG?}},
     "code": {BINARY: {MANGLED: {"sass": HASH, "instructions": N, "registers": R,
                                 "static_shared_bytes": S, "local_bytes": L, "stack_bytes": K}}}}

LAUNCH = {"name", "grid", "block", "dynamic_shared_bytes", "blocks_per_sm"}. INSTANCE is the
harness's instance key (family/args, e.g. "transpose/best/float/4096/4096"); instance_key()
turns a result's run_name into it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch.errors import InputError
from kernelwatch.explanation import Change, Explanation, KernelChange, short_name
from kernelwatch.names import instance_key

if TYPE_CHECKING:  # cuobjdump's listings are read where a run records kernels, not in compare
    from kernelwatch import sass
    from kernelwatch.compare import Report

CONTEXT_KEY = "kernelwatch_kernels"
ENV = "KERNELWATCH_KERNELS_OUT"  # the harness's kernel_record_env
# 2: SASS fingerprints name a branch target by the index of the instruction it reaches
# (sass.normalise). Fingerprints of two versions hash two normalisations: not compared.
VERSION = 2

_LAUNCH_KEYS = ("grid", "block", "dynamic_shared_bytes")
_CODE_KEYS = ("registers", "static_shared_bytes", "local_bytes", "stack_bytes")


def joined(contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The kernel records of parts of one run (`merge`: shards, `run --gpus all --split`), as
    one: each part records only the benchmarks it ran and the kernels they launched. None when
    no part has records."""
    found = [c[CONTEXT_KEY] for c in contexts if isinstance(c.get(CONTEXT_KEY), dict)]
    if not found:
        return None
    whole: dict[str, Any] = {**found[0], "benchmarks": {}, "code": {}}
    for part in found:
        whole["benchmarks"].update(part.get("benchmarks") or {})
        for binary, kernels in (part.get("code") or {}).items():
            whole["code"].setdefault(binary, {}).update(kernels)
    return whole


def read_records(path: Path) -> list[dict[str, Any]]:
    """The harness's JSON lines; a torn last line (a crashed binary) is left out."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("benchmark"), str):
            records.append(record)
    return records


def context_entry(
    records: Mapping[Path, Sequence[Mapping[str, Any]]], compute_capability: str | None
) -> dict[str, Any]:
    """The `kernelwatch_kernels` context value from each binary's records, with the SASS
    fingerprints from cuobjdump where it can be run (else a note says why not)."""
    benchmarks: dict[str, Any] = {}
    code: dict[str, dict[str, dict[str, Any]]] = {}
    entry: dict[str, Any] = {"version": VERSION, "arch": None, "sass": None}
    from kernelwatch import sass

    notes = []
    tool = sass.find_tool("cuobjdump")
    if tool is None:
        notes.append("cuobjdump not found: kernels compared by resources and launch only")
    # cuobjdump takes 2-3.5 s a binary whatever its size: the suite's nine took 26 s one after
    # another after a run on an H100 (27 s on a 2-core CI machine). Each is a process of its own,
    # so they run side by side, after the measurement (never beside it).
    with ThreadPoolExecutor(max_workers=max(1, min(len(records), os.cpu_count() or 1))) as pool:
        listings = {
            binary: pool.submit(sass.kernels_for_gpu, binary, compute_capability, tool)
            for binary in (records if tool is not None else ())
        }
    for binary, found in records.items():
        listing: dict[str, sass.Kernel] = {}
        if tool is not None:
            try:
                arch, listing = listings[binary].result()
                entry["arch"] = entry["arch"] or arch
                entry["sass"] = "cuobjdump"
                if arch is None:
                    notes.append(
                        f"{binary.name}: no SASS for compute capability "
                        f"{compute_capability} (PTX only)"
                    )
            except InputError as exc:
                notes.append(str(exc))
        table = code.setdefault(binary.name, {})
        for record in found:
            launches = []
            for kernel in record.get("kernels") or []:
                if not isinstance(kernel, dict):
                    continue
                name = str(kernel.get("name", ""))
                launches.append(
                    {k: kernel.get(k) for k in ("name", *_LAUNCH_KEYS, "blocks_per_sm")}
                )
                table.setdefault(name, _code_of(kernel, listing.get(name)))
            benchmarks[record["benchmark"]] = {
                "binary": binary.name,
                "kernels": launches,
                **({"error": str(record["error"])} if record.get("error") else {}),
            }
    entry["benchmarks"] = benchmarks
    entry["code"] = code
    if notes:
        entry["note"] = "; ".join(dict.fromkeys(notes))
    return entry


def _code_of(launch: Mapping[str, Any], listing: sass.Kernel | None) -> dict[str, Any]:
    found: dict[str, Any] = {k: launch.get(k) for k in _CODE_KEYS if launch.get(k) is not None}
    if listing is not None:
        found["sass"] = listing.fingerprint
        found["instructions"] = listing.instructions
        found.setdefault("registers", listing.resources.get("REG"))
        found.setdefault("static_shared_bytes", listing.resources.get("SHARED"))
        found.setdefault("local_bytes", listing.resources.get("LOCAL"))
        found["stack_bytes"] = listing.resources.get("STACK")
    return found


# --- did it change? ---------------------------------------------------------------------------


def classify(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, run_name: str
) -> KernelChange:
    """How `run_name`'s kernels differ between two `kernelwatch_kernels` context values."""
    key = instance_key(run_name)
    side_a = _benchmark(a, key)
    side_b = _benchmark(b, key)
    for which, side, entry in (("baseline", side_a, a), ("contender", side_b, b)):
        if entry is None:
            return KernelChange(Change.UNKNOWN, (f"the {which} has no kernel records",))
        if side is None:
            return KernelChange(Change.UNKNOWN, (f"no kernel record in the {which}",))
        if side.get("error"):
            return KernelChange(Change.UNKNOWN, (f"{which}: capture failed: {side['error']}",))
        if _launches(side) is None:
            # A result file is input: a record of another shape is no explanation, and must
            # not end compare or report with an internal error (the verdict stands).
            why = f"the {which}'s kernel record is not as `run` writes it (docs/results.md)"
            return KernelChange(Change.UNKNOWN, (why,))
    assert a is not None and b is not None and side_a is not None and side_b is not None
    launches_a, launches_b = _launches(side_a) or [], _launches(side_b) or []
    names_a = [k.get("name") for k in launches_a]
    names_b = [k.get("name") for k in launches_b]
    if [stable_name(n) for n in names_a] != [stable_name(n) for n in names_b]:
        return KernelChange(
            Change.CODE,
            (f"kernels launched {_names(names_a)} → {_names(names_b)}",),
            tuple(
                (side_a["binary"], x, side_b["binary"], y)
                for x, y in zip(names_a, names_b)
                if x and y
            ),
        )
    code_changes: list[str] = []
    changed: list[tuple[str, str, str, str]] = []
    launch_changes: list[str] = []
    unknown: list[str] = []
    # SASS and registers of two architectures (cards of two models, --allow-gpu-mismatch)
    # always differ: that is the card, not a change of the kernel's code.
    arch_a, arch_b = a.get("arch"), b.get("arch")
    other_arch = bool(arch_a and arch_b and arch_a != arch_b)
    other_version = a.get("version") != b.get("version")
    for launch_a, launch_b in zip(launches_a, launches_b):
        name, name_b = str(launch_a.get("name")), str(launch_b.get("name"))
        code_a = {} if other_arch else _code(a, side_a["binary"], name)
        code_b = {} if other_arch else _code(b, side_b["binary"], name_b)
        moved = [
            f"{_LABELS[k]} {code_a.get(k)}→{code_b.get(k)}"
            for k in _CODE_KEYS
            if code_a.get(k) is not None
            and code_b.get(k) is not None
            and code_a.get(k) != code_b.get(k)
        ]
        if code_a.get("sass") and code_b.get("sass") and not other_version:
            if code_a["sass"] != code_b["sass"]:
                counts = ""
                if code_a.get("instructions") is not None:
                    counts = f" ({code_a.get('instructions')}→{code_b.get('instructions')} instr)"
                sass_a, sass_b = str(code_a["sass"])[:8], str(code_b["sass"])[:8]
                moved.insert(0, f"SASS {sass_a}→{sass_b}{counts}")
        elif not moved:
            unknown.append(name)
        if moved:
            code_changes.append(f"{short_name(name)}: {', '.join(moved)}")
            changed.append((side_a["binary"], name, side_b["binary"], name_b))
        shape = [
            f"{_LABELS[k]} {_shape(launch_a.get(k))}→{_shape(launch_b.get(k))}"
            for k in _LAUNCH_KEYS
            if launch_a.get(k) != launch_b.get(k)
        ]
        if shape:
            if launch_a.get("blocks_per_sm") != launch_b.get("blocks_per_sm"):
                shape.append(
                    f"blocks/SM {launch_a.get('blocks_per_sm')}→{launch_b.get('blocks_per_sm')}"
                )
            launch_changes.append(f"{short_name(name)}: {', '.join(shape)}")
    if code_changes:
        return KernelChange(Change.CODE, tuple(code_changes + launch_changes), tuple(changed))
    if launch_changes:
        return KernelChange(Change.LAUNCH, tuple(launch_changes))
    if other_arch:
        why = f"SASS for {arch_a} and {arch_b} (other GPUs): machine code not compared"
        return KernelChange(Change.UNKNOWN, (f"launch alike; {why}",))
    if unknown:
        why = (
            a.get("note")
            or b.get("note")
            or (
                f"SASS fingerprints of kernel records version {a.get('version')} and "
                f"{b.get('version')} (two kernelwatch releases)"
                if other_version
                else "no SASS fingerprint"
            )
        )
        return KernelChange(Change.UNKNOWN, (f"launch and resources alike; {why}",))
    if not launches_a:
        return KernelChange(Change.UNKNOWN, ("no kernel launched (copies only)",))
    return KernelChange(Change.IDENTICAL)


_LABELS = {
    "registers": "registers",
    "static_shared_bytes": "static shared B",
    "local_bytes": "local B",
    "stack_bytes": "stack B",
    "grid": "grid",
    "block": "block",
    "dynamic_shared_bytes": "dynamic shared B",
}


def _benchmark(entry: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if not isinstance(entry, Mapping):
        return None
    benchmarks = entry.get("benchmarks")
    found = benchmarks.get(key) if isinstance(benchmarks, Mapping) else None
    return found if isinstance(found, Mapping) else None


def _launches(side: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """A benchmark record's launches, None when the record is not shaped as `run` writes it
    (its binary a name, its kernels a list of objects)."""
    found = side.get("kernels")
    if not isinstance(side.get("binary"), str) or not isinstance(found, list):
        return None
    return found if all(isinstance(k, Mapping) for k in found) else None


def _code(entry: Mapping[str, Any], binary: str, name: str) -> Mapping[str, Any]:
    """A kernel's code entry ({} where the records have none, or none of the right shape)."""
    code = entry.get("code")
    table = code.get(binary) if isinstance(code, Mapping) else None
    found = table.get(name) if isinstance(table, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _shape(value: Any) -> str:
    if isinstance(value, list):
        return "x".join(str(v) for v in value)
    return str(value)


def _names(names: Sequence[Any]) -> str:
    return "[" + ", ".join(short_name(str(n)) for n in names) + "]"


def classify_all(
    a: Mapping[str, Any], b: Mapping[str, Any], names: Sequence[str]
) -> dict[str, KernelChange] | None:
    """Every name's change, or None when neither context has kernel records."""
    entry_a, entry_b = a.get(CONTEXT_KEY), b.get(CONTEXT_KEY)
    if not isinstance(entry_a, Mapping) and not isinstance(entry_b, Mapping):
        return None
    return {
        name: classify(
            entry_a if isinstance(entry_a, Mapping) else None,
            entry_b if isinstance(entry_b, Mapping) else None,
            name,
        )
        for name in names
    }


def classified(report: Report) -> Report:
    """`report` with each benchmark's kernel change from the results' kernel records (free: no
    build, no tool; what every printed report shows), itself where neither side has records.
    explain.py adds the rest (SASS diffs, ncu counters) where builds are at hand."""
    names = [c.name for c in report.comparisons]
    changes = classify_all(report.baseline.context, report.contender.context, names)
    if not changes:
        return report
    explanations = {name: Explanation(kernel=change) for name, change in changes.items()}
    return dataclasses.replace(report, explanations=explanations)


# At most 9 digits: a length is never longer, and `\d+` took seconds a name of 10,000 digits
# (every start tried to its end) and ended in a ValueError past 4,300 (int's limit).
_ANONYMOUS = re.compile(r"(\d{1,9})_GLOBAL__N__")


def stable_name(mangled: Any) -> str:
    """A mangled name without its anonymous namespaces' ids, which nvcc draws anew in every
    build (`50_GLOBAL__N__bfb7b470_12_reduction_cu_6554246a_1304` in one build of
    reduction.cu, `..._1298` in the next, same source): the same kernel keeps its name."""
    text, out, at = str(mangled), [], 0
    for match in _ANONYMOUS.finditer(text):
        if match.start() < at:
            continue
        length = int(match.group(1))
        out.append(text[at : match.start()] + "_GLOBAL__N_")
        at = match.start(1) + len(match.group(1)) + length
    return "".join(out) + text[at:]
