#pragma once
// The ownership part shared by device_buffer and pinned_buffer: one allocation of `size`
// elements from a CUDA allocator, freed once, movable, never copied.

#include <kernelwatch/cuda_check.hpp>

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace kernelwatch::detail {

// Device memory from the device's stream-ordered pool (cudaMalloc where a device has none).
// Large-array kernels run 4.5-14 % slow in some repetitions, a whole repetition at a time: in
// the interleaved reduction family, 37 of 420 repetitions with cudaMalloc, 33 with the
// virtual-memory API, 8 from the pool (card GPU-bae0f339; docs/measurement.md).
struct device_allocator {
  static void* allocate(std::size_t bytes);
  // No throw from a destructor; a sticky error shows at the next checked call.
  static void release(void* pointer) noexcept;
};

struct pinned_allocator {
  static void* allocate(std::size_t bytes) {
    void* pointer = nullptr;
    KW_CUDA_CHECK(cudaMallocHost(&pointer, bytes));
    return pointer;
  }
  static void release(void* pointer) noexcept { cudaFreeHost(pointer); }
};

template <typename T, typename Allocator>
class cuda_array {
 public:
  cuda_array() = default;
  explicit cuda_array(std::size_t size)
      : data_(size > 0 ? static_cast<T*>(Allocator::allocate(checked_bytes(size))) : nullptr),
        size_(size) {}
  ~cuda_array() {
    if (data_ != nullptr) {
      Allocator::release(data_);
    }
  }
  cuda_array(const cuda_array&) = delete;
  cuda_array& operator=(const cuda_array&) = delete;
  cuda_array(cuda_array&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  cuda_array& operator=(cuda_array&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }

 private:
  // size * sizeof(T) wrapped around: 2^62 floats asked for 0 bytes, and the buffer claimed
  // 2^62 elements it did not have (a negative int count converts to a huge size_t).
  static std::size_t checked_bytes(std::size_t size) {
    if (size > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      throw std::length_error("buffer of " + std::to_string(size) + " elements of " +
                              std::to_string(sizeof(T)) + " bytes: its size overflows size_t");
    }
    return size * sizeof(T);
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernelwatch::detail
