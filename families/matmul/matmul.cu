#include "matmul.cuh"

#include <cstdint>
#include <limits>

namespace kernelwatch::kernels {
namespace {

constexpr int max_grid_y = 65535;

__host__ __device__ constexpr int tiles_for(int extent, int tile) {
  return (extent + tile - 1) / tile;
}

// Kernels index up to one tile past an extent in int: that must not overflow.
constexpr bool valid_extent(int extent, int tile) {
  return extent >= 0 && extent <= std::numeric_limits<int>::max() - tile;
}

// sgemm_tiled's shape. Each block computes a 128×128 tile of C with 256 threads, each thread
// an 8×8 micro-tile held in registers: per k step a thread reads 8 values of A and 8 of B from
// shared memory (four 16-byte loads) and does 64 FMAs, so shared-memory bandwidth stops being
// the limit that it is for one output per thread.
constexpr int sgemm_bm = 128;  // rows of C per block
constexpr int sgemm_bn = 128;  // columns of C per block
constexpr int sgemm_bk = 8;    // k per shared-memory stage
constexpr int sgemm_tm = 8;    // rows of C per thread
constexpr int sgemm_tn = 8;    // columns of C per thread
constexpr int sgemm_threads = (sgemm_bm / sgemm_tm) * (sgemm_bn / sgemm_tn);
// A is stored transposed (k-major) so a thread's 8 rows are contiguous; 4 floats of padding
// per k row put the two k-groups of one warp's transposing stores in different banks.
constexpr int sgemm_a_stride = sgemm_bm + 4;

static_assert(sgemm_threads == 256, "the load mappings below assume 256 threads");
static_assert(sgemm_bm * sgemm_bk == 4 * sgemm_threads, "one float4 of A per thread per stage");
static_assert(sgemm_bn * sgemm_bk == 4 * sgemm_threads, "one float4 of B per thread per stage");
static_assert(sgemm_tm == 8 && sgemm_tn == 8, "the micro-tile is two 4-wide halves each way");

// A thread's rows are {4·ty .. 4·ty+3} and {64 + 4·ty .. 64 + 4·ty+3} (columns likewise with
// tx): split in halves 64 apart, the 16-byte shared loads of 8 neighbouring threads cover 128
// consecutive bytes, free of bank conflicts, where 8 contiguous values per thread would not be.
constexpr int sgemm_half = sgemm_bm / 2;
static_assert(sgemm_bm == sgemm_bn, "one half offset for rows and columns");

// vectorized: k % 4 == 0, n % 4 == 0 and 16-byte aligned pointers, so that every 4-group of a
// row is either wholly inside the matrix or wholly outside it and can move as one float4.
template <bool vectorized>
__global__ void __launch_bounds__(sgemm_threads, 2)
    sgemm_tiled_kernel(float* __restrict__ c, const float* __restrict__ a,
                       const float* __restrict__ b, int m, int n, int k) {
  __shared__ __align__(16) float a_tile[2][sgemm_bk][sgemm_a_stride];
  __shared__ __align__(16) float b_tile[2][sgemm_bk][sgemm_bn];

  const int tid = static_cast<int>(threadIdx.x);
  const int block_row = static_cast<int>(blockIdx.y) * sgemm_bm;
  const int block_col = static_cast<int>(blockIdx.x) * sgemm_bn;

  // Global → shared: each thread moves 4 consecutive k of one row of A (two threads per row)
  // and 4 consecutive columns of one k row of B (a warp per row: 512 contiguous bytes).
  const int a_load_row = tid / 2;
  const int a_load_k = (tid % 2) * 4;
  const int b_load_k = tid / 32;
  const int b_load_col = (tid % 32) * 4;
  const int a_row = block_row + a_load_row;
  const int b_col = block_col + b_load_col;

  float a_next[4];
  float b_next[4];
  // Out-of-range elements load as zero, so edge tiles need no special case in the FMA loop.
  auto load_stage = [&](int k0) {
    const int a_k = k0 + a_load_k;
    const int b_k = k0 + b_load_k;
    if constexpr (vectorized) {
      float4 av = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
      if (a_row < m && a_k < k) {
        av = *reinterpret_cast<const float4*>(a + static_cast<std::size_t>(a_row) * k + a_k);
      }
      float4 bv = make_float4(0.0F, 0.0F, 0.0F, 0.0F);
      if (b_k < k && b_col < n) {
        bv = *reinterpret_cast<const float4*>(b + static_cast<std::size_t>(b_k) * n + b_col);
      }
      a_next[0] = av.x; a_next[1] = av.y; a_next[2] = av.z; a_next[3] = av.w;
      b_next[0] = bv.x; b_next[1] = bv.y; b_next[2] = bv.z; b_next[3] = bv.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        a_next[j] = (a_row < m && a_k + j < k)
                        ? a[static_cast<std::size_t>(a_row) * k + a_k + j] : 0.0F;
        b_next[j] = (b_k < k && b_col + j < n)
                        ? b[static_cast<std::size_t>(b_k) * n + b_col + j] : 0.0F;
      }
    }
  };
  auto store_stage = [&](int buffer) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      a_tile[buffer][a_load_k + j][a_load_row] = a_next[j];
    }
    *reinterpret_cast<float4*>(&b_tile[buffer][b_load_k][b_load_col]) =
        make_float4(b_next[0], b_next[1], b_next[2], b_next[3]);
  };

  // Compute mapping: 16×16 threads, a warp spans 2 thread rows × 16 thread columns.
  const int ty = tid / (sgemm_bn / sgemm_tn);
  const int tx = tid % (sgemm_bn / sgemm_tn);

  float acc[sgemm_tm][sgemm_tn] = {};
  const int stages = tiles_for(k, sgemm_bk);
  if (stages > 0) {
    load_stage(0);
    store_stage(0);
    __syncthreads();
  }
  // One barrier per stage: the loads for stage s + 1 are in flight during the FMAs of stage s
  // and land in the other buffer, which every thread finished reading before the barrier
  // that ended stage s - 1.
  for (int s = 0; s < stages; ++s) {
    const int buffer = s % 2;
    const bool has_next = s + 1 < stages;  // uniform across the block
    if (has_next) {
      load_stage((s + 1) * sgemm_bk);
    }
#pragma unroll
    for (int kk = 0; kk < sgemm_bk; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&a_tile[buffer][kk][4 * ty]);
      const float4 a_hi =
          *reinterpret_cast<const float4*>(&a_tile[buffer][kk][sgemm_half + 4 * ty]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&b_tile[buffer][kk][4 * tx]);
      const float4 b_hi =
          *reinterpret_cast<const float4*>(&b_tile[buffer][kk][sgemm_half + 4 * tx]);
      const float a_frag[sgemm_tm] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w,
                                      a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float b_frag[sgemm_tn] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w,
                                      b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < sgemm_tm; ++i) {
#pragma unroll
        for (int j = 0; j < sgemm_tn; ++j) {
          acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
        }
      }
    }
    if (has_next) {
      store_stage(1 - buffer);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < sgemm_tm; ++i) {
    const int row = block_row + (i < 4 ? 4 * ty + i : sgemm_half + 4 * ty + (i - 4));
    if (row >= m) {
      continue;
    }
    float* c_row = c + static_cast<std::size_t>(row) * n;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = block_col + half * sgemm_half + 4 * tx;
      const float* v = &acc[i][4 * half];
      if constexpr (vectorized) {
        if (col < n) {
          *reinterpret_cast<float4*>(c_row + col) = make_float4(v[0], v[1], v[2], v[3]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j < n) {
            c_row[col + j] = v[j];
          }
        }
      }
    }
  }
}

bool aligned_16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The three guide kernels share their launch: one 32×32 block per 32×32 tile of C.
template <typename T, typename Kernel>
cudaError_t launch_guide_kernel(Kernel kernel, T* c, const T* a, const T* b, int m, int n,
                                cudaStream_t stream) {
  if (!valid_extent(m, matmul_tile_dim) || !valid_extent(n, matmul_tile_dim) ||
      tiles_for(m, matmul_tile_dim) > max_grid_y) {
    return cudaErrorInvalidValue;
  }
  if (m == 0 || n == 0) {
    return cudaSuccess;
  }
  const dim3 block(matmul_tile_dim, matmul_tile_dim);
  const dim3 grid(static_cast<unsigned int>(tiles_for(n, matmul_tile_dim)),
                  static_cast<unsigned int>(tiles_for(m, matmul_tile_dim)));
  kernel<<<grid, block, 0, stream>>>(c, a, b, m, n);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
cudaError_t simple_multiply(T* c, const T* a, const T* b, int m, int n, cudaStream_t stream) {
  return launch_guide_kernel(simple_multiply_kernel<T>, c, a, b, m, n, stream);
}

template <typename T>
cudaError_t coalesced_multiply(T* c, const T* a, const T* b, int m, int n,
                               cudaStream_t stream) {
  return launch_guide_kernel(coalesced_multiply_kernel<T>, c, a, b, m, n, stream);
}

template <typename T>
cudaError_t shared_ab_multiply(T* c, const T* a, const T* b, int m, int n,
                               cudaStream_t stream) {
  return launch_guide_kernel(shared_ab_multiply_kernel<T>, c, a, b, m, n, stream);
}

cudaError_t sgemm_tiled(float* c, const float* a, const float* b, int m, int n, int k,
                        cudaStream_t stream) {
  if (!valid_extent(m, sgemm_bm) || !valid_extent(n, sgemm_bn) || !valid_extent(k, sgemm_bk) ||
      tiles_for(m, sgemm_bm) > max_grid_y) {
    return cudaErrorInvalidValue;
  }
  if (m == 0 || n == 0) {
    return cudaSuccess;
  }
  const dim3 grid(static_cast<unsigned int>(tiles_for(n, sgemm_bn)),
                  static_cast<unsigned int>(tiles_for(m, sgemm_bm)));
  if (k % 4 == 0 && n % 4 == 0 && aligned_16(a) && aligned_16(b) && aligned_16(c)) {
    sgemm_tiled_kernel<true><<<grid, sgemm_threads, 0, stream>>>(c, a, b, m, n, k);
  } else {
    sgemm_tiled_kernel<false><<<grid, sgemm_threads, 0, stream>>>(c, a, b, m, n, k);
  }
  return cudaGetLastError();
}

#define KW_INSTANTIATE_GUIDE_MULTIPLY(T)                                                   \
  template cudaError_t simple_multiply<T>(T*, const T*, const T*, int, int, cudaStream_t);  \
  template cudaError_t coalesced_multiply<T>(T*, const T*, const T*, int, int,              \
                                             cudaStream_t);                                 \
  template cudaError_t shared_ab_multiply<T>(T*, const T*, const T*, int, int, cudaStream_t);

KW_INSTANTIATE_GUIDE_MULTIPLY(float)
KW_INSTANTIATE_GUIDE_MULTIPLY(double)
#undef KW_INSTANTIATE_GUIDE_MULTIPLY

}  // namespace kernelwatch::kernels
