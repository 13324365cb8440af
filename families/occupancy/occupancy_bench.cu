// Block size and occupancy: a one-float-per-thread copy over block sizes 32..1024, and the
// same copy at 256 threads with shared memory reserved so that only 1..8 blocks fit on an SM.
// Each reports its theoretical occupancy (active warps / the SM's maximum) and blocks per SM
// next to the bandwidth it reaches.
#include "occupancy.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cstdint>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// Far past the L2 of any current GPU (50 MB on the H100, 60 MB on the H200).
constexpr std::size_t buffer_bytes = std::size_t{256} << 20;
constexpr std::size_t n = buffer_bytes / sizeof(float);
constexpr int smem_limited_block_size = 256;
constexpr std::uint64_t seed = 20261121;

template <typename Launch>
void timed_copy(benchmark::State& state, const kk::theoretical_occupancy& theoretical,
                std::size_t shared_bytes, Launch launch) {
  auto& buffers = kw::set_up_once<kw::in_out_buffers<float>>(n, n, seed, -1.0F, 1.0F);
  auto& in = buffers.in;
  auto& out = buffers.out;

  kw::measure(state)
      .bytes_read(buffer_bytes)
      .bytes_written(buffer_bytes)
      .elements(n)
      .counter("occupancy", theoretical.fraction())
      .counter("blocks_per_sm", theoretical.blocks_per_sm)
      .counter("shared_bytes_per_block", static_cast<double>(shared_bytes))
      .verify([&] { return kw::compare_exact_on_device(in.data(), out.data(), in.size()); })
      .run([&](cudaStream_t stream) { launch(out.data(), in.data(), stream); });
}

void copy(benchmark::State& state) {
  const int block_size = static_cast<int>(state.range(0));
  if (block_size == 256) {
    kw::mark_reference(state);  // the block size most kernels of the suite launch with
  }
  kk::theoretical_occupancy theoretical;
  KW_CUDA_CHECK(kk::occupancy_of_copy(block_size, &theoretical));
  timed_copy(state, theoretical, 0, [=](float* out, const float* in, cudaStream_t stream) {
    KW_CUDA_CHECK(kk::occupancy_copy(out, in, n, block_size, stream));
  });
}

void smem_limited(benchmark::State& state) {
  const int block_size = static_cast<int>(state.range(0));
  const int blocks_per_sm = static_cast<int>(state.range(1));
  std::size_t shared_bytes = 0;
  KW_CUDA_CHECK(kk::shared_bytes_for_blocks_per_sm(blocks_per_sm, &shared_bytes));
  kk::theoretical_occupancy theoretical;
  KW_CUDA_CHECK(kk::occupancy_of_smem_limited_copy(block_size, shared_bytes, &theoretical));
  timed_copy(state, theoretical, shared_bytes,
             [=](float* out, const float* in, cudaStream_t stream) {
               KW_CUDA_CHECK(kk::smem_limited_copy(out, in, n, block_size, shared_bytes, stream));
             });
}

}  // namespace

// Powers of two plus sizes that do not divide an H100 SM's 2048 threads, so whole blocks
// leave 2-25% of its 64 warp slots idle (96: 63 warps, 192/384/640: 60, 896: 56, 768: 48);
// 32 is held to 50% by the limit of 32 resident blocks per SM.
KW_GPU_BENCHMARK("occupancy/copy", copy)
    ->ArgsProduct({{32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 896, 1024}})
    ->ArgName("block");
KW_GPU_BENCHMARK("occupancy/smem_limited", smem_limited)
    ->ArgsProduct({{smem_limited_block_size}, {1, 2, 3, 4, 6, 8}})
    ->ArgNames({"block", "blocks_per_sm"});
