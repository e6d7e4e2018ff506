// Text in the pseudocode's notation, drawn as the paper sets it: sub- and
// superscripts smaller and shifted, tildes over their letter, ℝ (the runs
// come from analysis::parse_math). Wrapped like ImGui::TextWrapped, with a
// line height that does not depend on the content, so a panel does not move
// when the line shown changes.
#pragma once

#include <imgui.h>

#include <string>

namespace flashlab::gui {

// The height one line of math text takes in the current font.
float math_line_height();

// Size of `text` wrapped at `wrap_width` (≤ 0: the content region's width).
ImVec2 math_text_size(const std::string& text, float wrap_width = 0);

// Draws `text` at the cursor, wrapped at `wrap_width` (≤ 0: the content
// region's width), and advances the cursor past it. Returns its size.
ImVec2 math_text(const std::string& text, ImU32 color, float wrap_width = 0);
ImVec2 math_text(const std::string& text, const ImVec4& color, float wrap_width = 0);

// One line of the notation drawn into a draw list at `pos` (top-left), no
// wrapping: labels drawn over a view (the tiling's corner names). Its size.
ImVec2 math_label_size(const std::string& text);
void math_label(ImDrawList* dl, ImVec2 pos, const std::string& text, ImU32 color);

// The same, formatted with printf first.
ImVec2 math_textf(const ImVec4& color, const char* fmt, ...) IM_FMTARGS(2);

}  // namespace flashlab::gui
