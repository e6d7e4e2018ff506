#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "imgui_canvas.hpp"
#include "theme.hpp"

namespace flashlab::gui::plot {

namespace {

struct View {
  std::optional<analysis::Range> x, y;  // zoomed ranges; unset: auto-fit
};

// The widget's context, like ImPlot's: view state by id and the plot being built.
struct Context {
  std::unordered_map<ImGuiID, View> views;
  const analysis::ChartSpec* spec = nullptr;
  ImGuiID id = 0;
  ImVec2 pos, size;
  double scale = 1;
  std::optional<analysis::Range> forced_x, forced_y;
  analysis::RenderExtras extras;
};

Context& ctx() {
  static Context c;  // widget-internal storage, as ImGui's own
  return c;
}

analysis::Range zoom(analysis::Range r, analysis::Scale s, double at_fraction, double factor) {
  const double f = std::clamp(at_fraction, 0.0, 1.0);
  if (s == analysis::Scale::linear) {
    const double at = r.lo + f * (r.hi - r.lo);
    return {at - (at - r.lo) * factor, at + (r.hi - at) * factor};
  }
  const double llo = std::log(r.lo), lhi = std::log(r.hi), at = llo + f * (lhi - llo);
  return {std::exp(at - (at - llo) * factor), std::exp(at + (lhi - at) * factor)};
}

analysis::Range pan(analysis::Range r, analysis::Scale s, double shift_fraction) {
  if (s == analysis::Scale::linear) {
    const double d = shift_fraction * (r.hi - r.lo);
    return {r.lo + d, r.hi + d};
  }
  const double k = std::pow(r.hi / r.lo, shift_fraction);
  return {r.lo * k, r.hi * k};
}

bool sane(const analysis::Range& r, analysis::Scale s) {
  if (!r.valid()) return false;
  if (s != analysis::Scale::linear && (r.lo <= 1e-300 || r.hi / r.lo > 1e300)) return false;
  return std::fabs(r.hi) < 1e300 && std::fabs(r.lo) < 1e300;
}

ImU32 im(analysis::Color c) { return IM_COL32(c.r, c.g, c.b, c.a); }
analysis::Color from_im(ImU32 c, std::uint8_t alpha) {
  return {static_cast<std::uint8_t>((c >> IM_COL32_R_SHIFT) & 0xFF), static_cast<std::uint8_t>((c >> IM_COL32_G_SHIFT) & 0xFF),
          static_cast<std::uint8_t>((c >> IM_COL32_B_SHIFT) & 0xFF), alpha};
}

// A chart's colour at the lightness the theme needs: its lines and markers
// 3 : 1 against the plot, and `labelled` (the renderer writes text in it)
// its text 4.5 : 1 — on a dark plot that text is the colour halfway to white
// (chart_render's ink), on a light one the colour itself. The hue stays the
// implementations table's.
analysis::Color readable(analysis::Color c, ImU32 ground, bool dark, bool labelled) {
  ImU32 out = readable_on(im(c), ground, kMarkContrastWithMargin);
  if (labelled) {
    const auto label = [&](ImU32 x) {
      if (!dark) return x;
      const auto half = [](unsigned v) { return v + (255 - v) / 2; };
      return IM_COL32(half((x >> IM_COL32_R_SHIFT) & 0xFF), half((x >> IM_COL32_G_SHIFT) & 0xFF),
                      half((x >> IM_COL32_B_SHIFT) & 0xFF), 255);
    };
    for (double ratio = kMarkContrastWithMargin; contrast_ratio(label(out), ground) < kTextContrastWithMargin && ratio < 21;
         ratio += 0.25)
      out = readable_on(im(c), ground, ratio);
  }
  return from_im(out, c.a);
}

bool has_text(const std::vector<std::string>& labels) {
  return std::any_of(labels.begin(), labels.end(), [](const std::string& l) { return !l.empty(); });
}

// The spec with every colour the renderer draws data or names in made
// readable on `ground` (the window's colour, under a transparent plot).
analysis::ChartSpec readable_spec(const analysis::ChartSpec& spec, ImU32 ground, bool dark) {
  analysis::ChartSpec c = spec;
  for (analysis::Series& s : c.series) s.color = readable(s.color, ground, dark, has_text(s.point_labels));
  for (analysis::RefLine& r : c.ref_lines) r.color = readable(r.color, ground, dark, !r.label.empty());
  for (analysis::Marker& m : c.markers) m.color = readable(m.color, ground, dark, !m.label.empty());
  for (analysis::Annotation& a : c.annotations) a.color = readable(a.color, ground, dark, true);
  return c;
}

}  // namespace

bool BeginPlot(const char* id, const analysis::ChartSpec& spec, ImVec2 size, double ui_scale) {
  Context& c = ctx();
  c.id = ImGui::GetID(id);
  c.spec = &spec;
  c.scale = ui_scale;
  c.forced_x.reset();
  c.forced_y.reset();
  c.extras.series.clear();
  c.extras.highlight_series = -1;
  c.extras.named_first.clear();
  c.pos = ImGui::GetCursorScreenPos();
  c.size = ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f));
  return !ImGui::IsRectVisible(c.size) ? (ImGui::Dummy(c.size), false) : true;
}

void SetupAxisLimits(bool x_axis, double lo, double hi) {
  (x_axis ? ctx().forced_x : ctx().forced_y) = analysis::Range{lo, hi};
}

void PlotSeries(const analysis::Series& extra) { ctx().extras.series.push_back(&extra); }

void NameFirst(const std::vector<std::string>& texts) { ctx().extras.named_first = texts; }

analysis::ChartHit EndPlot() {
  Context& c = ctx();
  const bool light = light_theme();
  // The light theme: the exporters' style (dark text and grey grid on white).
  analysis::ChartStyle style = light ? analysis::ChartStyle{} : analysis::dark_chart_style(c.scale);
  // Marks and labels lie on the window's colour and cross the grid: readable
  // on the minor grid's colour, the nearer of the two to theirs.
  const ImU32 ground = IM_COL32(style.grid_minor.r, style.grid_minor.g, style.grid_minor.b, 255);
  const analysis::ChartSpec spec = readable_spec(*c.spec, ground, !light);
  std::vector<analysis::Series> extras;
  for (const analysis::Series* s : c.extras.series)
    if (s) {
      extras.push_back(*s);
      extras.back().color = readable(s->color, ground, !light, has_text(s->point_labels));
    }
  c.extras.series.clear();
  for (const analysis::Series& s : extras) c.extras.series.push_back(&s);
  View& view = c.views[c.id];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiCanvas canvas(dl, ImGui::GetFont());
  style.scale = c.scale;
  // No fills under the chart: the window's colour shows through, and llvmpipe
  // does not shade a few hundred thousand pixels a frame for a slight tint.
  // Transparent, its colour still the window's: the renderer reads it to tell
  // a dark background (series-coloured text lightened) from a light one, and
  // the legend's box is filled with it.
  style.draw_background = false;
  const ImVec4 bg = color_background();
  style.plot_background = {static_cast<std::uint8_t>(bg.x * 255), static_cast<std::uint8_t>(bg.y * 255),
                           static_cast<std::uint8_t>(bg.z * 255), 0};
  // The atlas is baked at 15 px × scale: chart text at that size stays sharp.
  style.font_px = ImGui::GetFontSize() / c.scale * 0.93;
  style.title_px = ImGui::GetFontSize() / c.scale * 1.3;  // a title reads as one: clearly over the body's size
  canvas.set_decor(style.plot_background, style.grid, style.grid_minor);
  const analysis::Rect outer{c.pos.x, c.pos.y, c.size.x, c.size.y};

  ImGui::PushID(static_cast<int>(c.id));
  ImGui::InvisibleButton("##plot", c.size, ImGuiButtonFlags_MouseButtonLeft);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImGui::PopID();

  auto xr = c.forced_x ? c.forced_x : view.x;
  auto yr = c.forced_y ? c.forced_y : view.y;
  analysis::ChartLayout layout = analysis::layout_chart(spec, canvas, outer, style, xr, yr);

  // Interaction, in the plot area only.
  const ImGuiIO& io = ImGui::GetIO();
  const analysis::Point mouse{io.MousePos.x, io.MousePos.y};
  const bool in_plot = hovered && layout.plot.contains(mouse) && spec.kind == analysis::ChartKind::xy;
  bool changed = false;
  if (in_plot && io.MouseWheel != 0) {
    const double factor = std::pow(0.85, static_cast<double>(io.MouseWheel));
    const double fx = (mouse.x - layout.plot.x) / layout.plot.w, fy = (layout.plot.bottom() - mouse.y) / layout.plot.h;
    analysis::Range nx = layout.x, ny = layout.y;
    if (!io.KeyCtrl) nx = zoom(layout.x, layout.sx, fx, factor);
    if (!io.KeyShift) ny = zoom(layout.y, layout.sy, fy, factor);
    if (sane(nx, layout.sx) && sane(ny, layout.sy)) {
      view.x = nx;
      view.y = ny;
      changed = true;
    }
  }
  if (active && spec.kind == analysis::ChartKind::xy && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0) &&
      ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f)) {
    const analysis::Range nx = pan(layout.x, layout.sx, -io.MouseDelta.x / layout.plot.w);
    const analysis::Range ny = pan(layout.y, layout.sy, io.MouseDelta.y / layout.plot.h);
    if (sane(nx, layout.sx) && sane(ny, layout.sy)) {
      view.x = nx;
      view.y = ny;
      changed = true;
    }
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    view = View{};
    changed = true;
  }
  if (changed) {
    xr = c.forced_x ? c.forced_x : view.x;
    yr = c.forced_y ? c.forced_y : view.y;
    layout = analysis::layout_chart(spec, canvas, outer, style, xr, yr);
  }

  analysis::ChartHit hit;
  if (hovered) hit = analysis::hit_test(spec, layout, mouse, 10 * c.scale);
  c.extras.highlight_series = hit.series;
  analysis::render_chart(spec, canvas, layout, style, &c.extras);
  if (view.x || view.y) {
    const char* msg = "zoomed: double-click to fit";
    const ImVec2 ts = ImGui::CalcTextSize(msg);
    dl->AddText(ImVec2(static_cast<float>(layout.plot.right()) - ts.x - 6, static_cast<float>(layout.plot.y) + 4),
                light ? IM_COL32(150, 90, 0, 255) : IM_COL32(230, 200, 90, 255), msg);
  }
  if (hit.hit()) {
    if (hit.series >= 0 && spec.kind == analysis::ChartKind::xy)
      dl->AddCircle(ImVec2(static_cast<float>(hit.at.x), static_cast<float>(hit.at.y)), 7 * static_cast<float>(c.scale),
                    light ? IM_COL32(0, 0, 0, 230) : IM_COL32(255, 255, 255, 230), 16, 2);
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(hit.text.c_str());
    ImGui::EndTooltip();
  } else if (in_plot && spec.kind == analysis::ChartKind::xy && !spec.empty()) {
    const analysis::Point d = layout.to_data(mouse);
    const std::string r = (spec.x.label.empty() ? "x" : spec.x.label) + " " + analysis::format_tick(d.x, spec.x.format) + ", " +
                          analysis::format_tick(d.y, spec.y.format);
    // Beside the pointer, as a point's values are: printed into the plot it
    // would lie over the data and the labels there.
    ImGui::BeginTooltip();
    ImGui::TextColored(color_dim(), "%s", r.c_str());
    ImGui::EndTooltip();
  }
  c.spec = nullptr;
  return hit;
}

analysis::ChartHit Chart(const char* id, const analysis::ChartSpec& spec, ImVec2 size, double ui_scale) {
  if (!BeginPlot(id, spec, size, ui_scale)) return {};
  return EndPlot();
}

void ResetView(const char* id) { ctx().views.erase(ImGui::GetID(id)); }

bool IsZoomed(const char* id) {
  auto it = ctx().views.find(ImGui::GetID(id));
  return it != ctx().views.end() && (it->second.x || it->second.y);
}

}  // namespace flashlab::gui::plot
