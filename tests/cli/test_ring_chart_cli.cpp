// flashlab ring --results FILE --chart ID --out FILE as a user runs it: the
// chart written in the format of its extension, its CSV holding the rows'
// numbers; an unknown chart, a file with nothing to draw or flags that do not
// go together: one line, exit code 2, nothing written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../analysis/ring_chart_fixture.hpp"
#include "../support/run_flashlab.hpp"
#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/results/ring_results.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_ring_chart_cli_cases {

using flashlab::test::contains;
using flashlab::test::line_count;
using flashlab::test::Run;
namespace fs = std::filesystem;

namespace {

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-ring-chart-cli");

fs::path scratch_file(const std::string& name) { return run_flashlab.path() / name; }

// The fixture's runs as a results file in the scratch folder; `keep` picks the runs.
std::string results_file(const std::string& name, bool (*keep)(const flashlab::sim::MeasuredRun&)) {
  flashlab::sim::MeasuredRuns f = flashlab::analysis::test::ring_chart_file();
  std::vector<flashlab::sim::MeasuredRun> kept;
  for (const auto& r : f.runs)
    if (keep(r)) kept.push_back(r);
  f.runs = kept;
  std::ofstream(scratch_file(name)) << flashlab::analysis::ring_results_to_json(f);
  return name;
}

bool every(const flashlab::sim::MeasuredRun&) { return true; }
bool multi_gpu(const flashlab::sim::MeasuredRun& r) { return r.problem.gpus() > 1; }
bool one_gpu(const flashlab::sim::MeasuredRun& r) { return r.problem.gpus() == 1; }

}  // namespace

TEST_CASE("ring --chart writes the chart by the extension of --out", "[cli][ring][chart]") {
  const std::string file = results_file("runs.json", every);
  const Run csv = run_flashlab("ring --results " + file + " --chart ring-scaling --out scaling.csv");
  INFO(csv.out << csv.err);
  REQUIRE(csv.code == 0);
  CHECK(contains(csv.out, "wrote ring-scaling (csv"));
  CHECK(contains(csv.out, "note: t(P = 1): the file's P = 1 run"));
  const auto series = flashlab::analysis::chart_series_from_csv(flashlab::test::slurp(scratch_file("scaling.csv")));
  REQUIRE(series.size() == 6);
  CHECK(series[0].name == "LLaMA-2-7B fwd, fused");
  CHECK(series[0].x == std::vector<double>{4096});
  CHECK(series[0].y == std::vector<double>{10.0 / (2 * 6.0)});
  // The backward's time chart, pairwise runs only.
  const Run t = run_flashlab("ring --results " + file + " --chart ring-time --pass bwd --steps pairwise --out time.csv");
  REQUIRE(t.code == 0);
  const auto parts = flashlab::analysis::chart_series_from_csv(flashlab::test::slurp(scratch_file("time.csv")));
  REQUIRE(parts.size() == 4);
  CHECK(parts[0].name == "rung");
  CHECK(parts[0].y == std::vector<double>{100.0 * (24.0 * 4 / 6) / 24});
  // A picture: SVG always; PNG where the build has cairo.
  const Run svg = run_flashlab("ring --results " + file + " --chart ring-time --out time.svg --width 900 --height 600");
  REQUIRE(svg.code == 0);
  CHECK(contains(flashlab::test::slurp(scratch_file("time.svg")), "LLaMA-2-7B"));
}

TEST_CASE("ring --chart: nothing to draw, an unknown chart, flags that do not go together: one line, exit 2, nothing written",
          "[cli][ring][chart]") {
  const std::string all = results_file("all.json", every);
  const std::string no_single = results_file("no-single.json", multi_gpu);
  const std::string single = results_file("single.json", one_gpu);
  struct Bad {
    std::string args, message;
  };
  const Bad bad = GENERATE_COPY(values<Bad>({
      {"--results " + all + " --chart ring-heatmap --out x.png",
       "--chart: unknown chart 'ring-heatmap' (expected ring-scaling or ring-time)"},
      {"--results " + no_single + " --chart ring-scaling --out x.png",
       "--chart ring-scaling: no-single.json: the file holds no P = 1 run of the attention its multi-GPU runs measured"},
      {"--results " + single + " --chart ring-time --out x.png",
       "--chart ring-time: single.json: the file holds no zig-zag runs of more than one GPU"},
      {"--results " + all + " --chart ring-time --layout contiguous --steps pairwise --out x.png",
       "the file holds no contiguous runs of more than one GPU with pairwise steps (it has fused steps)"},
      {"--results " + all + " --chart ring-time --pass fwd+bwd --out x.png", "--pass: 'fwd+bwd': a ring chart draws one pass"},
      {"--results " + all + " --chart ring-time --steps fusion --out x.png", "--steps: 'fusion' is not fused or pairwise"},
      {"--results " + all + " --chart ring-time --out x.txt", "--out: 'x.txt' must end in .svg, .png, .pdf or .csv"},
      {"--results " + all + " --chart ring-time", "--chart: give --out FILE"},
      {"--results " + all + " --chart ring-time --json --out x.png", "--json: --chart writes one chart to --out"},
      {"--chart ring-time --out x.png", "--chart draws the runs of a results file: give --results FILE"},
      {"--results " + all + " --out x.png", "--out belongs to --chart"},
      {"--results missing.json --chart ring-time --out x.png", "--results: missing.json: cannot open for reading"},
  }));
  const Run r = run_flashlab("ring " + bad.args);
  INFO(bad.args << "\n" << r.out << r.err);
  CHECK(r.code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(contains(r.err, bad.message));
  CHECK_FALSE(fs::exists(scratch_file("x.png")));
  CHECK_FALSE(fs::exists(scratch_file("x.txt")));
}

}  // namespace test_ring_chart_cli_cases
