#pragma once
// The buffers of a kernel that maps one array onto another (copies, transposes, element-wise
// kernels): a random input and a poisoned output, made once per instance with set_up_once.

#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/random.hpp>

#include <cstddef>
#include <cstdint>

namespace kernelwatch {

/// `in` holds `in_count` values random_value(seed, i, lo, hi); `out` holds `out_count`
/// elements of 0xFF bytes, so an element the kernel skips fails any check: NaN for floating
/// point, for unsigned integers the largest value, which fill_random never makes (its upper
/// bound is exclusive). For a signed output it is -1: give it a range without -1.
template <typename In, typename Out = In>
struct in_out_buffers {
  in_out_buffers(std::size_t in_count, std::size_t out_count, std::uint64_t seed, In lo, In hi)
      : in(in_count), out(out_count) {
    fill_random(in.data(), in_count, seed, lo, hi);
    out.fill_bytes(0xFF);
  }

  device_buffer<In> in;
  device_buffer<Out> out;
};

}  // namespace kernelwatch
