"""Keeping what a failed run measured: when benchmark processes crash or hang
(runner.IncompleteRun), the processes that finished are still written, and the benchmarks
without a result are named, so that no command loses a result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernelwatch import baseline as baselines
from kernelwatch import results, runner
from kernelwatch.files import write_json_atomic


def keep(
    failed: runner.IncompleteRun,
    out_for: Callable[[str | None], Path],
    progress: runner.Progress,
) -> Path | None:
    """Write the result of the processes that finished to `out_for(gpu slug)` and say which
    benchmarks have no result; None when no process finished. Nothing is compared here (the
    run fails with the crash); `compare` and `report` of the result show the benchmarks without
    a result as the crash (crashes.mark_saved)."""
    if failed.partial is None:
        return None
    document = failed.partial.document
    out = out_for(baselines.context_slug(document["context"]))
    write_json_atomic(out, document, make_parents=True)
    progress.say(
        f"kernelwatch: wrote {out} with the results of the processes that finished (not "
        f"compared; context keys {results.FAILED_KEY} and {results.NO_RESULT_KEY} say what is "
        "missing)"
    )
    if failed.no_result:
        progress.say(
            f"kernelwatch: no result for {len(failed.no_result)} benchmark(s): "
            + ", ".join(failed.no_result)
        )
    return out
