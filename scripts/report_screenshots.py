#!/usr/bin/env python3
"""The two report screenshots in docs/images/, drawn again by this checkout's `kernelwatch report`
from real result files, in headless Chromium (tests/tools/browser.py; `tools/kw setup` installs
Chromium and matplotlib). No GPU: the result files are committed in docs/images/data/.

  report-h200-history-demo.png    (docs/report.md)   the last of the history demo's five runs
      against the committed H200 baseline, with the demo's history, the whole page:
      docs/images/data/history-demo/run-*.json.gz (scripts/gpu/report_demo.sh).
  report-h200-explain-padding.png (docs/running.md)  transpose/best without its shared-memory
      padding, explained (ab's A/ and B/ results and explanations.json: docs/images/data/
      explain-padding/), cut below the explained regression.

  python3 scripts/report_screenshots.py                  # from the committed files
  python3 scripts/report_screenshots.py --import OUT     # first take report_demo.sh's $OUT in
                                                         # (the folder or its report-demo.tgz)
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "images" / "data"
IMAGES = ROOT / "docs" / "images"
# GitHub shows a docs image at most ~880 px wide: a 1100 px page is scaled by 0.8 and its
# 13-14 px text stays readable; at 1280 px (the old screenshots) it was hard to read.
WIDTH = 1100
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import browser  # noqa: E402  (tests/tools/browser.py: Chromium over the DevTools pipe)

# After the load: the page's height to keep (CSS px): the bottom of the Nth element a selector
# matches (-1: the last), plus a margin.
BOTTOM_OF = """
(() => {
  const all = document.querySelectorAll(%s);
  const el = all[%d < 0 ? all.length - 1 : %d];
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return Math.ceil(r.bottom + window.scrollY) + %d;
})()
"""


def fail(message: str) -> None:
    sys.stderr.write(f"report_screenshots: error: {message}\n")
    sys.exit(2)


def kw(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    done = subprocess.run(
        [sys.executable, "-m", "kernelwatch", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 and not (args[:2] == ("history", "changes") and done.returncode == 1):
        fail(f"kernelwatch {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    print(f"  kernelwatch {args[0]}: {(done.stdout.strip().splitlines() or [''])[-1][:160]}")


def unpack(source: Path, target: Path) -> None:
    """Every *.json.gz under `source` to `target`, same relative paths, uncompressed."""
    for packed in sorted(source.rglob("*.json.gz")):
        out = target / packed.relative_to(source).with_suffix("")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress(packed.read_bytes()))


def pack(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # mtime 0: the same file packs to the same bytes, so re-importing changes nothing in git.
    target.write_bytes(gzip.compress(source.read_bytes(), compresslevel=9, mtime=0))


def import_out(out: Path) -> None:
    """report_demo.sh's $OUT (or its report-demo.tgz) into docs/images/data/ (JSON gzipped:
    ~10x smaller)."""
    archive = out if out.is_file() else out / "report-demo.tgz"
    if archive.is_file():
        with tempfile.TemporaryDirectory() as folder, tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
            return import_out(Path(folder))
    runs = sorted((out / "history-demo").glob("run-*.json"))
    padding = out / "explain" / "padding"
    explanations = out / "explain" / "padding.explanations.json"
    if not runs and not padding.is_dir():
        fail(f"{out}: neither history-demo/run-*.json nor explain/padding/ (report_demo.sh's $OUT)")
    if runs:
        shutil.rmtree(DATA / "history-demo", ignore_errors=True)
        for run in runs:
            pack(run, DATA / "history-demo" / (run.name + ".gz"))
    if padding.is_dir():
        if not explanations.is_file():
            fail(f"{explanations}: missing (ab wrote no explanations.json)")
        shutil.rmtree(DATA / "explain-padding", ignore_errors=True)
        for result in sorted(padding.glob("[AB]/round-*.json")):
            pack(result, DATA / "explain-padding" / result.parent.name / (result.name + ".gz"))
        pack(explanations, DATA / "explain-padding" / "explanations.json.gz")
    print(f"imported {out} into {DATA.relative_to(ROOT)}")


def screenshot(page: Path, png: Path, bottom_of: str, nth: int, margin: int) -> None:
    from PIL import Image  # matplotlib, which the report needs, requires Pillow

    chromium = browser.find_chromium()
    if chromium is None:
        fail("no Chromium (tools/kw setup installs Debian's chromium)")
    visit = browser.visit(
        page, BOTTOM_OF % (repr(bottom_of), nth, nth, margin), chromium=str(chromium), width=WIDTH
    )
    if visit.console_errors:
        fail(f"{page}: the browser logged errors: {visit.console_errors}")
    image = Image.open(io.BytesIO(visit.screenshot)).convert("RGB")
    if visit.value is None:
        fail(f"{page}: no {bottom_of} on the page")
    height = min(int(visit.value), image.height)
    image = image.crop((0, 0, image.width, height))
    buffer = io.BytesIO()
    # 256 colours: the page is flat colours and anti-aliased text; a third of the RGB size.
    image.quantize(256, dither=Image.Dither.NONE).save(buffer, "PNG", optimize=True)
    png.write_bytes(buffer.getvalue())
    print(
        f"wrote {png.relative_to(ROOT)}: {image.width}x{image.height}, {len(buffer.getvalue())} bytes"
    )


def history_demo(work: Path) -> None:
    runs_dir = DATA / "history-demo"
    if not sorted(runs_dir.glob("run-*.json.gz")):
        fail(f"{runs_dir}: no run-*.json.gz (scripts/gpu/report_demo.sh, then --import)")
    history = work / "history.sqlite"
    unpack(runs_dir, work / "history-demo")
    runs = sorted((work / "history-demo").glob("run-*.json"))
    for run in runs:
        kw("history", "ingest", str(run.relative_to(work)), "--db", "history.sqlite", cwd=work)
    kw("history", "changes", "--db", history.name, cwd=work)
    page = work / "history-demo.html"
    kw(
        "report",
        str(runs[-1].relative_to(work)),
        "--baselines",
        "baselines",
        "--db",
        history.name,
        "-o",
        page.name,
        cwd=work,
    )
    screenshot(page, IMAGES / "report-h200-history-demo.png", "footer", 0, 16)  # the whole page


def explain_padding(work: Path) -> None:
    source = DATA / "explain-padding"
    if not (source / "explanations.json.gz").is_file():
        fail(f"{source}: no explanations.json.gz (scripts/gpu/report_demo.sh, then --import)")
    unpack(source, work / "padding")
    page = work / "explain-padding.html"
    kw(
        "report",
        "padding/B/round-1.json",
        "--baseline",
        "padding/A",
        "--explanations",
        "padding/explanations.json",
        "-o",
        page.name,
        cwd=work,
    )
    # Down to the first explained regression: its ncu table and folded SASS diff.
    screenshot(
        page, IMAGES / "report-h200-explain-padding.png", "#comparison tr.explanation", 0, 12
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--import",
        dest="imported",
        metavar="OUT",
        type=Path,
        help="first copy scripts/gpu/report_demo.sh's $OUT into docs/images/data/",
    )
    args = parser.parse_args()
    if args.imported is not None:
        import_out(args.imported)
    with tempfile.TemporaryDirectory(prefix="kw-screenshots-") as folder:
        work = Path(folder)
        # Relative paths on the page (result file, baseline, history), not this machine's.
        (work / "baselines").symlink_to(ROOT / "baselines")
        print("history demo:")
        history_demo(work)
        print("explain demo:")
        explain_padding(work)


if __name__ == "__main__":
    main()
