"""Fake Google Benchmark binaries for the tests of `run`, `baseline` and `ab`.

A fake binary is an executable Python script that behaves like this project's binaries as
far as kernelwatch can tell: it honours --benchmark_list_tests, --benchmark_filter,
--benchmark_repetitions, --benchmark_enable_random_interleaving and
--benchmark_out(_format); writes Google Benchmark JSON with a GPU context; exits 4 with the
harness's line when told there is no GPU, 3 when told the CUDA context is lost, or dies of a
signal. Like the harness it accepts --kernelwatch_noise_target, --kernelwatch_max_time,
--kernelwatch_min_samples and --kernelwatch_throttle_threshold, writes the per-repetition
counters of the adaptive sampling (samples, samples_throttled, noise, sample_cv, sm_clock_mhz,
gpu_temperature_c, and ceiling_fraction for benchmarks that move bytes) and the context keys
kernelwatch_copy_ceiling_bytes_per_second, kernelwatch_noise_target, kernelwatch_max_time and
kernelwatch_inject, and honours --kernelwatch_inject=REGEX:FRACTION by making the matching
benchmarks exactly FRACTION slower. Its behaviour is read at each start from a JSON file
beside it (<binary>.json), so a test can change it between runs:

    benchmarks     {name: median time in ns}
    slow           {name: factor}       times multiplied by factor ...
    slow_runs      N                    ... only in the first N measuring runs (a disturbance)
    errors         {name: message}      error rows instead of times
    skipped        {name: message}      skipped rows (Google Benchmark 1.8)
    exit           status               3 or 4 (with the harness's message), or any other
    signal         "SIGSEGV"            kill itself
    signal_runs    [1]                  ... only in these measuring runs (0: the first)
    hang           NAME                 the harness's watchdog: exit 5 with its line naming NAME
    hang_from_run  0                    ... only from this measuring run on (0: the first)
    stall          true                 never finish: sleep, and start a child that sleeps too
                                        (its pid in <binary>.child), as a hung binary would
    no_output      true                 exit 0 without writing the result
    context        {key: value}         merged into the GPU context below
    noise          0.002                relative spread of the repetitions inside one process
    process_noise  0.0                  relative spread of each benchmark's level between
                                        processes (drawn once per process and benchmark)
    noisy          {name: factor}       both spreads multiplied by factor for these benchmarks
    sample_cv      0.004                spread of the samples inside a repetition: sets the
                                        samples and noise counters (adaptive sampling)
    throttled      0                    samples_throttled of every repetition
    occupied       {name: [N, ...]}     other_processes_on_gpu of these benchmarks' repetitions,
                                        in turn (0 of the others): the harness saw N other
                                        processes on the GPU while that repetition ran (pids
                                        4000 on, named on stderr as the harness does when it
                                        first sees one)
    bytes          {name: bytes}        bytes moved per launch: bytes_per_second, ceiling_fraction
    memory_speed   1.0                  this card's memory speed: byte-moving benchmarks run
                                        this much faster and the copy ceiling is this much higher
    counters       true                 false: a plain Google Benchmark binary: no harness
                                        counters or context keys, refuses --kernelwatch_* flags
    seed           0                    changes every random draw
    log            PATH                 append each command line (JSON list) to PATH
    trace          PATH                 append the binary's path to PATH at each measuring run
    devices        {CUDA_VISIBLE_DEVICES: {key: value}}  context of each GPU it is shown
    sleep          0.0                  seconds each measuring run takes (with spans)
    slow_on        {CUDA_VISIBLE_DEVICES: factor}  sleep this many times longer on that GPU
    spans          PATH                 append {"gpu", "names", "start", "end"} (JSON) of each
                                        measuring run to PATH
    refuses_filter REGEX                a --benchmark_filter this matches is refused as Google
                                        Benchmark refuses one its regex engine cannot compile
"""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parents[2] / "tools"

GPU_CONTEXT = {
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_compute_capability": "9.0",
    "gpu_uuid": "GPU-00000000-1111-2222-3333-444444444444",
    "gpu_driver_version": "580.159.04",
    "cuda_runtime_version": "13.0",
    "cuda_driver_api_version": "13.0",
    "kernelwatch_build_type": "Release",
    "kernelwatch_cache_mode": "cold",
    "kernelwatch_git_commit": "0123456789abcdef0123456789abcdef01234567",
}

SCRIPT = r"""#!{python}
import json, math, os, random, re, signal, sys
sys.path.insert(0, {tools!r})
from kernelwatch import synthetic  # (light: gbench, for failed_row, brings numpy: 0.2 s a start)

me = os.path.abspath(__file__)
config = json.load(open(me + ".json"))
names = list(config["benchmarks"])
harness = config.get("counters", True)
if sys.argv[1:] == ["--help"]:  # the harness lists its flags before Google Benchmark's
    print("kernelwatch flags:\n  --kernelwatch_max_time=S" if harness else "benchmark [...]")
    sys.exit(0)
flags = ("--benchmark_", "--kernelwatch_") if harness else ("--benchmark_",)
args = {{}}
for arg in sys.argv[1:]:
    key, _, value = arg.partition("=")
    if not key.startswith(flags):
        sys.stderr.write(me + ": error: unrecognized command-line flag: " + arg + "\n")
        sys.exit(2)
    args[key] = value
if "log" in config:
    with open(config["log"], "a") as log:
        log.write(json.dumps(sys.argv[1:]) + "\n")
pattern = args.get("--benchmark_filter", "")
if pattern and re.search(config.get("refuses_filter", "(?!)"), pattern):
    # Google Benchmark's words, and its exit status, for a regex its engine cannot compile
    sys.stderr.write("Could not compile benchmark re: Invalid escape at offset 7\n")
    sys.exit(0)
if pattern and pattern not in ("all", "."):
    names = [n for n in names if re.search(pattern, n)]
if args.get("--benchmark_list_tests", "false") in ("", "true", "1"):
    print("\n".join(names))
    sys.exit(0)
status = config.get("exit", 0)
if status == 4:
    sys.stderr.write("kernelwatch: no CUDA GPU is visible (fake: 0 devices); nothing to measure\n")
    sys.exit(4)
if not names:
    sys.stderr.write("Failed to match any benchmarks against regex: " + pattern + "\n")
    sys.exit(0)
import fcntl
with open(me + ".runs", "a+") as counter:  # one GPU's process at a time (run --gpus)
    fcntl.flock(counter, fcntl.LOCK_EX)
    counter.seek(0)
    runs = int(counter.read() or 0)
    counter.seek(0)
    counter.truncate()
    counter.write(str(runs + 1))
if "trace" in config:
    with open(config["trace"], "a") as trace:
        trace.write(me + "\n")
if status == 3:
    sys.stderr.write("kernelwatch: CUDA context lost: an illegal memory access was encountered\n")
    sys.exit(3)
if config.get("hang") and runs >= config.get("hang_from_run", 0):
    sys.stderr.write("kernelwatch: error: " + config["hang"] + " made no progress for 120 s "
                     "(a kernel that never finishes?); the process ends\n")
    sys.exit(5)
if config.get("stall"):
    import subprocess, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(me + ".child", "w") as pid:
        pid.write(str(child.pid))
    time.sleep(3600)
if status:
    sys.stderr.write("fake: exiting with " + str(status) + "\n")
    sys.exit(status)
import time
started = time.time()
time.sleep(config.get("sleep", 0.0) * config.get("slow_on", {{}}).get(os.environ.get("CUDA_VISIBLE_DEVICES"), 1.0))
if "spans" in config:
    with open(config["spans"], "a") as spans:
        spans.write(json.dumps({{"gpu": os.environ.get("CUDA_VISIBLE_DEVICES"), "names": names,
                                 "start": started, "end": time.time()}}) + "\n")
if config.get("signal") and runs in config.get("signal_runs", [runs]):
    os.kill(os.getpid(), getattr(signal, config["signal"]))
if config.get("no_output"):
    sys.exit(0)
repetitions = int(args.get("--benchmark_repetitions", "1"))
slow_now = config.get("slow_runs") is None or runs < config["slow_runs"]
noise = config.get("noise", 0.002)
process_noise = config.get("process_noise", 0.0)
target = float(args.get("--kernelwatch_noise_target", "0.005"))
max_time = float(args.get("--kernelwatch_max_time", "0.25"))
min_samples = int(args.get("--kernelwatch_min_samples", "10"))
inject_regex, inject_fraction = None, 0.0
if "--kernelwatch_inject" in args:
    inject_regex, _, fraction_text = args["--kernelwatch_inject"].rpartition(":")
    try:
        inject_fraction = float(fraction_text)
        re.compile(inject_regex)
    except (ValueError, re.error):
        sys.stderr.write("kernelwatch: error: --kernelwatch_inject: expected REGEX:FRACTION\n")
        sys.exit(2)
    from kernelwatch.names import instance_key
speed = config.get("memory_speed", 1.0)
ceiling_gbps = 3950.0 * speed
rows = []
if config.get("errors") or config.get("skipped"):
    from kernelwatch.gbench import failed_row
seen_pids = set()
for index, name in enumerate(names):
    if name in config.get("errors", {{}}):
        rows.append(failed_row(name, config["errors"][name]))
        continue
    if name in config.get("skipped", {{}}):
        rows.append(failed_row(name, config["skipped"][name], skipped=True))
        continue
    factor = config.get("slow", {{}}).get(name, 1.0) if slow_now else 1.0
    moved = config.get("bytes", {{}}).get(name)
    if moved:
        factor /= speed
    # (as the harness: the instance key, family/argument values, not the full name)
    if inject_regex is not None and re.search(inject_regex, instance_key(name)):
        factor *= 1.0 + inject_fraction
    loud = config.get("noisy", {{}}).get(name, 1.0)
    rng = random.Random(f"{{name}}/{{runs}}/{{config.get('seed', 0)}}")
    if process_noise:
        factor *= math.exp(rng.gauss(0, process_noise * loud))
    times = [config["benchmarks"][name] * factor * math.exp(rng.gauss(0, noise * loud))
             for _ in range(repetitions)]
    counters = {{}}
    if harness:
        sample_cv = config.get("sample_cv", 0.004) * loud
        wanted = math.ceil((4.9 * sample_cv / target) ** 2)
        affordable = max(min_samples, int(max_time / (times[0] * 1e-9)))
        samples = [max(min_samples, min(wanted, affordable))] * repetitions
        counters = {{
            "samples": [float(n) for n in samples],
            "samples_throttled": [float(config.get("throttled", 0))] * repetitions,
            "noise": [4.9 * sample_cv / math.sqrt(n) * math.exp(rng.gauss(0, 0.1))
                      for n in samples],
            "sample_cv": [sample_cv * math.exp(rng.gauss(0, 0.1)) for _ in samples],
            "sm_clock_mhz": [1980.0 - abs(rng.gauss(0, 5)) for _ in samples],
            "gpu_temperature_c": [45.0 + rng.random() * 5 for _ in samples],
            "other_processes_on_gpu": [
                float(seen[i % len(seen)])
                for seen in [config.get("occupied", {{}}).get(name, [0])]
                for i in range(repetitions)
            ],
        }}
        for pid in range(4000, 4000 + int(max(counters["other_processes_on_gpu"]))):
            if pid not in seen_pids:
                from kernelwatch.names import instance_key
                seen_pids.add(pid)
                sys.stderr.write(
                    f"kernelwatch: warning: another process computes on this GPU (pid {{pid}}: "
                    f"fake-occupant) during {{instance_key(name)}}: it shares the GPU's time "
                    "with the samples, which may be slowed\n"
                )
        if moved:
            bandwidth = [moved / (t * 1e-9) for t in times]
            counters["bytes_per_second"] = bandwidth
            counters["ceiling_fraction"] = [b / (ceiling_gbps * 1e9) for b in bandwidth]
    # "renamed": a prefix its results get that its listing has not (a broken binary).
    rows += synthetic.benchmark_rows(
        config.get("renamed", "") + name, times, family_index=index, counters=counters
    )
context = dict({gpu_context!r})
if harness:
    context["kernelwatch_copy_ceiling_bytes_per_second"] = f"{{ceiling_gbps * 1e9:.0f}}"
    context["kernelwatch_noise_target"] = f"{{target:g}}"
    context["kernelwatch_max_time"] = f"{{max_time:g}}"
    if inject_regex is not None:
        context["kernelwatch_inject"] = args["--kernelwatch_inject"]
context.update(config.get("context", {{}}))
context.update(config.get("devices", {{}}).get(os.environ.get("CUDA_VISIBLE_DEVICES"), {{}}))
context["executable"] = me
synthetic.write(args["--benchmark_out"], synthetic.document(rows, context))
"""


def make(
    folder: Path,
    name: str,
    benchmarks: Mapping[str, float],
    **behaviour: Any,
) -> Path:
    """Write an executable fake binary `folder/name` and its behaviour file; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        SCRIPT.format(python=sys.executable, tools=str(TOOLS), gpu_context=GPU_CONTEXT),
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    configure(path, benchmarks=dict(benchmarks), **behaviour)
    return path


def configure(binary: Path, **behaviour: Any) -> None:
    """Replace (update) the behaviour of a fake binary."""
    config_path = Path(f"{binary}.json")
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config.update(behaviour)
    config_path.write_text(json.dumps(config), encoding="utf-8")


def runs(binary: Path) -> int:
    """How many measuring runs the binary has made."""
    path = Path(f"{binary}.runs")
    return int(path.read_text()) if path.exists() else 0


def suite(build: Path, families: Mapping[str, Mapping[str, float]], **behaviour: Any) -> list[Path]:
    """BUILD/bench/kernelwatch_bench_<family> for each family: {family: {name: median ns}}."""
    return [
        make(build / "bench", f"kernelwatch_bench_{family}", benchmarks, **behaviour)
        for family, benchmarks in families.items()
    ]


def no_nvidia_smi(monkeypatch: Any, devices: bool = True) -> None:
    """Make kernelwatch find no nvidia-smi (and, unless `devices`, no NVIDIA device files),
    so that the GPU is probed through the first binary."""
    from kernelwatch.runner import process as runner  # where the GPU is looked for

    monkeypatch.setattr(runner, "NVIDIA_SMI", "kernelwatch-test-no-such-nvidia-smi")
    monkeypatch.setattr(runner, "GPU_DEVICE_GLOBS", ("/",) if devices else ())


def fake_nvidia_smi(
    folder: Path, monkeypatch: Any, output: str, status: int = 0, query_gpu: str | None = None
) -> Path:
    """An nvidia-smi that prints `output` and exits with `status`; `query_gpu`, where given, is
    what it prints for --query-gpu (gpus.discover's listing) instead."""
    from kernelwatch.runner import process as runner  # where the GPU is looked for

    path = folder / "nvidia-smi"
    query = "any(a.startswith('--query-gpu') for a in sys.argv)"
    said = repr(output) if query_gpu is None else f"{query_gpu!r} if {query} else {output!r}"
    path.write_text(
        f"#!{sys.executable}\nimport sys\nprint({said})\nsys.exit({status})\n", encoding="utf-8"
    )
    path.chmod(0o755)
    monkeypatch.setattr(runner, "NVIDIA_SMI", str(path))
    return path
