// The ceilings' GPU tests: SKIPPED (exit 77) without a usable device or
// without CUDA in the build.
#include "../support/gpu_test_main.hpp"
#include "flashlab/ceilings/ceilings.hpp"

int main(int argc, char** argv) {
  return flashlab::test::run_gpu_tests(argc, argv, [] { return flashlab::ceilings::unavailable_reason(); });
}
