// Fonts (DejaVu, baked at the UI scale so text stays sharp on a projector),
// the dark theme, and the colours the views share.
#pragma once

#include <imgui.h>

#include <string>

#include "flashlab/sim/types.hpp"

namespace flashlab::gui {

struct Fonts {
  ImFont* ui = nullptr;    // DejaVu Sans
  ImFont* mono = nullptr;  // DejaVu Sans Mono (pseudocode)
  ImFont* big = nullptr;   // headings
};

// Rebuilds the atlas and style for `scale` (call between frames). Returns a
// note when DejaVu is missing (ImGui's built-in font is used instead).
std::string load_fonts(Fonts& fonts, double scale);
void apply_theme(double scale);
const Fonts& fonts();

constexpr float kBaseFontPx = 15.0f;

ImU32 tensor_color(sim::Tensor t, int alpha = 255);
// The tiling view's finished blocks: a neutral grey where every tensor (and
// the current block's yellow) has a hue, so "done" never reads as "Q".
ImU32 finished_block_color(int alpha = 255);
ImVec4 color_error();
ImVec4 color_note();
ImVec4 color_good();
ImVec4 color_dim();

}  // namespace flashlab::gui
