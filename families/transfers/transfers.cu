#include "transfers.cuh"

namespace kernelwatch::kernels {
namespace {

constexpr int fma_chain_block_size = 256;

unsigned int blocks_for(std::size_t n, int block_size) {
  return static_cast<unsigned int>((n + block_size - 1) / block_size);
}

}  // namespace

cudaError_t repeated_copy(void* dst, const void* src, std::size_t bytes, int copies,
                          cudaMemcpyKind kind, cudaStream_t stream) {
  if (copies < 0) {
    return cudaErrorInvalidValue;
  }
  for (int i = 0; i < copies; ++i) {
    if (const cudaError_t status = cudaMemcpyAsync(dst, src, bytes, kind, stream);
        status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

cudaError_t fma_chain(float* out, const float* in, std::size_t n, int iterations,
                      cudaStream_t stream) {
  if (n == 0) {
    return cudaSuccess;
  }
  fma_chain_kernel<<<blocks_for(n, fma_chain_block_size), fma_chain_block_size, 0, stream>>>(
      out, in, n, iterations);
  return cudaGetLastError();
}

cudaError_t staged_copy_execute(float* host_out, const float* host_in, float* device_out,
                                float* device_in, std::size_t n, int iterations,
                                const stream_fan& fan, cudaStream_t stream) {
  if (fan.count < 1 || fan.workers == nullptr || fan.events == nullptr) {
    return cudaErrorInvalidValue;
  }
  // Stop at the first failure: what is already queued stays valid, and the caller sees why.
  cudaError_t status = cudaEventRecord(fan.events[0], stream);
  for (int w = 0; w < fan.count && status == cudaSuccess; ++w) {
    status = cudaStreamWaitEvent(fan.workers[w], fan.events[0], 0);
  }
  // Depth first (upload, kernel, download per chunk): Hopper's separate copy engines for each
  // direction and its many hardware queues overlap the chunks in this issue order.
  for (int w = 0; w < fan.count && status == cudaSuccess; ++w) {
    const transfer_chunk part = staged_chunk(n, fan.count, w);
    if (part.count == 0) {
      continue;
    }
    const std::size_t bytes = part.count * sizeof(float);
    const cudaStream_t worker = fan.workers[w];
    status = cudaMemcpyAsync(device_in + part.offset, host_in + part.offset, bytes,
                             cudaMemcpyHostToDevice, worker);
    if (status == cudaSuccess) {
      status = fma_chain(device_out + part.offset, device_in + part.offset, part.count, iterations,
                         worker);
    }
    if (status == cudaSuccess) {
      status = cudaMemcpyAsync(host_out + part.offset, device_out + part.offset, bytes,
                               cudaMemcpyDeviceToHost, worker);
    }
  }
  // Join every worker that was forked, even after a failure, so nothing outlives the caller's
  // view of `stream`.
  for (int w = 0; w < fan.count; ++w) {
    const cudaError_t joined = [&] {
      const cudaError_t recorded = cudaEventRecord(fan.events[1 + w], fan.workers[w]);
      return recorded != cudaSuccess ? recorded : cudaStreamWaitEvent(stream, fan.events[1 + w], 0);
    }();
    if (status == cudaSuccess) {
      status = joined;
    }
  }
  return status;
}

}  // namespace kernelwatch::kernels
