#include "common.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/export/chart_export.hpp"

#include "flashlab/analysis/model/roofline_ceilings.hpp"
#include "flashlab/analysis/model/report.hpp"

namespace flashlab::cli {

void add_problem_flags(CLI::App& app, ProblemFlags& f, bool with_tiles) {
  app.add_option("-b,--batch", f.batch, "batch size B")->capture_default_str();
  app.add_option("--heads", f.heads, "heads H")->capture_default_str();
  app.add_option("-n,--seq", f.seq, "sequence length N (suffixes: 16K = 16384)")->capture_default_str();
  app.add_option("--seq-kv", f.seq_kv, "key/value length (default: N; non-causal only)");
  app.add_option("-d,--head-dim", f.head_dim, "head dimension d")->capture_default_str();
  app.add_option("--dtype", f.dtype, "fp16 | bf16 | fp32")->capture_default_str();
  app.add_flag("--causal", f.causal, "causal mask (blocks above the diagonal are skipped by FlashAttention)");
  if (with_tiles) {
    app.add_option("--br", f.br, "B_r, rows of a Q_i block (default: the paper's rule)");
    app.add_option("--bc", f.bc, "B_c, rows of a K_j block (default: the paper's rule)");
  }
  app.add_option("--sram", f.sram, "SRAM bytes per SM, M (default: the preset's; suffixes: 100KiB)");
  app.add_option("--hw", f.hw, "hardware preset (flashlab hw list) or a JSON file")->capture_default_str();
}

sim::i64 parse_positive(const std::string& flag, const std::string& value) {
  std::vector<std::string> errors;
  if (const auto v = sim::parse_positive(flag, value, errors)) return *v;
  throw UsageError(errors.front());
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream s(list);
  while (std::getline(s, item, ',')) out.push_back(item);
  if (!list.empty() && list.back() == ',') out.emplace_back();
  return out;
}

std::vector<sim::i64> size_list(const std::string& flag, const std::string& list) {
  std::vector<sim::i64> out;
  for (const std::string& item : split(list)) out.push_back(parse_positive(flag, item));
  if (out.empty()) throw UsageError(flag + ": empty list");
  return out;
}

std::vector<int> parse_device_list(const std::string& flag, const std::string& list) {
  std::vector<int> out;
  std::istringstream items(list);
  for (std::string d; std::getline(items, d, ',');) {
    // CUDA ordinals start at 0.
    const std::optional<sim::i64> v = sim::parse_whole(d);
    if (!v || *v < 0 || *v >= sim::kMaxRingGpus)
      throw UsageError(flag + ": expected CUDA device numbers like 0,1 (got '" + d + "')");
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

void write_output(const std::string& flag, const std::string& path, const std::string& contents) {
  if (path.empty()) return;
  try {
    analysis::write_file_atomic(path, contents);
  } catch (const std::exception& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

namespace {
// A file can be made in `folder`: an empty one made and removed at once.
void require_writable(const std::string& flag, const std::filesystem::path& folder) {
  const std::filesystem::path probe = folder / (".flashlab-write-check-" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr)
    throw UsageError(flag + ": cannot write in '" + folder.string() + "': " + std::strerror(errno));
  std::fclose(f);
  std::error_code ec;
  std::filesystem::remove(probe, ec);
}
}  // namespace

void require_output_folder(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw UsageError(flag + ": folder '" + folder.string() + "' does not exist");
  if (std::filesystem::is_directory(path, ec)) throw UsageError(flag + ": '" + path + "' is a folder, not a file");
  require_writable(flag, folder.empty() ? std::filesystem::path(".") : folder);
}

void require_output_dir(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    throw UsageError(flag + ": cannot create '" + dir + "'" + (ec ? ": " + ec.message() : std::string()));
  require_writable(flag, dir);
}

void check_chart_size(int width, int height) {
  if (width < 64 || width > 16384 || height < 64 || height > 16384)
    throw UsageError("--width/--height: " + std::to_string(width) + "×" + std::to_string(height) +
                     " is out of range (64 to 16384)");
}

void add_chart_output_flags(CLI::App& app, ChartOutput& o, const std::string& out_help) {
  app.add_option("--out", o.out, out_help + "; the extension picks the format: .svg .png .pdf .csv");
  app.add_option("--width", o.width, "width in pixels (PNG; SVG/PDF keep the proportions)")->capture_default_str();
  app.add_option("--height", o.height, "height in pixels")->capture_default_str();
  app.add_flag("--dark", o.dark, "the GUI's dark theme instead of white paper");
}

void check_chart_output(const ChartOutput& o) {
  const auto format = analysis::export_format_of(o.out);
  if (!format) throw UsageError("--out: '" + o.out + "' must end in .svg, .png, .pdf or .csv");
  if ((*format == analysis::ExportFormat::png || *format == analysis::ExportFormat::pdf) && !analysis::have_cairo())
    throw UsageError("--out: this build has no cairo, so it cannot write " + std::string(analysis::to_string(*format)) +
                     " (use .svg or .csv, or install libcairo2-dev and rebuild)");
  check_chart_size(o.width, o.height);
}

void write_chart_output(const analysis::ChartSpec& c, const ChartOutput& o) {
  analysis::ExportOptions opt;
  opt.width_px = o.width;
  opt.height_px = o.height;
  opt.dark = o.dark;
  try {
    analysis::export_chart(c, o.out, opt);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--out: ") + e.what());
  }
  const auto format = analysis::export_format_of(o.out);
  std::cout << "wrote " << c.id << " (" << (format ? analysis::to_string(*format) : std::string_view("?")) << ", "
            << o.width << "×" << o.height << ") to " << o.out << "\n";
  for (const std::string& n : c.notes) std::cout << "note: " << n << "\n";
  if (format && *format != analysis::ExportFormat::csv)
    for (const std::string& p : analysis::chart_layout_problems(c, opt)) std::cout << "note: layout: " << p << "\n";
}

sim::HardwareModel load_hw(const std::string& name) {
  try {
    return sim::load_hardware(name);
  } catch (const sim::HardwareError& e) {
    throw UsageError(std::string("--hw: ") + e.what());
  }
}

Resolved resolve(const ProblemFlags& f) {
  // Messages name the flags; an empty flag is one not given.
  static const sim::ProblemFieldNames names{"--batch", "--heads", "--seq", "--seq-kv", "--head-dim",
                                            "--dtype", "--sram",  "--br",  "--bc"};
  const auto given = [](const std::string& v) { return v.empty() ? std::nullopt : std::optional<std::string>(v); };
  sim::ProblemText text;
  text.batch = f.batch;
  text.heads = f.heads;
  text.seq = f.seq;
  text.seq_kv = given(f.seq_kv);
  text.head_dim = f.head_dim;
  text.dtype = f.dtype;
  text.causal = f.causal;
  text.sram = given(f.sram);
  text.br = given(f.br);
  text.bc = given(f.bc);
  const sim::ParsedProblem parsed = sim::parse_problem(text, names);
  if (!parsed.ok()) throw UsageError(parsed.first());
  Resolved r;
  r.problem = parsed.problem;
  r.options = parsed.options;
  r.hw = load_hw(f.hw);
  r.profile = analysis::measured_profile_of(r.hw, f.hw);
  return r;
}

std::vector<sim::Algorithm> parse_algorithms(const std::string& list) {
  std::vector<sim::Algorithm> out;
  if (list == "all") return sim::algorithms_of(sim::Pass::fwd);
  size_t pos = 0;
  while (pos <= list.size()) {
    const auto comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const auto a = sim::parse_algorithm(item);
    if (!a) throw UsageError("unknown algorithm '" + item + "' (expected " + analysis::algorithm_keys(sim::all_algorithms()) + ")");
    out.push_back(*a);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

void add_pass_flag(CLI::App& app, std::string& pass) {
  app.add_option("--pass", pass,
                 "fwd | bwd | fwd+bwd: the forward, the backward (each algorithm's backward pass), or a training "
                 "step (both, summed); default: the algorithm's own pass");
}

std::optional<sim::PassSelection> parse_pass(const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (const auto p = sim::parse_pass_selection(value)) return p;
  throw UsageError("--pass: '" + value + "' is not a pass (expected fwd, bwd or fwd+bwd)");
}

sim::PassSelection pass_or_own(const std::optional<sim::PassSelection>& pass, sim::Algorithm a) {
  if (pass) return *pass;
  return sim::selection_of(sim::algorithm_info(a).pass);
}

std::string algorithms_help() { return "comma list of " + analysis::algorithm_keys(sim::all_algorithms()); }

std::string layout_help() {
  std::string s;
  for (const sim::RingLayoutInfo& l : sim::ring_layouts())
    s += (s.empty() ? "" : " | ") + std::string(l.name) + " (" + std::string(l.summary) +
         (l.layout == sim::ring_layouts().front().layout ? ", default)" : ")");
  return s;
}

int bench_exit_code(const analysis::BenchResults& results) {
  std::size_t failed = 0;
  for (const analysis::BenchRow& r : results.rows) failed += r.status == analysis::RunStatus::failed ? 1 : 0;
  if (failed == 0) return 0;
  std::cerr << "flashlab: " << failed << " case(s) failed (see the table)\n";
  return 1;
}

analysis::BenchResults read_results_files(const std::string& flag, const std::vector<std::string>& files,
                                          std::vector<std::string>& notes) {
  std::vector<std::pair<std::string, analysis::BenchResults>> read;
  for (const std::string& f : files) {
    try {
      read.emplace_back(f, analysis::bench_from_file(f));
    } catch (const std::exception& e) {
      throw UsageError(flag + ": " + e.what());
    }
  }
  analysis::MergedResults m;
  try {
    m = analysis::merge_results(read);
  } catch (const std::runtime_error& e) {
    throw UsageError(flag + ": " + e.what());
  }
  if (m.repeats_dropped > 0)
    notes.push_back(std::to_string(m.repeats_dropped) + " row(s) repeat a run an earlier row holds (same implementation, "
                    "pass, problem, tiles and allocation limit): each run kept once, from the first file that holds it");
  if (!m.disagreeing.empty()) {
    // A figure drawn from the first of times that disagree may show an outlier: say so, and how far.
    const analysis::DisagreeingRepeat& w = m.disagreeing.front();
    const auto pct = [](double f) { return sim::fixed(f * 100, 0) + " %"; };
    const auto ms = [](double v) { return sim::fixed(v, v < 1 ? 3 : 2); };
    notes.push_back(std::to_string(m.disagreeing.size()) + " of those run(s) disagree: their times spread more than " +
                    pct(analysis::kRepeatSpread) + " ((max − min) / min, the threshold of flashlab check); worst: " +
                    w.kept.kernel + " " + w.kept.direction + " " + sim::describe(w.kept.problem) + ", " +
                    std::to_string(w.times) + " times " + ms(w.min_ms) + "–" + ms(w.max_ms) + " ms (" +
                    pct(w.spread()) + "), " + ms(w.kept.time_ms_median) +
                    " ms kept: time such runs again before drawing a figure on them");
  }
  return m.results;
}

}  // namespace flashlab::cli
