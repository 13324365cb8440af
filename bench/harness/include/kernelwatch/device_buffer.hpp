#pragma once
// Owner of an array in device memory.

#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/cuda_array.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace kernelwatch {

template <typename T>
class device_buffer : public detail::cuda_array<T, detail::device_allocator> {
 public:
  using detail::cuda_array<T, detail::device_allocator>::cuda_array;
  using detail::cuda_array<T, detail::device_allocator>::data;
  using detail::cuda_array<T, detail::device_allocator>::size;
  using detail::cuda_array<T, detail::device_allocator>::size_bytes;

  // The helpers below are for setup and checks, never for timed code: each waits for all
  // work on the device first and is complete when it returns. Plain cudaMemset/cudaMemcpy run
  // on the legacy stream, which does not order against the non-blocking streams kernelwatch
  // times on, so without the waits a check could read an output before the kernel wrote it.

  /// Sets every byte, e.g. 0xFF to poison an output (NaN for floating point) before a check.
  void fill_bytes(std::uint8_t value) {
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemset(data(), value, size_bytes()));
    KW_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void copy_from_host(const std::vector<T>& host) {
    if (host.size() != size()) {
      throw std::invalid_argument("device_buffer::copy_from_host: size mismatch");
    }
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemcpy(data(), host.data(), size_bytes(), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return once the data is staged, before it lands.
    KW_CUDA_CHECK(cudaDeviceSynchronize());
  }

  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> host(size());
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemcpy(host.data(), data(), size_bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
};

}  // namespace kernelwatch
