// Every registry rung, forward and backward, on the machine's last GPU after
// the same rungs ran on GPU 0 in the same process, against fp64. What a
// process learns about a kernel on one device — its shared-memory opt-in, its
// attributes, a library handle — does not hold on another; state cached once
// per process ran every rung on GPU 0 and failed its first launch on GPU 1
// (cudaErrorInvalidValue), which no test on one device or on virtual GPUs of
// one device can see. Part of the multi-GPU binary: SKIPPED with one GPU.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <memory>

#include "flashlab/kernels/rungs/registry.hpp"
#include "gpu_support.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using sim::RunStatus;

namespace {

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

// The rung runs on `dev`, then is held to the ladder's rule with `yardstick`
// (naive's or naive_bwd's error on the same device and inputs) as the bound.
void check_rung(Backend& dev, const KernelInfo& k, const sim::AttentionProblem& p, const RunOptions& o,
                double yardstick) {
  const sim::MeasuredRun row = run_case(dev, k, p, o);
  INFO(k.id << " on " << dev.device().name << ": " << sim::to_string(row.status) << " " << row.reason << "; error "
            << row.rel_error << ", bound " << kernels::test::tolerance(p.dtype, yardstick));
  REQUIRE(row.status == RunStatus::ok);
  REQUIRE(row.rel_error >= 0);
  CHECK(row.rel_error <= kernels::test::tolerance(p.dtype, yardstick));
}

}  // namespace

TEST_CASE("every rung, forward and backward, runs on the last GPU after GPU 0 and matches fp64", "[gpu][devices]") {
  const int n = gpu_count();
  REQUIRE(n >= 2);
  // Opened once for the whole test case: the first GPU and the last, each the
  // runner's backend of its own device.
  static std::unique_ptr<Backend> first = open_cuda_backend(0);
  static std::unique_ptr<Backend> last = open_cuda_backend(n - 1);
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(64, 128);
  // Not a multiple of any tile; two heads so that head offsets are exercised.
  const auto p = kernels::test::problem(1, 2, 300, d, causal, dtype);
  const RunOptions o = kernels::test::check_options(kernels::test::fresh_seed(), 3e9);
  INFO(sim::describe(p) << ", " << kernels::test::describe_options(o) << ", last GPU = device " << n - 1);
  const int cc = last->device().compute_capability;
  for (sim::PassSelection pass : {sim::PassSelection::fwd, sim::PassSelection::bwd}) {
    const KernelInfo& yard = *find_kernel(pass == sim::PassSelection::fwd ? "naive" : "naive_bwd");
    const sim::MeasuredRun base = run_case(*last, yard, p, o);
    INFO(yard.id << " on the last GPU: " << sim::to_string(base.status) << " " << base.reason);
    REQUIRE(base.status == RunStatus::ok);
    for (const KernelInfo* k : kernels_of(pass)) {
      if (!k->built() || !k->supports(p.dtype) || !k->supports_head_dim(p.head_dim) || k->min_sm > cc) continue;
      // GPU 0 first: whatever the rung caches, it caches there.
      const sim::MeasuredRun on_first = run_case(*first, *k, p, o);
      INFO(k->id << " on GPU 0: " << sim::to_string(on_first.status) << " " << on_first.reason);
      REQUIRE(on_first.status == RunStatus::ok);
      check_rung(*last, *k, p, o, base.rel_error);
    }
  }
}
