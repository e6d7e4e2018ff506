// The GPU tests' main: without a usable device every test reports SKIPPED
// (exit 77, which ctest counts as skipped, not passed). Listing the tests
// (what catch_discover_tests does at build time) needs no device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "flashlab/kernels/device.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a.rfind("--list", 0) == 0 || a == "-l" || a == "-t" || a == "-h" || a == "--help" || a == "-?") listing = true;
  }
  if (!listing) {
    const std::string why = flashlab::kernels::cuda_unavailable_reason();
    if (!why.empty()) {
      // "no CUDA device: cudaGetDeviceCount returned ..." → "SKIPPED: no CUDA device (cudaGetDeviceCount returned ...)"
      const std::string prefix = "no CUDA device: ";
      const std::string detail = why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why;
      std::printf("SKIPPED: no CUDA device (%s)\n", detail.c_str());
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
