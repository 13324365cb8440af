"""`run`'s confirming re-runs: the flagged benchmarks run again in fresh processes, each re-run
written beside the result; a re-run whose process crashes, hangs or loses the GPU keeps what
finished and hands verdict.confirm the benchmarks it lost (RerunCrashed), so that the first run's
verdicts stand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernelwatch import completeness, runner
from kernelwatch.files import write_json_atomic
from kernelwatch.loading import from_documents
from kernelwatch.results import ResultSet
from kernelwatch.verdict import RerunCrashed


@dataclass
class Reruns:
    """rerun(k, names) for verdict.confirm; `statuses`: the exit status of each re-run that
    failed (3; 4: the GPU went away), for the command's own."""

    jobs: Sequence[runner.Job]
    settings: runner.RunSettings
    progress: runner.Progress
    times: int
    out: Path  # the first run's result
    path: Callable[[Path, int], Path]  # where re-run k of `out` goes
    command_line: str
    statuses: list[int] = field(default_factory=list)

    def __call__(self, k: int, flagged: Sequence[str]) -> ResultSet:
        path = self.path(self.out, k)
        try:
            again = runner.run_suite(
                runner.rerun_jobs(self.jobs, flagged),
                self.settings,
                progress=self.progress,
                label=f"confirming {len(flagged)} regression(s), re-run {k}/{self.times}",
                context={
                    "kernelwatch_run_command": self.command_line,
                    "kernelwatch_run_purpose": f"confirm {k} of {self.times} for {self.out.name}",
                    "kernelwatch_filter": runner.names_filter(flagged),
                },
                keep_going=True,
            )
        except runner.IncompleteRun as exc:
            self.statuses.append(exc.exit_status)
            kept = completeness.keep_partial(exc, lambda slug: path, self.progress)
            finished = None
            if kept is not None and exc.partial is not None:
                finished = from_documents(str(kept), [exc.partial.document])
            lost = {name: line for line, names in exc.lost for name in names}
            raise RerunCrashed(lost, exc.exit_status, finished) from None
        write_json_atomic(path, again.document, make_parents=True)
        self.progress.say(f"kernelwatch: re-ran {len(flagged)} flagged benchmark(s): wrote {path}")
        return from_documents(str(path), [again.document])
