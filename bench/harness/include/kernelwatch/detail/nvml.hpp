#pragma once
// NVML is optional: loaded at run time when the driver ships it, so the harness builds and
// links without it and a missing library costs only the fields it would have filled.

#include <optional>
#include <string>

namespace kernelwatch::detail {

/// The kernel driver's version ("580.159.04"), or an empty string without NVML.
[[nodiscard]] std::string nvml_driver_version();

/// The GPU's core temperature in degrees Celsius, found by its UUID ("GPU-..."); nothing
/// without NVML.
[[nodiscard]] std::optional<double> nvml_temperature_c(const std::string& gpu_uuid);

/// Whether NVML reports the GPU's clocks held down by power or heat right now (a software
/// power cap, thermal or hardware slowdown, power brake); nothing without NVML.
[[nodiscard]] std::optional<bool> nvml_clocks_slowed_down(const std::string& gpu_uuid);

}  // namespace kernelwatch::detail
