"""The shape of the package (issue 17): commands are a thin layer that no other module leans on,
and a module that grows past 400 lines says why at its top."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import TOOLS

PACKAGE = TOOLS / "kernelwatch"
COMMANDS = "kernelwatch.commands"
# Private modules of commands/ that every command may share (they register no command).
SHARED_IN_COMMANDS = {f"{COMMANDS}._options", f"{COMMANDS}._parsers"}
MAX_LINES = 400


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


def test_no_module_is_over_400_lines_without_a_reason_at_its_top() -> None:
    too_big = []
    for path in _modules().values():
        relative = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if not any(line.startswith("Over 400 lines:") for line in docstring.splitlines()):
            too_big.append(f"{relative}: {len(text.splitlines())} lines")
    assert too_big == []
