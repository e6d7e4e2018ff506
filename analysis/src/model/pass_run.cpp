#include "flashlab/analysis/model/pass_run.hpp"

#include <algorithm>
#include <stdexcept>

namespace flashlab::analysis {

std::vector<sim::Algorithm> pass_algorithms(sim::Algorithm a, sim::PassSelection passes) {
  std::vector<sim::Pass> want;
  if (passes != sim::PassSelection::bwd) want.push_back(sim::Pass::fwd);
  if (passes != sim::PassSelection::fwd) want.push_back(sim::Pass::bwd);
  std::vector<sim::Algorithm> out;
  for (sim::Pass p : want) {
    const auto x = sim::with_pass(a, p);
    if (!x)
      throw std::invalid_argument(std::string(sim::algorithm_info(sim::forward_of(a)).key) + " has no " +
                                  (p == sim::Pass::fwd ? "forward" : "backward") + " pass in the simulator");
    out.push_back(*x);
  }
  return out;
}

RooflineEstimate sum_estimates(const std::vector<RooflineEstimate>& parts, double convention) {
  RooflineEstimate e;
  if (parts.empty()) return e;
  if (parts.size() == 1) {  // one pass: its own estimate, untouched
    e = parts.front();
    e.convention_flops = convention;
    return e;
  }
  for (const RooflineEstimate& p : parts) {
    e.flops += p.flops;
    e.request_bytes += p.request_bytes;
    e.dram_bytes += p.dram_bytes;
    e.time_s += p.time_s;
    e.compute_time_s += p.compute_time_s;
    e.memory_time_s += p.memory_time_s;
  }
  e.convention_flops = convention;
  e.peak_flops = parts.front().peak_flops;
  e.bandwidth = parts.front().bandwidth;
  e.ridge = parts.front().ridge;
  e.ai = arithmetic_intensity(e.flops, e.dram_bytes);
  e.ai_requests = arithmetic_intensity(e.flops, e.request_bytes);
  e.attainable = e.time_s > 0 ? e.flops / e.time_s : 0.0;
  e.memory_bound = e.memory_time_s >= e.compute_time_s;
  return e;
}

PassRun simulate_passes(sim::Algorithm a, sim::PassSelection passes, const sim::AttentionProblem& p,
                        const sim::HardwareModel& hw, const sim::SimOptions& options) {
  PassRun run;
  run.family = sim::forward_of(a);
  run.passes = passes;
  run.problem = p;
  for (sim::Algorithm x : pass_algorithms(a, passes)) {
    PassPart part{sim::simulate(x, p, hw, options), {}};
    if (part.result.ok()) part.roof = roofline(part.result, hw);
    run.parts.push_back(std::move(part));
  }
  if (!run.ok()) return run;
  std::vector<RooflineEstimate> roofs;
  for (const PassPart& part : run.parts) {
    run.total += part.result.total;
    run.dram_read_bytes += part.result.dram_read_bytes();
    run.dram_write_bytes += part.result.dram_write_bytes();
    roofs.push_back(part.roof);
  }
  run.roof = sum_estimates(roofs, static_cast<double>(convention_flops(p, passes)));
  return run;
}

bool PassRun::ok() const {
  for (const PassPart& p : parts)
    if (!p.result.ok()) return false;
  return !parts.empty();
}

std::vector<std::string> PassRun::errors() const {
  std::vector<std::string> out;
  for (const PassPart& p : parts)
    for (const std::string& e : p.result.errors())
      out.push_back(std::string(sim::to_string(p.result.algorithm)) + ": " + e);
  return out;
}

std::vector<std::string> PassRun::messages() const {
  // A finding both passes make is said once, naming both.
  std::vector<std::pair<std::string, std::string>> said;  // (message, algorithms)
  for (const PassPart& p : parts)
    for (const std::string& m : p.result.messages()) {
      const std::string who(sim::to_string(p.result.algorithm));
      auto it = std::find_if(said.begin(), said.end(), [&](const auto& x) { return x.first == m; });
      if (it == said.end()) said.emplace_back(m, who);
      else it->second += ", " + who;
    }
  std::vector<std::string> out;
  for (const auto& [m, who] : said) out.push_back(parts.size() > 1 ? who + ": " + m : m);
  return out;
}

std::string PassRun::label() const {
  if (parts.size() == 1) return std::string(sim::to_string(parts.front().result.algorithm));
  return std::string(sim::to_string(family)) + " " + std::string(sim::to_string(passes));
}

}  // namespace flashlab::analysis
