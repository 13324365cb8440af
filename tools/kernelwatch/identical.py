"""Which benchmark binaries two builds made identically: `ab` does not measure those (issue #32).

The rule is conservative, one binary (one family) at a time: a binary of B is *identical* to
A's binary of the same name only when

1. it is an ELF file with the same entry point and program headers, and every section the
   loader maps (SHF_ALLOC: host code, read-only data, data, relocations, the dynamic section,
   and `.nv_fatbin` with every kernel's cubin and PTX of every architecture) is byte for byte the same, after each side's own commit id (every 8
   characters of it: the compiler builds the string from pieces) and worktree path are replaced
   by one placeholder of the same length (the generated *_build_info.cpp embeds the commit;
   __FILE__ embeds the worktree path), and so the hash of the source's path in nvcc's names of
   anonymous namespaces and internal variables (the project compiles CUDA with -frandom-seed and
   an uncompressed fatbin, so that nothing else in those names differs). Byte equality of the
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

`ab` calls leave_out() once both sides are built and listed (commands/ab.py): the identical
binaries' jobs are dropped from both sides, and with_identical() gives their benchmarks IDENTICAL
rows in the report. docs/running.md, "What `ab` does not measure".
"""

from __future__ import annotations

import dataclasses
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelwatch.compare import Comparison, Report, Verdict

if TYPE_CHECKING:
    from kernelwatch import ab

IDENTICAL_REASON = "identical build: not measured"

_SHF_ALLOC = 0x2
_SHT_NOBITS = 8
_SHT_DYNAMIC = 6
_DT_RPATH, _DT_RUNPATH = 15, 29
_LEFT_OUT = frozenset({b".note.gnu.build-id"})
_PLACEHOLDER = b"#"
_PIECE = 8
_ANONYMOUS = re.compile(rb"(_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}(?=_\d+_)")


@dataclass(frozen=True)
class Build:
    """One side's build: its commit, worktree and build folder (ab.Side has all three)."""

    sha: str
    worktree: Path
    build_dir: Path

    def neutral(self, data: bytes) -> bytes:
        """`data` with this side's worktree path and commit id made one placeholder each, of the
        same length (so that nothing else moves), and so the hash of the source's path in nvcc's
        names of anonymous namespaces (`_GLOBAL__N__7ad29798_18_transpose_bench_cu_...`)."""
        for text in (str(self.worktree), str(self.worktree.resolve())):
            raw = text.encode()
            data = data.replace(raw, _PLACEHOLDER * len(raw))
        # The compiler builds the commit's string from 8- and 16-byte pieces (immediates, a
        # vector load): every 8 characters of it go.
        sha = self.sha.encode()
        for k in range(len(sha) - _PIECE + 1):
            data = data.replace(sha[k : k + _PIECE], _PLACEHOLDER * _PIECE)
        return _ANONYMOUS.sub(rb"\1########", data)


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
        return (_entry_and_segments(data), *_sections_loaded(binary.name, data, build))
    except (struct.error, IndexError, ValueError):
        raise NotComparable(f"{binary.name}: an ELF file cut short") from None


def _entry_and_segments(data: bytes) -> bytes:
    """The entry point and the program headers (the segments mapped, their addresses)."""
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return data[0x18:0x20] + data[phoff : phoff + phentsize * phnum]


def _sections_loaded(name: str, data: bytes, build: Build) -> list[bytes]:
    sections = _sections(data)
    image = []
    for section in sections:
        if not section.flags & _SHF_ALLOC or section.name in _LEFT_OUT:
            continue
        content = b"" if section.kind == _SHT_NOBITS else _content(data, section)
        if section.kind == _SHT_DYNAMIC:
            _check_run_paths(name, content, _content(data, sections[section.link]), build)
        image.append(
            section.name + b"\0" + struct.pack("<Q", section.size) + build.neutral(content)
        )
    return image


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


def leave_out(sides: Sequence[ab.Side], plans: ab.SidePlans) -> dict[str, str]:
    """Leave out of `plans` the binaries both builds made identically (the rules above): no side
    measures them. The benchmarks left out, with the reason their rows carry."""
    builds = [Build(side.sha, side.worktree, side.build_dir) for side in sides]
    a, b = (side.name for side in sides)
    same = {
        name
        for name, why in select(builds[0], plans.binaries[a], builds[1], plans.binaries[b]).items()
        if why is None
    }
    left_out = {
        name: IDENTICAL_REASON
        for job in plans.jobs[b]
        if job.binary.name in same
        for name in job.names
    }
    for side in sides:
        plans.jobs[side.name] = [j for j in plans.jobs[side.name] if j.binary.name not in same]
    return left_out


def with_identical(report: Report, left_out: Mapping[str, str]) -> Report:
    """The report with an IDENTICAL row (not failing) for each benchmark left unmeasured."""
    rows = [
        Comparison(name, Verdict.IDENTICAL, why, failed=False) for name, why in left_out.items()
    ]
    kept = tuple(c for c in report.comparisons if c.name not in left_out)
    return dataclasses.replace(report, comparisons=kept + tuple(sorted(rows)))
