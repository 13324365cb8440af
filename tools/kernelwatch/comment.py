"""The body of kernelwatch's pull-request comment: one comment per pull request and GPU model,
found again by a hidden marker on its first line and updated in place on every push
(.github/workflows/gpu.yml posts it; docs/ci.md)."""

from __future__ import annotations

import html
import json
import re
import urllib.parse

from kernelwatch.errors import InputError, shortened
from kernelwatch.files import printable

# GitHub refuses comment bodies over 65,536 characters, counted in UTF-16 code units (an emoji
# or a CJK extension character is two); room is kept for the head and foot.
MAX_BODY = 65_536
# The GPU's name in the heading is cut, and the run's link left out, past these (UTF-16 units),
# so that the report always has room: a name or URL of 70,000 characters left it a negative
# room, and the body went past the limit.
MAX_TITLE = 200
MAX_URL = 2_000
# A marker past this leaves no room for the rest at its longest (the heading of a cut name,
# 260 units; a footer with the longest link, 2,120; the line saying the report was cut).
MAX_MARKER = MAX_BODY - 4_000
_MARKER_KEY = re.compile(r"[^a-z0-9._]+")
_CUT = "*(cut here: the report is longer than a comment can be; the job summary has all of it)*"
# What a cut closes: a code block, and a `<details>` fold, it was made in.
_FENCE_END = "\n```"
_FOLD_END = "\n\n</details>"


def marker_key(gpu: str) -> str:
    """The GPU as the marker names it: a slug (lowercase, no spaces, no `--`)."""
    return _MARKER_KEY.sub("-", gpu.lower()).strip("-") or "gpu"


def marker(gpu: str) -> str:
    """The hidden first line that identifies the comment of one GPU model:
    `<!-- kernelwatch:<gpu> -->`. Refused (bad input) where no comment can hold it: it is not
    shortened, as the workflow finds the comment by it (--marker-only)."""
    tag = f"<!-- kernelwatch:{marker_key(gpu)} -->"
    if utf16_length(tag) > MAX_MARKER:
        raise InputError(
            f"the comment's marker {shortened(tag, 60)} is {utf16_length(tag):,} characters: no "
            f"comment can hold it (GitHub's limit: {MAX_BODY:,}); name the GPU with a shorter "
            "--gpu"
        )
    return tag


def body(
    markdown: str,
    gpu_key: str,
    gpu_title: str,
    commit: str | None = None,
    run_url: str | None = None,
) -> str:
    """The comment: the marker, a heading naming the GPU, compare's Markdown report (its own
    heading one level down), and a line with the commit and the workflow run. A report too long
    for a comment is cut at a line, with a pointer to the job summary. Refuses (bad input) only a
    marker too long for any comment (`marker`)."""
    # (a name not UTF-8, a lone surrogate, is written as \xNN: counted as written)
    markdown, gpu_title = printable(markdown), printable(gpu_title)
    foot = []
    shown = " ".join(printable(commit or "").split())[:12]
    if shown:
        foot.append(f"commit {code_span(shown)}")
    if run_url:
        # (<...> takes any URL but one with angle brackets or a line break, which GitHub's never has)
        url = urllib.parse.quote(printable(run_url), safe=":/?#[]@!$&'()*+,;=%~")
        if utf16_length(url) <= MAX_URL:
            foot.append(f"[workflow run and job summary](<{url}>)")
        else:
            foot.append(
                f"the workflow run's link is left out: its URL is {utf16_length(url):,} characters"
            )
    # (no "updated on every push": the nightly's issue is written once)
    footer = f"\n\n<sub>Report of {' · '.join(foot)}</sub>\n" if foot else "\n"
    head = f"{marker(gpu_key)}\n## kernelwatch on {heading_text(gpu_title)}\n\n"
    report = markdown.strip()
    room = MAX_BODY - utf16_length(head) - utf16_length(footer) - 200
    if utf16_length(report) > room:
        report = folded_rows_left_out(report, room)
    if utf16_length(report) > room:
        report = cut_at_a_line(report, room)
    return head + report + footer


def cut_at_a_line(report: str, room: int) -> str:
    """The most whole lines of `report` that fit in `room` UTF-16 units with the line saying the
    rest is cut, and the ends of a code block and of `<details>` left open there: cut inside
    a folded SASS diff, that line and the footer were shown as diff text, folded away. A first
    line too long is cut within (a pair split in two is dropped)."""
    room -= utf16_length(_CUT) + 2
    lines = report.split("\n")
    used, fence, folds = -1, False, 0  # (-1: no line break before the first line)
    kept, ends = 0, ""
    for i, line in enumerate(lines):
        used += utf16_length(line) + 1
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("<details>"):
            folds += 1
        elif not fence and line.startswith("</details>"):
            folds = max(folds - 1, 0)
        if used + utf16_length(_FENCE_END) * fence + utf16_length(_FOLD_END) * folds > room:
            if used > room:
                break
            continue
        kept, ends = i + 1, _FENCE_END * fence + _FOLD_END * folds
    text = "\n".join(lines[:kept]) + ends if kept else utf16_prefix(report, room)
    return f"{text}\n\n{_CUT}"


# A row of compare's Markdown table (render/markdown.py): its verdict in bold, then the name
# (a moved ncu metric's row, `| **sm__...** |`, is not one).
_ROW = re.compile(r"\| \*\*[A-Z]+\*\* \| `")
_LEFT_OUT = (
    "*{} more row(s) left out here: a comment has no room for them; the job summary has them all*"
)


def folded_rows_left_out(report: str, room: int) -> str:
    """The report with rows of its folded tables (`<details>`: the SAME rows) left out, the
    last first, until it fits in `room` UTF-16 units, each such table saying how many it lost.
    Cut at a line, a whole suite's report (356 rows, 80 KB on an H200) lost what follows its
    SAME rows: the notes (the level a limit stands on, its priors, what to drop from the
    baseline), and left its `<details>` open. Unchanged where the folded rows are not enough."""
    lines = report.split("\n")
    folded: list[int] = []  # indices of the rows inside <details>, in order
    inside = False
    for i, line in enumerate(lines):
        if line.startswith("<details>"):
            inside = True
        elif line.startswith("</details>"):
            inside = False
        elif inside and _ROW.match(line):
            folded.append(i)
    over = utf16_length(report) - room
    dropped: set[int] = set()
    for i in reversed(folded):
        if over <= 0:
            break
        if i + 1 not in dropped:  # a table's first row left out: room for its line saying so
            over += len(_LEFT_OUT.format(len(folded))) + 2
        dropped.add(i)
        over -= utf16_length(lines[i]) + 1
    if over > 0:
        return report
    out: list[str] = []
    count = 0
    for i, line in enumerate(lines):
        if i in dropped:
            count += 1
            continue
        if line.startswith("</details>") and count:
            out += [_LEFT_OUT.format(count), ""]
            count = 0
        out.append(line)
    return "\n".join(out)


def heading_text(text: str) -> str:
    """`text` (a GPU name from a result's context, or --gpu) as the heading's text: on one line,
    and HTML shown as written. A line break ended the heading, and a line `<!--` after it opened
    an HTML comment that hid the whole report on GitHub. Markdown is shown as written too, and
    a name past MAX_TITLE is cut, saying so."""
    text = " ".join(text.split())
    if utf16_length(text) > MAX_TITLE:
        text = f"{utf16_prefix(text, MAX_TITLE)}… (cut from {utf16_length(text):,} characters)"
    from kernelwatch.render.markdown import no_references  # (not for --marker-only)

    return no_references(html.escape(_MARKUP.sub(r"\\\1", text), quote=False))


# What makes emphasis, code, a link or strikethrough of a heading's text, or ends it (` #`).
_MARKUP = re.compile(r"([\\`*_\[\]~#])")


def utf16_length(text: str) -> int:
    """The length GitHub counts: UTF-16 code units."""
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of `text` within `units` UTF-16 units (a pair split in two is
    dropped)."""
    data = text.encode("utf-16-le", errors="surrogatepass")
    return data[: 2 * max(units, 0)].decode("utf-16-le", errors="ignore")


def code_span(text: str) -> str:
    """`text` as a Markdown code span, whatever it holds: a fence of one more backtick than its
    longest run, on one line (a commit given as `--commit` is not trusted to be hex)."""
    text = " ".join(text.split())
    runs = re.findall(r"`+", text)
    fence = "`" * (max((len(run) for run in runs), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def json_instead(markdown: str) -> bool:
    """Whether the text given as the report is a JSON document: a result (which every other
    command takes first) or compare's --json, which would be posted as the comment."""
    text = markdown.lstrip()
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except RecursionError:  # (JSON nested past the parser's depth: an internal error)
        return True
    except ValueError:
        return False
    return True
