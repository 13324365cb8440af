#!/usr/bin/env python3
"""The kernels' tables (each family's page, families/<family>/README.md), recomputed from the committed H200 baseline (the medians of its
repetitions): every cell to the precision it is written with. test_lessons.py checks them; after
the baseline is re-measured, this rewrites them.

    PYTHONPATH=tools python3 scripts/kernels_tables.py           rewrite the pages' cells
    PYTHONPATH=tools python3 scripts/kernels_tables.py --check   list the stale cells (exit 1)

Only the tables: the prose's figures and ranges over cards are checked by test_lessons.py's
effects and are rewritten by hand.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelwatch.files import write_atomic
from kernelwatch.loading import load
from kernelwatch.results import ResultSet

REPO = Path(__file__).resolve().parents[1]
H200 = REPO / "baselines" / "nvidia-h200-sm90"
# One page per family, beside its code; docs/kernels.md says how they were measured.
PAGES = sorted(REPO.glob("families/*/README.md"))
SUFFIX = "/manual_time"


def reference(section: str, name: str) -> str:
    """The benchmark an "of reference" column is taken against (per family, as its page says)."""
    if section == "reduction":  # the streaming read of the same operation, type and size
        return re.sub(r"/(sum|dot)/\w+/", r"/\1/streaming/", name)
    if section == "shared_banks":  # stride 1 of the same word size
        return re.sub(r"/(read|padded)/(u\d+)/.*", r"/read/\2/stride:1", name)
    if section == "local_memory":
        return re.sub(r"/(local_array|register_capped)/", "/registers/", name)
    if section == "transfers":  # pinned at the same size and direction
        return name.replace("/pageable/", "/pinned/")
    fixed = {
        "coalescing": "coalescing/memcpy_d2d",
        "transpose": "transpose/copy_rows/rows:8192/cols:8192/block_rows:8",
        "occupancy": "occupancy/copy/block:256",
    }
    return fixed[section]


@dataclass(frozen=True)
class Cell:
    section: str  # the family
    name: str  # the benchmark, as the baseline names it (without /manual_time)
    column: str  # the table's header
    text: str  # the cell


def cells(text: str) -> list[Cell]:
    """Every cell of every benchmark table of a family's page."""
    cells: list[Cell] = []
    section, header = "", [""]
    for line in text.splitlines():
        heading = re.match(r"# .*\(`(\w+)/`\)", line)
        if heading:
            section = heading.group(1)
        elif line.startswith("| benchmark") or line.startswith("| overlap"):
            header = [c.strip() for c in line.strip("|").split("|")]
        row = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if row:
            name = row.group(1)
            if "(8192²)" in header[0]:  # the transposes' short names
                variant, _, rest = name.partition("/")
                name = "/".join(["transpose", variant, "rows:8192/cols:8192"] + [rest] * bool(rest))
            values = [c.strip() for c in row.group(2).split("|")]
            cells += [Cell(section, name, h, v) for h, v in zip(header[1:], values)]
    return cells


def number(text: str) -> tuple[float, float]:
    """A cell's number and half a unit of its last digit (a percentage as a fraction)."""
    found = re.search(r"[\d.]+", text.replace("**", ""))
    assert found, text
    digits = found.group(0)
    half = 0.5 * 10.0 ** -(len(digits.partition(".")[2]))
    scale = 0.01 if "%" in text else 1.0
    return float(digits) * scale, half * scale


def recompute(result: ResultSet, cell: Cell) -> float:
    def median(name: str, key: str) -> float:
        return float(np.median(result.benchmark(name + SUFFIX).values[key]))

    name, column = cell.name, cell.column
    rate = {"shared_banks": "shared_bytes_per_second", "matmul": "flop_per_second"}
    key = rate.get(cell.section, "bytes_per_second")
    if column == "time (µs)":
        return median(name, "real_time") / 1e3
    if column == "GB/s":
        return median(name, "bytes_per_second") / 1e9
    if column == "shared TB/s":
        return median(name, "shared_bytes_per_second") / 1e12
    if column == "TFLOP/s":
        return median(name, "flop_per_second") / 1e12
    if column == "CV":
        times = result.benchmark(name + SUFFIX).values["real_time"]
        return float(np.std(times, ddof=1) / np.mean(times))
    if column == "speed-up":  # the overlap over one stream
        return median(re.sub(r"streams:\d+", "streams:1", name), "real_time") / median(
            name, "real_time"
        )
    if column.startswith("of ") and cell.section == "local_memory":  # a time: reference / it
        return median(reference("local_memory", name), "real_time") / median(name, "real_time")
    if column.startswith("of ") and cell.section == "matmul":
        if "memcpy" in cell.text:
            bps = "bytes_per_second"
            return median(name, bps) / median("coalescing/memcpy_d2d", bps)
        size = name.rpartition("/")[2]
        return median(name, key) / median(f"matmul/cublas_sgemm/{size}", key)
    if column.startswith("of "):
        return median(name, key) / median(reference(cell.section, name), key)
    counters = {
        "conflict ways": "bank_conflict_ways",
        "registers": "registers_per_thread",
        "local bytes": "local_bytes_per_thread",
        "occupancy": "occupancy",
        "blocks/SM": (
            "resident_blocks_per_sm" if cell.section == "local_memory" else "blocks_per_sm"
        ),
    }
    return median(name, counters[column])


def stale(text: str, result: ResultSet) -> list[str]:
    """The cells whose number is not the baseline's to the precision shown."""
    wrong = []
    for cell in cells(text):
        if not cell.text:
            continue
        value = recompute(result, cell)
        stated, half = number(cell.text)
        if abs(value - stated) > half * 1.0001:
            wrong.append(f"{cell.name} {cell.column}: {cell.text}, baseline {value:.6g}")
        copies = re.search(r"\((\d+) copies\)", cell.text)
        if copies:
            counted = result.benchmark(cell.name + SUFFIX).values["copies_per_launch"]
            if float(np.median(counted)) != float(copies.group(1)):
                wrong.append(f"{cell.name} {cell.column}: {cell.text}, baseline {counted}")
    return wrong


def regenerate(text: str, result: ResultSet) -> str:
    """`text` with every table cell's number replaced by the baseline's, at the same precision."""
    found = iter(cells(text))
    out = []
    for line in text.splitlines():
        row = re.match(r"(\| `[^`]+` \|)(.*)\|$", line)
        if row:
            parts = [c.strip() for c in row.group(2).split("|")]
            new = []
            for part in parts:
                cell = next(found)
                if not part:
                    new.append(part)
                    continue
                value = recompute(result, cell) * (100 if "%" in part else 1)
                digits = re.search(r"[\d.]+", part.replace("**", ""))
                assert digits, part
                places = len(digits.group(0).partition(".")[2])
                new.append(part.replace(digits.group(0), f"{value:.{places}f}", 1))
            line = row.group(1) + "".join(f" {c} |" if c else " |" for c in new)
        out.append(line)
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    result = load(H200)
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    wrong: list[str] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if argv:
            wrong += stale(text, result)
        else:
            write_atomic(page, regenerate(text, result))
    if argv:
        print("\n".join(wrong) or "families/*/README.md: every table cell is the baseline's")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
