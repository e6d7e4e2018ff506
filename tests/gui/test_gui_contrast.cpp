// The contrast check on draw data built by hand over a frame of known pixels:
// WCAG's ratios, a run of text and a mark under their bars and over them, a
// mark among others of its series, text a later window covers.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <memory>
#include <vector>

#include "checks/contrast_check.hpp"
#include "draw/drawn_marks.hpp"
#include "draw/theme.hpp"

namespace {

using flashlab::gui::check_contrast;
using flashlab::gui::contrast_ratio;
using flashlab::gui::ContrastCheck;
using flashlab::gui::DrawnMark;
using flashlab::gui::Frame;

// An ImGui context in a frame (the draw lists' shared data: the font, the
// white pixel), the default font baked, a texture id, no window.
struct Context {
  Context() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
    io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(1)));
    io.DisplaySize = ImVec2(400, 200);
    io.DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
  }
  ~Context() {
    ImGui::EndFrame();
    ImGui::DestroyContext();
  }
};

// A frame of one colour (0xRRGGBB), as the ground under what the draw list holds.
Frame frame_of(unsigned rgb, int w = 400, int h = 200) {
  Frame f;
  f.w = w;
  f.h = h;
  f.pixels.assign(static_cast<size_t>(w) * static_cast<size_t>(h), 0xFF000000u | rgb);
  return f;
}

struct List {
  List() : dl(std::make_unique<ImDrawList>(ImGui::GetDrawListSharedData())) {
    dl->_ResetForNewFrame();
    dl->PushClipRect(ImVec2(0, 0), ImVec2(400, 200));
    dl->PushTextureID(ImGui::GetIO().Fonts->TexID);
  }
  ContrastCheck check(const Frame& f, const std::vector<DrawnMark>& marks = {}) {
    ImDrawList* lists[] = {dl.get()};
    ImDrawData dd;
    dd.Valid = true;
    dd.CmdLists = lists;
    dd.CmdListsCount = 1;
    const ImGuiIO& io = ImGui::GetIO();
    return check_contrast(dd, io.Fonts->TexID, io.Fonts->TexUvWhitePixel, f, 1.0f, marks);
  }
  std::unique_ptr<ImDrawList> dl;
};

}  // namespace

TEST_CASE("contrast: WCAG's ratios of known pairs", "[gui][contrast]") {
  CHECK(contrast_ratio(IM_COL32(0, 0, 0, 255), IM_COL32(255, 255, 255, 255)) == Approx(21.0));
  CHECK(contrast_ratio(IM_COL32(119, 119, 119, 255), IM_COL32(255, 255, 255, 255)) == Approx(4.48).epsilon(0.01));
  CHECK(contrast_ratio(IM_COL32(10, 20, 30, 255), IM_COL32(10, 20, 30, 255)) == Approx(1.0));
  // Readable: the nearest lightness that reaches the ratio, the hue kept.
  const ImU32 wine = IM_COL32(150, 30, 70, 255), dark = IM_COL32(26, 28, 33, 255);
  CHECK(contrast_ratio(wine, dark) < 3.0);
  const ImU32 lifted = flashlab::gui::readable_on(wine, dark, 3.1);
  CHECK(contrast_ratio(lifted, dark) >= 3.1);
  CHECK(contrast_ratio(lifted, dark) < 3.3);
  CHECK(flashlab::gui::readable_on(IM_COL32(255, 255, 255, 255), dark, 4.5) == IM_COL32(255, 255, 255, 255));
}

TEST_CASE("contrast: text under 4.5 : 1 is counted, named, and text over it is not", "[gui][contrast]") {
  Context ctx;
  const Frame ground = frame_of(0x1A1C21);
  {
    List l;
    l.dl->AddText(ImVec2(10, 10), IM_COL32(150, 30, 70, 255), "fa3_hopper 581 TFLOP/s");  // wine on the dark theme
    const ContrastCheck c = l.check(ground);
    CHECK(c.texts >= 1);  // a run per word where the font's spaces are wide
    CHECK(c.low_texts == c.texts);
    CHECK(c.worst_text == Approx(2.09).epsilon(0.02));
    REQUIRE(!c.low.empty());
    CHECK_THAT(c.low[0], Catch::Contains("#961E46 on #1A1C21"));
  }
  {
    List l;
    l.dl->AddText(ImVec2(10, 10), IM_COL32(235, 235, 235, 255), "fa3_hopper 581 TFLOP/s");
    const ContrastCheck c = l.check(ground);
    CHECK(c.texts >= 1);
    CHECK(c.low_texts == 0);
    CHECK(c.worst_text > 12);
  }
  {
    // Half-transparent white: what shows is the blend with the ground.
    List l;
    l.dl->AddText(ImVec2(10, 10), IM_COL32(255, 255, 255, 60), "faint");
    const ContrastCheck c = l.check(ground);
    CHECK(c.low_texts >= 1);
    CHECK(c.worst_text < 2.5);
  }
}

TEST_CASE("contrast: a mark under 3 : 1 against its ground is counted, one among its series' others is not held",
          "[gui][contrast]") {
  Context ctx;
  flashlab::gui::record_marks(true);
  const Frame ground = frame_of(0x1A1C21);
  auto line = [&](List& l, ImVec2 a, ImVec2 b, ImU32 col) {
    const int first = l.dl->VtxBuffer.Size;
    l.dl->AddLine(a, b, col, 3);
    const ImVec2 pts[2] = {a, b};
    flashlab::gui::mark_line(l.dl.get(), first, pts, 2, 3, "a test line");
  };
  // Level lines of `col` at heights `ys`, alone on the ground, as the check sees them.
  auto lines_checked = [&](std::initializer_list<float> ys, ImU32 col) {
    List l;
    flashlab::gui::clear_drawn_marks();
    for (float y : ys) line(l, ImVec2(20, y), ImVec2(300, y), col);
    return l.check(ground, flashlab::gui::drawn_marks());
  };
  const ContrastCheck wine = lines_checked({100.0f}, IM_COL32(150, 30, 70, 255));
  CHECK(wine.marks == 1);
  CHECK(wine.low_marks == 1);
  CHECK(wine.worst_mark == Approx(2.09).epsilon(0.02));
  const ContrastCheck amber = lines_checked({100.0f}, IM_COL32(230, 159, 0, 255));
  CHECK(amber.marks == 1);
  CHECK(amber.low_marks == 0);
  // A line between two others of its own: too little of its ground shows to hold it.
  const ContrastCheck between = lines_checked({94.0f, 100.0f, 106.0f}, IM_COL32(150, 30, 70, 255));
  CHECK(between.marks == 2);  // the outer two, each with the ground on one side
  flashlab::gui::record_marks(false);
}
