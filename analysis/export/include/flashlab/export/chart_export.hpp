// A ChartSpec to a file: SVG, PNG, PDF (cairo) or CSV, chosen by extension and
// written atomically (a failed export leaves no half-written file behind).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/charts/chart_render.hpp"

namespace flashlab::analysis {

enum class ExportFormat { svg, png, pdf, csv };
std::string_view to_string(ExportFormat f);
// ".svg", ".png", ".pdf", ".csv" (case-insensitive); nullopt otherwise.
std::optional<ExportFormat> export_format_of(const std::string& path);

struct ExportOptions {
  int width_px = 1200, height_px = 800;  // PNG pixels; SVG/PDF keep the proportions
  double scale = 0;                      // text and line scale; 0: from the width (1200 px -> 1.25)
  bool dark = false;                     // the GUI's dark theme instead of white paper
};

// False when this build has no cairo: PNG and PDF are then unavailable.
bool have_cairo();

std::string render_svg(const ChartSpec& c, const ExportOptions& o = {});
// Throw std::runtime_error when cairo is missing or fails.
std::string render_png(const ChartSpec& c, const ExportOptions& o = {});
std::string render_pdf(const ChartSpec& c, const ExportOptions& o = {});

// Writes the chart in the format of the path's extension. Throws
// std::runtime_error naming the path and the reason (unknown extension, a
// folder that does not exist, a size out of range, no cairo for PNG/PDF).
void export_chart(const ChartSpec& c, const std::string& path, const ExportOptions& o = {});

// The layout check of a chart at the export's size: the chart laid out and
// drawn as render_png would, with the exporters' font metrics, and what reads
// wrong in it (layout_problems: text over text or over a data point, outside
// the chart, cut short). Empty when the chart reads.
std::vector<std::string> chart_layout_problems(const ChartSpec& c, const ExportOptions& o = {});

// Text metrics of the exporters' font (DejaVu Sans), for layouts made outside a
// canvas; an approximation when cairo is missing.
Point measure_text_export(const std::string& s, double size_px);

}  // namespace flashlab::analysis
