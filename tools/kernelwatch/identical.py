"""Which benchmark binaries two builds made identically: `ab` does not measure those (issue #32).

The rule is conservative, one binary (one family) at a time: a binary of B is *identical* to
A's binary of the same name only when

1. it is an ELF file, and every section the loader maps (SHF_ALLOC: host code, read-only data,
   data, relocations, the dynamic section, and `.nv_fatbin` with every kernel's cubin and PTX
   of every architecture) is byte for byte the same, after each side's own commit id and
   worktree path are replaced by one placeholder of the same length (the generated
   *_build_info.cpp embeds the commit; __FILE__ embeds the worktree path). Byte equality of the
   fatbin is stricter than equal SASS: it also covers PTX, `__constant__` data and kernel
   attributes. Left out: `.note.gnu.build-id` (a hash of the file) and what the loader never
   maps (symbol and debug tables: nvcc names a symbol after its temporary file's process id);
2. its dynamic section names no run path inside the build (a library built beside it is not
   compared), and
3. the build settings are the same: CMakeCache.txt, and the binary's CMake target files
   (CMakeFiles/<binary>.dir/flags.make, link.txt, *.rsp: compile flags, definitions, include
   folders, link line) for a Makefile build, the whole build.ninja for a Ninja build, each with
   the same placeholders.

Anything else (not ELF, a file missing or unreadable, no CMakeCache.txt) is *different*, with
why: measured. Runtime inputs other than the binary (files it reads, the driver, the GPU) are not
seen: both sides share them in an `ab` run.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

IDENTICAL_REASON = "identical build: not measured"

_SHF_ALLOC = 0x2
_SHT_NOBITS = 8
_SHT_DYNAMIC = 6
_DT_RPATH, _DT_RUNPATH = 15, 29
_LEFT_OUT = frozenset({b".note.gnu.build-id"})
_PLACEHOLDER = b"#"


@dataclass(frozen=True)
class Build:
    """One side's build: its commit, worktree and build folder (ab.Side has all three)."""

    sha: str
    worktree: Path
    build_dir: Path

    def neutral(self, data: bytes) -> bytes:
        """`data` with this side's worktree path and commit id made one placeholder each, of the
        same length (so that nothing else moves)."""
        for text in (str(self.worktree), str(self.worktree.resolve()), self.sha):
            raw = text.encode()
            data = data.replace(raw, _PLACEHOLDER * len(raw))
        return data


class NotComparable(Exception):
    """Why a binary cannot be shown identical (it is measured)."""


@dataclass(frozen=True)
class _Section:
    name: bytes
    kind: int
    flags: int
    offset: int
    size: int
    link: int


def loaded_image(binary: Path, build: Build) -> tuple[bytes, ...]:
    """The sections the loader maps from `binary` (name, size, content), neutralised;
    NotComparable when it is not an ELF file or names a run path in its build folder."""
    try:
        data = binary.read_bytes()
    except OSError as exc:
        raise NotComparable(f"{binary.name}: {exc.strerror or exc}") from None
    if data[:6] != b"\x7fELF\x02\x01":
        raise NotComparable(f"{binary.name}: not a 64-bit little-endian ELF file")
    try:
        sections = _sections(data)
    except (struct.error, IndexError):
        raise NotComparable(f"{binary.name}: an ELF file cut short") from None
    image = []
    for section in sections:
        if not section.flags & _SHF_ALLOC or section.name in _LEFT_OUT:
            continue
        content = b"" if section.kind == _SHT_NOBITS else _content(data, section)
        if section.kind == _SHT_DYNAMIC:
            _check_run_paths(binary.name, content, _content(data, sections[section.link]), build)
        image.append(
            section.name + b"\0" + struct.pack("<Q", section.size) + build.neutral(content)
        )
    return tuple(image)


def _content(data: bytes, section: _Section) -> bytes:
    return data[section.offset : section.offset + section.size]


def _sections(data: bytes) -> list[_Section]:
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQI", data, shoff + k * shentsize) for k in range(shnum)]
    names = raw[shstrndx]
    table = data[names[4] : names[4] + names[5]]
    return [
        _Section(table[name : table.index(b"\0", name)], kind, flags, offset, size, link)
        for name, kind, flags, _, offset, size, link in raw
    ]


def _check_run_paths(name: str, dynamic: bytes, strings: bytes, build: Build) -> None:
    """A run path (RPATH, RUNPATH) into the build: a library built there is loaded, and it is
    not compared."""
    for k in range(0, len(dynamic) - 15, 16):
        tag, value = struct.unpack_from("<qQ", dynamic, k)
        if tag in (_DT_RPATH, _DT_RUNPATH):
            path = strings[value : strings.index(b"\0", value)].decode(errors="replace")
            if "$ORIGIN" in path or str(build.worktree) in path or str(build.build_dir) in path:
                raise NotComparable(f"{name}: loads libraries from its build ({path})")


def settings(build: Build, binary: Path) -> tuple[tuple[str, bytes], ...]:
    """The build settings that made `binary`, neutralised: CMakeCache.txt and the target's
    flag files (Makefiles) or build.ninja. NotComparable when there is no CMakeCache.txt or
    neither generator's files."""
    cache = build.build_dir / "CMakeCache.txt"
    target = binary.parent / "CMakeFiles" / f"{binary.name}.dir"
    files = [cache]
    if (target / "flags.make").is_file():
        files += [target / "flags.make", target / "link.txt", *sorted(target.glob("*.rsp"))]
    elif (build.build_dir / "build.ninja").is_file():
        files.append(build.build_dir / "build.ninja")
    else:
        raise NotComparable(f"{binary.name}: no CMake target files for it in {build.build_dir}")
    found = []
    for path in files:
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise NotComparable(f"{path}: {exc.strerror or exc}") from None
        found.append((path.relative_to(build.build_dir).as_posix(), build.neutral(text)))
    return tuple(found)


def differs(a: Build, a_binary: Path, b: Build, b_binary: Path) -> str | None:
    """None when B's binary is identical to A's (the rules above), else why not."""
    try:
        if settings(a, a_binary) != settings(b, b_binary):
            return "build settings differ"
        if loaded_image(a_binary, a) != loaded_image(b_binary, b):
            return "machine code or data differ"
    except NotComparable as exc:
        return str(exc)
    return None


def select(
    a: Build, a_binaries: Sequence[Path], b: Build, b_binaries: Sequence[Path]
) -> dict[str, str | None]:
    """Each of B's binaries by name: None when identical to A's of that name, else why it is
    measured."""
    by_name: Mapping[str, Path] = {p.name: p for p in a_binaries}
    return {
        p.name: (differs(a, by_name[p.name], b, p) if p.name in by_name else "new in B")
        for p in b_binaries
    }
