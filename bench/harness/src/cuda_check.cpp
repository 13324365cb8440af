#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/cuda_context.hpp>

#include <cstring>
#include <string>

namespace kernelwatch {
namespace {

const char* file_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

std::string describe(cudaError_t code, const char* call, const char* file, int line) {
  return std::string(file_name(file)) + ":" + std::to_string(line) + ": " + call + " failed: " +
         cudaGetErrorName(code) + ": " + cudaGetErrorString(code);
}

}  // namespace

cuda_error::cuda_error(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(describe(code, call, file, line)), code_(code) {}

namespace detail {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  // The exception reports the error, so the runtime's last error forgets it (a sticky one
  // stays): a caller that handled it (an allocation tried and given up, the fingerprint's
  // copies) saw it again at the next KW_CUDA_CHECK_LAUNCH, a later benchmark's, under its name.
  (void)cudaGetLastError();
  throw cuda_error(code, call, file, line);
}

bool cuda_context_lost() noexcept {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    return false;  // no device is a plain error, not a lost context
  }
  (void)cudaGetLastError();  // clears a non-sticky error; a sticky one stays
  return cudaDeviceSynchronize() != cudaSuccess;
}

}  // namespace detail
}  // namespace kernelwatch
