// The lab report bundle: charts in every format, tables, metadata, and the
// document as Markdown and as a multi-page PDF.
#include "flashlab/export/report_bundle.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "canvases.hpp"
#include "flashlab/analysis/placement/bench_table.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/model/pass_run.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"

#ifdef FLASHLAB_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo.h>
#endif

namespace flashlab::analysis {

namespace {

// ---- Markdown ------------------------------------------------------------------------

std::string md_cell(std::string s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

std::string document_markdown(const ReportDocument& doc) {
  std::string md = "# " + doc.title + "\n\n";
  if (!doc.subtitle.empty()) md += "*" + doc.subtitle + "*\n\n";
  for (const DocBlock& b : doc.blocks) {
    switch (b.kind) {
      case DocBlock::Kind::heading: md += "## " + b.text + "\n\n"; break;
      case DocBlock::Kind::paragraph: md += b.text + "\n\n"; break;
      case DocBlock::Kind::bullets:
        for (const std::string& it : b.items) md += "- " + it + "\n";
        md += "\n";
        break;
      case DocBlock::Kind::table:
        for (size_t r = 0; r < b.rows.size(); ++r) {
          md += "|";
          for (const std::string& c : b.rows[r]) md += " " + md_cell(c) + " |";
          md += "\n";
          if (r == 0) {
            md += "|";
            for (size_t c = 0; c < b.rows[r].size(); ++c) md += c == 0 ? " --- |" : " ---: |";
            md += "\n";
          }
        }
        md += "\n";
        break;
      case DocBlock::Kind::chart:
        md += "![" + (b.chart ? b.chart->title : std::string("chart")) + "](" + b.chart_file + ")\n\n";
        md += "*" + b.caption + "*\n\n";
        break;
    }
  }
  return md;
}

// ---- PDF -----------------------------------------------------------------------------

#ifdef FLASHLAB_HAVE_CAIRO
namespace {

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// Lays blocks out on A4 landscape pages in px (1 px = 0.75 pt): 1123 × 794.
class PdfWriter {
 public:
  static constexpr double kW = 1123, kH = 794, kMargin = 56;

  explicit PdfWriter(std::string& out) {
    surface_ = cairo_pdf_surface_create_for_stream(append_bytes, &out, kW * 0.75, kH * 0.75);
    if (cairo_surface_status(surface_) != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cairo PDF surface: ") + cairo_status_to_string(cairo_surface_status(surface_)));
    cairo_pdf_surface_set_metadata(surface_, CAIRO_PDF_METADATA_CREATOR, "FlashLab");
    cr_ = cairo_create(surface_);
    cairo_scale(cr_, 0.75, 0.75);
    canvas_ = std::make_unique<detail::CairoCanvas>(cr_);
    y_ = kMargin;
  }
  ~PdfWriter() {
    if (cr_) cairo_destroy(cr_);
    if (surface_) cairo_surface_destroy(surface_);
  }
  PdfWriter(const PdfWriter&) = delete;
  PdfWriter& operator=(const PdfWriter&) = delete;

  void title(const std::string& t, const std::string& sub) {
    text_lines(t, 30, {20, 20, 20, 255});
    if (!sub.empty()) text_lines(sub, 15, {90, 90, 90, 255});
    y_ += 12;
    body_ = true;
  }
  void heading(const std::string& t) {
    if (y_ > kH - kMargin - 120) new_page();
    y_ += 10;
    text_lines(t, 22, {20, 20, 20, 255});
    y_ += 4;
  }
  void paragraph(const std::string& t, double size = 14) {
    text_lines(t, size, {40, 40, 40, 255});
    y_ += size * 0.6;
    body_ = true;
  }
  void bullets(const std::vector<std::string>& items) {
    for (const std::string& it : items) text_lines(it, 14, {40, 40, 40, 255}, 22, "•");
    y_ += 8;
    body_ = true;
  }
  void table(const std::vector<std::vector<std::string>>& rows) {
    if (rows.empty()) return;
    body_ = true;
    double size = 12;
    std::vector<double> w;
    auto widths = [&] {
      w.assign(rows.front().size(), 0);
      for (const auto& r : rows)
        for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], canvas_->measure(r[c], size).x + 14);
    };
    widths();
    double total = 0;
    for (double x : w) total += x;
    if (total > kW - 2 * kMargin) {  // shrink to the page width
      size *= (kW - 2 * kMargin) / total;
      widths();
    }
    const double lh = size * 1.55;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (y_ + lh > kH - kMargin) new_page();
      if (r == 0) canvas_->rect_filled({kMargin, y_, kW - 2 * kMargin, lh}, {232, 236, 242, 255});
      double x = kMargin;
      for (size_t c = 0; c < rows[r].size() && c < w.size(); ++c) {
        const bool left = c == 0;
        canvas_->text({left ? x + 4 : x + w[c] - 8, y_ + lh / 2}, rows[r][c], size, {30, 30, 30, 255},
                      left ? HAlign::left : HAlign::right, VAlign::middle, false);
        x += w[c];
      }
      canvas_->line({kMargin, y_ + lh}, {kW - kMargin, y_ + lh}, {215, 215, 215, 255}, 0.8, Dash::solid);
      y_ += lh;
    }
    y_ += 12;
  }
  // A chart on a page of its own, its caption under it; a page that holds
  // only headings so far keeps them above the chart.
  void chart(const ChartSpec& c, const std::string& caption) {
    const double caption_h = static_cast<double>(wrapped(caption, 13, kW - 2 * kMargin).size()) * 13 * 1.4 + 16;
    if (body_ || kH - kMargin - y_ - caption_h < 420) new_page();
    const double top = y_;
    const double chart_h = std::max(300.0, kH - kMargin - top - caption_h);
    ChartStyle st;
    st.scale = 1.0;
    const Rect outer{kMargin, top, kW - 2 * kMargin, chart_h};
    const ChartLayout layout = layout_chart(c, *canvas_, outer, st);
    render_chart(c, *canvas_, layout, st);
    y_ = top + chart_h + 8;
    text_lines(caption, 13, {60, 60, 60, 255}, 0, "", /*may_break=*/false);
    body_ = true;
  }
  void finish() {
    cairo_show_page(cr_);
    cairo_surface_finish(surface_);
    if (cairo_surface_status(surface_) != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error(std::string("PDF writing: ") + cairo_status_to_string(cairo_surface_status(surface_)));
  }

 private:
  void new_page() {
    cairo_show_page(cr_);
    y_ = kMargin;
    body_ = false;
  }
  std::vector<std::string> wrapped(const std::string& t, double size, double width) {
    std::vector<std::string> lines;
    std::string line, word;
    auto flush_word = [&] {
      if (word.empty()) return;
      const std::string cand = line.empty() ? word : line + " " + word;
      if (!line.empty() && canvas_->measure(cand, size).x > width) {
        lines.push_back(line);
        line = word;
      } else {
        line = cand;
      }
      word.clear();
    };
    for (char ch : t) {
      if (ch == ' ') flush_word();
      else if (ch == '\n') {
        flush_word();
        lines.push_back(line);
        line.clear();
      } else {
        word += ch;
      }
    }
    flush_word();
    if (!line.empty()) lines.push_back(line);
    return lines;
  }
  // Wrapped lines from y_; a new page when the next one would cross the
  // bottom margin, unless `may_break` is false (a caption stays with its chart).
  void text_lines(const std::string& t, double size, Color col, double indent = 0, const std::string& mark = "",
                  bool may_break = true) {
    const double lh = size * 1.4;
    bool first = true;
    for (const std::string& l : wrapped(t, size, kW - 2 * kMargin - indent)) {
      if (may_break && y_ + lh > kH - kMargin) new_page();
      if (first && !mark.empty()) canvas_->text({kMargin + 6, y_}, mark, size, col, HAlign::left, VAlign::top, false);
      canvas_->text({kMargin + indent, y_}, l, size, col, HAlign::left, VAlign::top, false);
      y_ += lh;
      first = false;
    }
  }

  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
  std::unique_ptr<detail::CairoCanvas> canvas_;
  double y_ = 0;
  bool body_ = false;  // the page holds more than headings
};

}  // namespace
#endif

std::string document_pdf(const ReportDocument& doc) {
#ifdef FLASHLAB_HAVE_CAIRO
  std::string out;
  {
    PdfWriter w(out);
    w.title(doc.title, doc.subtitle);
    for (const DocBlock& b : doc.blocks) {
      switch (b.kind) {
        case DocBlock::Kind::heading: w.heading(b.text); break;
        case DocBlock::Kind::paragraph: w.paragraph(b.text); break;
        case DocBlock::Kind::bullets: w.bullets(b.items); break;
        case DocBlock::Kind::table: w.table(b.rows); break;
        case DocBlock::Kind::chart:
          if (b.chart) w.chart(*b.chart, b.caption);
          break;
      }
    }
    w.finish();
  }
  return out;
#else
  (void)doc;
  throw std::runtime_error("this build has no cairo: the PDF report is unavailable (install libcairo2-dev and rebuild)");
#endif
}

// ---- captions ------------------------------------------------------------------------

namespace {

std::string mhz(double v) { return v > 0 ? fixed(v, 0) + " MHz" : std::string("unknown"); }

// "10–100 timed runs" over the ok, timed rows given.
std::string repeats_text(const std::vector<const BenchRow*>& rows) {
  int lo = 0, hi = 0;
  for (const BenchRow* row : rows)
    if (row->status == RunStatus::ok && row->repeats > 0) {
      lo = lo == 0 ? row->repeats : std::min(lo, row->repeats);
      hi = std::max(hi, row->repeats);
    }
  if (hi == 0) return "no timed runs (checked only)";
  return (lo == hi ? std::to_string(lo) : std::to_string(lo) + "–" + std::to_string(hi)) + " timed runs";
}

std::string where_measured(const BenchMeta& m) {
  std::string s = "Measured on " + (m.gpu.empty() ? std::string("an unknown GPU") : m.gpu);
  std::vector<std::string> parts;
  if (m.sm_count > 0) parts.push_back(std::to_string(m.sm_count) + " SMs");
  if (!m.driver.empty()) parts.push_back("driver " + m.driver);
  if (!m.cuda_runtime.empty()) parts.push_back("CUDA " + m.cuda_runtime);
  if (m.sm_clock_mhz > 0) parts.push_back("SM clock " + mhz(m.sm_clock_mhz) + " observed");
  if (!parts.empty()) {
    s += " (";
    for (size_t k = 0; k < parts.size(); ++k) s += (k ? ", " : "") + parts[k];
    s += ")";
  }
  if (!m.commit.empty()) s += " at commit " + m.commit;
  if (!m.date.empty()) s += ", " + m.date;
  return s + ".";
}

}  // namespace

bool method_recorded(const BenchMeta& m) { return !m.gpu.empty() || !m.date.empty() || !m.commit.empty(); }

namespace {

// The runs of one side of a report — FlashLab's rungs or PyTorch's rows —
// and the file they came from (its metadata says how they were measured).
struct Side {
  bool pytorch = false;
  std::string origin;  // "" when the results name no file of their own
  BenchMeta meta;
  std::vector<const BenchRow*> rows;
};

// One side per file and kind of row, in the files' order: FlashLab's rows of
// one file, PyTorch's of another; a file of each script's version says what
// that version did.
std::vector<Side> sides_of(const BenchResults& r) {
  std::vector<Side> out;
  const std::size_t files = std::max<std::size_t>(1, r.sources.size());
  for (std::size_t f = 0; f < files; ++f)
    for (bool torch : {false, true}) {
      Side side;
      side.pytorch = torch;
      side.meta = r.sources.empty() ? r.meta : r.sources[f].meta;
      side.origin = r.sources.empty() ? "" : r.sources[f].origin;
      for (const BenchRow& row : r.rows)
        if (is_pytorch(row.kernel) == torch && (r.sources.empty() || row.source == f)) side.rows.push_back(&row);
      if (!side.rows.empty()) out.push_back(std::move(side));
    }
  return out;
}

std::string checked_text(const Side& side) {
  size_t ok = 0, checked = 0;
  for (const BenchRow* row : side.rows)
    if (row->status == RunStatus::ok) {
      ++ok;
      checked += row->rel_error >= 0 ? 1 : 0;
    }
  return std::to_string(checked) + " of its " + std::to_string(ok) + " measured rows carry that error";
}

std::string flush_text(const BenchMeta& m) {
  return m.l2_flush ? "each after the L2 was flushed by writing a buffer twice its size"
                    : "without flushing the L2 between runs (warm cache)";
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

PyTorchVersions pytorch_versions(const BenchMeta& m) {
  PyTorchVersions v;
  const std::string none = "not recorded";
  v.torch = m.torch_version;
  // Files of the first torch_compare.py name the version only in their build field.
  if (v.torch.empty() && m.commit.rfind("torch ", 0) == 0) v.torch = m.commit.substr(6) + " (the file's build field)";
  if (v.torch.empty()) v.torch = none;
  // The first torch_compare.py wrote torch.version.cuda as the file's CUDA runtime.
  v.cuda = !m.torch_cuda.empty()                                        ? m.torch_cuda
           : m.commit.rfind("torch ", 0) == 0 && !m.cuda_runtime.empty() ? m.cuda_runtime + " (the file's CUDA runtime field)"
                                                                         : none;
  v.cudnn = !m.cudnn_version.empty() ? m.cudnn_version : none;
  return v;
}

namespace {

std::string versions_text(const BenchMeta& m) {
  const PyTorchVersions v = pytorch_versions(m);
  return "PyTorch " + v.torch + ", built with CUDA " + v.cuda + ", cuDNN " + v.cudnn;
}

// What was done to each side's rows, in sentences true of every row.
std::string side_method(const Side& side) {
  const std::string from = side.origin.empty() ? "" : " (" + file_name(side.origin) + ")";
  if (!method_recorded(side.meta))
    return std::string(side.pytorch ? "PyTorch's" : "FlashLab's") + " rows" + from +
           ": method not recorded — the file carries no metadata (no GPU, date or build), so how the times were taken "
           "(repeats, warm-up, L2 flush, checking) is unknown; each point is the time the file gives.";
  const std::string median = "each point is the median of " + repeats_text(side.rows) + " (as each row records)";
  if (!side.pytorch)
    return "FlashLab's rows" + from + ", flashlab bench: " + median +
           ", timed with CUDA events after warm-up runs (flashlab bench runs 3 unless told otherwise), " +
           flush_text(side.meta) +
           ". Inputs are N(0, 1) from a seed; the output is poisoned with NaN before every run, so an element a "
           "kernel leaves unwritten stays NaN and fails the row, and the first run is checked against an fp64 "
           "reference on the heads and rows its sampled check picks (every one for a small case; " +
           checked_text(side) +
           "). Peak memory is the larger of the bytes the case's buffers take and what the device memory in use grew "
           "by during the case (cudaMemGetInfo).";
  std::string s = "PyTorch's rows" + from + ", scripts/torch_compare.py on the same problems: ";
  if (!side.meta.method.empty()) {
    s += median + ". " + side.meta.method + ".";
  } else {
    s += median + ", timed with CUDA events after warm-up runs, " + flush_text(side.meta) +
         ". The outputs were not poisoned (PyTorch allocates each output itself) and only head (0, 0) of the first "
         "batch was checked against fp64, where N_q·N_kv is at most 4096² forward or 2048² backward (" +
         checked_text(side) + "): the script that wrote this file did not record its method, and checked no more.";
  }
  s += " Peak memory is torch.cuda.max_memory_allocated(): the caching allocator's peak of PyTorch's own tensors, "
       "inputs included. " + versions_text(side.meta) + ".";
  return s;
}

std::string method_text(const BenchResults& r) {
  std::string s;
  for (const Side& side : sides_of(r)) s += (s.empty() ? "" : "\n\n") + side_method(side);
  return s + "\n\nA case that ran out of memory, was skipped or failed is a row with that status and its reason: ✕ on "
             "the line charts, the reason in place of a bar, an empty cell beside its status in the CSV files.";
}

}  // namespace

std::string chart_caption(const ChartSpec& c, const ChartEntry& entry, const BenchResults* results,
                          const ChartContext& model) {
  std::string s = c.title + ". " + chart_reading(entry, c) + " ";
  if (results && (entry.needs_results || !results->rows.empty())) {
    s += method_recorded(results->meta)
             ? "Measured on " + (results->meta.gpu.empty() ? std::string("an unrecorded GPU") : results->meta.gpu) +
                   " (the Method section says how)."
             : "Method not recorded: the results carry no metadata.";
    if (!entry.needs_results)
      s += " The model's lines are FlashLab's simulator for " + model.hw.display_name +
           "; the measured points are placed at their DRAM bytes (the counters' where the run has them, else the L2 "
           "model's prediction).";
  } else {
    s += "Modelled, not measured: FlashLab's simulator for " + sim::describe(model.problem) + " on " +
         model.hw.display_name +
         ". Requests are the loop nest's reads and writes to global memory (the paper's HBM accesses); DRAM is what "
         "the L2 model lets through; times are roofline lower bounds.";
  }
  return s;  // the chart's own notes are drawn under it
}

// ---- the bundle ----------------------------------------------------------------------

namespace {

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') ? ch : '-';
  return out.empty() ? std::string("section") : out;
}

class Writer {
 public:
  Writer(std::string dir, ReportBundle& b) : dir_(std::move(dir)), b_(b) {}
  void file(const std::string& rel, const std::string& bytes) {
    try {
      write_file_atomic(dir_ + "/" + rel, bytes);
    } catch (const std::exception& e) {
      throw std::runtime_error(dir_ + "/" + rel + ": " + e.what());
    }
    b_.files.push_back(rel);
  }

 private:
  std::string dir_;
  ReportBundle& b_;
};

// Every format of one chart under charts/NAME.*; returns the PNG's (or SVG's)
// path. What the layout check finds in the chart at that size is a note of
// the bundle: a label over another is a defect to see, not to hand in.
std::string write_chart(Writer& w, ReportBundle& bundle, const ChartSpec& c, const std::string& name,
                        const ExportOptions& o) {
  for (const std::string& p : chart_layout_problems(c, o)) bundle.notes.push_back("layout: charts/" + name + ": " + p);
  w.file("charts/" + name + ".svg", render_svg(c, o));
  w.file("charts/" + name + ".csv", chart_to_csv(c));
  if (!have_cairo()) return "charts/" + name + ".svg";
  w.file("charts/" + name + ".png", render_png(c, o));
  w.file("charts/" + name + ".pdf", render_pdf(c, o));
  return "charts/" + name + ".png";
}

std::vector<std::vector<std::string>> bench_rows_table(const BenchResults& r, size_t limit) {
  std::vector<std::vector<std::string>> rows{{"implementation", "pass", "B", "H", "N", "d", "causal", "dtype",
                                              "ms (median)", "TFLOP/s", "peak memory", "status"}};
  for (const BenchRow& row : r.rows) {
    if (rows.size() > limit) break;
    const bool ok = row.status == RunStatus::ok;
    rows.push_back({implementation_name(row.kernel), row.direction, std::to_string(row.problem.batch),
                    std::to_string(row.problem.heads), sim::group_digits(row.problem.n_q()),
                    std::to_string(row.problem.head_dim), row.problem.causal ? "yes" : "no",
                    std::string(sim::to_string(row.problem.dtype)),
                    ok && row.time_ms_median > 0 ? fixed(row.time_ms_median, 3) : "",
                    ok && row.tflops > 0 ? fixed(row.tflops, 1) : "",
                    ok && row.peak_memory_bytes > 0 ? sim::bytes_iec(static_cast<double>(row.peak_memory_bytes)) : "",
                    std::string(to_string(row.status))});
  }
  return rows;
}

nlohmann::json meta_json(const BenchMeta& m) {
  return {{"gpu", m.gpu},           {"sm_count", m.sm_count},         {"l2_bytes", m.l2_bytes},
          {"driver", m.driver},     {"cuda_runtime", m.cuda_runtime}, {"sm_clock_mhz", m.sm_clock_mhz},
          {"mem_clock_mhz", m.mem_clock_mhz}, {"commit", m.commit},  {"flop_convention", m.flop_convention},
          {"date", m.date},         {"host", m.host},                 {"l2_flush", m.l2_flush},
          {"method_recorded", method_recorded(m)}};
}

DocBlock heading(const std::string& t) { return {DocBlock::Kind::heading, t, {}, {}, {}, {}, {}}; }
DocBlock paragraph(const std::string& t) { return {DocBlock::Kind::paragraph, t, {}, {}, {}, {}, {}}; }
DocBlock bullets(std::vector<std::string> items) { return {DocBlock::Kind::bullets, "", std::move(items), {}, {}, {}, {}}; }

// Setup (GPU, driver, clocks, build, files) and Method: the GPU from the first
// results, each file's own build and date, PyTorch's versions where PyTorch's
// rows are drawn, what was done to each side's rows.
void setup_and_method(const ReportRequest& req, const BenchResults* first, ReportDocument& doc) {
  doc.blocks.push_back(heading("Setup"));
  std::vector<std::string> setup;
  if (first) {
    const BenchMeta& m = first->meta;
    setup.push_back("GPU: " + (m.gpu.empty() ? std::string("not recorded") : m.gpu) +
                    (m.sm_count > 0 ? ", " + std::to_string(m.sm_count) + " SMs" : "") +
                    (m.l2_bytes > 0 ? ", L2 " + sim::bytes_iec(static_cast<double>(m.l2_bytes)) : ""));
    if (method_recorded(m)) {
      setup.push_back("Driver " + (m.driver.empty() ? std::string("not recorded") : m.driver) + ", CUDA runtime " +
                      (m.cuda_runtime.empty() ? std::string("not recorded") : m.cuda_runtime));
      setup.push_back("Clocks: SM " + mhz(m.sm_clock_mhz) + " (observed), memory " + mhz(m.mem_clock_mhz));
    }
    for (const Side& side : sides_of(*first)) {
      const BenchMeta& sm = side.meta;
      std::string line = std::string(side.pytorch ? "PyTorch's rows" : "FlashLab's rows") +
                         (side.origin.empty() ? "" : " (" + file_name(side.origin) + ")") + ": " +
                         std::to_string(side.rows.size()) + " runs; build " +
                         (sm.commit.empty() ? std::string("not recorded") : sm.commit) + "; measured " +
                         (sm.date.empty() ? std::string("on an unrecorded date") : sm.date) +
                         (sm.host.empty() ? "" : " on " + sm.host);
      if (side.pytorch) line += "; " + versions_text(sm);
      setup.push_back(line);
    }
    setup.push_back("FLOP convention: " + (m.flop_convention.empty() ? std::string("not recorded") : m.flop_convention));
    setup.push_back("Results: " + req.results_origin);
  }
  if (!req.lab) setup.push_back("Model charts: " + sim::describe(req.model.problem) + " on " + req.model.hw.display_name);
  setup.push_back("Made with: " + req.command);
  doc.blocks.push_back(bullets(setup));
  if (first) {
    doc.blocks.push_back(heading("Method"));
    std::string text = method_text(*first);
    if (method_recorded(first->meta)) text = where_measured(first->meta) + "\n\n" + text;
    size_t k = 0;
    while (k <= text.size()) {  // one paragraph per side
      const size_t e = text.find("\n\n", k);
      doc.blocks.push_back(paragraph(text.substr(k, e == std::string::npos ? std::string::npos : e - k)));
      if (e == std::string::npos) break;
      k = e + 2;
    }
  }
  if (!req.results_notes.empty()) {
    std::vector<std::string> lines;
    for (const std::string& n : req.results_notes) lines.push_back("Results: " + n);
    doc.blocks.push_back(bullets(lines));
  }
}

// The runs behind a part of the report: plain CSV (pandas reads it as is), its
// metadata beside it as JSON, a text table, and as many rows as a page holds
// in the document, saying how many of how many.
void runs_table(Writer& w, ReportDocument& doc, const std::string& prefix, const BenchResults& r) {
  w.file("tables/" + prefix + "-runs.csv", bench_rows_to_csv(r));
  w.file("tables/" + prefix + "-runs.meta.json", meta_json(r.meta).dump(2) + "\n");
  w.file("tables/" + prefix + "-runs.txt", bench_table(r));
  constexpr size_t kTableRows = 60;
  const size_t n = r.rows.size();
  std::string intro = "The runs (" + std::to_string(n) + "; every column in tables/" + prefix + "-runs.csv, its metadata in tables/" +
                      prefix + "-runs.meta.json)";
  intro += n > kTableRows ? ": the first " + std::to_string(kTableRows) + " of " + std::to_string(n) + " rows." : ":";
  doc.blocks.push_back(paragraph(intro));
  doc.blocks.push_back({DocBlock::Kind::table, "", {}, bench_rows_table(r, kTableRows), {}, {}, {}});
}

// The model: the lecture's comparison on the problem, then every model chart.
void model_part(const ReportRequest& req, Writer& w, ReportDocument& doc, ReportBundle& bundle) {
  doc.blocks.push_back(heading("The model: " + sim::describe(req.model.problem)));
  std::vector<std::vector<std::string>> t{{"algorithm", "pass", "requests", "DRAM predicted", "GFLOP (exact)",
                                           "AI (FLOP/B)", "≥ ms", "bound"}};
  std::string csv = csv_row(result_csv_header());
  for (sim::Algorithm a : req.model.algorithms) {
    const sim::SimResult r = sim::simulate(a, req.model.problem, req.model.hw, req.model.options);
    if (!r.ok()) {
      bundle.notes.push_back(std::string(sim::to_string(a)) + ": " + r.errors().front());
      continue;
    }
    const RooflineEstimate roof = roofline(r, req.model.hw);
    t.push_back({std::string(sim::to_string(a)), std::string(sim::to_string(sim::algorithm_info(a).pass)),
                 sim::si_unit(roof.request_bytes, "B"), sim::si_unit(roof.dram_bytes, "B"), fixed(roof.flops / 1e9, 1),
                 fixed(roof.ai, 1), fixed(roof.time_s * 1e3, 3), roof.memory_bound ? "memory" : "compute"});
    csv += csv_row(result_csv_fields(r, roof, "report", 0, theta_standard_bytes(req.model.problem),
                                     theta_flash_bytes(req.model.problem, r.sram_capacity_bytes)));
  }
  w.file("tables/model-comparison.csv", csv);
  doc.blocks.push_back({DocBlock::Kind::table, "", {}, t, {}, {}, {}});
  for (const ChartEntry& e : chart_table()) {
    if (e.needs_results) continue;
    const ChartSpec c = build_chart(std::string(e.id), req.model, nullptr);
    doc.blocks.push_back({DocBlock::Kind::chart, "", {}, {}, c,
                          write_chart(w, bundle, c, "model-" + std::string(e.id), req.chart_size),
                          chart_caption(c, e, nullptr, req.model)});
  }
}

bool is_roofline(std::string_view id) { return id == "roofline" || id == "roofline-hier"; }

// A section of measured rows: its charts, then its runs.
void section_part(const ReportRequest& req, const ReportSection& sec, Writer& w, ReportDocument& doc,
                  ReportBundle& bundle) {
  const std::string prefix = safe_name(sec.name);
  doc.blocks.push_back(heading(sec.title.empty() ? sec.name : sec.title));
  if (!sec.source.empty()) doc.blocks.push_back(paragraph("Grid: " + sec.source + "."));
  if (sec.results.rows.empty()) {
    doc.blocks.push_back(paragraph("The results hold no run of this grid."));
    bundle.notes.push_back(sec.name + ": no run of this grid in the results");
    return;
  }
  bool refused = false;
  for (const ChartEntry& e : chart_table()) {
    if (!e.needs_results && !is_roofline(e.id)) continue;
    if (is_roofline(e.id) && !req.roof_refusal.empty()) {
      if (!refused) {
        doc.blocks.push_back(paragraph("No roofline: " + req.roof_refusal));
        bundle.notes.push_back(sec.name + " roofline: " + req.roof_refusal);
      }
      refused = true;
      continue;
    }
    ChartSpec c;
    try {
      c = build_chart(std::string(e.id), req.model, &sec.results);
    } catch (const std::exception& ex) {
      bundle.notes.push_back(sec.name + " " + std::string(e.id) + ": " + ex.what());
      continue;
    }
    // A chart the runs cannot support is left out, with the reason: no run to
    // place on a roofline, no backward beside the forward, nothing to draw.
    const auto no_run_note = std::find_if(c.notes.begin(), c.notes.end(), [](const std::string& n) {
      return n.rfind(kNoRunPlaced, 0) == 0;
    });
    const bool no_run_placed = is_roofline(e.id) && no_run_note != c.notes.end();
    const bool no_backward = (e.id == "bench-passes" || e.id == "bench-passes-time") &&
                             std::none_of(sec.results.rows.begin(), sec.results.rows.end(),
                                          [](const BenchRow& x) { return x.direction == "bwd"; });
    if (c.empty() || no_run_placed || no_backward) {
      const std::string why = no_backward ? std::string("the runs hold no backward pass")
                              : no_run_placed ? *no_run_note
                              : c.notes.empty() ? std::string("nothing to draw")
                                                : "nothing to draw (" + c.notes.front() + ")";
      bundle.notes.push_back(sec.name + " " + std::string(e.id) + ": left out, " + why);
      continue;
    }
    doc.blocks.push_back({DocBlock::Kind::chart, "", {}, {}, c,
                          write_chart(w, bundle, c, prefix + "-" + std::string(e.id), req.chart_size),
                          chart_caption(c, e, &sec.results, req.model)});
  }
  runs_table(w, doc, prefix, sec.results);
}

std::string c_title_or_item(const ReportFigure& f) { return f.chart.title.empty() ? f.item : f.chart.title; }

// Two digits: the lab's figures sort in its order in charts/.
std::string figure_number(size_t k) { return (k + 1 < 10 ? "0" : "") + std::to_string(k + 1); }

// A lab: every figure in the lab's order, what FlashLab does differently, the runs.
void lab_part(const ReportRequest& req, const LabReport& lab, Writer& w, ReportDocument& doc, ReportBundle& bundle) {
  doc.blocks.push_back(heading("The lab"));
  doc.blocks.push_back(paragraph(lab.measured));
  for (size_t k = 0; k < lab.figures.size(); ++k) {
    const ReportFigure& f = lab.figures[k];
    doc.blocks.push_back(heading(f.item));
    const ChartEntry* e = find_chart(f.chart_id);
    // Problems of the item's grid without a run: measured nowhere yet, said plainly.
    std::string missing;
    if (!f.unmeasured.empty()) {
      missing = "Not in these results: no run yet of ";
      for (size_t j = 0; j < f.unmeasured.size(); ++j) missing += (j ? "; " : "") + f.unmeasured[j];
      missing += " (the sweep " + f.sweep + "): the chart draws what was measured and nothing in its place. `bash "
                 "scripts/run-lab.sh " + lab.name + " OUT` measures the lab's sweeps, and PyTorch on the same problems, "
                 "on a GPU, then writes this report from them.";
      doc.blocks.push_back(paragraph(missing));
      bundle.notes.push_back(f.item + ": " + std::to_string(f.unmeasured.size()) + " problem(s) of " + f.sweep +
                             " not measured in these results");
    }
    if (!e) {
      doc.blocks.push_back(paragraph("Not drawn: '" + f.chart_id + "' is not a chart of FlashLab's."));
      continue;
    }
    if (f.chart.empty()) {
      // The chart still goes in, its plot saying why it is empty: an item without runs is not a figure of zeros.
      const std::string why = f.chart.notes.empty() ? std::string("no runs to draw") : f.chart.notes.front();
      if (missing.empty()) doc.blocks.push_back(paragraph("No runs to draw: " + why + "."));
      bundle.notes.push_back(f.item + ": no runs to draw (" + why + ")");
    }
    std::string caption = f.chart.empty() ? c_title_or_item(f) + ". No runs in these results: nothing is drawn."
                                          : chart_caption(f.chart, *e, &f.runs, req.model);
    if (!f.note.empty()) caption += " " + f.note;
    doc.blocks.push_back({DocBlock::Kind::chart, "", {}, {}, f.chart,
                          write_chart(w, bundle, f.chart, figure_number(k) + "-" + f.chart_id, req.chart_size), caption});
  }
  if (!lab.differences.empty()) {
    doc.blocks.push_back(heading("Where FlashLab's numbers differ from the lab's"));
    doc.blocks.push_back(bullets(lab.differences));
  }
  doc.blocks.push_back(heading("The runs"));
  runs_table(w, doc, safe_name(lab.name), lab.runs);
}

}  // namespace

ReportBundle write_report(const ReportRequest& req, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* sub : {"", "/charts", "/tables"}) {
    fs::create_directories(dir + sub, ec);
    if (ec) throw std::runtime_error(dir + sub + ": cannot create the folder: " + ec.message());
  }
  ReportBundle bundle;
  Writer w(dir, bundle);
  ReportDocument doc;
  const BenchResults* first = req.lab                    ? &req.lab->runs
                              : req.sections.empty() ? nullptr
                                                     : &req.sections.front().results;
  doc.title = req.lab ? req.lab->title : "FlashLab lab report";
  doc.subtitle = (first ? (first->meta.gpu.empty() ? std::string("GPU not recorded") : first->meta.gpu) + " · "
                        : std::string("model only · ")) + now_utc();
  setup_and_method(req, first, doc);
  if (req.lab) {
    lab_part(req, *req.lab, w, doc, bundle);
  } else {
    model_part(req, w, doc, bundle);
    for (const ReportSection& sec : req.sections) section_part(req, sec, w, doc, bundle);
  }

  nlohmann::json meta{{"generated", now_utc()},
                      {"command", req.command},
                      {"results_file", req.results_origin}};
  if (!req.lab) {
    meta["model_problem"] = problem_json(req.model.problem);
    meta["model_hardware"] = req.model.hw.name;
  }
  nlohmann::json secs = nlohmann::json::array();
  for (const ReportSection& sec : req.sections)
    secs.push_back({{"name", sec.name}, {"title", sec.title}, {"runs", sec.results.rows.size()}, {"measured", meta_json(sec.results.meta)}});
  meta["sections"] = secs;
  if (req.lab) {
    nlohmann::json figs = nlohmann::json::array();
    for (size_t k = 0; k < req.lab->figures.size(); ++k) {
      const ReportFigure& f = req.lab->figures[k];
      figs.push_back({{"item", f.item}, {"chart", f.chart_id}, {"file", "charts/" + figure_number(k) + "-" + f.chart_id},
                      {"drawn", !f.chart.empty()}, {"series", f.chart.series.size()}, {"sweep", f.sweep},
                      {"not_measured", f.unmeasured}});
    }
    meta["lab"] = {{"name", req.lab->name}, {"figures", figs}, {"measured", meta_json(req.lab->runs.meta)}};
  }
  // Every results file with its own metadata; PyTorch's versions where it holds PyTorch's rows.
  if (first) {
    nlohmann::json sources = nlohmann::json::array();
    for (const ResultsSource& src : first->sources) {
      nlohmann::json j{{"file", src.origin}, {"kernels", src.kernels}, {"measured", meta_json(src.meta)}};
      if (std::any_of(src.kernels.begin(), src.kernels.end(), [](const std::string& k) { return is_pytorch(k); })) {
        const PyTorchVersions v = pytorch_versions(src.meta);
        j["pytorch"] = {{"torch", v.torch}, {"cuda", v.cuda}, {"cudnn", v.cudnn}};
      }
      if (!src.meta.method.empty()) j["method"] = src.meta.method;
      sources.push_back(std::move(j));
    }
    meta["sources"] = std::move(sources);
  }
  w.file("metadata.json", meta.dump(2) + "\n");
  w.file("report.md", document_markdown(doc));
  if (have_cairo()) w.file("report.pdf", document_pdf(doc));
  else bundle.notes.push_back("this build has no cairo: report.pdf and the PNG/PDF charts were not written");
  return bundle;
}

}  // namespace flashlab::analysis
