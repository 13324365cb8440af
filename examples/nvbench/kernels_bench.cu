// Three memory-bound kernels as nvbench benchmarks, each over an axis of sizes: a vectorised
// copy, a tiled matrix transpose through shared memory, and a block-wise sum. The example of
// docs/ci.md, "Gating an nvbench project".
//
// EXAMPLE_SLOW (CMake: -DEXAMPLE_SLOW=ON) is the regression the gate must catch, a real code
// change to the transpose alone: its shared-memory tile loses the padding column, so the
// column-wise reads of the second phase fall into one bank (a 32-way bank conflict per warp).
// copy and reduce compile to the same code either way.
#include <nvbench/nvbench.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace {

#ifdef EXAMPLE_SLOW
constexpr int kTilePad = 0;  // 32 x 32 floats: a column lies in one bank
#else
constexpr int kTilePad = 1;  // 32 x 33 floats: a column spreads over all 32 banks
#endif
constexpr int kTile = 32;
constexpr int kTileRows = 8;  // a block of 32 x 8 threads moves a 32 x 32 tile

// out[i] = in[i], four floats per thread (n a multiple of 4).
__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                            std::size_t n4) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n4) {
    out[i] = in[i];
  }
}

// out = in^T for an n x n matrix (n a multiple of 32): coalesced reads and writes, the tile
// turned around in shared memory.
__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out,
                                 int n) {
  __shared__ float tile[kTile][kTile + kTilePad];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kTileRows) {
    tile[threadIdx.y + j][threadIdx.x] = in[static_cast<std::size_t>(y + j) * n + x];
  }
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kTileRows) {
    out[static_cast<std::size_t>(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

// *sum += the sum of in[0..n): a grid-stride loop per thread, shuffles per warp, one atomic
// per block.
__global__ void reduce_kernel(const float* __restrict__ in, float* __restrict__ sum,
                              std::size_t n) {
  __shared__ float warp_sums[32];
  float value = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    value += in[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) {
    warp_sums[warp] = value;
  }
  __syncthreads();
  if (warp == 0) {
    value = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if (lane == 0) {
      atomicAdd(sum, value);
    }
  }
}

// Device buffers of one state, freed when it ends.
struct Buffer {
  explicit Buffer(std::size_t bytes) {
    NVBENCH_CUDA_CALL(cudaMalloc(&data, bytes));
    NVBENCH_CUDA_CALL(cudaMemset(data, 0, bytes));
  }
  ~Buffer() { cudaFree(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* get() const { return static_cast<float*>(data); }
  void* data = nullptr;
};

int sm_count() {
  int device = 0;
  int sms = 0;
  NVBENCH_CUDA_CALL(cudaGetDevice(&device));
  NVBENCH_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

void copy_bench(nvbench::state& state) {
  const auto n = static_cast<std::size_t>(state.get_int64("Elements"));
  Buffer in(n * sizeof(float));
  Buffer out(n * sizeof(float));
  state.add_element_count(n);
  state.add_global_memory_reads<float>(n);
  state.add_global_memory_writes<float>(n);
  const std::size_t n4 = n / 4;
  const auto blocks = static_cast<unsigned>((n4 + 255) / 256);
  state.exec([&](nvbench::launch& launch) {
    copy_kernel<<<blocks, 256, 0, launch.get_stream()>>>(
        reinterpret_cast<const float4*>(in.get()), reinterpret_cast<float4*>(out.get()), n4);
  });
}
NVBENCH_BENCH(copy_bench)
    .set_name("copy")
    .add_int64_power_of_two_axis("Elements", {24, 26});

void transpose_bench(nvbench::state& state) {
  const auto n = static_cast<int>(state.get_int64("Size"));
  const std::size_t elements = static_cast<std::size_t>(n) * n;
  Buffer in(elements * sizeof(float));
  Buffer out(elements * sizeof(float));
  state.add_element_count(elements);
  state.add_global_memory_reads<float>(elements);
  state.add_global_memory_writes<float>(elements);
  const dim3 grid(n / kTile, n / kTile);
  const dim3 block(kTile, kTileRows);
  state.exec([&](nvbench::launch& launch) {
    transpose_kernel<<<grid, block, 0, launch.get_stream()>>>(in.get(), out.get(), n);
  });
}
NVBENCH_BENCH(transpose_bench)
    .set_name("transpose")
    .add_int64_axis("Size", {4096, 8192});

void reduce_bench(nvbench::state& state) {
  const auto n = static_cast<std::size_t>(state.get_int64("Elements"));
  Buffer in(n * sizeof(float));
  Buffer sum(sizeof(float));
  state.add_element_count(n);
  state.add_global_memory_reads<float>(n);
  state.add_global_memory_writes<float>(1);
  const auto blocks = static_cast<unsigned>(sm_count() * 8);
  state.exec([&](nvbench::launch& launch) {
    reduce_kernel<<<blocks, 256, 0, launch.get_stream()>>>(in.get(), sum.get(), n);
  });
}
NVBENCH_BENCH(reduce_bench)
    .set_name("reduce")
    .add_int64_power_of_two_axis("Elements", {24, 26});
