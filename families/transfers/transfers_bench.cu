// Host<->device transfers: bandwidth of each direction from pageable and from pinned host
// memory against the transfer size, and the staged copy and execute of the Best Practices
// Guide against its sequential baseline. PCIe, not HBM, is the limit here: peak_fraction (of
// the device's DRAM bandwidth) means nothing for this family; read bytes_per_second.
#include "transfers.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

constexpr std::int64_t min_transfer_bytes = std::int64_t{4} << 10;
constexpr std::int64_t max_transfer_bytes = std::int64_t{1} << 30;
// Smaller transfers are repeated up to this many bytes per timed launch: a lone 4 KiB copy
// lasts a few microseconds, below what events time well and costly in wall time per sample.
constexpr std::size_t min_launch_bytes = std::size_t{16} << 20;
// Balances the kernel against the copies of the same data over PCIe Gen5 (~50 GB/s each
// way): 2048 dependent FMAs per float take about as long on an H100 as moving the float.
constexpr int overlap_fma_iterations = 2048;
constexpr std::uint64_t seed = 20261121;

using word = std::uint32_t;  // random data needs fill_random and compare_exact's types
using pinned_buffer = kw::pinned_buffer<word>;

// Ordinary host memory, left uninitialised: the set-up's copy or poison touches every page
// before any timing (a vector's zero fill touched each 1 GiB buffer once more, every
// repetition: part of the transfers' 36 s of set-up on an H100 host).
class pageable_buffer {
 public:
  explicit pageable_buffer(std::size_t count) : words_(new word[count]) {}
  [[nodiscard]] word* data() { return words_.get(); }

 private:
  std::unique_ptr<word[]> words_;
};

int copies_per_launch(std::size_t bytes) {
  return bytes >= min_launch_bytes ? 1 : static_cast<int>(min_launch_bytes / bytes);
}

// One direction's two sides. The destination is poisoned with 0xFF bytes, a word value the
// random data never takes (fill_random's upper bound is exclusive).
template <cudaMemcpyKind Kind, typename HostBuffer>
struct transfer_buffers {
  static constexpr bool upload = Kind == cudaMemcpyHostToDevice;

  explicit transfer_buffers(std::size_t words) : device(words), host(words) {
    const std::size_t bytes = words * sizeof(word);
    kw::fill_random(device.data(), words, seed, word{0}, std::numeric_limits<word>::max());
    if constexpr (upload) {  // the host holds the data, the device the poison
      KW_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), bytes, cudaMemcpyDeviceToHost));
      device.fill_bytes(0xFF);
    } else {  // the other way round
      std::memset(host.data(), 0xFF, bytes);
    }
  }

  kw::device_buffer<word> device;
  HostBuffer host;
};

// One direction, one kind of host memory.
template <cudaMemcpyKind Kind, typename HostBuffer>
void transfer(benchmark::State& state) {
  static_assert(Kind == cudaMemcpyHostToDevice || Kind == cudaMemcpyDeviceToHost);
  constexpr bool upload = Kind == cudaMemcpyHostToDevice;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  if (upload && std::is_same_v<HostBuffer, pinned_buffer> && bytes == std::size_t{64} << 20) {
    kw::mark_reference(state);  // the largest pinned upload: PCIe's own speed, not the host's
  }
  const std::size_t words = bytes / sizeof(word);
  const int copies = copies_per_launch(bytes);
  // Allocating and filling both sides every repetition took 29.5 s of the transfers' 90 s
  // on an H100 host (GPU-fbb49afb); kept while other instances run, as PCIe and the host,
  // not device memory, bound these copies.
  auto& buffers = kw::set_up_kept<transfer_buffers<Kind, HostBuffer>>(words);
  kw::device_buffer<word>& device = buffers.device;
  HostBuffer& host = buffers.host;
  void* const dst = upload ? static_cast<void*>(device.data()) : host.data();
  const void* const src = upload ? static_cast<const void*>(host.data()) : device.data();

  auto timing = kw::measure(state);
  if constexpr (upload) {
    timing.bytes_written(bytes * copies);  // what lands in device memory
  } else {
    timing.bytes_read(bytes * copies);
  }
  timing
      // Host-bound, both kinds. A pageable copy is the host's memcpy into the driver's staging
      // buffer (the host waits for it: held behind a blocking kernel it would deadlock). A
      // pinned copy is DMA, but paced by the host's PCIe root complex, IOMMU and switches, and
      // its small sizes enqueue up to 4096 copies per launch, more than a held stream queues.
      // Issue 12: pinned 16-256 KiB copies +6..21 % on another host, pageable +40..98 %.
      .host_bound()
      .cache(kw::cache_mode::hot)  // an L2 flush would add device traffic unrelated to PCIe
      .peak_bandwidth(0)           // PCIe, not HBM: a DRAM peak fraction would mislead
      .counter("copies_per_launch", copies)
      .verify([&] {
        // On the GPU, where one copy of the host side suffices (the host compare of 1 GiB
        // also made a vector of it first). Uploaded: the host held the device's random data.
        kw::device_buffer<word> other(words);
        if constexpr (upload) {
          kw::fill_random(other.data(), words, seed, word{0}, std::numeric_limits<word>::max());
        } else {
          KW_CUDA_CHECK(cudaMemcpy(other.data(), host.data(), bytes, cudaMemcpyHostToDevice));
        }
        return upload ? kw::compare_exact_on_device(other.data(), device.data(), words)
                      : kw::compare_exact_on_device(device.data(), other.data(), words);
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::repeated_copy(dst, src, bytes, copies, Kind, stream));
      });
}

struct overlap_set_up {
  overlap_set_up(int streams, std::size_t n)
      : host_in(n), host_out(n), device_in(n), device_out(n),
        workers(static_cast<std::size_t>(streams)) {
    const std::size_t bytes = n * sizeof(float);
    kw::fill_random(device_in.data(), n, seed, -1.0F, 1.0F);
    KW_CUDA_CHECK(cudaMemcpy(host_in.data(), device_in.data(), bytes, cudaMemcpyDeviceToHost));
    device_in.fill_bytes(0xFF);  // NaN everywhere: a chunk left out cannot pass the check
    device_out.fill_bytes(0xFF);
    std::memset(host_out.data(), 0xFF, bytes);
    events.reserve(static_cast<std::size_t>(streams) + 1);
    for (int e = 0; e <= streams; ++e) {
      event_handles.push_back(events.emplace_back(cudaEventDisableTiming).get());
    }
    for (const kw::cuda_stream& worker : workers) {
      worker_handles.push_back(worker.get());
    }
  }

  kw::pinned_buffer<float> host_in;
  kw::pinned_buffer<float> host_out;
  kw::device_buffer<float> device_in;
  kw::device_buffer<float> device_out;
  std::vector<kw::cuda_stream> workers;  // created once per instance, not per launch
  std::vector<kw::cuda_event> events;
  std::vector<cudaStream_t> worker_handles;
  std::vector<cudaEvent_t> event_handles;
};

// streams:1 is the sequential upload, kernel, download; streams:k splits them into k chunks.
void overlap(benchmark::State& state) {
  const int streams = static_cast<int>(state.range(0));
  const auto bytes = static_cast<std::size_t>(state.range(1));
  const std::size_t n = bytes / sizeof(float);
  auto& set_up = kw::set_up_kept<overlap_set_up>(streams, n);
  const kw::pinned_buffer<float>& host_in = set_up.host_in;
  const kk::stream_fan fan{set_up.worker_handles.data(), set_up.event_handles.data(), streams};

  kw::measure(state)
      .host_bound()  // its copies are pinned ones over the host's PCIe, as transfer()'s are
      .cache(kw::cache_mode::hot)
      .peak_bandwidth(0)
      .bytes_written(bytes)  // uploaded
      .bytes_read(bytes)     // downloaded
      .elements(n)
      .flops(2.0 * static_cast<double>(n) * overlap_fma_iterations)
      .verify([&] {
        // The chain settles within a rounding or two of 2x; 1e-6 relative is 8 ulps or more.
        std::vector<float> expected(n);
        for (std::size_t i = 0; i < n; ++i) {
          expected[i] = 2.0F * host_in[i];
        }
        return kw::compare_close(expected.data(), set_up.host_out.data(), n, 1e-6);
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::staged_copy_execute(set_up.host_out.data(), host_in.data(),
                                              set_up.device_out.data(), set_up.device_in.data(),
                                              n, overlap_fma_iterations, fan, stream));
      });
}

}  // namespace

KW_GPU_BENCHMARK("transfers/h2d/pageable", transfer<cudaMemcpyHostToDevice, pageable_buffer>)
    ->RangeMultiplier(4)->Range(min_transfer_bytes, max_transfer_bytes)->ArgName("bytes");
KW_GPU_BENCHMARK("transfers/h2d/pinned", transfer<cudaMemcpyHostToDevice, pinned_buffer>)
    ->RangeMultiplier(4)->Range(min_transfer_bytes, max_transfer_bytes)->ArgName("bytes");
KW_GPU_BENCHMARK("transfers/d2h/pageable", transfer<cudaMemcpyDeviceToHost, pageable_buffer>)
    ->RangeMultiplier(4)->Range(min_transfer_bytes, max_transfer_bytes)->ArgName("bytes");
KW_GPU_BENCHMARK("transfers/d2h/pinned", transfer<cudaMemcpyDeviceToHost, pinned_buffer>)
    ->RangeMultiplier(4)->Range(min_transfer_bytes, max_transfer_bytes)->ArgName("bytes");
KW_GPU_BENCHMARK("transfers/overlap", overlap)
    ->ArgsProduct({{1, 2, 4, 8}, {std::int64_t{64} << 20}})
    ->ArgNames({"streams", "bytes"});
