#pragma once
// What a benchmark author uses: registration, measure(state) and the work it declares, RAII
// owners of device and pinned memory, events and streams, CUDA error checks, reproducible
// inputs kept between repetitions, output checks and the device's facts. The run's plumbing
// (main, flags, context, L2 flush, copy ceiling, counter arithmetic) lives under
// kernelwatch/detail/.

#include <kernelwatch/cache_mode.hpp>
#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/device_info.hpp>
#include <kernelwatch/in_out_buffers.hpp>
#include <kernelwatch/measurement.hpp>
#include <kernelwatch/pinned_buffer.hpp>
#include <kernelwatch/random.hpp>
#include <kernelwatch/registration.hpp>
#include <kernelwatch/set_up_once.hpp>
#include <kernelwatch/verify.hpp>
