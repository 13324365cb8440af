#pragma once
// Owner of page-locked host memory: the only host memory the GPU's copy engines read and
// write at full speed, and the only kind an asynchronous copy can overlap with kernels.

#include <kernelwatch/cuda_check.hpp>

#include <cstddef>
#include <utility>

namespace kernelwatch {

template <typename T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t size) : size_(size) {
    if (size_ > 0) {
      KW_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), size_ * sizeof(T)));
    }
  }
  ~pinned_buffer() {
    if (data_ != nullptr) {
      cudaFreeHost(data_);
    }
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  pinned_buffer(pinned_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernelwatch
