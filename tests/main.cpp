// The default main of the test binaries: Catch2's own (support/catch_run.hpp).
#include "support/catch_run.hpp"

int main(int argc, char* argv[]) { return flashlab::test::run_catch(argc, argv); }
