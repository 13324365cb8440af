"""On the GPU machine: does a whole `kernelwatch run` of the real suite hold a row for every
benchmark its binaries list (the assumption behind kernelwatch_whole_build, completeness.py)?

    python3 scripts/gpu/check_whole_build.py BUILD_DIR RESULT.json

Prints the counts and any benchmark listed without a row (or a row not listed); exit 1 then."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from kernelwatch import completeness, runner  # noqa: E402
from kernelwatch.names import row_name  # noqa: E402


def main(build_dir: str, result: str) -> int:
    listed = {
        n for job in runner.plan(runner.find_binaries(Path(build_dir)), None) for n in job.names
    }
    document = json.loads(Path(result).read_text())
    rows = {row_name(r) for r in document["benchmarks"]}
    marker = document["context"].get(completeness.WHOLE_BUILD_KEY)
    print(f"{completeness.WHOLE_BUILD_KEY}: {marker}; listed {len(listed)}, with rows {len(rows)}")
    for name in sorted(listed - rows):
        print(f"listed, no row: {name}")
    for name in sorted(rows - listed):
        print(f"row, not listed: {name}")
    return 0 if marker == "true" and listed == rows else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
