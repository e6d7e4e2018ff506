// The kernels' GPU tests: SKIPPED (exit 77) without a usable device.
#include "../support/gpu_test_main.hpp"
#include "flashlab/kernels/runner/device.hpp"

int main(int argc, char** argv) {
  return flashlab::test::run_gpu_tests(argc, argv, [] { return flashlab::kernels::cuda_unavailable_reason(); });
}
