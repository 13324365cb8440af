#pragma once
// Holds a stream while one sample is enqueued, so that its start event, launch and stop event
// run back to back on the GPU (the technique of nvbench's blocking_kernel). Without it, a
// launch that takes the host longer to submit than the previous sample takes the GPU to run
// leaves the GPU waiting between the start event and the kernel, and that wait is timed: on a
// slow or busy host a 7 us kernel reads 1-2 us slower (issue 12).
//
// Holds are numbered: hold() enqueues a one-thread kernel that spins until a host-mapped
// counter reaches its number, release() is one host store. The host may release sample k and
// go on enqueuing sample k+1 without synchronizing: the GPU stops at the next hold only if it
// gets there before the host has enqueued what follows it.
//
// Never hold a stream in front of work the host then waits for (a pageable cudaMemcpy stages
// its data on the host, a synchronize, more launches than the stream's queue holds): the host
// would wait for the GPU and the GPU for the host. The kernel gives up after timeout_seconds,
// and check() turns that into an error naming the cause. Ten seconds: no sample's enqueuing
// takes the host that long unless it waits for the GPU.

#include <kernelwatch/pinned_buffer.hpp>

#include <cuda_runtime_api.h>

namespace kernelwatch::detail {

class blocking_kernel {
 public:
  static constexpr double default_timeout_seconds = 10.0;

  explicit blocking_kernel(double timeout_seconds = default_timeout_seconds);
  /// Releases every hold, so a stream is never left held by an exception.
  ~blocking_kernel();
  blocking_kernel(const blocking_kernel&) = delete;
  blocking_kernel& operator=(const blocking_kernel&) = delete;

  /// Enqueues the hold: nothing enqueued after it on `stream` starts until release().
  void hold(cudaStream_t stream);
  /// Lets the latest hold go (a host store, no CUDA call).
  void release() noexcept;
  /// After the stream has been synchronized: throws std::runtime_error if a hold ended by
  /// its timeout instead of by release() (its samples include the wait).
  void check() const;

 private:
  // [0]: the number of the latest released hold; [1]: non-zero once a hold timed out.
  // Page-locked, so the GPU reads and writes it directly.
  pinned_buffer<unsigned int> flags_;
  unsigned int holds_ = 0;
  double timeout_seconds_;
};

}  // namespace kernelwatch::detail
