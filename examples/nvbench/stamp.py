#!/usr/bin/env python3
"""Stamp an nvbench JSON file with what nvbench does not record and kernelwatch keeps: the
measured project's commit and the run's date (`meta.context`), the card's UUID and the driver
(`devices[].uuid`, `devices[].driver_version`). kernelwatch reads them into the result's
context (docs/results.md, "nvbench results"): the baseline's manifest and the history name the
commit, and runs on one card are told apart from runs on other cards (docs/measurement.md).

    stamp.py RUN.json [--commit SHA] [--uuid GPU-...] [--driver VERSION] [--date ISO]
                      [--context KEY=VALUE ...]

Defaults: the commit of the git checkout in the current folder; the date when nvbench wrote
the file; the UUID and driver from nvidia-smi, for a file of one device, when CUDA_VISIBLE_DEVICES
names one card by UUID or nvidia-smi lists exactly one (else pass --uuid). Standard library
only; the file is rewritten in place (its sample files are untouched).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path


def _run(*argv: str) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _card(uuid: str | None) -> tuple[str | None, str | None]:
    """(uuid, driver) of the card the run used, from nvidia-smi."""
    listed = _run("nvidia-smi", "--query-gpu=uuid,driver_version", "--format=csv,noheader")
    cards = [tuple(p.strip() for p in line.split(",")) for line in (listed or "").splitlines()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    wanted = uuid or (visible if visible.startswith("GPU-") and "," not in visible else None)
    for card in cards:
        if len(card) == 2 and wanted and card[0].startswith(wanted):
            return card[0], card[1]
    if wanted:
        return wanted, None
    if len(cards) == 1 and len(cards[0]) == 2:
        return cards[0][0], cards[0][1]
    return None, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="nvbench --json/--jsonbin output")
    parser.add_argument("--commit", help="the measured project's commit (default: git HEAD)")
    parser.add_argument("--uuid", help="the card's UUID (default: from nvidia-smi)")
    parser.add_argument("--driver", help="the driver version (default: from nvidia-smi)")
    parser.add_argument("--date", help="ISO 8601 (default: when the file was written)")
    parser.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another context key (a build option, the runner), as many as needed",
    )
    args = parser.parse_args()
    document = json.loads(args.file.read_text())
    if not isinstance(document.get("meta"), dict) or not isinstance(document.get("devices"), list):
        print(f"stamp.py: {args.file}: not an nvbench JSON file", file=sys.stderr)
        return 2
    commit = args.commit or _run("git", "rev-parse", "HEAD")
    date = args.date or datetime.datetime.fromtimestamp(
        args.file.stat().st_mtime, datetime.timezone.utc
    ).isoformat(timespec="seconds")
    extra = [item.partition("=") for item in args.context]
    if any(not key or not sep for key, sep, _ in extra):
        print("stamp.py: --context takes KEY=VALUE", file=sys.stderr)
        return 2
    context = document["meta"].setdefault("context", {})
    context.update({key: value for key, _, value in extra})
    context.update({k: v for k, v in (("kernelwatch_git_commit", commit), ("date", date)) if v})
    devices = [d for d in document["devices"] if isinstance(d, dict)]
    uuid, driver = _card(args.uuid) if len(devices) == 1 else (None, None)
    if len(devices) == 1:
        devices[0].update(
            {k: v for k, v in (("uuid", uuid), ("driver_version", args.driver or driver)) if v}
        )
    elif args.uuid:
        print("stamp.py: --uuid needs a file of one device", file=sys.stderr)
        return 2
    partial = args.file.with_name(args.file.name + ".stamping")
    partial.write_text(json.dumps(document, indent=2) + "\n")
    partial.replace(args.file)
    stamped = devices[0].get("uuid") if len(devices) == 1 else None
    print(f"{args.file}: commit {commit or 'unknown'}, date {date}, card {stamped or 'unknown'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
