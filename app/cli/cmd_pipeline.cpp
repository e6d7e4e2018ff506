// flashlab pipeline: the Hopper rung's schedule inside a CTA (TMA ring,
// consumer warpgroups, tensor cores and softmax units), the launch it makes,
// and — from a results file — what fa3_hopper measured on the same problem;
// with --pass bwd the backward's CTA (fa3_hopper_bwd, one per K_j, V_j).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/placement/measured_checks.hpp"

namespace flashlab::cli {
namespace {

using sim::fixed;

std::string us(double ns) { return fixed(ns * 1e-3, 2) + " µs"; }
std::string pct(double f) { return fixed(100 * f, 0) + "%"; }
// A persistent launch's tiles per block: the busiest block's count.
std::string per_block(const sim::HopperLaunchEstimate& e) {
  const sim::i64 most = e.blocks > 0 ? (e.ctas + e.blocks - 1) / e.blocks : 0;
  const bool even = e.blocks > 0 && e.ctas % e.blocks == 0;
  return (even ? "" : "at most ") + std::to_string(most) + (most == 1 ? " tile each; " : " tiles each; ");
}

// The measured H200 profile shipped with the assets: its L2 bandwidth feeds the copies.
std::string default_hardware() {
  const std::string dir = sim::assets_dir();
  return dir.empty() ? std::string("H200-SXM-141GB") : dir + "/hardware/measured/H200-SXM-141GB-2026-11-25.json";
}

void write_csv(const sim::HopperPipeline& h, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw UsageError("--csv: cannot write '" + path + "'");
  f << "op,unit,warpgroup,j,stage,start_ns,busy_ns,end_ns\n";
  const char* units[] = {"copy_engine", "tensor_cores", "softmax_units"};
  for (const sim::PipeInterval& iv : h.intervals)
    f << '"' << sim::to_string(iv.op) << "\"," << units[static_cast<int>(iv.unit)] << ',' << iv.warpgroup << ',' << iv.j
      << ',' << (iv.j >= 0 && iv.op != sim::PipeOp::gemm_S && iv.op != sim::PipeOp::softmax && iv.op != sim::PipeOp::gemm_PV
                     ? static_cast<int>(iv.j % h.config.stages)
                     : -1)
      << ',' << fixed(iv.start_ns, 3) << ',' << fixed(iv.busy_ns, 3) << ',' << fixed(iv.end_ns, 3) << '\n';
  if (!f) throw UsageError("--csv: writing '" + path + "' failed");
}

const char* unit_key(sim::PipeUnit u) {
  switch (u) {
    case sim::PipeUnit::copy_engine: return "copy_engine";
    case sim::PipeUnit::tensor_cores: return "tensor_cores";
    case sim::PipeUnit::softmax_units: return "softmax_units";
    case sim::PipeUnit::load_store: return "load_store";
    case sim::PipeUnit::dq_writer: return "dq_writer";
  }
  return "?";
}

void write_bwd_csv(const sim::HopperBwdPipeline& h, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw UsageError("--csv: cannot write '" + path + "'");
  f << "op,unit,warpgroup,i,stage,start_ns,busy_ns,work_ns,end_ns\n";
  for (const sim::PipeInterval& iv : h.intervals)
    f << '"' << sim::to_string(iv.op) << "\"," << unit_key(iv.unit) << ',' << iv.warpgroup << ',' << iv.i << ','
      << iv.stage << ',' << fixed(iv.start_ns, 3) << ',' << fixed(iv.busy_ns, 3) << ',' << fixed(iv.work_ns, 3) << ','
      << fixed(iv.end_ns, 3) << '\n';
  if (!f) throw UsageError("--csv: writing '" + path + "' failed");
}

// The backward's schedule of column block j: its configuration, the rates, one
// warpgroup's work per step, the CTA's time and units, the lockstep, and the
// ops of one step in the order they start.
void print_bwd(const Resolved& r, sim::i64 j, const std::string& csv, std::ostream& out) {
  const sim::AttentionProblem& p = r.problem;
  const auto c = sim::hopper_bwd_config(p.head_dim, p.causal);
  if (!c)
    throw UsageError("--head-dim: the Hopper backward is compiled for d = " + sim::hopper_bwd_head_dims_text() +
                     ", not d = " + std::to_string(p.head_dim));
  if (p.dtype == sim::DType::fp32) throw UsageError("--dtype: the Hopper backward runs fp16 and bf16, not fp32");
  const sim::TileGrid g(p, sim::tiles_of(*c));
  if (j < 0 || j >= g.T_c)
    throw UsageError("--col-block: " + std::to_string(j) + " is outside 0.." + std::to_string(g.T_c - 1));
  sim::HopperBwdPipeline h;
  try {
    h = sim::simulate_hopper_bwd_pipeline(p, j, *c, r.hw);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!csv.empty()) write_bwd_csv(h, csv);
  const sim::PipelineRates& rt = h.rates;
  out << "The Hopper backward's schedule (fa3_hopper_bwd) on " << r.hw.display_name << "\n";
  out << "  problem   " << sim::describe(p) << "\n";
  out << "  config    B_r × B_c = " << c->Br << " × " << c->Bc << " (T_r = " << g.T_r << ", T_c = " << g.T_c << "), "
      << c->consumers() << " consumer warpgroups of 64 keys, " << c->stages << "-stage Q_i/dO_i/L_i/D_i ring, dQ_i "
      << (c->dq_buffers > 0 ? "by a writer warp's TMA reductions from " + std::to_string(c->dq_buffers) +
                                  (c->dq_buffers == 1 ? " shared-memory buffer" : " shared-memory buffers") +
                                  " per warpgroup"
                            : std::string("by the warpgroups' vector reductions"))
      << "; shared memory " << sim::bytes_iec(static_cast<double>(sim::hopper_bwd_smem_bytes(*c))) << "\n";
  out << "  rates     one SM: tensor cores " << fixed(rt.mma_flops_per_ns * 1e-3, 2) << " TFLOP/s, exp2 "
      << fixed(rt.exp_per_ns, 1) << " per ns, copies and dQ reductions " << fixed(rt.copy_bytes_per_ns, 1)
      << " GB/s (the " << rt.copy_source << "'s share), shared memory " << fixed(rt.smem_bytes_per_ns, 0)
      << " GB/s, copy latency " << fixed(rt.copy_latency_ns, 0) << " ns (assumed)\n";
  out << "  per step one warpgroup at the units' full rate: five products " << us(h.gemm_ns_per_step)
      << ", softmax backward (P_ijᵀ and dS_ijᵀ) " << us(h.softmax_ns_per_step) << ", dS_ijᵀ to shared memory "
      << us(h.store_ns_per_step);
  if (c->dq_buffers > 0)
    out << ", its block of dQ_i to shared memory " << us(h.dq_store_ns_per_step) << ", the writer's TMA reductions of it "
        << us(h.reduce_ns_per_step) << "\n";
  else
    out << ", dQ_i's reductions " << us(h.reduce_ns_per_step) << "\n";
  out << "  column block j = " << j << ": " << h.visits << " Q_i visited (i = " << h.first_i << ".." << g.T_r - 1 << "), "
      << us(h.end_ns) << "; busy: tensor cores " << pct(h.tensor_utilisation()) << ", softmax units "
      << pct(h.end_ns > 0 ? h.softmax_busy_ns / h.end_ns : 0) << ", copy engine "
      << pct(h.end_ns > 0 ? h.copy_busy_ns / h.end_ns : 0) << ", load/store " << pct(h.end_ns > 0 ? h.load_store_busy_ns / h.end_ns : 0);
  if (c->dq_buffers > 0) out << ", dQ writer " << pct(h.end_ns > 0 ? h.dq_writer_busy_ns / h.end_ns : 0);
  out << "\n";
  out << "  lockstep  both warpgroups compute P_ijᵀ at once while their dP_ijᵀ runs, then dS_ijᵀ at once, each at half "
      << "the units' rate; the tensor cores wait " << us(h.tensor_wait_in_softmax_ns) << " ("
      << pct(h.end_ns > 0 ? h.tensor_wait_in_softmax_ns / h.end_ns : 0)
      << " of the CTA's time) while the softmax units run and they do not\n";
  // One step in the steady state (the second, when there is one): its ops as they start.
  const sim::i64 step = h.visits > 1 ? 1 : 0;
  const sim::i64 i = h.first_i + step;
  std::vector<const sim::PipeInterval*> ops;
  for (const sim::PipeInterval& iv : h.intervals)
    if (iv.i == i) ops.push_back(&iv);
  std::stable_sort(ops.begin(), ops.end(), [](const sim::PipeInterval* a, const sim::PipeInterval* b) { return a->start_ns < b->start_ns; });
  out << "  step i = " << i << " (µs from the CTA's start; warpgroup −1: the producer):\n";
  for (const sim::PipeInterval* iv : ops)
    out << "    " << fixed(iv->start_ns * 1e-3, 3) << " – " << fixed((iv->start_ns + iv->busy_ns) * 1e-3, 3) << "  "
        << sim::to_string(iv->unit) << ", warpgroup " << iv->warpgroup << ": " << sim::to_string(iv->op) << "\n";
  out << "    " << fixed(h.barrier_ns[static_cast<size_t>(step)] * 1e-3, 3)
      << "          both halves of dS_ijᵀ stored: the barrier opens, dQ_i = dS_ij K_j may start\n";
}

class PipelineCommand final : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("pipeline",
                              "the Hopper rung's schedule inside a CTA and the launch it makes, beside what fa3_hopper measured");
    flags_.hw = default_hardware();
    flags_.batch = "4";
    flags_.seq = "4096";
    flags_.head_dim = "128";
    add_problem_flags(*app, flags_, /*with_tiles=*/false);
    app->add_option("--pass", pass_, "fwd | bwd: the forward rung's schedule (fa3_hopper, a CTA per Q_i) or the "
                                     "backward's (fa3_hopper_bwd, a CTA per K_j, V_j); default fwd");
    app->add_option("--row-block", row_block_, "the row block i whose schedule is printed (default: the last, the heaviest)");
    app->add_option("--col-block", col_block_,
                    "with --pass bwd: the column block j whose schedule is printed (default: 0, the heaviest)");
    app->add_option("--csv", csv_, "write that row block's timeline (every op: unit, warpgroup, j, start, busy, end) as CSV");
    app->add_option("--results", results_, "a results file (flashlab bench) with fa3_hopper rows on this problem");
  }

  int run() override {
    const Resolved r = resolve(flags_);
    const std::optional<sim::PassSelection> pass = sim::parse_pass_selection(pass_);
    if (pass != sim::PassSelection::fwd && pass != sim::PassSelection::bwd)
      throw UsageError("--pass: '" + pass_ + "' is not a pass the pipeline shows (expected fwd or bwd)");
    require_output_folder("--csv", csv_);
    if (pass == sim::PassSelection::bwd) {
      if (row_block_) throw UsageError("--row-block: the backward's CTA owns a column block: use --col-block");
      if (!results_.empty()) throw UsageError("--results: the backward's launch is not modelled; only its CTA's schedule");
      print_bwd(r, col_block_ ? *col_block_ : 0, csv_, std::cout);
      return 0;
    }
    if (col_block_) throw UsageError("--col-block: only with --pass bwd (the forward's CTA owns a row block: --row-block)");
    const sim::AttentionProblem& p = r.problem;
    const auto c = sim::hopper_config(p);
    if (!c)
      throw UsageError("--head-dim: the Hopper rung is compiled for d = " + sim::hopper_head_dims_text() + ", not d = " +
                       std::to_string(p.head_dim));
    if (p.dtype == sim::DType::fp32) throw UsageError("--dtype: the Hopper rung runs fp16 and bf16, not fp32");
    const sim::TileGrid g(p, sim::tiles_of(*c));
    const sim::i64 i = row_block_ ? *row_block_ : g.T_r - 1;
    if (i < 0 || i >= g.T_r)
      throw UsageError("--row-block: " + std::to_string(i) + " is outside 0.." + std::to_string(g.T_r - 1));
    // The results file is read before anything is printed: a file that cannot be
    // read refuses the command with nothing on stdout.
    std::optional<analysis::BenchResults> measured;
    if (!results_.empty()) {
      try {
        measured = analysis::bench_from_file(results_);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
    }
    sim::HopperPipeline h;
    sim::HopperLaunchEstimate launch;
    try {
      h = sim::simulate_hopper_pipeline(p, i, *c, r.hw);
      launch = sim::estimate_hopper_launch(p, *c, r.hw);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (!csv_.empty()) write_csv(h, csv_);

    std::ostream& out = std::cout;
    const sim::PipelineRates& rt = h.rates;
    out << "The Hopper rung's schedule (fa3_hopper) on " << r.hw.display_name << "\n";
    out << "  problem   " << sim::describe(p) << "\n";
    out << "  config    B_r × B_c = " << c->Br << " × " << c->Bc << " (T_r = " << g.T_r << ", T_c = " << g.T_c << "), "
        << c->consumers() << " consumer warpgroups, " << c->stages << "-stage K_j/V_j ring"
        << (c->overlap ? ", each warpgroup's softmax overlapped with its own P̃_ij V_j" : "")
        << (c->persistent ? ", persistent (Q_i in two buffers)" : "") << "; shared memory "
        << sim::bytes_iec(static_cast<double>(sim::hopper_smem_bytes(*c))) << "\n";
    out << "  rates     one SM: tensor cores " << fixed(rt.mma_flops_per_ns * 1e-3, 2) << " TFLOP/s, exp2 "
        << fixed(rt.exp_per_ns, 1) << " per ns (" << fixed(sim::kExpPerClockPerSm, 0) << " per clock), copies "
        << fixed(rt.copy_bytes_per_ns, 1) << " GB/s (the " << rt.copy_source << "'s share), copy latency "
        << fixed(rt.copy_latency_ns, 0) << " ns (assumed " << fixed(sim::kCopyLatencyCycles, 0) << " cycles)\n";
    if (rt.copy_source != "L2")
      out << "            " << r.hw.name
          << " has no L2 bandwidth: the copies get HBM's share, slower than the L2 that serves most of K_j, V_j\n";
    const sim::PipeInterval* k0 = h.find(sim::PipeOp::copy_K, 0);
    out << "  per visit one warpgroup: S_ij = Q_i K_jᵀ and O_i += P̃_ij V_j " << us(h.gemm_ns_per_visit)
        << " on the tensor cores, softmax " << us(h.softmax_ns_per_visit) << " (" << pct(h.softmax_ns_per_visit / h.gemm_ns_per_visit)
        << " of the products)";
    if (k0 != nullptr) out << "; K_j or V_j copied in " << us(k0->busy_ns);
    out << "\n";
    out << "  row block i = " << i << ": " << h.visits << " K_j, V_j visited, " << us(h.end_ns)
        << "; busy: tensor cores " << pct(h.tensor_utilisation()) << ", softmax units "
        << pct(h.end_ns > 0 ? h.softmax_busy_ns / h.end_ns : 0) << ", copy engine "
        << pct(h.end_ns > 0 ? h.copy_busy_ns / h.end_ns : 0) << "\n";
    const double flops = static_cast<double>(analysis::convention_flops(p, sim::Pass::fwd));
    out << "  launch    " << sim::group_digits(launch.ctas)
        << (c->persistent ? " tiles on " + std::to_string(launch.blocks) + " persistent blocks ("
                          : " CTAs on " + std::to_string(launch.sms) + " SMs (")
        << (c->persistent ? per_block(launch) : fixed(launch.waves, 1) + " waves; ") << launch.method
        << "): " << fixed(launch.time_s * 1e3, 3) << " ms, " << fixed(flops / launch.time_s * 1e-12, 0)
        << " TFLOP/s (4·B·H·N²·d" << (p.causal ? "/2" : "")
        << "), tensor cores busy " << pct(launch.tensor_busy_fraction) << " (model)\n";
    if (measured) print_measured(*measured, p, sim::tiles_of(*c), launch, flops, out);
    return 0;
  }

 private:
  void print_measured(const analysis::BenchResults& res, const sim::AttentionProblem& p, sim::TileShape tiles,
                      const sim::HopperLaunchEstimate& launch, double flops, std::ostream& out) const {
    int shown = 0;
    for (const analysis::BenchRow& row : res.rows) {
      if (row.kernel != "fa3_hopper" || row.direction != "fwd" || row.problem != p) continue;
      ++shown;
      if (row.status != sim::RunStatus::ok) {
        out << "  measured  fa3_hopper " << sim::to_string(row.status) << ": " << row.reason << "\n";
        continue;
      }
      const double t = row.time_ms_median * 1e-3;
      out << "  measured  fa3_hopper " << fixed(row.time_ms_median, 3) << " ms (" << fixed(flops / t * 1e-12, 0)
          << " TFLOP/s) on " << (res.meta.gpu.empty() ? std::string("the results' GPU") : res.meta.gpu)
          << ": the model's time is " << fixed(launch.time_s / t, 2) << " of it\n";
      if (row.tiles.Br > 0 && !(row.tiles == tiles))
        out << "            (that run had tiles " << row.tiles.Br << " × " << row.tiles.Bc << ", another build's; the model "
            << "above is today's " << tiles.Br << " × " << tiles.Bc << ")\n";
    }
    if (shown == 0) out << "  measured  no fa3_hopper row on this problem in " << results_ << "\n";
  }

  ProblemFlags flags_;
  std::string pass_ = "fwd";
  std::optional<sim::i64> row_block_, col_block_;
  std::string csv_, results_;
};

}  // namespace

std::unique_ptr<Command> make_pipeline_command() { return std::make_unique<PipelineCommand>(); }

}  // namespace flashlab::cli
