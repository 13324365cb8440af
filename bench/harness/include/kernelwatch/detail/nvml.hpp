#pragma once
// NVML is optional: loaded at run time when the driver ships it, so the harness builds and
// links without it and a missing library costs only the fields it would have filled.

#include <string>

namespace kernelwatch::detail {

/// The kernel driver's version ("580.159.04"), or an empty string without NVML.
[[nodiscard]] std::string nvml_driver_version();

}  // namespace kernelwatch::detail
