"""nvbench's measurement of a 256 MiB device-to-device cudaMemcpy (cuda-bench + CuPy): the bar
that kernelwatch's coalescing/memcpy_d2d is held against (scripts/gpu/side_by_side.sh)."""

import sys

import cuda.bench as bench
import cupy as cp

BYTES = 256 << 20


@bench.register()
def memcpy_d2d(state: bench.State) -> None:
    src = cp.random.random(BYTES // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    state.add_global_memory_reads(BYTES)
    state.add_global_memory_writes(BYTES)

    def launch(launcher: bench.Launch) -> None:
        stream = launcher.get_stream().addressof()
        cp.cuda.runtime.memcpyAsync(
            dst.data.ptr, src.data.ptr, BYTES, cp.cuda.runtime.memcpyDeviceToDevice, stream
        )

    state.exec(launch)


if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)
