// The ring charts of a results file, built from a small hand-made file: which
// runs become which series and bars, their values (exactly the rows'), the
// notes, and the cases with nothing to draw.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/analysis/charts/ring_charts.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "ring_chart_fixture.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::analysis::test::ring_chart_file;

namespace {

const Series& named(const ChartSpec& c, const std::string& name) {
  const auto it = std::find_if(c.series.begin(), c.series.end(), [&](const Series& s) { return s.name == name; });
  if (it == c.series.end()) FAIL("no series '" << name << "'");
  return *it;
}

std::vector<std::string> names(const ChartSpec& c) {
  std::vector<std::string> out;
  for (const Series& s : c.series) out.push_back(s.name);
  return out;
}

bool has_note(const ChartSpec& c, const std::string& text) {
  return std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("ring-scaling: a series per model, steps and pass, at N / P, the rows' efficiency", "[ring][chart]") {
  const sim::MeasuredRuns f = ring_chart_file();
  const ChartSpec c = ring_scaling_chart(f);
  CHECK(c.id == "ring-scaling");
  CHECK(c.x.scale == Scale::log2);
  CHECK(c.x.format == TickFormat::binary);
  REQUIRE(c.ref_lines.size() == 1);
  CHECK(c.ref_lines[0].value == 1.0);
  CHECK_FALSE(c.ref_lines[0].vertical);
  // Zig-zag only: the contiguous run 4 is not drawn; the machine from the meta.
  CHECK(c.subtitle == "zig-zag · 2× NVIDIA H200 (NVLink, 18 links between every pair: NV18) · P=2 B=1 bf16 causal · "
                      "fused and pairwise steps");
  // Models in file order, fused before pairwise, forward before backward.
  CHECK(names(c) == std::vector<std::string>{"LLaMA-2-7B fwd, fused", "LLaMA-2-7B bwd, fused", "LLaMA-2-7B fwd, pairwise",
                                             "LLaMA-2-7B bwd, pairwise", "Llama-3.2-1B fwd, fused",
                                             "Llama-3.2-1B bwd, fused"});
  // The points: x = N / P, y = t(P = 1) / (P · t), exactly as ring_rows has them.
  const Series& fwd = named(c, "LLaMA-2-7B fwd, fused");
  CHECK(fwd.x == std::vector<double>{4096});
  CHECK(fwd.y == std::vector<double>{10.0 / (2 * 6.0)});
  CHECK(named(c, "LLaMA-2-7B bwd, fused").y == std::vector<double>{30.0 / (2 * 18.0)});
  CHECK(named(c, "LLaMA-2-7B fwd, pairwise").y == std::vector<double>{10.0 / (2 * 8.0)});
  CHECK(named(c, "Llama-3.2-1B bwd, fused").y == std::vector<double>{12.0 / (2 * 9.0)});
  for (const RingRow& row : ring_rows(f))
    if (row.run == 1 && row.pass == sim::Pass::fwd) CHECK(fwd.y[0] == *row.scaling_efficiency);
  // Styles: forward solid, backward dashed; pairwise fainter and dotted; a colour per model.
  CHECK(fwd.dash == Dash::solid);
  CHECK(named(c, "LLaMA-2-7B bwd, fused").dash == Dash::dashed);
  const Series& pw = named(c, "LLaMA-2-7B fwd, pairwise");
  CHECK(pw.dash == Dash::dotted);
  CHECK(pw.color.a < fwd.color.a);
  CHECK(with_alpha(pw.color, 255) == fwd.color);
  CHECK_FALSE(named(c, "Llama-3.2-1B fwd, fused").color == fwd.color);
  // What is not drawn, and against what the efficiency is measured, said.
  CHECK(has_note(c, "t(P = 1): the file's P = 1 run of the same attention (pairwise steps)"));
  // Llama-3.2-1B has grouped K/V heads and a pairwise P = 1 run: a slow baseline, said.
  CHECK(has_note(c, "the P = 1 run of Llama-3.2-1B ran pairwise and copied the grouped K/V heads"));
  CHECK_FALSE(has_note(c, "LLaMA-2-7B ran pairwise"));  // multi-head: the pairwise P = 1 run is the rung alone
  CHECK(has_note(c, "not drawn, no P = 1 run of the same attention: LLaMA-2-7B N=16K"));
  CHECK(has_note(c, "not drawn: 2 passes not measured"));
}

TEST_CASE("ring-scaling: one pass, one step mode, another layout", "[ring][chart]") {
  const sim::MeasuredRuns f = ring_chart_file();
  RingChartOptions bwd;
  bwd.pass = sim::Pass::bwd;
  CHECK(names(ring_scaling_chart(f, bwd)) ==
        std::vector<std::string>{"LLaMA-2-7B bwd, fused", "LLaMA-2-7B bwd, pairwise", "Llama-3.2-1B bwd, fused"});
  // One step mode: named in the subtitle, not in the series, drawn in full colour.
  RingChartOptions pairwise;
  pairwise.steps = "pairwise";
  const ChartSpec p = ring_scaling_chart(f, pairwise);
  CHECK(names(p) == std::vector<std::string>{"LLaMA-2-7B fwd", "LLaMA-2-7B bwd"});
  CHECK(p.series[0].dash == Dash::solid);
  CHECK(p.series[0].color.a == 255);
  CHECK(p.subtitle.find("· pairwise steps") != std::string::npos);
  CHECK_FALSE(has_note(p, "slower baseline"));  // LLaMA-2-7B alone: no grouped heads
  RingChartOptions contiguous;
  contiguous.layout = sim::RingLayout::contiguous;
  const ChartSpec k = ring_scaling_chart(f, contiguous);
  REQUIRE(k.series.size() == 2);
  CHECK(k.series[0].y == std::vector<double>{10.0 / (2 * 7.0)});
  CHECK(k.subtitle.rfind("contiguous · ", 0) == 0);
}

TEST_CASE("ring-time: a stacked bar per run, shares of its time, the parts in ms", "[ring][chart]") {
  const sim::MeasuredRuns f = ring_chart_file();
  const ChartSpec c = ring_time_chart(f);
  CHECK(c.id == "ring-time");
  CHECK(c.kind == ChartKind::bars);
  CHECK(c.stacked);
  // The fused zig-zag runs of more than one GPU by default, forward; the OOM run left out with a note.
  CHECK(c.categories == std::vector<std::string>{"LLaMA-2-7B 8K", "LLaMA-2-7B 16K", "Llama-3.2-1B 8K"});
  CHECK(c.title.find("forward") != std::string::npos);
  CHECK(c.subtitle.find("fused steps") != std::string::npos);
  CHECK(has_note(c, "not drawn: 1 run not measured"));
  CHECK(names(c) == std::vector<std::string>{"rung", "other compute", "exposed communication", "rest of the time"});
  // Run 1's forward: 6 ms, compute 5, rung 4, exposed 0.5.
  const double t = 6, compute = 6.0 * 5 / 6, rung = 6.0 * 4 / 6, exposed = 6.0 / 12;
  CHECK(c.series[0].x == std::vector<double>{0, 1, 2});
  CHECK(c.series[0].y[0] == 100.0 * rung / t);
  CHECK(c.series[1].y[0] == 100.0 * (compute - rung) / t);
  CHECK(c.series[2].y[0] == 100.0 * exposed / t);
  CHECK(c.series[3].y[0] == 100.0 * (t - compute - exposed) / t);
  CHECK(c.series[0].point_labels[0] == "4 ms");
  CHECK(c.series[2].point_labels[0] == "0.5 ms");
  // Each stack is the whole time, which is written above it.
  for (double top : stack_tops(c)) CHECK(top == Approx(100.0));
  REQUIRE(c.annotations.size() == 3);
  CHECK(c.annotations[1].text == "20 ms");
  CHECK(c.annotations[1].x == 1);
  CHECK(c.annotations[1].y == 100);
}

TEST_CASE("ring-time: the backward, a wait longer than the compute leaves, a run without rung times", "[ring][chart]") {
  sim::MeasuredRuns f = ring_chart_file();
  // Run 1's backward: 18 ms, compute 15, and another GPU waited 4 ms: at most 3 ms can be exposed on the time.
  f.runs[1].parallel_part().backward->timeline.exposed_comm_ms = 4;
  f.runs[6].parallel_part().backward->timeline.rung_ms = -1;  // an older file: the rung's time not recorded
  RingChartOptions o;
  o.pass = sim::Pass::bwd;
  const ChartSpec c = ring_time_chart(f, o);
  CHECK(c.title.find("backward") != std::string::npos);
  CHECK(names(c) == std::vector<std::string>{"rung", "compute (rung not recorded)", "other compute",
                                             "exposed communication", "rest of the time"});
  const Series& exposed = named(c, "exposed communication");
  const Series& rest = named(c, "rest of the time");
  CHECK(exposed.y[0] == 100.0 * (18 - 15.0) / 18);
  CHECK(exposed.point_labels[0] == "3 ms");
  CHECK(rest.y[0] == 0);
  CHECK(has_note(c, "in 1 bar the longest wait"));
  // Run 6: its compute whole, at its category (the third).
  const Series& whole = named(c, "compute (rung not recorded)");
  CHECK(whole.x == std::vector<double>{2});
  CHECK(whole.y == std::vector<double>{100.0 * (9.0 * 5 / 6) / 9});
  CHECK(named(c, "rung").x == std::vector<double>{0, 1});
  // Pairwise by choice: its one run.
  o.steps = "pairwise";
  CHECK(ring_time_chart(f, o).categories == std::vector<std::string>{"LLaMA-2-7B 8K"});
}

TEST_CASE("ring charts with nothing to draw say why, in one line", "[ring][chart]") {
  const sim::MeasuredRuns f = ring_chart_file();
  auto message = [](const std::string& id, const sim::MeasuredRuns& runs, const RingChartOptions& o = {}) {
    try {
      build_ring_chart(id, runs, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("ring-heatmap", f) == "unknown chart 'ring-heatmap' (expected ring-scaling or ring-time)");
  // Only P = 1 runs: nothing of more than one GPU.
  sim::MeasuredRuns single = f;
  single.runs.erase(std::remove_if(single.runs.begin(), single.runs.end(),
                                   [](const sim::MeasuredRun& r) { return r.problem.gpus() > 1; }),
                    single.runs.end());
  for (const RingChartEntry& e : ring_chart_table())
    CHECK(message(std::string(e.id), single) == "the file holds no zig-zag runs of more than one GPU");
  // No P = 1 runs: the time chart draws, the scaling cannot.
  sim::MeasuredRuns multi = f;
  multi.runs.erase(std::remove_if(multi.runs.begin(), multi.runs.end(),
                                  [](const sim::MeasuredRun& r) { return r.problem.gpus() == 1; }),
                   multi.runs.end());
  CHECK(message("ring-scaling", multi).find("no P = 1 run of the attention its multi-GPU runs measured") !=
        std::string::npos);
  CHECK_NOTHROW(build_ring_chart("ring-time", multi));
  // Steps or a layout the file does not have: said, with what it has.
  RingChartOptions o;
  o.steps = "pairwise";
  o.layout = sim::RingLayout::contiguous;
  CHECK(message("ring-time", f, o) ==
        "the file holds no contiguous runs of more than one GPU with pairwise steps (it has fused steps)");
  for (const RingChartEntry& e : ring_chart_table()) {
    CHECK(find_ring_chart(e.id) == &e);
    CHECK(e.build(single, {}).empty());  // the builder itself: an empty chart whose first note says why
  }
}

TEST_CASE("the GPUs and links of a run: names, count, the topology's summary", "[ring][chart]") {
  const sim::MeasuredRuns f = ring_chart_file();
  CHECK(gpus_and_links(f.meta.parallel_part().gpu_names, f.meta.parallel_part().gpu_topology) == "2× NVIDIA H200 (NVLink, 18 links between every pair)");
  CHECK(gpus_and_links(f.meta.parallel_part().gpu_names, f.meta.parallel_part().gpu_topology, true) ==
        "2× NVIDIA H200 (NVLink, 18 links between every pair: NV18)");
  CHECK(uniform_link_code(f.meta.parallel_part().gpu_topology) == "NV18");
  CHECK(uniform_link_code(sim::parse_nvidia_smi_topo("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV18\tSYS\nGPU1\tNV18\t X \tSYS\n"
                                                     "GPU2\tSYS\tSYS\t X \n"))
            .empty());
  CHECK(gpus_and_links({"A", "B", "A"}, {}) == "3× A, B");
  CHECK(gpus_and_links({}, f.meta.parallel_part().gpu_topology).empty());
}
