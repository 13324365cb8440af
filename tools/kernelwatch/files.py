"""Writing output files: the one writer every command uses.

`write_atomic` writes a temporary file beside the target and renames it over the target, so a
reader (or a crash) never sees half a file. It replaces only a regular file: a device node
(`-o /dev/full`), a FIFO, a symlink or a folder is refused with one line, since renaming over
it would turn `/dev/null` into a report, or write through a link to a file nobody named. A
missing folder is refused too (a mistyped path should not grow a tree), unless the caller owns
the folder (`make_parents`: a run's results/, a bisect's work folder).

`check_outputs` checks all the paths a command writes before it does any work: none is one of
its inputs, none is named twice, each can be written.

`write_output` puts a command's report on stdout and words a failing write (`> /dev/full`) as
one line.

Every way kernelwatch writes a file (one file, a folder as a whole) and every
check of an output path live here, so that no command writes past them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import gzip
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from kernelwatch.errors import InputError, OutputError, shortened


def check_writable(path: str | Path, *, make_parents: bool = False) -> Path:
    """Refuse a target that is not a regular file (or absent), or that lies in a missing
    folder; before any work is done, so that a bad -o fails fast."""
    target = Path(path)
    try:
        info = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):  # (the folder's check words the latter)
        info = None
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{target}: not a regular file ({_kind(info.st_mode)}); refusing to replace it"
        )
    if make_parents:
        _check_makeable(target.parent, target)
    else:
        _check_folder_here(target.parent, target)
    return target


def _check_folder_here(folder: Path, target: Path) -> None:
    """`folder` exists, is a folder and takes new files."""
    if not folder.is_dir():
        what = (
            f"{folder} is not a folder"
            if folder.exists()
            else f"the folder {folder} does not exist"
        )
        raise InputError(f"{target}: cannot write: {what}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{target}: cannot write: no permission to write in {folder}")


def _check_makeable(folder: Path, target: Path) -> None:
    """`folder` exists or can be made: its nearest existing ancestor is a folder that takes
    new files (`--out /etc/passwd/x` fails here, not after the measurement)."""
    ancestor = folder
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    _check_folder_here(ancestor, target)


@dataclass(frozen=True)
class Output:
    """A path a command writes, as the user named it: a file it replaces whole, or a folder it
    fills with files of its own names. None or "" as the path: not asked for."""

    option: str  # "--json", "-o", ...
    path: str | Path | None
    folder: bool = False
    make_parents: bool = False  # the command owns the folder (results/): a missing one is made


@dataclass(frozen=True)
class Input:
    """A path a command reads: a file, or a folder whose files it reads (results, a baselines
    root, a selftest's runs). None or "" as the path: not read."""

    what: str  # "the contender", "--db", ...
    path: str | Path | None
    folder: bool = False  # a folder even before it exists (one the command fills, then reads)


def check_outputs(outputs: Iterable[Output], inputs: Iterable[Input] = ()) -> None:
    """Every command's output paths, checked before any work is done: none is an input or lies
    inside an input folder (`compare a.json b.json --json b.json` would destroy the contender;
    a report in a folder of results breaks the next compare of it), none is named twice, and
    each can be written (check_writable; a folder output is a folder or can be made). Paths
    are compared resolved, through symbolic links, and by inode where both exist.

    A folder output is only checked for writability and against the other outputs: a command
    fills it with names of its own and may read it back (selftest --resume); a file output
    inside it is refused where the command passes the folder as an input too."""
    sources = [(i, i.path, _resolved(i.path)) for i in inputs if i.path]
    seen: list[tuple[Output, str | Path, Path]] = []
    for output in outputs:
        if not output.path:
            continue
        name, path = output.path, _resolved(output.path)
        for given, source, where in sources if not output.folder else ():
            if path == where or _same_file(name, source):
                raise InputError(
                    f"{output.option} {name}: is an input of this command ({given.what}); "
                    "refusing to overwrite it"
                )
            if where in path.parents and (given.folder or Path(source).is_dir()):
                raise InputError(
                    f"{output.option} {name}: lies inside an input folder of this command "
                    f"({given.what}: {source}); refusing to write there"
                )
        for other, other_name, where in seen:
            if path == where or _same_file(name, other_name):
                raise InputError(
                    f"{output.option} {name}: is also written as {other.option}; name another "
                    "path"
                )
        seen.append((output, name, path))
    # Folders an owned output makes (results/ in a fresh checkout) take the other files too.
    made = {p for o, _, path in seen if o.make_parents for p in (path, *path.parents)}
    for output, name, path in seen:
        if not output.folder and Path(name).is_dir():
            raise InputError(f"{output.option} {name}: is a directory; name a file")
        try:
            if output.folder:
                _check_output_folder(Path(name), output.make_parents)
            else:
                check_writable(name, make_parents=output.make_parents or path.parent in made)
        except InputError as exc:
            raise InputError(f"{output.option} {exc}") from None


def _check_output_folder(folder: Path, make_parents: bool) -> None:
    if folder.is_dir():
        _check_folder_here(folder, folder)
    elif os.path.lexists(folder):
        info = os.lstat(folder)
        raise InputError(f"{folder}: not a folder ({_kind(info.st_mode)}); refusing to write there")
    elif make_parents:
        _check_makeable(folder.parent, folder)
    else:
        _check_folder_here(folder.parent, folder)


def _resolved(path: str | Path) -> Path:
    """`path` absolute, through its symbolic links (as far as they exist)."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a loop of links: compared as written
        return Path(os.path.abspath(path))


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Both exist and are one file (a hard link, a bind mount)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_input_file(path: str | Path, what: str, *, pipe: bool = True) -> None:
    """Refuse an input that is not read as a file: a device (/dev/zero never ends: read whole,
    it fills the memory until the kernel kills kernelwatch, no line said why), a named FIFO
    (its read waits for ever for a writer that may never come: compare, export, merge and
    history ingest hung on one) and, unless `pipe`, any pipe or a socket (SQLite's open of a
    FIFO waits for ever). A pipe of the shell's, `<(...)` or stdin, is read as a file where
    `pipe`: its writer is running. A missing path or a folder is left to the reader, which
    words it. `what`: what the input should be ("a result file")."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or (pipe and _shells_pipe(path, mode)):
        return
    raise InputError(f"{path}: {_kind(mode)}, not {what}")


def _shells_pipe(path: str | Path, mode: int) -> bool:
    """A pipe without a name (`<(...)`, /dev/stdin): its path resolves to `pipe:[inode]`, which
    names nothing, where a named FIFO's resolves to itself."""
    return stat.S_ISFIFO(mode) and not os.path.lexists(os.path.realpath(path))


def check_input_dir(path: str | Path, option: str) -> None:
    """Refuse `option`'s folder where there is none: "no such directory", or what is there
    instead (a file named where a folder is asked for read as missing)."""
    said = shortened(str(path), 200)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:  # (a name too long: its OSError's line held all of it)
        missing = exc.errno in (errno.ENOENT, errno.ENOTDIR)
        raise InputError(
            f"{option} {said}: {'no such directory' if missing else exc.strerror or exc}"
        ) from None
    if not stat.S_ISDIR(mode):
        raise InputError(f"{option} {said}: {_kind(mode)}, not a directory")


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a regular file"),  # (a file named as a folder: selftest --out r.json)
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def write_atomic(
    path: str | Path, data: str | bytes, *, make_parents: bool = False, new: bool = False
) -> Path:
    """Write `data` to a temporary file beside `path`, then rename it over `path` (a regular
    file or nothing; see the module's docstring). With `new` (a name the caller made, not one
    the user gave) no file is replaced: where `path` is taken, the first free `<stem>-2<suffix>`,
    `-3`, ... is written. Returns the path written."""
    target = check_writable(path, make_parents=make_parents)
    payload = _utf8(data) if isinstance(data, str) else data
    claimed: Path | None = None
    try:
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        _take_mode(temporary, None if new else target)
        check_writable(target, make_parents=True)  # (a link planted meanwhile)
        if new:
            target = claimed = _claim(target)
        os.replace(temporary, target)
    except OSError as exc:
        _discard(temporary, claimed)
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _discard(temporary, claimed)
        raise
    return target


def _take_mode(temporary: str, target: Path | None) -> None:
    """Give the temporary file the mode (and, as root, the owner) of the file it replaces: a
    private (0600) or executable file stays so; a new file gets 0666 & ~umask, as open()'s
    would (mkstemp's 0600 would surprise readers)."""
    try:
        old = os.lstat(target) if target is not None else None
    except OSError:  # (none yet)
        old = None
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        return
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):  # (only root may give a file away: as it can)
            os.chown(temporary, old.st_uid, old.st_gid)
    os.chmod(temporary, stat.S_IMODE(old.st_mode) & 0o777)  # (never a set-user-ID bit)


def _claim(target: Path) -> Path:
    """`target`, else the first of `<stem>-2<suffix>`, `-3`, ... that no file has, created
    empty for write_atomic's rename: O_EXCL, so two writers never take one name. A default
    name made of the second a run ended (results/kernelwatch-run-<slug>-<UTC time>.json) is
    taken by another run that ended in that second, whose result a rename would lose."""
    name, k = target, 1
    while True:
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return name
        except FileExistsError:
            k += 1
            name = target.with_name(f"{target.stem}-{k}{target.suffix}")


def _discard(temporary: str, claimed: Path | None) -> None:
    """What a failed write_atomic made: its temporary file, and the name it claimed (empty)."""
    for path in (temporary, claimed):
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)


def strict_json(
    document: Any,
    indent: int | None = 2,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
) -> str:
    """`document` as strict JSON, the only way kernelwatch writes JSON: NaN and +-Infinity
    become null. Google Benchmark writes them as bare words (its `_cv` rows of always-zero
    counters are NaN), which strict parsers (JavaScript's JSON.parse, so github-action-benchmark;
    orjson) refuse."""
    options: dict[str, Any] = {"indent": indent, "sort_keys": sort_keys, "allow_nan": False}
    if separators is not None:
        options["separators"] = separators
    usual = indent == 2 and not sort_keys and separators is None  # (_indented's text)

    def dumps(value: Any) -> str:
        return "".join(_indented(value)) if usual else json.dumps(value, **options)

    try:
        text = dumps(document)
    except ValueError:  # a non-finite float somewhere (the rare case: mapped only then)
        return dumps(_writable(document))
    if SURROGATE_ESCAPE.search(text):  # a lone surrogate, or an escaped pair (an emoji)
        return dumps(_writable(document))
    return text


def _indented(document: Any) -> Iterator[str]:
    """The text of json.dumps(document, indent=2, allow_nan=False), a piece at a time, faster:
    each container of plain values (a benchmark's row) is one call of the C encoder, its item
    separator set to the newline and indentation that the pure-Python encoder (the only one
    that indents) writes there. A pooled H200 baseline's 79 MB: 2.5 s, against 4.2 s."""
    encoders: dict[int, Callable[[Any], str]] = {}

    def pieces(value: Any, depth: int) -> Iterator[str]:
        is_dict = isinstance(value, dict)
        if not is_dict and not isinstance(value, (list, tuple)):
            yield json.dumps(value, allow_nan=False)  # (or json's own error for it)
            return
        if not value:
            yield "{}" if is_dict else "[]"
            return
        pad = "\n" + "  " * (depth + 1)
        end = "\n" + "  " * depth
        if all(type(item) in _PLAIN for item in (value.values() if is_dict else value)):
            encode = encoders.get(depth)
            if encode is None:
                encode = encoders[depth] = json.JSONEncoder(
                    separators=("," + pad, ": "), allow_nan=False
                ).encode
            text = encode(value)  # "{" items "}": the brackets get their own lines
            yield text[0] + pad + text[1:-1] + end + text[-1]
            return
        yield "{" if is_dict else "["
        for n, item in enumerate(value.items() if is_dict else value):
            yield pad if n == 0 else "," + pad
            if is_dict:
                key, item = item
                yield json.dumps({key: None}, allow_nan=False)[1:-7] + ": "  # (json's keys)
            yield from pieces(item, depth + 1)
        yield end + ("}" if is_dict else "]")

    return pieces(document, 0)


_PLAIN = frozenset({str, int, float, bool, type(None)})  # what the C encoder writes alone


# How json.dumps writes a surrogate code point: a lone one (see `printable`) makes a file that
# kernelwatch's reader, and every strict parser, refuses.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _writable(value: Any) -> Any:
    """`value` with non-finite floats as None and every string `printable`."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: _writable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_writable(v) for v in value]
    return value


def printable(text: str) -> str:
    """`text` as Unicode that UTF-8 can hold. A file name that is not UTF-8 (r$'\\xff'.json)
    reaches Python as lone surrogates (surrogateescape); written as they are they fail to
    encode (an internal error) or, escaped in JSON, make a file kernelwatch's reader refuses:
    a baseline whose manifest records such a command line could not be updated again. Its
    bytes are shown as \\xNN instead, as Python's own messages show them."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no byte decodes to: \\udXXX
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return printable(text).encode("utf-8")


def json_text(document: Any) -> str:
    """A result document as text: indented like Google Benchmark's own files, strict JSON."""
    return strict_json(document) + "\n"


def write_json(handle: BinaryIO, document: Any) -> None:
    """json_text(document), written to `handle` (a new file, at its start) a piece at a time:
    the text of a 285,000-row pooled baseline is 272 MB, and twice that as str and bytes."""
    try:
        if _write_pieces(handle, _indented(document)):  # (strict_json's text)
            return
    except ValueError:  # a non-finite float somewhere (the rare case: mapped only then)
        pass
    handle.seek(0)
    handle.truncate()
    _write_pieces(handle, _indented(_writable(document)), check=False)


def write_json_gz(handle: BinaryIO, document: Any) -> None:
    """write_json's text, gzip-compressed (no name, no time in the header: the same document
    gives the same bytes). A pooled H100 baseline of 17.0 MB of JSON is 1.8 MB so: baselines
    of several cards fit in a repository (and the GPU machine's 64 MiB checkout)."""
    with tempfile.TemporaryFile() as text:
        write_json(text, document)  # (its text a piece at a time, then compressed likewise)
        text.seek(0)
        with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0) as packed:
            shutil.copyfileobj(text, packed, 1 << 20)


def _write_pieces(handle: BinaryIO, pieces: Iterator[str], check: bool = True) -> bool:
    """Write the pieces and a newline; with `check`, False, and stop, where the text escapes a
    surrogate (strict_json then writes the document `_writable`). Each batch is searched with
    the end of the one before: an escape across two batches is found."""
    batch: list[str] = []
    size = 0
    before = ""
    for piece in chain(pieces, ["\n"]):
        batch.append(piece)
        size += len(piece)
        if size >= _BATCH:
            text = before + "".join(batch)
            if check and SURROGATE_ESCAPE.search(text):
                return False
            handle.write(text[len(before) :].encode("ascii"))  # (ensure_ascii: always ASCII)
            before, batch, size = text[-5:], [], 0
    text = before + "".join(batch)
    if check and SURROGATE_ESCAPE.search(text):
        return False
    handle.write(text[len(before) :].encode("ascii"))
    return True


_BATCH = 1 << 20  # characters written at a time


def tagged(path: Path, tag: str) -> Path:
    """A file named beside `path` with `tag` before its suffix: FILE.json -> FILE<tag>.json,
    FILE.json.gz -> FILE<tag>.json.gz (still compressed, still found by a folder's
    `*.json.gz`), FILE -> FILE<tag>.json."""
    if path.name.endswith(".gz") and path.name != ".gz":
        inner = Path(path.name[: -len(".gz")])
        return path.with_name(f"{inner.stem}{tag}{inner.suffix or '.json'}.gz")
    return path.with_name(f"{path.stem}{tag}{path.suffix or '.json'}")


def write_json_atomic(
    path: str | Path, document: Any, *, make_parents: bool = False, new: bool = False
) -> Path:
    """json_text(document) written by write_atomic; gzip-compressed where the name ends in
    `.gz` (`merge -o all.json.gz`), as zcat and every reader of that name expect."""
    text = json_text(document)
    data = gzip.compress(_utf8(text), mtime=0) if str(path).endswith(".gz") else text
    return write_atomic(path, data, make_parents=make_parents, new=new)


def write_output(text: str, stream: TextIO | None = None) -> None:
    """A command's report on stdout; a failing write (a full disk, /dev/full) is one line.
    (A reader that went away, `| head`, stays a BrokenPipeError for the CLI to end quietly.)"""
    out = stream if stream is not None else sys.stdout
    try:
        try:
            out.write(text)
        except UnicodeEncodeError:  # (encoded whole before any of it is written)
            out.write(printable(text))
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise output_error(exc) from None


def output_error(exc: OSError) -> OutputError:
    return OutputError(f"could not write the output: {exc.strerror or exc}")


# --- folders that change as a whole ---------------------------------------------------------

# The staging and retired copies of a folder live beside it, hidden: ".<name>.new-<id>" and
# ".<name>.old-<id>". Only an interrupted write leaves one behind.
_STAGES = ("new", "old")
# The longest folder name write_folder can stage: 255 (most file systems' longest name) less
# what the staging name adds, its id a pid (at most 7 digits on Linux) and 8 hex digits.
FOLDER_NAME_MAX = 255 - len("..new--") - 7 - 8


def folder_leftovers(folder: Path) -> list[Path]:
    """What an interrupted `write_folder` of `folder` left beside it."""
    prefix = f".{folder.name}."
    try:
        names = os.listdir(folder.parent)
    except OSError:
        return []
    return sorted(
        folder.parent / name
        for name in names
        if name.startswith(prefix) and name[len(prefix) :].split("-", 1)[0] in _STAGES
    )


def write_folder(
    folder: str | Path,
    files: Mapping[str, bytes | Callable[[BinaryIO], None]],
    drop: Iterable[str] = (),
) -> list[str]:
    """Replace `folder` by one holding `files` (and the other visible files it held), as a
    whole: the new folder is written and synced beside it, then swapped in with one atomic
    exchange of names (renameat2 RENAME_EXCHANGE; elsewhere two renames, which the next call
    completes or undoes when interrupted between them). A reader sees the old folder or the
    new one, never a mix. `drop`: files of the old folder the new one does not keep. Returns
    notes on the leftovers of an earlier interrupted call that were cleaned up first."""
    target = Path(folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        notes = _recover(target)
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        info: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{target}: not a folder ({_kind(info.st_mode)}); refusing to replace it")
    staging = target.parent / f".{target.name}.new-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.mkdir(staging)
        if info is not None:
            _copy_others(target, staging, set(files) | set(drop))
        for name, data in files.items():
            with open(staging / name, "xb") as handle:
                if callable(data):  # (writes it a piece at a time: write_json)
                    data(handle)
                else:
                    handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        _sync_folder(staging)
        old: Path | None = None
        if info is None:
            os.rename(staging, target)
        elif _exchange(staging, target):
            old = staging  # (it holds the old folder now)
        else:
            old = target.parent / f".{target.name}.old-{staging.name.split('-', 1)[1]}"
            os.rename(target, old)
            os.rename(staging, target)
        _sync_folder(target.parent)
    except BaseException as exc:  # an interrupt too: its staging folder was left in baselines/
        if staging.exists() and not target.exists():
            with contextlib.suppress(OSError):
                _recover(target)
        elif staging.exists():
            with contextlib.suppress(OSError):
                _remove(staging)
        if isinstance(exc, OSError):
            raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
        raise
    # The new folder is in place: removing the old copy only tidies up. Its failure (a file
    # made immutable) said "cannot write", exit 2, of a folder already written.
    if old is not None:
        try:
            _remove(old)
        except OSError as exc:
            notes.append(f"the old folder is left at {old} ({exc.strerror or exc}): remove it")
    return notes


@contextlib.contextmanager
def one_writer(folder: Path) -> Iterator[None]:
    """Held while a command reads what it then replaces in `folder` (baseline update: the old
    baseline it builds on, then write_folder): a second writer waits. Without it two updates
    of one baselines folder each built on the old baseline and the later one dropped the
    other's benchmarks, exit 0 both; or one removed the other's staging folder as a leftover.
    An flock of the folder itself, so that no lock file is left in a folder kept in git; the
    writer makes the folder first (a missing one has nothing to build on: nothing is held), as
    a lock of its nearest ancestor would not exclude a writer that came after the folder was
    made. Where the file system has no locks, it goes on without one, as before."""
    if not folder.is_dir():
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise InputError(f"{folder}: cannot open: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"kernelwatch: waiting for another kernelwatch command writing in {folder}",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # (ENOLCK, EOPNOTSUPP: no locks on this file system)
        yield
    finally:
        os.close(fd)  # releases the lock


def _recover(target: Path) -> list[str]:
    """Undo what an interrupted write_folder left: a missing folder gets its retired copy back
    (the old one, complete); the other leftovers are removed."""
    notes = []
    leftovers = folder_leftovers(target)
    if not target.exists():
        retired = [p for p in leftovers if p.name[len(target.name) + 2 :].startswith("old-")]
        if retired:
            os.rename(retired[-1], target)
            leftovers.remove(retired[-1])
            notes.append(
                f"restored {target} from {retired[-1].name}, left by an interrupted update"
            )
    for path in leftovers:
        _remove(path)
    if leftovers:
        names = ", ".join(p.name for p in leftovers)
        notes.append(f"removed what an interrupted update left beside {target.name}: {names}")
    return notes


def _copy_others(source: Path, staging: Path, replaced: set[str]) -> None:
    """The visible files of the old folder that are not replaced (a README, say); hidden ones
    (temporary files of older writers) are not carried over."""
    for entry in os.scandir(source):
        if entry.name.startswith(".") or entry.name in replaced:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.copytree(entry.path, staging / entry.name, symlinks=True)
        else:
            shutil.copy2(entry.path, staging / entry.name, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that the names written in it survive a crash (POSIX only)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # (Windows cannot open a folder; its renames are durable enough)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names `a` and `b` atomically (Linux renameat2); False where that is not
    available (another OS, an old kernel or C library, a file system without it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(error, os.strerror(error), str(b))
