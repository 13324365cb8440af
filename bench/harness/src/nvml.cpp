#include <kernelwatch/detail/nvml.hpp>

#include <dlfcn.h>

namespace kernelwatch::detail {
namespace {

// The few NVML entry points used, declared here because the CUDA toolkit does not always ship
// nvml.h. nvmlReturn_t is an int enum in which 0 means success.
using nvml_init_fn = int (*)();
using nvml_shutdown_fn = int (*)();
using nvml_driver_version_fn = int (*)(char*, unsigned int);

}  // namespace

std::string nvml_driver_version() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return {};
  }
  std::string version;
  auto init = reinterpret_cast<nvml_init_fn>(dlsym(library, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<nvml_shutdown_fn>(dlsym(library, "nvmlShutdown"));
  auto driver_version =
      reinterpret_cast<nvml_driver_version_fn>(dlsym(library, "nvmlSystemGetDriverVersion"));
  if (init != nullptr && shutdown != nullptr && driver_version != nullptr && init() == 0) {
    char buffer[96] = {};
    if (driver_version(buffer, sizeof(buffer)) == 0) {
      version = buffer;
    }
    shutdown();
  }
  dlclose(library);
  return version;
}

}  // namespace kernelwatch::detail
