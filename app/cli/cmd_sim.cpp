// flashlab sim: one algorithm on one problem, as text or JSON.
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"

namespace flashlab::cli {
namespace {

using sim::bytes_iec;
using sim::group_digits;
using sim::si;

std::string gb(sim::i64 bytes) { return sim::si_unit(static_cast<double>(bytes), "B"); }

// A training step: each pass as `flashlab sim` prints it, then their sums.
void print_step(const analysis::PassRun& run, const sim::HardwareModel& hw, std::ostream& out);

void print_text(const sim::SimResult& r, const sim::HardwareModel& hw, std::ostream& out) {
  const analysis::RooflineEstimate roof = analysis::roofline(r, hw);
  const sim::Traffic hbm = r.total.level(sim::Level::HBM);
  const sim::Traffic l2 = r.total.level(sim::Level::L2);
  const sim::Traffic sram = r.total.level(sim::Level::SRAM);
  out << sim::algorithm_info(r.algorithm).title << " on " << hw.display_name << "\n";
  out << "  problem   " << sim::describe(r.problem) << "\n";
  out << "  tiles     B_r=" << r.tiles.Br << " B_c=" << r.tiles.Bc << " (" << r.tile_rule << ")  T_r=" << r.T_r
      << " T_c=" << r.T_c << "  blocks " << group_digits(r.total_blocks) << ", visited "
      << group_digits(r.visited_blocks) << ", masked " << group_digits(r.masked_blocks) << "\n";
  out << "  requests  to global memory (the paper's HBM accesses): read " << gb(hbm.read_bytes) << "  write "
      << gb(hbm.write_bytes) << "  total " << gb(hbm.bytes()) << "  (" << group_digits(hbm.bytes()) << " B)\n";
  out << "            per tensor:";
  for (int t = 0; t < sim::kTensorCount; ++t) {
    const sim::Traffic& x = r.total.at(sim::Level::HBM, static_cast<sim::Tensor>(t));
    if (x.bytes() == 0) continue;
    out << "  " << sim::display_name(static_cast<sim::Tensor>(t)) << " " << gb(x.read_bytes) << " r, "
        << gb(x.write_bytes) << " w;";
  }
  out << "\n";
  if (l2.bytes() > 0)
    out << "            + " << gb(l2.read_bytes)
        << " re-read by the GEMMs from the L2 after their first block (not counted above)\n";
  const sim::L2Result& m = r.l2;
  if (!m.modelled) {
    out << "  L2 model  not modelled: " << m.why_not << "\n";
    out << "  DRAM      taken equal to the requests: read " << gb(r.dram_read_bytes()) << "  write "
        << gb(r.dram_write_bytes()) << "\n";
  } else {
    const sim::TensorTraffic t = m.total();
    out << "  L2 model  " << bytes_iec(static_cast<double>(m.l2_bytes)) << " LRU";
    if (m.l2_partitions > 1)
      out << " (one of the " << m.l2_partitions << " partitions of a "
          << bytes_iec(static_cast<double>(m.l2_bytes * m.l2_partitions))
          << " L2: each keeps its own copy of what every SM reads)";
    out << ": read hits " << gb(t.l2_hit_read_bytes)
        << " of " << gb(t.request_read_bytes) << " read requests (hit rate "
        << analysis::fixed(100.0 * m.read_hit_rate(), 1) << "%)\n";
    out << "            launch: " << group_digits(m.launch.concurrent_ctas()) << " CTAs resident ("
        << m.launch.sm_count << " SMs × " << m.launch.ctas_per_sm
        << (m.launch.heaviest_first ? ", heaviest row block first" : "") << "), from " << m.launch.source << "\n";
    out << "            method: " << m.method << "\n";
    out << "  DRAM      predicted read " << gb(r.dram_read_bytes()) << "  write " << gb(r.dram_write_bytes())
        << "  total " << gb(r.dram_bytes()) << "  (" << group_digits(r.dram_bytes()) << " B)\n";
    out << "            per tensor:";
    for (int k = 0; k < sim::kTensorCount; ++k) {
      const sim::TensorTraffic& x = m.tensors[static_cast<size_t>(k)];
      if (x.request_read_bytes == 0 && x.request_write_bytes == 0) continue;
      out << "  " << sim::display_name(static_cast<sim::Tensor>(k)) << " " << gb(x.dram_read_bytes) << " r, "
          << gb(x.dram_write_bytes + x.dirty_at_end_bytes) << " w;";
    }
    out << "\n";
    if (t.dirty_at_end_bytes > 0)
      out << "            writes include " << gb(t.dirty_at_end_bytes)
          << " still dirty in the L2 when the run ends (written back later)\n";
  }
  out << "  SRAM      read " << gb(sram.read_bytes) << "  write " << gb(sram.write_bytes) << "  peak "
      << bytes_iec(static_cast<double>(r.sram_peak_bytes)) << " of M = "
      << bytes_iec(static_cast<double>(r.sram_capacity_bytes)) << "\n";
  const sim::Pass pass = sim::algorithm_info(r.algorithm).pass;
  const sim::PassSelection own = sim::selection_of(pass);
  out << "  FLOPs     matmul " << si(static_cast<double>(r.total.matmul_flops)) << "  softmax "
      << si(static_cast<double>(r.total.softmax_flops)) << "  convention ("
      << analysis::convention_formula(r.problem, own) << ") "
      << si(static_cast<double>(analysis::convention_flops(r.problem, pass))) << "  exp "
      << si(static_cast<double>(r.total.exps)) << "\n";
  out << "  roofline  AI " << analysis::fixed(roof.ai, 1) << " FLOP/B of DRAM (" << analysis::fixed(roof.ai_requests, 1)
      << " on the requests), ridge " << analysis::fixed(roof.ridge, 1)
      << " -> " << (roof.memory_bound ? "memory" : "compute") << "-bound; at least "
      << sim::duration(roof.time_s) << " ("
      << analysis::fixed(roof.attainable / 1e12, 1) << " TFLOP/s attainable)\n";
  out << "  counted   " << group_digits(r.events_per_head) << " events per head, by " << r.method << "\n";
  for (const std::string& msg : r.messages()) out << "  note      " << msg << "\n";
}

// What the forward keeps for the backward, and the backward's peak.
void print_step_memory(const sim::TrainingStepMemory& m, std::ostream& out) {
  auto list = [](const std::vector<sim::TensorMemory>& ts) {
    std::string s;
    for (const sim::TensorMemory& t : ts)
      s += (s.empty() ? "" : ", ") + std::string(sim::display_name(t.tensor)) + " " + bytes_iec(static_cast<double>(t.bytes));
    return s.empty() ? std::string("nothing") : s;
  };
  out << "  memory    kept by the forward for the backward: " << list(m.saved) << " ("
      << bytes_iec(static_cast<double>(m.saved_bytes())) << ")\n";
  out << "            the backward's peak: " << bytes_iec(static_cast<double>(m.backward_peak_bytes))
      << " (the saved tensors, the inputs " << bytes_iec(static_cast<double>(m.inputs_bytes()))
      << ", dO and what it writes: " << list(m.own) << ")\n";
}

void print_step(const analysis::PassRun& run, const sim::HardwareModel& hw, std::ostream& out) {
  for (const analysis::PassPart& part : run.parts) {
    print_text(part.result, hw, out);
    out << "\n";
  }
  const analysis::RooflineEstimate& roof = run.roof;
  const sim::Traffic hbm = run.total.level(sim::Level::HBM);
  out << "Training step (" << run.label() << ": the passes above, summed)\n";
  out << "  requests  read " << gb(hbm.read_bytes) << "  write " << gb(hbm.write_bytes) << "  total "
      << gb(hbm.bytes()) << "  (" << group_digits(hbm.bytes()) << " B)\n";
  out << "  DRAM      read " << gb(run.dram_read_bytes) << "  write " << gb(run.dram_write_bytes) << "  total "
      << gb(run.dram_bytes()) << "\n";
  out << "  FLOPs     exact " << si(roof.flops) << "  convention (" << analysis::convention_formula(run.problem, run.passes)
      << ") " << si(roof.convention_flops) << "\n";
  out << "  roofline  AI " << analysis::fixed(roof.ai, 1) << " FLOP/B of DRAM; at least "
      << sim::duration(roof.time_s) << " (the sum of each pass's bound: ";
  for (size_t k = 0; k < run.parts.size(); ++k) out << (k ? " + " : "") << sim::duration(run.parts[k].roof.time_s);
  out << ")\n";
  print_step_memory(sim::training_step_memory(run.family, run.problem), out);
}

nlohmann::json memory_json(const sim::TrainingStepMemory& m) {
  auto list = [](const std::vector<sim::TensorMemory>& ts) {
    nlohmann::json j = nlohmann::json::object();
    for (const sim::TensorMemory& t : ts) j[std::string(sim::to_string(t.tensor))] = t.bytes;
    return j;
  };
  return {{"saved", list(m.saved)},
          {"saved_bytes", m.saved_bytes()},
          {"inputs", list(m.inputs)},
          {"own", list(m.own)},
          {"backward_peak_bytes", m.backward_peak_bytes}};
}

nlohmann::json step_json(const analysis::PassRun& run, const sim::HardwareModel& hw) {
  nlohmann::json parts = nlohmann::json::array();
  for (const analysis::PassPart& part : run.parts) parts.push_back(analysis::sim_json(part.result, hw));
  const sim::Traffic hbm = run.total.level(sim::Level::HBM);
  return nlohmann::json{{"algorithm", std::string(sim::to_string(run.family))},
                        {"pass", std::string(sim::to_string(run.passes))},
                        {"problem", analysis::problem_json(run.problem)},
                        {"passes", parts},
                        {"step",
                         {{"hbm_read_bytes", hbm.read_bytes},
                          {"hbm_write_bytes", hbm.write_bytes},
                          {"dram_read_bytes", run.dram_read_bytes},
                          {"dram_write_bytes", run.dram_write_bytes},
                          {"matmul_flops", run.total.matmul_flops},
                          {"softmax_flops", run.total.softmax_flops},
                          {"convention_flops", run.roof.convention_flops},
                          {"arithmetic_intensity", run.roof.ai},
                          {"time_lower_bound_s", run.roof.time_s}}},
                        {"memory", memory_json(sim::training_step_memory(run.family, run.problem))}};
}

class SimCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("sim", "simulate one algorithm on one problem");
    app->add_option("-a,--algo", algo_, "one of " + analysis::algorithm_keys(sim::all_algorithms(), " | "))
        ->capture_default_str();
    add_pass_flag(*app, pass_);
    add_problem_flags(*app, flags_);
    app->add_option("--o-accumulator", o_accumulator_,
                    "the type O is kept in between the steps of FlashAttention-1 (fp32: as a kernel that "
                    "accumulates in fp32, the rung and the lab's skeleton do; default: the problem's dtype, as the paper)");
    app->add_flag("--json", json_, "print one JSON object");
    app->add_option("--trace", trace_, "write the event stream of one head as CSV to FILE");
  }

  int run() override {
    const auto algos = parse_algorithms(algo_);
    if (algos.size() != 1) throw UsageError("--algo takes one algorithm (use `flashlab sweep` for several)");
    const std::optional<sim::PassSelection> pass = parse_pass(pass_);
    Resolved r = resolve(flags_);
    if (!o_accumulator_.empty()) {
      const std::optional<sim::DType> t = sim::parse_dtype(o_accumulator_);
      if (!t) throw UsageError("--o-accumulator: unknown dtype '" + o_accumulator_ + "' (fp32, fp16 or bf16)");
      r.options.storage.o_accumulator = *t;
    }
    const sim::PassSelection selection = pass_or_own(pass, algos[0]);
    if (selection == sim::PassSelection::fwd_bwd) {
      if (!trace_.empty()) throw UsageError("--trace writes one pass: give --pass fwd or --pass bwd");
      const analysis::PassRun run = simulate(algos[0], selection, r);
      if (json_) std::cout << step_json(run, r.hw).dump(2) << "\n";
      else print_step(run, r.hw, std::cout);
      return 0;
    }
    const analysis::PassRun run = simulate(algos[0], selection, r);
    const sim::SimResult& res = run.parts.front().result;
    if (!trace_.empty()) write_trace(res, r);
    if (json_) std::cout << analysis::sim_json(res, r.hw).dump(2) << "\n";
    else print_text(res, r.hw, std::cout);
    if (!json_ && !o_accumulator_.empty() && res.total.at(sim::Level::HBM, sim::Tensor::O).read_bytes == 0)
      std::cout << "  note      --o-accumulator: O is written once and never read back here; its type moves no bytes\n";
    return 0;
  }

 private:
  static analysis::PassRun simulate(sim::Algorithm a, sim::PassSelection selection, const Resolved& r) {
    analysis::PassRun run;
    try {
      run = analysis::simulate_passes(a, selection, r.problem, r.hw, r.options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--pass: ") + e.what());
    }
    for (const analysis::PassPart& part : run.parts)
      for (const std::string& e : part.result.errors())
        throw UsageError(run.parts.size() > 1 ? std::string(sim::to_string(part.result.algorithm)) + ": " + e : e);
    return run;
  }

  void write_trace(const sim::SimResult& res, const Resolved& r) {
    constexpr sim::i64 kMaxTraceEvents = 5'000'000;
    if (res.events_per_head > kMaxTraceEvents)
      throw UsageError("--trace: the stream has " + group_digits(res.events_per_head) +
                       " events per head, more than the trace limit of " + group_digits(kMaxTraceEvents) +
                       "; use a smaller N or larger tiles");
    std::ostringstream s;
    sim::TraceCsvWriter w(s, res.sram_capacity_bytes);
    sim::Schedule(res.algorithm, r.problem, res.tiles).emit(w);
    try {
      analysis::write_file_atomic(trace_, s.str());
    } catch (const std::exception& e) {
      throw UsageError(std::string("--trace: ") + e.what());
    }
  }

  ProblemFlags flags_;
  std::string algo_ = "fa2", trace_, pass_, o_accumulator_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_sim_command() { return std::make_unique<SimCommand>(); }

}  // namespace flashlab::cli
