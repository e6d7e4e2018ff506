// analysis::Canvas on an ImGui draw list: the plot widget and the tiling view
// draw through it, so charts on screen and in exported files share one layout.
#pragma once

#include <imgui.h>

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

 private:
  ImDrawList* dl_;
  ImFont* font_;
  std::vector<ImVec2> scratch_;  // reused: no allocation per polyline
};

inline ImU32 to_imu32(analysis::Color c) { return IM_COL32(c.r, c.g, c.b, c.a); }

}  // namespace flashlab::gui
