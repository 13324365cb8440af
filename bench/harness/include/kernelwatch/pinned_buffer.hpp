#pragma once
// Owner of page-locked host memory: the only host memory the GPU's copy engines read and
// write at full speed, and the only kind an asynchronous copy can overlap with kernels.

#include <kernelwatch/detail/cuda_array.hpp>

#include <cstddef>

namespace kernelwatch {

template <typename T>
class pinned_buffer : public detail::cuda_array<T, detail::pinned_allocator> {
 public:
  using detail::cuda_array<T, detail::pinned_allocator>::cuda_array;
  using detail::cuda_array<T, detail::pinned_allocator>::data;
  using detail::cuda_array<T, detail::pinned_allocator>::size;

  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size(); }
};

}  // namespace kernelwatch
