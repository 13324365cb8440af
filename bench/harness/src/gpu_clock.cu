#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/gpu_clock.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace kernelwatch::detail {
namespace {

__global__ void stamp_each_sm(unsigned long long* stamps, int sm_count) {
  unsigned int sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  unsigned long long nanoseconds = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanoseconds));
  const auto cycles = static_cast<unsigned long long>(clock64());
  if (static_cast<int>(sm) < sm_count) {
    // Several blocks on one SM write nearly equal values; any of them will do.
    stamps[2 * sm] = nanoseconds;
    stamps[2 * sm + 1] = cycles;
  }
}

__global__ void spin_for_cycles(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

clock_probe::clock_probe(int sm_count)
    : sm_count_(sm_count), stamps_(static_cast<std::size_t>(4 * sm_count)) {}

void clock_probe::record(cudaStream_t stream, bool opening) {
  unsigned long long* half = stamps_.data() + (opening ? 0 : 2 * sm_count_);
  // The previous stretch's stamps were read after a synchronize, so the GPU is done with them.
  std::memset(half, 0, 2 * static_cast<std::size_t>(sm_count_) * sizeof(unsigned long long));
  // One block per SM is how the scheduler usually spreads them; an SM it skips is left out.
  stamp_each_sm<<<static_cast<unsigned int>(sm_count_), 1, 0, stream>>>(half, sm_count_);
  KW_CUDA_CHECK_LAUNCH();
}

clock_probe::reading clock_probe::read() const {
  const unsigned long long* opening = stamps_.data();
  const unsigned long long* closing = stamps_.data() + 2 * sm_count_;
  std::vector<double> clocks;
  double elapsed_ns = 0.0;
  for (int sm = 0; sm < sm_count_; ++sm) {
    const unsigned long long t0 = opening[2 * sm];
    const unsigned long long t1 = closing[2 * sm];
    if (t0 == 0 || t1 <= t0) {
      continue;
    }
    const auto nanoseconds = static_cast<double>(t1 - t0);
    elapsed_ns = std::max(elapsed_ns, nanoseconds);
    clocks.push_back(static_cast<double>(closing[2 * sm + 1] - opening[2 * sm + 1]) /
                     nanoseconds * 1e9);
  }
  reading result;
  result.elapsed_ns = elapsed_ns;
  if (!clocks.empty()) {
    auto middle = clocks.begin() + static_cast<std::ptrdiff_t>(clocks.size() / 2);
    std::nth_element(clocks.begin(), middle, clocks.end());
    result.sm_clock_hz = *middle;
  }
  return result;
}

void launch_spin(cudaStream_t stream, long long cycles) {
  spin_for_cycles<<<1, 1, 0, stream>>>(cycles);
  KW_CUDA_CHECK_LAUNCH();
}

}  // namespace kernelwatch::detail
