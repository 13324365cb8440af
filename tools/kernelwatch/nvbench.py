"""nvbench results (`--json`, with its `--jsonbin` sample files) as the Google Benchmark document
they map to, so that every command reads them as it reads Google Benchmark's files.

Recognised by their shape: a top-level `meta`, `devices` and `benchmarks` list whose entries
have `states` (Google Benchmark's files have `context` and rows instead). Tested with nvbench's
JSON format 1.0.0, as written by nvbench 0.1.0 (its own test files) and by cuda-bench 0.3.0
(tests/data/nvbench/README.md).

* A state (benchmark x axis values x device) is one benchmark, named in kernelwatch's
  `family/variant/params` style: `<benchmark>/<axis>:<value>/...`, plus `/device:<id>` when the
  file holds states of several devices.
* Its values: the GPU time of every cold sample, from the float32 seconds file that
  `--jsonbin` writes (summary `nv/json/bin:nv/cold/sample_times`), one repetition each; read
  only from the JSON file's folder or its `<json file>-bin` folder (`_Converter._find`), and
  only where it holds the count of times its summary says (its `size`).
  Without it, nvbench's summary alone: one `median` (else `mean`) aggregate row of the cold GPU
  time, with the mean, the sample count and the relative standard deviation as counters
  (results.NVBENCH_MEAN_KEY, ...), from which the comparison judges it (compare.py: Welch's t on the
  means), and a note saying so (docs/compare.md).
* Bandwidth and item rate (`nv/cold/bw/...`) become `bytes_per_second`, `items_per_second` and
  `peak_fraction`, per sample scaled by the sample's time (the bytes per launch are fixed).
* `is_skipped` states are skipped rows with nvbench's reason.
* The device description becomes the `context` keys of docs/results.md (`gpu_name`,
  `gpu_compute_capability`, `gpu_sm_count`, clocks, memory, ECC; `uuid` and `driver_version`
  where a device entry was stamped with them); nvbench's version and command line are kept as
  `nvbench_*` keys, and a `meta.context` object of strings stamped on the file after the run
  (the project's commit, the date) is taken as it stands.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from kernelwatch.errors import InputError, shortened
from kernelwatch.results import (
    NVBENCH_CV_COUNTER,
    NVBENCH_MEAN_KEY,
    NVBENCH_SAMPLES_COUNTER,
    NVBENCH_SAMPLES_KEY,
    NVBENCH_SAMPLES_LOST_KEY,
    NVBENCH_SUMMARIES_ONLY,
)

TESTED_FORMAT = "1.0.0"  # nvbench's meta.version.json
SAMPLE_TIMES_TAG = "nv/json/bin:nv/cold/sample_times"
# The most samples a count may say: far more than any run takes (nvbench's own test file has
# states of 153,037), exact as a float, and within the int64 that compare shows counts as.
MAX_COUNT = 2**53

_GPU_TIME_TAGS = (("median", "nv/cold/time/gpu/median"), ("mean", "nv/cold/time/gpu/mean"))
_RATES = (
    ("bytes_per_second", "nv/cold/bw/global/bytes_per_second"),
    ("items_per_second", "nv/cold/bw/item_rate"),
    ("peak_fraction", "nv/cold/bw/global/utilization"),
)


def as_google_benchmark(document: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """The Google Benchmark document an nvbench document maps to. `path`: the JSON file, where
    its sample files are looked for; named in messages."""
    return _Converter(Path(path)).convert(document)


class _Converter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.sampled = 0
        self.summarised = 0
        self.lost: list[str] = []  # sample files named but not usable

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.path}: nvbench: {message}")

    def convert(self, document: dict[str, Any]) -> dict[str, Any]:
        meta = document["meta"]
        version = _get(meta, "version", "json", "string")
        if version is not None and not str(version).startswith("1."):
            raise self.fail(
                f"JSON format {version}: kernelwatch reads format 1 (tested with {TESTED_FORMAT})"
            )
        # ids as text: a hand-made file may hold a list where an id belongs (not hashable)
        devices = {str(d.get("id")): d for d in document["devices"] if isinstance(d, dict)}
        states: list[tuple[str, dict[str, Any]]] = []
        for benchmark in document["benchmarks"]:
            name = benchmark.get("name")
            if not isinstance(name, str) or not name:
                raise self.fail("a benchmark has no name")
            listed = benchmark.get("states") or []  # (null: no states, as before)
            if not isinstance(listed, list):
                raise self.fail(f"{name}: states is not a list")
            for state in listed:
                if not isinstance(state, dict):
                    raise self.fail(f"{name}: a state is not an object")
                # (a device named otherwise, or summaries of another shape, read as other
                # benchmarks or as skipped ones: MISSING rows and exit 1 instead of exit 2)
                if "device" in state and type(state["device"]) is not int:
                    raise self.fail(f"{name}: a state's device is not a device id")
                if not isinstance(state.get("summaries") or [], list):  # null: skipped
                    raise self.fail(f"{name}: a state's summaries is not a list")
                # (a string "false" is true to Python: a measured state read as skipped, as
                # Google Benchmark's `skipped` flag is refused in gbench.py)
                skipped = state.get("is_skipped")
                if skipped is not None and type(skipped) is not bool:
                    raise self.fail(
                        f"{name}: a state's is_skipped is {shortened(repr(skipped), 120)}, not "
                        "true or false"
                    )
                states.append((name, state))
        used = sorted({str(state.get("device")) for _, state in states})
        rows: list[dict[str, Any]] = []
        for name, state in states:
            rows += self._state_rows(name, state, len(used) > 1)
        context = self._context(meta, [devices[d] for d in used if d in devices])
        return {"context": context, "benchmarks": rows}

    def _state_rows(self, benchmark: str, state: dict[str, Any], by_device: bool) -> list[Any]:
        parts = [benchmark]
        axes = state.get("axis_values") or []
        if not isinstance(axes, list):
            raise self.fail(f"{benchmark}: axis_values is not a list")
        for axis in axes:
            if isinstance(axis, dict):
                parts.append(f"{axis.get('name')}:{_axis_value(axis)}")
        if by_device:
            parts.append(f"device:{state.get('device')}")
        name = "/".join(parts)
        base = {"name": name, "run_name": name, "threads": 1, "iterations": 1}
        if state.get("is_skipped"):
            reason = state.get("skip_reason")  # (a list or an object: no reason to show)
            reason = reason if isinstance(reason, str) and reason else "skipped by nvbench"
            return [{**base, "run_type": "iteration", "skipped": True, "skip_message": reason}]
        summaries = _summaries(state.get("summaries"))
        central = next(((a, summaries[t]) for a, t in _GPU_TIME_TAGS if t in summaries), None)
        if central is None:
            return [
                {
                    **base,
                    "run_type": "iteration",
                    "skipped": True,
                    "skip_message": "no cold GPU time in nvbench's summaries",
                }
            ]
        aggregate, center = central
        center_s = self._number(name, center, "value")
        rates = {
            key: self._number(name, summaries[tag], "value")
            for key, tag in _RATES
            if tag in summaries
        }
        samples = self._samples(name, summaries.get(SAMPLE_TIMES_TAG))
        if samples is not None:
            self.sampled += 1
            # Rates are per launch bytes (items) over time: per sample, scaled by its time.
            mean_s = float(samples.mean())
            scale = {k: v * mean_s for k, v in rates.items()}
            times = (samples * 1e9).tolist()
            return [
                {
                    **base,
                    "run_type": "iteration",
                    "repetitions": len(times),
                    "repetition_index": i,
                    "real_time": t,
                    "time_unit": "ns",
                    **{k: v * 1e9 / t for k, v in scale.items()},
                }
                for i, t in enumerate(times)
            ]
        self.summarised += 1
        row = {
            **base,
            "run_type": "aggregate",
            "aggregate_name": aggregate,
            "aggregate_unit": "time",
            "repetitions": 1,
            "real_time": center_s * 1e9,
            "time_unit": "ns",
            **rates,
        }
        cpu = summaries.get("nv/cold/time/cpu/mean")
        if cpu is not None:
            row["cpu_time"] = self._number(name, cpu, "value") * 1e9
        if "nv/cold/time/gpu/mean" in summaries:
            row[NVBENCH_MEAN_KEY] = (
                self._number(name, summaries["nv/cold/time/gpu/mean"], "value") * 1e9
            )
        if "nv/cold/sample_size" in summaries:
            value = _field(summaries["nv/cold/sample_size"], "value")
            count = _count(value)
            if count is None:
                raise self.fail(
                    f"{name}: nv/cold/sample_size is {shortened(repr(value), 120)} "
                    "(not a whole number of samples)"
                )
            row[NVBENCH_SAMPLES_COUNTER] = float(count)
        noise = _field(summaries.get("nv/cold/time/gpu/stdev/relative") or {}, "value")
        # nvbench writes an infinite noise where it had too few samples to measure one: then
        # the state has no counter, and cannot be judged from its summaries.
        if noise is not None and str(noise).strip().lower() not in ("inf", "infinity", "+inf"):
            row[NVBENCH_CV_COUNTER] = self._number(
                name, summaries["nv/cold/time/gpu/stdev/relative"], "value"
            )
        return [row]

    def _number(self, name: str, summary: Mapping[str, Any], field: str) -> float:
        """A summary's value: every one read here (times, rates, sample counts, relative
        deviations) is a finite number >= 0."""
        value = _field(summary, field)
        try:
            # nvbench writes numbers as strings; JSON true is no number (float(True) is 1 s)
            number = math.nan if isinstance(value, bool) else float(value)
        except (TypeError, ValueError, OverflowError):  # (an integer past float's range)
            number = math.nan
        if not math.isfinite(number) or number < 0:
            raise self.fail(
                f"{name}: {summary.get('tag')} is {shortened(repr(value), 120)} "
                "(not a finite number >= 0)"
            )
        return number

    def _samples(self, name: str, summary: Mapping[str, Any] | None) -> np.ndarray | None:
        """The sample times (seconds) of a `--jsonbin` file; None without one, or when it
        cannot be used (then said in a note)."""
        if summary is None:
            return None
        filename, size = _field(summary, "filename"), _field(summary, "size")
        if not isinstance(filename, str) or not filename:
            self.lost.append(f"{name}: the sample file has no name")
            return None
        file = self._find(name, filename)  # (a name outside the folders is refused first)
        if file is None:
            self.lost.append(f"{name}: {shortened(filename, 120)} not found")
            return None
        # nvbench writes the count beside the name: the one check that the file is the
        # state's (without it, any file of the folder, the JSON file too, read as times)
        count = _count(size)
        try:
            data = _read_regular(file, 4 * (count or 0))
        except OSError as exc:
            raise self.fail(f"{name}: {file}: cannot read: {exc.strerror or exc}") from None
        if data is None:
            raise self.fail(f"{name}: sample file {file} is not a regular file")
        if count is None:
            self.lost.append(
                f"{name}: {shortened(filename, 120)}: the sample file has no count of times"
            )
            return None
        if len(data) != 4 * count:
            held = f"more than {4 * count}" if len(data) > 4 * count else str(len(data))
            self.lost.append(f"{name}: {file} holds {held} bytes, not {count} float32 times")
            return None
        samples = np.frombuffer(data, dtype="<f4").astype(float)
        if not len(samples) or not (np.isfinite(samples) & (samples > 0)).all():
            self.lost.append(f"{name}: {file} holds a time that is not a positive number")
            return None
        return samples

    def _find(self, name: str, filename: str) -> Path | None:
        """The sample file `filename` names, only where nvbench puts it: the JSON file's folder
        or its `<json file>-bin` folder (nvbench writes `<json file>-bin/<n>.bin`, named as
        given on its command line, so relative to its working folder). A file name of a
        hand-made or hostile JSON must not read another file of the machine into a result (and
        so into a history, an export, a report): relative names are taken from the JSON file's
        folder, never the current one, and every candidate's real path (symlinks followed)
        must lie in one of the two folders. None when none is there."""
        if "\0" in filename:
            raise self.fail(
                f"{name}: sample file name {shortened(filename, 120)!r} holds a NUL character"
            )
        written = Path(filename)
        folder = self.path.parent
        sidecar = folder / f"{self.path.name}-bin"
        candidates = [folder / written]  # (an absolute name stays absolute)
        if sidecar.name in written.parts:  # nvbench run from another folder: `out/r.json-bin/0.bin`
            candidates.append(folder.joinpath(*written.parts[written.parts.index(sidecar.name) :]))
        candidates.append(sidecar / written.name)
        roots = [os.path.realpath(folder), os.path.realpath(sidecar)]
        outside = False
        for candidate in candidates:
            real = os.path.realpath(candidate)
            if not any(os.path.commonpath([real, root]) == root for root in roots):
                outside = True  # (refused whether it exists or not: no probing of the machine)
                continue
            try:
                os.stat(real)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:  # a name too long for the file system, a loop of links
                raise self.fail(
                    f"{name}: sample file {shortened(filename, 120)!r}: {exc.strerror or exc}"
                ) from None
            return Path(real)
        if outside:
            raise self.fail(
                f"{name}: sample file {shortened(filename, 120)!r} is outside {folder} and its "
                f"{sidecar.name}/ folder: kernelwatch reads nvbench's sample files only there"
            )
        return None

    def _context(self, meta: Mapping[str, Any], devices: list[Mapping[str, Any]]) -> Any:
        context: dict[str, Any] = {
            "nvbench_version": _get(meta, "version", "nvbench", "string"),
            "nvbench_git_sha": _get(meta, "version", "nvbench", "git_sha"),
            "nvbench_json_version": _get(meta, "version", "json", "string"),
            "nvbench_argv": meta.get("argv"),
            NVBENCH_SAMPLES_KEY: "sample files" if not self.summarised else NVBENCH_SUMMARIES_ONLY,
        }
        if self.lost:
            context[NVBENCH_SAMPLES_LOST_KEY] = self.lost
        context = {**self._stamped(meta), **context}
        described = [self._device_context(d) for d in devices]
        names = {d["gpu_name"] for d in described}
        if len(devices) == 1 or (devices and len(names) == 1):
            context.update({k: v for k, v in described[0].items() if v is not None})
        elif devices:
            context["nvbench_devices"] = sorted(str(n) for n in names)
        return {k: v for k, v in context.items() if v is not None}

    def _stamped(self, meta: Mapping[str, Any]) -> dict[str, str]:
        """`meta.context`: what nvbench cannot record, added to the file after the run (the
        measured project's commit as `kernelwatch_git_commit`, the run's `date`, the host):
        string values, as Google Benchmark's `--benchmark_context=key=value` gives them. A key
        the file's own description sets (`nvbench_*`, the device's) keeps nvbench's value."""
        stamped = meta.get("context")
        if stamped is None:
            return {}
        if not isinstance(stamped, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in stamped.items()
        ):
            raise self.fail("meta.context is not an object of strings")
        return {k: v for k, v in stamped.items() if v}

    def _device_context(self, device: Mapping[str, Any]) -> dict[str, Any]:
        """A device's description as the context keys of docs/results.md; a value of the wrong
        type (a list for a name, a NaN clock) is refused, naming it."""

        def text(key: str) -> str | None:
            value = device.get(key)
            if value is None or isinstance(value, str):
                return value
            raise self.fail(
                f"device {shortened(str(device.get('id')), 120)}: {key} is not a string"
            )

        def number(key: str) -> int | float | None:
            value = device.get(key)
            if value is None:
                return None
            # (type(): JSON true is no number; json reads NaN and Infinity, and integers of
            # any size, which isfinite cannot take)
            if type(value) is int or (type(value) is float and math.isfinite(value)):
                return value
            raise self.fail(
                f"device {shortened(str(device.get('id')), 120)}: {key} is "
                f"{shortened(repr(value), 120)} "
                "(not a finite number)"
            )

        def khz(key: str) -> str | None:
            hz = number(key)
            return None if hz is None else str(int(hz) // 1000)

        sm = number("sm_version")
        ecc = device.get("ecc_state")
        return {
            "gpu_name": text("name"),
            "gpu_uuid": text("uuid") or text("gpu_uuid"),
            "gpu_compute_capability": f"{sm // 100}.{sm % 100 // 10}" if type(sm) is int else None,
            "gpu_sm_count": number("number_of_sms"),
            "gpu_l2_cache_bytes": number("l2_cache_size"),
            "gpu_memory_bytes": number("global_memory_size"),
            "gpu_memory_clock_khz": khz("global_memory_bus_peak_clock_rate"),
            "gpu_memory_bus_width_bits": number("global_memory_bus_width"),
            "gpu_peak_bandwidth_bytes_per_second": number("global_memory_bus_bandwidth"),
            "gpu_sm_clock_khz": khz("sm_default_clock_rate"),
            "gpu_ecc": None if ecc is None else ("on" if ecc else "off"),
            "gpu_driver_version": text("driver_version"),
        }


def summaries_note(path: str, context: Mapping[str, Any]) -> str | None:
    """The note for a converted nvbench file whose statistics are not per sample."""
    lost = context.get(NVBENCH_SAMPLES_LOST_KEY) or []
    if context.get(NVBENCH_SAMPLES_KEY) != NVBENCH_SUMMARIES_ONLY and not lost:
        return None
    why = f"; sample files not usable: {'; '.join(map(str, lost[:3]))}" if lost else ""
    return (
        f"{path}: nvbench summaries only (each state's cold GPU time as a mean, relative standard "
        f"deviation and sample count, no samples): times are judged from them (Welch's t on the "
        f"means, marked 'from summaries'); run nvbench with --jsonbin to compare per sample{why}"
    )


def _axis_value(axis: Mapping[str, Any]) -> str:
    """As written, but a float64 without binary noise (0.0003, not 0.00030000000000000003)."""
    value: Any = axis.get("value")
    if axis.get("type") == "float64":
        try:
            return f"{float(value):.12g}"
        except (TypeError, ValueError):
            pass
    return str(value)


def _summaries(value: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(value, list):
        return {}
    return {s["tag"]: s for s in value if isinstance(s, dict) and isinstance(s.get("tag"), str)}


def _field(summary: Mapping[str, Any], name: str) -> Any:
    data = summary.get("data")
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and item.get("name") == name:
            return item.get("value")
    return None


def _get(mapping: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(mapping, dict):
            return None
        mapping = mapping.get(key)
    return mapping


def _read_regular(file: Path, length: int) -> bytes | None:
    """The bytes of a regular file, no more than `length` + 1 of them (a file longer than it
    should be is not read whole: a huge one would exhaust the memory); None for anything else
    (a FIFO would block the read, a device never ends, a folder has no bytes). Opened without
    blocking and checked on the open file, so that what is read is what was checked."""
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as opened:
        # (read(n) sets n bytes aside at once: no more than the file holds)
        return opened.read(min(length, info.st_size) + 1)


def _count(value: Any) -> int | None:
    """A count as nvbench writes one (an int64, as a string of digits); None for anything
    else (2.5, 1e300, true) and past MAX_COUNT."""
    if type(value) is int:
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        number = int(value)
    else:
        return None
    return number if 0 <= number <= MAX_COUNT else None
