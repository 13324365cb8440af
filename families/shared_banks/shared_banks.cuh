#pragma once
// Shared-memory bank conflicts: every lane of a warp reads words `pitch` apart from a shared
// array, over and over, so the time is set by how many bank passes ("wavefronts") each warp
// request needs. Shared memory has 32 banks of 4 bytes; a warp's 32-bit request is served in
// one pass unless several lanes need different words of one bank, and 64-bit requests are served
// per half-warp (16 lanes x 8 bytes = 128 bytes per pass). Padding each row of `stride` words by
// one word (pitch = stride + 1) is the classic fix for the power-of-two strides.
// Launchers return the launch's cudaError_t; the kernel is usable directly from device code.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace kernelwatch::kernels {

inline constexpr int shared_banks_block_size = 256;
inline constexpr int shared_banks_words = 2048;         // words of T in each block's array
inline constexpr int shared_banks_reads_per_round = 32;  // unrolled reads per round per thread
inline constexpr int shared_banks_max_pitch = 63;        // keeps every read inside the array

// Highest index read: lane 31's row, plus the warp offset (< 8), plus the round's shift (< 32),
// plus the unrolled reads (< 32).
static_assert(31 * shared_banks_max_pitch + (shared_banks_block_size / 32 - 1) + 31 +
                      (shared_banks_reads_per_round - 1) <
                  shared_banks_words,
              "the widest pitch must stay inside the shared array");

/// Each block copies in[0, shared_banks_words) into shared memory, then each thread sums
/// rounds x 32 words: in round r, lane l of warp w reads words
/// l * pitch + w + (r % 32) + u for u in [0, 32), and writes its sum (wrapping) to
/// out[blockIdx.x * blockDim.x + threadIdx.x]. In every read the 32 lanes are `pitch` words
/// apart with a shift common to the warp, so the conflict degree is fixed by pitch alone.
/// Must be launched with shared_banks_block_size threads; 1 <= pitch <= shared_banks_max_pitch.
template <typename T>
__global__ void __launch_bounds__(shared_banks_block_size)
    shared_strided_read_kernel(T* __restrict__ out, const T* __restrict__ in, int pitch,
                               int rounds) {
  __shared__ T words[shared_banks_words];
  for (int i = static_cast<int>(threadIdx.x); i < shared_banks_words;
       i += static_cast<int>(blockDim.x)) {
    words[i] = in[i];
  }
  __syncthreads();

  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const T* row = words + lane * pitch + warp;
  T sum = 0;
  for (int r = 0; r < rounds; ++r) {
    // The shift moves every round so no read is loop-invariant; the 32 reads of a round are
    // immediate offsets from one address, leaving about one add per shared load.
    const T* p = row + (r & 31);
#pragma unroll
    for (int u = 0; u < shared_banks_reads_per_round; ++u) {
      sum += p[u];
    }
  }
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

/// Launches `blocks` blocks of the kernel above with pitch = stride + padding: padding 0 is
/// the plain strided read, padding 1 the padded row. `in` holds shared_banks_words elements,
/// `out` blocks * shared_banks_block_size. cudaErrorInvalidValue for a pitch out of range,
/// negative rounds or no blocks. T is std::uint32_t or std::uint64_t.
template <typename T>
cudaError_t shared_strided_read(T* out, const T* in, int stride, int padding, int rounds,
                                unsigned int blocks, cudaStream_t stream);

/// The number of blocks of shared_strided_read<T> that fills every SM of the current device
/// exactly once (SM count x resident blocks per SM).
template <typename T>
cudaError_t shared_strided_read_grid(unsigned int* blocks);

/// Host reference: the shared_banks_block_size sums one block computes from `words`
/// (shared_banks_words elements); every block computes the same.
template <typename T>
std::vector<T> shared_strided_read_reference(const std::vector<T>& words, int stride,
                                             int padding, int rounds);

/// Passes per warp request, relative to a conflict-free request of the same word size, when
/// the 32 lanes read `word_bytes`-byte words (4 or 8) `pitch` words apart: the worst bank's
/// count of distinct words within each 128-byte pass group (32 lanes of 4 bytes, 16 of 8).
/// gcd(pitch, 32) for 4-byte words, gcd(pitch, 16) for 8-byte words.
int bank_conflict_ways(int word_bytes, int pitch);

}  // namespace kernelwatch::kernels
