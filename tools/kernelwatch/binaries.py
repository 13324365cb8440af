"""Which benchmark binaries a command runs (`run`, `selftest`): the --bench binaries, else this
project's in the build folder; and what a schedule reads the benchmarks' durations from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernelwatch import baseline as baselines
from kernelwatch import hostbound, project, runner
from kernelwatch.errors import InputError
from kernelwatch.files import check_input_dir
from kernelwatch.loading import baseline_folder_result


def find_binaries(build_dir: str | None, bench: Sequence[str]) -> list[Path]:
    """The --bench binaries, else this project's in --build-dir (or the checkout's build)."""
    if bench:
        return runner.check_binaries(Path(p) for p in bench)
    if build_dir is not None:
        build = Path(build_dir)
        check_input_dir(build, "--build-dir")
    else:
        build = default_build()
    return runner.find_binaries(build)


def default_build() -> Path:
    """build/ in the project being measured (kernelwatch.project)."""
    return (
        project.root("name the build folder with --build-dir DIR, or the binaries with --bench")
        / "build"
    )


def usable_binaries(
    build_dir: str | None, bench: Sequence[str], extra_args: Sequence[str]
) -> list[Path]:
    """The binaries to run, once a GPU is known to be there (exit 4 first: without a GPU
    nothing else matters); refuses when there are none."""
    binaries = find_binaries(build_dir, bench)
    runner.require_gpu(binaries[0] if binaries else None, tuple(extra_args))
    if not binaries:
        build = build_dir or default_build()
        raise InputError(
            f"no benchmark binaries ({runner.BINARY_GLOB}) in {Path(build) / runner.BINARY_FOLDER}"
            ": build them first (tools/kw suite, or cmake --preset release && cmake --build "
            "--preset release), or name them with --bench"
        )
    return binaries


def planning_documents(given: Path | None, root: Path | None) -> list[Any]:
    """What the schedule reads the benchmarks' durations and host_bound counters from:
    --baseline, else every baseline in the folder. Not this GPU's alone: every shard job of
    every model must compute the same split from the same checkout."""
    if given is not None:
        given_documents = baselines.result_documents(given)
        for document in given_documents:
            hostbound.bound_in(document, str(baseline_folder_result(given) or given))
        return given_documents
    documents = []
    for entry in baselines.entries(root) if root is not None else ():
        # Another model's broken baseline must not stop this run; the one this run is judged
        # by is read again by baselines.against, which refuses it (exit 2, naming it). Every
        # job of one checkout skips the same files, so the split stays the same.
        try:
            document = baselines.read_result(entry.result)
        except InputError:
            continue
        # A damaged host_bound counter is refused, not skipped: the baseline reads whole, and
        # skipped it would take its benchmarks off the host-bound list of every model's split
        # (compare refuses it too, where it judges by that baseline).
        hostbound.bound_in(document, str(entry.result))
        documents.append(document)
    return documents
