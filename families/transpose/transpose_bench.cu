// Matrix transpose: every variant on the same float matrices, with the copies that move the
// same bytes (copy_rows: the ceiling; copy_columns: the floor) in the same run. The effective
// bandwidth (bytes_per_second) counts 2 x matrix bytes per launch: read once, written once.
#include "transpose.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cstdint>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

constexpr std::uint64_t seed = 20261121;

struct shape {
  int rows;
  int cols;
};

// 2048^2 (16 MiB, fits in L2), 8192^2 (256 MiB, the acceptance size) and a non-square one.
constexpr shape shapes[] = {{2048, 2048}, {8192, 8192}, {4096, 16384}};
// The 32 x 32 versus 32 x 8 block comparison is made at 8192^2 only: a small kernel costs
// seconds of wall time per instance (flush and sync per sample), and the lesson does not
// depend on the shape.
constexpr shape both_blocks_shape = {8192, 8192};

void transpose_benchmark(benchmark::State& state, kk::transpose_variant variant) {
  const auto rows = static_cast<int>(state.range(0));
  const auto cols = static_cast<int>(state.range(1));
  const int block_rows = kk::transpose_takes_block_rows(variant)
                             ? static_cast<int>(state.range(2))
                             : kk::transpose_best_block_rows;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (variant == kk::transpose_variant::copy_rows && rows == both_blocks_shape.rows &&
      cols == both_blocks_shape.cols && block_rows == 8) {
    kw::mark_reference(state);  // the copy with the same traffic, at the shape both blocks run
  }
  auto& buffers = kw::set_up_once<kw::in_out_buffers<float>>(n, n, seed, -1.0F, 1.0F);
  auto& in = buffers.in;
  auto& out = buffers.out;

  kw::measure(state)
      .bytes_read(n * sizeof(float))
      .bytes_written(n * sizeof(float))
      .elements(n)
      .verify([&] {  // exact: a transpose only moves values
        if (kk::transpose_is_copy(variant)) {
          return kw::compare_exact_on_device(in.data(), out.data(), n);
        }
        // On the GPU (the host copies and loop cost about 1 s a check at 8192^2): the expected
        // matrix from another, plainer transpose kernel. Both agree bit for bit on random data
        // only if both are right, and tests/kernels checks each against transpose_host.
        const kk::transpose_variant reference = variant == kk::transpose_variant::naive_rows
                                                    ? kk::transpose_variant::naive_columns
                                                    : kk::transpose_variant::naive_rows;
        kw::device_buffer<float> expected(n);
        KW_CUDA_CHECK(kk::transpose(reference, expected.data(), in.data(), rows, cols,
                                    kk::transpose_best_block_rows, nullptr));
        return kw::compare_exact_on_device(expected.data(), out.data(), n);
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::transpose(variant, out.data(), in.data(), rows, cols, block_rows,
                                    stream));
      });
}

void with_block_rows(kw::benchmark_handle* benchmark) {
  benchmark->ArgNames({"rows", "cols", "block_rows"});
  for (const shape s : shapes) {
    if (s.rows == both_blocks_shape.rows && s.cols == both_blocks_shape.cols) {
      benchmark->Args({s.rows, s.cols, 32});
    }
    benchmark->Args({s.rows, s.cols, 8});
  }
}

void without_block_rows(kw::benchmark_handle* benchmark) {
  benchmark->ArgNames({"rows", "cols"});
  for (const shape s : shapes) {
    benchmark->Args({s.rows, s.cols});
  }
}

}  // namespace

// transpose/<variant>/rows:R/cols:C[/block_rows:B], in the order of kk::transpose_variants.
KW_GPU_BENCHMARK_VARIANTS("transpose",
                          kw::named_values(kk::transpose_variants, kk::transpose_variant_name),
                          transpose_benchmark)
    .apply([](kw::benchmark_handle* benchmark, kk::transpose_variant variant) {
      if (kk::transpose_takes_block_rows(variant)) {
        with_block_rows(benchmark);
      } else {
        without_block_rows(benchmark);
      }
    });
