// The main of a GPU test binary: without a usable device every test reports
// SKIPPED and the binary exits 77, which ctest counts as skipped, not passed.
// Listing the tests (what catch_discover_tests does at build time) needs no
// device. Include once, from the file that defines main; link flashlab_catch (the framework).
#pragma once

#include <cstdio>
#include <string>

#include "catch_run.hpp"

namespace flashlab::test {

inline constexpr int kSkipExitCode = 77;  // SKIP_RETURN_CODE in the tests' CMakeLists

inline bool only_listing(int argc, char** argv) {
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a.rfind("--list", 0) == 0 || a == "-l" || a == "-t" || a == "-h" || a == "--help" || a == "-?") return true;
  }
  return false;
}

// `unavailable` returns why no device can run the tests, "" when one can.
template <class WhyUnavailable>
int run_gpu_tests(int argc, char** argv, WhyUnavailable unavailable) {
  if (!only_listing(argc, argv)) {
    const std::string why = unavailable();
    if (!why.empty()) {
      std::printf("SKIPPED: %s\n", why.c_str());
      return kSkipExitCode;
    }
  }
  return run_catch(argc, argv);
}

}  // namespace flashlab::test
