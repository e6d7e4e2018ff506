#include "stage_effects.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace flashlab::gui {

namespace {

void magnify_list(ImDrawList* dl, ImVec2 c, float f, const ImVec4& b) {
  for (ImDrawVert& v : dl->VtxBuffer) v.pos = ImVec2(c.x + (v.pos.x - c.x) * f, c.y + (v.pos.y - c.y) * f);
  for (ImDrawCmd& cmd : dl->CmdBuffer) {
    ImVec4& r = cmd.ClipRect;
    r = ImVec4(std::max(b.x, c.x + (r.x - c.x) * f), std::max(b.y, c.y + (r.y - c.y) * f),
               std::min(b.z, c.x + (r.z - c.x) * f), std::min(b.w, c.y + (r.w - c.y) * f));
    // An empty rectangle draws nothing (the OpenGL backend skips it).
    if (r.z < r.x) r.z = r.x;
    if (r.w < r.y) r.w = r.y;
  }
}

void magnify_tree(ImGuiWindow* w, ImVec2 c, float f, const ImVec4& b) {
  magnify_list(w->DrawList, c, f, b);
  for (ImGuiWindow* child : w->DC.ChildWindows) magnify_tree(child, c, f, b);
}

}  // namespace

void magnify_drawn(ImGuiWindow* window, ImVec2 centre, float factor, const ImVec4& bounds) {
  if (window == nullptr || !(factor > 0) || !std::isfinite(centre.x) || !std::isfinite(centre.y)) return;
  const ImVec2 c(std::clamp(centre.x, bounds.x, std::max(bounds.x, bounds.z)),
                 std::clamp(centre.y, bounds.y, std::max(bounds.y, bounds.w)));
  magnify_tree(window, c, factor, bounds);
}

void draw_pointer_ring(ImDrawList* dl, ImVec2 at, float scale) {
  const float r = 26 * scale;
  // Orange-red: seen on the dark theme and on the light one alike.
  dl->AddCircleFilled(at, r, IM_COL32(255, 90, 40, 55), 48);
  dl->AddCircle(at, r, IM_COL32(235, 70, 30, 220), 48, 3 * scale);
  dl->AddCircleFilled(at, 3 * scale, IM_COL32(235, 70, 30, 230), 12);
}

std::string clock_text(double started_s, double now_s) {
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  const long e = std::max(0L, static_cast<long>(now_s - started_s));
  char buf[64];
  if (e >= 3600)
    std::snprintf(buf, sizeof buf, "%02d:%02d · %ld:%02ld:%02ld in", local.tm_hour, local.tm_min, e / 3600, e / 60 % 60, e % 60);
  else
    std::snprintf(buf, sizeof buf, "%02d:%02d · %ld:%02ld in", local.tm_hour, local.tm_min, e / 60, e % 60);
  return buf;
}

}  // namespace flashlab::gui
