#include <kernelwatch/detail/counters.hpp>

namespace kernelwatch::detail {

std::map<std::string, double> compute_counters(const work_per_launch& work, double launches,
                                               double gpu_seconds,
                                               const bandwidth_ceilings& ceilings) {
  const bool timed = gpu_seconds > 0.0 && launches > 0.0;
  const auto rate = [&](double amount) { return timed ? amount * launches / gpu_seconds : 0.0; };
  std::map<std::string, double> counters;
  if (work.bytes() > 0) {
    const double bytes_per_second = rate(static_cast<double>(work.bytes()));
    counters["bytes_per_second"] = bytes_per_second;
    // Traffic that is not DRAM's (peak 0: PCIe) has no place against DRAM's ceilings.
    if (ceilings.peak > 0.0) {
      counters["peak_fraction"] = bytes_per_second / ceilings.peak;
      if (ceilings.copy > 0.0) {
        counters["ceiling_fraction"] = bytes_per_second / ceilings.copy;
      }
    }
  }
  if (work.elements > 0) {
    counters["elements_per_second"] = rate(static_cast<double>(work.elements));
  }
  if (work.flops > 0.0) {
    counters["flop_per_second"] = rate(work.flops);
  }
  for (const auto& [name, amount] : work.rates) {
    counters[name] = rate(amount);
  }
  return counters;
}

}  // namespace kernelwatch::detail
