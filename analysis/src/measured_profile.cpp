#include "flashlab/analysis/measured_profile.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/report.hpp"
#include "flashlab/analysis/roofline.hpp"

namespace flashlab::analysis {

using nlohmann::json;
using sim::ComputeUnit;
using sim::DType;

// ---- the figures ----------------------------------------------------------------

const std::vector<FigureSpec>& figure_specs() {
  using Q = Quantity;
  static const std::vector<FigureSpec> specs{
      {"hbm_read", "HBM read", Q::hbm_bandwidth},
      {"hbm_write", "HBM write", Q::hbm_bandwidth},
      {"hbm_copy", "HBM copy (read + write bytes)", Q::hbm_bandwidth},
      {"memcpy_d2d", "cudaMemcpy device to device (read + write bytes)", Q::hbm_bandwidth, DType::fp32,
       ComputeUnit::cuda_core, true},
      {"l2_read", "L2 read (ld.global.cg, warm)", Q::l2_bandwidth},
      {"smem_read", "shared memory read (ld.shared.v4, all SMs)", Q::smem_bandwidth},
      {"fp32_fma", "FP32 FMA, CUDA cores", Q::flops, DType::fp32, ComputeUnit::cuda_core},
      {"fp16_hfma2", "FP16 HFMA2, CUDA cores", Q::flops, DType::fp16, ComputeUnit::cuda_core},
      {"bf16_hfma2", "BF16 HFMA2, CUDA cores", Q::flops, DType::bf16, ComputeUnit::cuda_core},
      {"fp16_mma", "FP16 mma.sync m16n8k16, tensor cores", Q::flops, DType::fp16, ComputeUnit::tensor_core},
      {"bf16_mma", "BF16 mma.sync m16n8k16, tensor cores", Q::flops, DType::bf16, ComputeUnit::tensor_core},
      {"tf32_mma", "TF32 mma.sync m16n8k8, tensor cores", Q::flops, DType::fp32, ComputeUnit::tensor_core},
      {"fp16_cublas", "cuBLAS GEMM 8192^3 fp16 (fp32 accumulate)", Q::flops, DType::fp16, ComputeUnit::tensor_core,
       true},
      {"bf16_cublas", "cuBLAS GEMM 8192^3 bf16 (fp32 accumulate)", Q::flops, DType::bf16, ComputeUnit::tensor_core,
       true},
  };
  return specs;
}

const FigureSpec* find_figure_spec(std::string_view id) {
  for (const FigureSpec& s : figure_specs())
    if (s.id == id) return &s;
  return nullptr;
}

bool is_bandwidth(Quantity q) { return q != Quantity::flops; }
std::string_view unit_of(Quantity q) { return is_bandwidth(q) ? "GB/s" : "TFLOP/s"; }
double unit_scale(Quantity q) { return is_bandwidth(q) ? 1e9 : 1e12; }

const CeilingFigure* MeasuredProfile::figure(std::string_view id) const {
  for (const CeilingFigure& f : figures)
    if (f.id == id) return &f;
  return nullptr;
}

double DeviceFacts::theoretical_hbm_bandwidth() const {
  // HBM and GDDR transfer on both clock edges: 2 × clock × bus width.
  return mem_clock_mhz > 0 && mem_bus_bits > 0 ? 2.0 * mem_clock_mhz * 1e6 * mem_bus_bits / 8.0 : 0.0;
}

// ---- a HardwareModel from figures ---------------------------------------------------

namespace {

std::string mhz(double v) { return fixed(v, 0) + " MHz"; }

std::string figure_value(const FigureSpec& s, double v) {
  return fixed(v / unit_scale(s.quantity), is_bandwidth(s.quantity) ? 0 : 1) + " " + std::string(unit_of(s.quantity));
}

// The best figure for one ceiling and the sentence saying where it came from.
struct Best {
  double value = 0;
  std::string id;
  std::vector<std::string> candidates;
};

template <class Pred>
Best best_of(const std::vector<CeilingFigure>& figures, Pred matches) {
  Best b;
  for (const CeilingFigure& f : figures) {
    const FigureSpec* s = find_figure_spec(f.id);
    if (!s || !matches(*s) || !(f.value > 0)) continue;
    b.candidates.push_back(f.id);
    if (f.value > b.value) {
      b.value = f.value;
      b.id = f.id;
    }
  }
  return b;
}

std::string source_line(const std::string& what, const Best& b, const FigureSpec& s) {
  std::string from;
  for (const std::string& c : b.candidates) from += (from.empty() ? "" : ", ") + c;
  return what + " " + figure_value(s, b.value) + " = " + b.id +
         (b.candidates.size() > 1 ? " (the best of " + from + ")" : "");
}

std::string cc_string(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace

std::string measured_profile_name(const std::string& gpu_name) {
  std::string out = "measured-";
  bool dash = false;
  for (unsigned char c : gpu_name) {
    if (std::isalnum(c)) {
      if (dash && out.back() != '-') out += '-';
      out += static_cast<char>(c);
      dash = false;
    } else {
      dash = true;
    }
  }
  if (out == "measured-") out += "GPU";
  return out;
}

sim::HardwareModel hardware_from_measurements(const DeviceFacts& d, const std::vector<CeilingFigure>& figures,
                                              const std::string& date, const std::string& mode) {
  const std::string origin = "measured profile of " + (d.name.empty() ? std::string("this GPU") : d.name);
  if (d.sm_count < 1 || d.smem_per_sm_bytes < 1 || d.l2_bytes < 1)
    throw sim::HardwareError(origin + ": the device facts lack the SM count, shared memory per SM or L2 size");
  sim::HardwareModel hw;
  hw.name = measured_profile_name(d.name);
  hw.display_name = d.name + " (measured)";
  hw.kind = "measured";
  hw.sm_count = d.sm_count;
  hw.sram_bytes_per_sm = d.smem_per_sm_bytes;
  hw.max_smem_per_block_bytes = d.smem_optin_bytes;
  hw.l2_bytes = d.l2_bytes;
  hw.hbm_bytes = d.total_memory_bytes;

  hw.sources.push_back("measured by flashlab ceilings (" + mode + ") on " + d.name + ", " + date +
                       "; capacities (SMs, shared memory per SM and per block, L2, memory) from the CUDA runtime");
  auto level = [&](Quantity q, const char* what, double& field, bool required) {
    const Best b = best_of(figures, [q](const FigureSpec& s) { return s.quantity == q; });
    if (b.value <= 0) {
      if (required) throw sim::HardwareError(origin + ": no figure measures the " + what);
      return;
    }
    field = b.value;
    hw.sources.push_back(source_line(what, b, *find_figure_spec(b.id)));
  };
  level(Quantity::hbm_bandwidth, "HBM bandwidth", hw.hbm_bandwidth, true);
  level(Quantity::l2_bandwidth, "L2 bandwidth", hw.l2_bandwidth, false);
  level(Quantity::smem_bandwidth, "shared-memory bandwidth (all SMs)", hw.sram_bandwidth, true);

  bool any_peak = false;
  for (int dt = 0; dt < sim::kDTypeCount; ++dt)
    for (int u = 0; u < sim::kUnitCount; ++u) {
      const auto dtype = static_cast<DType>(dt);
      const auto unit = static_cast<ComputeUnit>(u);
      const Best b = best_of(figures, [&](const FigureSpec& s) {
        return s.quantity == Quantity::flops && s.dtype == dtype && s.unit == unit;
      });
      if (b.value <= 0) continue;
      hw.peak_flops[static_cast<size_t>(dt)][static_cast<size_t>(u)] = b.value;
      any_peak = true;
      std::string what = std::string(sim::to_string(dtype)) + " " + std::string(sim::to_string(unit)) + " peak";
      if (dtype == DType::fp32 && unit == ComputeUnit::tensor_core) what = "tf32 tensor peak";
      hw.sources.push_back(source_line(what, b, *find_figure_spec(b.id)));
    }
  if (!any_peak) throw sim::HardwareError(origin + ": no figure measures a compute peak");

  // The clock the compute ceilings held: the FP32 FMA run's, else the highest seen.
  double clock = 0;
  for (const CeilingFigure& f : figures)
    if (f.id == "fp32_fma" && f.sm_clock_mhz > 0) clock = f.sm_clock_mhz;
  if (clock <= 0)
    for (const CeilingFigure& f : figures) clock = std::max(clock, f.sm_clock_mhz);
  hw.clock_mhz = clock > 0 ? clock : d.max_sm_clock_mhz;

  std::ostringstream prov;
  prov << d.name << ", compute capability " << cc_string(d.compute_capability) << ", " << d.sm_count << " SMs; SM clock "
       << (clock > 0 ? mhz(clock) + " observed during the FMA run" : std::string("not observed")) << " (max "
       << mhz(d.max_sm_clock_mhz) << "), memory clock " << mhz(d.mem_clock_mhz) << "; driver "
       << (d.driver.empty() ? std::string("?") : d.driver) << " (CUDA " << d.cuda_driver << "), runtime "
       << d.cuda_runtime << "; flashlab ceilings (" << mode << ") " << date;
  hw.provenance = prov.str();
  return hw;
}

// ---- JSON ---------------------------------------------------------------------------

namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& msg) { throw sim::HardwareError(origin + ": " + msg); }

const json& need(const json& j, const std::string& path, const char* name, const std::string& origin) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) fail(origin, "missing field '" + path + name + "'");
  return *it;
}

double positive(const json& j, const std::string& path, const char* name, const std::string& origin) {
  const json& v = need(j, path, name, origin);
  if (!v.is_number() || !(v.get<double>() > 0))
    fail(origin, "field '" + path + name + "' must be a positive number (got " + v.dump() + ")");
  return v.get<double>();
}

double non_negative_or(const json& j, const std::string& path, const char* name, const std::string& origin) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return 0;
  if (!it->is_number() || it->get<double>() < 0)
    fail(origin, "field '" + path + name + "' must be a non-negative number (got " + it->dump() + ")");
  return it->get<double>();
}

i64 integer_or(const json& j, const std::string& path, const char* name, const std::string& origin, bool required) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (required) fail(origin, "missing field '" + path + name + "'");
    return 0;
  }
  if (!it->is_number_integer() || it->get<i64>() < (required ? 1 : 0))
    fail(origin, "field '" + path + name + "' must be a " + (required ? "positive" : "non-negative") +
                     " integer (got " + it->dump() + ")");
  return it->get<i64>();
}

std::string string_or(const json& j, const std::string& path, const char* name, const std::string& origin,
                      bool required) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (required) fail(origin, "missing field '" + path + name + "'");
    return {};
  }
  if (!it->is_string() || (required && it->get<std::string>().empty()))
    fail(origin, "field '" + path + name + "' must be a " + (required ? "non-empty " : "") + "string");
  return it->get<std::string>();
}

json device_json(const DeviceFacts& d) {
  return json{{"name", d.name},
              {"compute_capability", d.compute_capability},
              {"sm_count", d.sm_count},
              {"smem_per_sm_bytes", d.smem_per_sm_bytes},
              {"smem_optin_bytes", d.smem_optin_bytes},
              {"l2_bytes", d.l2_bytes},
              {"total_memory_bytes", d.total_memory_bytes},
              {"max_sm_clock_mhz", d.max_sm_clock_mhz},
              {"mem_clock_mhz", d.mem_clock_mhz},
              {"mem_bus_bits", d.mem_bus_bits},
              {"driver", d.driver},
              {"cuda_driver", d.cuda_driver},
              {"cuda_runtime", d.cuda_runtime}};
}

DeviceFacts device_from(const json& j, const std::string& origin) {
  const std::string p = "device.";
  if (!j.is_object()) fail(origin, "field 'device' must be an object");
  DeviceFacts d;
  d.name = string_or(j, p, "name", origin, true);
  d.compute_capability = static_cast<int>(integer_or(j, p, "compute_capability", origin, false));
  d.sm_count = integer_or(j, p, "sm_count", origin, true);
  d.smem_per_sm_bytes = integer_or(j, p, "smem_per_sm_bytes", origin, false);
  d.smem_optin_bytes = integer_or(j, p, "smem_optin_bytes", origin, false);
  d.l2_bytes = integer_or(j, p, "l2_bytes", origin, false);
  d.total_memory_bytes = integer_or(j, p, "total_memory_bytes", origin, false);
  d.max_sm_clock_mhz = non_negative_or(j, p, "max_sm_clock_mhz", origin);
  d.mem_clock_mhz = non_negative_or(j, p, "mem_clock_mhz", origin);
  d.mem_bus_bits = static_cast<int>(integer_or(j, p, "mem_bus_bits", origin, false));
  d.driver = string_or(j, p, "driver", origin, false);
  d.cuda_driver = string_or(j, p, "cuda_driver", origin, false);
  d.cuda_runtime = string_or(j, p, "cuda_runtime", origin, false);
  return d;
}

json figure_json(const CeilingFigure& f) {
  const FigureSpec* s = find_figure_spec(f.id);
  const Quantity q = s ? s->quantity : Quantity::flops;
  json j{{"id", f.id},
         {"value", f.value / unit_scale(q)},
         {"unit", std::string(unit_of(q))},
         {"median_ms", f.median_ms},
         {"min_ms", f.min_ms},
         {"max_ms", f.max_ms},
         {"repeats", f.repeats},
         {"work", f.work}};
  if (f.sm_clock_mhz > 0) j["sm_clock_mhz"] = f.sm_clock_mhz;
  if (!f.method.empty()) j["method"] = f.method;
  return j;
}

CeilingFigure figure_from(const json& j, size_t index, const std::string& origin) {
  const std::string p = "measurements[" + std::to_string(index) + "].";
  if (!j.is_object()) fail(origin, "'measurements[" + std::to_string(index) + "]' must be an object");
  CeilingFigure f;
  f.id = string_or(j, p, "id", origin, true);
  const FigureSpec* s = find_figure_spec(f.id);
  if (!s) {
    std::string known;
    for (const FigureSpec& k : figure_specs()) known += (known.empty() ? "" : ", ") + std::string(k.id);
    fail(origin, p + "id: unknown measurement '" + f.id + "' (known: " + known + ")");
  }
  const std::string unit = string_or(j, p, "unit", origin, true);
  if (unit != unit_of(s->quantity))
    fail(origin, p + "unit: '" + unit + "' for " + f.id + " (expected " + std::string(unit_of(s->quantity)) + ")");
  f.value = positive(j, p, "value", origin) * unit_scale(s->quantity);
  f.median_ms = positive(j, p, "median_ms", origin);
  f.min_ms = non_negative_or(j, p, "min_ms", origin);
  f.max_ms = non_negative_or(j, p, "max_ms", origin);
  f.repeats = static_cast<int>(integer_or(j, p, "repeats", origin, true));
  f.work = non_negative_or(j, p, "work", origin);
  f.sm_clock_mhz = non_negative_or(j, p, "sm_clock_mhz", origin);
  f.method = string_or(j, p, "method", origin, false);
  return f;
}

json sweep_json(const SweepSeries& s) {
  json points = json::array();
  for (const SweepPoint& p : s.points)
    points.push_back({{"bytes", p.working_set_bytes}, {"gbs", p.bandwidth / 1e9}, {"median_ms", p.median_ms}});
  return json{{"loads", s.loads}, {"points", points}};
}

SweepSeries sweep_from(const json& j, size_t index, const std::string& origin) {
  const std::string p = "bandwidth_sweep[" + std::to_string(index) + "].";
  if (!j.is_object()) fail(origin, "'bandwidth_sweep[" + std::to_string(index) + "]' must be an object");
  SweepSeries s;
  s.loads = string_or(j, p, "loads", origin, true);
  const json& pts = need(j, p, "points", origin);
  if (!pts.is_array()) fail(origin, "field '" + p + "points' must be an array");
  for (size_t k = 0; k < pts.size(); ++k) {
    const std::string q = p + "points[" + std::to_string(k) + "].";
    if (!pts[k].is_object()) fail(origin, "'" + q.substr(0, q.size() - 1) + "' must be an object");
    SweepPoint pt;
    pt.working_set_bytes = integer_or(pts[k], q, "bytes", origin, true);
    pt.bandwidth = positive(pts[k], q, "gbs", origin) * 1e9;
    pt.median_ms = non_negative_or(pts[k], q, "median_ms", origin);
    s.points.push_back(pt);
  }
  return s;
}

}  // namespace

std::string profile_to_json(const MeasuredProfile& p) {
  json j = json::parse(sim::to_hardware_json(p.hw));
  j["device"] = device_json(p.device);
  json figs = json::array();
  for (const CeilingFigure& f : p.figures) figs.push_back(figure_json(f));
  j["measurements"] = figs;
  json sweep = json::array();
  for (const SweepSeries& s : p.sweep) sweep.push_back(sweep_json(s));
  j["bandwidth_sweep"] = sweep;
  j["run"] = {{"mode", p.mode}, {"date", p.date}, {"wall_s", p.wall_s}, {"commit", p.commit}, {"notes", p.notes}};
  return j.dump(2) + "\n";
}

MeasuredProfile profile_from_json(const std::string& text, const std::string& origin) {
  MeasuredProfile p;
  p.hw = sim::parse_hardware_json(text, origin);  // the preset part, with its own checks
  if (p.hw.kind != "measured")
    fail(origin, "kind is '" + p.hw.kind + "', not 'measured': a datasheet preset has no measurements");
  const json j = json::parse(text);  // valid: parse_hardware_json accepted it
  p.device = device_from(need(j, "", "device", origin), origin);
  const json& figs = need(j, "", "measurements", origin);
  if (!figs.is_array() || figs.empty()) fail(origin, "field 'measurements' must be a non-empty array");
  std::set<std::string> seen;
  for (size_t k = 0; k < figs.size(); ++k) {
    CeilingFigure f = figure_from(figs[k], k, origin);
    if (!seen.insert(f.id).second) fail(origin, "measurement '" + f.id + "' appears twice");
    p.figures.push_back(std::move(f));
  }
  if (auto it = j.find("bandwidth_sweep"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) fail(origin, "field 'bandwidth_sweep' must be an array");
    for (size_t k = 0; k < it->size(); ++k) p.sweep.push_back(sweep_from((*it)[k], k, origin));
  }
  if (auto it = j.find("run"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) fail(origin, "field 'run' must be an object");
    p.mode = string_or(*it, "run.", "mode", origin, false);
    p.date = string_or(*it, "run.", "date", origin, false);
    p.wall_s = non_negative_or(*it, "run.", "wall_s", origin);
    p.commit = string_or(*it, "run.", "commit", origin, false);
    if (auto n = it->find("notes"); n != it->end() && !n->is_null()) {
      if (!n->is_array()) fail(origin, "field 'run.notes' must be an array of strings");
      for (const json& line : *n) {
        if (!line.is_string()) fail(origin, "field 'run.notes' must hold strings");
        p.notes.push_back(line.get<std::string>());
      }
    }
  }
  return p;
}

MeasuredProfile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sim::HardwareError("cannot read profile '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return profile_from_json(s.str(), path);
}

bool looks_measured(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto it = j.find("kind");
  return it != j.end() && it->is_string() && it->get<std::string>() == "measured";
}

// ---- the datasheet of this GPU ------------------------------------------------------

namespace {

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (unsigned char c : s + " ") {
    if (std::isalnum(c)) {
      cur += static_cast<char>(std::tolower(c));
    } else if (!cur.empty()) {
      if (cur != "nvidia") out.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

bool has_digit(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::optional<sim::HardwareModel> match_datasheet(const std::string& gpu_name, i64 sm_count,
                                                  const std::vector<sim::HardwareModel>& candidates) {
  const std::vector<std::string> want = tokens(gpu_name);
  const auto model = std::find_if(want.begin(), want.end(), has_digit);  // "h100", "a100", "4090", "t4"
  if (model == want.end()) return std::nullopt;
  const std::set<std::string> want_set(want.begin(), want.end());
  std::optional<sim::HardwareModel> best;
  size_t best_score = 0;
  for (const sim::HardwareModel& hw : candidates) {
    if (hw.kind != "datasheet" || hw.sm_count != sm_count) continue;
    std::set<std::string> have;
    for (const std::string& t : tokens(hw.name + " " + hw.display_name)) have.insert(t);
    if (!have.count(*model)) continue;
    size_t score = 0;
    for (const std::string& t : have) score += want_set.count(t);
    if (score > best_score) {
      best_score = score;
      best = hw;
    }
  }
  return best;
}

std::vector<sim::HardwareModel> datasheet_presets() {
  std::vector<sim::HardwareModel> out;
  for (const std::string& n : sim::list_presets()) {
    try {
      sim::HardwareModel hw = sim::load_hardware(n);
      if (hw.kind == "datasheet") out.push_back(std::move(hw));
    } catch (const sim::HardwareError&) {
      // A broken preset is reported by `flashlab hw list`; it cannot be a datasheet here.
    }
  }
  return out;
}

std::optional<double> datasheet_value(const sim::HardwareModel& hw, const FigureSpec& s) {
  double v = 0;
  switch (s.quantity) {
    case Quantity::hbm_bandwidth: v = hw.hbm_bandwidth; break;
    case Quantity::l2_bandwidth: v = hw.l2_bandwidth; break;
    case Quantity::smem_bandwidth: v = hw.sram_bandwidth; break;
    case Quantity::flops: v = hw.peak(s.dtype, s.unit); break;
  }
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

double rate_at_clock(double peak, double datasheet_clock_mhz, double clock_mhz) {
  return datasheet_clock_mhz > 0 && clock_mhz > 0 ? peak * clock_mhz / datasheet_clock_mhz : peak;
}

// ---- targets --------------------------------------------------------------------------

namespace {

// FP32 FMA lanes per SM by compute capability (CUDA C++ Programming Guide,
// "Arithmetic Instructions" throughput table), for a GPU without a datasheet preset.
int fp32_lanes_per_sm(int cc) {
  if (cc == 60 || (cc >= 70 && cc < 80) || cc == 80) return 64;
  return 128;
}

TargetCheck ratio_check(const std::string& name, const CeilingFigure* m, double reference, double goal,
                        const std::string& detail) {
  TargetCheck t;
  t.name = name;
  t.goal = goal;
  t.detail = detail;
  if (!m || !(reference > 0)) return t;
  t.measured = m->value;
  t.reference = reference;
  t.ratio = m->value / reference;
  t.available = true;
  t.met = t.ratio >= goal;
  return t;
}

}  // namespace

std::vector<TargetCheck> check_targets(const MeasuredProfile& p, const sim::HardwareModel* datasheet) {
  std::vector<TargetCheck> out;
  const CeilingFigure* memcpy = p.figure("memcpy_d2d");
  out.push_back(ratio_check("HBM copy / cudaMemcpy D2D", p.figure("hbm_copy"), memcpy ? memcpy->value : 0,
                            kCopyVsMemcpyGoal, memcpy ? "same run, read + write bytes for both" : "no cudaMemcpy figure"));
  const CeilingFigure* cublas = p.figure("bf16_cublas");
  out.push_back(ratio_check("bf16 mma.sync / cuBLAS bf16 GEMM 8192^3", p.figure("bf16_mma"),
                            cublas ? cublas->value : 0, kMmaVsCublasGoal,
                            cublas ? "same run" : "no cuBLAS figure"));
  const CeilingFigure* fma = p.figure("fp32_fma");
  double at_clock = 0;
  std::string detail = "no FMA figure";
  if (fma) {
    const double clock = fma->sm_clock_mhz > 0 ? fma->sm_clock_mhz : p.device.max_sm_clock_mhz;
    const std::string clock_note = fma->sm_clock_mhz > 0 ? "observed" : "max (not observed)";
    const double ds_peak = datasheet ? datasheet->peak(DType::fp32, ComputeUnit::cuda_core) : 0;
    if (ds_peak > 0 && datasheet->clock_mhz > 0) {
      at_clock = rate_at_clock(ds_peak, datasheet->clock_mhz, clock);
      detail = datasheet->name + " " + fixed(ds_peak / 1e12, 1) + " TFLOP/s at " + mhz(datasheet->clock_mhz) +
               ", scaled to the " + clock_note + " " + mhz(clock);
    } else if (p.device.sm_count > 0 && clock > 0) {
      const int lanes = fp32_lanes_per_sm(p.device.compute_capability);
      at_clock = 2.0 * lanes * static_cast<double>(p.device.sm_count) * clock * 1e6;
      detail = std::to_string(p.device.sm_count) + " SMs x " + std::to_string(lanes) + " FP32 lanes x 2 FLOP x " +
               clock_note + " " + mhz(clock) + " (no datasheet preset for this GPU)";
    } else {
      detail = "no clock and no datasheet preset to compare with";
    }
  }
  out.push_back(ratio_check("FP32 FMA / datasheet at the observed clock", fma, at_clock, kFmaVsDatasheetGoal, detail));
  return out;
}

// ---- the report ------------------------------------------------------------------------

namespace {

std::string in_unit(const FigureSpec& s, double v) {
  return fixed(v / unit_scale(s.quantity), is_bandwidth(s.quantity) ? 0 : 1);
}

std::string binary_size(i64 bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return fixed(v, v == static_cast<double>(static_cast<i64>(v)) ? 0 : 1) + " " + units[u];
}

}  // namespace

std::string profile_report(const MeasuredProfile& p, const sim::HardwareModel* ds) {
  std::ostringstream out;
  const DeviceFacts& d = p.device;
  out << d.name << ": " << d.sm_count << " SMs, compute capability " << cc_string(d.compute_capability) << ", driver "
      << (d.driver.empty() ? "?" : d.driver) << ", CUDA " << d.cuda_runtime << "; " << (p.mode.empty() ? "?" : p.mode)
      << " run " << p.date << "\n";
  TextTable figures({"figure", "measured", "unit", ds ? "datasheet (" + ds->name + ")" : "datasheet", "ratio",
                     "median ms", "runs", "SM MHz"});
  for (const CeilingFigure& f : p.figures) {
    const FigureSpec* s = find_figure_spec(f.id);
    if (!s) continue;
    const double v = ds ? datasheet_value(*ds, *s).value_or(0.0) : 0.0;  // 0: no datasheet figure
    figures.add({f.id, in_unit(*s, f.value), std::string(unit_of(s->quantity)), v > 0 ? in_unit(*s, v) : "-",
                 v > 0 ? fixed(f.value / v, 2) : "-", fixed(f.median_ms, 3), std::to_string(f.repeats),
                 f.sm_clock_mhz > 0 ? fixed(f.sm_clock_mhz, 0) : "-"});
  }
  out << figures.str();
  if (!ds) out << "no datasheet preset matches " << d.name << ": ratios left out\n";
  TextTable targets({"target", "ratio", "goal", "met", "reference"});
  for (const TargetCheck& c : check_targets(p, ds))
    targets.add({c.name, c.available ? fixed(c.ratio, 3) : "-", fixed(c.goal, 2),
                 c.available ? (c.met ? "yes" : "NO") : "n/a", c.detail});
  out << targets.str();
  if (!p.sweep.empty()) {
    std::vector<std::string> header{"working set"};
    for (const SweepSeries& s : p.sweep) header.push_back(s.loads + " GB/s");
    TextTable sweep(header);
    for (size_t k = 0; k < p.sweep.front().points.size(); ++k) {
      std::vector<std::string> row{binary_size(p.sweep.front().points[k].working_set_bytes)};
      for (const SweepSeries& s : p.sweep) row.push_back(k < s.points.size() ? fixed(s.points[k].bandwidth / 1e9, 0) : "-");
      sweep.add(row);
    }
    out << sweep.str();
  }
  for (const std::string& n : p.notes) out << "note: " << n << "\n";
  return out.str();
}

// ---- two models side by side ------------------------------------------------------------

std::vector<ComparisonRow> compare_hardware(const sim::HardwareModel& a, const sim::HardwareModel& b) {
  std::vector<ComparisonRow> rows;
  auto add = [&](const std::string& figure, const std::string& unit, double va, double vb) {
    if (va > 0 || vb > 0) rows.push_back({figure, unit, va, vb});
  };
  const double KiB = 1024.0, MiB = 1024.0 * 1024.0, GiB = MiB * 1024.0;
  add("SMs", "", static_cast<double>(a.sm_count), static_cast<double>(b.sm_count));
  add("SRAM per SM (M)", "KiB", a.sram_bytes_per_sm / KiB, b.sram_bytes_per_sm / KiB);
  add("shared memory per block", "KiB", a.max_smem_per_block_bytes / KiB, b.max_smem_per_block_bytes / KiB);
  add("L2", "MiB", a.l2_bytes / MiB, b.l2_bytes / MiB);
  add("HBM capacity", "GiB", a.hbm_bytes / GiB, b.hbm_bytes / GiB);
  add("SM clock", "MHz", a.clock_mhz, b.clock_mhz);
  add("HBM bandwidth", "GB/s", a.hbm_bandwidth / 1e9, b.hbm_bandwidth / 1e9);
  add("L2 bandwidth", "GB/s", a.l2_bandwidth / 1e9, b.l2_bandwidth / 1e9);
  add("SRAM bandwidth (all SMs)", "GB/s", a.sram_bandwidth / 1e9, b.sram_bandwidth / 1e9);
  for (DType d : {DType::fp16, DType::bf16, DType::fp32})
    for (ComputeUnit u : {ComputeUnit::tensor_core, ComputeUnit::cuda_core}) {
      std::string name = std::string(sim::to_string(d)) + " " + std::string(sim::to_string(u)) + " peak";
      if (d == DType::fp32 && u == ComputeUnit::tensor_core) name = "tf32 tensor peak";
      add(name, "TFLOP/s", a.peak(d, u) / 1e12, b.peak(d, u) / 1e12);
    }
  const auto ridge = [](const sim::HardwareModel& h, DType d, ComputeUnit u) {
    return ridge_point(h.peak(d, u), h.hbm_bandwidth);
  };
  add("ridge, fp16 tensor / HBM", "FLOP/B", ridge(a, DType::fp16, ComputeUnit::tensor_core),
      ridge(b, DType::fp16, ComputeUnit::tensor_core));
  add("ridge, fp32 cuda / HBM", "FLOP/B", ridge(a, DType::fp32, ComputeUnit::cuda_core),
      ridge(b, DType::fp32, ComputeUnit::cuda_core));
  return rows;
}

}  // namespace flashlab::analysis
