"""Each benchmark's noise: how much its median moves from one run to the next, as a fraction.

The noise of a benchmark is the largest of

* between processes: the standard deviation of its per-process medians over their median
  (a result of `kernelwatch run --processes K`, or a folder of runs). Repetitions inside one
  process understate the variation between runs (0.01-0.04 % within a process, up to 3.2 %
  between processes: docs/measurement.md, "Where the noise comes from"), so this is the
  estimate that matters;
* within the run: the robust coefficient of variation of its repetitions (1.4826 MAD / median);
* the harness's `noise` counter (the relative width of the 95 % confidence interval of one
  repetition's median) converted to a standard deviation: width / (2 x 1.96);
* its group's: the median noise of the benchmarks of its group (its name without the
  parameters, `transpose/diagonal_rows` for `transpose/diagonal_rows/rows:8192/...`) when the
  group has at least MIN_GROUP of them. Two processes give the spread between processes one
  degree of freedom, so one benchmark's estimate can come out far too small by chance; its
  siblings, measured alike, guard against that.

`kernelwatch baseline update` stores the result in baselines/<slug>/noise.json; `compare` uses
the stored value (else computes it the same way) as the floor of each benchmark's limit.

    estimates.py   Noise (each estimate) and LevelNoise (the spread per level), TIME
    spread.py      measure(): the estimates from a result's values, per level for a pooled one
    runs.py        a pooled result's runs: the kind of a card among them, cutting to some
    file.py        noise.json: the document, reading and checking it, finding it beside a result
"""

from kernelwatch.noise.estimates import TIME, LevelNoise, Noise
from kernelwatch.noise.file import (
    NOISE_FILE,
    NOISE_SCHEMA,
    READABLE_SCHEMAS,
    beside,
    levels_from_file,
    noise_document,
    read_noise_file,
    stored,
    stored_beside,
)
from kernelwatch.noise.runs import kind_of, runs_of, runs_of_card
from kernelwatch.names import variant as group_of  # a benchmark's group: its variant
from kernelwatch.noise.spread import (
    COUNTER_TO_SIGMA,
    MIN_GROUP,
    between_processes,
    measure,
)

__all__ = [
    "COUNTER_TO_SIGMA",
    "MIN_GROUP",
    "NOISE_FILE",
    "NOISE_SCHEMA",
    "READABLE_SCHEMAS",
    "TIME",
    "LevelNoise",
    "Noise",
    "beside",
    "between_processes",
    "group_of",
    "kind_of",
    "levels_from_file",
    "measure",
    "noise_document",
    "read_noise_file",
    "runs_of",
    "runs_of_card",
    "stored",
    "stored_beside",
]
