#include <kernelwatch/detail/l2_flush.hpp>
#include <kernelwatch/device_info.hpp>

namespace kernelwatch::detail {

l2_flusher::l2_flusher() : l2_flusher(current_device_info().l2_cache_bytes) {}

// Twice the L2: some of the first pass can stay resident (L2 is split in two partitions on
// Hopper, with set-aside policies), so one L2-sized write is not a guaranteed eviction.
l2_flusher::l2_flusher(std::size_t l2_cache_bytes) : buffer_(2 * l2_cache_bytes) {}

void l2_flusher::flush(cudaStream_t stream) {
  KW_CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0, buffer_.size_bytes(), stream));
}

}  // namespace kernelwatch::detail
