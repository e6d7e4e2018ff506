// A lab: the figures and tables of one student lab, each as a chart of
// FlashLab's (which chart, which sweep's runs, which implementations, which
// rows), with what the lab measured and where FlashLab's numbers differ from
// it. `flashlab report --lab NAME` draws every figure of assets/labs/NAME.json.
#pragma once

#include <string>
#include <vector>

namespace flashlab::analysis {

struct LabFigure {
  std::string item;                  // the lab's own figure or table: "Figure 3: time against batch 1–64"
  std::string chart;                 // a bench chart id of chart_table(): "bench-time"
  std::string sweep;                 // the sweep whose grid the figure draws
  std::vector<std::string> kernels;  // the implementations drawn; empty: every one of the grid
  std::string filter;                // rows: "batch=16,causal=yes" (parse_bench_filter); "": every row of the grid
  std::string kernel;                // the heatmap's implementation
  std::string baseline;              // the speed-up's baseline
  std::string note;                  // what FlashLab's figure does differently from the lab's, "" when nothing
};

struct Lab {
  std::string name;                  // "torch-vs-flash2": what it measures, not a file name
  std::string title;                 // the report's title
  std::string measured;              // what the lab measured, on what, in one paragraph
  std::vector<std::string> results;  // results files read without --results, relative to the assets folder
  std::vector<LabFigure> figures;    // in the lab's order
  std::vector<std::string> differences;  // where FlashLab's numbers differ from the lab's, and why
};

// The sweeps the lab's figures draw, each once, in order.
std::vector<std::string> lab_sweeps(const Lab& lab);

// The labs of assets/labs, by name.
std::vector<std::string> lab_names();
// A lab by name (assets/labs/NAME.json) or path. Throws std::runtime_error with
// one line: an unknown name lists the known ones ("did you mean …" when one is close).
Lab load_lab(const std::string& name_or_path);
Lab parse_lab(const std::string& text, const std::string& origin);

}  // namespace flashlab::analysis
