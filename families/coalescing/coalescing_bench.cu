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

// Every benchmark of the family: n elements of T copied from a random input (in_count
// elements) to a poisoned output (out_count), checked by `check(in, out)` and timed.
template <typename T, typename Check, typename Copy>
void timed_copy(benchmark::State& state, std::size_t in_count, std::size_t out_count,
                std::size_t n, Check check, Copy copy) {
  auto& buffers = kw::set_up_once<kw::in_out_buffers<T>>(in_count, out_count, seed, T(-1), T(1));
  const T* in = buffers.in.data();
  T* out = buffers.out.data();

  kw::measure(state)
      .bytes_read(n * sizeof(T))
      .bytes_written(n * sizeof(T))
      .elements(n)
      .verify([&] { return check(in, out); })
      .run([&](cudaStream_t stream) { copy(out, in, stream); });
}

template <typename T>
void offset_copy(benchmark::State& state) {
  const int offset = static_cast<int>(state.range(0));
  const std::size_t n = buffer_bytes / sizeof(T) - max_offset;  // the same n for every offset
  timed_copy<T>(
      state, n + max_offset, n, n,
      [&](const T* in, const T* out) { return kw::compare_exact_on_device(in + offset, out, n); },
      [&](T* out, const T* in, cudaStream_t stream) {
        KW_CUDA_CHECK(kk::offset_copy(out, in, n, offset, block_size, stream));
      });
}

template <typename T>
void stride_copy(benchmark::State& state) {
  const int stride = static_cast<int>(state.range(0));
  const std::size_t footprint = buffer_bytes / sizeof(T);  // the same span for every stride
  const std::size_t n = (footprint - 1) / stride + 1;
  timed_copy<T>(
      state, footprint, footprint, n,
      [&](const T* in, const T* out) {
        return kw::compare_exact_on_device(in, out, n, static_cast<std::size_t>(stride));
      },
      [&](T* out, const T* in, cudaStream_t stream) {
        KW_CUDA_CHECK(kk::stride_copy(out, in, n, stride, block_size, stream));
      });
}

// The copy engines' and the best kernel's copies of the same buffer: the ceilings the offset
// and stride curves are read against.
template <typename Copy>
void reference_copy(benchmark::State& state, Copy copy) {
  const std::size_t n = buffer_bytes / sizeof(float);
  timed_copy<float>(
      state, n, n, n,
      [&](const float* in, const float* out) { return kw::compare_exact_on_device(in, out, n); },
      copy);
}

void memcpy_d2d(benchmark::State& state) {
  kw::mark_reference(state);
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
