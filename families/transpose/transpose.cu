#include "transpose.cuh"

namespace kernelwatch::kernels {
namespace {

constexpr unsigned int max_grid_y = 65535;  // gridDim.y limit of every current GPU

unsigned int tiles(int extent, int tile) {
  return (static_cast<unsigned int>(extent) + static_cast<unsigned int>(tile) - 1U) /
         static_cast<unsigned int>(tile);
}

template <typename T>
using kernel_function = void (*)(T*, const T*, int, int);

template <typename T>
cudaError_t launch(kernel_function<T> kernel, unsigned int tiles_x, unsigned int tiles_y,
                   int block_rows, T* out, const T* in, int rows, int cols,
                   cudaStream_t stream) {
  if (tiles_y > max_grid_y) {
    return cudaErrorInvalidConfiguration;  // what the launch would say, without launching
  }
  kernel<<<dim3(tiles_x, tiles_y), dim3(32, static_cast<unsigned int>(block_rows)), 0,
           stream>>>(out, in, rows, cols);
  return cudaGetLastError();
}

// The grid of a kernel without shared memory: x across the walk (32 * Unroll per tile),
// y along it.
template <typename T, int BlockRows, int Unroll, transpose_walk Walk, bool Transpose,
          bool Diagonal>
cudaError_t launch_direct(T* out, const T* in, int rows, int cols, cudaStream_t stream) {
  const int across = Walk == transpose_walk::rows ? cols : rows;
  const int along = Walk == transpose_walk::rows ? rows : cols;
  return launch<T>(transpose_direct_kernel<T, BlockRows, Unroll, Walk, Transpose, Diagonal>,
                   tiles(across, transpose_tile_dim * Unroll), tiles(along, transpose_tile_dim),
                   BlockRows, out, in, rows, cols, stream);
}

template <typename T, int TileDim, int BlockRows, int Pad>
cudaError_t launch_tiled(T* out, const T* in, int rows, int cols, cudaStream_t stream) {
  return launch<T>(transpose_tiled_kernel<T, TileDim, BlockRows, Pad>, tiles(cols, TileDim),
                   tiles(rows, TileDim), BlockRows, out, in, rows, cols, stream);
}

template <typename T, int BlockRows>
cudaError_t launch_variant(transpose_variant variant, T* out, const T* in, int rows, int cols,
                           cudaStream_t stream) {
  constexpr auto rows_walk = transpose_walk::rows;
  constexpr auto columns_walk = transpose_walk::columns;
  constexpr int unroll = transpose_unroll;
  switch (variant) {
    case transpose_variant::copy_rows:
      return launch_direct<T, BlockRows, 1, rows_walk, false, false>(out, in, rows, cols, stream);
    case transpose_variant::copy_columns:
      return launch_direct<T, BlockRows, 1, columns_walk, false, false>(out, in, rows, cols,
                                                                        stream);
    case transpose_variant::naive_rows:
      return launch_direct<T, BlockRows, 1, rows_walk, true, false>(out, in, rows, cols, stream);
    case transpose_variant::naive_columns:
      return launch_direct<T, BlockRows, 1, columns_walk, true, false>(out, in, rows, cols,
                                                                       stream);
    case transpose_variant::tiled:
      return launch_tiled<T, transpose_tile_dim, BlockRows, 0>(out, in, rows, cols, stream);
    case transpose_variant::tiled_padded:
      return launch_tiled<T, transpose_tile_dim, BlockRows, 1>(out, in, rows, cols, stream);
    case transpose_variant::diagonal_rows:
      return launch_direct<T, BlockRows, 1, rows_walk, true, true>(out, in, rows, cols, stream);
    case transpose_variant::diagonal_columns:
      return launch_direct<T, BlockRows, 1, columns_walk, true, true>(out, in, rows, cols,
                                                                      stream);
    case transpose_variant::unrolled_rows:
      return launch_direct<T, BlockRows, unroll, rows_walk, true, false>(out, in, rows, cols,
                                                                         stream);
    case transpose_variant::unrolled_columns:
      return launch_direct<T, BlockRows, unroll, columns_walk, true, false>(out, in, rows, cols,
                                                                            stream);
    case transpose_variant::best:
      break;  // one block shape of its own: see transpose()
  }
  return cudaErrorInvalidValue;
}

}  // namespace

template <typename T>
cudaError_t transpose(transpose_variant variant, T* out, const T* in, int rows, int cols,
                      int block_rows, cudaStream_t stream) {
  if (rows < 0 || cols < 0) {
    return cudaErrorInvalidValue;
  }
  const bool takes_block_rows = transpose_takes_block_rows(variant);
  if (takes_block_rows && block_rows != 32 && block_rows != 8) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) {
    return cudaSuccess;
  }
  if (!takes_block_rows) {
    // Padding (no bank conflicts) + 16 elements per thread in flight + 256-byte rows.
    return launch_tiled<T, transpose_best_tile_dim, transpose_best_block_rows, 1>(out, in, rows,
                                                                                  cols, stream);
  }
  return block_rows == 32 ? launch_variant<T, 32>(variant, out, in, rows, cols, stream)
                          : launch_variant<T, 8>(variant, out, in, rows, cols, stream);
}

template cudaError_t transpose<float>(transpose_variant, float*, const float*, int, int, int,
                                      cudaStream_t);

}  // namespace kernelwatch::kernels
