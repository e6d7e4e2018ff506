#include "imgui_canvas.hpp"

#include <algorithm>
#include <cmath>

#include "drawn_marks.hpp"

namespace flashlab::gui {

namespace {

ImVec2 v2(analysis::Point p) { return ImVec2(static_cast<float>(p.x), static_cast<float>(p.y)); }

// Dashes drawn as segments along the path (ImGui has no dash pattern).
// `phase` is the distance along the whole polyline, so dashes run on across
// corners; dash k covers [k·period, k·period + on).
void dashed_segment(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float w, analysis::Dash dash, float& phase) {
  const float on = dash == analysis::Dash::dashed ? 6 * w : 1.2f * w;
  const float period = on + (dash == analysis::Dash::dashed ? 4 * w : 2.5f * w);
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  if (!(len > 0) || !(period > 0)) return;
  const float ux = dx / len, uy = dy / len;
  const float s0 = phase, s1 = phase + len;
  int guard = 0;
  for (double k = std::floor(s0 / period); k * period < s1 && guard++ < 20000; k += 1) {
    const float d0 = std::max(static_cast<float>(k * period), s0) - s0;
    const float d1 = std::min(static_cast<float>(k * period + on), s1) - s0;
    if (d1 > d0) dl->AddLine(ImVec2(a.x + ux * d0, a.y + uy * d0), ImVec2(a.x + ux * d1, a.y + uy * d1), col, w);
  }
  phase = s1;
}

}  // namespace

namespace {
DashTextures g_dash;

// One quad along a→b, its texture coordinate u running in dash periods.
bool textured_dash(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float w, analysis::Dash dash, float& phase) {
  const ImTextureID tex = dash == analysis::Dash::dashed ? g_dash.dashed : g_dash.dotted;
  if (!tex) return false;
  const float period = (dash == analysis::Dash::dashed ? 10.0f : 3.7f) * w;
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  if (!(len > 0) || !(period > 0)) return true;
  const float nx = -dy / len * w * 0.5f, ny = dx / len * w * 0.5f;
  const float u0 = phase / period, u1 = (phase + len) / period;
  dl->AddImageQuad(tex, ImVec2(a.x + nx, a.y + ny), ImVec2(b.x + nx, b.y + ny), ImVec2(b.x - nx, b.y - ny),
                   ImVec2(a.x - nx, a.y - ny), ImVec2(u0, 0), ImVec2(u1, 0), ImVec2(u1, 1), ImVec2(u0, 1), col);
  phase += len;
  return true;
}
}  // namespace

void set_dash_textures(DashTextures t) { g_dash = t; }

bool ImGuiCanvas::is_decor(analysis::Color c) const {
  return std::any_of(decor_.begin(), decor_.end(),
                     [&](const analysis::Color& d) { return d.r == c.r && d.g == c.g && d.b == c.b; });
}

void ImGuiCanvas::line(analysis::Point a, analysis::Point b, analysis::Color c, double width, analysis::Dash dash) {
  const int first = dl_->VtxBuffer.Size;
  if (dash == analysis::Dash::solid) {
    dl_->AddLine(v2(a), v2(b), to_imu32(c), static_cast<float>(width));
  } else {
    float phase = 0;
    if (!textured_dash(dl_, v2(a), v2(b), to_imu32(c), std::max(1.0f, static_cast<float>(width)), dash, phase))
      dashed_segment(dl_, v2(a), v2(b), to_imu32(c), static_cast<float>(width), dash, phase);
  }
  if (recording_marks() && !is_decor(c)) {
    const ImVec2 ends[2] = {v2(a), v2(b)};
    mark_line(dl_, first, ends, 2, static_cast<float>(width), "a chart's line");
  }
}

void ImGuiCanvas::polyline(const std::vector<analysis::Point>& pts, analysis::Color c, double width, analysis::Dash dash) {
  if (pts.size() < 2) return;
  const int first = dl_->VtxBuffer.Size;
  scratch_.resize(pts.size());
  for (size_t k = 0; k < pts.size(); ++k) scratch_[k] = v2(pts[k]);
  if (dash == analysis::Dash::solid) {
    dl_->AddPolyline(scratch_.data(), static_cast<int>(scratch_.size()), to_imu32(c), ImDrawFlags_None,
                     static_cast<float>(width));
  } else {
    float phase = 0;
    for (size_t k = 1; k < pts.size(); ++k)
      if (!textured_dash(dl_, scratch_[k - 1], scratch_[k], to_imu32(c), std::max(1.0f, static_cast<float>(width)), dash, phase))
        dashed_segment(dl_, scratch_[k - 1], scratch_[k], to_imu32(c), static_cast<float>(width), dash, phase);
  }
  if (recording_marks() && !is_decor(c))
    mark_line(dl_, first, scratch_.data(), static_cast<int>(scratch_.size()), static_cast<float>(width), "a chart's line");
}

void ImGuiCanvas::rect_filled(analysis::Rect r, analysis::Color c) {
  const int first = dl_->VtxBuffer.Size;
  dl_->AddRectFilled(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)),
                     ImVec2(static_cast<float>(r.right()), static_cast<float>(r.bottom())), to_imu32(c));
  if (recording_marks() && clip_depth_ > 0 && !is_decor(c))
    mark_area(dl_, first, ImVec4(static_cast<float>(r.x), static_cast<float>(r.y), static_cast<float>(r.right()),
                                 static_cast<float>(r.bottom())),
              "a chart's bar or marker");
}

void ImGuiCanvas::rect_outline(analysis::Rect r, analysis::Color c, double width) {
  dl_->AddRect(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)),
               ImVec2(static_cast<float>(r.right()), static_cast<float>(r.bottom())), to_imu32(c), 0, 0,
               static_cast<float>(width));
}

void ImGuiCanvas::polygon_filled(const std::vector<analysis::Point>& pts, analysis::Color c) {
  if (pts.size() < 3) return;
  const int first = dl_->VtxBuffer.Size;
  scratch_.resize(pts.size());
  ImVec4 box(1e30f, 1e30f, -1e30f, -1e30f);
  for (size_t k = 0; k < pts.size(); ++k) {
    scratch_[k] = v2(pts[k]);
    box = ImVec4(std::min(box.x, scratch_[k].x), std::min(box.y, scratch_[k].y), std::max(box.z, scratch_[k].x),
                 std::max(box.w, scratch_[k].y));
  }
  dl_->AddConvexPolyFilled(scratch_.data(), static_cast<int>(scratch_.size()), to_imu32(c));
  if (recording_marks() && !is_decor(c)) mark_area(dl_, first, box, "a chart's marker");
}

void ImGuiCanvas::circle_filled(analysis::Point p, double radius, analysis::Color c) {
  const int first = dl_->VtxBuffer.Size;
  dl_->AddCircleFilled(v2(p), static_cast<float>(radius), to_imu32(c), 12);
  if (recording_marks() && !is_decor(c)) {
    const float r = static_cast<float>(radius);
    mark_area(dl_, first, ImVec4(v2(p).x - r, v2(p).y - r, v2(p).x + r, v2(p).y + r), "a chart's marker");
  }
}

analysis::Point ImGuiCanvas::measure(const std::string& s, double size_px) {
  const ImVec2 sz = font_->CalcTextSizeA(static_cast<float>(size_px), 1e9f, 0.0f, s.c_str(), s.c_str() + s.size());
  return {sz.x, sz.y};
}

void ImGuiCanvas::text(analysis::Point p, const std::string& s, double size_px, analysis::Color c, analysis::HAlign h,
                       analysis::VAlign v, bool vertical) {
  if (s.empty()) return;
  const analysis::Point sz = measure(s, size_px);
  const double dx = h == analysis::HAlign::left ? 0 : h == analysis::HAlign::center ? -sz.x / 2 : -sz.x;
  const double dy = v == analysis::VAlign::top ? 0 : v == analysis::VAlign::middle ? -sz.y / 2 : -sz.y;
  if (!vertical) {
    dl_->AddText(font_, static_cast<float>(size_px), ImVec2(static_cast<float>(p.x + dx), static_cast<float>(p.y + dy)),
                 to_imu32(c), s.c_str(), s.c_str() + s.size());
    return;
  }
  // Rotate the glyph quads 90° counter-clockwise about p: the text reads upwards.
  // AddText culls glyphs against the clip rectangle before the rotation, so
  // the unrotated text is laid out at the screen's top-left corner with
  // clipping off (laid out where it will be drawn, its start could fall left
  // of the screen and be culled), then moved into place.
  const int first = dl_->VtxBuffer.Size;
  dl_->PushClipRectFullScreen();
  const ImVec2 origin(0, 0);
  dl_->AddText(font_, static_cast<float>(size_px), origin, to_imu32(c), s.c_str(), s.c_str() + s.size());
  for (int k = first; k < dl_->VtxBuffer.Size; ++k) {
    ImVec2& q = dl_->VtxBuffer[k].pos;
    const float rx = q.x - origin.x + static_cast<float>(dx), ry = q.y - origin.y + static_cast<float>(dy);
    q = ImVec2(static_cast<float>(p.x) + ry, static_cast<float>(p.y) - rx);
  }
  dl_->PopClipRect();
}

void ImGuiCanvas::push_clip(analysis::Rect r) {
  dl_->PushClipRect(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)),
                    ImVec2(static_cast<float>(r.right()), static_cast<float>(r.bottom())), true);
  ++clip_depth_;
}

void ImGuiCanvas::pop_clip() {
  dl_->PopClipRect();
  --clip_depth_;
}

}  // namespace flashlab::gui
