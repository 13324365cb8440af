#pragma once
// The one way kernelwatch reports a failed CUDA runtime call: an exception that names the
// call, the file and line, and the runtime's own error name and text.

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace kernelwatch {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const char* call, const char* file, int line);
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
}  // namespace detail

}  // namespace kernelwatch

/// Throws kernelwatch::cuda_error when `call` does not return cudaSuccess.
#define KW_CUDA_CHECK(call)                                                              \
  do {                                                                                   \
    const cudaError_t kw_cuda_status_ = (call);                                          \
    if (kw_cuda_status_ != cudaSuccess) {                                                \
      ::kernelwatch::detail::throw_cuda_error(kw_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (false)

/// After a kernel launch: throws on a launch error (bad configuration, no device...).
#define KW_CUDA_CHECK_LAUNCH() KW_CUDA_CHECK(cudaGetLastError())
