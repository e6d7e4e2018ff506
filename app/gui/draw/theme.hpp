// Fonts (DejaVu, baked at the UI scale so text stays sharp on a projector),
// the dark and light themes, and the colours the views share.
#pragma once

#include <imgui.h>

#include <optional>
#include <string>
#include <string_view>

#include "state/app_state.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::gui {

struct Fonts {
  ImFont* ui = nullptr;    // DejaVu Sans
  ImFont* mono = nullptr;  // DejaVu Sans Mono (pseudocode)
  ImFont* big = nullptr;   // headings
};

// Rebuilds the atlas and style for `scale` (call between frames). Returns a
// note when DejaVu is missing (ImGui's built-in font is used instead).
std::string load_fonts(Fonts& fonts, double scale);
// ImGui's style for the current theme at `scale` (call between frames).
void apply_theme(double scale);
const Fonts& fonts();

// The theme the colours below and apply_theme follow (the app sets it from
// ViewState::theme between frames).
void set_theme(Theme t);
Theme current_theme();
inline bool light_theme() { return current_theme() == Theme::light; }
std::optional<Theme> parse_theme(std::string_view name);  // "dark" or "light"
const char* theme_name(Theme t);
// What the window is cleared to: WindowBg of the theme (the panels draw no background).
ImVec4 color_background();

constexpr float kBaseFontPx = 15.0f;

// WCAG's contrast ratio of two colours (alpha ignored): 1 to 21. What the
// colours below are held to, with a margin for rounding to bytes: text 4.5 : 1
// against its background, lines and markers 3 : 1 (checks/contrast_check.hpp
// holds the frame as drawn to the same).
double contrast_ratio(ImU32 a, ImU32 b);
constexpr double kTextContrastWithMargin = 4.6, kMarkContrastWithMargin = 3.1;
// `c`'s hue and saturation at the lightness nearest its own that stands
// `ratio` : 1 against `background` (darker on a light one, lighter on a dark
// one); `c` itself when it does already. Alpha kept.
ImU32 readable_on(ImU32 c, ImU32 background, double ratio);
// The ground the views draw their strips and grids on, as the theme shows it.
ImU32 view_ground();

// A tensor's hue, at a lightness that stands out 3 : 1 on the view's ground
// in the current theme (a tile, a bar); tensor_ink: as text, 4.5 : 1 on the
// window's background.
ImU32 tensor_color(sim::Tensor t, int alpha = 255);
ImU32 tensor_ink(sim::Tensor t);
// The tiling view's finished blocks: a neutral grey where every tensor (and
// the current block's yellow) has a hue, so "done" never reads as "Q"; dark
// enough that the current block's outline stands out on it.
ImU32 finished_block_color(int alpha = 255);
// The causal mask's diagonal over the tiling grid.
ImU32 causal_diagonal_color();
// The current block's outline: light on the dark theme's grid, dark on the light one's.
ImU32 current_block_outline();
ImVec4 color_error();
ImVec4 color_note();
ImVec4 color_good();
ImVec4 color_dim();
ImVec4 color_warning();  // orange: a caveat, memory-bound
ImVec4 color_link();     // blue: where to read more
ImVec4 color_bad_field(); // the frame of a field whose value is refused

}  // namespace flashlab::gui
