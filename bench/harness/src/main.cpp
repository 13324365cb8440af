// The main of kernelwatch::main: link it and register benchmarks; nothing else is needed.
#include <kernelwatch/main.hpp>

int main(int argc, char** argv) { return kernelwatch::benchmark_main(argc, argv); }
