set(family_libraries CUDA::cublas)  # cuBLAS SGEMM: the speed-of-light reference
