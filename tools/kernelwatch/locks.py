"""Host-wide locks that keep measurements on one host from disturbing each other.

Two kinds, both fcntl.flock on files in one folder (KERNELWATCH_LOCK_DIR, default
/tmp/kernelwatch-locks; runners in separate containers of one host must share it):

* One GPU: whoever measures on a GPU holds gpu-<UUID>.lock, so two kernelwatch commands never
  measure on the same card at once (`ab` builds the next commit meanwhile).
* The host: a build holds host.lock shared; a host-bound benchmark (transfers: the host's
  memory, PCIe and the driver decide its figure) holds it exclusive, so it measures while no
  build and no other host-bound benchmark runs on the host. Two GPUs of an H200 host running
  the whole suite at once showed pageable copies 40-67% slower than the one-GPU baseline
  (issue 15). Other GPUs' GPU-bound benchmark processes take no host lock and measure beside
  it: waiting for it left GPU 1 of a two-GPU H100 host idle for half its run (GPU-28cc5c97,
  measured in 131 s for 60 s of benchmarks), and `run --gpus all` took 0.58x the two GPUs one
  after the other.

A waiting exclusive holder takes a turnstile first, which new shared holders must pass, so a
steady stream of builds cannot keep a host-bound benchmark waiting for ever.

And one output path: a command that measures holds output-<hash>.lock for each path it was told
to write (`writing`), so that a second command told to write one of them is refused at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from kernelwatch.errors import InputError

LOCK_DIR_ENV = "KERNELWATCH_LOCK_DIR"
DEFAULT_LOCK_DIR = Path("/tmp/kernelwatch-locks")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

# Told when a lock is not free at once: a line for the user ("waiting for ...").
Waiting = Callable[[str], None]


def lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_ENV) or DEFAULT_LOCK_DIR)


def _open(name: str) -> IO[bytes]:
    folder = lock_dir()
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                folder.chmod(0o1777)  # shared by every user of the host, like /tmp
        path = folder / name
        # Not through a link: the folder is shared by every user, and a lock file planted as a
        # link to someone's file made that file mode 0666 (os.chmod follows links).
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        handle = os.fdopen(os.open(path, flags, 0o666), "a+b")
        info = os.fstat(handle.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:  # (not a hard link's either)
            with contextlib.suppress(OSError):
                os.fchmod(handle.fileno(), 0o666)
        return handle
    except OSError as exc:
        raise InputError(
            f"cannot open the lock file {folder / name}: {exc.strerror or exc}; set "
            f"{LOCK_DIR_ENV} to a folder every kernelwatch user of this host can write"
        ) from None


@contextlib.contextmanager
def _flock(name: str, mode: int, waiting: Waiting | None, why: str) -> Iterator[None]:
    handle = _open(name)
    try:
        try:
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting:
                    waiting(why)
                fcntl.flock(handle, mode)
        except OSError as exc:  # (ENOLCK: a file system without locks) measuring unguarded
            raise InputError(  # would let two commands disturb each other's figures unseen
                f"cannot lock {lock_dir() / name}: {exc.strerror or exc}; set {LOCK_DIR_ENV} "
                "to a folder on a local file system every kernelwatch user of this host can "
                "write"
            ) from None
        yield
    finally:
        handle.close()  # releases the lock


def gpu_lock(uuid: str, waiting: Waiting | None = None) -> contextlib.AbstractContextManager[None]:
    """Held while measuring on the GPU `uuid`."""
    name = "gpu-" + _UNSAFE.sub("_", uuid) + ".lock"
    return _flock(name, fcntl.LOCK_EX, waiting, f"waiting for another measurement on {uuid}")


@contextlib.contextmanager
def host_shared(waiting: Waiting | None = None) -> Iterator[None]:
    """Held by a build: excludes host-bound measurements."""
    with _flock("turnstile.lock", fcntl.LOCK_EX, waiting, "waiting for a host-bound benchmark"):
        pass
    with _flock("host.lock", fcntl.LOCK_SH, waiting, "waiting for a host-bound benchmark"):
        yield


@contextlib.contextmanager
def host_exclusive(waiting: Waiting | None = None) -> Iterator[None]:
    """Held by a host-bound benchmark process: no build and no other host-bound benchmark of
    kernelwatch runs on the host meanwhile."""
    why = "host-bound benchmarks wait for builds and each other"
    with _flock("turnstile.lock", fcntl.LOCK_EX, waiting, why):
        with _flock("host.lock", fcntl.LOCK_EX, waiting, why):
            yield


@contextlib.contextmanager
def writing(outputs: Iterable[tuple[str, str | Path | None]]) -> Iterator[None]:
    """Held by a command that measures (run, ab, selftest), from before it measures to its end,
    for each path it was told to write, as (option, path); a None path is not held. A second
    command told to write one of them is refused at once (exit 2): two `run --out r.json` at
    once both measured, both said "wrote r.json", and the later one replaced the other's result
    (two `ab --out DIR` each judged the other's rounds)."""
    with contextlib.ExitStack() as held:
        taken: set[Path] = set()
        for option, path in outputs:
            if not path:
                continue
            try:
                where = Path(path).resolve()  # (one file, however it is named)
            except (OSError, RuntimeError):
                where = Path(os.path.abspath(path))
            if where not in taken:  # (named twice: the command's own check words it)
                taken.add(where)
                held.enter_context(_sole_writer(option, Path(path), where))
        yield


@contextlib.contextmanager
def _sole_writer(option: str, path: Path, where: Path) -> Iterator[None]:
    name = f"output-{hashlib.sha256(os.fsencode(where)).hexdigest()[:24]}.lock"
    lock = lock_dir() / name
    while True:
        handle = _open(name)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise InputError(
                f"{option} {path}: another kernelwatch command is writing it now; name another "
                "path, or run this one when that one has ended"
            ) from None
        except OSError:  # (ENOLCK: no locks on this file system) goes on without one
            handle.close()
            yield
            return
        if _names(lock, handle):
            break
        handle.close()  # its holder removed it as it ended: lock the file named now
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)  # removed while held: no lock file is left per path ever written
        handle.close()


def _names(path: Path, handle: IO[bytes]) -> bool:
    """Whether `path` still names the file open in `handle`."""
    try:
        named, held = os.stat(path), os.fstat(handle.fileno())
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)
