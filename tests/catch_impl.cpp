// Catch2's framework (the implementation half of its single header), compiled
// once for every test binary: flashlab_catch in tests/CMakeLists.txt.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/catch_run.hpp"

int flashlab::test::run_catch(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
