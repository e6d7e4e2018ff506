// The light theme's view of colours chosen for the dark one (recolour_for_theme, stage_effects.hpp). A view that
// draws on its own (the tiling grid, the ring's timeline and step-through)
// picked its fills and labels for a dark background; in the light theme the
// same hue is kept and the lightness turned over where it carries the
// contrast: dark and grey fills become light, white lines dark, light text
// dark. Saturated fills of middle lightness (the tensors, the GPUs, the
// algorithms) stay as they are, so a colour means the same in both themes.
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

#include "stage_effects.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

struct Hsl {
  float h = 0, s = 0, l = 0;
};

Hsl hsl_of(ImU32 c) {
  const float r = static_cast<float>((c >> IM_COL32_R_SHIFT) & 0xFF) / 255.0f;
  const float g = static_cast<float>((c >> IM_COL32_G_SHIFT) & 0xFF) / 255.0f;
  const float b = static_cast<float>((c >> IM_COL32_B_SHIFT) & 0xFF) / 255.0f;
  const float hi = std::max({r, g, b}), lo = std::min({r, g, b});
  Hsl out;
  out.l = (hi + lo) / 2;
  const float d = hi - lo;
  if (d <= 1e-6f) return out;
  out.s = out.l > 0.5f ? d / (2 - hi - lo) : d / (hi + lo);
  if (hi == r) out.h = (g - b) / d + (g < b ? 6.0f : 0.0f);
  else if (hi == g) out.h = (b - r) / d + 2;
  else out.h = (r - g) / d + 4;
  out.h /= 6;
  return out;
}

float hue_channel(float p, float q, float t) {
  if (t < 0) t += 1;
  if (t > 1) t -= 1;
  if (t < 1.0f / 6) return p + (q - p) * 6 * t;
  if (t < 0.5f) return q;
  if (t < 2.0f / 3) return p + (q - p) * (2.0f / 3 - t) * 6;
  return p;
}

ImU32 with_lightness(ImU32 c, const Hsl& x, float l) {
  float r = l, g = l, b = l;
  if (x.s > 1e-6f) {
    const float q = l < 0.5f ? l * (1 + x.s) : l + x.s - l * x.s, p = 2 * l - q;
    r = hue_channel(p, q, x.h + 1.0f / 3);
    g = hue_channel(p, q, x.h);
    b = hue_channel(p, q, x.h - 1.0f / 3);
  }
  auto byte = [](float v) { return static_cast<ImU32>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
  return (byte(r) << IM_COL32_R_SHIFT) | (byte(g) << IM_COL32_G_SHIFT) | (byte(b) << IM_COL32_B_SHIFT) |
         (c & IM_COL32_A_MASK);
}

int alpha_of(ImU32 c) { return static_cast<int>((c >> IM_COL32_A_SHIFT) & 0xFF); }

// A fill or a line: a dark grey one (a grey darker than the middle) was a
// background: it turns light; a white or near-white one was drawn to stand out
// on the dark: it turns dark. A dark colour of a clear hue is data a view chose
// for the light theme (theme.hpp's tensor colours): it stays. A faint overlay
// only when it is white (a dark one is a border of the light style already).
// Alpha 0 is the anti-aliased fringe of a shape: it turns with the shape, or
// its edge would show a dark halo.
ImU32 light_paint(ImU32 c) {
  const Hsl x = hsl_of(c);
  const bool grey = x.s < 0.25f, muted = x.s < 0.45f;
  const int a = alpha_of(c);
  const bool turn =
      a >= 128 || a == 0 ? (muted && x.l < 0.3f) || (grey && (x.l < 0.5f || x.l > 0.9f)) : grey && x.l > 0.9f;
  return turn ? with_lightness(c, x, 1 - x.l) : c;
}

// Text lighter than the middle turns as dark as it was light, of the same
// hue, and no lighter than reads at 4.5 : 1 on the light background (amber,
// sky blue read weakly on white).
ImU32 light_ink(ImU32 c) {
  const Hsl x = hsl_of(c);
  const float l = x.l > 0.5f ? 1 - x.l : x.l;
  const ImU32 turned = l != x.l ? with_lightness(c, x, l) : c;
  return readable_on(turned, ImGui::ColorConvertFloat4ToU32(color_background()), kTextContrastWithMargin);
}

double channel_luminance(unsigned v) {
  const double c = static_cast<double>(v & 0xFF) / 255.0;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double luminance(ImU32 c) {
  return 0.2126 * channel_luminance(c >> IM_COL32_R_SHIFT) + 0.7152 * channel_luminance(c >> IM_COL32_G_SHIFT) +
         0.0722 * channel_luminance(c >> IM_COL32_B_SHIFT);
}

}  // namespace

double contrast_ratio(ImU32 a, ImU32 b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

ImU32 readable_on(ImU32 c, ImU32 background, double ratio) {
  if (contrast_ratio(c, background) >= ratio) return c;
  const Hsl x = hsl_of(c);
  // Away from the background: darker on a light one, lighter on a dark one;
  // the lightness nearest the colour's own that reaches the ratio.
  const bool darken = luminance(background) > 0.18;
  float near = x.l, far = darken ? 0.0f : 1.0f;
  if (contrast_ratio(with_lightness(c, x, far), background) < ratio) return with_lightness(c, x, far);
  for (int k = 0; k < 24; ++k) {
    const float mid = (near + far) / 2;
    (contrast_ratio(with_lightness(c, x, mid), background) >= ratio ? far : near) = mid;
  }
  return with_lightness(c, x, far);
}

void recolour_for_theme(ImGuiWindow* window) {
  if (!light_theme() || window == nullptr) return;
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  for (ImGuiWindow* child : window->DC.ChildWindows) {
    ImDrawList* dl = child->DrawList;
    // Neighbouring vertices mostly share a colour: remember the last answer of each kind.
    ImU32 fill_in = 0, fill_out = light_paint(0), text_in = 0, text_out = light_ink(0);
    for (ImDrawVert& v : dl->VtxBuffer) {
      const bool shape = v.uv.x == white.x && v.uv.y == white.y;
      if (shape) {
        if (v.col != fill_in) fill_out = light_paint(fill_in = v.col);
        v.col = fill_out;
      } else {
        if (v.col != text_in) text_out = light_ink(text_in = v.col);
        v.col = text_out;
      }
    }
    recolour_for_theme(child);
  }
}

}  // namespace flashlab::gui
