// The command line's entry point: parses argv, runs the subcommand (or the
// main job), and returns the exit code (2 for bad input, with one line on
// stderr). The executable's main() is this call alone; the command line
// library (CLI11) is compiled once, in flashlab_cli_lib.
#pragma once

namespace flashlab::cli {
int run(int argc, char** argv);
}  // namespace flashlab::cli
