#pragma once
// Host<->device transfers (CUDA C++ Best Practices Guide, "Data Transfer Between Host and
// Device"): repeated copies for bandwidth against transfer size, and the guide's staged
// concurrent copy and execute, which hides a kernel behind the copies of the next chunk.
// Launchers return the first failing call's cudaError_t; they never throw.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace kernelwatch::kernels {

/// `copies` back-to-back cudaMemcpyAsync(dst, src, bytes, kind) on `stream`. Small copies
/// are batched so one timed launch lasts long enough to measure, as bandwidthTest does.
cudaError_t repeated_copy(void* dst, const void* src, std::size_t bytes, int copies,
                          cudaMemcpyKind kind, cudaStream_t stream);

/// out[i] = acc after `iterations` dependent steps acc = fma(0.5, acc, in[i]) from acc =
/// in[i]: a compute cost set by `iterations` (2 flops each), while the result stays a
/// function of its own input (it settles within a rounding or two of 2 * in[i]).
template <typename T>
__global__ void fma_chain_kernel(T* __restrict__ out, const T* __restrict__ in, std::size_t n,
                                 int iterations) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const T x = in[i];
    T acc = x;
#pragma unroll 16  // keeps loop bookkeeping a small share of the issue slots
    for (int k = 0; k < iterations; ++k) {
      acc = fma(static_cast<T>(0.5), acc, x);
    }
    out[i] = acc;
  }
}

cudaError_t fma_chain(float* out, const float* in, std::size_t n, int iterations,
                      cudaStream_t stream);

/// A contiguous part of [0, n): chunk `index` of `chunks` (all of size ceil(n / chunks) but
/// the last ones, which may be shorter or empty when n is small).
struct transfer_chunk {
  std::size_t offset = 0;
  std::size_t count = 0;
};

[[nodiscard]] constexpr transfer_chunk staged_chunk(std::size_t n, int chunks, int index) {
  const auto parts = static_cast<std::size_t>(chunks);
  const std::size_t size = (n + parts - 1) / parts;
  const std::size_t offset = std::min(n, size * static_cast<std::size_t>(index));
  return {offset, std::min(size, n - offset)};
}

/// Worker streams forked from, and joined back into, a caller's stream.
struct stream_fan {
  const cudaStream_t* workers = nullptr;  // `count` streams
  const cudaEvent_t* events = nullptr;    // `count` + 1: [0] forks, [1 + i] joins worker i
  int count = 0;
};

/// The staged concurrent copy and execute, round trip included: [0, n) in fan.count chunks;
/// chunk i is copied host_in -> device_in, run through fma_chain into device_out and copied
/// device_out -> host_out, all on worker i, so that chunk i's kernel overlaps the upload of
/// chunk i + 1 and the download of chunk i - 1. The workers start after the work already on
/// `stream`, and the work queued on `stream` afterwards (a timing event) waits for all of
/// them. fan.count == 1 is the sequential baseline: one upload, one kernel, one download.
/// The host buffers must be pinned for the copies to overlap (pageable ones still give the
/// right result, serialized); events may be created with cudaEventDisableTiming.
cudaError_t staged_copy_execute(float* host_out, const float* host_in, float* device_out,
                                float* device_in, std::size_t n, int iterations,
                                const stream_fan& fan, cudaStream_t stream);

}  // namespace kernelwatch::kernels
