// A lab report in one call: every chart the inputs support (PNG, SVG, PDF and
// CSV), the tables, the metadata, and one document — Markdown and a
// multi-page PDF — that a student can hand in as the skeleton of a report,
// each chart with a caption saying what was measured and how. `flashlab
// report` and the GUI's "Export… → every chart" both write it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/export/chart_export.hpp"

namespace flashlab::analysis {

// ---- the document ------------------------------------------------------------------

// A report as blocks, rendered twice: Markdown (charts linked as PNG files)
// and PDF (charts drawn on their own pages, captions under them).
struct DocBlock {
  enum class Kind { heading, paragraph, bullets, table, chart } kind = Kind::paragraph;
  std::string text;                              // heading, paragraph
  std::vector<std::string> items;                // bullets
  std::vector<std::vector<std::string>> rows;    // table: the first row is the header
  std::optional<ChartSpec> chart;                // chart
  std::string chart_file;                        // chart: its PNG, relative to the document
  std::string caption;                           // chart
};

struct ReportDocument {
  std::string title, subtitle;
  std::vector<DocBlock> blocks;
};

std::string document_markdown(const ReportDocument& doc);
// A4 landscape pages; throws std::runtime_error without cairo.
std::string document_pdf(const ReportDocument& doc);

// ---- the bundle --------------------------------------------------------------------

// A set of measured rows to chart under its own heading: the whole results
// file, or the rows of one named sweep.
struct ReportSection {
  std::string name;   // "all runs", or the sweep's name: the charts' file prefix
  std::string title;  // the sweep's title
  std::string source; // where its grid comes from
  BenchResults results;
};

// One figure of a lab, built: the lab's item, the chart FlashLab draws for it,
// the runs it was drawn from, and what it does differently from the lab's.
struct ReportFigure {
  std::string item;
  std::string note;
  ChartSpec chart;
  std::string chart_id;  // its chart_table() entry
  BenchResults runs;
  std::string sweep;                    // the grid it draws
  std::vector<std::string> unmeasured;  // problems of that grid (within its filter) no run of it holds
};

// A lab's report (flashlab report --lab): its figures in the lab's order in
// place of the model charts and the sections.
struct LabReport {
  std::string name, title, measured;
  std::vector<ReportFigure> figures;
  std::vector<std::string> differences;
  BenchResults runs;  // every run the figures draw from, for the runs table
};

struct ReportRequest {
  ChartContext model;                    // the model charts' problem, hardware, algorithms
  std::string results_origin;            // the file(s) the sections come from ("" when none)
  std::vector<ReportSection> sections;   // empty: the model charts only
  // Not empty: the roofline charts of the sections are left out and this says
  // why (the results name a GPU no hardware preset matches).
  std::string roof_refusal;
  std::optional<LabReport> lab;          // set: a lab's report
  std::string command;                   // how the bundle was made, for the metadata
  // What merging the results files left out or found (repeated runs kept
  // once, repeats that disagree): the Method section states each.
  std::vector<std::string> results_notes;
  ExportOptions chart_size;              // PNG size of each chart
};

struct ReportBundle {
  std::vector<std::string> files;  // written, relative to the folder, in writing order
  std::vector<std::string> notes;  // charts left out and why
};

// PyTorch's version, the CUDA it was built with and cuDNN's version as a
// results file records them; "not recorded" for what it does not (a file of
// the first torch_compare.py names the version in its build field and the
// CUDA in its CUDA runtime field).
struct PyTorchVersions {
  std::string torch, cuda, cudnn;
};
PyTorchVersions pytorch_versions(const BenchMeta& m);

// Whether the results say where and how they were measured (a GPU, a date
// or a build); a file without says "method not recorded" instead of a method.
bool method_recorded(const BenchMeta& m);

// The caption of a chart: its title, what it shows and what to read from it
// (the chart table's reading), where it was measured or that it is modelled.
std::string chart_caption(const ChartSpec& c, const ChartEntry& entry, const BenchResults* results,
                          const ChartContext& model);

// Writes the bundle into `dir` (created if missing): report.md, report.pdf
// (with cairo), metadata.json, tables/*.csv and *.txt, charts/*.{png,svg,pdf,csv}
// (PNG and PDF with cairo). Throws std::runtime_error naming the file that
// could not be written.
ReportBundle write_report(const ReportRequest& request, const std::string& dir);

}  // namespace flashlab::analysis
