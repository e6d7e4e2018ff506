// The labs and the implementations table against what the kernels library
// holds: every rung has a legend name and a colour, every lab's sweeps load
// and its implementations are rungs or PyTorch's, every figure's rows exist
// in its sweep's grid.
#include <catch2/catch.hpp>

#include <algorithm>

#include "flashlab/analysis/results/bench_filter.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/student/lab.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/kernels/rungs/registry.hpp"

using namespace flashlab;

TEST_CASE("every rung of the registry has a name and a colour of its own in the charts", "[kernels][labs]") {
  for (const kernels::KernelInfo& k : kernels::registry()) {
    INFO(k.id);
    const analysis::Implementation* i = analysis::find_implementation(k.id);
    REQUIRE(i != nullptr);
    CHECK_FALSE(i->name.empty());
    // A backward rung's family is the forward rung it reads.
    if (!k.forward.empty()) CHECK(i->family == analysis::find_implementation(k.forward)->family);
  }
}

TEST_CASE("every lab loads: its sweeps exist, its implementations run, each figure's filter selects its grid",
          "[kernels][labs]") {
  const std::vector<std::string> names = analysis::lab_names();
  REQUIRE(names.size() == 3);
  for (const std::string& name : names) {
    INFO(name);
    const analysis::Lab lab = analysis::load_lab(name);
    CHECK(lab.name == name);
    CHECK_FALSE(lab.figures.empty());
    CHECK_FALSE(lab.differences.empty());
    for (const analysis::LabFigure& f : lab.figures) {
      INFO(f.item);
      const kernels::SweepFile s = kernels::load_sweep(f.sweep);
      for (const std::string& k : f.kernels) {
        const bool rung = kernels::find_kernel(k) != nullptr;
        CHECK((rung || analysis::is_pytorch(k)));
        // A rung the figure draws is one its sweep runs.
        if (rung && !s.axes.kernels.empty())
          CHECK(std::find(s.axes.kernels.begin(), s.axes.kernels.end(), k) != s.axes.kernels.end());
      }
      const analysis::BenchFilter filter = analysis::parse_bench_filter(f.filter);
      const auto grid = kernels::expand_axes(s.axes);
      CHECK(std::any_of(grid.begin(), grid.end(), [&](const sim::AttentionProblem& p) {
        analysis::BenchRow r;
        r.problem = p;
        return filter.matches(r);
      }));
    }
  }
  CHECK_THROWS_WITH(analysis::load_lab("flash1-scalin"), Catch::Contains("did you mean flash1-scaling"));
}
