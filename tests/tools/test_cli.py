"""The command line: help, exit statuses, outputs, bad input, and real GPU result files."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    GPU_DATA,
    H100_CONTEXT,
    REPO,
    document,
    gpu_file_params,
    installed_kernelwatch,
    rows_for,
    run_module,
)
from kernelwatch import cli, commands, stats, synthetic
from kernelwatch.commands import _options as options
from kernelwatch.compare import Settings
from kernelwatch.gbench import failed_row, read_json
from kernelwatch.loading import load


def steady(median: float, n: int = 10, seed: int = 0) -> list[float]:
    return (median * np.random.default_rng(seed).lognormal(0.0, 0.002, n)).tolist()


SUITE = {f"BM_Copy/{2**i}/manual_time": steady(10.0 * 2**i, seed=i) for i in range(8)}
SLOWED = "BM_Copy/32/manual_time"


def slowed_copy(doc: dict, name: str, factor: float = 1.10) -> dict:
    """The same document, with the repetitions of one benchmark `factor` times slower."""
    copy = json.loads(json.dumps(doc))
    for row in copy["benchmarks"]:
        if row.get("run_name", row["name"]) == name and row.get("run_type") == "iteration":
            row["real_time"] *= factor
            row["cpu_time"] *= factor
    return copy


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kernelwatch: error: "), err
    assert "Traceback" not in err
    return lines[0]


# --- help --------------------------------------------------------------------------------


def command_names() -> list[str]:
    return [module.__name__.rsplit(".", 1)[-1] for module in commands.discover()]


def help_invocations() -> list[list[str]]:
    """`--help` of the program, of every command and of every action (`baseline show`...)."""
    found: list[list[str]] = [["--help"]]

    def visit(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found.append([*path, name, "--help"])
                    visit(child, [*path, name])

    visit(cli.build_parser(), [])
    return found


def file_outputs() -> list[tuple[str, argparse.Action]]:
    """Every option of every command and action that names a FILE the command writes."""
    found: list[tuple[str, argparse.Action]] = []

    def visit(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    visit(child, [*path, name])
            elif action.metavar == "FILE" and {
                "-o",
                "--out",
                "--json",
                "--markdown",
                "--junit",
            } & set(action.option_strings):
                found.append((" ".join(path), action))

    visit(cli.build_parser(), [])
    return found


def test_every_output_file_option_refuses_a_folder_path(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Path drops a trailing slash: `report -o pages/` wrote a file named pages, exit 0.
    found = file_outputs()
    assert len(found) >= 12, found
    for where, action in found:
        assert action.type is options.output_file, f"{where} {action.option_strings}"
    done = run_cli("merge", GPU_DATA / "h200-coalescing-rep5.json.gz", "-o", f"{tmp_path}/new/")
    assert done.status == 2 and "a folder (it ends with /)" in done.err, done.err
    assert list(tmp_path.iterdir()) == []
    # `-` is stdout by convention: `export R -o -` wrote a file named -, exit 0.
    monkeypatch.chdir(tmp_path)
    done = run_cli("export", GPU_DATA / "h200-coalescing-rep5.json.gz", "-o", "-")
    assert done.status == 2 and "argument -o/--out: -: names no file" in done.err, done.err
    assert list(tmp_path.iterdir()) == []
    # A path the machine refuses (too long a name) was quoted whole in the line.
    long = f"{tmp_path}/{'d' * 5000}/x.json"
    done = run_cli("compare", GPU_DATA / "h200-coalescing-rep5.json.gz", "x.json", "--json", long)
    assert done.status == 2 and len(done.err) < 400 and "(5," in done.err, done.err
    # An empty value (`--json "$UNSET"`) names nothing: it was taken as not given, exit 0.
    for option in ("--json", "--config", "--threshold", "--metric", "--noise-file"):
        done = run_cli("compare", GPU_DATA / "h200-coalescing-rep5.json.gz", "x.json", option, "")
        assert done.status == 2 and f"argument {option}: an empty value" in done.err, done.err
    # `run --gpus ""` measured on the default GPU alone, exit 0 (found by an audit)
    for command in ("run", "selftest"):
        done = run_cli(command, "--gpus", "")
        assert done.status == 2 and "argument --gpus: an empty value" in done.err, done.err


def test_commands_are_discovered() -> None:
    assert "compare" in command_names()


@pytest.mark.parametrize("argv", help_invocations(), ids=" ".join)
def test_help_of_every_command_runs(argv: list[str], run_cli) -> None:
    result = run_cli(*argv)
    assert result.status == 0 and "usage: kernelwatch" in result.out
    assert "exit status" in result.out
    # Descriptions and epilogs are laid out by hand (RawDescriptionHelpFormatter): 100 columns.
    assert [line for line in result.out.splitlines() if len(line) > 100] == []


def test_compare_help_documents_exit_statuses(run_cli) -> None:
    out = run_cli("compare", "--help").out
    for line in ("0  no regression", "1  at least one REGRESSION", "2  bad input or usage"):
        assert line in out


def test_version_and_no_command(run_cli) -> None:
    assert run_cli("--version").out.startswith("kernelwatch ")
    result = run_cli()
    assert result.status == 2 and len(result.err.splitlines()) == 1
    assert result.err.startswith("kernelwatch: error: name a command: ab, baseline, bisect,")
    result = run_cli("history")
    assert result.status == 2 and len(result.err.splitlines()) == 1
    assert "history: name an action: ingest, list, show, changes, remove" in result.err


def test_help_through_python_m() -> None:
    for argv in (["--help"], ["compare", "--help"]):
        done = run_module(*argv)
        assert done.returncode == 0 and "usage: kernelwatch" in done.stdout


@pytest.mark.skipif(
    installed_kernelwatch() is None,
    reason="kernelwatch is not installed (pip install ./tools) on PATH",
)
def test_installed_console_script(write_json) -> None:
    script = installed_kernelwatch()
    for argv in (["--help"], ["compare", "--help"]):
        done = subprocess.run([script, *argv], capture_output=True, text=True)
        assert done.returncode == 0 and "usage: kernelwatch" in done.stdout
    a = write_json("a.json", SUITE, context=H100_CONTEXT)
    b = write_json("b.json", slowed_copy(document(SUITE), SLOWED))
    done = subprocess.run([script, "compare", a, b], capture_output=True, text=True)
    assert done.returncode == 1 and SLOWED in done.stdout


# --- the three things it must show (synthetic data) ----------------------------------------


def test_self_comparison_exits_0(write_json, run_cli) -> None:
    path = write_json("run.json", SUITE)
    result = run_cli("compare", path, path)
    assert result.status == 0, result.out
    assert "REGRESSION" not in result.out


def test_slowed_benchmark_exits_1_and_is_named(write_json, run_cli) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", slowed_copy(document(SUITE), SLOWED))
    result = run_cli("compare", a, b)
    assert result.status == 1
    regressions = [line for line in result.out.splitlines() if line.startswith("REGRESSION")]
    assert len(regressions) == 1 and SLOWED in regressions[0] and "+10.0%" in regressions[0]


def test_truncated_file_exits_2_with_one_line(write_json, run_cli) -> None:
    a = write_json("a.json", SUITE)
    text = a.read_text()
    b = write_json("b.json", text[: len(text) // 2])
    result = run_cli("compare", a, b)
    assert result.status == 2 and result.out == ""
    assert "truncated" in one_error_line(result.err)


def test_exit_statuses_through_python_m(write_json) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", slowed_copy(document(SUITE), SLOWED))
    t = write_json("t.json", a.read_text()[:300])
    assert run_module("compare", a, a).returncode == 0
    slowed = run_module("compare", a, b)
    assert slowed.returncode == 1 and SLOWED in slowed.stdout
    truncated = run_module("compare", a, t)
    assert truncated.returncode == 2 and truncated.stdout == ""
    one_error_line(truncated.stderr)


# --- the same on real GPU result files ------------------------------------------------------


def _loneliest_benchmark(path: Path) -> tuple[str, int, int]:
    """The benchmark to slow down (most repetitions), its repetitions, and how many compare."""
    side = load(path)
    counts = {name: int(side.counts[side.index[name]]) for name in side.names}
    name = max(counts, key=lambda n: (counts[n], n))
    tested = sum(c >= Settings().min_repetitions for c in counts.values())
    return name, counts[name], tested


@pytest.mark.parametrize("path", gpu_file_params())
def test_real_file_against_itself_exits_0(path: Path, run_cli) -> None:
    result = run_cli("compare", path, path)
    assert result.status == 0, result.out + result.err
    assert "REGRESSION" not in result.out


@pytest.mark.parametrize("path", gpu_file_params())
def test_real_file_with_one_benchmark_10_percent_slower_exits_1(
    path: Path, tmp_path: Path, run_cli
) -> None:
    name, n, tested = _loneliest_benchmark(path)
    if stats.min_p_value(n, n) * tested >= Settings().alpha:
        pytest.skip(
            f"{path.name}: {n} repetitions cannot make one change among {tested} "
            "significant after Benjamini-Hochberg; record more repetitions"
        )
    slowed = tmp_path / "slowed.json"
    slowed.write_text(json.dumps(slowed_copy(read_json(path), name)))
    result = run_cli("compare", path, slowed)
    assert result.status == 1, result.out
    regressions = [line for line in result.out.splitlines() if line.startswith("REGRESSION")]
    assert len(regressions) == 1 and name in regressions[0]


@pytest.mark.parametrize("path", gpu_file_params())
def test_real_file_truncated_exits_2(path: Path, tmp_path: Path, run_cli) -> None:
    truncated = tmp_path / "truncated.json"
    data = path.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    result = run_cli("compare", path, truncated)
    assert result.status == 2
    one_error_line(result.err)


@pytest.mark.parametrize("path", gpu_file_params())
def test_real_file_every_output_format(path: Path, tmp_path: Path, run_cli) -> None:
    junit = tmp_path / "junit.xml"
    for fmt in ("table", "markdown", "json"):
        result = run_cli("compare", path, path, "--format", fmt, "--junit", junit)
        assert result.status == 0
    ET.parse(junit)


# --- every bad input: exit 2 and one clear line ---------------------------------------------


def _doc_with(mutate) -> dict:
    doc = document(SUITE, aggregates=False)
    mutate(doc["benchmarks"])
    return doc


BAD_INPUTS = {
    "missing file": (None, "no such file or directory"),
    "empty file": ("", "empty file"),
    "truncated JSON": ('{"context": {}, "benchmarks": [{"name": "BM_a", "re', "truncated"),
    "invalid JSON": ('{"context": {}, "benchmarks": [}]}', "invalid JSON: Expecting value"),
    "not a benchmark result": ('{"results": []}', "not a Google Benchmark result"),
    "a list, not an object": ("[1, 2, 3]", "not a Google Benchmark result"),
    "NaN time": (_doc_with(lambda rows: rows[3].update(real_time=math.nan)), "real_time is NaN"),
    "negative time": (_doc_with(lambda rows: rows[3].update(real_time=-4.0)), "real_time is -4.0"),
    "zero time": (_doc_with(lambda rows: rows[3].update(real_time=0.0)), "real_time is 0.0"),
    "duplicate names": (
        document(rows=rows_for({"BM_a": [1.0, 2.0]}) + rows_for({"BM_a": [3.0, 4.0]})),
        "duplicate benchmark name 'BM_a'",
    ),
    "mismatched units": (
        _doc_with(lambda rows: rows[3].update(time_unit="ms")),
        "mismatched time units (us and ms) in one benchmark",
    ),
    "empty benchmark list": ({"context": {}, "benchmarks": []}, "holds no benchmark results"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input(case: str, write_json, tmp_path: Path, run_cli) -> None:
    content, message = BAD_INPUTS[case]
    good = write_json("good.json", SUITE)
    bad = tmp_path / "absent.json" if content is None else write_json("bad.json", content)
    for argv in (("compare", good, bad), ("compare", bad, good)):
        result = run_cli(*argv)
        assert result.status == 2 and result.out == ""
        line = one_error_line(result.err)
        assert message in line and str(bad) in line, line


def test_bad_input_never_prints_a_traceback(write_json, tmp_path: Path) -> None:
    """In a fresh interpreter too (a few cases: each costs an interpreter start)."""
    good = write_json("good.json", SUITE)
    for case in ("missing file", "NaN time", "duplicate names"):
        content, _ = BAD_INPUTS[case]
        bad = tmp_path / "absent.json" if content is None else write_json("bad.json", content)
        done = run_module("compare", good, bad)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        one_error_line(done.stderr)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metric", "latency_cycles"], "unknown direction for this counter"),
        (["--metric", "items_per_second"], "no benchmark has the metric 'items_per_second'"),
        (["--threshold", "5"], "write a fraction (0.05) or a percentage (5%)"),
        (["--alpha", "2"], "alpha 2: must be at least 1e-15 and below 1"),
        (["--alpha", "1e-16"], "alpha 1e-16: must be at least 1e-15 and below 1"),  # was internal
        (["--config", "/nonexistent/k.toml"], "cannot read"),
        (["--junit", "/nonexistent/dir/junit.xml"], "cannot write"),
    ],
)
def test_bad_options(extra: list[str], message: str, write_json, run_cli) -> None:
    path = write_json("a.json", SUITE)
    result = run_cli("compare", path, path, *extra)
    assert result.status == 2
    assert message in one_error_line(result.err)


def test_usage_errors_exit_2(run_cli) -> None:
    assert run_cli("compare").status == 2
    assert run_cli("compare", "a", "b", "--format", "yaml").status == 2
    assert run_cli("frobnicate").status == 2


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["compare", "a.json", "b.json", "c.json"], "compare"),
        (["history", "ingest", "a.json", "b.json"], "history ingest"),
        (["history", "list", "--nope"], "history list"),
        (["--nope"], ""),
    ],
)
def test_unrecognized_arguments_point_to_their_commands_help(
    run_cli, argv: list[str], command: str
) -> None:
    """An argument no (sub)command takes is named with the help of the command given, not of
    kernelwatch as a whole ("history ingest A B": ingest takes one file)."""
    done = run_cli(*argv)
    where = f"{command}: " if command else ""
    hint = f"kernelwatch {command} --help".replace("  ", " ")
    assert done.status == 2 and done.err == (
        f"kernelwatch: error: {where}unrecognized arguments: {argv[-1]} (see {hint})\n"
    )


# --- options --------------------------------------------------------------------------------


def test_missing_and_error_exit_1_unless_allowed(write_json, run_cli) -> None:
    a = write_json("a.json", SUITE)
    fewer = dict(SUITE)
    fewer.pop(SLOWED)
    b = write_json("b.json", fewer)
    assert run_cli("compare", a, b).status == 1
    assert run_cli("compare", a, b, "--allow-missing").status == 0
    error = failed_row(SLOWED, "oom")
    c = write_json("c.json", document(fewer, rows=[error]))
    assert run_cli("compare", a, c).status == 1
    assert run_cli("compare", a, c, "--allow-errors").status == 0


def test_gpu_mismatch(write_json, run_cli) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", SUITE, context=dict(H100_CONTEXT, gpu_name="NVIDIA H200"))
    result = run_cli("compare", a, b)
    assert result.status == 2 and "--allow-gpu-mismatch" in one_error_line(result.err)
    allowed = run_cli("compare", a, b, "--allow-gpu-mismatch")
    assert allowed.status == 0
    assert allowed.err.startswith("kernelwatch: warning: different GPU models")


def test_driver_difference_warns(write_json, run_cli) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", SUITE, context=dict(H100_CONTEXT, gpu_driver_version="590.1"))
    result = run_cli("compare", a, b)
    assert result.status == 0
    assert result.err == (
        "kernelwatch: warning: different driver: baseline 580.159.04, contender 590.1\n"
    )


def test_outputs(write_json, tmp_path: Path, run_cli) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", slowed_copy(document(SUITE), SLOWED))
    junit = tmp_path / "junit.xml"
    as_json = run_cli("compare", a, b, "--format", "json", "--junit", junit)
    assert as_json.status == 1
    doc = json.loads(as_json.out)
    assert doc["schema_version"] == 2 and doc["benchmarks"][0]["name"] == SLOWED
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == str(len(SUITE)) and suite.get("failures") == "1"
    markdown = run_cli("compare", a, b, "--format", "markdown")
    assert markdown.out.startswith("### kernelwatch compare: 1 regression")
    coloured = run_cli("compare", a, b, "--color", "always")
    assert "\033[" in coloured.out
    assert "\033[" not in run_cli("compare", a, b).out  # not a terminal: no colour


def test_threshold_and_config(write_json, tmp_path: Path, run_cli) -> None:
    a = write_json("a.json", SUITE)
    b = write_json("b.json", slowed_copy(document(SUITE), SLOWED))
    assert run_cli("compare", a, b, "--threshold", "15%").status == 0
    config = tmp_path / "k.toml"
    config.write_text(
        '[compare]\nthreshold = "1%"\n[[compare.thresholds]]\n'
        'match = "^BM_Copy/32/"\nthreshold = "12%"\n'
    )
    assert run_cli("compare", a, b, "--config", config).status == 0
    assert (
        run_cli("compare", a, b, "--config", config, "--threshold", "2%").status == 0
    )  # rule wins
    config.write_text('[compare]\nthreshold = "12%"\n')
    assert run_cli("compare", a, b, "--config", config).status == 0
    assert run_cli("compare", a, b, "--config", config, "--threshold", "5%").status == 1


def test_counter_metric(write_json, run_cli) -> None:
    counters = {
        n: {"bytes_per_second": [1e9 / t for t in ts], "cycles": [100.0] * len(ts)}
        for n, ts in SUITE.items()
    }
    a = write_json("a.json", document(SUITE, counters=counters))
    b = write_json("b.json", slowed_copy(document(SUITE, counters=counters), SLOWED))
    assert (
        run_cli("compare", a, b, "--metric", "bytes_per_second").status == 0
    )  # counters unchanged
    assert run_cli("compare", a, b, "--metric", "cycles", "--lower-is-better").status == 0
    assert run_cli("compare", a, b, "--metric", "cpu_time").status == 1


def test_directory_inputs(write_json, tmp_path: Path, run_cli) -> None:
    write_json("base/1.json", SUITE)
    write_json("base/2.json", {n: steady(v[0], seed=9) for n, v in SUITE.items()})
    write_json("cont/1.json", slowed_copy(document(SUITE), SLOWED))
    result = run_cli("compare", tmp_path / "base", tmp_path / "cont", "--format", "json")
    doc = json.loads(result.out)
    assert len(doc["baseline"]["paths"]) == 2
    assert doc["benchmarks"][0]["baseline"]["processes"] == 2


def test_interrupt_and_internal_error_are_one_line(monkeypatch, write_json, run_cli) -> None:
    path = write_json("a.json", SUITE)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("kernelwatch.verdict.compare", interrupted)
    result = run_cli("compare", path, path)
    assert result.status == 130 and result.err == "kernelwatch: interrupted\n"

    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr("kernelwatch.verdict.compare", broken)
    result = run_cli("compare", path, path)
    assert result.status == 2
    assert result.err.startswith("kernelwatch: internal error: RuntimeError: bug")


def test_a_missing_package_is_one_line_naming_it(write_json) -> None:
    """Without numpy (a fresh machine, `PYTHONPATH=tools python3 -m kernelwatch`): one line
    that says what to install, never an internal error."""
    path = write_json("a.json", SUITE)
    code = (
        "import sys; sys.modules['numpy'] = None; from kernelwatch import cli; "
        f"sys.exit(cli.main(['compare', {str(path)!r}, {str(path)!r}]))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "kernelwatch: error: the Python package numpy is not installed: pip install numpy "
        "(in a checkout: tools/kw setup-python)\n"
    )


def test_an_interrupt_while_the_commands_are_imported_is_one_line(monkeypatch, run_cli) -> None:
    # Ctrl-C in the first ~0.3 s (importing every command, numpy) printed a traceback: the
    # parser was built outside main's handlers.
    def interrupted(wanted: str | None = None) -> list[object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "discover", interrupted)
    result = run_cli("compare", "a.json", "b.json")
    assert result.status == 130 and result.err == "kernelwatch: interrupted\n"


class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise ValueError("no descriptor")

    def isatty(self) -> bool:
        return False


def test_closed_pipe_is_quiet(write_json, monkeypatch, capsys) -> None:
    """`kernelwatch compare ... | head -1`: no traceback when the reader goes away."""
    path = write_json("a.json", SUITE)
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert cli.main(["compare", str(path), str(path)]) == 141
    assert capsys.readouterr().err == ""


def test_closed_pipe_through_python_m(write_json) -> None:
    many = {f"BM_{i}": steady(10.0 + i, seed=i) for i in range(1500)}
    path = write_json("a.json", many)
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelwatch", "compare", str(path), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(REPO / "tools")),
    )
    process.stdout.read(10)
    process.stdout.close()
    err = process.stderr.read().decode()
    # 141 when the write fails; 0 when the kernel took the whole table before the close.
    assert process.wait() in (0, 141) and err == ""


def test_default_paths_are_worded_as_the_project_finds_them(run_cli) -> None:
    """report's --baselines and --db, and compare's config, default to the project's folders
    (kernelwatch.project: the nearest folder up holding baselines/ or .git), not the checkout's."""
    for argv in (("report", "--help"), ("compare", "--help")):
        out = " ".join(run_cli(*argv).out.split())
        assert "in the checkout" not in out, argv
    out = " ".join(run_cli("report", "--help").out.split())
    assert out.count("in the project: the nearest folder") == 2
