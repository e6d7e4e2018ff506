// flashlab report: the lab report bundle from a committed results file and
// from the model alone — the files it promises, a PDF with a page per chart,
// CSVs with their headers, the metadata — and its errors (exit code 2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"
#include "flashlab/analysis/text/csv.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_report_cli_cases {

namespace fs = std::filesystem;
using flashlab::test::Run;
using flashlab::test::slurp;

namespace {

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-report-cli");

std::string data(const char* name) { return std::string(FLASHLAB_TEST_DATA) + "/" + name; }

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Pages of a PDF written by cairo: its page objects.
size_t pdf_pages(const std::string& pdf) {
  const std::regex page("/Type\\s*/Page[^s]");
  return static_cast<size_t>(std::distance(std::sregex_iterator(pdf.begin(), pdf.end(), page), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("report: a complete bundle from a results file", "[cli][report]") {
  const Run r = run_flashlab("report --results " + data("h200-validate-excerpt.json") + " --out bundle --width 640 --height 420");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const fs::path dir = run_flashlab.path() / "bundle";
  const std::vector<std::string> files = files_under(dir);
  for (const char* f : {"report.md", "report.pdf", "metadata.json", "tables/model-comparison.csv", "tables/runs-runs.csv",
                        "tables/runs-runs.txt", "charts/model-roofline.png", "charts/model-io-vs-n.svg",
                        "charts/model-io-vs-n.csv", "charts/runs-bench-time.png", "charts/runs-bench-time.pdf",
                        "tables/runs-runs.meta.json"})
    CHECK(has(files, f));
  // The excerpt's runs are checked, not timed, and forward only: no roofline
  // point and no backward to chart, so those charts are left out, each with its reason.
  CHECK_FALSE(has(files, "charts/runs-roofline.png"));
  CHECK_FALSE(has(files, "charts/runs-bench-passes.png"));
  CHECK_THAT(r.out, Catch::Contains("note: runs roofline: left out, no measured run placed on the roofline"));
  CHECK_THAT(r.out, Catch::Contains("note: runs bench-passes: left out, the runs hold no backward pass"));

  // Every chart in four formats; each PNG is a PNG, each SVG an SVG.
  size_t charts = 0;
  for (const std::string& f : files) {
    if (f.rfind("charts/", 0) != 0 || f.size() < 4 || f.substr(f.size() - 4) != ".csv") continue;
    ++charts;
    const std::string stem = f.substr(0, f.size() - 4);
    for (const char* ext : {".svg", ".png", ".pdf"}) CHECK(has(files, stem + ext));
    CHECK(slurp(dir / (stem + ".png")).rfind("\x89PNG", 0) == 0);
    CHECK(slurp(dir / (stem + ".svg")).find("<svg") != std::string::npos);
    // A chart's CSV: a header, then rows.
    const auto rows = flashlab::analysis::csv_parse(slurp(dir / f));
    CHECK(rows.size() >= 2);
  }
  CHECK(charts >= 10);  // six model charts and the bench charts the runs support

  // The document: a PDF with a page per chart (and the text pages), the
  // Markdown linking every chart it captions.
  const std::string pdf = slurp(dir / "report.pdf");
  CHECK(pdf.rfind("%PDF-", 0) == 0);
  CHECK(pdf.find("%%EOF") != std::string::npos);
  CHECK(pdf_pages(pdf) >= charts + 1);
  const std::string md = slurp(dir / "report.md");
  CHECK(md.rfind("# FlashLab lab report", 0) == 0);
  flashlab::test::check_contains_each(md, {"## Method", "median of", "L2 was flushed", "(charts/runs-bench-time.png)"});
  CHECK(md.find("^{") == std::string::npos);

  // Tables with their headers; the metadata names the GPU, commit and convention.
  const auto runs = flashlab::analysis::csv_parse(slurp(dir / "tables/model-comparison.csv"));
  REQUIRE(runs.size() == 1 + 3);  // standard, fa1, fa2
  CHECK(runs[0][0] == "axis");
  const auto meta = nlohmann::json::parse(slurp(dir / "metadata.json"));
  CHECK(meta["results_file"] == data("h200-validate-excerpt.json"));
  REQUIRE(meta["sections"].size() == 1);
  CHECK(meta["sections"][0]["measured"]["gpu"].get<std::string>().find("H200") != std::string::npos);
  CHECK_FALSE(meta["sections"][0]["measured"]["flop_convention"].get<std::string>().empty());
}

TEST_CASE("report: the model alone, and a named sweep's section", "[cli][report]") {
  const Run model = run_flashlab("report --out model-only --seq 2048 --causal");
  INFO(model.out << model.err);
  REQUIRE(model.code == 0);
  const std::vector<std::string> files = files_under(run_flashlab.path() / "model-only");
  CHECK(has(files, "report.pdf"));
  CHECK(has(files, "charts/model-ai-vs-n.png"));
  CHECK_FALSE(std::any_of(files.begin(), files.end(), [](const std::string& f) { return f.find("bench-") != std::string::npos; }));
  CHECK(slurp(run_flashlab.path() / "model-only/report.md").find("Modelled, not measured") != std::string::npos);

  // A sweep whose grid holds none of the runs: its section says so.
  const Run sweep = run_flashlab("report --results " + data("h200-validate-excerpt.json") + " --sweep lab-heads --out swept");
  INFO(sweep.out << sweep.err);
  REQUIRE(sweep.code == 0);
  CHECK_THAT(sweep.out, Catch::Contains("no run of this grid"));
}

TEST_CASE("report: bad input is one line and exit code 2", "[cli][report]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"report --out x --sweep lab-heads", "--sweep picks runs of a results file"},
      {"report --out x --results /nonexistent/r.json", "--results:"},
      {"report --out x --results " + data("h200-validate-excerpt.json") + " --sweep no-such-sweep", "--sweep no-such-sweep"},
      {"report --out /proc/flashlab-cannot-write-here", "--out:"},
      {"report --out x --width 10", "--width/--height"},
      {"report --out x --lab flash1-scalng", "did you mean flash1-scaling"},
      {"report --out x --lab flash1-scaling --sweep lab-heads", "--lab draws the lab's own sweeps"},
      {"report --print-sweeps", "--print-sweeps prints a lab's sweeps: give --lab"},
      {"report --lab flash1-scaling", "--out is required"},
      {"report --out x --results " + data("h200-validate-excerpt.json") + " --results " + data("t4-runs.json"),
       "t4-runs.json was measured on Tesla T4"},
      // A student's own table is not a results file: said, and what reads it.
      {"report --out x --results " + data("flash2-lab-tables.csv"),
       "not a results file of flashlab bench or scripts/torch_compare.py (no kernel column): a table of your own "
       "measurements is checked by flashlab check"},
  });
}

TEST_CASE("report: the runs table as pandas reads it, several files merged, the method only as recorded",
          "[cli][report]") {
  const Run r = run_flashlab("report --results " + data("h200-validate-excerpt.json") + " --results " +
                             data("h200-validate-excerpt.json") + " --out merged --width 640 --height 420");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("each run kept once, from the first file that holds it"));
  const fs::path dir = run_flashlab.path() / "merged";
  const std::string csv = slurp(dir / "tables/runs-runs.csv");
  CHECK(csv.rfind("kernel,model,direction,", 0) == 0);  // the header first: no '#' lines
  const auto meta = nlohmann::json::parse(slurp(dir / "tables/runs-runs.meta.json"));
  CHECK(meta["gpu"].get<std::string>().find("H200") != std::string::npos);
  CHECK(meta["method_recorded"] == true);

  // A CSV of runs with no metadata: no method claimed, no GPU's roof assumed.
  const Run plain = run_flashlab("report --results " + data("t4-runs-plain.csv") + " --out plain --width 640 --height 420");
  INFO(plain.out << plain.err);
  REQUIRE(plain.code == 0);
  const std::string md = slurp(run_flashlab.path() / "plain/report.md");
  CHECK_THAT(md, Catch::Contains("Method not recorded"));
  CHECK_THAT(md, !Catch::Contains("median of"));
  CHECK_THAT(md, !Catch::Contains("L2 was flushed"));
  CHECK_THAT(md, !Catch::Contains("fp64 reference"));
  CHECK_THAT(md, Catch::Contains("No roofline: the results do not record their GPU"));
  CHECK_THAT(plain.out, Catch::Contains("roofline: the results do not record their GPU"));
  const std::vector<std::string> files = files_under(run_flashlab.path() / "plain");
  CHECK_FALSE(has(files, "charts/runs-roofline.csv"));
  CHECK(has(files, "charts/runs-bench-time.csv"));
  // With the GPU named, its roof: --hw.
  const Run hw = run_flashlab("report --results " + data("t4-runs-plain.csv") + " --hw T4 --out plain-t4 --width 640 --height 420");
  REQUIRE(hw.code == 0);
  CHECK(has(files_under(run_flashlab.path() / "plain-t4"), "charts/runs-roofline.csv"));
}

TEST_CASE("report: a table cut in the document says how many rows of how many", "[cli][report]") {
  const Run r = run_flashlab("report --results " + data("h200-validate-excerpt.json") + " --out cut --width 640 --height 420");
  REQUIRE(r.code == 0);
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "cut/tables/runs-runs.csv"));
  const size_t n = rows.size() - 1 - (rows.back().size() == 1 ? 1 : 0);
  const std::string md = slurp(run_flashlab.path() / "cut/report.md");
  if (n > 60) CHECK_THAT(md, Catch::Contains("the first 60 of " + std::to_string(n) + " rows"));
  else CHECK_THAT(md, Catch::Contains("The runs (" + std::to_string(n) + ";"));
}

namespace {

// One figure as a chart's CSV holds it: each series (the model's and the
// reference lines left out) and how many points it has.
std::map<std::string, size_t> figure_series(const fs::path& csv) {
  std::map<std::string, size_t> out;
  const auto rows = flashlab::analysis::csv_parse(slurp(csv));
  for (size_t k = 1; k < rows.size(); ++k) {
    if (rows[k].size() < 4) continue;
    const std::string& name = rows[k][1];
    if (name.rfind("ref: ", 0) == 0 || name.rfind("marker: ", 0) == 0) continue;
    ++out[name];
  }
  return out;
}

struct ExpectedFigure {
  const char* file;      // charts/NN-chart, without extension
  size_t series;         // series in the chart (a memory chart's dotted predictions included)
  size_t points;         // points of its first series
  const char* includes;  // a series it must hold
};

}  // namespace

TEST_CASE("report --lab: every figure of each lab, from the committed results, with its series and points",
          "[cli][report][labs]") {
  const std::map<std::string, std::vector<ExpectedFigure>> labs{
      {"torch-vs-flash2",
       {{"01-bench-time", 9, 3, "PyTorch eager b=64"},
        {"02-bench-tflops", 9, 3, "PyTorch SDPA (FlashAttention-2) b=16"},
        {"03-bench-memory", 12, 3, "FlashAttention-2 (tensor cores) b=32 (predicted)"},
        {"04-bench-speedup", 2, 9, "FlashAttention-2 (tensor cores)"},
        {"05-bench-time", 2, 3, "PyTorch SDPA (FlashAttention-2)"},
        {"06-bench-tflops", 2, 3, "FlashAttention-2 (tensor cores)"},
        {"07-bench-memory", 3, 3, "FlashAttention-2 (tensor cores) (predicted)"},
        {"08-bench-time", 2, 3, "PyTorch SDPA (FlashAttention-2)"},
        {"09-bench-tflops", 2, 3, "FlashAttention-2 (tensor cores)"},
        {"10-bench-memory", 3, 3, "PyTorch SDPA (FlashAttention-2)"},
        {"11-bench-time", 2, 4, "PyTorch SDPA (FlashAttention-2)"},
        {"12-bench-tflops", 2, 4, "FlashAttention-2 (tensor cores)"},
        {"13-bench-memory", 3, 4, "PyTorch SDPA (FlashAttention-2)"},
        {"14-bench-time", 2, 3, "PyTorch SDPA (FlashAttention-2)"},
        {"15-bench-tflops", 2, 3, "FlashAttention-2 (tensor cores)"},
        {"16-bench-memory", 3, 3, "PyTorch SDPA (FlashAttention-2)"},
        // The 'Causal Attention' table: a bar per implementation and configuration.
        {"17-bench-time", 4, 1, "PyTorch SDPA (FlashAttention-2) causal"},
        {"18-bench-tflops", 4, 1, "FlashAttention-2 (tensor cores) causal"},
        {"19-bench-memory", 4, 1, "PyTorch SDPA (FlashAttention-2) non-causal"}}},
      {"flash2-shapes",
       {{"01-bench-time", 3, 1, "PyTorch eager"},
        {"02-bench-tflops", 3, 1, "PyTorch SDPA (FlashAttention-2)"},
        {"03-bench-memory", 3, 1, "FlashAttention-2 (tensor cores)"},
        {"04-bench-time", 2, 3, "PyTorch SDPA (FlashAttention-2)"},
        {"05-bench-tflops", 2, 3, "FlashAttention-2 (tensor cores)"},
        {"06-bench-memory", 3, 3, "FlashAttention-2 (tensor cores) (predicted)"},
        {"07-bench-time", 2, 4, "PyTorch SDPA (FlashAttention-2)"},
        {"08-bench-tflops", 2, 4, "FlashAttention-2 (tensor cores)"},
        {"09-bench-memory", 3, 4, "PyTorch SDPA (FlashAttention-2)"},
        {"10-bench-time", 3, 3, "PyTorch eager"},
        {"11-bench-tflops", 3, 3, "PyTorch eager"},
        {"12-bench-memory", 4, 3, "PyTorch eager"}}},
      {"flash1-scaling",
       {{"01-bench-time", 2, 5, "FlashAttention-1 (CUDA cores)"},
        {"02-bench-tflops", 2, 5, "PyTorch eager"},
        {"03-bench-time", 2, 7, "FlashAttention-1 (CUDA cores)"},
        {"04-bench-speedup", 1, 5, "FlashAttention-1 (CUDA cores)"},
        {"05-bench-time", 4, 3, "FlashAttention-1 (CUDA cores) non-causal"},
        {"06-bench-tflops", 2, 6, "FlashAttention-1 (CUDA cores)"},
        {"07-bench-time", 2, 5, "FlashAttention-1 (CUDA cores)"},
        {"08-bench-memory", 3, 5, "FlashAttention-1 (CUDA cores) (predicted)"},
        {"09-bench-passes-time", 5, 6, "FlashAttention-2 backward (CUDA cores)"},
        {"10-bench-tflops", 2, 4, "FlashAttention-1 (CUDA cores)"},
        {"11-bench-heatmap-tflops", 7, 5, "64"},   // a row per batch, a cell per N
        {"12-bench-heatmap", 7, 5, "1"},
        {"13-bench-passes", 5, 1, "PyTorch eager backward"}}},
  };
  for (const auto& [lab, figures] : labs) {
    INFO(lab);
    const Run r = run_flashlab("report --lab " + lab + " --out lab-" + lab + " --width 640 --height 420");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const fs::path dir = run_flashlab.path() / ("lab-" + lab);
    const auto meta = nlohmann::json::parse(slurp(dir / "metadata.json"));
    REQUIRE(meta["lab"]["figures"].size() == figures.size());
    CHECK(meta["lab"]["measured"]["gpu"] == "NVIDIA H200");
    for (size_t k = 0; k < figures.size(); ++k) {
      const ExpectedFigure& e = figures[k];
      INFO(e.file);
      CHECK(meta["lab"]["figures"][k]["file"] == std::string("charts/") + e.file);
      CHECK(meta["lab"]["figures"][k]["drawn"] == true);
      REQUIRE(fs::exists(dir / "charts" / (std::string(e.file) + ".csv")));
      CHECK(fs::exists(dir / "charts" / (std::string(e.file) + ".svg")));
      const auto series = figure_series(dir / "charts" / (std::string(e.file) + ".csv"));
      CHECK(series.size() == e.series);
      REQUIRE(series.count(e.includes) == 1);
      CHECK(series.at(e.includes) == e.points);
    }
    // The document: the lab, every item, what differs, the runs as pandas reads them.
    const std::string md = slurp(dir / "report.md");
    CHECK_THAT(md, Catch::Contains("## The lab"));
    CHECK_THAT(md, Catch::Contains("## Where FlashLab's numbers differ from the lab's"));
    CHECK(slurp(dir / ("tables/" + lab + "-runs.csv")).rfind("kernel,model,direction,", 0) == 0);
    // Missing is not zero: no tiles (PyTorch), tiles not known (a skipped or OOM row), nothing
    // measured — an empty cell, never a 0 a student's min() would find.
    {
      const auto runs = flashlab::analysis::csv_parse(slurp(dir / ("tables/" + lab + "-runs.csv")));
      const auto& h = runs.front();
      auto col = [&](const char* name) { return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
      size_t pytorch = 0;
      for (size_t k = 1; k < runs.size(); ++k) {
        if (runs[k].size() != h.size()) continue;
        INFO(lab << " runs line " << k + 1);
        for (const char* c : {"br", "bc", "time_ms_median", "time_ms_min", "time_ms_max", "tflops", "tflops_exact", "gbps",
                              "peak_memory_bytes", "predicted_memory_bytes", "ctas_per_sm", "mem_limit_bytes",
                              "launch_host_us"}) {
          REQUIRE(col(c) < h.size());
          CHECK(runs[k][col(c)] != "0");
        }
        if (runs[k][col("model")] == "pytorch" || runs[k][col("kernel")].rfind("sdpa_", 0) == 0) {
          ++pytorch;
          CHECK(runs[k][col("br")].empty());
          CHECK(runs[k][col("bc")].empty());
        }
      }
      CHECK(pytorch > 0);
    }
    // Every chart reads: the layout check found no text over text or a point, none cut.
    CHECK_THAT(r.out, !Catch::Contains("layout:"));
    // The method of each side as its rows were taken: FlashLab's medians as each row records
    // them, what the PyTorch script of these files did and did not do, its versions.
    flashlab::test::check_contains_each(md, {
        "FlashLab's rows (labs-flashlab.json), flashlab bench: each point is the median of 10–100 timed runs",
        "PyTorch's rows (labs-pytorch.json)",
        "each output poisoned with NaN before the run",
        "PyTorch 2.11.0+cu130, built with CUDA 13.0, cuDNN 91900",
    });
    CHECK_THAT(md, !Catch::Contains("medians of 10 timed runs"));
    // Repeats of a run that disagree beyond flashlab check's spread: said in the document and the output.
    const std::string disagree =
        "13 of those run(s) disagree: their times spread more than 10 % ((max − min) / min, the threshold of flashlab "
        "check); worst: sdpa_flash fwd B=16 H=8 N=512 d=64 fp16 causal, 6 times 0.045–0.120 ms (165 %), 0.093 ms kept";
    CHECK_THAT(md, Catch::Contains("- Results: " + disagree));
    CHECK_THAT(r.out, Catch::Contains("note: " + disagree));
    REQUIRE(meta["sources"].size() == 2);
    CHECK(meta["sources"][1]["pytorch"]["cudnn"] == "91900");
    CHECK(meta["sources"][1]["pytorch"]["torch"] == "2.11.0+cu130");
    CHECK_FALSE(meta["sources"][0].contains("pytorch"));
  }
}

TEST_CASE("report --lab: an item whose runs are not in the results says so and names the command that measures them",
          "[cli][report][labs]") {
  // Files from the first PyTorch script, holding the heads grid's problem but no causal run.
  const Run r = run_flashlab("report --lab torch-vs-flash2 --results " + data("lab-first-flashlab-excerpt.json") +
                             " --results " + data("lab-first-pytorch-excerpt.json") +
                             " --out lab-causal --width 640 --height 420");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const fs::path dir = run_flashlab.path() / "lab-causal";
  const std::string md = slurp(dir / "report.md");
  flashlab::test::check_contains_each(md, {
      "## Table 'Causal Attention': forward time, not causal and causal",
      "Not in these results: no run yet of B=32 H=32 N=1024 d=64 fp16 causal (the sweep "
      "lab-fa2-causal)",
      "`bash scripts/run-lab.sh torch-vs-flash2 OUT`",
  });
  CHECK_THAT(r.out, Catch::Contains("1 problem(s) of lab-fa2-causal not measured in these results"));
  const auto meta = nlohmann::json::parse(slurp(dir / "metadata.json"));
  CHECK(meta["lab"]["figures"][16]["sweep"] == "lab-fa2-causal");
  CHECK(meta["lab"]["figures"][16]["not_measured"].size() == 1);
  // The chart holds the measured bars only, and its note names what is missing: no bar of 0.
  const auto rows = flashlab::analysis::csv_parse(slurp(dir / "charts/17-bench-time.csv"));
  for (size_t k = 1; k < rows.size(); ++k)
    if (rows[k].size() >= 4 && rows[k][1].rfind("ref: ", 0) != 0) CHECK(rows[k][3] != "0");
  CHECK(meta["lab"]["figures"][16]["drawn"] == true);
  // What that script did and did not do, and the versions its file leaves out, said as such.
  CHECK_THAT(md, Catch::Contains("only head (0, 0) of the first batch was checked against fp64"));
  CHECK_THAT(md, Catch::Contains("PyTorch 2.11.0+cu130 (the file's build field), built with CUDA 13.0 (the file's CUDA "
                                 "runtime field), cuDNN not recorded"));
  CHECK(meta["sources"][1]["pytorch"]["cudnn"] == "not recorded");
  CHECK(meta["sources"][1]["pytorch"]["torch"] == "2.11.0+cu130 (the file's build field)");
}

TEST_CASE("export --results takes several files and merges them as report does", "[cli][report][export]") {
  const fs::path labs = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "labs";
  const Run r = run_flashlab("export --chart bench-time --results " + (labs / "labs-flashlab.json").string() +
                             " --results " + (labs / "labs-pytorch.json").string() +
                             " --filter batch=32,heads=32,head-dim=64,causal=no --out merged-time.csv");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("each run kept once, from the first file that holds it"));
  CHECK_THAT(r.out, Catch::Contains("13 of those run(s) disagree: their times spread more than 10 %"));
  const auto series = figure_series(run_flashlab.path() / "merged-time.csv");
  CHECK(series.count("PyTorch eager") == 1);
  CHECK(series.count("FlashAttention-2 (tensor cores)") == 1);
  // Two GPUs' files are refused, as report refuses them.
  const Run two = run_flashlab("export --chart bench-time --results " + data("h200-validate-excerpt.json") +
                               " --results " + data("t4-runs.json") + " --out x.csv");
  CHECK(two.code == 2);
  CHECK_THAT(two.err, Catch::Contains("t4-runs.json was measured on Tesla T4"));
}

}  // namespace test_report_cli_cases
