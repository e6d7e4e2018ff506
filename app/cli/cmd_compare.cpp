// flashlab compare: the lecture's comparison of standard attention,
// FlashAttention-1 and FlashAttention-2 on one problem (the headless main job).
#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/placement/measured_checks.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/kernels/rungs/registry.hpp"

namespace flashlab::cli {
namespace {

// Where `flashlab compare` and `flashlab` without a display write by default.
constexpr const char* kDefaultCsv = "flashlab-comparison.csv";

struct Row {
  std::string label;
  analysis::PassRun run;  // one part per pass, each with its own tiles
};

// Each algorithm with the tiles its own loop order wants (the simulator's rule
// for it), unless --br/--bc fix them for all; each pass of the selection
// simulated on its own and summed.
std::vector<Row> compare(const Resolved& r, const std::vector<sim::Algorithm>& algos,
                         const std::optional<sim::PassSelection>& pass) {
  std::vector<Row> rows;
  for (sim::Algorithm a : algos) {
    Row row;
    try {
      row.run = analysis::simulate_passes(a, pass_or_own(pass, a), r.problem, r.hw, r.options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--pass: ") + e.what());
    }
    for (const analysis::PassPart& part : row.run.parts)
      if (!part.result.ok())
        throw UsageError(std::string(sim::to_string(part.result.algorithm)) + ": " + part.result.errors().front());
    row.label = row.run.label();
    rows.push_back(row);
  }
  return rows;
}

std::string tiles_cell(const analysis::PassRun& run) {
  std::string out;
  for (const analysis::PassPart& part : run.parts)
    out += (out.empty() ? "" : " / ") + std::to_string(part.result.tiles.Br) + "×" + std::to_string(part.result.tiles.Bc);
  return out;
}

// Bytes in the unit that keeps three digits: "9.13 GB", "541 MB", "1.05 MB".
std::string bytes_cell(double bytes) { return sim::si_unit(bytes, "B"); }

std::string kernel_tiles(const sim::TileShape& t) {
  return t.Br > 0 && t.Bc > 0 ? std::to_string(t.Br) + "×" + std::to_string(t.Bc) : "-";
}

// One results file as read and as today's model places it.
struct MeasuredFile {
  std::string origin;  // the path, as given
  analysis::BenchResults written;
  std::optional<analysis::BenchResults> placed;  // nullopt: no datasheet preset matches its GPU
  std::string hardware;                          // the preset placed on
};

// The measured runs of each compared algorithm, when results files are given.
struct Measured {
  std::string origin;  // the files, as given, joined by " + "
  analysis::BenchResults results;  // every file's rows, placed where a preset matches, merged
  std::string placed;  // the preset today's model placed the rows on (empty: the rows as written)
  std::vector<MeasuredFile> files;
};

// Each file's rows placed again with today's model on the datasheet preset of
// the GPU they ran on, as `flashlab bench --results` places them; the rows as
// written when no preset matches. Several files are merged as a report merges
// them (one GPU; a run held twice kept once).
Measured read_measured(const std::vector<std::string>& paths) {
  Measured m;
  std::vector<std::pair<std::string, analysis::BenchResults>> placed;
  for (const std::string& path : paths) {
    MeasuredFile f{path, analysis::bench_from_file(path), std::nullopt, ""};
    if (const auto hw = analysis::results_hardware(f.written.meta, analysis::datasheet_presets())) {
      f.placed = analysis::replace_results(f.written, *hw);
      f.hardware = hw->name;
    }
    m.origin += (m.origin.empty() ? "" : " + ") + path;
    if (m.placed.find(f.hardware) == std::string::npos)
      m.placed += (m.placed.empty() ? "" : ", ") + f.hardware;
    placed.emplace_back(path, f.placed ? *f.placed : f.written);
    m.files.push_back(std::move(f));
  }
  if (std::any_of(m.files.begin(), m.files.end(), [](const MeasuredFile& f) { return !f.placed; })) m.placed.clear();
  m.results = m.files.size() == 1 ? placed.front().second : analysis::merge_results(placed).results;
  return m;
}

// What the table of every measured run needs of each file: counters, and a
// preset for today's model to place its runs on.
void check_measured_for_table(const Measured& m) {
  for (const MeasuredFile& f : m.files) {
    const auto& rows = f.written.rows;
    if (std::none_of(rows.begin(), rows.end(), [](const analysis::BenchRow& r) { return r.has_counters(); }))
      throw UsageError("--results: " + f.origin +
                       " has no DRAM counters (measure with flashlab bench --counters): no measured bytes to compare");
    if (!f.placed)
      throw UsageError("--results: " + f.origin + ": no datasheet preset matches its GPU '" + f.written.meta.gpu +
                       "' (" + std::to_string(f.written.meta.sm_count) +
                       " SMs): today's model has no hardware to predict its runs on");
  }
}

// The forward rung a backward rung runs after (the registry's pairing).
std::vector<analysis::RungPair> registry_pairs() {
  std::vector<analysis::RungPair> out;
  for (const kernels::KernelInfo& k : kernels::registry())
    if (const kernels::KernelInfo* f = kernels::forward_rung(k)) out.push_back({f->id, k.id});
  return out;
}

std::string signed_percent(double fraction) {
  std::string e = analysis::fixed(100 * fraction, 1);
  if (e == "-0.0") e = "0.0";
  return (e[0] == '-' ? "" : "+") + e + "%";
}

std::vector<std::string> measured_csv_header() {
  std::vector<std::string> h{"pass", "rungs", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal",
                             "dtype"};
  for (const char* pass : {"fwd", "bwd"})
    for (const char* c : {"kernel", "Br", "Bc", "measured_dram_read_bytes", "measured_dram_write_bytes",
                          "predicted_dram_read_bytes", "predicted_dram_write_bytes", "file_predicted_dram_read_bytes",
                          "file_predicted_dram_write_bytes", "time_ms", "note"})
      h.push_back(std::string(pass) + "_" + c);
  for (const char* c : {"measured_dram_bytes", "predicted_dram_bytes", "file_predicted_dram_bytes", "error",
                        "time_ms", "why_not"})
    h.emplace_back(c);
  return h;
}

std::vector<std::string> measured_csv_line(sim::PassSelection s, const analysis::RungDram& r) {
  const sim::AttentionProblem& p = r.problem;
  auto i64s = [](sim::i64 v) { return v >= 0 ? std::to_string(v) : std::string(); };
  std::vector<std::string> l{std::string(sim::to_string(s)), r.label(), std::to_string(p.batch), std::to_string(p.heads),
                             std::to_string(p.h_kv()), std::to_string(p.n_q()), std::to_string(p.n_kv()),
                             std::to_string(p.head_dim), p.causal ? "true" : "false", std::string(sim::to_string(p.dtype))};
  for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
    const auto part = std::find_if(r.parts.begin(), r.parts.end(),
                                   [&](const analysis::MeasuredDram& m) { return m.pass == pass; });
    if (part == r.parts.end()) {
      for (int k = 0; k < 11; ++k) l.emplace_back();
      continue;
    }
    const analysis::MeasuredDram& m = *part;
    for (const std::string& v :
         {m.kernel, m.tiles.Br > 0 ? std::to_string(m.tiles.Br) : "", m.tiles.Bc > 0 ? std::to_string(m.tiles.Bc) : "",
          i64s(m.read_bytes), i64s(m.write_bytes), i64s(m.predicted_read_bytes), i64s(m.predicted_write_bytes),
          i64s(m.file_predicted_read_bytes), i64s(m.file_predicted_write_bytes),
          m.time_ms > 0 ? sim::shortest(m.time_ms) : "", m.measured ? m.note : m.why_not})
      l.push_back(v);
  }
  for (const std::string& v : {i64s(r.measured_bytes), i64s(r.predicted_bytes), i64s(r.file_predicted_bytes),
                               r.has_error ? sim::shortest(r.error) : "", r.time_ms > 0 ? sim::shortest(r.time_ms) : "",
                               r.why_not})
    l.push_back(v);
  return l;
}

// Every measured run of the files for the selection, rung by rung, each
// problem as it ran: DRAM predicted by today's model beside the counters.
void print_measured_runs(sim::PassSelection s, const Measured& measured, const std::string& csv_path) {
  std::vector<analysis::MeasuredDram> runs;
  std::vector<std::pair<const MeasuredFile*, analysis::PredictionDrift>> drift;
  for (const MeasuredFile& f : measured.files) {
    const std::vector<analysis::MeasuredDram> own = analysis::measured_runs(f.written, *f.placed);
    drift.emplace_back(&f, analysis::prediction_drift(own));
    runs.insert(runs.end(), own.begin(), own.end());
  }
  const analysis::RungDramTable table = analysis::rung_dram(runs, s, registry_pairs());
  const bool step = s == sim::PassSelection::fwd_bwd;
  const std::vector<sim::Pass> passes =
      step ? std::vector<sim::Pass>{sim::Pass::fwd, sim::Pass::bwd}
           : std::vector<sim::Pass>{s == sim::PassSelection::bwd ? sim::Pass::bwd : sim::Pass::fwd};

  std::cout << "\nEvery measured run against today's model: "
            << (step ? "the training step (forward + backward) rung by rung, each backward rung beside the forward "
                       "rung it runs after"
                     : std::string("the ") + (passes.front() == sim::Pass::bwd ? "backward" : "forward") +
                           " pass rung by rung")
            << ", each problem as it ran in " << measured.origin << "; DRAM read + write\n";
  if (table.rows.empty()) {
    std::cout << "  no " << (step ? "forward or backward run of a paired rung"
                                  : passes.front() == sim::Pass::bwd ? "backward run" : "forward run")
              << " in the files\n";
  } else {
    std::vector<std::string> header{step ? "rungs" : "rung", "problem", "B_r×B_c"};
    for (sim::Pass p : passes) header.push_back(std::string("predicted") + (step ? " " + std::string(sim::to_string(p)) : ""));
    if (step) header.emplace_back("step");
    for (sim::Pass p : passes) header.push_back(std::string("measured") + (step ? " " + std::string(sim::to_string(p)) : ""));
    if (step) header.emplace_back("step");
    for (const char* c : {"model", "measured ms", "note"}) header.emplace_back(c);
    analysis::TextTable t(header);
    for (const analysis::RungDram& r : table.rows) {
      std::string tiles, note = r.why_not;
      std::vector<std::string> predicted, measured_cells;
      for (const analysis::MeasuredDram& m : r.parts) {
        tiles += (tiles.empty() ? "" : " / ") + kernel_tiles(m.tiles);
        predicted.push_back(m.predicted_bytes() >= 0 ? bytes_cell(static_cast<double>(m.predicted_bytes())) : "-");
        measured_cells.push_back(m.measured ? bytes_cell(static_cast<double>(m.read_bytes + m.write_bytes)) : "-");
        if (m.measured && !m.note.empty()) note += (note.empty() ? "" : "; ") + m.kernel + ": " + m.note;
      }
      std::vector<std::string> line{r.label(), sim::describe(r.problem), tiles};
      line.insert(line.end(), predicted.begin(), predicted.end());
      if (step)
        line.push_back(r.predicted_bytes >= 0 ? bytes_cell(static_cast<double>(r.predicted_bytes)) : "-");
      line.insert(line.end(), measured_cells.begin(), measured_cells.end());
      if (step) line.push_back(r.measured ? bytes_cell(static_cast<double>(r.measured_bytes)) : "-");
      line.push_back(r.has_error ? signed_percent(r.error) : "-");
      line.push_back(r.time_ms > 0 ? analysis::fixed(r.time_ms, 3) : "-");
      line.push_back(note);
      t.add(line);
    }
    std::cout << t.str();
  }
  std::cout << "predicted: today's model for the launch that ran (its tiles and occupancy), on the datasheet preset "
               "of the GPU the file ran on ("
            << measured.placed << "), written back during the run as the counters see it; model: (predicted − "
                                  "measured) / measured"
            << (step ? " of the step's bytes; measured ms: the two passes' median times, summed. A step whose other "
                       "pass did not run has no step cells: the note says which."
                     : "; measured ms: the median time.")
            << "\n";
  for (const auto& [f, d] : drift) {
    const std::string commit = f->written.meta.commit.empty() ? "" : " (commit " + f->written.meta.commit + ")";
    std::cout << f->origin << commit << ": ";
    if (d.compared == 0)
      std::cout << "holds no predictions of its own\n";
    else if (d.differ == 0)
      std::cout << "its own predictions equal today's model at all " << d.compared << " runs\n";
    else
      std::cout << "its own predictions differ from today's model at " << d.differ << " of " << d.compared
                << " runs (by up to " << analysis::fixed(100 * d.largest, 1)
                << "%): the file's model is older; the table shows today's\n";
  }
  if (!table.left_out.empty()) {
    std::cout << "not in the table:";
    for (size_t i = 0; i < table.left_out.size(); ++i) std::cout << (i ? "; " : " ") << table.left_out[i];
    std::cout << "\n";
  }
  if (!csv_path.empty()) {
    std::string csv = analysis::csv_row(measured_csv_header());
    for (const analysis::RungDram& r : table.rows) csv += analysis::csv_row(measured_csv_line(s, r));
    try {
      analysis::write_file_atomic(csv_path, csv);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--measured-csv: ") + e.what());
    }
    std::cout << "wrote " << table.rows.size() << " rows to " << csv_path << "\n";
  }
}

std::vector<std::string> compare_csv_header() {
  std::vector<std::string> h = analysis::result_csv_header();
  for (const char* c : {"kernel", "kernel_Br", "kernel_Bc", "measured_dram_read_bytes", "measured_dram_write_bytes",
                        "kernel_predicted_dram_read_bytes", "kernel_predicted_dram_write_bytes", "measured_note"})
    h.emplace_back(c);
  return h;
}

void print_paper_table(const Resolved& r, const std::vector<Row>& rows, const std::optional<Measured>& measured);

// measured_pass: --pass as given with results files (nullopt: not given), for
// the table of every measured run; measured_csv: where that table goes as CSV.
int print_and_write(const Resolved& r, const std::vector<Row>& rows, const std::string& csv_path,
                    const std::optional<Measured>& measured,
                    const std::optional<sim::PassSelection>& measured_pass = std::nullopt,
                    const std::string& measured_csv = "") {
  const sim::HardwareModel& hw = r.hw;
  std::cout << "FlashLab — standard attention vs FlashAttention, simulated\n";
  std::cout << "problem  " << sim::describe(r.problem) << "\n";
  const double peak = hw.peak(r.problem.dtype, sim::HardwareModel::default_unit(r.problem.dtype));
  std::cout << "hardware " << hw.display_name << ": M = "
            << sim::bytes_iec(static_cast<double>(r.options.sram_bytes > 0 ? r.options.sram_bytes : hw.sram_bytes_per_sm))
            << " SRAM/SM, " << analysis::fixed(hw.hbm_bandwidth / 1e9, 0) << " GB/s HBM, "
            << analysis::fixed(peak / 1e12, 0) << " TFLOP/s -> ridge "
            << analysis::fixed(analysis::ridge_point(peak, hw.hbm_bandwidth), 1) << " FLOP/B\n";
  if (measured) {
    const sim::RunMeta& m = measured->results.meta;
    for (const MeasuredFile& f : measured->files) {
      const sim::RunMeta& fm = f.written.meta;
      std::cout << "measured " << f.origin << ": " << (fm.gpu.empty() ? "unknown GPU" : fm.gpu)
                << (fm.commit.empty() ? "" : ", commit " + fm.commit)
                << (!f.placed ? "; the predictions as written in the file" : "; placed with today's model on " + f.hardware)
                << "\n";
    }
    const auto ds = analysis::match_datasheet(m.gpu, m.sm_count, analysis::datasheet_presets());
    if (!ds || ds->name != hw.name)
      std::cout << "note: the runs were measured on " << (m.gpu.empty() ? "an unknown GPU" : m.gpu)
                << ", the model rows are for " << hw.display_name << " (--hw)\n";
  }
  std::cout << "\n";
  const double std_bytes = static_cast<double>(rows.front().run.total.level(sim::Level::HBM).bytes());
  analysis::TextTable t({"algorithm", "B_r×B_c", "requests read", "requests write", "requests total",
                         "vs " + rows.front().label, "DRAM predicted", "DRAM measured", "FLOPs", "AI FLOP/B", "≥ time",
                         "bound"});
  std::string csv = analysis::csv_row(compare_csv_header());
  size_t csv_rows = 0;
  for (const Row& row : rows) {
    const analysis::PassRun& run = row.run;
    const sim::Traffic hbm = run.total.level(sim::Level::HBM);
    std::vector<analysis::MeasuredLookup> lookups;
    if (measured)
      for (const analysis::PassPart& part : run.parts)
        lookups.push_back(
            analysis::measured_dram(measured->results, measured->origin, r.problem, part.result.algorithm));
    const bool any_run = std::any_of(lookups.begin(), lookups.end(), [](const auto& l) { return !l.runs.empty(); });
    const std::string measured_cell = !measured ? "-" : any_run ? "per kernel below" : lookups.front().why_none;
    t.add({row.label, tiles_cell(run), bytes_cell(static_cast<double>(hbm.read_bytes)),
           bytes_cell(static_cast<double>(hbm.write_bytes)), bytes_cell(static_cast<double>(hbm.bytes())),
           analysis::fixed(static_cast<double>(hbm.bytes()) / std_bytes, 3) + "×", bytes_cell(run.roof.dram_bytes),
           measured_cell, sim::si_unit(static_cast<double>(run.total.flops()), "FLOP"), analysis::fixed(run.roof.ai, 1),
           sim::duration(run.roof.time_s), run.roof.memory_bound ? "memory" : "compute"});
   for (size_t part_index = 0; part_index < run.parts.size(); ++part_index) {
    const sim::SimResult& s = run.parts[part_index].result;
    const analysis::MeasuredLookup runs = measured ? lookups[part_index] : analysis::MeasuredLookup{};
    const std::vector<std::string> fields =
        analysis::result_csv_fields(s, run.parts[part_index].roof, "compare", 0, analysis::theta_standard_bytes(r.problem),
                                    analysis::theta_flash_bytes(r.problem, s.sram_capacity_bytes));
    auto i64s = [](sim::i64 v) { return v >= 0 ? std::to_string(v) : std::string(); };
    if (runs.runs.empty()) {
      std::vector<std::string> line = fields;
      for (int k = 0; k < 7; ++k) line.emplace_back();
      line.push_back(measured ? runs.why_none : "");
      csv += analysis::csv_row(line);
      ++csv_rows;
    }
    for (const analysis::MeasuredDram& k : runs.runs) {
      const bool predicted = k.predicted_read_bytes >= 0 && k.predicted_write_bytes >= 0;
      std::string cell = k.why_not;
      if (k.measured) {
        cell = bytes_cell(static_cast<double>(k.read_bytes + k.write_bytes));
        if (k.has_error) {
          std::string e = analysis::fixed(100 * k.error, 1);
          if (e == "-0.0") e = "0.0";
          cell += " (model " + std::string(e[0] == '-' ? "" : "+") + e + "%)";
        }
      }
      t.add({"  " + k.kernel + (run.parts.size() > 1 ? " (" + std::string(sim::to_string(sim::algorithm_info(s.algorithm).pass)) + ")" : ""),
             kernel_tiles(k.tiles), "", "", "", "",
             predicted ? bytes_cell(static_cast<double>(k.predicted_read_bytes + k.predicted_write_bytes)) : "-", cell, "",
             "", "", ""});
      std::vector<std::string> line = fields;
      line.push_back(k.kernel);
      line.push_back(k.tiles.Br > 0 ? std::to_string(k.tiles.Br) : "");
      line.push_back(k.tiles.Bc > 0 ? std::to_string(k.tiles.Bc) : "");
      line.push_back(i64s(k.read_bytes));
      line.push_back(i64s(k.write_bytes));
      line.push_back(i64s(k.predicted_read_bytes));
      line.push_back(i64s(k.predicted_write_bytes));
      line.push_back(k.why_not);
      csv += analysis::csv_row(line);
      ++csv_rows;
    }
   }
  }
  std::cout << t.str() << "\n";
  const sim::PassSelection passes = rows.front().run.passes;
  std::cout << "FLOPs is the exact count of the blocks computed (matmul + softmax); the benchmark convention "
            << analysis::convention_formula(r.problem, passes) << " is "
            << sim::si_unit(static_cast<double>(analysis::convention_flops(r.problem, passes)), "FLOP") << ".\n"
               "Requests are reads and writes to global memory: the paper's HBM accesses. DRAM predicted is what "
               "the L2 model lets through to DRAM (dirty data left in the L2 at the end included). AI and ≥ time (the "
               "roofline lower bound max(FLOPs/peak, DRAM bytes/bandwidth)) use it; docs/model.md.\n";
  if (measured)
    std::cout << "Kernel lines: every kernel of the file whose model is the algorithm, each on its own line, with the "
                 "DRAM bytes its counters measured and the model's prediction for the launch that ran (written back "
                 "during the run, as the counters see it); the error is (model − measured) / measured.\n";
  if (passes == sim::PassSelection::fwd_bwd)
    std::cout << "A training step is each pass simulated on its own (its own tiles), summed; its ≥ time is the sum of "
                 "the passes' bounds. Tiles read forward / backward.\n";
  for (const Row& row : rows)
    for (const std::string& m : row.run.messages()) std::cout << "note (" << row.label << "): " << m << "\n";
  if (measured && measured_pass) print_measured_runs(*measured_pass, *measured, measured_csv);
  if (passes == sim::PassSelection::fwd_bwd) print_paper_table(r, rows, measured);

  try {
    analysis::write_file_atomic(csv_path, csv);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--csv: ") + e.what());
  }
  std::cout << "\nwrote " << csv_rows << " rows to " << csv_path << "\n";
  return 0;
}

// The fastest timed run of `a` on exactly this problem in the results file.
const analysis::BenchRow* fastest_run(const Measured& m, const sim::AttentionProblem& p, sim::Algorithm a) {
  const analysis::BenchRow* best = nullptr;
  for (const analysis::BenchRow& row : m.results.rows) {
    if (row.status != sim::RunStatus::ok || !(row.time_ms_median > 0) || row.problem != p) continue;
    const auto model = sim::model_algorithm(row);
    if (!model || *model != a || analysis::pass_of(row) != sim::algorithm_info(a).pass) continue;
    if (!best || row.time_ms_median < best->time_ms_median) best = &row;
  }
  return best;
}

// The FlashAttention paper's headline table (Dao et al. 2022, Figure 2 left):
// standard attention against FlashAttention on GPT-2 medium, forward plus
// backward, on an A100. Its figures beside the model's (and, from a results
// file, the kernels' measured time and DRAM bytes) for the same quantities.
void print_paper_table(const Resolved& r, const std::vector<Row>& rows, const std::optional<Measured>& measured) {
  const sim::AttentionProblem& p = r.problem;
  const bool paper_problem = p.batch == 64 && p.heads == 16 && p.n_q() == 1024 && p.n_kv() == 1024 &&
                             p.head_dim == 64 && !p.causal && p.dtype == sim::DType::fp16;
  std::cout << "\nThe FlashAttention paper's table (Dao et al. 2022, Figure 2 left: GPT-2 medium, B 64, H 16, N 1024, "
               "d 64, forward + backward, A100)";
  if (!paper_problem) std::cout << " — this problem is not the paper's, so only FlashLab's columns are shown";
  std::cout << "\n";
  std::vector<std::string> header{"quantity"};
  if (paper_problem) {
    header.emplace_back("paper: standard");
    header.emplace_back("paper: FlashAttention");
  }
  for (const Row& row : rows) header.push_back(row.label);
  analysis::TextTable t(header);
  auto line = [&](const std::string& what, const std::string& paper_std, const std::string& paper_flash,
                  const std::function<std::string(const Row&)>& cell) {
    std::vector<std::string> l{what};
    if (paper_problem) {
      l.push_back(paper_std);
      l.push_back(paper_flash);
    }
    for (const Row& row : rows) l.push_back(cell(row));
    t.add(l);
  };
  line("GFLOPs (the paper's count)", "66.6", "75.2", [](const Row&) { return std::string("-"); });
  line("GFLOPs, exact (blocks computed)", "", "",
       [](const Row& row) { return analysis::fixed(row.run.roof.flops / 1e9, 1); });
  line("GFLOPs, convention (" + analysis::convention_formula(p, sim::PassSelection::fwd_bwd) + ")", "", "",
       [](const Row& row) { return analysis::fixed(row.run.roof.convention_flops / 1e9, 1); });
  line("HBM reads/writes (GB)", "40.3", "4.4", [](const Row& row) {
    return analysis::fixed(static_cast<double>(row.run.total.level(sim::Level::HBM).bytes()) / 1e9, 1) + " requests";
  });
  line("  DRAM after the L2 model (GB)", "", "",
       [](const Row& row) { return analysis::fixed(static_cast<double>(row.run.dram_bytes()) / 1e9, 1); });
  line("Kept for the backward", "", "", [](const Row& row) {
    const sim::TrainingStepMemory m = sim::training_step_memory(row.run.family, row.run.problem);
    std::string names;
    for (const sim::TensorMemory& tm : m.saved) names += (names.empty() ? "" : ", ") + std::string(sim::display_name(tm.tensor));
    return sim::bytes_iec(static_cast<double>(m.saved_bytes())) + " (" + names + ")";
  });
  line("Backward's peak memory", "", "", [](const Row& row) {
    return sim::bytes_iec(static_cast<double>(sim::training_step_memory(row.run.family, row.run.problem).backward_peak_bytes));
  });
  line("Runtime (ms)", "41.7", "7.3", [&](const Row& row) {
    return "≥ " + analysis::fixed(row.run.roof.time_s * 1e3, 2) + " on " + r.hw.name;
  });
  if (measured) {
    auto both = [&](const Row& row, const std::function<std::string(const analysis::BenchRow&)>& of,
                    const std::function<double(const analysis::BenchRow&)>& value, int decimals) {
      std::string names;
      double sum = 0;
      for (const analysis::PassPart& part : row.run.parts) {
        const analysis::BenchRow* b = fastest_run(*measured, p, part.result.algorithm);
        if (!b || of(*b).empty()) return std::string("-");
        names += (names.empty() ? "" : " + ") + b->kernel;
        sum += value(*b);
      }
      return analysis::fixed(sum, decimals) + " (" + names + ")";
    };
    line("  measured time (ms)", "", "", [&](const Row& row) {
      return both(row, [](const analysis::BenchRow&) { return std::string("t"); },
                  [](const analysis::BenchRow& b) { return b.time_ms_median; }, 2);
    });
    line("  measured DRAM (GB)", "", "", [&](const Row& row) {
      return both(row, [](const analysis::BenchRow& b) { return b.has_counters() ? std::string("c") : std::string(); },
                  [](const analysis::BenchRow& b) { return static_cast<double>(b.dram_read_bytes + b.dram_write_bytes) / 1e9; },
                  1);
    });
  }
  std::cout << t.str();
  std::cout << "The paper's columns are one implementation measured on an A100 (standard attention in PyTorch with "
               "dropout and masking kernels; FlashAttention-1), its HBM column the bytes that implementation read and "
               "wrote. FlashLab's rows are the simulator's loop nests: requests (the paper's \"HBM accesses\" of the "
               "IO analysis), DRAM after the L2 model, and the roofline lower bound; measured rows are the fastest "
               "kernel of each pass in the results file. docs/model.md says which quantity each is.\n";
}

class CompareCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("compare", "standard vs FlashAttention-1 vs FlashAttention-2 on one problem "
                                         "(default: GPT-2 medium on an A100, as in the FlashAttention paper)");
    app->add_option("--algos", algos_, algorithms_help())->capture_default_str();
    add_pass_flag(*app, pass_);
    add_problem_flags(*app, flags_);
    app->add_option("--csv", csv_, "CSV output file")->capture_default_str();
    app->add_option("--results", results_, "measured runs (JSON or CSV written by flashlab bench --counters or "
                                           "validate): their DRAM bytes beside the model's; repeat it for several "
                                           "files of one GPU (the forward runs in one, the backward in another). With "
                                           "--pass: every measured run of the pass, each problem as it ran, beside "
                                           "today's model");
    app->add_option("--measured-csv", measured_csv_, "with --pass and --results: the table of every measured run as CSV");
  }
  int run() override {
    const Resolved r = resolve(flags_);
    const std::optional<sim::PassSelection> pass = parse_pass(pass_);
    if (!measured_csv_.empty() && (results_.empty() || !pass))
      throw UsageError("--measured-csv: needs --results and --pass (the table of every measured run of the pass)");
    require_output_folder("--csv", csv_);
    require_output_folder("--measured-csv", measured_csv_);
    std::optional<Measured> measured;
    if (!results_.empty()) {
      try {
        measured = read_measured(results_);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
      if (pass) check_measured_for_table(*measured);
    }
    return print_and_write(r, compare(r, parse_algorithms(algos_), pass), csv_, measured,
                           measured ? pass : std::nullopt, measured_csv_);
  }

 private:
  ProblemFlags flags_;
  std::string algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), csv_ = kDefaultCsv, pass_,
              measured_csv_;
  std::vector<std::string> results_;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

int run_default_comparison() {
  ProblemFlags f;
  const Resolved r = resolve(f);
  return print_and_write(r, compare(r, analysis::default_algorithms(), std::nullopt), kDefaultCsv, std::nullopt);
}

}  // namespace flashlab::cli
