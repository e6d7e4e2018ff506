#include "protocol.hpp"

#include <stdexcept>

namespace flashlab::kernels {

// The options a child runs its cases with, one list for both directions (the
// fp64 reference cache and the tile request stay the child's own). An unknown
// check mode reads as the default, sampled.
NLOHMANN_JSON_SERIALIZE_ENUM(CheckMode,
                             {{CheckMode::sampled, "sampled"}, {CheckMode::off, "off"}, {CheckMode::full, "full"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunOptions, warmup, repeats, max_repeats, target_ms, l2_flush, check,
                                   check_flop_budget, mem_limit_bytes, seed, input_scale, max_rel_error, counters)

}  // namespace flashlab::kernels

namespace flashlab::kernels::student::detail {

using nlohmann::json;

namespace {

sim::DType dtype_of(const json& j) {
  const auto t = sim::parse_dtype(j.get<std::string>());
  if (!t) throw std::runtime_error("unknown dtype " + j.dump());
  return *t;
}

json optional_dtype(const std::optional<sim::DType>& t) {
  return t ? json(std::string(sim::to_string(*t))) : json(nullptr);
}

std::optional<sim::DType> optional_dtype_of(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return dtype_of(j[key]);
}

}  // namespace

json to_json(const sim::AttentionProblem& p) {
  return {{"batch", p.batch},       {"heads", p.heads},   {"kv_heads", p.kv_heads}, {"seq_q", p.seq_q},
          {"seq_kv", p.seq_kv},     {"head_dim", p.head_dim}, {"causal", p.causal},
          {"dtype", std::string(sim::to_string(p.dtype))}};
}

sim::AttentionProblem problem_from_json(const json& j) {
  sim::AttentionProblem p;
  p.batch = j.at("batch").get<sim::i64>();
  p.heads = j.at("heads").get<sim::i64>();
  p.kv_heads = j.at("kv_heads").get<sim::i64>();
  p.seq_q = j.at("seq_q").get<sim::i64>();
  p.seq_kv = j.at("seq_kv").get<sim::i64>();
  p.head_dim = j.at("head_dim").get<sim::i64>();
  p.causal = j.at("causal").get<bool>();
  p.dtype = dtype_of(j.at("dtype"));
  return p;
}

json to_json(const sim::MeasuredRun& r) {
  return {{"kernel", r.kernel},
          {"model", r.model},
          {"direction", r.direction},
          {"problem", to_json(r.problem)},
          {"tiles", {r.tiles.Br, r.tiles.Bc}},
          {"status", std::string(sim::to_string(r.status))},
          {"reason", r.reason},
          {"time_ms", {r.time_ms_median, r.time_ms_min, r.time_ms_max}},
          {"repeats", r.repeats},
          {"launch_host_us", r.launch_host_us},
          {"peak_memory_bytes", r.peak_memory_bytes},
          {"mem_limit_bytes", r.mem_limit_bytes},
          {"rel_error", r.rel_error},
          {"ctas_per_sm", r.ctas_per_sm},
          {"heaviest_first", r.heaviest_first},
          {"o_accumulator", optional_dtype(r.storage.o_accumulator)},
          {"dq_accumulator", optional_dtype(r.storage.dq_accumulator)},
          {"dkv_accumulator", optional_dtype(r.storage.dkv_accumulator)},
          {"bytes", {r.dram_read_bytes, r.dram_write_bytes, r.l2_read_bytes, r.l2_write_bytes}},
          {"counters_note", r.counters_note}};
}

sim::MeasuredRun run_from_json(const json& j) {
  sim::MeasuredRun r;
  r.kernel = j.at("kernel").get<std::string>();
  r.model = j.at("model").get<std::string>();
  r.direction = j.at("direction").get<std::string>();
  r.problem = problem_from_json(j.at("problem"));
  r.tiles = {j.at("tiles").at(0).get<sim::i64>(), j.at("tiles").at(1).get<sim::i64>()};
  const auto status = sim::parse_run_status(j.at("status").get<std::string>());
  if (!status) throw std::runtime_error("unknown status " + j.at("status").dump());
  r.status = *status;
  r.reason = j.at("reason").get<std::string>();
  r.time_ms_median = j.at("time_ms").at(0).get<double>();
  r.time_ms_min = j.at("time_ms").at(1).get<double>();
  r.time_ms_max = j.at("time_ms").at(2).get<double>();
  r.repeats = j.at("repeats").get<int>();
  r.launch_host_us = j.at("launch_host_us").get<double>();
  r.peak_memory_bytes = j.at("peak_memory_bytes").get<sim::i64>();
  r.mem_limit_bytes = j.at("mem_limit_bytes").get<sim::i64>();
  r.rel_error = j.at("rel_error").get<double>();
  r.ctas_per_sm = j.at("ctas_per_sm").get<sim::i64>();
  r.heaviest_first = j.at("heaviest_first").get<bool>();
  r.storage.o_accumulator = optional_dtype_of(j, "o_accumulator");
  r.storage.dq_accumulator = optional_dtype_of(j, "dq_accumulator");
  r.storage.dkv_accumulator = optional_dtype_of(j, "dkv_accumulator");
  const json& b = j.at("bytes");
  r.dram_read_bytes = b.at(0).get<sim::i64>();
  r.dram_write_bytes = b.at(1).get<sim::i64>();
  r.l2_read_bytes = b.at(2).get<sim::i64>();
  r.l2_write_bytes = b.at(3).get<sim::i64>();
  r.counters_note = j.at("counters_note").get<std::string>();
  return r;
}

json to_json(const ChildRequest& r) {
  json versions = json::array();
  for (const CompiledVersion& v : r.versions)
    versions.push_back({{"dtype", std::string(sim::to_string(v.dtype))},
                        {"head_dim", v.head_dim},
                        {"target", v.target},
                        {"image", v.image},
                        {"threads", v.block.threads},
                        {"smem_bytes", v.block.smem_bytes}});
  json problems = json::array();
  for (const sim::AttentionProblem& p : r.problems) problems.push_back(to_json(p));
  return {{"kernel_path", r.kernel_path},
          {"versions", versions},
          {"problems", problems},
          {"options", r.options},
          {"device", r.device}};
}

ChildRequest request_from_json(const json& j) {
  ChildRequest r;
  r.kernel_path = j.at("kernel_path").get<std::string>();
  for (const json& v : j.at("versions")) {
    CompiledVersion c;
    c.dtype = dtype_of(v.at("dtype"));
    c.head_dim = v.at("head_dim").get<sim::i64>();
    c.target = v.at("target").get<std::string>();
    c.image = v.at("image").get<std::string>();
    c.block.threads = v.at("threads").get<sim::i64>();
    c.block.smem_bytes = v.at("smem_bytes").get<sim::i64>();
    r.versions.push_back(std::move(c));
  }
  for (const json& p : j.at("problems")) r.problems.push_back(problem_from_json(p));
  r.options = j.at("options").get<RunOptions>();
  r.device = j.at("device").get<int>();
  return r;
}

}  // namespace flashlab::kernels::student::detail
