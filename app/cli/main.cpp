// flashlab: the command-line front end (run.hpp).
#include "run.hpp"

int main(int argc, char** argv) { return flashlab::cli::run(argc, argv); }
