#pragma once
// The whole public harness API.

#include <kernelwatch/context.hpp>
#include <kernelwatch/copy_ceiling.hpp>
#include <kernelwatch/counters.hpp>
#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/device_info.hpp>
#include <kernelwatch/l2_flush.hpp>
#include <kernelwatch/main.hpp>
#include <kernelwatch/measurement.hpp>
#include <kernelwatch/pinned_buffer.hpp>
#include <kernelwatch/random.hpp>
#include <kernelwatch/registration.hpp>
#include <kernelwatch/run_options.hpp>
#include <kernelwatch/verify.hpp>
