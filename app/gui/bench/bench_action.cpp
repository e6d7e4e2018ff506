#include "bench_action.hpp"

#include <stdexcept>

namespace flashlab::gui {

namespace {

using nlohmann::json;

void set_sweep(BenchAction& a, const json& x) {
  if (x.is_null()) return;
  if (!x.is_string() || x.get<std::string>().empty())
    throw std::runtime_error("bench.sweep must be the name of a sweep in assets/sweeps, or null for the current problem");
  a.request.sweep = x.get<std::string>();
  a.on_current_problem = false;
}

void set_kernels(BenchAction& a, const json& x) {
  if (!x.is_array()) throw std::runtime_error("bench.kernels must be a list of kernel ids, e.g. [\"fa2\", \"fa2_tc\"]");
  for (const json& id : x) {
    if (!id.is_string() || id.get<std::string>().empty())
      throw std::runtime_error("bench.kernels must be a list of kernel ids (strings)");
    a.request.kernels.push_back(id.get<std::string>());
  }
}

void set_repeats(BenchAction& a, const json& x) {
  if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > 1000)
    throw std::runtime_error("bench.repeats must be a whole number from 1 to 1000");
  a.request.repeats = static_cast<int>(x.get<long long>());
}

void set_counters(BenchAction& a, const json& x) { a.request.counters = bool_of(x, "bench.counters"); }

void set_pass(BenchAction& a, const json& x) {
  const auto p = x.is_string() ? sim::parse_pass_selection(x.get<std::string>()) : std::nullopt;
  if (!p) throw std::runtime_error("bench.pass must be \"fwd\", \"bwd\" or \"fwd+bwd\"");
  a.request.pass = *p;
}

}  // namespace

const std::vector<BenchKeyRow>& bench_key_rows() {
  static const std::vector<BenchKeyRow> rows{
      {{"sweep", "name | null", "a named sweep of assets/sweeps; null or absent: the current problem"}, set_sweep},
      {{"kernels", "[kernel id, ...]", "the kernels run (default: the sweep's, or every kernel of the registry)"}, set_kernels},
      {{"repeats", "1 to 1000", "timed runs per case (default 10)"}, set_repeats},
      {{"counters", "bool", "a CUPTI counter pass per case for the DRAM bytes (default false)"}, set_counters},
      {{"pass", "fwd | bwd | fwd+bwd", "which rungs \"every kernel\" means (default fwd)"}, set_pass},
  };
  return rows;
}

BenchAction parse_bench_action(const json& v) {
  if (!v.is_object())
    throw std::runtime_error("bench must be {\"sweep\": NAME or null, \"kernels\": [...], \"repeats\": N, \"counters\": true}");
  BenchAction a;
  a.on_current_problem = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const BenchKeyRow* row = find_key(bench_key_rows(), it.key());
    if (!row) throw std::runtime_error("unknown key bench." + it.key() + " (expected " + key_list(bench_key_rows()) + ")");
    row->apply(a, *it);
  }
  return a;
}

double parse_wait_bench(const json& v) {
  if (v.is_boolean()) {
    if (!v.get<bool>()) throw std::runtime_error("wait_bench must be true or a timeout in seconds (false waits for nothing)");
    return kDefaultBenchWaitS;
  }
  if (v.is_number() && v.get<double>() > 0 && v.get<double>() <= 86400) return v.get<double>();
  throw std::runtime_error("wait_bench must be true or a timeout in seconds (above 0, at most 86400)");
}

}  // namespace flashlab::gui
