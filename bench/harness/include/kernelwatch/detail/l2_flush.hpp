#pragma once
// Evicts the GPU's L2 cache by writing a buffer twice its size, so that a timed kernel reads
// its inputs from DRAM ("cold") as it would in an application, not from the previous launch.

#include <kernelwatch/device_buffer.hpp>

#include <cstddef>

namespace kernelwatch::detail {

class l2_flusher {
 public:
  /// Sized from the current device's L2.
  l2_flusher();
  explicit l2_flusher(std::size_t l2_cache_bytes);

  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t size_bytes() const noexcept { return buffer_.size_bytes(); }

 private:
  device_buffer<unsigned char> buffer_;
};

}  // namespace kernelwatch::detail
