// Runs the Catch2 session: what Catch2's own main does. Defined in
// tests/catch_impl.cpp beside the framework (flashlab_catch), so that a main
// needs neither the framework's implementation nor CATCH_CONFIG_RUNNER.
#pragma once

namespace flashlab::test {
int run_catch(int argc, char* argv[]);
}
