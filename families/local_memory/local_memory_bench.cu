// Registers and local memory: one per-thread computation on a 32-word array, with the array in
// registers (compile-time indices), in local memory (run-time indices), and in registers under
// a __launch_bounds__ cap that makes the compiler spill. The compiler's register and local
// memory use per thread are reported as counters next to the time.
#include "local_memory.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

constexpr std::uint64_t seed = 20261121;
// Threads whose outputs the host recomputes: the whole output would take seconds of host work.
constexpr std::size_t sampled_threads = std::size_t{1} << 16;

// gathered[j] = in[where[j]] and gathered[count + j] = out[where[j]].
__global__ void gather_threads(const std::uint32_t* in, const std::uint32_t* out,
                               const std::size_t* where, std::size_t count,
                               std::uint32_t* gathered) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j < count) {
    gathered[j] = in[where[j]];
    gathered[count + j] = out[where[j]];
  }
}

void run_variant(benchmark::State& state, kk::local_memory_variant variant) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto rounds = static_cast<int>(state.range(1));
  if (variant == kk::local_memory_variant::registers && rounds == 2) {
    kw::mark_reference(state);  // the array kept in registers, the fixed parts' largest share
  }
  auto& buffers = kw::set_up_once<kw::in_out_buffers<std::uint32_t>>(
      n, n, seed, std::uint32_t{0}, std::numeric_limits<std::uint32_t>::max());
  auto& in = buffers.in;
  auto& out = buffers.out;

  cudaFuncAttributes attributes{};
  KW_CUDA_CHECK(kk::local_memory_attributes(variant, &attributes));
  int blocks_per_sm = 0;
  KW_CUDA_CHECK(kk::local_memory_resident_blocks(variant, &blocks_per_sm));

  kw::measure(state)
      .bytes_read(n * sizeof(std::uint32_t))
      .bytes_written(n * sizeof(std::uint32_t))
      .elements(n)
      .counter("registers_per_thread", attributes.numRegs)
      .counter("local_bytes_per_thread", static_cast<double>(attributes.localSizeBytes))
      .counter("resident_blocks_per_sm", blocks_per_sm)
      .verify([&] {
        // Evenly spread threads, each sample at a different offset within its spacing (so
        // at every lane and warp position), plus the last thread.
        const std::size_t spacing = std::max<std::size_t>(1, n / sampled_threads);
        std::vector<std::size_t> threads;
        for (std::size_t i = 0; i < n; i += spacing) {
          threads.push_back(std::min(n - 1, i + (i / spacing) % spacing));
        }
        threads.push_back(n - 1);
        // Their inputs and outputs gathered on the GPU: copying the whole 64 MiB input and
        // output to the host was 0.12 s a check, more than the family's samples (H100,
        // docs/measurement.md).
        kw::device_buffer<std::size_t> where(threads.size());
        where.copy_from_host(threads);
        kw::device_buffer<std::uint32_t> gathered(2 * threads.size());
        gather_threads<<<static_cast<unsigned>((threads.size() + 255) / 256), 256>>>(
            in.data(), out.data(), where.data(), threads.size(), gathered.data());
        KW_CUDA_CHECK_LAUNCH();
        const std::vector<std::uint32_t> host = gathered.to_host();
        std::vector<std::uint32_t> expected;
        for (std::size_t j = 0; j < threads.size(); ++j) {
          expected.push_back(kk::local_memory_reference(host[j], rounds));
        }
        return kw::compare_exact(expected, std::vector<std::uint32_t>(
                                               host.begin() + static_cast<std::ptrdiff_t>(
                                                                  threads.size()),
                                               host.end()));
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::local_memory_run(variant, out.data(), in.data(), n, rounds, stream));
      });
}

// 2^24 threads: about 0.5 ms in registers at 8 rounds on an H100. 2 rounds leaves more of the
// time to the fixed parts (input, fill and fold of the array, DRAM), 8 rounds to the array
// updates, where the three variants differ.
void axes(kw::benchmark_handle* b) {
  b->ArgsProduct({{std::int64_t{1} << 24}, {2, 8}})->ArgNames({"n", "rounds"});
}

}  // namespace

KW_GPU_BENCHMARK_VARIANTS("local_memory",
                          std::vector<kw::named<kk::local_memory_variant>>{
                              {"registers", kk::local_memory_variant::registers},
                              {"local_array", kk::local_memory_variant::local_array},
                              {"register_capped", kk::local_memory_variant::register_capped}},
                          run_variant)
    .apply(axes);
