#include "flashlab/analysis/student/kernel_grade.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

// How each declared loop nest moves its bytes: the sentence a student reads
// when their kernel's requests are not the model's.
std::string loop_hint(sim::Algorithm a) {
  switch (a) {
    case sim::Algorithm::standard:
      return "standard attention writes S and P to memory once each and reads each back once";
    case sim::Algorithm::fa1:
      return "Algorithm 1 reads each K_j, V_j once (its outer loop) and streams Q_i, O_i, ℓ_i, m_i past it "
             "(its inner loop): look at your loop order";
    case sim::Algorithm::fa2:
      return "FlashAttention-2 reads Q_i once, keeps O_i, ℓ_i, m_i on chip and streams every K_j, V_j past it: "
             "look at your loop order";
    default:
      return "";
  }
}

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 10 ? "%.0f" : "%.1f", r);
  return buf;
}

std::string tiles_text(sim::TileShape t) {
  return t.Br > 0 ? std::to_string(t.Br) + " × " + std::to_string(t.Bc) + " tiles" : std::string("its own tiles");
}

// What the declared loop nest asks of global memory, per tensor, as the SMs
// ask it of the L2 (what the L2's counters see): the model's requests (its
// HBM level) and the re-reads it sends to the L2 directly (its L2 level).
// The model is the paper's: one SRAM per head, so fa1 loads each K_j, V_j
// once; a kernel that loads them again in every thread block asks for more.
sim::Traffic model_requests(const sim::SimResult& r, std::optional<sim::Tensor> only = std::nullopt) {
  sim::Traffic t;
  for (int i = 0; i < sim::kGlobalTensorCount; ++i) {
    const auto tensor = static_cast<sim::Tensor>(i);
    if (only && tensor != *only) continue;
    for (const sim::Level l : {sim::Level::HBM, sim::Level::L2}) {
      t.read_bytes += r.total.at(l, tensor).read_bytes;
      t.write_bytes += r.total.at(l, tensor).write_bytes;
    }
  }
  return t;
}

double ratio_of(i64 measured, i64 model) {
  return measured >= 0 && model > 0 ? static_cast<double>(measured) / static_cast<double>(model) : 0;
}

bool ratio_within(double r, double tolerance) { return r > 0 && r <= 1 + tolerance && r >= 1 / (1 + tolerance); }

// One side's verdict: "reads 1.3× the bytes fa1 with 64 × 64 tiles would (L2 counted 134 MiB, the model 101 MiB)".
std::string side_text(const char* verb, double ratio, i64 measured, i64 model, const std::string& whom) {
  const bool more = ratio > 1;
  return std::string(verb) + " " + ratio_text(more ? ratio : 1 / ratio) + "× " + (more ? "more" : "fewer") +
         " bytes than " + whom + " would (L2 counted " + sim::bytes_iec(static_cast<double>(measured)) +
         ", the model " + sim::bytes_iec(static_cast<double>(model)) + ")";
}

}  // namespace

double BytesCheck::read_ratio() const { return ratio_of(measured_read, model_read); }
double BytesCheck::write_ratio() const { return ratio_of(measured_write, model_write); }
bool BytesCheck::within() const {
  return measured && ratio_within(read_ratio(), tolerance) && ratio_within(write_ratio(), tolerance);
}

double requests_tolerance(sim::Algorithm a) { return sim::algorithm_info(a).materializes_scores ? 1.0 : 0.25; }

std::vector<KernelGrade> grade_kernels(const BenchResults& results, const sim::HardwareModel& hw) {
  std::vector<KernelGrade> grades;
  std::map<std::string, std::size_t> index;
  for (const BenchRow& row : results.rows) {
    if (!is_user_kernel(row.kernel)) continue;
    auto [it, fresh] = index.emplace(row.kernel, grades.size());
    if (fresh) {
      KernelGrade g;
      g.id = row.kernel;
      g.name = row.kernel.substr(std::string("user:").size());
      g.model = row.model;
      g.tiles = row.tiles;
      grades.push_back(std::move(g));
    }
    KernelGrade& g = grades[it->second];
    ShapeGrade s;
    s.problem = row.problem;
    s.status = row.status;
    s.reason = row.reason;
    s.rel_error = row.rel_error;
    s.correct = row.status == sim::RunStatus::ok && row.rel_error >= 0;
    if (row.status == sim::RunStatus::ok && row.rel_error < 0) s.reason = "not checked against fp64 (--check off)";
    if (row.status == sim::RunStatus::ok && row.time_ms_median > 0) {
      s.time_ms = row.time_ms_median;
      s.tflops = row.tflops;
    }
    for (const BenchRow& other : results.rows)
      if (other.kernel == "fa2" && other.direction == "fwd" && other.problem == row.problem &&
          other.status == sim::RunStatus::ok && other.time_ms_median > 0)
        s.fa2_time_ms = other.time_ms_median;
    if (s.time_ms > 0 && s.fa2_time_ms > 0) s.speed_vs_fa2 = s.fa2_time_ms / s.time_ms;

    const auto algo = sim::model_algorithm(row);
    if (row.status == sim::RunStatus::ok && algo) {
      // The DRAM side is the bench table's own check (placement.hpp).
      const DramCheck d = dram_check(row);
      if (d.available) {
        s.dram.measured = true;
        s.dram.measured_read = row.dram_read_bytes;
        s.dram.measured_write = row.dram_write_bytes;
        s.dram.model_read = row.predicted_dram_read_bytes;
        s.dram.model_write = row.predicted_dram_write_bytes;
        s.dram.tolerance = d.target;
      }
      s.requests.tolerance = requests_tolerance(*algo);
      std::optional<sim::SimResult> model;
      if (row.l2_read_bytes >= 0 && row.l2_write_bytes >= 0) {
        RunModel m = model_of(row, hw);
        if (m.result) {
          const sim::Traffic t = model_requests(*m.result);
          s.requests.measured_read = row.l2_read_bytes;
          s.requests.measured_write = row.l2_write_bytes;
          s.requests.model_read = t.read_bytes;
          s.requests.model_write = t.write_bytes;
          s.requests.measured = t.read_bytes > 0;
          model = std::move(m.result);
        }
      }
      if (s.requests.measured && !s.requests.within()) {
        const std::string whom = std::string(sim::algorithm_info(*algo).key) + " with " + tiles_text(row.tiles);
        std::vector<std::string> parts;
        const double rr = s.requests.read_ratio(), wr = s.requests.write_ratio();
        if (!ratio_within(rr, s.requests.tolerance)) {
          std::string p = side_text("reads", rr, s.requests.measured_read, s.requests.model_read, whom);
          // Where extra reads come from when the loop order is wrong: K and V
          // re-read for every Q_i. Said as a comparison, not a measurement
          // (the counters do not tell tensors apart).
          const i64 kv = model_requests(*model, sim::Tensor::K).read_bytes + model_requests(*model, sim::Tensor::V).read_bytes;
          const i64 extra = s.requests.measured_read - s.requests.model_read;
          if (rr > 1 && kv > 0 && *algo != sim::Algorithm::standard)
            p += "; the extra " + sim::bytes_iec(static_cast<double>(extra)) + " is " +
                 ratio_text(static_cast<double>(extra) / static_cast<double>(kv)) + "× all that " + whom +
                 " reads of K and V (K_j, V_j read again for every Q_i: a loop over Q_i outside the loop over K_j, or a "
                 "thread block per Q_i that loads every K_j?)";
          parts.push_back(p);
        }
        if (!ratio_within(wr, s.requests.tolerance))
          parts.push_back(side_text("writes", wr, s.requests.measured_write, s.requests.model_write, whom));
        std::string v;
        for (const std::string& p : parts) v += (v.empty() ? "" : "; ") + p;
        v += " (tolerance ×" + ratio_text(1 + s.requests.tolerance) + "): the loop nest or the tiles it runs are not "
             "the ones it declares";
        if (rr > 1 && row.problem.causal && sim::algorithm_info(*algo).skips_masked_blocks && rr < 2.6)
          v += "; the model skips the blocks wholly above the diagonal — does your kernel?";
        if (const std::string h = loop_hint(*algo); !h.empty()) v += "; " + h;
        s.verdict = v;
      }
    }
    if (s.correct) ++g.correct;
    else if (row.status == sim::RunStatus::failed) ++g.wrong;
    else ++g.not_run;
    if (!s.verdict.empty() && std::find(g.notes.begin(), g.notes.end(), s.verdict) == g.notes.end())
      g.notes.push_back(s.verdict);
    g.shapes.push_back(std::move(s));
  }
  for (KernelGrade& g : grades) {
    std::vector<double> speeds;
    for (const ShapeGrade& s : g.shapes)
      if (s.speed_vs_fa2 > 0) speeds.push_back(s.speed_vs_fa2);
    if (!speeds.empty()) {
      std::sort(speeds.begin(), speeds.end());
      const std::size_t n = speeds.size();
      g.median_speed_vs_fa2 = n % 2 ? speeds[n / 2] : (speeds[n / 2 - 1] + speeds[n / 2]) / 2;
    }
  }
  return grades;
}

std::string grades_text(const std::vector<KernelGrade>& grades) {
  std::ostringstream out;
  for (const KernelGrade& g : grades) {
    const int total = static_cast<int>(g.shapes.size());
    out << "\n" << implementation_name(g.id) << " — declares " << (g.model.empty() ? "nothing readable" : g.model);
    if (g.tiles.Br > 0) out << ", " << g.tiles.Br << " × " << g.tiles.Bc << " tiles";
    out << ": " << g.correct << " of " << total << " shapes correct";
    if (g.wrong > 0) out << ", " << g.wrong << " wrong or failed";
    if (g.not_run > 0) out << ", " << g.not_run << " not run";
    out << "\n";
    if (g.median_speed_vs_fa2)
      out << "  speed: " << sim::fixed(*g.median_speed_vs_fa2, 2)
          << "× the fa2 rung's (median over the shapes both ran; above 1 is faster)\n";
    else
      out << "  speed: no shape timed beside the fa2 rung (--kernels without fa2, or --check-only)\n";
    int requests = 0, requests_ok = 0, dram = 0, dram_ok = 0;
    for (const ShapeGrade& s : g.shapes) {
      requests += s.requests.measured ? 1 : 0;
      requests_ok += s.requests.within() ? 1 : 0;
      dram += s.dram.measured ? 1 : 0;
      dram_ok += s.dram.within() ? 1 : 0;
    }
    if (requests == 0 && dram == 0) {
      out << "  bytes: not measured (run with --counters to compare them with the model)\n";
    } else {
      out << "  bytes: requests to global memory within the model's tolerance on " << requests_ok << " of "
          << requests << " shapes; DRAM within the L2 model's on " << dram_ok << " of " << dram << "\n";
    }
    for (const std::string& n : g.notes) out << "  ! " << n << "\n";
    for (const ShapeGrade& s : g.shapes)
      if (!s.correct && !s.reason.empty())
        out << "  " << sim::describe(s.problem) << ": "
            << to_string(s.status) << ": " << s.reason << "\n";
  }
  return out.str();
}

std::string bench_json_with_grades(const BenchResults& results, const std::vector<KernelGrade>& grades) {
  nlohmann::json j = nlohmann::json::parse(bench_to_json(results));
  auto bytes = [](const BytesCheck& b) -> nlohmann::json {
    if (!b.measured) return {{"measured", false}};
    auto side = [](i64 measured, i64 model, double ratio) {
      return nlohmann::json{{"measured_bytes", measured}, {"model_bytes", model}, {"ratio", ratio}};
    };
    return {{"measured", true},
            {"read", side(b.measured_read, b.model_read, b.read_ratio())},
            {"write", side(b.measured_write, b.model_write, b.write_ratio())},
            {"tolerance", b.tolerance},
            {"within", b.within()}};
  };
  nlohmann::json files = nlohmann::json::array();
  for (const KernelGrade& g : grades) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const ShapeGrade& s : g.shapes) {
      nlohmann::json x{{"batch", s.problem.batch},
                       {"heads", s.problem.heads},
                       {"kv_heads", s.problem.h_kv()},
                       {"seq_q", s.problem.n_q()},
                       {"seq_kv", s.problem.n_kv()},
                       {"head_dim", s.problem.head_dim},
                       {"causal", s.problem.causal},
                       {"dtype", std::string(sim::to_string(s.problem.dtype))},
                       {"status", std::string(to_string(s.status))},
                       {"correct", s.correct},
                       {"reason", s.reason}};
      // Missing is not zero: a value nobody measured is null.
      x["rel_error"] = s.rel_error >= 0 ? nlohmann::json(s.rel_error) : nlohmann::json(nullptr);
      x["time_ms"] = s.time_ms > 0 ? nlohmann::json(s.time_ms) : nlohmann::json(nullptr);
      x["tflops"] = s.time_ms > 0 ? nlohmann::json(s.tflops) : nlohmann::json(nullptr);
      x["fa2_time_ms"] = s.fa2_time_ms > 0 ? nlohmann::json(s.fa2_time_ms) : nlohmann::json(nullptr);
      x["speed_vs_fa2"] = s.speed_vs_fa2 > 0 ? nlohmann::json(s.speed_vs_fa2) : nlohmann::json(nullptr);
      x["requests"] = bytes(s.requests);
      x["dram"] = bytes(s.dram);
      x["verdict"] = s.verdict;
      shapes.push_back(std::move(x));
    }
    files.push_back({{"id", g.id},
                     {"name", g.name},
                     {"model", g.model},
                     {"tiles", {g.tiles.Br, g.tiles.Bc}},
                     {"shapes_correct", g.correct},
                     {"shapes_total", g.shapes.size()},
                     {"all_correct", g.correct == static_cast<int>(g.shapes.size()) && !g.shapes.empty()},
                     {"median_speed_vs_fa2",
                      g.median_speed_vs_fa2 ? nlohmann::json(*g.median_speed_vs_fa2) : nlohmann::json(nullptr)},
                     {"notes", g.notes},
                     {"shapes", shapes}});
  }
  j["kernel_files"] = files;
  return j.dump(1) + "\n";
}

}  // namespace flashlab::analysis
