#pragma once

namespace kernelwatch::detail {

/// True when a device exists but its CUDA context is unusable: a sticky error (illegal
/// address, illegal instruction, ...) keeps failing every later call, so nothing that this
/// process measures afterwards would mean anything.
[[nodiscard]] bool cuda_context_lost() noexcept;

}  // namespace kernelwatch::detail
