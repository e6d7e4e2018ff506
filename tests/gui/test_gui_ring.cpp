// The multi-GPU view's model, without a display: its inputs -> the ring's
// simulation (and invalid inputs -> nothing stale, the reason said), the
// chunk-pair matrix and the step-through against the layout's definition, a
// measured run matched to its problem and placed beside the prediction, and
// the scenario keys.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>

#include "../analysis/ring_chart_fixture.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "presenter/presenter_stages.hpp"
#include "model/ring_model.hpp"
#include "presenter/scenario.hpp"

#ifndef FLASHLAB_TEST_DATA
#error "FLASHLAB_TEST_DATA must name tests/data"
#endif

using namespace flashlab;
using namespace flashlab::gui;
namespace fs = std::filesystem;

namespace {

// The ring's part of the inputs, as the cases below edit it.
using RingInputs = Inputs::Ring;

const std::string kExample = std::string(FLASHLAB_TEST_DATA) + "/ring-results-example.json";

// AppState owns cursors, a worker thread and a mutex: built in place, never copied.
std::unique_ptr<AppState> ring_state(const std::function<void(RingInputs&)>& edit = {}) {
  auto s = std::make_unique<AppState>();
  s->inputs.hw_preset = "H100-SXM5-80GB";
  recompute(*s);
  if (edit) edit(s->inputs.ring);
  recompute_ring(*s);
  return s;
}

bool blamed(const RingModel& m, const char* key) {
  return std::find(m.bad_fields.begin(), m.bad_fields.end(), key) != m.bad_fields.end();
}

int holder(const sim::RingPartition& part, int chunk) {
  for (int r = 0; r < part.gpus; ++r)
    for (int c : part.held[static_cast<size_t>(r)])
      if (c == chunk) return r;
  return -1;
}

// A measured file of docs/results/ring opened in the GUI, its model valid and
// placed on one of the file's runs; null (with a warning) when the checkout
// lacks it.
std::unique_ptr<AppState> opened_ring_results(const char* name) {
  const fs::path file = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "ring" / name;
  if (!fs::exists(file)) {
    WARN("no " << file.string() << ": skipped");
    return nullptr;
  }
  auto s = ring_state();
  open_ring_results(*s, file.string());
  recompute_ring(*s);
  REQUIRE(s->ring.model.valid);
  REQUIRE(s->ring.model.measured.run >= 0);
  return s;
}

}  // namespace

TEST_CASE("the ring's model follows its inputs: the problem, the lanes, the matrix", "[gui][ring]") {
  auto ps = ring_state();
  AppState& s = *ps;
  RingModel& m = s.ring.model;
  REQUIRE(m.valid);
  CHECK(m.errors.empty());
  CHECK(!ring_needs_recompute(s));
  // The default: LLaMA-2-7B's attention from the models' table, 8 GPUs zig-zag, the app's hardware.
  const sim::AttentionModel* llama = sim::find_attention_model("llama2-7b");
  REQUIRE(llama);
  CHECK(m.problem.heads == llama->heads);
  CHECK(m.problem.h_kv() == llama->kv_heads);
  CHECK(m.problem.head_dim == llama->head_dim);
  CHECK(m.problem.seq_q == 32768);
  CHECK(m.problem.gpus() == 8);
  CHECK(m.compute.hw.name == "H100-SXM5-80GB");
  // What is drawn is the simulator's: one lane of 8 rows, every event a bar (empty computes aside).
  REQUIRE(m.lanes.size() == 1);
  const RingLane& lane = m.lanes[0];
  CHECK(lane.gpus == 8);
  CHECK(lane.first_bar.size() == 9);
  CHECK(lane.end_s == Approx(m.simulation.time_s));
  CHECK(m.axis_end_s == Approx(m.simulation.time_s));
  CHECK(lane.backward_start_s < 0);
  for (int r = 0; r < 8; ++r)
    for (size_t k = lane.first_bar[static_cast<size_t>(r)]; k < lane.first_bar[static_cast<size_t>(r) + 1]; ++k)
      CHECK(lane.bars[k].gpu == r);
  // The matrix: every (query chunk, key chunk) pair computed once, by the GPU holding the query chunk,
  // at the step it holds the key chunk, with the layout's visibility.
  const sim::RingPartition& part = m.simulation.partition;
  REQUIRE(m.chunks == 16);
  REQUIRE(m.cells.size() == 256u);
  sim::i64 pairs = 0;
  for (int q = 0; q < 16; ++q)
    for (int k = 0; k < 16; ++k) {
      const RingPairCell& c = m.cells[static_cast<size_t>(q * 16 + k)];
      const int r = holder(part, q), owner = holder(part, k);
      CHECK(c.gpu == r);
      CHECK(sim::ring_kv_source(r, c.step, 8) == owner);
      CHECK(c.visibility == sim::chunk_visibility(part.chunks[static_cast<size_t>(q)], part.chunks[static_cast<size_t>(k)], true));
      pairs += c.pairs;
    }
  CHECK(pairs == 32768LL * 32769 / 2);
  CHECK(std::accumulate(m.pairs_total.begin(), m.pairs_total.end(), sim::i64{0}) == pairs);

  // An input changed: the model is stale until recomputed, then follows.
  s.inputs.ring.gpus = "4";
  s.inputs.ring.compare_layouts = true;
  s.inputs.ring.passes = sim::PassSelection::fwd_bwd;
  CHECK(ring_needs_recompute(s));
  const auto gen = m.generation;
  recompute_ring(s);
  REQUIRE(m.valid);
  CHECK(m.generation == gen + 1);
  CHECK(m.problem.gpus() == 4);
  REQUIRE(m.lanes.size() == 2);  // the other layout beneath
  CHECK(m.other_layout->problem.layout() == sim::RingLayout::contiguous);
  CHECK(m.lanes[0].backward_start_s == Approx(m.simulation.forward.end_s));
  CHECK(m.axis_end_s == Approx(std::max(m.simulation.time_s, m.other_layout->time_s)));
  // The app's hardware: changing it in the one-GPU controls makes the ring stale too.
  s.inputs.hw_preset = "H200-SXM-141GB";
  recompute(s);
  CHECK(ring_needs_recompute(s));
  recompute_ring(s);
  CHECK(m.compute.hw.name == "H200-SXM-141GB");
  // A custom shape.
  s.inputs.ring.model = "custom";
  s.inputs.ring.heads = "16";
  s.inputs.ring.kv_heads = "4";
  s.inputs.ring.head_dim = "64";
  recompute_ring(s);
  REQUIRE(m.valid);
  CHECK(m.problem.heads == 16);
  CHECK(m.problem.h_kv() == 4);
  CHECK(m.problem.head_dim == 64);
}

TEST_CASE("invalid ring inputs clear the model and say why, whatever the values", "[gui][ring]") {
  struct Case {
    const char* what;
    std::function<void(RingInputs&)> edit;
    const char* field;    // the field drawn red
    const char* message;  // in the first error
  };
  const std::vector<Case> cases = {
      {"P zero", [](RingInputs& in) { in.gpus = "0"; }, "gpus", "GPUs P"},
      {"P beyond the view", [](RingInputs& in) { in.gpus = "65"; }, "gpus", "1 to 64"},
      {"P junk", [](RingInputs& in) { in.gpus = "abc"; }, "gpus", "not a whole number"},
      {"fewer tokens than chunks", [](RingInputs& in) { in.seq = "7"; }, "seq", "cannot fill"},
      {"N junk", [](RingInputs& in) { in.seq = "12abc"; }, "seq", "sequence length N"},
      {"B too large", [](RingInputs& in) { in.batch = "99999999999999999999"; }, "batch", "batch B"},
      {"sizes overflow the counters", [](RingInputs& in) { in.seq = "4G"; in.batch = "1024"; }, "seq", "64-bit"},
      {"H not a multiple of H_kv", [](RingInputs& in) { in.model = "custom"; in.heads = "32"; in.kv_heads = "5"; }, "kv_heads", "multiple"},
      {"H_kv above H", [](RingInputs& in) { in.model = "custom"; in.heads = "8"; in.kv_heads = "16"; }, "kv_heads", "exceed"},
      {"unknown model", [](RingInputs& in) { in.model = "gpt-9"; }, "model", "unknown model"},
      {"efficiency above 1", [](RingInputs& in) { in.efficiency = "1.5"; }, "efficiency", "(0, 1]"},
      {"efficiency zero", [](RingInputs& in) { in.efficiency = "0"; }, "efficiency", "(0, 1]"},
      {"efficiency NaN", [](RingInputs& in) { in.efficiency = "NaN"; }, "efficiency", "not a number"},
      {"efficiency junk", [](RingInputs& in) { in.efficiency = "fast"; }, "efficiency", "not a number"},
      {"no GPU in a node", [](RingInputs& in) { in.gpus_per_node = "0"; }, "gpus_per_node", "GPUs per node"},
      {"unknown link", [](RingInputs& in) { in.intra = "no-such-link"; }, "intra", "intra-node link"},
      {"missing link file", [](RingInputs& in) { in.inter = "/nonexistent/link.json"; }, "inter", "inter-node link"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto ps = ring_state();
    AppState& s = *ps;
    REQUIRE(s.ring.model.valid);
    const RingInputs good = s.inputs.ring;
    c.edit(s.inputs.ring);
    recompute_ring(s);
    const RingModel& m = s.ring.model;
    CHECK(!m.valid);
    REQUIRE(!m.errors.empty());
    INFO("first error: " << m.errors.front());
    CHECK(m.errors.front().find(c.message) != std::string::npos);
    CHECK(blamed(m, c.field));
    // Nothing stale to draw.
    CHECK(m.lanes.empty());
    CHECK(m.cells.empty());
    CHECK(!m.measured.placement);
    // Keys and the step-through do nothing on an invalid model.
    ring_step_by(s, 1);
    ring_seek_step(s, 3);
    CHECK(!s.ring.model.valid);
    // A valid value brings everything back.
    s.inputs.ring = good;
    recompute_ring(s);
    CHECK(s.ring.model.valid);
  }
  // The app's hardware missing: the ring says so too.
  auto ps = ring_state();
  ps->inputs.hw_preset = "no-such-gpu";
  recompute(*ps);
  recompute_ring(*ps);
  CHECK(!ps->ring.model.valid);
  REQUIRE(!ps->ring.model.errors.empty());
  CHECK(ps->ring.model.errors.front().find("hardware") != std::string::npos);
}

TEST_CASE("the step-through: which K, V each GPU holds, the pairs so far, the contiguous layout's imbalance", "[gui][ring]") {
  auto ps = ring_state([](RingInputs& in) {
    in.gpus = "4";
    in.layout = sim::RingLayout::contiguous;
    in.causal = true;
  });
  AppState& s = *ps;
  RingModel& m = s.ring.model;
  REQUIRE(m.valid);
  REQUIRE(m.step.step == 0);
  const int P = 4;
  for (int step = 0; step < P; ++step) {
    ring_seek_step(s, step);
    CHECK(m.step.step == step);
    for (int r = 0; r < P; ++r) CHECK(m.step.view.kv_owner[static_cast<size_t>(r)] == sim::ring_kv_source(r, step, P));
  }
  // At the end every GPU has done its whole pass; GPU 0 (its own diagonal only) was done after step 0.
  ring_seek_step(s, 99);
  CHECK(m.step.step == P - 1);
  for (int r = 0; r < P; ++r) CHECK(m.step.pairs_so_far[static_cast<size_t>(r)] == m.pairs_total[static_cast<size_t>(r)]);
  ring_seek_step(s, 0);
  CHECK(m.step.pairs_so_far[0] == m.pairs_total[0]);
  CHECK(m.step.blocks_so_far[0] == 1);
  CHECK(m.pairs_total[3] > 6 * m.pairs_total[0]);  // the last GPU sees every earlier chunk
  ring_seek_step(s, -5);
  CHECK(m.step.step == 0);
  ring_step_by(s, 2);
  CHECK(m.step.step == 2);
  CHECK(m.step.skipped_so_far[0] == 2);  // GPU 0 met K, V of GPUs 3 and 2: both after its queries
  // Zig-zag: the same work on every GPU.
  s.inputs.ring.layout = sim::RingLayout::zigzag;
  recompute_ring(s);
  REQUIRE(m.valid);
  CHECK(m.step.step == 2);  // the step is kept
  const auto mm = std::minmax_element(m.pairs_total.begin(), m.pairs_total.end());
  CHECK(*mm.first == *mm.second);
  // Fewer GPUs: the step is clamped to the new last one.
  s.inputs.ring.gpus = "2";
  recompute_ring(s);
  CHECK(m.step.step == 1);
  // A step asked for before the model exists (a scenario) lands once it does.
  s.ring.step_request = 1;
  s.inputs.ring.gpus = "abc";
  recompute_ring(s);
  apply_ring_step_request(s);
  CHECK(s.ring.step_request == 1);
  s.inputs.ring.gpus = "8";
  recompute_ring(s);
  apply_ring_step_request(s);
  CHECK(m.step.step == 1);
  CHECK(s.ring.step_request == -1);
}

TEST_CASE("a measured ring run is matched to the problem on screen and placed beside it", "[gui][ring]") {
  REQUIRE(fs::exists(kExample));
  const sim::MeasuredRuns runs = analysis::ring_results_from_file(kExample);
  auto ps = ring_state([](RingInputs& in) {
    in.gpus = "4";
    in.passes = sim::PassSelection::fwd_bwd;
  });
  AppState& s = *ps;
  open_ring_results(s, kExample);
  CHECK(!s.view.status_is_error);
  CHECK(s.view.status.find("EXAMPLE") != std::string::npos);
  REQUIRE(s.ring.results.have);
  // The model's score on the whole file, as flashlab ring --results ends.
  const analysis::RingScore score = analysis::score_ring_file(runs, analysis::ring_file_model(runs));
  REQUIRE(score.time.count > 0);
  CHECK(s.ring.results.score_text.find("every run of the file: pass time mean " +
                                      sim::fixed(100 * score.time.mean_abs, 1) + " %") == 0);
  CHECK(s.ring.results.score_text.find("(" + std::to_string(score.time.count) + ")") != std::string::npos);
  CHECK(ring_needs_recompute(s));  // a new file: match again
  recompute_ring(s);
  RingModel& m = s.ring.model;
  REQUIRE(m.valid);
  // The file's run of exactly this problem (P = 4, zig-zag, forward + backward).
  REQUIRE(m.measured.run >= 0);
  const sim::MeasuredRun& run = runs.runs[static_cast<size_t>(m.measured.run)];
  CHECK(run.problem.gpus() == 4);
  CHECK(run.problem.layout() == sim::RingLayout::zigzag);
  CHECK(run.problem.backward());
  CHECK(sim::same_attention(run.problem, m.problem));
  // Drawn under the simulation, labelled as the example it is.
  REQUIRE(m.lanes.size() == 2);
  CHECK(m.lanes[1].measured);
  CHECK(m.lanes[1].example);
  CHECK(m.lanes[1].title.find("EXAMPLE") == 0);
  CHECK(m.measured.warning.find("EXAMPLE, NOT A MEASUREMENT") == 0);
  CHECK(m.lanes[1].backward_start_s == Approx(run.time_ms_median * 1e-3));
  // The prediction drawn is the placement's: calibrated from the file's P = 1 run, with its errors.
  REQUIRE(m.measured.placement);
  CHECK(m.measured.placement->calibration.from_single_gpu_run);
  CHECK(m.compute.efficiency == Approx(m.measured.placement->calibration.forward));
  CHECK(m.simulation.time_s == Approx(m.measured.placement->simulation.time_s));
  REQUIRE(m.measured.placement->passes.size() == 2);
  REQUIRE(m.measured.errors.size() == 2);
  CHECK(m.measured.errors[0].placed_steps > 0);
  bool placed_bar = false;
  for (const RingBar& b : m.lanes[1].bars) placed_bar = placed_bar || (b.placed && std::isfinite(b.error));
  CHECK(placed_bar);
  // Without calibration: the typed efficiency.
  s.inputs.ring.calibrate = false;
  s.inputs.ring.efficiency = "0.8";
  recompute_ring(s);
  REQUIRE(m.measured.placement);
  CHECK(m.compute.efficiency == Approx(0.8));

  // Another problem: no run of it, and the view says why.
  s.inputs.ring.passes = sim::PassSelection::fwd;
  recompute_ring(s);
  REQUIRE(m.valid);
  CHECK(m.measured.run == -1);
  CHECK(!m.measured.placement);
  CHECK(m.lanes.size() == 1);
  CHECK(m.measured.why_none.find("no run in") == 0);
  // Matching is on every field of the problem, the passes included.
  for (size_t k = 0; k < runs.runs.size(); ++k) {
    CHECK(match_ring_run(runs, runs.runs[k].problem) == static_cast<int>(k));
    sim::AttentionProblem p = runs.runs[k].problem;
    p.seq_q *= 2;
    CHECK(match_ring_run(runs, p) == -1);
    p = runs.runs[k].problem;
    p.parallel_part().passes = p.backward() ? sim::PassSelection::fwd : sim::PassSelection::fwd_bwd;
    CHECK(match_ring_run(runs, p) == -1);
  }
  // Picking a run sets the ring's problem to its own: the pick is what is shown.
  ring_inputs_from_problem(s.inputs.ring, runs.runs[3].problem);
  s.inputs.ring.run_choice = 3;
  recompute_ring(s);
  CHECK(m.measured.run == 3);
  CHECK(m.problem.gpus() == runs.runs[3].problem.gpus());
  CHECK(m.problem.layout() == runs.runs[3].problem.layout());
  CHECK(s.inputs.ring.model == "llama2-7b");
}

TEST_CASE("a ring results file that cannot be read: the status says why, nothing is drawn from it", "[gui][ring]") {
  auto ps = ring_state();
  AppState& s = *ps;
  open_ring_results(s, "/nonexistent/ring.json");
  CHECK(s.view.status_is_error);
  CHECK(s.view.status.find("cannot open ring results") == 0);
  CHECK(!s.ring.results.have);
  CHECK(!s.ring.results.error.empty());
  const fs::path bad = fs::temp_directory_path() / ("flashlab-ring-bad-" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << R"({"format": "flashlab-ring-results/1", "runs": [{"problem": {"batch": 1}}]})";
  open_ring_results(s, bad.string());
  CHECK(s.view.status_is_error);
  CHECK(s.ring.results.error.find("runs[0].problem") != std::string::npos);
  CHECK(!s.ring.results.have);
  fs::remove(bad);
  recompute_ring(s);
  CHECK(s.ring.model.valid);
  CHECK(s.ring.model.lanes.size() == 1);
}

TEST_CASE("scenarios: the ring's keys, its stages, and bad values as errors", "[gui][ring][scenario]") {
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  apply_settings(s, nlohmann::json::parse(R"({"workspace": "ring", "ring": {"model": "llama3.2-1b", "seq": "64K",
      "gpus": 16, "gpus_per_node": 4, "layout": "contiguous", "causal": false, "pass": "fwd+bwd", "dtype": "fp16",
      "intra": "pcie5", "inter": "ib-ndr", "efficiency": 0.5, "compare_layouts": true, "calibrate": false, "step": 3}})"),
                 "");
  CHECK(s.view.workspace == Workspace::ring);
  const RingInputs& in = s.inputs.ring;
  CHECK(in.model == "llama3.2-1b");
  CHECK(in.seq == "64K");
  CHECK(in.gpus == "16");
  CHECK(in.gpus_per_node == "4");
  CHECK(in.layout == sim::RingLayout::contiguous);
  CHECK(!in.causal);
  CHECK(in.passes == sim::PassSelection::fwd_bwd);
  CHECK(in.dtype == sim::DType::fp16);
  CHECK(in.intra == "pcie5");
  CHECK(in.efficiency == "0.5");
  CHECK(in.compare_layouts);
  CHECK(!in.calibrate);
  CHECK(s.ring.step_request == 3);
  recompute(s);
  recompute_ring(s);
  apply_ring_step_request(s);
  REQUIRE(s.ring.model.valid);
  CHECK(s.ring.model.step.step == 3);
  CHECK(s.ring.model.topology.intra.id == "pcie5");

  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"gpu": 4}})"), ""), Catch::Contains("unknown key ring.gpu"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"layout": "spiral"}})"), ""), Catch::Contains("ring.layout"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"pass": "bwd"}})"), ""), Catch::Contains("ring.pass"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"model": "gpt-9"}})"), ""), Catch::Contains("ring.model"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"step": -1}})"), ""), Catch::Contains("ring.step"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring": {"steps": "fusion"}})"), ""),
                    Catch::Contains("ring.steps must be \"fused\" or \"pairwise\""));
  apply_settings(s, nlohmann::json::parse(R"({"ring": {"steps": "pairwise"}})"), "");
  CHECK(s.inputs.ring.steps == "pairwise");
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"workspace": "gpus"})"), ""), Catch::Contains("workspace"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse(R"({"ring_results": "/nonexistent/r.json"})"), ""),
                    Catch::Contains("cannot open ring results"));
  // Values the model judges are kept as typed, and said invalid there.
  apply_settings(s, nlohmann::json::parse(R"({"ring": {"gpus": "100"}})"), "");
  recompute_ring(s);
  CHECK(!s.ring.model.valid);

  // The ring's stages, and the results file with a run picked by its number.
  const Scene sc = parse_scene(nlohmann::json::parse(R"({"title": "t", "stage": "ring-step", "state": {"ring": {"step": 1}}})"));
  CHECK(sc.stage == "ring-step");
  for (const char* st : {"ring", "ring-timeline", "ring-step"}) CHECK(find_stage(st)->workspace == Workspace::ring);
  CHECK_THROWS_WITH(parse_scene(nlohmann::json::parse(R"({"title": "t", "stage": "rings"})")), Catch::Contains("ring-timeline"));
  auto pt = std::make_unique<AppState>();
  apply_settings(*pt, nlohmann::json{{"ring_results", kExample}, {"ring", {{"gpus", 8}, {"pass", "fwd+bwd"}, {"layout", "contiguous"}, {"run", 4}}}}, "");
  CHECK(pt->inputs.ring.run_choice == 3);
  pt->inputs.hw_preset = "H100-SXM5-80GB";
  recompute(*pt);
  recompute_ring(*pt);
  CHECK(pt->ring.model.measured.run == 3);
}

TEST_CASE("the ring's lecture loads, and every scene's ring is valid", "[gui][ring][scenario]") {
  const Scenario sc = load_scenario((fs::path(sim::assets_dir()) / "scenarios" / "lecture-ring.json").string());
  REQUIRE(sc.scenes.size() >= 5);
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  apply_settings(s, sc.settings, sc.base_dir);
  CHECK(s.view.workspace == Workspace::ring);
  int gpus_seen = 0;
  for (const Scene& scene : sc.scenes) {
    INFO(scene.title);
    REQUIRE(find_stage(scene.stage));
    CHECK(find_stage(scene.stage)->workspace == Workspace::ring);
    apply_settings(s, scene.state, sc.base_dir);
    recompute(s);
    recompute_ring(s);
    apply_ring_step_request(s);
    REQUIRE(s.ring.model.valid);
    gpus_seen = std::max(gpus_seen, s.ring.model.problem.gpus());
  }
  CHECK(gpus_seen == 32);
}

TEST_CASE("a run of virtual GPUs on one device is drawn, and said to be one device", "[gui][ring]") {
  const fs::path file = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "ring" / "h100-virtual-gpus.json";
  if (!fs::exists(file)) {
    WARN("no " << file.string() << ": skipped");
    return;
  }
  const sim::MeasuredRuns runs = analysis::ring_results_from_file(file.string());
  // The first run of more than one GPU.
  const auto it = std::find_if(runs.runs.begin(), runs.runs.end(), [](const sim::MeasuredRun& r) {
    return r.problem.gpus() > 1 && r.status == sim::RunStatus::ok && r.parallel_part().transport == "local";
  });
  REQUIRE(it != runs.runs.end());
  auto ps = ring_state();
  AppState& s = *ps;
  open_ring_results(s, file.string());
  ring_inputs_from_problem(s.inputs.ring, it->problem);
  recompute_ring(s);
  const RingModel& m = s.ring.model;
  REQUIRE(m.valid);
  REQUIRE(m.measured.run == static_cast<int>(it - runs.runs.begin()));
  CHECK(m.measured.warning.find("ONE device") != std::string::npos);
  REQUIRE(m.lanes.size() == 2);
  CHECK(m.lanes[1].title.find("ONE device") != std::string::npos);
  CHECK(!m.lanes[1].example);
}

TEST_CASE("a run is its problem and its steps: the file opens on a fused run, either mode can be picked", "[gui][ring]") {
  // The charts' small file: 7B on 1 and 2 GPUs at 8K (fused and pairwise), 16K fused, 1B; NV18 between the pair.
  const sim::MeasuredRuns runs = analysis::test::ring_chart_file();
  const fs::path file = fs::temp_directory_path() / ("flashlab-gui-ring-steps-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << analysis::ring_results_to_json(runs);
  auto ps = ring_state();  // the default problem (8 GPUs, 32K): not in the file
  AppState& s = *ps;
  open_ring_results(s, file.string());
  fs::remove(file);
  REQUIRE(s.ring.results.have);
  // The file's first fused run of more than one GPU becomes the problem, and the status says which.
  CHECK(ring_run_to_open(runs) == 1);
  CHECK(ring_run_to_open(runs, "pairwise") == 2);
  CHECK(s.inputs.ring.run_choice == 1);
  CHECK(s.inputs.ring.steps == "fused");
  CHECK(s.inputs.ring.gpus == "2");
  CHECK(s.inputs.ring.seq == "8192");
  CHECK(s.view.status.find("showing run 2: LLaMA-2-7B, N 8K, 2 GPUs zig-zag, fwd+bwd, fused steps") != std::string::npos);
  recompute_ring(s);
  RingModel& m = s.ring.model;
  REQUIRE(m.valid);
  REQUIRE(m.measured.run == 1);
  // Labelled with its steps, its GPUs and the links between them (the file's meta).
  REQUIRE(m.lanes.size() == 2);
  CHECK(m.lanes[1].title == "measured, fused steps: fa3_hopper / fa2_tc_bwd on 2× NVIDIA H200 (NVLink, 18 links between "
                            "every pair: NV18)");
  CHECK(m.measured.label == "fa3_hopper / fa2_tc_bwd, fused steps, on 2× NVIDIA H200, NV18 links over NCCL");
  // The file's P = 1 run beside it: its time and the scaling, the passes summed.
  CHECK(m.measured.single_gpu_ms == 10.0 + 30.0);
  CHECK(m.measured.scaling_efficiency == 40.0 / (2 * (6.0 + 18.0)));
  // Both modes of this problem are in the file; the pairwise one by name.
  CHECK(ring_run_steps(runs, m.problem) == std::vector<std::string>{"fused", "pairwise"});
  s.inputs.ring.steps = "pairwise";
  s.inputs.ring.run_choice = -1;
  recompute_ring(s);
  REQUIRE(m.measured.run == 2);
  CHECK(m.lanes[1].title.find("measured, pairwise steps:") == 0);
  // The placement's prediction launches its steps as the run did.
  CHECK(m.measured.placement->simulation.peak_bytes_per_gpu ==
        [&] {
          sim::RingComputeModel cm = m.compute;
          cm.steps = sim::RingSteps::pairwise;
          return sim::simulate_ring(m.problem, m.topology, cm).peak_bytes_per_gpu;
        }());
  // A problem measured in one mode only: its run, whatever steps were asked for.
  ring_inputs_from_problem(s.inputs.ring, runs.runs[3].problem);
  recompute_ring(s);
  CHECK(m.measured.run == 3);
  CHECK(ring_run_steps(runs, m.problem) == std::vector<std::string>{"fused"});
  CHECK(match_ring_run(runs, runs.runs[1].problem) == 1);                  // no steps asked: fused
  CHECK(match_ring_run(runs, runs.runs[1].problem, "pairwise") == 2);
  CHECK(match_ring_run(runs, runs.runs[1].problem, "pairwise", 1) == 2);   // the pick has other steps
  CHECK(match_ring_run(runs, runs.runs[1].problem, "fused", 2) == 1);
  CHECK(ring_run_label(runs.runs[7], 7) == "run 8: Llama-3.2-1B, N 32K, 2 GPUs zig-zag, fwd+bwd, fused steps (OOM)");
  CHECK(ring_run_label(runs.runs[0], 0) == "run 1: LLaMA-2-7B, N 8K, 1 GPU, fwd+bwd, pairwise steps");

  // Opening a file again keeps the problem on screen when the file has its run.
  ring_inputs_from_problem(s.inputs.ring, runs.runs[6].problem);
  s.inputs.ring.steps.clear();
  s.inputs.ring.run_choice = -1;
  const fs::path again = fs::temp_directory_path() / ("flashlab-gui-ring-again-" + std::to_string(::getpid()) + ".json");
  std::ofstream(again) << analysis::ring_results_to_json(runs);
  open_ring_results(s, again.string());
  fs::remove(again);
  CHECK(s.inputs.ring.model == "llama3.2-1b");
  recompute_ring(s);
  CHECK(m.measured.run == 6);
}

TEST_CASE("the measured 4-GPU file opens on a fused run of 4 H200s, labelled with its links", "[gui][ring]") {
  auto ps = opened_ring_results("h200x4-ring.json");
  if (!ps) return;
  AppState& s = *ps;
  const RingModel& m = s.ring.model;
  const sim::MeasuredRun& run = s.ring.results.runs.runs[static_cast<size_t>(m.measured.run)];
  CHECK(run.problem.gpus() == 4);
  CHECK(run.parallel_part().steps == "fused");
  CHECK(m.lanes.back().title.find("4× NVIDIA H200 (NVLink, 18 links between every pair: NV18)") != std::string::npos);
  CHECK(m.measured.warning.empty());
  CHECK(ring_run_steps(s.ring.results.runs, m.problem).size() == 2);
}

TEST_CASE("a results file with its own host and ring exchange is placed with them and says so", "[gui][ring]") {
  auto ps = opened_ring_results("h200x2-ring-exchange.json");
  if (!ps) return;
  AppState& s = *ps;
  const RingModel& m = s.ring.model;
  const sim::MeasuredRuns& runs = s.ring.results.runs;
  REQUIRE(runs.meta.parallel_part().host.measured());
  REQUIRE_FALSE(runs.meta.parallel_part().ring_exchange.empty());
  // The simulation's link is the measured preset's, with the file's own host and exchange over it.
  CHECK(m.topology.intra.kind == "measured");
  CHECK(m.topology.intra.host.exchange_s == Approx(runs.meta.parallel_part().host.exchange_s));
  CHECK(m.topology.intra.ring_curve.size() == runs.meta.parallel_part().ring_exchange.size());
  REQUIRE(m.measured.placement);
  CHECK_THAT(m.measured.placement->calibration.note, Catch::Contains("the file's own, measured after its runs") &&
                                                       Catch::Contains("the ring's exchange: the file's own"));
}
