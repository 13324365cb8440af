#pragma once
// The SM clock as the GPU actually ran it, measured on the GPU: a probe kernel stamps each
// SM's cycle counter (clock64) and the global nanosecond timer (%globaltimer) before and after
// a stretch of work, so cycles over nanoseconds is the mean clock over that stretch. NVML's
// clock query would instead sample whatever the clock is when the host happens to ask.

#include <kernelwatch/pinned_buffer.hpp>

#include <cuda_runtime_api.h>

namespace kernelwatch::detail {

class clock_probe {
 public:
  explicit clock_probe(int sm_count);

  /// Enqueues the stamp that opens (`opening`) or closes the stretch to measure.
  void record(cudaStream_t stream, bool opening);

  struct reading {
    double sm_clock_hz = 0.0;  // median over the SMs stamped both times; 0 when none was
    double elapsed_ns = 0.0;   // between the two stamps, by the global timer
  };
  /// After both stamps have completed (the stream was synchronized).
  [[nodiscard]] reading read() const;

 private:
  int sm_count_;
  // [opening, closing] x SM x [globaltimer, clock64]; page-locked, written by the GPU directly.
  pinned_buffer<unsigned long long> stamps_;
};

/// Enqueues a one-thread kernel that spins for `cycles` SM clock cycles (0: returns at once).
void launch_spin(cudaStream_t stream, long long cycles);

}  // namespace kernelwatch::detail
