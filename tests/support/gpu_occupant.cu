// Another process on the GPU, for the disturbance monitor's test: it makes a CUDA context on
// device 0, holds it for the milliseconds given, and exits.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2 || cudaFree(nullptr) != cudaSuccess) {
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[1])));
  return 0;
}
