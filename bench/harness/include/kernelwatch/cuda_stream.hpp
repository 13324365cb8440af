#pragma once
// Owner of a CUDA stream. Non-blocking: it never synchronizes with the legacy default stream,
// so timing on it is not disturbed by unrelated work on stream 0.

#include <kernelwatch/cuda_check.hpp>

#include <utility>

namespace kernelwatch {

class cuda_stream {
 public:
  cuda_stream() { KW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~cuda_stream() {
    if (stream_ != nullptr) {
      cudaStreamDestroy(stream_);
    }
  }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cuda_stream(cuda_stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  cuda_stream& operator=(cuda_stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }

  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { KW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace kernelwatch
