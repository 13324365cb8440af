#pragma once
// Matrix transpose (NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++", the CUDA SDK
// transpose sample, "Professional CUDA C Programming" ch. 4-5): the same permutation with the
// reads or the writes coalesced, through a shared-memory tile with and without bank conflicts,
// in diagonal block order, several elements per thread, and the copies that move the same bytes
// without transposing (copy by rows: the ceiling; copy by columns: the floor).
//
// `in` is rows x cols, row-major. A transpose writes `out` as cols x rows, row-major
// (out[c * rows + r] = in[r * cols + c]); a copy writes out = in. Every kernel checks bounds,
// so any shape works; indices into the matrices are 64-bit.
// Launchers return the launch's cudaError_t; the kernels are usable directly from device code.

#include <cuda_runtime.h>

#include <cstddef>

namespace kernelwatch::kernels {

/// Side of the square tile a block of 32 x block_rows threads covers; each thread handles
/// transpose_tile_dim / block_rows elements of it (1 with 32 x 32 blocks, 4 with 32 x 8).
inline constexpr int transpose_tile_dim = 32;
/// The unrolled variants' tiles are this many tiles wide: 4x the elements per thread.
inline constexpr int transpose_unroll = 4;
/// The best variant: a padded 64 x 64 tile for a 32 x 8 block, 16 elements per thread.
inline constexpr int transpose_best_tile_dim = 64;
inline constexpr int transpose_best_block_rows = 8;

enum class transpose_variant {
  copy_rows,         // reference: rows read and written coalesced, no transpose
  copy_columns,      // reference: read and written down columns (both strided), no transpose
  naive_rows,        // reads coalesced (along rows), writes strided
  naive_columns,     // reads strided (down columns), writes coalesced
  tiled,             // shared-memory tile: both coalesced, 32-way bank conflicts
  tiled_padded,      // the tile padded by one column: no bank conflicts
  diagonal_rows,     // naive_rows with the blocks in diagonal order
  diagonal_columns,  // naive_columns with the blocks in diagonal order
  unrolled_rows,     // naive_rows, transpose_unroll tiles per block
  unrolled_columns,  // naive_columns, transpose_unroll tiles per block
  best,              // padded 64 x 64 tile, 16 elements per thread
};

inline constexpr transpose_variant transpose_variants[] = {
    transpose_variant::copy_rows,        transpose_variant::copy_columns,
    transpose_variant::naive_rows,       transpose_variant::naive_columns,
    transpose_variant::tiled,            transpose_variant::tiled_padded,
    transpose_variant::diagonal_rows,    transpose_variant::diagonal_columns,
    transpose_variant::unrolled_rows,    transpose_variant::unrolled_columns,
    transpose_variant::best,
};

/// The variant's name in benchmark names: "tiled_padded".
constexpr const char* transpose_variant_name(transpose_variant variant) {
  switch (variant) {
    case transpose_variant::copy_rows: return "copy_rows";
    case transpose_variant::copy_columns: return "copy_columns";
    case transpose_variant::naive_rows: return "naive_rows";
    case transpose_variant::naive_columns: return "naive_columns";
    case transpose_variant::tiled: return "tiled";
    case transpose_variant::tiled_padded: return "tiled_padded";
    case transpose_variant::diagonal_rows: return "diagonal_rows";
    case transpose_variant::diagonal_columns: return "diagonal_columns";
    case transpose_variant::unrolled_rows: return "unrolled_rows";
    case transpose_variant::unrolled_columns: return "unrolled_columns";
    case transpose_variant::best: return "best";
  }
  return "unknown";
}

/// Whether the variant writes the input itself (a reference copy) rather than its transpose.
constexpr bool transpose_is_copy(transpose_variant variant) {
  return variant == transpose_variant::copy_rows || variant == transpose_variant::copy_columns;
}

/// Whether the variant runs with either block shape (block_rows 32 or 8); best has its own.
constexpr bool transpose_takes_block_rows(transpose_variant variant) {
  return variant != transpose_variant::best;
}

/// Host reference for every transposing variant: out[c * rows + r] = in[r * cols + c], in
/// square blocks so that both sides stay in the host's caches.
template <typename T>
void transpose_host(const T* in, T* out, std::size_t rows, std::size_t cols) {
  constexpr std::size_t block = 32;
  for (std::size_t r0 = 0; r0 < rows; r0 += block) {
    for (std::size_t c0 = 0; c0 < cols; c0 += block) {
      for (std::size_t r = r0; r < r0 + block && r < rows; ++r) {
        for (std::size_t c = c0; c < c0 + block && c < cols; ++c) {
          out[c * rows + r] = in[r * cols + c];
        }
      }
    }
  }
}

/// Launches `variant` on a stream. `out` must hold rows * cols elements and must not overlap
/// `in`. block_rows must be 32 or 8 (cudaErrorInvalidValue otherwise); best ignores it. An
/// empty matrix launches nothing. A matrix needing more than 65535 tile rows in the grid's y
/// (over 2 million rows, or columns for the column-walking variants) is refused with
/// cudaErrorInvalidConfiguration, before any launch.
template <typename T>
cudaError_t transpose(transpose_variant variant, T* out, const T* in, int rows, int cols,
                      int block_rows, cudaStream_t stream);

// ---- The kernels. Blocks are 32 x BlockRows threads; threadIdx.x is the lane in a warp. ----

/// Which way a warp's 32 threads run through the input in a kernel without shared memory:
/// along a row (reads coalesced) or down a column (reads cols elements apart).
enum class transpose_walk { rows, columns };

namespace transpose_detail {

/// The tile this block works on. Diagonal order (the SDK's, valid for any grid shape): the
/// blocks launched together take tiles along a diagonal rather than along one row of tiles,
/// so that they do not all read one row of tiles and write one column of tiles at once.
template <bool Diagonal>
__device__ __forceinline__ uint2 block_tile() {
  if constexpr (Diagonal) {
    const unsigned long long id =
        blockIdx.x + static_cast<unsigned long long>(gridDim.x) * blockIdx.y;
    const auto y = static_cast<unsigned int>(id % gridDim.y);
    const auto x = static_cast<unsigned int>((id / gridDim.y + y) % gridDim.x);
    return make_uint2(x, y);
  } else {
    return make_uint2(blockIdx.x, blockIdx.y);
  }
}

__device__ __forceinline__ std::size_t offset(unsigned int row, unsigned int col,
                                              unsigned int row_length) {
  return static_cast<std::size_t>(row) * row_length + col;
}

}  // namespace transpose_detail

/// A transpose (or, with Transpose false, a copy) without shared memory. The block covers a
/// tile 32 * Unroll wide (threadIdx.x, columns for Walk rows and rows for Walk columns) and 32
/// long; each thread loads all of its 32 / BlockRows * Unroll elements before storing any, so
/// they are in flight together.
template <typename T, int BlockRows, int Unroll, transpose_walk Walk, bool Transpose,
          bool Diagonal>
__global__ void __launch_bounds__(32 * BlockRows)
    transpose_direct_kernel(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
  static_assert(transpose_tile_dim % BlockRows == 0, "BlockRows must divide the tile");
  constexpr int per_lane = transpose_tile_dim / BlockRows;
  constexpr int count = per_lane * Unroll;
  const auto n_rows = static_cast<unsigned int>(rows);
  const auto n_cols = static_cast<unsigned int>(cols);
  const uint2 tile = transpose_detail::block_tile<Diagonal>();
  const unsigned int x0 = tile.x * (transpose_tile_dim * Unroll) + threadIdx.x;
  const unsigned int y0 = tile.y * transpose_tile_dim + threadIdx.y;

  // Calls element(k, r, c) for each of the thread's elements inside the matrix: the k-th,
  // at row r and column c. Once for the loads, once for the stores.
  const auto for_each_element = [&](auto element) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
#pragma unroll
      for (int j = 0; j < per_lane; ++j) {
        const unsigned int x = x0 + u * transpose_tile_dim;
        const unsigned int y = y0 + j * BlockRows;
        const unsigned int r = Walk == transpose_walk::rows ? y : x;
        const unsigned int c = Walk == transpose_walk::rows ? x : y;
        if (r < n_rows && c < n_cols) {
          element(u * per_lane + j, r, c);
        }
      }
    }
  };
  T values[count] = {};
  for_each_element([&](int k, unsigned int r, unsigned int c) {
    values[k] = in[transpose_detail::offset(r, c, n_cols)];
  });
  for_each_element([&](int k, unsigned int r, unsigned int c) {
    out[Transpose ? transpose_detail::offset(c, r, n_rows)
                  : transpose_detail::offset(r, c, n_cols)] = values[k];
  });
}

/// The shared-memory transpose: the block reads a TileDim x TileDim tile along its rows into
/// shared memory and writes it out along the output's rows, so that both global sides are
/// coalesced. Without Pad, the write phase reads a column of the tile: 32 lanes in one bank.
/// Pad 1 shifts each tile row by one bank, so a column spans all 32 banks. TileDim 64 makes
/// each warp's rows 256 contiguous bytes and gives each thread 2 * 64 / BlockRows loads in
/// flight before the barrier.
template <typename T, int TileDim, int BlockRows, int Pad>
__global__ void __launch_bounds__(32 * BlockRows)
    transpose_tiled_kernel(T* __restrict__ out, const T* __restrict__ in, int rows, int cols) {
  static_assert(TileDim % 32 == 0 && TileDim % BlockRows == 0, "tile must fit the block");
  constexpr int across = TileDim / 32;  // 32-element segments per tile row
  constexpr int down = TileDim / BlockRows;
  __shared__ T tile[TileDim][TileDim + Pad];
  const auto n_rows = static_cast<unsigned int>(rows);
  const auto n_cols = static_cast<unsigned int>(cols);
  const unsigned int row0 = blockIdx.y * TileDim;  // the tile's first input row
  const unsigned int col0 = blockIdx.x * TileDim;  // and first input column

  // Calls part(j, k) for each of the thread's parts of the tile: BlockRows * j rows and 32 * k
  // columns past its first.
  const auto for_each_part = [](auto part) {
#pragma unroll
    for (int j = 0; j < down; ++j) {
#pragma unroll
      for (int k = 0; k < across; ++k) {
        part(j, k);
      }
    }
  };
  T values[down * across] = {};  // all loads issued before the first shared-memory store
  for_each_part([&](int j, int k) {
    const unsigned int r = row0 + threadIdx.y + j * BlockRows;
    const unsigned int c = col0 + threadIdx.x + k * 32;
    if (r < n_rows && c < n_cols) {
      values[j * across + k] = in[transpose_detail::offset(r, c, n_cols)];
    }
  });
  for_each_part([&](int j, int k) {
    tile[threadIdx.y + j * BlockRows][threadIdx.x + k * 32] = values[j * across + k];
  });
  __syncthreads();

  // Lanes now run along an output row: output row = input column, output column = input row.
  for_each_part([&](int j, int k) {
    const unsigned int out_row = col0 + threadIdx.y + j * BlockRows;
    const unsigned int out_col = row0 + threadIdx.x + k * 32;
    if (out_row < n_cols && out_col < n_rows) {
      out[transpose_detail::offset(out_row, out_col, n_rows)] =
          tile[threadIdx.x + k * 32][threadIdx.y + j * BlockRows];
    }
  });
}

}  // namespace kernelwatch::kernels
