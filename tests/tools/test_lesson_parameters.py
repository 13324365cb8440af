"""The lesson figures and benchmark names whose parameters are not the numbers a figure reads
(`matmul/simple/m:nan`, `m:abc`, `m:1.5`, `m:1e400`: another build's results, a renamed
benchmark). Google Benchmark's arguments are integers, so the suite never writes such a name:
its benchmark is not drawn, as an absent one is not, and the rest of its family's figure is.
A figure raised on it (`int("nan")`), or drew it at a size the suite has not, and the report
left the whole figure out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from conftest import GPU_DATA
from kernelwatch.loading import load
from kernelwatch.report import lessons
from kernelwatch.report.lessons import discovery
from kernelwatch.report.lessons.rundata import RunData

pytest.importorskip("matplotlib", reason="matplotlib is not installed (tools/kw setup installs it)")

# A whole-suite H200 run whose binaries mark the families' references.
MARKED = GPU_DATA / "h200-x4-card-d501b18d-marked" / "suite.json.gz"
SUFFIX = "/manual_time"

# (family, a benchmark its figure draws, the parameter renamed, its malformed text, the run
# filtered as --filter does, None for the whole run). The transpose figure picks its matrix from
# the names unless the run has 8192×8192: filtered to one shape, it read every shape's numbers.
CASES = [
    ("coalescing", "coalescing/offset/float/offset:6", "offset:6", "offset:6.5", None),
    (
        "transpose",
        "transpose/tiled/rows:4096/cols:16384/block_rows:8",
        "rows:4096",
        "rows:abc",
        r"^transpose/.*/rows:4096/cols:16384/",
    ),
    ("matmul", "matmul/simple/m:16384/n:16384", "m:16384", "m:nan", None),
    ("reduction", "reduction/sum/vectorized/float/n:1048576", "n:1048576", "n:1.5", None),
    ("transfers", "transfers/overlap/streams:2/bytes:67108864", "streams:2", "streams:1.5", None),
    ("shared_banks", "shared_banks/read/u64/stride:6", "stride:6", "stride:6.5", None),
    ("occupancy", "occupancy/copy/block:640", "block:640", "block:640.5", None),
    (
        "local_memory",
        "local_memory/register_capped/n:16777216/rounds:8",
        "rounds:8",
        "rounds:1e400",
        None,
    ),
]


class Reads(dict[str, Mapping[str, float]]):
    """A run's medians that note the benchmarks a figure reads: those it draws."""

    def __init__(self, medians: Mapping[str, Mapping[str, float]]) -> None:
        super().__init__(medians)
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> Mapping[str, float]:
        self.read.add(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        if name in self:
            self.read.add(name)
        return super().get(name, default)


@pytest.fixture(scope="module")
def suite() -> RunData:
    if not MARKED.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    return RunData.from_result(load(MARKED))


def drawn(
    base: RunData, medians: Mapping[str, Mapping[str, float]]
) -> tuple[lessons.Lesson, set[str]]:
    """The figure of `base` with these medians, as the report draws it (a figure that raises is
    Omitted there), and the benchmarks it read."""
    reads = Reads(medians)
    data = RunData(reads, base.context, base.unmeasured, base.registered)
    (lesson,) = lessons.draw_all(data)
    return lesson, reads.read


def renamed(name: str, part: str, malformed: str) -> str:
    parts = name.split("/")
    return "/".join(malformed if p == part else p for p in parts)


@pytest.mark.parametrize(
    "family, name, part, malformed, filtered", CASES, ids=[c[0] for c in CASES]
)
def test_a_benchmark_with_a_malformed_parameter_is_left_out_of_a_figure_drawn_without_it(
    suite: RunData,
    monkeypatch: pytest.MonkeyPatch,
    family: str,
    name: str,
    part: str,
    malformed: str,
    filtered: str | None,
) -> None:
    figure = dict(discovery.figures())[family]
    monkeypatch.setattr(lessons, "figures", lambda: ((family, figure),))  # this one only
    medians = {n: m for n, m in suite.medians.items() if filtered is None or re.search(filtered, n)}
    original = name + SUFFIX
    bad = renamed(original, part, malformed)
    assert original in medians and bad != original
    registered = {**suite.registered, bad: suite.registered[original]}  # (the same variant order)
    base = RunData(medians, suite.context, registered=registered)
    whole, whole_read = drawn(base, medians)
    assert isinstance(whole, lessons.Drawn) and original in whole_read  # (drawn when well formed)

    with_bad = {bad if n == original else n: m for n, m in medians.items()}
    lesson, read = drawn(base, with_bad)
    assert isinstance(lesson, lessons.Drawn), lesson
    assert bad not in read
    assert whole_read - {original} <= read  # every well-formed benchmark is still drawn
    without, _ = drawn(base, {n: m for n, m in medians.items() if n != original})
    assert isinstance(without, lessons.Drawn)
    assert (lesson.caption, lesson.svg) == (without.caption, without.svg)  # as if absent


@pytest.mark.parametrize(
    "text", ["abc", "1.5", "1e400", "-1e400", "1e300", "nan", "inf", "1k", "", "0x8"]
)
def test_a_parameter_google_benchmark_cannot_write_is_read_as_absent(text: str) -> None:
    data = RunData(
        {
            f"transfers/overlap/streams:{text}/manual_time": {"real_time": 1.0},
            "transfers/overlap/streams:4/manual_time": {"real_time": 2.0},
        }
    )
    entry = next(e for e in data.entries("transfers/overlap") if e.params["streams"] == text)
    assert entry.integer("streams") is None and entry.integer("bytes") is None
    assert data.sweep("transfers/overlap", "streams", "real_time") == [(4.0, 2.0)]
    assert data.value("transfers/overlap", "real_time", streams=1) is None


def test_a_number_asked_for_is_the_number_the_name_writes() -> None:
    """`streams=8` (a figure's number) is the name's `streams:08`: compared as text, `"8"`, it
    was not there."""
    name = "transfers/overlap/streams:08/bytes:67108864/manual_time"
    data = RunData({name: {"real_time": 3.0}})
    (entry,) = data.entries("transfers/overlap")
    assert entry.integer("streams") == 8 and entry.integer("bytes") == 2**26
    assert data.value("transfers/overlap", "real_time", streams=8) == 3.0
    assert data.value("transfers/overlap", "real_time", streams=8.0, bytes=2**26) == 3.0
    assert data.name("transfers/overlap", streams=8) == name
    assert data.sweep("transfers/overlap", "streams", "real_time", bytes=2**26) == [(8.0, 3.0)]
    # Text is compared as written: a figure passes a benchmark's own parameters back.
    assert data.value("transfers/overlap", "real_time", **entry.params) == 3.0


def test_a_family_whose_every_benchmark_is_malformed_is_left_out_as_an_absent_one() -> None:
    """Another project's `matmul/naive/m:1k` and `local_memory/spill/rounds:many` alone: no
    figure to draw, left out as for a run without them (not empty axes of a variant `spill`)."""
    data = RunData(
        {
            "matmul/naive/m:1k/manual_time": {"real_time": 1.0, "flop_per_second": 1e12},
            "local_memory/spill/rounds:many/manual_time": {"real_time": 1.0},
        }
    )
    drawn = {lesson.key: lesson for lesson in lessons.draw_all(data)}
    # a run of the suite without them (one of none of the suite's families draws no lesson)
    other = RunData({"transfers/h2d/pinned/bytes:1024/manual_time": {"real_time": 1.0}})
    absent = {lesson.key: lesson for lesson in lessons.draw_all(other)}
    for key in ("lesson-matmul", "lesson-local-memory"):
        assert drawn[key] == absent[key] and isinstance(drawn[key], lessons.Omitted)


def test_a_type_whose_every_benchmark_is_malformed_takes_no_colour(
    suite: RunData, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A coalescing type registered between float and double whose every benchmark is
    malformed (`offset:abc`) is drawn nowhere, but took the second colour and marker of both
    panels' legend order: double was drawn in another style than in a run without it."""
    figure = dict(discovery.figures())["coalescing"]
    monkeypatch.setattr(lessons, "figures", lambda: (("coalescing", figure),))
    medians = {n: m for n, m in suite.medians.items() if n.startswith("coalescing/")}
    first_double = min(i for n, i in suite.registered.items() if "/double/" in n)
    bad = {
        f"coalescing/{kind}/half/{kind}:abc{SUFFIX}": {"real_time": 1.0}
        for kind in ("offset", "stride")
    }
    registered = {**suite.registered, **{n: first_double - 0.5 for n in bad}}
    base = RunData(medians, suite.context, registered=registered)
    with_bad, _ = drawn(base, {**medians, **bad})
    without, _ = drawn(base, medians)
    assert isinstance(with_bad, lessons.Drawn) and isinstance(without, lessons.Drawn)
    assert with_bad.svg == without.svg
