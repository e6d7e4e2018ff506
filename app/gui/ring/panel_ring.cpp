// The multi-GPU view right of the controls: the ring's timeline per GPU with
// its totals beside it, over the step-through. On a presenter's stage the
// same parts, one or both (presenter_stages.cpp).
#include <imgui.h>

#include <algorithm>

#include "draw/math_view.hpp"
#include "panels/panels.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

// Timeline and totals side by side in `size`.
void timeline_row(AppState& s, ImVec2 size) {
  const float scale = static_cast<float>(s.view.ui_scale);
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float totals_w = std::clamp(size.x * 0.3f, 240 * scale, 560 * scale);
  if (size.x - totals_w < 300 * scale) {  // too narrow for both: the timeline alone
    draw_ring_timeline(s, size);
    return;
  }
  draw_ring_timeline(s, ImVec2(size.x - totals_w - spacing, size.y));
  ImGui::SameLine();
  draw_ring_totals(s, ImVec2(totals_w, size.y));
}

// The reasons in a scrolled region of their own: an unknown link's message names
// every link preset, and at a projector's UI scale the list outgrows the stage.
void errors(const AppState& s) {
  ImGui::BeginChild("ring-errors", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  const float w = ImGui::GetContentRegionAvail().x;
  math_text("Nothing to draw: the ring's inputs are invalid.", color_error(), w);
  for (const std::string& e : s.ring.model.errors) math_text("✕ " + e, color_error(), w);
  ImGui::EndChild();
}

}  // namespace

void panel_ring(AppState& s) {
  if (!s.ring.model.valid) {
    errors(s);
    return;
  }
  if (s.view.hall_layout && !s.presenter.on) {
    // One part at a time, as large as a presenter's stage: the timeline with
    // its totals, or the step-through with every GPU named.
    if (ImGui::RadioButton("timeline", !s.view.hall_ring_step)) s.view.hall_ring_step = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("step-through", s.view.hall_ring_step)) s.view.hall_ring_step = true;
    ImGui::SameLine();
    ImGui::TextColored(color_dim(), "one view at a time at this UI scale");
    ring_stage(s, s.view.hall_ring_step ? RingParts::step : RingParts::timeline);
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float share = s.ring.model.lanes.size() > 1 ? 0.62f : 0.55f;
  // No taller than its rows need at a comfortable height: a few GPUs leave
  // the step-through the rest.
  const float wanted = std::max(ring_timeline_wanted_height(s, avail.x * 0.7f), ring_totals_wanted_height(s));
  const float top = std::floor(std::min((avail.y - spacing) * share, wanted));
  timeline_row(s, ImVec2(avail.x, top));
  ImGui::Separator();
  draw_ring_step(s, ImVec2(avail.x, std::max(40.0f, ImGui::GetContentRegionAvail().y)));
}

void ring_stage(AppState& s, RingParts parts) {
  if (!s.ring.model.valid) {
    errors(s);
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  switch (parts) {
    case RingParts::timeline: timeline_row(s, avail); break;
    case RingParts::step: draw_ring_step(s, avail); break;
    case RingParts::timeline_and_step: panel_ring(s); break;
  }
}

}  // namespace flashlab::gui
