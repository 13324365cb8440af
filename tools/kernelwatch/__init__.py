"""kernelwatch: performance-regression tooling for Google Benchmark results of CUDA kernels."""

__version__ = "0.1.0"
