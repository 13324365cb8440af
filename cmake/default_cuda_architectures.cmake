# Sets the CMAKE_CUDA_ARCHITECTURES cache variable when the user did not:
# "native" when nvidia-smi sees a GPU (build for exactly the card that will run the suite),
# otherwise 90 (Hopper), the oldest architecture kernelwatch promises to compile for.
function(kernelwatch_default_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    return()
  endif()
  set(architectures 90)
  find_program(KERNELWATCH_NVIDIA_SMI nvidia-smi)
  if(KERNELWATCH_NVIDIA_SMI)
    execute_process(COMMAND "${KERNELWATCH_NVIDIA_SMI}" -L
                    RESULT_VARIABLE status OUTPUT_VARIABLE gpus ERROR_QUIET TIMEOUT 20)
    if(status EQUAL 0 AND gpus MATCHES "GPU 0")
      set(architectures native)
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${architectures} CACHE STRING
      "CUDA architectures to build for (default: native with a visible GPU, else 90)")
  message(STATUS "kernelwatch: CUDA architectures: ${architectures}")
endfunction()
