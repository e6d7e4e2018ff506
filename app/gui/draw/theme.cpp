#include "theme.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace flashlab::gui {

namespace {

Fonts g_fonts;
Theme g_theme = Theme::dark;

// Latin, Greek, combining marks (m̃), phonetic (ᵀ), punctuation, super- and
// subscripts (⁻¹), letterlike (ℓ), arrows, maths (≤ ∞), technical (⌈ ⌉),
// shapes (▶ ■) and ✕: everything the pseudocode and labels use.
const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00, 0x1D7F, 0x2000, 0x206F,
                           0x2070, 0x209F, 0x2100, 0x214F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2300, 0x23FF,
                           0x2500, 0x257F, 0x25A0, 0x25FF, 0x2630, 0x2637, 0x2713, 0x2717, 0};

constexpr const char* kFontDir = "/usr/share/fonts/truetype/dejavu/";

// Where the DejaVu fonts are: FLASHLAB_FONT_DIR when set (a machine without
// the fonts package, given them in a folder), else the Debian/Ubuntu place.
std::string font_dir() {
  const char* env = std::getenv("FLASHLAB_FONT_DIR");
  if (env == nullptr || *env == '\0') return kFontDir;
  std::string d = env;
  if (d.back() != '/') d += '/';
  return d;
}

}  // namespace

const Fonts& fonts() { return g_fonts; }

std::string load_fonts(Fonts& f, double scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const std::string dir = font_dir();
  const std::string sans = dir + "DejaVuSans.ttf";
  const std::string mono = dir + "DejaVuSansMono.ttf";
  const std::string bold = dir + "DejaVuSans-Bold.ttf";
  std::string note;
  std::error_code ec;
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  const float px = kBaseFontPx * static_cast<float>(scale);
  f = Fonts{};
  if (std::filesystem::exists(sans, ec)) f.ui = io.Fonts->AddFontFromFileTTF(sans.c_str(), px, &cfg, kRanges);
  if (f.ui && std::filesystem::exists(mono, ec)) {
    f.mono = io.Fonts->AddFontFromFileTTF(mono.c_str(), px * 0.93f, &cfg, kRanges);
    // DejaVu Sans Mono lacks a few symbols of the pseudocode (ℓ): take them
    // from DejaVu Sans (a merge never overwrites glyphs the mono font has).
    ImFontConfig merge = cfg;
    merge.MergeMode = true;
    if (f.mono) io.Fonts->AddFontFromFileTTF(sans.c_str(), px * 0.93f, &merge, kRanges);
  }
  if (f.ui && std::filesystem::exists(bold, ec))
    f.big = io.Fonts->AddFontFromFileTTF(bold.c_str(), px * 1.45f, &cfg, kRanges);
  if (!f.ui) {
    ImFontConfig d;
    d.SizePixels = 13.0f * static_cast<float>(scale);
    f.ui = io.Fonts->AddFontDefault(&d);
    note = "DejaVu fonts not found in " + dir +
           " (install fonts-dejavu-core): using ImGui's built-in font, Greek and maths symbols show as '?'";
  }
  if (!f.mono) f.mono = f.ui;
  if (!f.big) f.big = f.ui;
  io.FontDefault = f.ui;
  io.Fonts->Build();
  g_fonts = f;
  return note;
}

void set_theme(Theme t) { g_theme = t; }
Theme current_theme() { return g_theme; }

std::optional<Theme> parse_theme(std::string_view name) {
  if (name == "dark") return Theme::dark;
  if (name == "light") return Theme::light;
  return std::nullopt;
}

const char* theme_name(Theme t) { return t == Theme::light ? "light" : "dark"; }

ImVec4 color_background() {
  return light_theme() ? ImVec4(0.975f, 0.975f, 0.965f, 1.0f) : ImVec4(0.10f, 0.11f, 0.13f, 1.0f);
}

void apply_theme(double scale) {
  const bool light = light_theme();
  ImGuiStyle style;
  if (light) ImGui::StyleColorsLight(&style);
  else ImGui::StyleColorsDark(&style);
  // Square corners everywhere: a rounded frame is ~40 anti-aliased vertices,
  // a square one 4, and llvmpipe pays per vertex (docs/performance.md).
  style.WindowRounding = 0;
  style.ChildRounding = 0;
  style.FrameRounding = 0;
  style.GrabRounding = 0;
  style.PopupRounding = 0;
  style.ScrollbarRounding = 0;
  style.TabRounding = 0;
  style.WindowBorderSize = 1;
  style.FramePadding = ImVec2(6, 4);
  style.ItemSpacing = ImVec2(8, 5);
  style.Colors[ImGuiCol_WindowBg] = color_background();
  // Transparent: on llvmpipe every full layer of fill costs milliseconds (docs/performance.md).
  style.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  style.Colors[ImGuiCol_ScrollbarBg] = ImVec4(0, 0, 0, 0);
  if (light) {
    // Black text; frames and borders dark enough to see on a washed-out projector.
    style.Colors[ImGuiCol_Text] = ImVec4(0.06f, 0.07f, 0.09f, 1.0f);
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.36f, 0.38f, 0.42f, 1.0f);
    style.Colors[ImGuiCol_PopupBg] = ImVec4(1.0f, 1.0f, 1.0f, 0.98f);
    style.Colors[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.35f);
    style.Colors[ImGuiCol_FrameBg] = ImVec4(0.88f, 0.89f, 0.91f, 1.0f);
    style.Colors[ImGuiCol_Header] = ImVec4(0.74f, 0.83f, 0.95f, 1.0f);
    style.Colors[ImGuiCol_TabActive] = ImVec4(0.62f, 0.76f, 0.94f, 1.0f);
    style.Colors[ImGuiCol_TitleBg] = ImVec4(0.86f, 0.88f, 0.92f, 1.0f);
    style.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.78f, 0.84f, 0.93f, 1.0f);
  } else {
    // ImGui's grey (0.5) reads at 4.3 : 1 on the window, and a field's hint
    // at 4.3 : 1 on its frame: lighter, to 7.0 and 5.1 : 1.
    style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.63f, 0.65f, 0.69f, 1.0f);
    // ImGui's blue behind a pressed or hovered button's (a selected tab's, a
    // header's) white text reads at 3.6 and 3.0 : 1: darker, to 6.6 and 5.3 : 1.
    const ImVec4 hovered(0.20f, 0.42f, 0.72f, 1.0f), pressed(0.06f, 0.36f, 0.70f, 1.0f);
    style.Colors[ImGuiCol_ButtonHovered] = hovered;
    style.Colors[ImGuiCol_ButtonActive] = pressed;
    style.Colors[ImGuiCol_HeaderHovered] = hovered;
    style.Colors[ImGuiCol_HeaderActive] = pressed;
    style.Colors[ImGuiCol_TabHovered] = hovered;
    // ImGui's grab behind a slider's white text reads at 3.7 : 1: darker, to 5 : 1.
    style.Colors[ImGuiCol_SliderGrab] = ImVec4(0.20f, 0.42f, 0.72f, 1.0f);
    style.Colors[ImGuiCol_SliderGrabActive] = ImVec4(0.22f, 0.46f, 0.78f, 1.0f);
    style.Colors[ImGuiCol_Header] = ImVec4(0.22f, 0.30f, 0.42f, 1.0f);
    style.Colors[ImGuiCol_TabActive] = ImVec4(0.25f, 0.42f, 0.62f, 1.0f);
  }
  style.ScaleAllSizes(static_cast<float>(scale));
  ImGui::GetStyle() = style;
}

ImU32 view_ground() {
  // The strips' ground (30, 34, 40) as the light theme turns it (theme_light.cpp).
  return light_theme() ? IM_COL32(215, 219, 225, 255) : IM_COL32(30, 34, 40, 255);
}

namespace {

ImU32 tensor_hue(sim::Tensor t) {
  switch (t) {
    case sim::Tensor::Q: return IM_COL32(86, 160, 233, 255);
    case sim::Tensor::K: return IM_COL32(230, 159, 0, 255);
    case sim::Tensor::V: return IM_COL32(0, 178, 125, 255);
    case sim::Tensor::S: return IM_COL32(190, 120, 200, 255);
    case sim::Tensor::P: return IM_COL32(220, 120, 170, 255);
    case sim::Tensor::O: return IM_COL32(120, 200, 220, 255);
    // A gradient takes its tensor's hue, darker: dQ like Q, dK like K, ...
    case sim::Tensor::dQ:
    case sim::Tensor::dQaccum: return IM_COL32(50, 110, 180, 255);
    case sim::Tensor::dK:
    case sim::Tensor::dKaccum: return IM_COL32(175, 115, 0, 255);
    case sim::Tensor::dV:
    case sim::Tensor::dVaccum: return IM_COL32(0, 125, 90, 255);
    case sim::Tensor::dS: return IM_COL32(140, 80, 150, 255);
    case sim::Tensor::dP: return IM_COL32(165, 80, 125, 255);
    case sim::Tensor::dO: return IM_COL32(80, 145, 165, 255);
    default: return IM_COL32(220, 210, 90, 255);  // ℓ, m, LSE, D and the on-chip statistics
  }
}

}  // namespace

ImU32 tensor_color(sim::Tensor t, int alpha) {
  const ImU32 c = readable_on(tensor_hue(t), view_ground(), kMarkContrastWithMargin);
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(std::clamp(alpha, 0, 255)) << IM_COL32_A_SHIFT);
}

ImU32 tensor_ink(sim::Tensor t) {
  return readable_on(tensor_hue(t), ImGui::ColorConvertFloat4ToU32(color_background()), kTextContrastWithMargin);
}

// A grey a little lighter than the grid: every tensor has a hue, so "done"
// never reads as one; dark enough that the current block's outline and the
// causal diagonal stand out 3 : 1 on it (the light theme turns it light).
ImU32 finished_block_color(int alpha) { return IM_COL32(90, 93, 100, alpha); }

// Salmon on the dark theme, deep red on the light one: 3 : 1 on the finished
// grey and on the grid's ground alike.
ImU32 causal_diagonal_color() { return light_theme() ? IM_COL32(130, 15, 10, 255) : IM_COL32(255, 150, 140, 255); }

ImU32 current_block_outline() { return light_theme() ? IM_COL32(40, 32, 0, 255) : IM_COL32(255, 235, 120, 255); }

// The light theme's: contrast of 5:1 or more on its near-white background.
ImVec4 color_error() { return light_theme() ? ImVec4(0.75f, 0.08f, 0.06f, 1.0f) : ImVec4(1.0f, 0.38f, 0.35f, 1.0f); }
ImVec4 color_note() { return light_theme() ? ImVec4(0.14f, 0.16f, 0.20f, 1.0f) : ImVec4(0.75f, 0.78f, 0.82f, 1.0f); }
ImVec4 color_good() { return light_theme() ? ImVec4(0.0f, 0.42f, 0.24f, 1.0f) : ImVec4(0.45f, 0.85f, 0.55f, 1.0f); }
ImVec4 color_dim() { return light_theme() ? ImVec4(0.30f, 0.32f, 0.36f, 1.0f) : ImVec4(0.6f, 0.62f, 0.66f, 1.0f); }
ImVec4 color_warning() { return light_theme() ? ImVec4(0.66f, 0.31f, 0.0f, 1.0f) : ImVec4(1.0f, 0.7f, 0.35f, 1.0f); }
ImVec4 color_link() { return light_theme() ? ImVec4(0.08f, 0.30f, 0.62f, 1.0f) : ImVec4(0.5f, 0.75f, 1.0f, 1.0f); }
ImVec4 color_bad_field() {
  return light_theme() ? ImVec4(1.0f, 0.78f, 0.76f, 1.0f) : ImVec4(0.45f, 0.12f, 0.12f, 1.0f);
}

}  // namespace flashlab::gui
