"""The body of kernelwatch's pull-request comment: one comment per pull request and GPU model,
found again by a hidden marker on its first line and updated in place on every push
(.github/workflows/gpu.yml posts it; docs/ci.md)."""

from __future__ import annotations

import json
import re

# GitHub refuses comment bodies over 65,536 characters; room is kept for the head and foot.
MAX_BODY = 65_536
_MARKER_KEY = re.compile(r"[^a-z0-9._]+")


def marker_key(gpu: str) -> str:
    """The GPU as the marker names it: a slug (lowercase, no spaces, no `--`)."""
    return _MARKER_KEY.sub("-", gpu.lower()).strip("-") or "gpu"


def marker(gpu: str) -> str:
    """The hidden first line that identifies the comment of one GPU model:
    `<!-- kernelwatch:<gpu> -->`."""
    return f"<!-- kernelwatch:{marker_key(gpu)} -->"


def body(
    markdown: str,
    gpu_key: str,
    gpu_title: str,
    commit: str | None = None,
    run_url: str | None = None,
) -> str:
    """The comment: the marker, a heading naming the GPU, compare's Markdown report (its own
    heading one level down), and a line with the commit and the workflow run. A report too long
    for a comment is cut at a line, with a pointer to the job summary."""
    foot = []
    if commit:
        foot.append(f"commit `{commit[:12]}`")
    if run_url:
        foot.append(f"[workflow run and job summary]({run_url})")
    footer = f"\n\n<sub>Updated on every push: {' · '.join(foot)}</sub>\n" if foot else "\n"
    head = f"{marker(gpu_key)}\n## kernelwatch on {gpu_title}\n\n"
    report = markdown.strip()
    room = MAX_BODY - len(head) - len(footer) - 200
    if len(report) > room:
        cut = report.rfind("\n", 0, room)
        report = (
            report[: cut if cut > 0 else room]
            + "\n\n*(cut here: the report is longer than a comment can be; the job summary has "
            "all of it)*"
        )
    return head + report + footer


def json_instead(markdown: str) -> bool:
    """Whether the text given as the report is a JSON document: a result (which every other
    command takes first) or compare's --json, which would be posted as the comment."""
    text = markdown.lstrip()
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
