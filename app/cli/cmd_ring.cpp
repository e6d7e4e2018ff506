// flashlab ring: sequence-parallel ring attention over P GPUs, simulated step
// by step (sim/ring/ring_schedule.hpp): the passes, each GPU's timeline, the
// extrapolation over GPUs and sequence lengths, and measured ring runs placed
// beside the simulation.
#include <iostream>
#include <sstream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/charts/ring_charts.hpp"
#include "flashlab/analysis/ring/ring_extrapolation.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/input/problem_text.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/problem/attention_models.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "flashlab/sim/hardware/default_hardware.hpp"

namespace flashlab::cli {
namespace {

std::string model_ids() { return sim::attention_model_ids(" | "); }

sim::InterconnectModel load_link(const std::string& flag, const std::string& name) {
  try {
    return sim::load_interconnect(name);
  } catch (const sim::InterconnectError& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

double parse_efficiency(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !(v > 0 && v <= 1))
    throw UsageError(flag + ": '" + text + "' is not a fraction in (0, 1] (the share of its time bound the rung reaches)");
  return v;
}

class RingCommand final : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("ring",
                              "ring attention over P GPUs, simulated step by step: the passes, each GPU's timeline, "
                              "the extrapolation to 32 GPUs, measured runs beside the model");
    app->add_option("--model", model_, "the attention of " + model_ids() + " (sets H, H_kv, d); all: the three (--extrapolate)");
    app->add_option("-b,--batch", batch_, "batch size B")->capture_default_str();
    app->add_option("--heads", heads_, "query heads H (default 32)");
    app->add_option("--kv-heads", kv_heads_, "key/value heads H_kv (grouped-query attention; default H)");
    app->add_option("-n,--seq", seq_, "the whole sequence N over all GPUs (suffixes: 128K = 131072); with --extrapolate "
                                      "a comma list (default 8K,16K,32K,64K,128K)")
        ->capture_default_str();
    app->add_option("-d,--head-dim", head_dim_, "head dimension d (default 128)");
    app->add_option("--dtype", dtype_, "fp16 | bf16 | fp32")->capture_default_str();
    app->add_option("--gpus", gpus_, "GPUs in the ring, P")->capture_default_str();
    app->add_option("--gpus-per-node", per_node_, "GPUs of a node: hops between nodes take --inter-link")
        ->capture_default_str();
    app->add_option("--layout", layout_, layout_help())->capture_default_str();
    app->add_flag("--causal,!--no-causal", causal_, "causal mask (default) or none");
    app->add_option("--pass", pass_, "fwd | fwd+bwd (a training step: the forward, then the backward's ring)")
        ->capture_default_str();
    app->add_option("--hw", hw_, "hardware preset (flashlab hw list) or a JSON file (with --results: default the runs' GPU)")
        ->capture_default_str();
    app->add_option("--link", link_,
                    "the link inside a node: a preset (nvlink4, pcie5, ib-ndr, or a measured one of "
                    "assets/interconnects/measured) or a JSON file (a measured link: flashlab links --preset)")
        ->capture_default_str();
    app->add_option("--inter-link", inter_link_, "the link between nodes: a preset or a JSON file")->capture_default_str();
    app->add_option("--efficiency", efficiency_, "fraction of a block's time bound the forward rung reaches, (0, 1]")
        ->capture_default_str();
    app->add_option("--bwd-efficiency", bwd_efficiency_, "the backward rung's, (0, 1] (default: --efficiency)");
    app->add_flag("--timeline", timeline_, "print every GPU's events (compute, transfers, waits, idle bubbles)");
    app->add_flag("--json", json_, "print one JSON object");
    app->add_option("--csv", csv_,
                    "write CSV: the events (a simulation), the sweep (--extrapolate) or the steps placed (--results)");
    app->add_flag("--extrapolate", extrapolate_,
                  "P = 1, 2, 4, 8 (one node) and 16, 32 (2 and 4 nodes) for N = 8K … 128K: where communication stops hiding");
    app->add_flag("--markdown", markdown_, "--extrapolate's table in Markdown");
    app->add_option("--results", results_, "a ring results file (flashlab bench --gpus): its runs beside the simulation");
    app->add_flag("--ranks", ranks_,
                  "with the launch model and a link measured with its host: a process per GPU issues that GPU's work "
                  "(flashlab bench --ranks) instead of one process for the GPUs of a node");
    app->add_option("--rung-timing", rung_timing_,
                    "the rungs' launch model (flashlab ceilings rungs --out FILE; a name of assets/rungs): a chunk "
                    "pair's time from its launch instead of the bound over --efficiency. With --results: default "
                    "the one fitted on the runs' GPU, 'none' for the efficiency of the file's one-GPU runs");
    app->add_option("--chart", chart_,
                    "with --results: write a chart of its runs to --out instead (" + analysis::ring_chart_id_list(" | ") +
                        "; --layout picks the runs, --pass fwd or bwd the pass)");
    app->add_option("--steps", steps_,
                    "--chart: only the runs of these steps, fused | pairwise (default: ring-scaling both, ring-time "
                    "fused)");
    add_chart_output_flags(*app, chart_out_, "--chart: the file to write");
  }

  int run() override {
    if (extrapolate_ && !results_.empty()) throw UsageError("--extrapolate and --results are separate views: give one");
    if (timeline_ && (extrapolate_ || !results_.empty()))
      throw UsageError("--timeline prints one simulation's events, not with --extrapolate or --results");
    if (markdown_ && !extrapolate_) throw UsageError("--markdown formats --extrapolate's table");
    if (!chart_.empty()) return run_chart();
    for (const char* flag : {"--out", "--steps", "--width", "--height", "--dark"})
      if (given(flag)) throw UsageError(std::string(flag) + " belongs to --chart (flashlab ring --results FILE --chart ID --out FILE)");
    const sim::RingTopology topo = topology();
    sim::RingComputeModel cm = compute_model();
    if (!results_.empty()) {
      if (ranks_) throw UsageError("--ranks is for a simulation: a results file says how its runs were driven");
      return run_results(topo, cm);
    }
    // With the launch model, a link measured with its host's issuing times the host too.
    if (cm.rung_set) cm.host = topo.intra.host;
    if (ranks_ && !cm.host.measured())
      throw UsageError("--ranks prices a process per GPU's issuing: give --rung-timing and a --link measured with its "
                       "host (flashlab links --preset; e.g. measured-nvidia-h200-2gpu-2026-11-27)");
    cm.host.host_per_gpu = ranks_;
    if (extrapolate_) return run_extrapolation(topo, cm);
    if (model_ == "all") throw UsageError("--model all names the three models for --extrapolate; give one model here");
    const sim::AttentionProblem p = problem(model_);
    sim::RingSimulation s;
    try {
      s = sim::simulate_ring(p, topo, cm);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    write_output("--csv", csv_, analysis::ring_events_csv(s));
    if (json_) {
      std::cout << analysis::ring_simulation_json(s, topo, cm, timeline_).dump(2) << "\n";
      return 0;
    }
    std::cout << analysis::ring_summary_text(s, topo, cm);
    if (timeline_) std::cout << "\n" << analysis::ring_timeline_table(s);
    return 0;
  }

 private:
  bool given(const char* flag) const { return app->count(flag) > 0; }

  sim::RingTopology topology() const {
    sim::RingTopology t;
    t.gpus_per_node = static_cast<int>(parse_positive("--gpus-per-node", per_node_));
    t.intra = analysis::with_measured_host(load_link("--link", link_));
    t.inter = load_link("--inter-link", inter_link_);
    return t;
  }

  // --rung-timing FILE (nullopt for 'none' or not given).
  std::optional<sim::RungTimingSet> load_rung_timing() const {
    if (rung_timing_.empty() || rung_timing_ == "none") return std::nullopt;
    try {
      return sim::load_rung_timing(rung_timing_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--rung-timing: ") + e.what());
    }
  }

  sim::RingComputeModel compute_model() const {
    sim::RingComputeModel cm;
    // A simulation or an extrapolation times its chunk pairs with the launch
    // model when one is named (with --results each run takes its GPU's).
    if (results_.empty()) cm.rung_set = load_rung_timing();
    cm.hw = load_hw(hw_);
    cm.efficiency = parse_efficiency("--efficiency", efficiency_);
    if (!bwd_efficiency_.empty()) cm.backward_efficiency = parse_efficiency("--bwd-efficiency", bwd_efficiency_);
    return cm;
  }

  // The problem the flags describe; `model` overrides --model (the sweep's "all").
  sim::AttentionProblem problem(const std::string& model) const {
    // Parsed as every front end parses a problem (sim::parse_problem); the
    // messages name the flags.
    static const sim::ProblemFieldNames names{"--batch", "--heads", "--seq", "--seq-kv", "--head-dim", "--dtype",
                                              "--sram",  "--br",    "--bc",  "--kv-heads", "--gpus"};
    sim::ProblemText text;
    text.batch = batch_;
    // --extrapolate takes a list; each length is set per row.
    text.seq = extrapolate_ ? seq_.substr(0, seq_.find(',')) : seq_;
    text.gpus = gpus_;
    text.dtype = dtype_;
    text.causal = causal_;
    if (!sim::parse_ring_layout(layout_, text.layout))
      throw UsageError("--layout: '" + layout_ + "' is not one of " + sim::ring_layout_names());
    const std::optional<sim::PassSelection> passes = sim::parse_pass_selection(pass_);
    if (passes == sim::PassSelection::bwd)
      throw UsageError("--pass: the ring's backward follows its forward (it needs O and the logsumexp): use fwd+bwd");
    if (!passes) throw UsageError("--pass: '" + pass_ + "' is not fwd or fwd+bwd");
    text.passes = *passes;
    if (!model.empty()) {
      const sim::AttentionModel* m = sim::find_attention_model(model);
      if (m == nullptr) throw UsageError("--model: unknown model '" + model + "' (expected " + model_ids() + ")");
      for (const char* flag : {"--heads", "--kv-heads", "--head-dim"})
        if (given(flag))
          throw UsageError(std::string(flag) + ": --model " + std::string(m->id) +
                           " sets H, H_kv and d; give the model or the shape, not both");
      text.heads = std::to_string(m->heads);
      text.kv_heads = std::to_string(m->kv_heads);
      text.head_dim = std::to_string(m->head_dim);
    } else {
      text.heads = heads_.empty() ? "32" : heads_;
      text.kv_heads = kv_heads_.empty() ? text.heads : kv_heads_;
      text.head_dim = head_dim_.empty() ? "128" : head_dim_;
    }
    const sim::ParsedProblem parsed = sim::parse_problem(text, names);
    if (!parsed.ok()) throw UsageError(parsed.first());
    // One sequence cut over the GPUs: K, V have its length whatever seq_q an
    // extrapolation's row sets ("0: the same as seq_q").
    sim::AttentionProblem p = parsed.problem;
    p.seq_kv = 0;
    return p;
  }

  int run_extrapolation(const sim::RingTopology& topo, const sim::RingComputeModel& cm) {
    if (given("--gpus")) throw UsageError("--gpus: --extrapolate sweeps P = 1 … 32 itself");
    std::vector<sim::i64> seqs = analysis::default_extrapolation_seqs();
    if (given("--seq")) {
      seqs.clear();
      std::stringstream list(seq_);
      for (std::string item; std::getline(list, item, ',');) seqs.push_back(parse_positive("--seq", item));
    }
    std::vector<analysis::RingScaleShape> shapes;
    if (model_ == "all") {
      for (const sim::AttentionModel& m : sim::attention_models()) {
        shapes.push_back({std::string(m.id), problem(std::string(m.id))});
      }
    } else {
      sim::AttentionProblem p = problem(model_);
      std::string name = model_.empty() ? analysis::ring_model_id(p) : model_;
      shapes.push_back({name.empty() ? std::string("custom") : name, p});
    }
    analysis::RingExtrapolation x;
    try {
      x = analysis::extrapolate_ring(shapes, seqs,
                                     analysis::default_extrapolation_gpus(), topo, cm);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    write_output("--csv", csv_, analysis::ring_extrapolation_csv(x));
    if (json_) {
      std::cout << analysis::ring_extrapolation_json(x).dump(2) << "\n";
      return 0;
    }
    const sim::AttentionProblem& p = shapes.front().problem;
    std::cout << "Ring attention extrapolated on " << cm.hw.display_name << ": B=" << p.batch << " "
              << sim::to_string(p.dtype) << (p.causal ? " causal" : " non-causal") << " "
              << sim::ring_layout_name(p.layout()) << ", " << sim::to_string(p.passes()) << ", "
              << (cm.rung_set ? "the rungs' launch model fitted on " + cm.rung_set->gpu + " (--rung-timing " +
                                    rung_timing_ + ")"
                              : "efficiency " + sim::fixed(cm.efficiency, 2))
              << "\n";
    std::cout << "  inside a node of " << topo.gpus_per_node << ": " << topo.intra.label << ", "
              << sim::fixed(topo.intra.bandwidth / 1e9, 0) << " GB/s; between nodes: " << topo.inter.label << ", "
              << sim::fixed(topo.inter.bandwidth / 1e9, 0) << " GB/s (one direction)\n";
    if (cm.host.measured())
      std::cout << (cm.host.host_per_gpu ? "  host: a process per GPU; "
                                         : "  host: one process drives the GPUs of one node, a process per GPU across "
                                           "nodes; ")
                << analysis::host_prices_text(cm.host, cm.host.exchange_s,
                                              "an exchange over " + std::to_string(cm.host.gpus) + " GPUs")
                << "\n";
    std::cout << "  each cell: the pass" << (p.backward() ? "es'" : "'s") << " time in ms / scaling efficiency (one GPU's "
              << "time over P × the ring's); * in a pass the steps expose communication above "
              << sim::fixed(100 * analysis::kExposedCommThreshold, 0) << "% of its time; ! more memory than the GPU has\n\n";
    std::cout << analysis::ring_extrapolation_table(x, markdown_);
    return 0;
  }

  sim::MeasuredRuns read_results() const {
    try {
      return analysis::ring_results_from_file(results_);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--results: ") + e.what());
    }
  }

  // A chart of the results file's runs, written to --out; nothing is written when it has nothing to draw.
  int run_chart() {
    if (analysis::find_ring_chart(chart_) == nullptr)
      throw UsageError("--chart: unknown chart '" + chart_ + "' (expected " + analysis::ring_chart_id_list(" or ") + ")");
    if (results_.empty()) throw UsageError("--chart draws the runs of a results file: give --results FILE");
    for (const char* flag : {"--json", "--csv", "--extrapolate", "--timeline", "--markdown"})
      if (given(flag)) throw UsageError(std::string(flag) + ": --chart writes one chart to --out; give one or the other");
    if (chart_out_.out.empty()) throw UsageError("--chart: give --out FILE (.svg .png .pdf .csv)");
    check_chart_output(chart_out_);
    analysis::RingChartOptions opt;
    if (!sim::parse_ring_layout(layout_, opt.layout))
      throw UsageError("--layout: '" + layout_ + "' is not one of " + sim::ring_layout_names());
    if (given("--pass")) {
      const std::optional<sim::PassSelection> pass = sim::parse_pass_selection(pass_);
      if (pass == sim::PassSelection::fwd) opt.pass = sim::Pass::fwd;
      else if (pass == sim::PassSelection::bwd) opt.pass = sim::Pass::bwd;
      else throw UsageError("--pass: '" + pass_ + "': a ring chart draws one pass, fwd or bwd (ring-scaling: both when not given)");
    }
    if (!steps_.empty() && !sim::parse_ring_steps(steps_))
      throw UsageError("--steps: '" + steps_ + "' is not fused or pairwise");
    opt.steps = steps_;
    const sim::MeasuredRuns runs = read_results();
    analysis::ChartSpec chart;
    try {
      chart = analysis::build_ring_chart(chart_, runs, opt);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--chart " + chart_ + ": " + results_ + ": " + e.what());
    }
    write_chart_output(chart, chart_out_);
    return 0;
  }

  int run_results(sim::RingTopology topo, sim::RingComputeModel cm) {
    const sim::MeasuredRuns runs = read_results();
    // What the file gives where no flag chose: the datasheet preset of the GPU
    // the runs were measured on, the link measured between such GPUs, the
    // launch model fitted on that GPU.
    analysis::RingFileModel given_model{topo, cm, load_rung_timing()};
    const analysis::RingFileModel model = analysis::ring_file_model(
        runs, std::move(given_model), {!given("--hw"), !given("--link"), rung_timing_.empty()});
    topo = model.topology;
    cm = model.compute;
    const std::optional<sim::RungTimingSet>& rungs = model.rungs;
    nlohmann::json all = nlohmann::json::array();
    std::vector<std::string> header = analysis::ring_placement_csv_header();
    header.insert(header.begin(), "run");
    std::string csv = analysis::csv_row(header);
    std::vector<analysis::RingPlacement> placed;
    std::vector<std::size_t> placed_index;
    if (!json_) {
      std::cout << "Measured ring runs from " << results_;
      if (!runs.meta.gpu.empty()) std::cout << " (" << runs.meta.gpu << ")";
      std::cout << " beside the simulation on " << cm.hw.display_name << ", " << topo.intra.label
                << (topo.intra.kind == "measured" ? " (measured)" : "") << "\n\n";
      std::cout << analysis::ring_table(runs) << "\n";
    }
    for (std::size_t k = 0; k < runs.runs.size(); ++k) {
      const sim::MeasuredRun& run = runs.runs[k];
      if (run.status != sim::RunStatus::ok) {
        if (!json_)
          std::cout << "run " << k << ": " << sim::to_string(run.status) << (run.reason.empty() ? "" : ": " + run.reason)
                    << "; not placed\n\n";
        continue;
      }
      analysis::RingPlacement pl;
      try {
        pl = analysis::place_ring_run(runs, k, topo, cm, rungs ? &*rungs : nullptr);
      } catch (const std::invalid_argument& e) {
        throw UsageError("--results: run " + std::to_string(k) + ": " + e.what());
      }
      placed.push_back(pl);
      placed_index.push_back(k);
      if (json_) {
        nlohmann::json j = analysis::ring_placement_json(pl);
        j["run"] = k;
        all.push_back(std::move(j));
      } else {
        std::cout << "run " << k << ": " << analysis::ring_placement_text(pl) << "\n";
      }
      for (std::vector<std::string> row : analysis::ring_placement_csv_rows(pl)) {
        row.insert(row.begin(), std::to_string(k));
        csv += analysis::csv_row(row);
      }
    }
    write_output("--csv", csv_, csv);
    const analysis::RingScore score = analysis::score_ring_placements(placed, placed_index);
    if (json_) {
      std::cout << nlohmann::json{{"runs", all}, {"score", analysis::ring_score_json(score)}}.dump(2) << "\n";
    } else {
      std::cout << analysis::ring_score_text(score);
    }
    return 0;
  }

  std::string model_, batch_ = "1", heads_, kv_heads_, seq_ = "32K", head_dim_, dtype_ = "bf16", gpus_ = "8",
                      per_node_ = "8", layout_ = "zigzag", pass_ = "fwd", hw_ = sim::kDefaultRingHardware, link_ = "nvlink4",
                      inter_link_ = "ib-ndr", efficiency_ = "1", bwd_efficiency_, csv_, results_, chart_, steps_, rung_timing_;
  ChartOutput chart_out_;
  bool causal_ = true, timeline_ = false, json_ = false, extrapolate_ = false, markdown_ = false, ranks_ = false;
};

}  // namespace

std::unique_ptr<Command> make_ring_command() { return std::make_unique<RingCommand>(); }

}  // namespace flashlab::cli
