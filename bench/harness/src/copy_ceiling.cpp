#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/detail/copy_ceiling.hpp>
#include <kernelwatch/detail/sample_statistics.hpp>
#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/device_info.hpp>

#include <algorithm>
#include <vector>

namespace kernelwatch::detail {

double measure_copy_ceiling(std::size_t buffer_bytes) {
  constexpr int warmup_copies = 2;
  constexpr int timed_copies = 10;
  device_buffer<unsigned char> source(buffer_bytes);
  device_buffer<unsigned char> target(buffer_bytes);
  source.fill_bytes(1);
  cuda_stream stream;
  const auto copy = [&] {
    KW_CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), buffer_bytes,
                                  cudaMemcpyDeviceToDevice, stream.get()));
  };
  for (int i = 0; i < warmup_copies; ++i) {
    copy();
  }
  std::vector<cuda_event> events(2 * timed_copies);
  for (int i = 0; i < timed_copies; ++i) {
    events[2 * i].record(stream.get());
    copy();
    events[2 * i + 1].record(stream.get());
  }
  stream.synchronize();
  std::vector<double> seconds;
  for (int i = 0; i < timed_copies; ++i) {
    seconds.push_back(elapsed_seconds(events[2 * i], events[2 * i + 1]));
  }
  return 2.0 * static_cast<double>(buffer_bytes) / detail::summarize_samples(seconds).median;
}

double current_copy_ceiling() {
  static const double ceiling = measure_copy_ceiling(
      std::max<std::size_t>(std::size_t{512} << 20, 8 * current_device_info().l2_cache_bytes));
  return ceiling;
}

}  // namespace kernelwatch::detail
