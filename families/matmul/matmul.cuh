#pragma once
// Matrix multiply C = A·B, row-major throughout.
//
// The CUDA C Best Practices Guide's "Shared Memory in Matrix Multiplication (C=AB)": A is m×w,
// B is w×n with w = matmul_tile_dim = 32, one 32×32 thread block per 32×32 tile of C, and
// three steps: simple (everything from global memory), coalesced A (the A tile staged in
// shared memory) and shared A and B (both tiles staged). Plus sgemm_tiled, a general m×k by
// k×n SGEMM with shared-memory tiling and register blocking, the one to read against cuBLAS.
// Launchers return the launch's cudaError_t; they never throw and never print.

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <limits>

namespace kernelwatch::kernels {

/// w: the inner dimension of the guide's kernels, and the side of their tiles and blocks. It
/// equals the warp size, so one row of a block's tile is one warp (coalesced_multiply relies
/// on that for its warp-level barrier).
inline constexpr int matmul_tile_dim = 32;

/// The guide's simpleMultiply: each thread reads a row of A and a column of B from global
/// memory. A warp's loads of A all hit one address, so each 32-byte sector fetched for A
/// delivers 4 useful bytes; B's loads are coalesced.
template <typename T>
__global__ void simple_multiply_kernel(T* __restrict__ c, const T* __restrict__ a,
                                       const T* __restrict__ b, int m, int n) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    const T* a_row = a + static_cast<std::size_t>(row) * matmul_tile_dim;
    T sum = 0;
    for (int i = 0; i < matmul_tile_dim; ++i) {
      sum += a_row[i] * b[static_cast<std::size_t>(i) * n + col];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
  }
}

/// The guide's coalescedMultiply: each warp reads its row of the A tile once, coalesced, into
/// shared memory. Only the warp that wrote a row reads it, so __syncwarp() is the barrier.
template <typename T>
__global__ void coalesced_multiply_kernel(T* __restrict__ c, const T* __restrict__ a,
                                          const T* __restrict__ b, int m, int n) {
  __shared__ T a_tile[matmul_tile_dim][matmul_tile_dim];
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the last column still load: their element of A serves the whole row.
  a_tile[threadIdx.y][threadIdx.x] =
      row < m ? a[static_cast<std::size_t>(row) * matmul_tile_dim + threadIdx.x] : T(0);
  __syncwarp();
  if (row < m && col < n) {
    T sum = 0;
    for (int i = 0; i < matmul_tile_dim; ++i) {
      sum += a_tile[threadIdx.y][i] * b[static_cast<std::size_t>(i) * n + col];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
  }
}

/// The guide's sharedABMultiply: the B tile is staged too, so every global element is read
/// once per block. Warps read rows of B that other warps loaded: a block barrier is needed.
template <typename T>
__global__ void shared_ab_multiply_kernel(T* __restrict__ c, const T* __restrict__ a,
                                          const T* __restrict__ b, int m, int n) {
  __shared__ T a_tile[matmul_tile_dim][matmul_tile_dim];
  __shared__ T b_tile[matmul_tile_dim][matmul_tile_dim];
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  a_tile[threadIdx.y][threadIdx.x] =
      row < m ? a[static_cast<std::size_t>(row) * matmul_tile_dim + threadIdx.x] : T(0);
  b_tile[threadIdx.y][threadIdx.x] =
      col < n ? b[static_cast<std::size_t>(threadIdx.y) * n + col] : T(0);
  __syncthreads();
  if (row < m && col < n) {
    T sum = 0;
    for (int i = 0; i < matmul_tile_dim; ++i) {
      sum += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
    }
    c[static_cast<std::size_t>(row) * n + col] = sum;
  }
}

/// C (m×n) = A (m×w) · B (w×n), w = matmul_tile_dim, with 32×32-thread blocks. Any m, n ≥ 0;
/// cudaErrorInvalidValue for negative sizes, m beyond the grid's y limit (65535 tiles) or n
/// within a tile of INT_MAX.
template <typename T>
cudaError_t simple_multiply(T* c, const T* a, const T* b, int m, int n, cudaStream_t stream);
template <typename T>
cudaError_t coalesced_multiply(T* c, const T* a, const T* b, int m, int n, cudaStream_t stream);
template <typename T>
cudaError_t shared_ab_multiply(T* c, const T* a, const T* b, int m, int n, cudaStream_t stream);

/// C (m×n) = A (m×k) · B (k×n), FP32, contiguous row-major. Any m, n, k ≥ 0 (k = 0 writes
/// zeros); cudaErrorInvalidValue for negative sizes, m beyond the grid's y limit, or n or k
/// within a tile of INT_MAX. 128×128 block tiles, 8×8 outputs per thread, double-buffered
/// shared memory. 16-byte loads and stores when k and n are multiples of 4 and all three
/// pointers are 16-byte aligned, scalar ones otherwise; each entry is accumulated in k order,
/// as the naive loop does.
cudaError_t sgemm_tiled(float* c, const float* a, const float* b, int m, int n, int k,
                        cudaStream_t stream);

/// Σ_p a[row·k + p] · b[p·n + col] in double: the reference for entry (row, col) of a
/// row-major A (·×k) times B (k×n).
template <typename T>
double matmul_reference_entry(const T* a, const T* b, int n, int k, int row, int col) {
  double sum = 0.0;
  const std::size_t a_row = static_cast<std::size_t>(row) * k;
  for (int p = 0; p < k; ++p) {
    sum += static_cast<double>(a[a_row + p]) *
           static_cast<double>(b[static_cast<std::size_t>(p) * n + col]);
  }
  return sum;
}

/// Allowed |computed − exact| for an entry of C = A·B accumulated in T over k terms with
/// |a| ≤ max_abs_a, |b| ≤ max_abs_b: 1000·ε·√k·max|a|·max|b| (≈ 1.2e-4·√k in FP32 for inputs
/// in [-1, 1)). The rounding error of a sum of k random-signed products is a random walk of
/// standard deviation ≈ 0.07·u·k·max|a|·max|b| (u = ε/2): in FP32 at k = 4096 that is 1.7e-5,
/// and the worst of 16M entries ≈ 1e-4, against 7.6e-3 allowed, whatever the summation order;
/// one missing or misplaced product (≈ 0.25 on average for inputs in [-1, 1)) fails with near
/// certainty over a few hundred entries.
template <typename T>
double matmul_tolerance(int k, double max_abs_a, double max_abs_b) {
  return 1000.0 * static_cast<double>(std::numeric_limits<T>::epsilon()) *
         std::sqrt(static_cast<double>(k)) * max_abs_a * max_abs_b;
}

}  // namespace kernelwatch::kernels
