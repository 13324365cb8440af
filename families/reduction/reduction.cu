#include "reduction.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <climits>
#include <cstdint>

namespace kernelwatch::kernels {
namespace {

constexpr int block_size = reduction_block_size;
constexpr int unroll = reduction_unroll;

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

bool aligned16(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

// Values the multi-pass variants keep between passes: ceil(n / B) partials from the first pass,
// ceil of that / B from the second, ..., up to (not including) the single final value.
std::size_t multi_pass_partials(std::size_t n) {
  std::size_t total = 0;
  for (std::size_t m = ceil_div(n, block_size); m > 1; m = ceil_div(m, block_size)) {
    total += m;
  }
  return total;
}

bool is_multi_pass(reduction_variant variant) {
  return variant == reduction_variant::naive || variant == reduction_variant::interleaved ||
         variant == reduction_variant::sequential || variant == reduction_variant::warp_shuffle;
}

template <typename Input>
cudaError_t launch_block_pass(reduction_variant variant, typename Input::value_type* partials,
                              Input input, std::size_t n, cudaStream_t stream) {
  const std::size_t blocks = ceil_div(n, block_size);  // one term per thread
  if (blocks > static_cast<std::size_t>(INT_MAX)) {
    return cudaErrorInvalidValue;
  }
  const auto grid = static_cast<unsigned int>(blocks);
  switch (variant) {
    case reduction_variant::naive:
      block_reduce_kernel<reduction_variant::naive, block_size>
          <<<grid, block_size, 0, stream>>>(partials, input, n);
      break;
    case reduction_variant::interleaved:
      block_reduce_kernel<reduction_variant::interleaved, block_size>
          <<<grid, block_size, 0, stream>>>(partials, input, n);
      break;
    case reduction_variant::sequential:
      block_reduce_kernel<reduction_variant::sequential, block_size>
          <<<grid, block_size, 0, stream>>>(partials, input, n);
      break;
    case reduction_variant::warp_shuffle:
      block_reduce_kernel<reduction_variant::warp_shuffle, block_size>
          <<<grid, block_size, 0, stream>>>(partials, input, n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// Pass 1 reduces the terms to ceil(n / B) partials, each later pass the previous partials, each
// pass into a fresh stretch of the workspace, until one block writes *result.
template <typename Input>
cudaError_t multi_pass(reduction_variant variant, typename Input::value_type* result,
                       Input input, std::size_t n, void* workspace, cudaStream_t stream) {
  using T = typename Input::value_type;
  if (reinterpret_cast<std::uintptr_t>(workspace) % alignof(T) != 0) {
    return cudaErrorMisalignedAddress;
  }
  std::size_t blocks = ceil_div(n, block_size);
  T* out = blocks == 1 ? result : static_cast<T*>(workspace);
  if (const cudaError_t status = launch_block_pass(variant, out, input, n, stream);
      status != cudaSuccess) {
    return status;
  }
  while (blocks > 1) {
    const T* in = out;
    const std::size_t m = blocks;
    blocks = ceil_div(m, block_size);
    out = blocks == 1 ? result : out + m;
    if (const cudaError_t status = launch_block_pass(variant, out, elements_of<T>{in}, m, stream);
        status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

// Enough resident blocks of `kernel` to fill every SM, once per kernel and process.
struct grid_query {
  cudaError_t status = cudaSuccess;
  unsigned int blocks = 0;
};

template <typename Kernel>
grid_query resident_grid(Kernel kernel) {
  grid_query query;
  int device = 0;
  int sms = 0;
  int blocks_per_sm = 0;
  if ((query.status = cudaGetDevice(&device)) != cudaSuccess ||
      (query.status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) !=
          cudaSuccess ||
      (query.status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel,
                                                                     block_size, 0)) !=
          cudaSuccess) {
    return query;
  }
  query.blocks = static_cast<unsigned int>(sms * blocks_per_sm);
  return query;
}

// The grid of the vectorized and streaming kernels: every SM full, but no more blocks than
// there are vectors to give them (at least one, for the trailing terms).
template <auto Kernel>
cudaError_t vector_grid(std::size_t vectors, unsigned int* grid) {
  static const grid_query resident = resident_grid(Kernel);
  if (resident.status != cudaSuccess) {
    return resident.status;
  }
  const std::size_t wanted = ceil_div(vectors, block_size);
  *grid = static_cast<unsigned int>(
      wanted < resident.blocks ? (wanted > 0 ? wanted : 1) : resident.blocks);
  return cudaSuccess;
}

template <typename Input>
cudaError_t vectorized(typename Input::value_type* result, Input input, std::size_t n,
                       cudaStream_t stream) {
  using T = typename Input::value_type;
  constexpr auto kernel = vectorized_reduce_kernel<block_size, unroll, Input>;
  unsigned int grid = 0;
  if (const cudaError_t status = vector_grid<kernel>(n / Input::width, &grid);
      status != cudaSuccess) {
    return status;
  }
  // The blocks add into *result, so each call zeroes it first, on the same stream.
  if (const cudaError_t status = cudaMemsetAsync(result, 0, sizeof(T), stream);
      status != cudaSuccess) {
    return status;
  }
  kernel<<<grid, block_size, 0, stream>>>(result, input, n);
  return cudaGetLastError();
}

template <typename T>
bool vectors_aligned(const elements_of<T>& input) {
  return aligned16(input.a);
}
template <typename T>
bool vectors_aligned(const products_of<T>& input) {
  return aligned16(input.a) && aligned16(input.b);
}

template <typename T>
struct dot_term {
  const T* a;
  const T* b;
  __host__ __device__ T operator()(std::size_t i) const { return a[i] * b[i]; }
};

// CUB: with temp == nullptr the same call only sizes the temporary storage.
template <typename T>
cudaError_t cub_reduce(void* temp, std::size_t& temp_bytes, T* result,
                       const elements_of<T>& input, std::size_t n, cudaStream_t stream) {
  return cub::DeviceReduce::Sum(temp, temp_bytes, input.a, result, n, stream);
}

template <typename T>
cudaError_t cub_reduce(void* temp, std::size_t& temp_bytes, T* result,
                       const products_of<T>& input, std::size_t n, cudaStream_t stream) {
  return cub::DeviceReduce::TransformReduce(
      temp, temp_bytes, thrust::counting_iterator<std::size_t>(0), result, n,
      ::cuda::std::plus<>{}, dot_term<T>{input.a, input.b}, T(0), stream);
}

template <typename Input>
cudaError_t workspace_bytes_for(reduction_variant variant, std::size_t n, std::size_t* bytes) {
  using T = typename Input::value_type;
  *bytes = 0;
  if (n == 0 || variant == reduction_variant::vectorized) {
    return cudaSuccess;
  }
  if (is_multi_pass(variant)) {
    *bytes = multi_pass_partials(n) * sizeof(T);
    return cudaSuccess;
  }
  if (variant == reduction_variant::cub) {
    return cub_reduce<T>(nullptr, *bytes, nullptr, Input{}, n, nullptr);
  }
  return cudaErrorInvalidValue;
}

template <typename Input>
cudaError_t reduce(reduction_variant variant, typename Input::value_type* result,
                   const Input& input, std::size_t n, void* workspace,
                   std::size_t workspace_bytes, cudaStream_t stream) {
  using T = typename Input::value_type;
  if (n == 0) {
    if (const cudaError_t status = cudaMemsetAsync(result, 0, sizeof(T), stream);
        status != cudaSuccess) {
      return status;
    }
    return cudaGetLastError();
  }
  if (is_multi_pass(variant)) {
    if (workspace_bytes < multi_pass_partials(n) * sizeof(T)) {
      return cudaErrorInvalidValue;
    }
    return multi_pass(variant, result, input, n, workspace, stream);
  }
  if (variant == reduction_variant::vectorized) {
    if (!vectors_aligned(input)) {
      return cudaErrorMisalignedAddress;
    }
    return vectorized(result, input, n, stream);
  }
  if (variant == reduction_variant::cub) {
    // A null workspace would turn CUB's call into a size query that reduces nothing; a small
    // one CUB refuses itself (cudaErrorInvalidValue).
    if (workspace == nullptr) {
      return cudaErrorInvalidValue;
    }
    const cudaError_t status = cub_reduce(workspace, workspace_bytes, result, input, n, stream);
    return status != cudaSuccess ? status : cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

}  // namespace

template <typename T>
cudaError_t reduce_sum_workspace_bytes(reduction_variant variant, std::size_t n,
                                       std::size_t* bytes) {
  return workspace_bytes_for<elements_of<T>>(variant, n, bytes);
}

template <typename T>
cudaError_t reduce_dot_workspace_bytes(reduction_variant variant, std::size_t n,
                                       std::size_t* bytes) {
  return workspace_bytes_for<products_of<T>>(variant, n, bytes);
}

template <typename T>
cudaError_t reduce_sum(reduction_variant variant, T* result, const T* in, std::size_t n,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  return reduce(variant, result, elements_of<T>{in}, n, workspace, workspace_bytes, stream);
}

template <typename T>
cudaError_t reduce_dot(reduction_variant variant, T* result, const T* a, const T* b,
                       std::size_t n, void* workspace, std::size_t workspace_bytes,
                       cudaStream_t stream) {
  return reduce(variant, result, products_of<T>{a, b}, n, workspace, workspace_bytes, stream);
}

template <typename T>
cudaError_t streaming_read(const T* a, const T* b, std::size_t n, T sentinel,
                           unsigned long long* first_match, cudaStream_t stream) {
  const auto launch = [&](auto input) {
    using Input = decltype(input);
    if (!vectors_aligned(input)) {
      return cudaErrorMisalignedAddress;
    }
    if (n == 0) {
      return cudaSuccess;
    }
    constexpr auto kernel = streaming_read_kernel<block_size, unroll, Input>;
    unsigned int grid = 0;
    if (const cudaError_t status = vector_grid<kernel>(n / Input::width, &grid);
        status != cudaSuccess) {
      return status;
    }
    kernel<<<grid, block_size, 0, stream>>>(input, n, sentinel, first_match);
    return cudaGetLastError();
  };
  return b == nullptr ? launch(elements_of<T>{a}) : launch(products_of<T>{a, b});
}

#define KW_REDUCTION_INSTANTIATE(T)                                                             \
  template cudaError_t reduce_sum_workspace_bytes<T>(reduction_variant, std::size_t,           \
                                                     std::size_t*);                             \
  template cudaError_t reduce_dot_workspace_bytes<T>(reduction_variant, std::size_t,           \
                                                     std::size_t*);                             \
  template cudaError_t reduce_sum<T>(reduction_variant, T*, const T*, std::size_t, void*,      \
                                     std::size_t, cudaStream_t);                                \
  template cudaError_t reduce_dot<T>(reduction_variant, T*, const T*, const T*, std::size_t,   \
                                     void*, std::size_t, cudaStream_t);                         \
  template cudaError_t streaming_read<T>(const T*, const T*, std::size_t, T,                   \
                                         unsigned long long*, cudaStream_t);

KW_REDUCTION_INSTANTIATE(float)
KW_REDUCTION_INSTANTIATE(double)

#undef KW_REDUCTION_INSTANTIATE

}  // namespace kernelwatch::kernels
