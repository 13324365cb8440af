"""nvbench's measurement of a 256 MiB device-to-device cudaMemcpy (cuda-bench + CuPy): the bar
that kernelwatch's coalescing/memcpy_d2d is held against (scripts/gpu/side_by_side.sh).

Two axes ask whether the remaining gap to kernelwatch is the harness or the buffers: `data`
(CuPy's [0, 1) floats, or kernelwatch's [-1, 1)) and `spacer_mib` (device memory allocated
between source and destination, which moves the destination's physical placement). Their
defaults are the plain measurement; `--axis 'spacer_mib=[0,1,64,1024]'` sweeps."""

import sys

import cuda.bench as bench
import cupy as cp

BYTES = 256 << 20

# Plain cudaMalloc and cudaFree for every buffer (no CuPy pool, which would hand the next state
# the blocks the last one freed): the spacer then really moves where the destination lies.
cp.cuda.set_allocator(None)


def memcpy_d2d(state: bench.State) -> None:
    if state.get_string("data") == "signed":
        src = cp.random.uniform(-1.0, 1.0, BYTES // 4, dtype=cp.float32)
    else:
        src = cp.random.random(BYTES // 4, dtype=cp.float32)
    spacer = cp.empty(state.get_int64("spacer_mib") << 20, dtype=cp.uint8)
    dst = cp.empty_like(src)
    state.add_global_memory_reads(BYTES)
    state.add_global_memory_writes(BYTES)

    def launch(launcher: bench.Launch) -> None:
        stream = launcher.get_stream().addressof()
        cp.cuda.runtime.memcpyAsync(
            dst.data.ptr, src.data.ptr, BYTES, cp.cuda.runtime.memcpyDeviceToDevice, stream
        )

    state.exec(launch)
    del spacer


(bench.register(memcpy_d2d).add_string_axis("data", ["unit"]).add_int64_axis("spacer_mib", [0]))

if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)
