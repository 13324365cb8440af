"""The project being measured: the folder whose baselines/, build/ and results/history.sqlite
the commands use by default.

It is the nearest folder, from the current one up, that holds a `baselines` folder or is a git
repository's root (`.git`): kernelwatch's own checkout (which has both), or another project
that runs kernelwatch as a tool, from its root or any folder below it (docs/, build/). Where no
such folder is found, the kernelwatch checkout this package runs from (PYTHONPATH=tools),
else none: the commands that need a project then stop with one line saying where they looked
and which option names the path, rather than start a database or a baselines folder in the
current folder (an installed `kernelwatch` run from $HOME).
"""

from __future__ import annotations

from pathlib import Path

from kernelwatch.errors import InputError

# What marks a project's root: its baselines, or its repository (before its first baseline).
MARKERS = ("baselines", ".git")


class NoProject(InputError):
    """No project found where the command looked, and its path was not named."""


def _is_root(folder: Path) -> bool:
    try:
        return (folder / "baselines").is_dir() or (folder / ".git").exists()
    except OSError:  # a folder that may not be read is no project of ours
        return False


def package_checkout() -> Path | None:
    """The kernelwatch checkout this package is part of (tools/kernelwatch), or None (an
    installed package)."""
    tools = Path(__file__).resolve().parents[1]
    if tools.name == "tools" and (tools / "pyproject.toml").is_file():
        checkout = tools.parent
        if (checkout / "baselines" / "kernelwatch.toml").is_file():
            return checkout
    return None


def current_folder() -> Path:
    """Path.cwd(), or one line where the folder was removed meanwhile (a build folder made
    anew): its FileNotFoundError was an internal error."""
    try:
        return Path.cwd()
    except OSError as exc:
        raise InputError(
            f"cannot find the current folder ({exc.strerror or exc}): it was removed, or may "
            "not be read; run kernelwatch from a folder that exists"
        ) from None


def find(start: Path | None = None) -> Path | None:
    """The project's root (see the module's text), or None."""
    here = (start or current_folder()).resolve()
    for folder in (here, *here.parents):
        if _is_root(folder):
            return folder
    return package_checkout()


def root(point: str) -> Path:
    """The project's root; refuses, naming where it looked and `point` (how to name the path
    instead: "name the database with --db PATH"), when there is none."""
    found = find()
    if found is not None:
        return found
    here = current_folder().resolve()
    raise NoProject(
        f"no project found: looked for a folder holding {MARKERS[0]}/ or {MARKERS[1]} in {here} "
        f"and every folder above it, and this kernelwatch ({Path(__file__).resolve().parent}) "
        f"is not in a kernelwatch checkout; run it from your project's folder, or {point}"
    )
