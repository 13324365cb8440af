#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/blocking_kernel.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace kernelwatch::detail {
namespace {

__device__ unsigned long long global_nanoseconds() {
  unsigned long long nanoseconds = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanoseconds));
  return nanoseconds;
}

// Spins until hold `number` is released; the difference is taken as signed so that the
// counter may wrap.
__global__ void hold_stream(const volatile unsigned int* released, unsigned int number,
                            volatile unsigned int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_nanoseconds();
  while (static_cast<int>(*released - number) < 0) {
    if (global_nanoseconds() - start > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

}  // namespace

blocking_kernel::blocking_kernel(double timeout_seconds)
    : flags_(2), timeout_seconds_(timeout_seconds) {
  flags_[0] = 0;
  flags_[1] = 0;
  // Loads the kernel now: with lazy module loading, loading a kernel may wait for the device,
  // which must never happen while a hold spins.
  cudaFuncAttributes attributes{};
  KW_CUDA_CHECK(cudaFuncGetAttributes(&attributes, hold_stream));
}

blocking_kernel::~blocking_kernel() { release(); }

void blocking_kernel::hold(cudaStream_t stream) {
  ++holds_;
  const auto timeout_ns = static_cast<unsigned long long>(std::llround(timeout_seconds_ * 1e9));
  hold_stream<<<1, 1, 0, stream>>>(flags_.data(), holds_, flags_.data() + 1, timeout_ns);
  KW_CUDA_CHECK_LAUNCH();
}

void blocking_kernel::release() noexcept {
  // After every call that enqueued this sample's work, as the host sees it.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *static_cast<volatile unsigned int*>(flags_.data()) = holds_;
}

void blocking_kernel::check() const {
  if (*static_cast<const volatile unsigned int*>(flags_.data() + 1) != 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_seconds_);
    throw std::runtime_error(
        std::string("the blocking kernel held the stream for ") + seconds +
        " s without being released: the benchmark's launch waits for the GPU (synchronous "
        "host work such as a pageable cudaMemcpy, a synchronize, or more work than a stream "
        "queues); declare it with .host_bound(), or run with "
        "--kernelwatch_blocking_kernel=false");
  }
}

}  // namespace kernelwatch::detail
