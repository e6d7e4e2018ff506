// FlashLab's plot widget, in ImPlot's call shape: begin a plot, set up axes,
// add series, end. The data (a ChartSpec) stays with the caller; the widget
// keeps only view state per plot id: zoom/pan ranges and the hover read-out.
//
//   if (plot::BeginPlot("roofline", spec, size, scale)) {
//     plot::SetupAxisLimits(true, 1, 1000);   // optional
//     plot::PlotSeries(cursor_marker);         // optional extras, drawn on top
//     plot::EndPlot();
//   }
//
// Mouse: wheel zooms about the pointer (Shift: x only, Ctrl: y only), drag
// pans, double-click fits the data again, hover shows the nearest point.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart_render.hpp"

namespace flashlab::gui::plot {

bool BeginPlot(const char* id, const analysis::ChartSpec& spec, ImVec2 size, double ui_scale);
void SetupAxisLimits(bool x_axis, double lo, double hi);
void PlotSeries(const analysis::Series& extra);
// Labels holding one of `texts` (a reference line's name, a point's) placed
// before the others: a lecture's scene keeps what it says its chart shows.
void NameFirst(const std::vector<std::string>& texts);
// Draws and handles input; returns what is under the pointer.
analysis::ChartHit EndPlot();

// The whole call sequence for a spec as it is.
analysis::ChartHit Chart(const char* id, const analysis::ChartSpec& spec, ImVec2 size, double ui_scale);

// Forget zoom/pan of a plot (after the data changed shape).
void ResetView(const char* id);
bool IsZoomed(const char* id);

}  // namespace flashlab::gui::plot
