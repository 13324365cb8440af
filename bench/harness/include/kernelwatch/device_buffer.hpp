#pragma once
// Owner of an array in device memory.

#include <kernelwatch/cuda_check.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kernelwatch {

template <typename T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t size) : size_(size) {
    if (size_ > 0) {
      KW_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), size_bytes()));
    }
  }
  ~device_buffer() {
    if (data_ != nullptr) {
      cudaFree(data_);  // no throw from a destructor; a sticky error shows at the next check
    }
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }

  // The helpers below are for setup and checks, never for timed code: each waits for all
  // work on the device first and is complete when it returns. Plain cudaMemset/cudaMemcpy run
  // on the legacy stream, which does not order against the non-blocking streams kernelwatch
  // times on, so without the waits a check could read an output before the kernel wrote it.

  /// Sets every byte, e.g. 0xFF to poison an output (NaN for floating point) before a check.
  void fill_bytes(std::uint8_t value) {
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemset(data_, value, size_bytes()));
    KW_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void copy_from_host(const std::vector<T>& host) {
    if (host.size() != size_) {
      throw std::invalid_argument("device_buffer::copy_from_host: size mismatch");
    }
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemcpy(data_, host.data(), size_bytes(), cudaMemcpyHostToDevice));
  }

  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> host(size_);
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    KW_CUDA_CHECK(cudaMemcpy(host.data(), data_, size_bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernelwatch
