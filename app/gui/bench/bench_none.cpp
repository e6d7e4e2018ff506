// Builds without the kernels library: no backend; the benchmark panel says why
// and still opens results files.
#include "state/bench_backend.hpp"

namespace flashlab::gui {

void register_builtin_bench_backends() {}

}  // namespace flashlab::gui
