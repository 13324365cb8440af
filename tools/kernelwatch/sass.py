"""The machine code of a benchmark binary's kernels, from `cuobjdump -sass` and `cuobjdump
-res-usage`: each kernel's listing with position-dependent noise removed, its fingerprint (a
hash of that listing), its resources, and a compact diff of two listings (instruction mix and
changed lines).

Normalised away, so that a kernel compiled alike in two builds hashes alike: instruction
addresses (`/*0040*/`), encodings (`/* 0x000fe2... */`), the `.headerflags` line, label numbers
(`.L_x_12`, renumbered in order of appearance) and absolute branch targets (`BRA 0x1b0`,
`BSSY B0, 0x1c0`, named by the index of the instruction they reach: `BRA I12`). Everything else
stays: an operand,
register or constant-bank offset that differs is a change of the code.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernelwatch import tool
from kernelwatch.errors import InputError
from kernelwatch.explanation import SassDiff

# Where the CUDA binary utilities are looked for, after $PATH: the toolkit, and the pip wheels
# nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (which install into nvidia/cu*/bin).
_TOOLKIT_BINS = ("/usr/local/cuda/bin",)

_ARCH = re.compile(r"^arch = (sm_\w+)\s*$")
_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$")
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s*(.*?)\s*;?\s*(?:/\*[^*]*\*/)?\s*$")
_ENCODING_ONLY = re.compile(r"^\s*/\*\s*0x[0-9a-fA-F]+\s*\*/\s*$")
_LABEL_LINE = re.compile(r"^\s*(\.L_x_\d+):\s*$")
_LABEL = re.compile(r"\.L_x_\d+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")
# Opcodes whose hexadecimal operand is an address in this function (docs: CUDA binary
# utilities, "Instruction set reference": branches, convergence barriers, calls).
_BRANCHING = frozenset(
    "BRA BRX BRXU JMP JMX JMXU CALL BSSY SSY PBK PCNT PRET BMOV WARPSYNC BREAK".split()
)
# `cuobjdump -elf`: a function's relocations, one a line (offset, symbol, type, addend) to a
# blank line.
_RELOCATIONS = re.compile(r"^\.section \.rela\.text\.(\S+)\s+RELA\s*$")
_RESOURCE = re.compile(r"^\s*Function (\S+):\s*$")
_RESOURCE_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")


def find_tool(name: str) -> str | None:
    """The path of a CUDA binary utility (cuobjdump, nvdisasm, ncu), or None."""
    found = shutil.which(name)
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    candidates = [Path(h, "bin", name) for h in homes if h]
    candidates += [Path(b, name) for b in _TOOLKIT_BINS]
    try:
        import nvidia  # type: ignore[import-not-found,import-untyped,unused-ignore]

        for root in list(getattr(nvidia, "__path__", [])):
            candidates += sorted(Path(root).glob(f"cu*/bin/{name}"), reverse=True)
    except ImportError:
        pass
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


@dataclass(frozen=True)
class Kernel:
    """One kernel of one architecture in a binary."""

    name: str  # mangled
    arch: str  # sm_90
    lines: tuple[str, ...]  # normalised instructions and labels
    resources: Mapping[str, int]  # REG, STACK, SHARED, LOCAL, CONSTANT[0], ... (res-usage)

    @functools.cached_property
    def fingerprint(self) -> str:
        return hashlib.sha256("\n".join(self.lines).encode()).hexdigest()[:16]

    @property
    def instructions(self) -> int:
        return sum(1 for line in self.lines if not line.endswith(":"))

    def mix(self) -> Counter[str]:
        """Instructions per mnemonic (the opcode without its modifiers: LDS.U.128 -> LDS)."""
        return Counter(opcode(line) for line in self.lines if not line.endswith(":"))


def opcode(instruction: str) -> str:
    return _PREDICATE.sub("", instruction).split(" ", 1)[0].split(".", 1)[0]


def _run(program: str, *args: str) -> str:
    what = f"{Path(program).name} {' '.join(args)}"
    try:
        return tool.run([program, *args], timeout=300).stdout
    except tool.ToolError as exc:
        if exc.failure != "status":
            raise InputError(f"{what}: {exc.exception}") from None
        raise InputError(f"{what} failed: {tool.last_line(exc.stderr) or exc.status}") from None


def normalise(raw: Sequence[tuple[int | None, str]]) -> tuple[str, ...]:
    """One function's (address, text) lines (address None for a label line) without their
    positions: labels renumbered in order of appearance, a branch target named by the index of
    the instruction it reaches. (Targets numbered in their order, before kernels.VERSION 2,
    hashed a loop whose back-edge moved, its instructions otherwise alike, as unchanged.)"""
    addresses = sorted({a for a, _ in raw if a is not None})
    targets = {address: f"I{k}" for k, address in enumerate(addresses)}
    labels: dict[str, str] = {}

    def label(match: re.Match[str]) -> str:
        return labels.setdefault(match.group(0), f".L{len(labels)}")

    def target(match: re.Match[str]) -> str:
        value = int(match.group(0), 16)
        return targets.get(value, match.group(0))

    out = []
    for address, text in raw:
        text = _LABEL.sub(label, " ".join(text.split()))
        if address is not None and opcode(text) in _BRANCHING:
            text = _HEX.sub(target, text)
        out.append(text)
    return tuple(out)


def _with_arch(text: str) -> Iterator[tuple[str | None, str]]:
    """cuobjdump's output a line at a time, with the arch of the fatbin it stands in: None from
    the `Fatbin` line that starts one up to its `arch =` line (which is not given)."""
    arch: str | None = None
    for line in text.splitlines():
        if line.startswith("Fatbin"):
            arch = None
        else:
            found = _ARCH.match(line)
            if found:
                arch = found.group(1)
                continue
        yield arch, line


def parse_sass(text: str) -> dict[tuple[str, str], list[list[tuple[int | None, str]]]]:
    """`cuobjdump -sass` output: (arch, function) -> its (address, instruction) lines, one list
    per fatbin that has it (a template kernel of a header used in two translation units of the
    binary is compiled into each one's)."""
    functions: dict[tuple[str, str], list[list[tuple[int | None, str]]]] = {}
    current: list[tuple[int | None, str]] | None = None
    for arch, line in _with_arch(text):
        if arch is None:  # a new fatbin, its arch not yet named: in no function
            current = None
            continue
        found = _FUNCTION.match(line)
        if found:
            current = []
            functions.setdefault((arch, found.group(1)), []).append(current)
            continue
        if current is None or _ENCODING_ONLY.match(line) or ".headerflags" in line:
            continue
        found = _LABEL_LINE.match(line)
        if found:
            current.append((None, found.group(1) + ":"))
            continue
        found = _INSTRUCTION.match(line)
        if found and found.group(2):
            current.append((int(found.group(1), 16), found.group(2).rstrip(" ;")))
    return functions


def parse_resources(text: str) -> dict[tuple[str, str], dict[str, int]]:
    """`cuobjdump -res-usage` output: (arch, function) -> {"REG": 18, "SHARED": 5248, ...}."""
    found: dict[tuple[str, str], dict[str, int]] = {}
    function: str | None = None
    for arch, line in _with_arch(text):
        if line.startswith("Fatbin"):  # a function's resources are in its own fatbin
            function = None
            continue
        match = _RESOURCE.match(line)
        if match:
            function = match.group(1)
            continue
        if arch and function and "REG:" in line:
            found[(arch, function)] = {k: int(v) for k, v in _RESOURCE_FIELD.findall(line)}
            function = None
    return found


def parse_calls(text: str) -> dict[tuple[str, str], set[str]]:
    """`cuobjdump -elf` output: (arch, function) -> the symbols its code is relocated against
    (with separate compilation, -rdc, a call to a device function of another translation unit
    is one: the caller's SASS reads `CALL.ABS.NOINC 0x0` whatever the callee's code)."""
    found: dict[tuple[str, str], set[str]] = {}
    current: set[str] | None = None
    for arch, line in _with_arch(text):
        match = _RELOCATIONS.match(line)
        if match and arch:
            current = found.setdefault((arch, match.group(1)), set())
            continue
        fields = line.split()
        if current is not None and len(fields) >= 3:
            current.add(fields[1])
        else:
            current = None
    return found


def _with_callees(
    listings: Mapping[tuple[str, str], tuple[str, ...]],
    calls: Mapping[tuple[str, str], set[str]],
) -> dict[tuple[str, str], tuple[str, ...]]:
    """Each function's listing followed by those of the functions it calls (parse_calls),
    transitively, each once and in name order under a `<name>:` line (counted as no
    instruction): what a kernel runs includes them, and a change inside one read as "kernel
    identical", the change blamed on the harness, host or card."""
    out = {}
    for (arch, name), lines in listings.items():
        seen: set[str] = set()
        todo = [name]
        while todo:
            for callee in calls.get((arch, todo.pop()), ()):
                if callee != name and callee not in seen and (arch, callee) in listings:
                    seen.add(callee)
                    todo.append(callee)
        called = [line for f in sorted(seen) for line in (f"<{f}>:", *listings[(arch, f)])]
        out[(arch, name)] = lines + tuple(called)
    return out


def pick_arch(available: set[str], compute_capability: str | None) -> str | None:
    """The SASS the driver runs on a GPU of `compute_capability` ("9.0"): sm_90, else an
    arch-specific sm_90a/sm_90f, else the newest older one of the same major (binary
    compatible); None when there is none (the driver would JIT the PTX)."""
    if not available:
        return None
    if not compute_capability:
        return sorted(available)[-1] if len(available) == 1 else None
    major, _, minor = compute_capability.partition(".")
    exact = f"sm_{major}{minor or '0'}"
    for candidate in (exact, exact + "a", exact + "f"):
        if candidate in available:
            return candidate
    older = [
        a
        for a in available
        if re.fullmatch(rf"sm_{major}(\d)", a) and int(a[len(f"sm_{major}") :]) <= int(minor or 0)
    ]
    return max(older) if older else None


@functools.lru_cache(maxsize=64)
def _kernels_cached(
    path: str, mtime_ns: int, size: int, tool: str
) -> dict[tuple[str, str], Kernel]:
    del mtime_ns, size  # the cache key: a rebuilt binary is read again
    listings = {
        key: _one_listing(copies) for key, copies in parse_sass(_run(tool, "-sass", path)).items()
    }
    # Calls resolved when the module loads (CALL.ABS, -rdc) name their callee only in the
    # ELF's relocations (0.17 s more for the reduction binary); calls within one translation
    # unit (CALL.REL, this suite's) are in the caller's listing already.
    if any(
        opcode(line) == "CALL" and ".ABS" in line for lines in listings.values() for line in lines
    ):
        listings = _with_callees(listings, parse_calls(_run(tool, "-elf", path)))
    resources = parse_resources(_run(tool, "-res-usage", path))
    return {
        key: Kernel(key[1], key[0], lines, resources.get(key, {}))
        for key, lines in listings.items()
    }


def _one_listing(copies: Sequence[Sequence[tuple[int | None, str]]]) -> tuple[str, ...]:
    """A kernel's listing from its copies: copies alike are one (its second translation unit
    doubled the listing, so the unchanged kernel read as changed code, twice its instructions);
    copies that differ are all kept, in an order that does not depend on the link's."""
    distinct = sorted({normalise(raw) for raw in copies})
    return tuple(line for listing in distinct for line in listing)


def binary_kernels(binary: Path, tool: str | None = None) -> dict[tuple[str, str], Kernel]:
    """Every kernel of every SASS architecture in `binary`, keyed (arch, mangled name).
    InputError when cuobjdump is missing or fails."""
    tool = tool or find_tool("cuobjdump")
    if tool is None:
        raise InputError("cuobjdump not found (CUDA toolkit's bin, or pip nvidia-cuda-cuobjdump)")
    try:
        stat = binary.stat()
    except OSError as exc:
        raise InputError(f"{binary}: {exc.strerror or exc}") from None
    # A copy: the cached dict is shared by every caller.
    return dict(_kernels_cached(str(binary.resolve()), stat.st_mtime_ns, stat.st_size, tool))


def kernels_for_gpu(
    binary: Path, compute_capability: str | None, tool: str | None = None
) -> tuple[str | None, dict[str, Kernel]]:
    """The SASS architecture the GPU runs from `binary`, and its kernels by mangled name."""
    every = binary_kernels(binary, tool)
    arch = pick_arch({a for a, _ in every}, compute_capability)
    return arch, {name: k for (a, name), k in every.items() if a == arch}


MAX_DIFF_LINES = 60
# Shared-memory instructions: loads, stores, matrix loads/stores, atomics, async global->shared.
SHARED_OPS = ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDGSTS")


def diff(before: Kernel, after: Kernel, max_lines: int = MAX_DIFF_LINES) -> SassDiff:
    mix_a, mix_b = before.mix(), after.mix()
    moved = [
        (op, mix_a.get(op, 0), mix_b.get(op, 0))
        for op in sorted(mix_a.keys() | mix_b.keys())
        if mix_a.get(op, 0) != mix_b.get(op, 0)
    ]
    moved.sort(key=lambda m: (-abs(m[2] - m[1]), m[0]))
    lines = list(
        difflib.unified_diff(
            before.lines, after.lines, before.fingerprint, after.fingerprint, n=1, lineterm=""
        )
    )
    return SassDiff(
        after.name,
        before.fingerprint,
        after.fingerprint,
        (before.instructions, after.instructions),
        tuple(moved),
        tuple(
            (op, mix_a.get(op, 0), mix_b.get(op, 0))
            for op in SHARED_OPS
            if mix_a.get(op, 0) or mix_b.get(op, 0)
        ),
        tuple(lines[:max_lines]),
        max(0, len(lines) - max_lines),
    )
