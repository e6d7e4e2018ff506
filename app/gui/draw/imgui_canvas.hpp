// analysis::Canvas on an ImGui draw list: the plot widget and the tiling view
// draw through it, so charts on screen and in exported files share one layout.
#pragma once

#include <imgui.h>

#include <vector>

#include "flashlab/analysis/charts/chart_render.hpp"

namespace flashlab::gui {

// Dash patterns as repeating 1-D textures (set up once with an OpenGL context,
// see app.cpp): a dashed line is one textured quad, not one quad per dash.
struct DashTextures {
  ImTextureID dashed = nullptr, dotted = nullptr;
};
void set_dash_textures(DashTextures t);

class ImGuiCanvas : public analysis::Canvas {
 public:
  // `base_font_px`: the size the font atlas was baked at (text drawn near it stays sharp).
  ImGuiCanvas(ImDrawList* dl, ImFont* font) : dl_(dl), font_(font) {}
  void line(analysis::Point a, analysis::Point b, analysis::Color c, double width, analysis::Dash dash) override;
  void polyline(const std::vector<analysis::Point>& pts, analysis::Color c, double width, analysis::Dash dash) override;
  void rect_filled(analysis::Rect r, analysis::Color c) override;
  void rect_outline(analysis::Rect r, analysis::Color c, double width) override;
  void polygon_filled(const std::vector<analysis::Point>& pts, analysis::Color c) override;
  void circle_filled(analysis::Point center, double radius, analysis::Color c) override;
  void text(analysis::Point p, const std::string& s, double size_px, analysis::Color c, analysis::HAlign h,
            analysis::VAlign v, bool vertical) override;
  analysis::Point measure(const std::string& s, double size_px) override;
  void push_clip(analysis::Rect r) override;
  void pop_clip() override;

  // The chart's own background and grid: never a data mark (drawn_marks.hpp).
  void set_decor(analysis::Color background, analysis::Color grid, analysis::Color grid_minor) {
    decor_ = {background, grid, grid_minor};
  }

 private:
  bool is_decor(analysis::Color c) const;
  ImDrawList* dl_;
  ImFont* font_;
  int clip_depth_ = 0;  // inside the plot's clip: the data (a filled rectangle there is a bar or a marker)
  std::vector<analysis::Color> decor_;
  std::vector<ImVec2> scratch_;  // reused: no allocation per polyline
};

inline ImU32 to_imu32(analysis::Color c) { return IM_COL32(c.r, c.g, c.b, c.a); }

}  // namespace flashlab::gui
