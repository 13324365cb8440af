#pragma once
// Where a benchmark process spends its wall time, for the breakdown in docs/measurement.md
// ("Where the time goes", scripts/gpu/wall_breakdown.py): with KERNELWATCH_TIMELINE naming a
// folder, each process appends one JSON object per line to <folder>/<pid>.jsonl at each phase
// boundary (main entered, CUDA context made, copy ceiling measured, a benchmark's set-up,
// check, warm-up, sampling and tear-down, the results written). Unset: one getenv per mark.
// Marks are never inside a timed region: the samples stay exactly what they were.

#include <string>
#include <utility>
#include <vector>

namespace kernelwatch::detail {

inline constexpr const char* timeline_env = "KERNELWATCH_TIMELINE";

/// Numbers that go with a mark (samples taken, GPU seconds of the batches, ...).
using timeline_fields = std::vector<std::pair<const char*, double>>;

/// Appends {"t": <Unix seconds>, "pid", "phase", "instance", fields...} when the timeline is
/// on. Never throws: a timeline that cannot be written is switched off with one line on stderr.
void timeline_mark(const char* phase, const std::string& instance = {},
                   const timeline_fields& fields = {});

/// The first mark of a process: also its age (seconds since exec, from /proc/self/stat), which
/// covers loading, static initialisation and registration, and its arguments.
void timeline_start(int argc, char** argv);

}  // namespace kernelwatch::detail
