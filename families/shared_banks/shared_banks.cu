#include "shared_banks.cuh"

#include <algorithm>
#include <array>
#include <set>

namespace kernelwatch::kernels {

template <typename T>
cudaError_t shared_strided_read(T* out, const T* in, int stride, int padding, int rounds,
                                unsigned int blocks, cudaStream_t stream) {
  const int pitch = stride + padding;
  if (stride < 1 || padding < 0 || pitch > shared_banks_max_pitch || rounds < 0 || blocks == 0) {
    return cudaErrorInvalidValue;
  }
  shared_strided_read_kernel<T>
      <<<blocks, shared_banks_block_size, 0, stream>>>(out, in, pitch, rounds);
  return cudaGetLastError();
}

template <typename T>
cudaError_t shared_strided_read_grid(unsigned int* blocks) {
  int device = 0;
  int sms = 0;
  int blocks_per_sm = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  }
  if (status == cudaSuccess) {
    status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, shared_strided_read_kernel<T>, shared_banks_block_size, 0);
  }
  if (status == cudaSuccess) {
    *blocks = static_cast<unsigned int>(sms * blocks_per_sm);
  }
  return status;
}

template <typename T>
std::vector<T> shared_strided_read_reference(const std::vector<T>& words, int stride,
                                             int padding, int rounds) {
  const int pitch = stride + padding;
  std::vector<T> sums(shared_banks_block_size, T(0));
  for (int thread = 0; thread < shared_banks_block_size; ++thread) {
    const std::size_t row = static_cast<std::size_t>((thread % 32) * pitch + thread / 32);
    T sum = 0;
    for (int r = 0; r < rounds; ++r) {
      for (int u = 0; u < shared_banks_reads_per_round; ++u) {
        sum += words.at(row + static_cast<std::size_t>(r % 32 + u));
      }
    }
    sums[static_cast<std::size_t>(thread)] = sum;
  }
  return sums;
}

int bank_conflict_ways(int word_bytes, int pitch) {
  constexpr int banks = 32;
  constexpr int bank_bytes = 4;
  constexpr int pass_bytes = banks * bank_bytes;
  if ((word_bytes != 4 && word_bytes != 8) || pitch < 1) {
    return 0;
  }
  const int lanes_per_pass = pass_bytes / word_bytes;
  int ways = 1;
  for (int first = 0; first < 32; first += lanes_per_pass) {
    std::array<std::set<long long>, banks> words_in_bank;
    for (int lane = first; lane < first + lanes_per_pass; ++lane) {
      const long long word = static_cast<long long>(lane) * pitch;
      for (int b = 0; b < word_bytes / bank_bytes; ++b) {
        const long long bank = (word * word_bytes / bank_bytes + b) % banks;
        words_in_bank[static_cast<std::size_t>(bank)].insert(word);
      }
    }
    for (const auto& in_bank : words_in_bank) {
      ways = std::max(ways, static_cast<int>(in_bank.size()));
    }
  }
  return ways;
}

template cudaError_t shared_strided_read<std::uint32_t>(std::uint32_t*, const std::uint32_t*, int,
                                                        int, int, unsigned int, cudaStream_t);
template cudaError_t shared_strided_read<std::uint64_t>(std::uint64_t*, const std::uint64_t*, int,
                                                        int, int, unsigned int, cudaStream_t);
template cudaError_t shared_strided_read_grid<std::uint32_t>(unsigned int*);
template cudaError_t shared_strided_read_grid<std::uint64_t>(unsigned int*);
template std::vector<std::uint32_t> shared_strided_read_reference<std::uint32_t>(
    const std::vector<std::uint32_t>&, int, int, int);
template std::vector<std::uint64_t> shared_strided_read_reference<std::uint64_t>(
    const std::vector<std::uint64_t>&, int, int, int);

}  // namespace kernelwatch::kernels
