#include "flashlab/analysis/model/report.hpp"

#include <cstdio>

namespace flashlab::analysis {

using nlohmann::json;

json problem_json(const sim::AttentionProblem& p) {
  return json{{"batch", p.batch},       {"heads", p.heads},   {"seq_q", p.n_q()},
              {"seq_kv", p.n_kv()},     {"head_dim", p.d()},  {"causal", p.causal},
              {"dtype", std::string(sim::to_string(p.dtype))}};
}

json l2_json(const sim::L2Result& l2) {
  auto tensor_json = [](const sim::TensorTraffic& t) {
    return json{{"request_read_bytes", t.request_read_bytes},
                {"request_write_bytes", t.request_write_bytes},
                {"l2_hit_read_bytes", t.l2_hit_read_bytes},
                {"dram_read_bytes", t.dram_read_bytes},
                // Written back during the run plus dirty at its end (written back later).
                {"dram_write_bytes", t.dram_write_bytes + t.dirty_at_end_bytes},
                {"dram_write_during_run_bytes", t.dram_write_bytes},
                {"dirty_at_end_bytes", t.dirty_at_end_bytes},
                {"l2_absorbed_write_bytes", t.l2_absorbed_write_bytes}};
  };
  json j{{"modelled", l2.modelled}, {"why_not", l2.why_not}, {"l2_bytes", l2.l2_bytes},
         {"l2_partitions", l2.l2_partitions}, {"method", l2.method}};
  j["launch"] = json{{"sm_count", l2.launch.sm_count},
                     {"ctas_per_sm", l2.launch.ctas_per_sm},
                     {"concurrent_ctas", l2.launch.concurrent_ctas()},
                     {"heaviest_first", l2.launch.heaviest_first},
                     {"source", l2.launch.source}};
  json per_tensor = json::object();
  for (int t = 0; t < sim::kTensorCount; ++t) {
    const sim::TensorTraffic& x = l2.tensors[static_cast<size_t>(t)];
    if (x.request_read_bytes != 0 || x.request_write_bytes != 0)
      per_tensor[std::string(sim::to_string(static_cast<sim::Tensor>(t)))] = tensor_json(x);
  }
  j["per_tensor"] = per_tensor;
  j["total"] = tensor_json(l2.total());
  j["read_hit_rate"] = l2.read_hit_rate();
  return j;
}

json sim_json(const sim::SimResult& r, const sim::HardwareModel& hw) {
  json j;
  j["algorithm"] = std::string(sim::to_string(r.algorithm));
  j["problem"] = problem_json(r.problem);
  j["hardware"] = hw.name;
  std::vector<std::string> problems = r.messages();
  j["problems"] = problems;
  j["ok"] = r.ok();
  if (!r.ok() && r.T_r == 0) return j;
  j["tiles"] = json{{"Br", r.tiles.Br},
                    {"Bc", r.tiles.Bc},
                    {"Tr", r.T_r},
                    {"Tc", r.T_c},
                    {"rule", r.tile_rule},
                    {"total_blocks", r.total_blocks},
                    {"visited_blocks", r.visited_blocks},
                    {"masked_blocks", r.masked_blocks}};
  auto traffic = [](const sim::Traffic& t) {
    return json{{"read_bytes", t.read_bytes},
                {"write_bytes", t.write_bytes},
                {"read_elements", t.read_elements},
                {"write_elements", t.write_elements}};
  };
  json hbm = traffic(r.total.level(sim::Level::HBM));
  json per_tensor = json::object();
  for (int t = 0; t < sim::kTensorCount; ++t) {
    const sim::Traffic& x = r.total.at(sim::Level::HBM, static_cast<sim::Tensor>(t));
    if (x.read_bytes != 0 || x.write_bytes != 0)
      per_tensor[std::string(sim::to_string(static_cast<sim::Tensor>(t)))] = traffic(x);
  }
  hbm["per_tensor"] = per_tensor;
  j["hbm"] = hbm;
  // The re-reads of K_j, V_j that the materialising GEMMs send straight to the
  // L2 after the first row block: counted apart from the paper's HBM accesses,
  // zero for the FlashAttention algorithms. Not the L2 model below.
  j["gemm_l2_rereads"] = traffic(r.total.level(sim::Level::L2));
  j["l2"] = l2_json(r.l2);
  j["dram"] = json{{"read_bytes", r.dram_read_bytes()}, {"write_bytes", r.dram_write_bytes()}, {"bytes", r.dram_bytes()}};
  json sram = traffic(r.total.level(sim::Level::SRAM));
  sram["peak_bytes"] = r.sram_peak_bytes;
  sram["capacity_bytes"] = r.sram_capacity_bytes;
  j["sram"] = sram;
  j["flops"] = json{{"matmul", r.total.matmul_flops},
                    {"softmax", r.total.softmax_flops},
                    {"exact", r.total.flops()},
                    {"convention", convention_flops(r.problem, sim::algorithm_info(r.algorithm).pass)},
                    {"exps", r.total.exps}};
  const RooflineEstimate roof = roofline(r, hw);
  j["arithmetic_intensity"] = roof.ai;
  j["roofline"] = json{{"unit", std::string(sim::to_string(sim::HardwareModel::default_unit(r.problem.dtype)))},
                       {"peak_flops", roof.peak_flops},
                       {"hbm_bandwidth", roof.bandwidth},
                       {"ridge_point", roof.ridge},
                       {"attainable_flops", roof.attainable},
                       {"time_lower_bound_s", roof.time_s},
                       {"bound", roof.memory_bound ? "memory" : "compute"}};
  j["events_per_head"] = r.events_per_head;
  j["method"] = r.method;
  return j;
}

std::vector<std::string> result_csv_header() {
  return {"axis", "value", "algorithm", "batch", "heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal",
          "hardware", "sram_bytes", "Br", "Bc", "Tr", "Tc", "visited_blocks", "masked_blocks",
          "hbm_read_bytes", "hbm_write_bytes", "hbm_bytes", "gemm_l2_reread_bytes", "l2_modelled",
          "dram_read_bytes", "dram_write_bytes", "l2_read_hit_rate", "sram_read_bytes",
          "sram_write_bytes", "sram_peak_bytes", "matmul_flops", "softmax_flops", "convention_flops",
          "arithmetic_intensity", "attainable_tflops", "time_lower_bound_ms", "bound",
          "theta_nd_plus_n2_bytes", "theta_n2d2_over_m_bytes", "ok", "problems"};
}

std::vector<std::string> result_csv_fields(const sim::SimResult& r, const RooflineEstimate& roof,
                                           const std::string& axis, i64 value, double theta_standard,
                                           double theta_flash) {
  const sim::AttentionProblem& p = r.problem;
  std::string problems;
  for (const std::string& m : r.messages()) problems += (problems.empty() ? "" : "; ") + m;
  auto s = [](i64 v) { return std::to_string(v); };
  const sim::Traffic hbm = r.total.level(sim::Level::HBM);
  const sim::Traffic sram = r.total.level(sim::Level::SRAM);
  const bool has = r.ok() || r.T_r > 0;
  return {axis,
          s(value),
          std::string(sim::to_string(r.algorithm)),
          s(p.batch),
          s(p.heads),
          s(p.n_q()),
          s(p.n_kv()),
          s(p.d()),
          std::string(sim::to_string(p.dtype)),
          p.causal ? "1" : "0",
          r.hardware,
          s(r.sram_capacity_bytes),
          has ? s(r.tiles.Br) : "",
          has ? s(r.tiles.Bc) : "",
          has ? s(r.T_r) : "",
          has ? s(r.T_c) : "",
          has ? s(r.visited_blocks) : "",
          has ? s(r.masked_blocks) : "",
          r.ok() ? s(hbm.read_bytes) : "",
          r.ok() ? s(hbm.write_bytes) : "",
          r.ok() ? s(hbm.bytes()) : "",
          r.ok() ? s(r.total.level(sim::Level::L2).read_bytes) : "",
          r.ok() ? (r.l2.modelled ? "1" : "0") : "",
          r.ok() ? s(r.dram_read_bytes()) : "",
          r.ok() ? s(r.dram_write_bytes()) : "",
          r.ok() && r.l2.modelled ? fixed(r.l2.read_hit_rate(), 6) : "",
          r.ok() ? s(sram.read_bytes) : "",
          r.ok() ? s(sram.write_bytes) : "",
          has ? s(r.sram_peak_bytes) : "",
          r.ok() ? s(r.total.matmul_flops) : "",
          r.ok() ? s(r.total.softmax_flops) : "",
          r.ok() ? s(convention_flops(p, sim::algorithm_info(r.algorithm).pass)) : "",
          r.ok() ? fixed(roof.ai, 4) : "",
          r.ok() ? fixed(roof.attainable / 1e12, 3) : "",
          r.ok() ? fixed(roof.time_s * 1e3, 6) : "",
          r.ok() ? (roof.memory_bound ? "memory" : "compute") : "",
          fixed(theta_standard, 0),
          fixed(theta_flash, 0),
          r.ok() ? "1" : "0",
          problems};
}

std::string TextTable::str() const {
  std::vector<size_t> w(header_.size(), 0);
  auto width = [](const std::string& s) {
    size_t n = 0;  // UTF-8 code points
    for (unsigned char c : s)
      if ((c & 0xC0) != 0x80) ++n;
    return n;
  };
  for (size_t c = 0; c < header_.size(); ++c) w[c] = width(header_[c]);
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(row[c]));
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const std::string pad(w[c] - width(cell), ' ');
      if (c > 0) out += "  ";
      out += c == 0 ? cell + pad : pad + cell;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  line(header_);
  size_t total = 0;
  for (size_t c = 0; c < w.size(); ++c) total += w[c] + (c > 0 ? 2 : 0);
  out += std::string(total, '-') + '\n';
  for (const auto& row : rows_) line(row);
  return out;
}

std::string algorithm_keys(const std::vector<sim::Algorithm>& algos, const std::string& separator) {
  std::string s;
  for (sim::Algorithm a : algos) s += (s.empty() ? "" : separator) + std::string(sim::algorithm_info(a).key);
  return s;
}

}  // namespace flashlab::analysis
