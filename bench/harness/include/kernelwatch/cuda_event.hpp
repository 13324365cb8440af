#pragma once
// Owner of a CUDA event, and the elapsed GPU time between two recorded events.

#include <kernelwatch/cuda_check.hpp>

#include <utility>

namespace kernelwatch {

class cuda_event {
 public:
  explicit cuda_event(unsigned int flags = cudaEventDefault) {
    KW_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~cuda_event() {
    if (event_ != nullptr) {
      cudaEventDestroy(event_);
    }
  }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cuda_event(cuda_event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  cuda_event& operator=(cuda_event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }

  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) { KW_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { KW_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Seconds of GPU time between two events that have completed.
inline double elapsed_seconds(const cuda_event& start, const cuda_event& stop) {
  float milliseconds = 0.0F;
  KW_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
  return static_cast<double>(milliseconds) * 1e-3;
}

}  // namespace kernelwatch
