"""`run --anchor`: a checkout (a git repository) whose fake benchmark binaries are "built" by
an injected build step (as in test_ab.py); the runner's card is chosen by CUDA_VISIBLE_DEVICES
(fakebench's `devices`), so that one build runs on the baseline's card or on another."""

from __future__ import annotations

import gzip
import json
import statistics
import shutil
import subprocess
from pathlib import Path

import fakebench
import pytest
from conftest import REPO, git

from kernelwatch import ab
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ALPHA = {f"alpha/copy/{n}/manual_time": 100_000.0 + 1000 * n for n in range(4)}  # ns
BETA = {f"beta/sum/n:{n}/manual_time": 50_000.0 + 1000 * n for n in range(3)}  # ns
SLOWED = "alpha/copy/2/manual_time"
# The runner's card, by CUDA_VISIBLE_DEVICES: the baseline's, or another of the model.
DEVICES = {"base": {"gpu_uuid": "GPU-base-card"}, "other": {"gpu_uuid": "GPU-other-card"}}


def one_error(err: str) -> str:
    lines = err.splitlines()
    assert lines and lines[-1].startswith("kernelwatch: error: ") and "Traceback" not in err, err
    assert sum(line.startswith("kernelwatch: error") for line in lines) == 1, err
    return lines[-1]


class Checkout:
    """A project checkout: src/ holds the fake binaries (the "source"), build/ their build,
    baselines/ the committed baseline, made from commit A on the baseline's card."""

    def __init__(self, root: Path, run_cli, monkeypatch) -> None:
        self.root = root
        self.run_cli = run_cli
        self.monkeypatch = monkeypatch
        self.builds: list[str] = []
        self.extra: dict = {}  # behaviour every build gets (the runner's, not the code's)
        self.fail: set[str] = set()  # commits whose build fails
        root.mkdir()
        git(root, "init", "-q")
        fakebench.suite(root / "src", {"alpha": ALPHA, "beta": BETA}, devices=DEVICES)
        (root / ".gitignore").write_text("build/\nbaselines/\n")
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "A")
        self.a = git(root, "rev-parse", "HEAD")
        monkeypatch.setattr(ab, "cmake_build", self.build)
        self.baselines = root / "baselines"
        self.baselines.mkdir()

    def build(self, side: ab.Side, log: Path, **options: object) -> None:
        """The build step: "compiles" src/ into the build folder, naming the commit."""
        if side.sha in self.fail:
            raise InputError(f"building {side.name} ({side.short}) failed: see {log}")
        self.builds.append(side.sha)
        folder = side.build_dir / "bench"
        folder.mkdir(parents=True, exist_ok=True)
        for source in sorted((side.worktree / "src" / "bench").glob("kernelwatch_bench_*")):
            if source.suffix:  # (its behaviour file, .json)
                continue
            shutil.copy2(source, folder / source.name)
            config = json.loads(Path(f"{source}.json").read_text())
            config.update(self.extra)
            config["context"] = {"kernelwatch_git_commit": side.sha}
            Path(f"{folder / source.name}.json").write_text(json.dumps(config))

    def build_current(self) -> None:
        sha = git(self.root, "rev-parse", "HEAD")
        self.build(ab.Side("current", "HEAD", sha, self.root, self.root / "build"), Path("-"))
        self.builds.pop()  # `builds`: what kernelwatch built

    def commit(self, message: str, **behaviour: object) -> str:
        """A commit that changes the alpha binary's behaviour (the code), built."""
        fakebench.configure(self.root / "src" / "bench" / "kernelwatch_bench_alpha", **behaviour)
        git(self.root, "commit", "-q", "-am", message)
        self.build_current()
        return git(self.root, "rev-parse", "HEAD")

    def on(self, card: str) -> None:
        self.monkeypatch.setenv("CUDA_VISIBLE_DEVICES", card)

    def run(self, *argv: object, baselines: Path | None = None, build: Path | None = None):
        return self.run_cli(
            "run",
            "--build-dir",
            build or self.root / "build",
            "--baselines",
            baselines or self.baselines,
            *argv,
        )

    def make_baseline(self) -> None:
        self.build_current()
        self.on("base")
        out = self.root.parent / "base.json"
        assert self.run("--no-compare", "--out", out).status == 0
        done = self.run_cli("baseline", "update", out, "--baselines", self.baselines)
        assert done.status == 0, done.err
        manifest = json.loads((self.baselines / fakebench_slug() / "manifest.json").read_text())
        assert manifest["commit"] == self.a
        self.builds.clear()

    def anchored_once(self) -> None:
        """A first run on another card than the baseline's: its anchor measured and kept."""
        self.on("other")
        done = self.run("--out", self.root.parent / "1.json")
        assert done.status == 0, done.err

    def anchor_runs(self) -> int:
        """Measuring runs of the anchor's (commit A's) alpha binary."""
        worktree = self.root / ".kernelwatch" / "worktrees" / self.a
        return fakebench.runs(worktree / "build" / "bench" / "kernelwatch_bench_alpha")


def fakebench_slug() -> str:
    return "nvidia-h100-80gb-hbm3-sm90"


@pytest.fixture
def checkout(tmp_path: Path, run_cli, monkeypatch) -> Checkout:
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    made = Checkout(tmp_path / "repo", run_cli, monkeypatch)
    made.make_baseline()
    return made


def report_of(done) -> dict:
    return json.loads(done.out)


def verdicts(report: dict) -> dict[str, str]:
    return {b["name"]: b["verdict"] for b in report["benchmarks"]}


def test_unchanged_code_on_another_card_is_anchored_and_passes(checkout: Checkout) -> None:
    checkout.on("other")
    out = checkout.root.parent / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    assert checkout.builds == [checkout.a]  # the baseline's commit, built once
    report = report_of(done)
    assert set(verdicts(report).values()) == {"SAME"}
    anchored = f"anchored on {checkout.a[:12]} (measured by this run; "
    assert report["notes"][0].startswith(anchored)
    assert "the baseline holds no run on this card" in report["notes"][0]
    assert report["notes"][1].startswith("runner finding: this runner times the baseline's own")
    assert "0 slower and 0 faster beyond their limits)" in report["notes"][1]
    assert any(n.startswith("level: process") for n in report["notes"]), report["notes"]
    context = json.loads(out.read_text())["context"]
    assert context["kernelwatch_anchor"].startswith(anchored)
    [stored] = (checkout.root / ".kernelwatch" / "anchors").glob("*.json")
    assert str(stored) in context["kernelwatch_anchor"]
    anchor_context = json.loads(stored.read_text())["context"]
    assert anchor_context["kernelwatch_anchor_commit"] == checkout.a
    assert anchor_context["gpu_uuid"] == "GPU-other-card"


def test_the_anchor_is_measured_between_the_runs_own_process_rounds(
    checkout: Checkout, tmp_path: Path
) -> None:
    """Built once the first round has said which card this is, the anchor measures its two
    rounds between the run's two (A B B A), so that a drift of the card over the run (its clock,
    docs/measurement.md) falls on both builds alike."""
    spans = {"run": tmp_path / "run.jsonl", "anchor": tmp_path / "anchor.jsonl"}
    checkout.extra = {"spans": str(spans["run"])}
    checkout.build_current()
    checkout.extra = {"spans": str(spans["anchor"])}  # the anchor's build, made by the run
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 0, done.err
    assert report_of(done)["notes"][0].startswith(f"anchored on {checkout.a[:12]} (measured")
    started = sorted(
        (json.loads(line)["start"], side)
        for side, path in spans.items()
        for line in path.read_text().splitlines()
    )
    order = [side for _, side in started][:8]  # 2 binaries x 2 processes a build; top-ups after
    assert order == ["run"] * 2 + ["anchor"] * 4 + ["run"] * 2, order


def test_the_rounds_after_the_first_alternate_in_pairs() -> None:
    """(the anchor's?, round) after the run's first round: A B B A A B for three processes."""
    from kernelwatch.anchor import interleaved

    assert interleaved(1) == [(True, 0)]
    assert interleaved(2) == [(True, 0), (True, 1), (False, 1)]
    assert interleaved(3) == [(True, 0), (True, 1), (False, 1), (False, 2), (True, 2)]


def test_on_the_baselines_card_auto_does_not_anchor(checkout: Checkout) -> None:
    out = checkout.root.parent / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    assert checkout.builds == []
    assert not any("anchor" in n for n in report_of(done)["notes"])
    assert "kernelwatch_anchor" not in json.loads(out.read_text())["context"]


def test_a_slowdown_the_card_level_hides_is_caught_against_the_anchor(
    checkout: Checkout,
) -> None:
    """3 % slower: within the limit of another card (at least the host prior, 2 % + 770 ns,
    doubled), beyond the one of the same code on the same card."""
    checkout.commit("alpha/copy/2 3% slower", slow={SLOWED: 1.03})
    checkout.on("other")
    unanchored = checkout.run(
        "--anchor", "never", "--out", checkout.root.parent / "n.json", "--format", "json"
    )
    assert unanchored.status == 0, unanchored.err
    assert verdicts(report_of(unanchored))[SLOWED] != "REGRESSION"
    assert checkout.builds == []
    anchored = checkout.run("--out", checkout.root.parent / "a.json", "--format", "json")
    assert anchored.status == 1, anchored.err
    report = report_of(anchored)
    assert verdicts(report)[SLOWED] == "REGRESSION"
    assert {v for n, v in verdicts(report).items() if n != SLOWED} == {"SAME"}
    [row] = [b for b in report["benchmarks"] if b["name"] == SLOWED]
    assert row["confirmed"] is True  # the re-run judged against the anchor too
    assert report["notes"][0].startswith(f"anchored on {checkout.a[:12]}")


def test_a_slow_runner_is_a_finding_not_a_regression(checkout: Checkout) -> None:
    # 10 % slower on every benchmark, in every build: this runner (one past the host prior's
    # limit, 2 x (2 % + 770 ns), that the committed baseline gets against another card)
    checkout.extra = {"slow": {name: 1.10 for name in {**ALPHA, **BETA}}}
    checkout.build_current()
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 0, done.err
    report = report_of(done)
    assert set(verdicts(report).values()) == {"SAME"}
    finding = report["notes"][1]
    assert finding.startswith(
        "runner finding: this runner times the baseline's own commit 10.0% slower"
    )
    assert "7 slower and 0 faster beyond their limits" in finding
    # which ones: the three largest named, with their change
    named = finding.split("not a regression of the code (", 1)[1]
    assert named.endswith(" and 4 more)") and named.count("/manual_time +10.0%") == 3
    assert "kernelwatch: runner finding: " in done.err
    # against the committed baseline, the runner's slowness is taken for the code's
    unanchored = checkout.run("--anchor", "never", "--out", checkout.root.parent / "n.json")
    assert unanchored.status == 1 and "REGRESSION" in unanchored.out


def test_a_shallow_clone_falls_back_to_the_baseline_with_a_note(
    checkout: Checkout, tmp_path: Path
) -> None:
    checkout.commit("B: nothing slower", seed=1)
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{checkout.root}", str(clone)], check=True
    )
    shutil.copytree(checkout.baselines, clone / "baselines")
    shutil.copytree(checkout.root / "build", clone / "build")
    checkout.on("other")
    out = tmp_path / "run.json"
    done = checkout.run(
        "--out", out, "--format", "json", baselines=clone / "baselines", build=clone / "build"
    )
    assert done.status == 0, done.err
    note = (
        f"not anchored: the baseline's commit {checkout.a[:12]} is not in {clone} (a shallow "
        "clone? fetch it, or the whole history: docs/ci.md)"
    )
    assert report_of(done)["notes"][0] == note
    assert f"kernelwatch: {note}; judged against the committed baseline" in done.err
    assert json.loads(out.read_text())["context"]["kernelwatch_anchor"] == note
    assert checkout.builds == []


def test_a_build_that_fails_falls_back_with_a_note(checkout: Checkout) -> None:
    checkout.fail.add(checkout.a)
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 0, done.err
    note = report_of(done)["notes"][0]
    assert note.startswith(f"not anchored: building anchor ({checkout.a[:12]}) failed")


def test_an_anchor_is_reused_within_its_age_and_measured_again_past_it(
    checkout: Checkout,
) -> None:
    checkout.on("other")
    first = checkout.run("--out", checkout.root.parent / "1.json", "--format", "json")
    assert first.status == 0, first.err
    runs = checkout.anchor_runs()
    assert runs == 2  # two processes of the anchor's alpha binary
    second = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert second.status == 0, second.err
    assert checkout.anchor_runs() == runs  # nothing measured again
    assert "(reused, 0.0 h old; " in report_of(second)["notes"][0]
    context = json.loads((checkout.root.parent / "2.json").read_text())["context"]
    assert "(reused, 0.0 h old; " in context["kernelwatch_anchor"]
    third = checkout.run(
        "--anchor-max-age", "0", "--out", checkout.root.parent / "3.json", "--format", "json"
    )
    assert third.status == 0, third.err
    assert checkout.anchor_runs() == 2 * runs
    assert "(measured by this run; " in report_of(third)["notes"][0]
    # another harness setting is another anchor
    fourth = checkout.run(
        "--max-time", "0.1", "--out", checkout.root.parent / "4.json", "--format", "json"
    )
    assert fourth.status == 0, fourth.err
    assert checkout.anchor_runs() == 3 * runs
    assert len(list((checkout.root / ".kernelwatch" / "anchors").glob("*.json"))) == 2


def test_a_benchmark_new_since_the_baselines_commit_does_not_stop_the_anchors_reuse(
    checkout: Checkout,
) -> None:
    """The kept anchor was looked for with every name the run ran, and the baseline's commit can
    never hold a new one: every run of a pull request that adds a benchmark measured the anchor
    again (2 anchor processes a run instead of none)."""
    checkout.commit("B adds a benchmark", benchmarks={**ALPHA, "alpha/copy/9/manual_time": 9e4})
    checkout.on("other")
    first = checkout.run("--out", checkout.root.parent / "1.json", "--format", "json")
    assert first.status == 0, first.err
    assert verdicts(report_of(first))["alpha/copy/9/manual_time"] == "NEW"
    runs = checkout.anchor_runs()
    second = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert second.status == 0, second.err
    assert checkout.anchor_runs() == runs  # nothing measured again
    assert "(reused, 0.0 h old; " in report_of(second)["notes"][0]
    assert verdicts(report_of(second))["alpha/copy/9/manual_time"] == "NEW"


def test_a_card_that_drifted_since_its_anchor_was_kept_fails_no_unchanged_code(
    checkout: Checkout,
) -> None:
    """The card times one benchmark 5 % slower than when the anchor was kept, whatever code runs
    on it: against the kept anchor that is a regression; its confirming re-runs are judged
    against the baseline's commit measured again now, which drifted alike."""
    checkout.anchored_once()
    runs = checkout.anchor_runs()
    checkout.extra = {"slow": {SLOWED: 1.05}}  # the card's drift, in every build made now
    checkout.build_current()
    kept = checkout.run(
        "--confirm", "0", "--out", checkout.root.parent / "k.json", "--format", "json"
    )
    assert kept.status == 1, kept.err  # unconfirmed, against the anchor as kept: the drift fails
    assert checkout.anchor_runs() == runs

    second = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert second.status == 0, second.err
    report = report_of(second)
    assert "(reused, 0.0 h old; " in report["notes"][0]
    [row] = [b for b in report["benchmarks"] if b["name"] == SLOWED]
    assert (row["verdict"], row["confirmed"]) == ("SLOWER", False), row
    assert {v for n, v in verdicts(report).items() if n != SLOWED} == {"SAME"}
    again = checkout.root.parent / "2.anchor-again.json"  # beside the result and its re-runs
    said = (
        "1 regression(s) against the anchor reused 0.0 h old: the baseline's commit measured "
        f"again on this card for their confirming re-runs ({again}; a card's drift over more "
        "than 0.2 h was never measured)"
    )
    assert said in report["notes"] and f"kernelwatch: {said}" in second.err
    assert checkout.anchor_runs() == runs + 2  # the regressed benchmark's binary, 2 processes
    assert {r["run_name"] for r in json.loads(again.read_text())["benchmarks"]} == {SLOWED}
    assert len(list((checkout.root / ".kernelwatch" / "anchors").glob("*"))) == 1  # as kept
    third = checkout.run("--out", checkout.root.parent / "3.json", "--format", "json")
    assert "(reused, " in report_of(third)["notes"][0]  # the kept anchor still serves


def test_a_drift_that_fails_the_suite_against_a_kept_anchor_fails_no_unchanged_code(
    checkout: Checkout,
) -> None:
    """With 3 repetitions a side no row can be significant: a card 5 % slower than when its
    anchor was kept makes every row an unverified SLOWER (no re-run) and the suite as a whole a
    regression. The baseline's commit is measured again and the run judged against that: it
    passes; a real slowdown of the whole suite still fails against it."""
    few = ("--repetitions", "3", "--processes", "1")
    checkout.on("other")
    assert checkout.run("--out", checkout.root.parent / "1.json", *few).status == 0
    runs = checkout.anchor_runs()
    everything = {name: 1e6 for name in {**ALPHA, **BETA}}  # (bytes: memory_speed slows them)
    checkout.extra = {"memory_speed": 1 / 1.05, "bytes": everything}  # the card's drift
    checkout.build_current()
    done = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json", *few)
    assert done.status == 0, done.err
    report = report_of(done)
    assert set(verdicts(report).values()) == {"SAME"}
    again = checkout.root.parent / "2.anchor-again.json"
    said = (
        "a regression of the suite against the anchor reused 0.0 h old: the baseline's commit "
        "measured again on this card, the run and its confirming re-runs judged against it "
        f"({again}; a card's drift over more than 0.2 h was never measured)"
    )
    assert said in report["notes"] and f"kernelwatch: {said}" in done.err
    assert report["notes"][0].startswith(f"anchored on {checkout.a[:12]} (reused, 0.0 h old")
    assert report["notes"][1].startswith("runner finding: ")
    # the finding and the context key describe the commit measured again, not the kept anchor
    assert report["notes"][1].endswith("; of the anchor with 7 benchmark(s) measured again now")
    anchored = json.loads((checkout.root.parent / "2.json").read_text())["context"]
    assert anchored["kernelwatch_anchor"].endswith(
        f"measured again on this card for 7 benchmark(s) ({again})"
    )
    assert checkout.anchor_runs() == runs + 1  # every benchmark again, in 1 process
    assert len(list((checkout.root / ".kernelwatch" / "anchors").glob("*"))) == 1  # as kept
    # The code 5 % slower everywhere, on the drifted card: the suite regresses against the
    # commit measured again too.
    for family in ("alpha", "beta"):
        fakebench.configure(
            checkout.root / "src" / "bench" / f"kernelwatch_bench_{family}",
            slow=dict.fromkeys({**ALPHA, **BETA}, 1.05),
        )
    git(checkout.root, "commit", "-q", "-am", "everything 5% slower")
    checkout.build_current()
    slower = checkout.run("--out", checkout.root.parent / "3.json", "--format", "json", *few)
    assert slower.status == 1, slower.err
    report = report_of(slower)
    assert report["summary"]["suite"]["verdict"] == "REGRESSION"
    assert any(n.startswith("a regression of the suite against") for n in report["notes"])


def test_an_anchor_older_than_any_measured_drift_says_so(checkout: Checkout) -> None:
    import datetime

    checkout.anchored_once()
    [stored] = (checkout.root / ".kernelwatch" / "anchors").glob("*.json")
    document = json.loads(stored.read_text())
    started = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=3)
    document["context"]["kernelwatch_run_started"] = started.isoformat()
    stored.write_text(json.dumps(document))  # (kept 3 h ago)
    done = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert done.status == 0, done.err
    assert (
        "(reused, 3.0 h old, older than a card's drift was ever measured over (0.2 h): a drift "
        f"since may hide a change of its size; {stored})"
    ) in report_of(done)["notes"][0]


def test_a_regression_against_a_reused_anchor_is_confirmed_against_the_commit_measured_again(
    checkout: Checkout,
) -> None:
    checkout.anchored_once()
    checkout.commit("alpha/copy/2 3% slower", slow={SLOWED: 1.03})
    done = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert done.status == 1, done.err
    report = report_of(done)
    [row] = [b for b in report["benchmarks"] if b["name"] == SLOWED]
    assert (row["verdict"], row["confirmed"]) == ("REGRESSION", True), row
    assert any(n.startswith("1 regression(s) against the anchor reused") for n in report["notes"])


def test_where_the_anchor_measured_again_cannot_go_nothing_is_measured(
    checkout: Checkout,
) -> None:
    checkout.on("other")
    (checkout.root.parent / "2.anchor-again.json").mkdir()
    done = checkout.run("--out", checkout.root.parent / "2.json")
    assert done.status == 2, done.err
    assert one_error(done.err).startswith(
        f"kernelwatch: error: --out's anchor measured again {checkout.root.parent}/2.anchor-again"
    )
    assert checkout.builds == [] and not (checkout.root.parent / "2.json").exists()
    unconfirmed = checkout.run("--confirm", "0", "--out", checkout.root.parent / "2.json")
    assert unconfirmed.status == 0, unconfirmed.err  # (no re-runs: nothing measured again)


def test_an_anchor_that_cannot_be_measured_again_confirms_as_kept(checkout: Checkout) -> None:
    checkout.anchored_once()
    checkout.commit("alpha/copy/2 3% slower", slow={SLOWED: 1.03})
    checkout.fail.add(checkout.a)  # its worktree's build now fails
    done = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert done.status == 1, done.err
    report = report_of(done)
    [row] = [b for b in report["benchmarks"] if b["name"] == SLOWED]
    assert row["confirmed"] is True
    [note] = [n for n in report["notes"] if n.startswith("1 regression(s) against the anchor")]
    assert "the commit not measured again (building anchor (" in note, note
    assert note.endswith("; their confirming re-runs judged against the anchor as kept")


def test_always_anchors_on_the_baselines_card_too(checkout: Checkout) -> None:
    done = checkout.run(
        "--anchor", "always", "--out", checkout.root.parent / "run.json", "--format", "json"
    )
    assert done.status == 0, done.err
    assert checkout.builds == [checkout.a]
    assert report_of(done)["notes"][0].endswith(": --anchor always")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--anchor-max-age", "-1"], "--anchor-max-age -1: must be a number of hours, 0 or more"),
        (["--anchor-max-age", "soon"], "--anchor-max-age soon: must be a number of hours"),
        (["--anchor-max-age", "nanh"], "--anchor-max-age nanh: must be a number of hours"),
        (["--anchor-max-age", "1e308d"], "--anchor-max-age 1e308d: must be a number of hours"),
        (["--anchor", "always", "--no-compare"], "--anchor always: cannot anchor with --no-comp"),
        (["--anchor", "always", "--baseline", "x.json"], "cannot anchor with --baseline"),
        (["--anchor", "sometimes"], "argument --anchor: invalid choice: 'sometimes'"),
    ],
)
def test_bad_options_are_one_line_exit_2(checkout: Checkout, argv: list[str], message: str) -> None:
    done = checkout.run(*argv)
    assert done.status == 2 and done.out == ""
    assert message in one_error(done.err)


def test_report_history_and_the_pr_comment_say_the_verdict_was_anchored(
    checkout: Checkout, tmp_path: Path
) -> None:
    checkout.on("other")
    out, markdown = tmp_path / "run.json", tmp_path / "run.md"
    done = checkout.run("--out", out, "--markdown", markdown)
    assert done.status == 0, done.err
    anchored = f"anchored on {checkout.a[:12]} (measured by this run; "
    comment = checkout.run_cli("comment", markdown, "--result", out)
    assert comment.status == 0 and anchored in comment.out and "runner finding" in comment.out
    page = tmp_path / "page.html"
    shown = checkout.run_cli("report", out, "--baselines", checkout.baselines, "-o", page)
    assert shown.status == 0, shown.err
    assert f"<b>Anchor</b>: <code>run</code>'s verdict was {anchored}" in page.read_text()
    # the anchor's result, named in the line, gives the anchored comparison (docs/report.md)
    [stored] = (checkout.root / ".kernelwatch" / "anchors").glob("*.json")
    again = checkout.run_cli("report", out, "--baseline", stored, "-o", tmp_path / "a.html")
    assert again.status == 0, again.err
    assert "level: process" in (tmp_path / "a.html").read_text()
    db = tmp_path / "history.sqlite"
    for result in (checkout.root.parent / "base.json", out):
        assert checkout.run_cli("history", "ingest", result, "--db", db).status == 0
    listed = checkout.run_cli("history", "list", "--db", db).out.splitlines()
    assert anchored not in listed[1] and anchored in listed[2]
    runs = json.loads(checkout.run_cli("history", "list", "--db", db, "--format", "json").out)
    assert [r["anchor"] is not None for r in runs["runs"]] == [False, True]
    series = checkout.run_cli("history", "show", SLOWED, "--db", db).out
    assert f"its verdict was {anchored}" in series


CARDS = ("GPU-00000000-0000-0000-0000-0000000000c1", "GPU-00000000-0000-0000-0000-0000000000c2")


def two_gpu_host(checkout: Checkout, tmp_path: Path) -> None:
    """The runner: a host of two cards the baseline never held, listed by a fake nvidia-smi."""
    checkout.extra = {"devices": {uuid: {"gpu_uuid": uuid} for uuid in CARDS}}
    checkout.build_current()
    smi = "\n".join(f"{i}, {uuid}, NVIDIA H100 80GB HBM3, 9.0" for i, uuid in enumerate(CARDS))
    fakebench.fake_nvidia_smi(tmp_path, checkout.monkeypatch, smi)
    checkout.monkeypatch.setenv("KERNELWATCH_LOCK_DIR", str(tmp_path / "locks"))
    checkout.monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_every_gpu_of_a_host_is_anchored_on_its_own_card(
    checkout: Checkout, tmp_path: Path
) -> None:
    """`run --gpus all`: each GPU measures the baseline's commit on its own card beside its own
    rounds and is judged against it; the commit is built once for both."""
    two_gpu_host(checkout, tmp_path)
    out = tmp_path / "night.json"
    done = checkout.run("--gpus", "all", "--out", out)
    assert done.status == 0, done.err
    assert checkout.builds == [checkout.a]
    assert done.err.count(": exit 0 (no regression)") == 2
    kept = {}
    for path in (checkout.root / ".kernelwatch" / "anchors").glob("*.json"):
        kept[json.loads(path.read_text())["context"]["gpu_uuid"]] = path
    assert set(kept) == set(CARDS)
    for index, uuid in enumerate(CARDS):
        context = json.loads((tmp_path / f"night-gpu{index}.json").read_text())["context"]
        assert context["gpu_uuid"] == uuid
        anchored = context["kernelwatch_anchor"]
        assert anchored.startswith(f"anchored on {checkout.a[:12]} (measured by this run; ")
        assert str(kept[uuid]) in anchored


def test_an_anchored_split_keeps_the_rounds_and_anchors_each_gpu_on_its_own_card(
    checkout: Checkout, tmp_path: Path
) -> None:
    """`run --gpus all --split`, anchored: each GPU takes its parts in the first round and
    measures the anchor of what it took between its later rounds (not part by part, as an
    unanchored split does: the anchor's rounds come between)."""
    two_gpu_host(checkout, tmp_path)
    spans = {"run": tmp_path / "run.jsonl", "anchor": tmp_path / "anchor.jsonl"}
    devices = checkout.extra
    checkout.extra = {**devices, "spans": str(spans["run"])}
    checkout.build_current()
    checkout.extra = {**devices, "spans": str(spans["anchor"])}  # the anchor's, built by the run
    done = checkout.run("--gpus", "all", "--split", "--out", tmp_path / "night.json")
    assert done.status == 0, done.err
    assert done.err.count(": exit 0 (no regression)") == 2
    for index, uuid in enumerate(CARDS):
        context = json.loads((tmp_path / f"night-gpu{index}.json").read_text())["context"]
        assert context["gpu_uuid"] == uuid and context["kernelwatch_shard"] == f"{index + 1}/2"
        assert context["kernelwatch_anchor"].startswith(f"anchored on {checkout.a[:12]} (meas")
    # Each GPU took one binary: its two processes with its anchor's two between them.
    started = sorted(
        (span["start"], span["gpu"], side)
        for side, path in spans.items()
        for span in map(json.loads, path.read_text().splitlines())
    )
    for uuid in CARDS:
        order = [side for _, gpu, side in started if gpu == uuid][:4]
        assert order == ["run", "anchor", "anchor", "run"], order


def test_a_slowdown_is_caught_on_every_gpu_against_its_own_anchor(
    checkout: Checkout, tmp_path: Path
) -> None:
    checkout.commit("alpha/copy/2 3% slower", slow={SLOWED: 1.03})
    two_gpu_host(checkout, tmp_path)
    verdict = tmp_path / "verdict.json"
    done = checkout.run("--gpus", "all", "--out", tmp_path / "pr.json", "--json", verdict)
    assert done.status == 1, done.err
    assert done.err.count(": exit 1 (regression") == 2
    for index in (0, 1):
        context = json.loads((tmp_path / f"pr-gpu{index}.json").read_text())["context"]
        assert context["kernelwatch_anchor"].startswith(f"anchored on {checkout.a[:12]}")
        report = json.loads((tmp_path / f"verdict-gpu{index}.json").read_text())
        assert verdicts(report)[SLOWED] == "REGRESSION"
        assert {v for n, v in verdicts(report).items() if n != SLOWED} == {"SAME"}


CHANGES = REPO / "tests" / "data" / "gpu" / "h200-changes-6367bc18"


def _verdicts(name: str) -> dict[str, dict]:
    with gzip.open(CHANGES / name, "rt") as report:
        return {row["name"]: row for row in json.load(report)["benchmarks"]}


def test_the_anchored_run_of_real_changes_agrees_with_the_same_card_truth() -> None:
    """docs/measurement.md, "Anchored verdicts on real code changes": the reports the H200
    machine wrote (ab of 5 rounds, then the anchored run) hold what that section says."""
    truth = _verdicts("truth-ab-5-rounds.json.gz")
    anchored = _verdicts("anchored-changes.json.gz")
    unchanged = _verdicts("anchored-unchanged.json.gz")
    assert len(truth) == 46 and all(
        anchored[n]["verdict"] == r["verdict"] for n, r in truth.items()
    )
    caught = [n for n, r in truth.items() if r["verdict"] == "REGRESSION"]
    assert len(caught) == 8 and all(anchored[n]["verdict"] == "REGRESSION" for n in caught)
    others = [r for n, r in anchored.items() if n not in truth]
    assert len(others) == 310 and not [
        r for r in others if r["verdict"] in ("REGRESSION", "SLOWER")
    ]
    assert not [r for r in unchanged.values() if r["verdict"] == "REGRESSION"]
    for report in (anchored, unchanged):
        long = [
            r["sensitivity"]
            for r in report.values()
            if not r["host_bound"] and r["baseline"]["median"] >= 50_000
        ]
        assert len(long) == 298 and statistics.median(long) <= 0.015


# An ELF program that runs the fake binary beside it (beta.py), embedding the commit as the
# generated *_build_info.cpp does and a byte of "code" (VERSION); like the project's binaries
# (-ffile-prefix-map), it holds no path of its checkout.
WRAPPER = """\
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static const char commit[] = COMMIT;
int main(int argc, char** argv) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
  if (n < 0) return 127;
  path[n] = 0;
  strcpy(strrchr(path, '/') + 1, "beta.py");
  if (argc < 0) printf("%s %d\\n", commit, VERSION);
  execv(path, argv);
  return 127;
}
"""


def elf_beta(checkout: Checkout, monkeypatch, versions: dict[str, int]) -> None:
    """Every build's beta binary becomes an ELF program (cc) running its fake, with the CMake
    files ab.py compares (CMAKE_HOME_DIRECTORY naming the build's checkout); its code byte is
    versions[commit] (default 1)."""
    if shutil.which("cc") is None:
        pytest.skip("cc is not installed")
    plain = checkout.build

    def build(side: ab.Side, log: Path, **options: object) -> None:
        plain(side, log)
        bench = side.build_dir / "bench"
        binary = bench / "kernelwatch_bench_beta"
        script = binary.rename(bench / "beta.py")
        Path(f"{binary}.json").rename(f"{script}.json")
        source = side.build_dir / "beta.c"
        source.write_text(WRAPPER)
        version = versions.get(side.sha, 1)
        defines = [f'-DCOMMIT="{side.sha}"', f"-DVERSION={version}"]
        subprocess.run(["cc", "-O2", "-o", str(binary), str(source), *defines], check=True)
        home = f"CMAKE_HOME_DIRECTORY:INTERNAL={side.worktree}\n"
        (side.build_dir / "CMakeCache.txt").write_text(home)
        target = bench / "CMakeFiles" / "kernelwatch_bench_beta.dir"
        target.mkdir(parents=True, exist_ok=True)
        (target / "flags.make").write_text(f"C_FLAGS = -O2 -I{side.worktree}/src\n")
        (target / "link.txt").write_text(f"cc -o {binary}\n")

    monkeypatch.setattr(checkout, "build", build)
    monkeypatch.setattr(ab, "cmake_build", build)
    checkout.build_current()


def anchor_beta_runs(checkout: Checkout) -> int:
    worktree = checkout.root / ".kernelwatch" / "worktrees" / checkout.a
    return fakebench.runs(worktree / "build" / "bench" / "beta.py")


def test_a_binary_built_identically_to_the_baselines_commit_is_not_anchored(
    checkout: Checkout, monkeypatch
) -> None:
    """The checkout's beta binary is the baseline commit's, built at another path (the worktree
    is longer): the anchor measures alpha only, beta's rows are IDENTICAL (never failing) and
    the run's own beta numbers stand in for the anchor's in the runner finding (issue #32)."""
    elf_beta(checkout, monkeypatch, {})
    checkout.on("other")
    out = checkout.root.parent / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    assert checkout.anchor_runs() == 2 and anchor_beta_runs(checkout) == 0
    report = report_of(done)
    assert {n: v for n, v in verdicts(report).items() if v != "SAME"} == dict.fromkeys(
        BETA, "IDENTICAL"
    )
    beta = next(b for b in report["benchmarks"] if b["name"] in BETA)
    assert beta["reason"] == "built identically to the baseline's commit: the anchor not measured"
    assert "3 benchmark(s) built identically, not measured; " in report["notes"][0]
    assert f"geometric mean of {len(ALPHA) + len(BETA)} benchmarks" in report["notes"][1]
    # the notes of the comparison count what the anchor measured, not the identical rows
    assert any(f"for {len(ALPHA)} of {len(ALPHA)} benchmark(s)" in n for n in report["notes"])
    assert "the anchor does not measure them" in done.err
    [stored] = (checkout.root / ".kernelwatch" / "anchors").glob("*.json")
    kept = {b["run_name"] for b in json.loads(stored.read_text())["benchmarks"]}
    assert kept == {name.removesuffix("/manual_time") for name in ALPHA} or kept == set(ALPHA)
    # the next run reuses it: it holds everything the anchor needs to measure
    again = checkout.run("--out", checkout.root.parent / "2.json", "--format", "json")
    assert again.status == 0, again.err
    assert checkout.anchor_runs() == 2 and "(reused, 0.0 h old; 3 benchmark(s)" in again.err


def test_compare_and_report_of_an_anchored_result_judge_what_it_built_identically_as_run_did(
    checkout: Checkout, monkeypatch, tmp_path: Path
) -> None:
    """This runner times beta (built identically: not measured) 10 % slower than the baseline's
    card, a trait of the card: run reads it IDENTICAL, with the finding, exit 0. Compare and
    report of its result against the baseline read it so too (the run's record of what it
    built identically); they read it REGRESSION, exit 1, before (GPU-27c05724, H200: run exit
    0, its result compared with the baseline exit 1)."""
    elf_beta(checkout, monkeypatch, {})
    checkout.extra = {"slow": dict.fromkeys(BETA, 1.10)}
    checkout.build_current()
    checkout.on("other")
    out = tmp_path / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    ran = report_of(done)
    assert {n: v for n, v in verdicts(ran).items() if v != "SAME"} == dict.fromkeys(
        BETA, "IDENTICAL"
    )
    record = json.loads(out.read_text())["context"]["kernelwatch_built_identically"]
    assert record == {"commit": checkout.a, "benchmarks": sorted(BETA)}
    baseline = checkout.baselines / fakebench_slug()
    compared = checkout.run_cli("compare", baseline, out, "--format", "json")
    assert compared.status == 0, compared.out
    report = report_of(compared)
    assert verdicts(report) == verdicts(ran)
    note = f"3 benchmark(s) built identically to the baseline's commit {checkout.a[:12]} "
    assert report["notes"][0].startswith(note)
    # the others run judged against the anchor it measured: here against the baseline
    assert report["notes"][0].endswith(
        "; the 4 other(s) `run` judged against the anchor it measured, here against this "
        "baseline: run's report is the verdict of record"
    )
    assert report["notes"][1].startswith(
        "runner finding: this runner times the baseline's own commit 10.0% slower than the "
        "baseline's cards did (geometric mean of 3 benchmarks; 3 slower and 0 faster"
    )
    page = tmp_path / "page.html"
    shown = checkout.run_cli("report", out, "--baselines", checkout.baselines, "-o", page)
    assert shown.status == 0, shown.err
    html = page.read_text()
    assert '"badge REGRESSION"' not in html and html.count('"badge IDENTICAL">IDENTICAL<') == 3
    # against a baseline of another commit, the record says nothing: beta measured as before
    plain = tmp_path / "plain.json"
    document = json.loads(out.read_text())
    document["context"]["kernelwatch_built_identically"]["commit"] = "0" * 40
    plain.write_text(json.dumps(document))
    again = checkout.run_cli("compare", baseline, plain, "--format", "json")
    assert again.status == 1 and set(verdicts(report_of(again))[n] for n in BETA) == {"REGRESSION"}
    # a baseline made of the run is not what the run built identically to: no record kept
    fresh = tmp_path / "baselines"
    fresh.mkdir()
    made = checkout.run_cli("baseline", "update", out, "--baselines", fresh)
    assert made.status == 0, made.err
    [kept] = (fresh / fakebench_slug()).glob("result.json*")
    assert "kernelwatch_built_identically" not in read_json(kept)["context"]


@pytest.mark.parametrize("key", ["kernelwatch_built_identically", "kernelwatch_not_confirmed"])
@pytest.mark.parametrize(
    "record",
    [
        "all",
        ["beta/sum/n:0/manual_time"],
        {"commit": 7, "benchmarks": []},
        {"commit": "abc", "benchmarks": "beta/sum/n:0/manual_time"},
        {"commit": "abc", "benchmarks": [1]},
    ],
)
def test_a_record_run_does_not_write_is_one_line(
    checkout: Checkout, tmp_path: Path, record: object, key: str
) -> None:
    """What run records beyond its numbers decides verdicts: a damaged record is refused, not
    read as none (or as every benchmark)."""
    out = tmp_path / "run.json"
    assert checkout.run("--no-compare", "--out", out).status == 0
    document = json.loads(out.read_text())
    document["context"][key] = record
    out.write_text(json.dumps(document))
    done = checkout.run_cli("compare", checkout.baselines / fakebench_slug(), out)
    assert one_error(done.err) == (
        f"kernelwatch: error: {out}: context {key} is not a commit and a list of benchmark names"
    )
    assert done.status == 2


def test_a_binary_whose_code_changed_since_the_baselines_commit_is_anchored(
    checkout: Checkout, monkeypatch
) -> None:
    versions: dict[str, int] = {}
    elf_beta(checkout, monkeypatch, versions)
    fakebench.configure(checkout.root / "src" / "bench" / "kernelwatch_bench_beta", note=1)
    git(checkout.root, "commit", "-q", "-am", "beta's code")
    versions[git(checkout.root, "rev-parse", "HEAD")] = 2  # a byte of its machine code
    checkout.build_current()
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 0, done.err
    assert anchor_beta_runs(checkout) == 2
    assert set(verdicts(report_of(done)).values()) == {"SAME"}
    assert "built identically" not in report_of(done)["notes"][0]


def test_a_checkout_with_uncommitted_changes_anchors_only_what_they_touched(
    checkout: Checkout, monkeypatch, tmp_path: Path
) -> None:
    """Its binaries record the commit cut by six characters and `-dirty`
    (write_build_info.cmake), as long as the commit: beta, which the changes did not touch, is
    built identically and not measured by the anchor. Before, they recorded <sha>-dirty, no
    binary was the commit's, and the anchor measured every one (GPU-8d390009: under 6 min,
    where the same code committed took 228 s)."""
    elf_beta(checkout, monkeypatch, {})
    sha = git(checkout.root, "rev-parse", "HEAD")
    dirty = ab.Side("current", "HEAD", f"{sha[:-6]}-dirty", checkout.root, checkout.root / "build")
    checkout.build(dirty, Path("-"))
    checkout.on("other")
    done = checkout.run("--out", tmp_path / "run.json", "--format", "json")
    assert done.status == 0, done.err
    assert anchor_beta_runs(checkout) == 0
    assert set(BETA) <= {n for n, v in verdicts(report_of(done)).items() if v == "IDENTICAL"}
    assert "the anchor does not measure them" in done.err


def test_an_anchor_with_every_binary_identical_measures_nothing(
    checkout: Checkout, monkeypatch
) -> None:
    """With only the identical binary run, nothing is left for the anchor: nothing is measured
    or kept, every row IDENTICAL, exit 0."""
    elf_beta(checkout, monkeypatch, {})
    checkout.on("other")
    done = checkout.run(
        "--filter", "^beta/", "--out", checkout.root.parent / "r.json", "--format", "json"
    )
    assert done.status == 0, done.err
    assert anchor_beta_runs(checkout) == 0 and checkout.anchor_runs() == 0
    report = report_of(done)
    assert set(verdicts(report).values()) == {"IDENTICAL"}
    assert not [n for n in report["notes"] if n.startswith(("level:", "noise:"))]
    assert f"anchored on {checkout.a[:12]} (nothing to measure; 3 benchmark(s)" in done.err
    assert "records no GPU" not in done.err  # the run's own context stands for the anchor's
    assert not (checkout.root / ".kernelwatch" / "anchors").exists()


SLOW_MODE = REPO / "tests" / "data" / "gpu" / "h200-card-b9b7f2b2-ab-unroll"
H200 = REPO / "baselines" / "nvidia-h200-sm90"


def _rounds(side: str, numbers: tuple[int, ...]) -> list[dict]:
    found = []
    for k in numbers:
        with gzip.open(SLOW_MODE / side / f"round-{k}.json.gz", "rt") as round_file:
            found.append(json.load(round_file))
    return found


def test_an_anchor_whose_two_processes_ran_slow_flags_no_identical_kernel() -> None:
    """docs/measurement.md, "An anchor's two processes": on one H200 card, rounds 2 and 5 of
    one build ran the latency-bound reductions about 2 % slower than its other rounds. Taken as
    an anchor of the suite's two processes, against rounds 1 and 3 of the same binary, its own
    spread flags four of them as IMPROVEMENT (as GPU-8da66dc9's anchored run read); held to the
    spread between processes the committed baseline measured, none."""
    from kernelwatch import anchor, verdict
    from kernelwatch import noise as noises
    from kernelwatch.compare import Verdict
    from kernelwatch.loading import from_documents, load
    from kernelwatch.results import resolve_metric

    judging = verdict.Judging(
        resolve_metric("real_time"),
        verdict.settings(verdict.suite_config(REPO / "baselines" / "kernelwatch.toml")),
    )
    slow = _rounds("B", (2, 5))
    run = from_documents("run", _rounds("B", (1, 3)))

    def moved(floor: noises.LevelNoise | None) -> dict[str, Verdict]:
        against = anchor.as_baseline("anchor", slow, floor)
        report = verdict.judge_result(verdict.baseline_side(against), run, judging, against)
        return {c.name: c.verdict for c in report.comparisons if c.verdict is not Verdict.SAME}

    own = moved(None)
    assert set(own.values()) == {Verdict.IMPROVEMENT} and {
        "reduction/sum/warp_shuffle/float/n:67108864/manual_time",
        "reduction/sum/naive/float/n:67108864/manual_time",
    } <= set(own)
    stored = noises.levels_from_file(noises.read_noise_file(H200 / noises.NOISE_FILE))
    assert moved(noises.process_floor(load(H200), stored)) == {}


def test_the_first_anchored_run_with_the_floor_passed_its_pull_request() -> None:
    """docs/measurement.md, "An anchor's two processes": GPU-b760cc64's anchored run of the
    reduction change, one of its own processes slow, its verdicts all SAME or IDENTICAL."""
    folder = REPO / "tests" / "data" / "gpu" / "h200-card-b760cc64-pr-unroll"
    with gzip.open(folder / "pr.json.gz", "rt") as result:
        context = json.load(result)["context"]
    assert context["gpu_uuid"].startswith("GPU-b760cc64")
    assert context["kernelwatch_anchor"].startswith(
        "anchored on b0f397d53178 (measured by this run"
    )
    log = (folder / "pr.log").read_text()
    assert "Geomean change -0.0% over 34 benchmarks: 34 SAME, 322 IDENTICAL" in log
    assert "note: noise: the anchor's own spread between processes, at least the committed" in log
