"""The harness's public headers (what a benchmark author includes) name Google Benchmark only
by its public names: `benchmark::internal` is Google Benchmark's to change (1.9 deprecates
`internal::Benchmark`), so only the harness's private sources and detail/ may use it."""

from __future__ import annotations

import re
from pathlib import Path

PUBLIC = Path(__file__).resolve().parents[2] / "bench" / "harness" / "include" / "kernelwatch"


def test_public_headers_name_no_google_benchmark_internals() -> None:
    headers = sorted(PUBLIC.glob("*.hpp"))
    assert len(headers) > 10, PUBLIC
    named = [
        f"{header.name}:{number}"
        for header in headers
        for number, line in enumerate(header.read_text().splitlines(), 1)
        if re.search(r"\bbenchmark::internal\b", line.split("//")[0])
    ]
    assert named == []
