"""tools/kw, the developer entry point, as far as it runs without a GPU and a real build:
fake nvidia-smi and cmake programs stand in for them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from kernelwatch import locks

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(shutil.which("flock") is None, reason="no flock(1) (util-linux)"),
    pytest.mark.skipif(
        subprocess.run(
            [os.environ.get("CXX", "c++"), "-std=c++17", "-E", "-x", "c++", "-"],
            input="#include <benchmark/benchmark.h>\n#include <gtest/gtest.h>\n"
            "#include <nlohmann/json.hpp>\n",
            capture_output=True,
            text=True,
        ).returncode
        != 0,
        reason="the C++ libraries are not installed (tools/kw would install them)",
    ),
]


def _fakes(tmp_path: Path) -> dict[str, str]:
    """PATH with an nvidia-smi that finds a GPU and a cmake that, building, notes whether the
    host lock is held by someone (a non-blocking exclusive flock fails) and can be told to wait."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
    (bin_dir / "cmake").write_text(
        "#!/bin/bash\n"
        '[ "$1" = --build ] || exit 0\n'
        'if flock -n -x "$KERNELWATCH_LOCK_DIR/host.lock" true; then state=free; else state=held; fi\n'
        f'echo "$state" >> {tmp_path / "built"}\n'
    )
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    return dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        KERNELWATCH_LOCK_DIR=str(tmp_path / "locks"),
    )


def test_its_build_holds_the_host_lock_shared_and_waits_for_a_host_bound_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of every core beside another GPU's host-bound benchmarks (transfers) slowed
    them: tools/kw's build takes the host lock as kernelwatch's own builds do (locks.py), so
    it waits while a host-bound benchmark holds it, and holds it shared while it builds."""
    env = _fakes(tmp_path)
    monkeypatch.setenv(locks.LOCK_DIR_ENV, env["KERNELWATCH_LOCK_DIR"])
    built = tmp_path / "built"
    with locks.host_exclusive():
        suite = subprocess.Popen(
            [str(REPO / "tools" / "kw"), "suite", "--help"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)
        assert not built.exists() and suite.poll() is None
    _, err = suite.communicate(timeout=120)
    assert suite.returncode == 0, err
    assert "kw: waiting for a host-bound benchmark on this host" in err
    assert built.read_text() == "held\n"  # (by the build itself: shared)


def test_its_build_goes_on_without_the_lock_where_no_lock_folder_can_be_made(
    tmp_path: Path,
) -> None:
    """A lock folder that cannot be made (its parent a file) costs the lock, not the build:
    tools/kw builds, saying so."""
    env = _fakes(tmp_path)
    (tmp_path / "file").write_text("")
    env["KERNELWATCH_LOCK_DIR"] = str(tmp_path / "file" / "locks")
    done = subprocess.run(
        [str(REPO / "tools" / "kw"), "suite", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "kw: no flock(1) or no lock folder" in done.stderr
    assert (tmp_path / "built").exists()
