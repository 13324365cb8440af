// The main of kernelwatch::main: link it and register benchmarks; nothing else is needed.
#include <kernelwatch/detail/main.hpp>

int main(int argc, char** argv) { return kernelwatch::detail::benchmark_main(argc, argv); }
