"""The shape of the package: the rows of docs/architecture.md's map hold every module, no import
points up a row (issue 33), and commands are a thin layer that no other module leans on."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, TOOLS

PACKAGE = TOOLS / "kernelwatch"
COMMANDS = "kernelwatch.commands"
# Private modules of commands/ that every command may share (they register no command).
SHARED_IN_COMMANDS = {f"{COMMANDS}._options"}
MAP = REPO / "docs" / "architecture.md"
ARROW = "─►"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if "_vendor" in relative.parts:
            continue
        parts = ["kernelwatch", *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports, `from X import Y` counted as X.Y too (Y may be a module)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _module_of(target: str) -> str:
    """The module an import names: kernelwatch.commands.run for
    kernelwatch.commands.run.main (`from kernelwatch.commands.run import main`)."""
    parts = target.split(".")
    return ".".join(parts[:3]) if target.startswith(f"{COMMANDS}.") else target


def _is_command(target: str) -> bool:
    module = _module_of(target)
    return module.startswith(f"{COMMANDS}.") and module not in SHARED_IN_COMMANDS


def test_the_import_walk_sees_every_kind_of_import(tmp_path: Path) -> None:
    modules = _modules()
    assert f"{COMMANDS}.run" in modules and "kernelwatch.cli" in modules
    assert COMMANDS in _imports("kernelwatch.cli", modules["kernelwatch.cli"])
    module = tmp_path / "x.py"
    module.write_text("import a.b\nfrom . import run\nfrom ..cli import main\n")
    found = _imports(f"{COMMANDS}.x", module)
    assert {"a.b", f"{COMMANDS}.run", "kernelwatch.cli"} <= found


def test_no_command_imports_another_command_or_the_cli() -> None:
    modules = _modules()
    wrong = [
        f"{name} imports {target}"
        for name, path in modules.items()
        if name.startswith(f"{COMMANDS}.")
        for target in _imports(name, path)
        if target.split(".")[:2] == ["kernelwatch", "cli"]
        or (_is_command(target) and _module_of(target) != name)
    ]
    assert wrong == []


def test_only_the_cli_imports_the_commands() -> None:
    modules = _modules()
    wrong = [
        f"{name} imports {target}"
        for name, path in modules.items()
        if name not in ("kernelwatch.cli", COMMANDS) and not name.startswith(f"{COMMANDS}.")
        for target in _imports(name, path)
        if target == COMMANDS or target.startswith(f"{COMMANDS}.")
    ]
    assert wrong == []


def _rows(text: str) -> tuple[list[str], dict[str, int]]:
    """The map's row labels (top first) and the row of each top-level module or package it
    names: where it stands left of an arrow or alone, else the lowest row naming it."""
    block = text.split("```\n")[3]  # the package's map: the second fenced block
    rows: list[list[str]] = [[]]
    for line in block.splitlines():
        if line.strip() and set(line.strip()) == {"─"}:
            rows.append([])
        elif line.strip():
            rows[-1].append(line)
    labels = [row[0].split()[0].rstrip("/") for row in rows]
    defined: dict[str, int] = {}
    named: dict[str, int] = {}
    for number, row in enumerate(rows):
        if labels[number] == "commands":  # its lines list the subcommands, not modules
            defined["commands"] = number
            continue
        for k, line in enumerate(row):
            tokens = re.sub(r"\([^)]*\)", " ", line).split()[1 if k == 0 else 0 :]
            after_arrow = False
            for t, token in enumerate(tokens):
                if token == ARROW:
                    after_arrow = True
                    continue
                module = token.strip(";,").rstrip("/").split(".")[0]
                ahead = tokens[t + 1] if t + 1 < len(tokens) else ""
                if ahead == ARROW or not after_arrow:
                    defined.setdefault(module, number)
                else:
                    named[module] = max(named.get(module, -1), number)
    return labels, {**named, **defined}


def _upward(modules: dict[str, Path], row_of: dict[str, int]) -> set[str]:
    """`a -> b` for each import of a top-level module or package b in a higher row than a's."""
    found = set()
    for name, path in modules.items():
        mine = name.split(".")[1] if "." in name else ""
        for target in _imports(name, path):
            parts = target.split(".")
            if parts[0] != "kernelwatch" or len(parts) < 2 or parts[1] == mine:
                continue
            if row_of.get(parts[1], -1) < row_of.get(mine, -1) and parts[1] in row_of:
                found.add(f"{name} -> kernelwatch.{parts[1]}")
    return found


def test_every_module_sits_in_a_row_of_the_map() -> None:
    _, row_of = _rows(MAP.read_text(encoding="utf-8"))
    top = {name.split(".")[1] for name in _modules() if name.count(".") >= 1}
    assert sorted(top - set(row_of)) == []


def test_no_import_points_up_a_row() -> None:
    _, row_of = _rows(MAP.read_text(encoding="utf-8"))
    assert _upward(_modules(), row_of) == set()


def test_the_row_check_catches_a_planted_upward_import(tmp_path: Path) -> None:
    labels, row_of = _rows(MAP.read_text(encoding="utf-8"))
    assert labels == ["entry", "commands", "workflows", "views", "core", "leaves"]
    assert row_of["results"] == labels.index("core") and row_of["runner"] == 2
    planted = tmp_path / "results.py"  # a core module that reaches into runner/ (a workflow)
    planted.write_text("from kernelwatch.runner import FAILED_KEY\nimport kernelwatch.names\n")
    found = _upward({"kernelwatch.results": planted}, row_of)
    assert found == {"kernelwatch.results -> kernelwatch.runner"}  # names is a leaf: allowed


# What building every command's parser may load: the commands, and the leaves and light modules
# their parsers word the help with. Anything else (numpy, a workflow) is loaded by the command
# that runs it (issue 33: `kernelwatch --help` loaded 107 modules).
PARSER_MODULES = {"cli", "commands", "config", "defaults", "errors", "files", "names"}


def test_help_loads_no_command_s_work() -> None:
    probe = (
        "import sys\nfrom kernelwatch import cli\ncli.build_parser()\n"
        "print('\\n'.join(sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=TOOLS,
        env={**os.environ, "PYTHONPATH": str(TOOLS)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    ours = {name.split(".")[1] for name in loaded if name.startswith("kernelwatch.")}
    assert ours <= PARSER_MODULES
    assert f"{COMMANDS}.compare" in loaded and "numpy" not in loaded


def _loaded_by(*argv: str) -> list[str]:
    """The kernelwatch modules `kernelwatch ARGV` loads, run to its end."""
    probe = (
        "import runpy, sys\nsys.argv = ['kernelwatch', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('kernelwatch', run_name='__main__')\n"
        "except SystemExit:\n    pass\nfinally:\n"
        "    print(' '.join(m for m in sys.modules if m.split('.')[0] == 'kernelwatch'),"
        " file=sys.stderr)\n"
    )
    return (
        subprocess.run(
            [sys.executable, "-c", probe, *argv],
            cwd=TOOLS,
            env={**os.environ, "PYTHONPATH": str(TOOLS)},
            capture_output=True,
            text=True,
            check=False,
        )
        .stderr.splitlines()[-1]
        .split()
    )  # the last line: after the command's own


# What `kernelwatch compare A B` may load (issue 33: 74 modules, every command's and a run's).
# (tool: gbench holds Ctrl-C back with it while orjson loads, which crashed when interrupted)
COMPARE_MODULES = 26


def test_a_command_loads_only_what_it_uses() -> None:
    baseline = REPO / "baselines" / "nvidia-h200-sm90" / "result.json.gz"
    run = REPO / "tests" / "data" / "gpu" / "h200-suite-card-54f59374.json.gz"
    loaded = _loaded_by("compare", str(baseline), str(run))
    assert sorted(m for m in loaded if m.startswith(f"{COMMANDS}.")) == [
        f"{COMMANDS}._options",
        f"{COMMANDS}.compare",
    ]
    assert not {"kernelwatch.runner", "kernelwatch.ncu", "kernelwatch.sass"} & set(loaded)
    assert len(loaded) <= COMPARE_MODULES, loaded
