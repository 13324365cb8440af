// Shared-memory bank conflicts: a warp reads shared memory with its lanes 1..32 words apart,
// for 32-bit and 64-bit words, and the stride-32 read with rows padded by one word. The data
// never leaves shared memory (one 8-16 KiB fill per block from L2), so the time is the bank
// passes per request; the L2 is not flushed.
#include "shared_banks.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// 128 rounds x 32 reads per thread: about 130 us for a conflict-free 32-bit read on an H100,
// so even the fastest instance is far above launch overhead; the 32-way read takes ~4 ms.
constexpr int rounds = 128;
constexpr int max_stride = 32;
constexpr std::uint64_t seed = 20261121;

// fill_random has no uint64 instantiation: random int64 bits, read back as uint64.
template <typename T>
using fill_type = std::conditional_t<std::is_same_v<T, std::uint64_t>, std::int64_t, T>;

template <typename T>
void strided_read(benchmark::State& state, int padding) {
  const int stride = static_cast<int>(state.range(0));
  unsigned int blocks = 0;
  KW_CUDA_CHECK(kk::shared_strided_read_grid<T>(&blocks));
  using F = fill_type<T>;
  auto& buffers = kw::set_up_once<kw::in_out_buffers<F, T>>(
      kk::shared_banks_words, static_cast<std::size_t>(blocks) * kk::shared_banks_block_size,
      seed, F(0), std::numeric_limits<F>::max());
  auto& in = buffers.in;
  auto& out = buffers.out;
  const T* words = reinterpret_cast<const T*>(in.data());

  const double threads = static_cast<double>(out.size());
  const double shared_bytes = threads * rounds * kk::shared_banks_reads_per_round * sizeof(T);
  const int sms = kw::current_device_info().sm_count;
  kw::measure(state)
      .cache(kw::cache_mode::hot)  // nothing of interest in DRAM
      .rate_counter("shared_bytes_per_second", shared_bytes)
      .rate_counter("shared_bytes_per_second_per_sm", shared_bytes / sms)
      .counter("bank_conflict_ways",
               kk::bank_conflict_ways(static_cast<int>(sizeof(T)), stride + padding))
      .verify([&] {
        std::vector<T> host_words;
        for (const F word : in.to_host()) {
          host_words.push_back(static_cast<T>(word));
        }
        const std::vector<T> block =
            kk::shared_strided_read_reference(host_words, stride, padding, rounds);
        std::vector<T> expected(out.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
          expected[i] = block[i % block.size()];  // every block computes the same sums
        }
        return kw::compare_exact(expected, out.to_host());
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(
            kk::shared_strided_read(out.data(), words, stride, padding, rounds, blocks, stream));
      });
}

template <typename T>
void read(benchmark::State& state) {
  if (std::is_same_v<T, std::uint32_t> && state.range(0) == 1) {
    kw::mark_reference(state);  // no bank conflict: the speed the strides are read against
  }
  strided_read<T>(state, 0);
}

template <typename T>
void padded(benchmark::State& state) {
  strided_read<T>(state, 1);
}

}  // namespace

KW_GPU_BENCHMARK("shared_banks/read/u32", read<std::uint32_t>)
    ->DenseRange(1, max_stride)->ArgName("stride");
KW_GPU_BENCHMARK("shared_banks/read/u64", read<std::uint64_t>)
    ->DenseRange(1, max_stride)->ArgName("stride");
// The padded fix for the worst stride: rows of 32 words padded to 33.
KW_GPU_BENCHMARK("shared_banks/padded/u32", padded<std::uint32_t>)
    ->Arg(max_stride)->ArgName("stride");
KW_GPU_BENCHMARK("shared_banks/padded/u64", padded<std::uint64_t>)
    ->Arg(max_stride)->ArgName("stride");
