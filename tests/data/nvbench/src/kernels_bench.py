"""A small nvbench benchmark in Python (cuda-bench + CuPy): two kernels, `steady` and `slowed`.

NVBENCH_SLOW=1 doubles the arithmetic of `slowed` only, the deliberate regression of
scripts/gpu/make_nvbench_data.sh. The kernel is a chain of multiply-adds per element, so its
time follows the chain's length.
"""

import os
import sys

import cuda.bench as bench
import cupy as cp

KERNEL = cp.RawKernel(
    r"""
extern "C" __global__ void chain(const float* x, float* y, long long n, int steps) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    for (int s = 0; s < steps; ++s) v = v * 0.999f + 0.5f;
    y[i] = v;
  }
}
""",
    "chain",
)
STEPS = 256


def run(state: bench.State, steps: int) -> None:
    n = state.get_int64("Elements")
    x = cp.ones(n, dtype=cp.float32)
    y = cp.empty_like(x)
    state.add_element_count(n)
    state.add_global_memory_reads(n * 4)
    state.add_global_memory_writes(n * 4)
    threads = 256
    blocks = (n + threads - 1) // threads

    def launch(launcher: bench.Launch) -> None:
        stream = cp.cuda.ExternalStream(launcher.get_stream().addressof())
        with stream:
            KERNEL((blocks,), (threads,), (x, y, cp.int64(n), cp.int32(steps)))

    state.exec(launch)


@bench.register()
@bench.axis.int64("Elements", [1 << 20, 1 << 22])
def steady(state: bench.State) -> None:
    run(state, STEPS)


@bench.register()
@bench.axis.int64("Elements", [1 << 22])
def slowed(state: bench.State) -> None:
    run(state, STEPS * (2 if os.environ.get("NVBENCH_SLOW") == "1" else 1))


if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)
