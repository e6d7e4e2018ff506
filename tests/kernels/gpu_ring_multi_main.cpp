// The ring's multi-GPU tests: SKIPPED (exit 77) without 2 GPUs and NCCL.
#include <cuda_runtime_api.h>

#include "../support/gpu_test_main.hpp"
#include "flashlab/kernels/ring/ring.hpp"

int main(int argc, char** argv) {
  return flashlab::test::run_gpu_tests(argc, argv, [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < 2)
      return std::string("the ring over NCCL needs 2 or more GPUs; this machine shows ") + std::to_string(n);
    return flashlab::kernels::ring_unavailable_reason(n, flashlab::kernels::RingTransport::nccl);
  });
}
