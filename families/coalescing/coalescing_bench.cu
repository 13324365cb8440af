// Global-memory coalescing: copies with a misaligned start and with strided threads, against
// the two speed-of-light copies (cudaMemcpy and a 16-byte vectorized kernel) in the same run.
#include "coalescing.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cstdint>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// Far past the L2 of any current GPU (50 MB on the H100, 60 MB on the H200).
constexpr std::size_t buffer_bytes = std::size_t{256} << 20;
constexpr int block_size = 256;
constexpr int max_offset = 32;
constexpr int max_stride = 32;
constexpr std::uint64_t seed = 20261121;

template <typename T>
void offset_copy(benchmark::State& state) {
  const int offset = static_cast<int>(state.range(0));
  const std::size_t n = buffer_bytes / sizeof(T) - max_offset;  // the same n for every offset
  auto& buffers = kw::set_up_once<kw::in_out_buffers<T>>(n + max_offset, n, seed, T(-1), T(1));
  auto& in = buffers.in;
  auto& out = buffers.out;

  kw::measure(state)
      .bytes_read(n * sizeof(T))
      .bytes_written(n * sizeof(T))
      .elements(n)
      .verify([&] { return kw::compare_exact_on_device(in.data() + offset, out.data(), n); })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::offset_copy(out.data(), in.data(), n, offset, block_size, stream));
      });
}

template <typename T>
void stride_copy(benchmark::State& state) {
  const int stride = static_cast<int>(state.range(0));
  const std::size_t footprint = buffer_bytes / sizeof(T);  // the same span for every stride
  const std::size_t n = (footprint - 1) / stride + 1;
  auto& buffers = kw::set_up_once<kw::in_out_buffers<T>>(footprint, footprint, seed, T(-1), T(1));
  auto& in = buffers.in;
  auto& out = buffers.out;

  kw::measure(state)
      .bytes_read(n * sizeof(T))
      .bytes_written(n * sizeof(T))
      .elements(n)
      .verify([&] {
        return kw::compare_exact_on_device(in.data(), out.data(), n,
                                           static_cast<std::size_t>(stride));
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(kk::stride_copy(out.data(), in.data(), n, stride, block_size, stream));
      });
}

// The copy engines' and the best kernel's copies of the same buffer: the ceilings the offset
// and stride curves are read against.
template <typename Copy>
void reference_copy(benchmark::State& state, Copy copy) {
  const std::size_t n = buffer_bytes / sizeof(float);
  auto& buffers = kw::set_up_once<kw::in_out_buffers<float>>(n, n, seed, -1.0F, 1.0F);
  auto& in = buffers.in;
  auto& out = buffers.out;

  kw::measure(state)
      .bytes_read(buffer_bytes)
      .bytes_written(buffer_bytes)
      .elements(n)
      .verify([&] { return kw::compare_exact_on_device(in.data(), out.data(), n); })
      .run([&](cudaStream_t stream) { copy(out.data(), in.data(), stream); });
}

void memcpy_d2d(benchmark::State& state) {
  reference_copy(state, [](float* out, const float* in, cudaStream_t stream) {
    KW_CUDA_CHECK(cudaMemcpyAsync(out, in, buffer_bytes, cudaMemcpyDeviceToDevice, stream));
  });
}

void vectorized_copy(benchmark::State& state) {
  reference_copy(state, [](float* out, const float* in, cudaStream_t stream) {
    KW_CUDA_CHECK(kk::vectorized_copy(out, in, buffer_bytes, stream));
  });
}

}  // namespace

KW_GPU_BENCHMARK("coalescing/memcpy_d2d", memcpy_d2d);
KW_GPU_BENCHMARK("coalescing/vectorized_copy", vectorized_copy);
KW_GPU_BENCHMARK("coalescing/offset/float", offset_copy<float>)
    ->DenseRange(0, max_offset)->ArgName("offset");
KW_GPU_BENCHMARK("coalescing/offset/double", offset_copy<double>)
    ->DenseRange(0, max_offset)->ArgName("offset");
KW_GPU_BENCHMARK("coalescing/stride/float", stride_copy<float>)
    ->DenseRange(1, max_stride)->ArgName("stride");
KW_GPU_BENCHMARK("coalescing/stride/double", stride_copy<double>)
    ->DenseRange(1, max_stride)->ArgName("stride");
