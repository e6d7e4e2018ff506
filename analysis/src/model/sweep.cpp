#include "flashlab/analysis/model/sweep.hpp"

#include <mutex>
#include <stdexcept>

#include "flashlab/sim/core/closest_name.hpp"
#include "flashlab/sim/core/format.hpp"
#include "parallel.hpp"

namespace flashlab::analysis {

const std::vector<sim::Algorithm>& default_algorithms() {
  static const std::vector<sim::Algorithm> algos = [] {
    std::vector<sim::Algorithm> out;
    for (sim::Algorithm a : sim::all_algorithms())
      if (sim::algorithm_info(a).drawn_by_default) out.push_back(a);
    return out;
  }();
  return algos;
}

std::string_view to_string(SweepAxis a) {
  switch (a) {
    case SweepAxis::seq: return "seq";
    case SweepAxis::head_dim: return "head-dim";
    case SweepAxis::sram: return "sram";
    case SweepAxis::batch: return "batch";
    case SweepAxis::heads: return "heads";
  }
  return "?";
}

namespace {

constexpr size_t kMaxPoints = 100000;

SweepAxis parse_axis(const std::string& s) {
  if (s == "seq" || s == "n" || s == "seq-len") return SweepAxis::seq;
  if (s == "head-dim" || s == "d" || s == "head_dim") return SweepAxis::head_dim;
  if (s == "sram" || s == "m") return SweepAxis::sram;
  if (s == "batch" || s == "b") return SweepAxis::batch;
  if (s == "heads" || s == "h") return SweepAxis::heads;
  if (s == "emb-dim" || s == "emb_dim" || s == "emb")
    throw std::invalid_argument("'" + s + "' is not an axis of its own: the embedding dim is heads · head-dim, so vary "
                                "head-dim at fixed --heads (E = H·d grows with d) or heads at fixed --head-dim");
  const std::vector<std::string> axes{"seq", "head-dim", "sram", "batch", "heads"};
  throw std::invalid_argument("unknown sweep axis '" + s + "'" + sim::did_you_mean(s, axes) +
                              " (expected seq, head-dim, sram, batch, heads)");
}

i64 size_or_throw(const std::string& s, const std::string& whole) {
  const auto v = sim::parse_size(s);
  if (!v || *v < 1)
    throw std::invalid_argument("sweep '" + whole + "': '" + s + "' is not a positive size");
  return *v;
}

}  // namespace

SweepSpec parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("sweep '" + text + "' must look like seq=512:65536:x2 or head-dim=32,64,128");
  SweepSpec spec;
  spec.axis = parse_axis(text.substr(0, eq));
  const std::string body = text.substr(eq + 1);
  if (body.empty()) throw std::invalid_argument("sweep '" + text + "' has no values");
  if (body.find(':') != std::string::npos) {
    const auto c1 = body.find(':');
    const auto c2 = body.find(':', c1 + 1);
    if (c2 == std::string::npos)
      throw std::invalid_argument("sweep '" + text + "': a range needs start:stop:step (step x2 or +64)");
    const i64 start = size_or_throw(body.substr(0, c1), text);
    const i64 stop = size_or_throw(body.substr(c1 + 1, c2 - c1 - 1), text);
    const std::string step = body.substr(c2 + 1);
    if (stop < start) throw std::invalid_argument("sweep '" + text + "': stop is below start");
    if (step.size() < 2 || (step[0] != 'x' && step[0] != '*' && step[0] != '+'))
      throw std::invalid_argument("sweep '" + text + "': step must be xK (multiply) or +K (add)");
    const i64 k = size_or_throw(step.substr(1), text);
    const bool geometric = step[0] != '+';
    if (geometric && k < 2) throw std::invalid_argument("sweep '" + text + "': a geometric step must be x2 or more");
    for (i64 v = start; v <= stop;) {
      spec.values.push_back(v);
      if (spec.values.size() > kMaxPoints)
        throw std::invalid_argument("sweep '" + text + "' has more than 100,000 points");
      if (geometric ? v > stop / k : v > stop - k) break;
      v = geometric ? v * k : v + k;
    }
  } else {
    size_t pos = 0;
    while (pos <= body.size()) {
      const auto comma = body.find(',', pos);
      const std::string item = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      spec.values.push_back(size_or_throw(item, text));
      if (spec.values.size() > kMaxPoints)
        throw std::invalid_argument("sweep '" + text + "' has more than 100,000 points");
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return spec;
}

double theta_standard_bytes(const sim::AttentionProblem& p) {
  const double n = static_cast<double>(p.n_q()), nk = static_cast<double>(p.n_kv()), d = static_cast<double>(p.d());
  return (n * d + n * nk) * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
         static_cast<double>(sim::dtype_bytes(p.dtype));
}

double theta_flash_bytes(const sim::AttentionProblem& p, i64 sram_bytes) {
  const double M = static_cast<double>(sim::sram_elements(sram_bytes, p.dtype));
  const double n = static_cast<double>(p.n_q()), nk = static_cast<double>(p.n_kv()), d = static_cast<double>(p.d());
  if (M <= 0) return 0;
  return n * nk * d * d / M * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
         static_cast<double>(sim::dtype_bytes(p.dtype));
}

sim::Algorithm standard_attention() {
  for (sim::Algorithm a : sim::all_algorithms())
    if (sim::algorithm_info(a).materializes_scores) return a;
  return sim::all_algorithms().front();
}

sim::AttentionProblem apply_axis(sim::AttentionProblem p, SweepAxis axis, i64 v) {
  switch (axis) {
    case SweepAxis::seq:
      if (p.seq_kv == p.seq_q) p.seq_kv = v;
      p.seq_q = v;
      break;
    case SweepAxis::head_dim: p.head_dim = v; break;
    case SweepAxis::batch: p.batch = v; break;
    case SweepAxis::heads: p.heads = v; break;
    case SweepAxis::sram: break;
  }
  return p;
}

std::vector<SweepRow> run_sweep(const sim::AttentionProblem& base, const sim::HardwareModel& hw,
                                const SweepSpec& spec, const std::vector<sim::Algorithm>& algorithms,
                                const sim::SimOptions& options,
                                const std::function<void(std::size_t done, std::size_t total)>& progress) {
  const std::size_t na = algorithms.size();
  std::vector<SweepRow> rows(spec.values.size() * na);
  std::mutex progress_mutex;
  std::size_t done = 0;
  // Every (point, algorithm) is independent: each on its own core, written to its own row.
  detail::parallel_for(rows.size(), [&](std::size_t k) {
    const i64 v = spec.values[k / na];
    const sim::Algorithm a = algorithms[k % na];
    const sim::AttentionProblem p = apply_axis(base, spec.axis, v);
    sim::SimOptions opt = options;
    opt.stream_event_limit = 0;  // closed forms
    if (spec.axis == SweepAxis::sram) opt.sram_bytes = v;
    const i64 M = opt.sram_bytes > 0 ? opt.sram_bytes : hw.sram_bytes_per_sm;
    SweepRow& row = rows[k];
    row.value = v;
    row.result = sim::simulate(a, p, hw, opt);  // each with its own tile rule
    if (row.result.ok()) row.roof = roofline(row.result, hw);
    row.theta_standard = theta_standard_bytes(p);
    row.theta_flash = theta_flash_bytes(p, M);
    if (progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      progress(++done, rows.size());
    }
  });
  return rows;
}

double fitted_constant(const std::vector<double>& exact, const std::vector<double>& theta) {
  for (size_t k = exact.size(); k-- > 0;)
    if (k < theta.size() && theta[k] > 0 && exact[k] > 0) return exact[k] / theta[k];
  return 0;
}

}  // namespace flashlab::analysis
